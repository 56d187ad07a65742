"""The one thread knob, ``num_threads``: its default and its check, for every call that takes it.

``bytepair.train``, ``Tokenizer.encode_batch``, ``prepare`` and ``sweep`` all name it
``num_threads`` (HF tokenizers' and rustbpe's word); the CLI flag is ``--num-threads``.

Example:
    >>> check_num_threads(4)
    4
"""

from __future__ import annotations

import os

from .errors import ThreadCountError
from .ids import plain_int

# Ids and thread counts cross into the engine as C ints; far more threads than this is a typo.
MAX_THREADS = 1 << 16


def check_num_threads(num_threads, name="num_threads"):
    """``num_threads`` as an int (``None``: one per core); 0, negatives and non-integers raise
    ``ValueError`` naming the value.
    """
    if num_threads is None:
        return os.cpu_count() or 1
    num_threads = plain_int(num_threads)  # numpy's integers too, as token ids are taken
    if isinstance(num_threads, bool) or not isinstance(num_threads, int):
        raise ThreadCountError(f"{name} must be a positive integer or None (one per core), not {num_threads!r}")
    if not 1 <= num_threads <= MAX_THREADS:
        raise ThreadCountError(
            f"{name} is {num_threads!r}; use a number of threads from 1 to {MAX_THREADS}, or None for one per core"
        )
    return num_threads


def renamed_workers(num_threads, workers, where):
    """``num_threads``, taking the deprecated ``workers=`` of ``where`` when it is given."""
    if workers is None:
        return check_num_threads(num_threads)
    import warnings

    warnings.warn(f"{where}(workers=...) is deprecated; use num_threads=...", DeprecationWarning, stacklevel=3)
    if num_threads is not None and num_threads != workers:
        raise ThreadCountError(
            f"{where} got num_threads={num_threads!r} and workers={workers!r}; pass num_threads only"
        )
    return check_num_threads(workers)
