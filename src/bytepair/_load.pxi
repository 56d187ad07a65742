# Loading a vocabulary: a tiktoken rank file's lines, and tiktoken's pair table's splits.
#
# Included by _engine.pyx. The C++ is engine/rank_file.hpp and engine/token_splits.hpp (the
# encoder derives its pair table with the latter; ``token_splits`` here is for the parity
# tests).

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stdint cimport uint8_t, uint64_t

cdef extern from "engine/rank_file.hpp":
    cdef cppclass RankLines "bp::RankLines":
        vector[uint8_t] bytes
        vector[size_t] ends
        vector[uint64_t] ranks

    cbool _parse_rank_lines "bp::parse_rank_lines"(const uint8_t* data, size_t n, uint64_t gap,
                                                   RankLines& out) except + nogil

cdef extern from "engine/token_splits.hpp":
    void _token_split_columns "bp::token_split_columns"(const vector[TokenRef]& tokens,
                                                        vector[uint32_t]& left, vector[uint32_t]& right,
                                                        vector[uint32_t]& whole) except + nogil


def read_rank_lines(bytes data, uint64_t gap):
    """``{token bytes: rank}`` of a rank file in the published layout, or None for any other.

    None for anything but lines of exactly ``base64-token SPACE digits NEWLINE`` (the last
    newline optional; a '+' allowed before the digits), for a token or a rank given twice, and
    for a rank at ``lines + gap`` or beyond; the caller then reads the file line by line and
    names what is wrong.

    Python twin: ``formats.tiktoken_files._read_ranks_numpy``.
    """
    cdef RankLines lines
    cdef const uint8_t* p = <const uint8_t*>PyBytes_AS_STRING(data)
    cdef size_t n = PyBytes_GET_SIZE(data)
    cdef size_t k, begin = 0
    cdef cbool ok
    cdef const char* decoded
    with nogil:
        ok = _parse_rank_lines(p, n, gap, lines)
    if not ok:
        return None
    decoded = <const char*>lines.bytes.data()
    ranks = {}
    for k in range(lines.ranks.size()):
        ranks[PyBytes_FromStringAndSize(decoded + begin, lines.ends[k] - begin)] = lines.ranks[k]
        begin = lines.ends[k]
    if <size_t>len(ranks) != lines.ranks.size():
        return None  # a token twice
    return ranks


def token_splits(token_bytes):
    """``(left, right, whole)``: every split of every token into a token before the cut and
    one after it, as three lists of indices into ``token_bytes`` (a list of non-empty bytes);
    for tokens given twice, a side names the first. In no particular order.

    Python twin: ``model.tiktoken_pair_table`` (``model._split_candidates``).
    """
    cdef vector[TokenRef] refs
    cdef vector[uint32_t] left, right, whole
    cdef TokenRef ref
    token_bytes = list(token_bytes)
    if len(token_bytes) > MAX_ID:
        raise ValueError(f"{len(token_bytes)} tokens: at most {MAX_ID}")
    for index, value in enumerate(token_bytes):
        if not isinstance(value, bytes) or not value:
            raise ValueError(f"token {index} is {value!r}: tokens are non-empty bytes")
        ref.bytes = <const uint8_t*>PyBytes_AS_STRING(value)
        ref.length = PyBytes_GET_SIZE(value)
        ref.id = index
        refs.push_back(ref)
    with nogil:
        _token_split_columns(refs, left, right, whole)
    return list(left), list(right), list(whole)
