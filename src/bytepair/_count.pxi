# Counting the unique pieces of a training text (``count_pieces``), for ``train.py``.
#
# Included by _engine.pyx. The counting itself, with its design note, is engine/counting.hpp.

from cpython.unicode cimport PyUnicode_GET_LENGTH, PyUnicode_Substring
from libc.stdint cimport int64_t
from libcpp.vector cimport vector

cdef extern from "engine/counting.hpp":
    void _count_blocks "bp_count::count_blocks"(
        int pattern, const vector[TextRef]& blocks, int threads, vector[size_t]& owner,
        vector[size_t]& bounds, vector[int64_t]& counts) except + nogil


def count_pieces(blocks, pattern, num_threads=1):
    """The unique pieces of ``blocks`` under a named pattern, in order of first appearance,
    with their counts: ``(pieces, counts)``, equal to a ``Counter`` over ``split`` of each block.

    Python twin: ``reference.count_pieces``.

    Blocks are counted on ``num_threads`` threads with the GIL released; cut a long text into
    blocks only where its pieces end anyway (``patterns.safe_cut``).

    Example:
        >>> count_pieces(["a b a", " b"], "gpt2")
        (['a', ' b', ' a'], [1, 2, 1])
    """
    cdef int threads = _checked_threads(num_threads)
    cdef int pattern_id = _pattern_id(pattern)
    if pattern_id == P_NONE:
        raise ValueError("count_pieces needs a named pattern; without one each text is one piece")
    cdef list texts = list(blocks)
    cdef vector[TextRef] views
    cdef str text
    for text in texts:
        if PyUnicode_GET_LENGTH(text) >= 2**32:
            raise ValueError(f"a block of {len(text)} characters is too long; cut blocks under 2**32")
        views.push_back(_ref(text))
    cdef vector[size_t] owner, bounds
    cdef vector[int64_t] counts
    with nogil:
        _count_blocks(pattern_id, views, threads, owner, bounds, counts)
    cdef size_t u
    pieces = [PyUnicode_Substring(texts[owner[u]], bounds[2 * u], bounds[2 * u + 1]) for u in range(owner.size())]
    return pieces, [counts[u] for u in range(counts.size())]
