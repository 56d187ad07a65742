"""Token-id sequences that callers hand to ``decode``: the checks, in one place.

Accepted: a list or tuple of ints (numpy integers too), or a 1-D numpy array of an integer
dtype. Anything else is refused with ``TokenIdError`` (a ``ValueError``) saying what was given:
a float, bool, string or object array, an array of two or more dimensions, a bool or a float
in a list. Negative ids are refused here; ids past the vocabulary by the decoder.

Ids that a file or a caller *defines* (a rank in a ``.tiktoken`` file, an id in an HF vocab,
a special token's id) go through ``check_defined_id``: a non-negative int (not a bool) at most
``MAX_ID_GAP`` past the number of tokens defined. Tables are sized by the largest id, so an
id of 3e8 among 100k tokens would make gigabyte tables; real vocabularies leave at most a few
hundred unused ids (cl100k's specials leave 15, o200k's 17).

Example:
    >>> checked_ids([1, 2, 3])
    [1, 2, 3]
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet

import numpy as np

from .errors import TokenIdError

# How far past the number of defined tokens an id may go. 65,536 leaves room for padding a
# vocabulary to a round size (50,257 -> 50,304 or 65,536) with specials placed at the end,
# and keeps a table sized by the largest id within a few MB beyond the tokens themselves.
MAX_ID_GAP = 1 << 16


def check_defined_id(token_id, *, count, what, error=TokenIdError):
    """``token_id`` as an int, or ``error`` saying why ``what`` may not have it.

    ``count`` is the number of tokens defined along with it; ids run below ``count +
    MAX_ID_GAP``. ``what`` names the file and field (``"x.json: model.vocab entry 'ab'"``).

    Example:
        >>> check_defined_id(300, count=257, what="special token '<|end|>'")
        300
    """
    if not isinstance(token_id, (int, np.integer)) or isinstance(token_id, (bool, np.bool_)):
        raise error(f"{what} has id {token_id!r}, which is not an integer; ids are integers from 0")
    token_id = int(token_id)
    if token_id < 0:
        raise error(f"{what} has the negative id {token_id}; ids are integers from 0")
    limit = count + MAX_ID_GAP
    if token_id >= limit:
        raise error(
            f"{what} has id {token_id}, far beyond the {count} tokens defined (ids must be below "
            f"{limit}: at most {MAX_ID_GAP} past the number of tokens); give it an id below "
            f"{limit} (in a file, such an id means the file is corrupt)"
        )
    return token_id


def check_defined_ids(ids, *, count, what, error=TokenIdError):
    """``check_defined_id`` for each value of the mapping ``ids``, in C-level passes when all
    are fine; ``what(key)`` names an entry in the error.

    Example:
        >>> check_defined_ids({"a": 0, "b": -1}, count=2, what="vocab entry {!r}".format)
        Traceback (most recent call last):
        ...
        bytepair.errors.TokenIdError: vocab entry 'b' has the negative id -1; ids are integers from 0
    """
    values = ids.values()
    if not values or not (set(map(type, values)) - {int}) and 0 <= min(values) and max(values) < count + MAX_ID_GAP:
        return
    for key, token_id in ids.items():
        check_defined_id(token_id, count=count, what=what(key), error=error)


def plain_int(value):
    """A numpy integer as the Python int it holds (``np.int64(512)`` from an array or a sweep is
    an integer), anything else as it is, for the checks that follow.

    Example:
        >>> plain_int(np.int64(300)), plain_int(1.5)
        (300, 1.5)
    """
    return int(value) if isinstance(value, np.integer) else value


def checked_id(token_id):
    """One token id as a Python int >= 0 (numpy integers too), or ``TokenIdError``: a bool,
    a float or a negative id never indexes a table from its end.

    Example:
        >>> checked_id(-1)
        Traceback (most recent call last):
        ...
        bytepair.errors.TokenIdError: token id -1 is negative; ids are integers from 0
    """
    if not isinstance(token_id, (int, np.integer)) or isinstance(token_id, (bool, np.bool_)):
        raise TokenIdError(f"token id {token_id!r} is not an integer")
    if token_id < 0:
        raise TokenIdError(f"token id {token_id} is negative; ids are integers from 0")
    return int(token_id)


def checked_ids(ids):
    """``ids`` as a list of Python ints >= 0, or ``TokenIdError`` naming the first bad one."""
    if not isinstance(ids, (np.ndarray, list, tuple)) and hasattr(ids, "numpy") and hasattr(ids, "dim"):
        ids = ids.detach().cpu().numpy()  # a PyTorch tensor (batch["input_ids"][0]), as an array
    if isinstance(ids, np.ndarray):
        return _checked_array(ids)
    if isinstance(ids, (str, bytes, bytearray)):
        raise TokenIdError(f"ids must be a sequence of integer token ids, not {type(ids).__name__} {ids[:50]!r}")
    if isinstance(ids, (AbstractSet, Mapping)):
        # iterating one would decode its ids in hash order (a dict's: its keys), silently wrong text
        raise TokenIdError(
            f"ids must be a sequence of integer token ids in order, not a {type(ids).__name__}, which has "
            "no order of its own; pass a list"
        )
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
    return {
        "b": "booleans",
        "f": "floats",
        "c": "complex numbers",
        "U": "strings",
        "S": "bytes",
        "O": "Python objects",
    }.get(dtype.kind, "not integers")
