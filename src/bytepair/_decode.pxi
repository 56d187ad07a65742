# The decoder's Python side: ``Decoder``, a tokenizer's byte table.
#
# Included by _engine.pyx. The table and its loops, with their design note, are
# engine/decoder.hpp; reading Python lists and numpy arrays is engine/py_ids.hpp.

cdef extern from "engine/decoder.hpp":
    cdef cppclass ByteTable "bp::ByteTable":
        ByteTable()
        void add(const char* data, size_t n) except +
        void add_hole() except +
        void finish() except +

cdef extern from "engine/py_ids.hpp":
    object _decode_ids "bp::decode_ids"(const ByteTable& table, object ids, cbool is_array) except +

cdef object _ndarray = None


cdef class Decoder:
    """Ids to bytes for one vocabulary: every id's bytes (special tokens too) in one buffer.

    ``token_bytes``: id -> bytes, or None for an unused id. ``decode_bytes`` handles a list or
    tuple of ints and a 1-D numpy integer array; for anything else, and for any id with no
    bytes, it returns None and leaves the checks (and their errors) to the caller.

    Python twin: ``b"".join(token_bytes[i] for i in ids)``.

    Example:
        >>> Decoder([b"a", None, b"bc"]).decode_bytes([2, 0, 2])
        b'bcabc'
        >>> Decoder([b"a", None, b"bc"]).decode_bytes([1]) is None
        True
    """

    cdef ByteTable _table

    def __cinit__(self, token_bytes):
        global _ndarray
        if _ndarray is None:
            import numpy

            _ndarray = numpy.ndarray
        cdef bytes value
        for value in token_bytes:
            if value is None:
                self._table.add_hole()
            else:
                self._table.add(value, len(value))
        self._table.finish()

    def decode_bytes(self, ids):
        """The bytes of ``ids``, or None if some id has no bytes or ``ids`` needs Python's checks."""
        return _decode_ids(self._table, ids, isinstance(ids, _ndarray))
