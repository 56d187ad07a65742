"""Token-id sequences that callers hand to ``decode``: the checks, in one place.

Accepted: a list or tuple of ints (numpy integers too), or a 1-D numpy array of an integer
dtype. Anything else is refused with ``TokenIdError`` (a ``ValueError``) saying what was given:
a float, bool, string or object array, an array of two or more dimensions, a bool or a float
in a list. Negative ids are refused here; ids past the vocabulary by the decoder.

Example:
    >>> checked_ids([1, 2, 3])
    [1, 2, 3]
"""

from __future__ import annotations

import numpy as np

from .errors import TokenIdError


def checked_ids(ids):
    """``ids`` as a list of Python ints >= 0, or ``TokenIdError`` naming the first bad one."""
    if isinstance(ids, np.ndarray):
        return _checked_array(ids)
    if isinstance(ids, (str, bytes, bytearray)):
        raise TokenIdError(f"ids must be a sequence of integer token ids, not {type(ids).__name__} {ids[:50]!r}")
    try:
        ids = list(ids)
    except TypeError:
        raise TokenIdError(f"ids must be a sequence of integer token ids, not {ids!r}") from None
    for position, token_id in enumerate(ids):
        if not isinstance(token_id, (int, np.integer)) or isinstance(token_id, (bool, np.bool_)):
            raise TokenIdError(f"token id {token_id!r} at position {position} is not an integer")
    if ids and min(ids) < 0:
        bad = next(p for p, i in enumerate(ids) if i < 0)
        raise TokenIdError(f"token id {ids[bad]} at position {bad} is negative")
    return [int(i) for i in ids]


def _checked_array(ids):
    if ids.ndim != 1:
        raise TokenIdError(
            f"ids must be a 1-D array, not an array of shape {ids.shape}; decode each row "
            "separately (or pass ids.ravel() to decode them as one sequence)"
        )
    if ids.dtype.kind not in "iu":
        raise TokenIdError(
            f"ids must be an integer array, not dtype {ids.dtype} ({_kind(ids.dtype)}); "
            "convert it with ids.astype(np.int64) if its values are token ids"
        )
    if ids.size and ids.min() < 0:
        bad = int(np.flatnonzero(ids < 0)[0])
        raise TokenIdError(f"token id {int(ids[bad])} at position {bad} is negative")
    return ids.tolist()


def _kind(dtype):
    return {"b": "booleans", "f": "floats", "c": "complex numbers", "U": "strings", "S": "bytes",
            "O": "Python objects"}.get(dtype.kind, "not integers")
