# The encoder's Python side: ``Encoder`` and batch results as lists.
#
# Included by _engine.pyx. The encoder, with its design note, is engine/encoder.hpp (and the
# files it includes: merge strategies, pair table, piece maps, worker pool); the lists are
# built by engine/py_lists.hpp.

from cpython.list cimport PyList_New
from cpython.ref cimport PyObject
from cpython.unicode cimport PyUnicode_GET_LENGTH, PyUnicode_KIND, PyUnicode_DATA
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from libc.stdint cimport int64_t, uint8_t, uint16_t, uint32_t
from libc.string cimport memset
from libcpp cimport bool as cbool
from libcpp.vector cimport vector

cdef extern from "engine/token_splits.hpp":
    cdef struct TokenRef "bp::TokenRef":
        const uint8_t* bytes  # the caller's buffer
        size_t length
        uint32_t id

cdef extern from "engine/encoder.hpp":
    cdef cppclass EncoderCore "bp::EncoderCore":
        EncoderCore(cbool char_mode, int pattern, cbool whole_piece, cbool monotonic) except +
        void set_base_byte(int byte, uint32_t token_id)
        void set_base_char(uint32_t code_point, uint32_t token_id) except +
        void set_fallback(int byte, uint32_t token_id)
        void add_pair(uint32_t left, uint32_t right, uint32_t rank, uint32_t merged) except +
        void add_tokens(const vector[TokenRef]& tokens) except +
        void derive_token_splits()
        void reserve_tokens(size_t n) except +
        void finish() except +

    void _encode_concat "bp::encode_concat"(EncoderCore& core, const vector[TextRef]& texts,
                                            cbool one_piece, vector[uint32_t]& out,
                                            vector[uint32_t]& unknown) except + nogil
    void _encode_spread "bp::encode_spread"(EncoderCore& core, const TextRef& text, int threads,
                                            vector[vector[uint32_t]]& outs,
                                            vector[uint32_t]& unknown) except + nogil
    cbool _spreads "bp::spreads"(const EncoderCore& core, const TextRef& text, int threads) nogil
    void _encode_batch "bp::encode_batch"(EncoderCore& core, const vector[TextRef]& texts,
                                          int threads, vector[vector[uint32_t]]& outs,
                                          vector[uint32_t]& unknown,
                                          vector[uint32_t]* surrogates) except + nogil
    cbool _concat_ids "bp::concat_ids"[T](const vector[vector[uint32_t]]& outs, T* out, int64_t* offsets,
                                          uint32_t& bad, int threads) except + nogil
    cbool _has_surrogates "bp::has_surrogates"(int kind, const void* data, size_t n) nogil
    size_t _idle_cache_bytes "bp::idle_cache_bytes.load"() nogil
    size_t _set_spread_min_chars_c "bp::set_spread_min_chars"(size_t n) nogil
    size_t _set_idle_cache_budget "bp::set_idle_cache_budget"(size_t budget) nogil
    size_t IDLE_CACHE_BUDGET "bp::IDLE_CACHE_BUDGET"

cdef extern from "engine/py_lists.hpp":
    object _ids_to_list "bp::ids_to_list"(const vector[uint32_t]& ids, object table)
    void _fill_lists "bp::fill_lists"(const vector[vector[uint32_t]]& outs, PyObject* const* table,
                                      size_t table_size, const vector[PyObject**]& items, int threads,
                                      vector[vector[uint32_t]]& uses) except + nogil
    void _add_references "bp::add_references"(PyObject* const* table, const vector[vector[uint32_t]]& uses)

cdef extern from "Python.h":
    void PyObject_GC_Track(object)
    void PyObject_GC_UnTrack(object)
    PyObject** PySequence_Fast_ITEMS(object)

# The default bound on idle workers' bytes (engine/worker_pool.hpp, IDLE_CACHE_BUDGET).
CACHE_BUDGET = IDLE_CACHE_BUDGET
# Threads one call asks for at most; far more than any core count, far fewer than an OS limit.
MAX_THREADS = 4096

# Ids live in 31 bits: the pair table uses the top bit of a merged id as a flag.
MAX_ID = 2**31 - 1


class UnknownCharacters(ValueError):
    """Character-mode text holds characters with no base token and no byte fallback.

    ``characters``: the unknown characters, sorted, each once. ``Tokenizer`` turns this into
    the user-facing ``UnknownCharactersError``.
    """

    def __init__(self, characters):
        self.characters = sorted(set(characters))
        super().__init__(
            f"no base token for {self.characters!r}; add them to the base alphabet or enable "
            "byte fallback"
        )


cpdef str clean_surrogates(object text):
    """tiktoken's rule for lone surrogates: pairs joined, lone ones become U+FFFD.

    Python strs can hold surrogates that UTF-8 cannot; tiktoken re-decodes such text through
    UTF-16 (``encode("utf-16", "surrogatepass").decode("utf-16", "replace")``), and so do we,
    in both modes, so that ids agree with tiktoken and decode to valid text. The test for
    surrogates reads the str's code units in place (a regex search took 60 ms on WikiText-2 train).

    Python twin: ``text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")``.
    """
    text = _exact_str(text)
    if _has_surrogates(PyUnicode_KIND(text), PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text)):
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


cdef int _checked_threads(object value) except -1:
    """``num_threads`` as a C int: an int >= 1 (more than 4096 is taken as 4096)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"num_threads must be an int >= 1, not {value!r}")
    return min(value, MAX_THREADS)


def cache_bytes():
    """Bytes held by idle encoding workers (caches and buffers) of every Encoder together.

    Bounded by the idle-cache budget (``CACHE_BUDGET`` bytes unless changed with
    ``_set_cache_budget``), however many threads a batch used.
    """
    return _idle_cache_bytes()


def _set_cache_budget(size_t budget):
    """Sets the idle-cache budget in bytes (all Encoders together); returns the previous one."""
    return _set_idle_cache_budget(budget)


def _set_spread_min_chars(size_t n):
    """Sets the characters per span below which one text is not spread over more threads
    (bp::encode_spread; tests lower it); returns the previous value."""
    return _set_spread_min_chars_c(n)


cdef str _checked_text(object text):
    return clean_surrogates(_checked_str(text))


cdef str _checked_str(object text):
    """``text`` if it is a str the engine can take; its surrogates are the caller's to clean."""
    text = _exact_str(text)
    if len(text) >= 2**32 - 1:
        raise ValueError(f"text of {len(text)} characters is too long; encode it in parts under 2**32")
    return text


cdef str _exact_str(object text):
    """``text`` as a str: a subclass (numpy.str_, a pandas cell) becomes its plain value, as
    tiktoken takes it; anything else is a TypeError."""
    if type(text) is str:
        return text
    if isinstance(text, str):
        return str.__str__(text)
    raise TypeError(f"text must be a str, not {type(text).__name__}")


cdef uint32_t _checked_id(object value, str what) except? 0xFFFFFFFF:
    if not isinstance(value, int) or not 0 <= value <= MAX_ID:
        raise ValueError(f"{what} must be an int in [0, 2**31), not {value!r}")
    return value


cdef class Encoder:
    """Turns text into ids for one vocabulary: the compiled half of ``Tokenizer``.

    Arguments (all keyword-only) are described in docs/internals.md. ``pair_table`` values are
    ``(rank, merged_id)``; for a pair that occurs more than once in a merge list, ``rank`` may
    be a sequence of all its ranks (replay applies the pair again at each of them).
    ``special_ids``: ids never produced from ordinary text (left out of the whole-piece lookup).
    ``token_splits=True`` (tiktoken's rule, ids are ranks): the pair table is derived here, every
    split of every token into two tokens ranked as the token (``model.tiktoken_pair_table``);
    ``pair_table`` is then None.

    Example:
        >>> enc = Encoder(mode="byte", token_bytes=[bytes([b]) for b in range(256)] + [b"ab"],
        ...               base_ids=list(range(256)), pair_table={(97, 98): (0, 256)},
        ...               whole_piece=False, monotonic=True, pattern="gpt2", fallback_ids=None)
        >>> enc.encode_ordinary("abc ab")
        [256, 99, 32, 256]

    NOTE: text with lone surrogates is first re-decoded like tiktoken does (pairs joined, lone
    ones replaced by U+FFFD); ``split`` shows the pieces of that text.
    """

    cdef EncoderCore* _core
    cdef list _id_objects
    cdef uint32_t _max_id
    cdef readonly str mode
    cdef readonly object pattern
    cdef readonly str unicode

    def __cinit__(self, *, mode, token_bytes, base_ids, pair_table, whole_piece, monotonic,
                  pattern, fallback_ids, special_ids=(), unicode="regex", token_splits=False,
                  pair_columns=None):
        if mode not in ("char", "byte"):
            raise ValueError(f"mode must be 'char' or 'byte', not {mode!r}")
        cdef int pattern_id = _pattern_id(pattern, unicode)
        self.mode = mode
        self.pattern = pattern
        self.unicode = unicode
        self._core = new EncoderCore(mode == "char", pattern_id, bool(whole_piece), bool(monotonic))
        self._max_id = 0
        self._load_base(base_ids, fallback_ids)
        if token_splits and not (mode == "byte" and whole_piece and not monotonic and not pair_table
                                 and pair_columns is None):
            raise ValueError("token_splits derives tiktoken's pair table: it needs mode='byte', "
                             "whole_piece=True, monotonic=False and no pair_table")
        if pair_table and pair_columns is not None:
            raise ValueError("give the pairs as pair_table or as pair_columns, not both")
        self._load_pairs(pair_table or {})
        if pair_columns is not None:
            self._load_pair_columns(pair_columns)
        if whole_piece:
            self._load_vocabulary(token_bytes, set(fallback_ids or ()) | set(special_ids), token_splits)
        self._core.finish()
        self._id_objects = list(range(self._max_id + 1))

    def __dealloc__(self):
        del self._core

    cdef void _note_id(self, uint32_t token_id):
        if token_id > self._max_id:
            self._max_id = token_id

    cdef _load_base(self, base_ids, fallback_ids):
        cdef uint32_t token_id
        if self.mode == "byte":
            if len(base_ids) != 256:
                raise ValueError(f"byte mode needs 256 base ids, one per byte, not {len(base_ids)}")
            for byte, value in enumerate(base_ids):
                token_id = _checked_id(value, "a base id")
                self._core.set_base_byte(byte, token_id)
                self._note_id(token_id)
        else:
            for code_point, value in dict(base_ids).items():
                if not isinstance(code_point, int) or not 0 <= code_point < 0x110000:
                    raise ValueError(f"char-mode base_ids keys are code points, not {code_point!r}")
                token_id = _checked_id(value, "a base id")
                self._core.set_base_char(code_point, token_id)
                self._note_id(token_id)
        if fallback_ids is not None:
            if self.mode != "char" or len(fallback_ids) != 256:
                raise ValueError("fallback_ids are for char mode only and need 256 ids, one per byte")
            for byte, value in enumerate(fallback_ids):
                token_id = _checked_id(value, "a fallback id")
                self._core.set_fallback(byte, token_id)
                self._note_id(token_id)

    cdef _load_pair_columns(self, columns):
        """``pair_columns``: four equal-length integer arrays, left id, right id, rank, merged id,
        one row per pair and rank (a pair a merge list learns twice has two rows). Read as
        arrays, not as a dict of tuples: building the dict of a 32K-merge model took 50 ms."""
        import numpy

        if len(columns) != 4:
            raise ValueError("pair_columns needs four columns: left id, right id, rank, merged id")
        arrays = [numpy.asarray(column) for column in columns]
        names = ("a pair's left id", "a pair's right id", "a rank", "a pair's merged id")
        for name, array in zip(names, arrays):
            if array.ndim != 1 or len(array) != len(arrays[0]):
                raise ValueError("pair_columns must be four one-dimensional arrays of one length")
            if len(array) and (array.dtype.kind not in "iu" or array.min() < 0 or array.max() > MAX_ID):
                bad = array[(array < 0) | (array > MAX_ID)] if array.dtype.kind in "iu" else array
                raise ValueError(f"{name} must be an int in [0, 2**31), not {bad[:1].tolist()[0]!r}")
        cdef const uint32_t[::1] left = numpy.ascontiguousarray(arrays[0], dtype=numpy.uint32)
        cdef const uint32_t[::1] right = numpy.ascontiguousarray(arrays[1], dtype=numpy.uint32)
        cdef const uint32_t[::1] rank = numpy.ascontiguousarray(arrays[2], dtype=numpy.uint32)
        cdef const uint32_t[::1] merged = numpy.ascontiguousarray(arrays[3], dtype=numpy.uint32)
        cdef Py_ssize_t k
        for k in range(left.shape[0]):
            self._core.add_pair(left[k], right[k], rank[k], merged[k])
            self._note_id(merged[k])

    cdef _load_pairs(self, pair_table):
        cdef uint32_t left, right, merged
        for (left_value, right_value), (ranks, merged_value) in pair_table.items():
            left = _checked_id(left_value, "a pair's left id")
            right = _checked_id(right_value, "a pair's right id")
            merged = _checked_id(merged_value, "a pair's merged id")
            self._note_id(merged)
            for rank in ((ranks,) if isinstance(ranks, int) else ranks):
                self._core.add_pair(left, right, _checked_id(rank, "a rank"), merged)

    cdef _load_vocabulary(self, token_bytes, excluded, cbool token_splits):
        # The engine reads the tokens by pointer, in add_tokens and (token_splits) in finish():
        # token_bytes is referenced by __cinit__ until then.
        cdef uint32_t token_id
        cdef bytes value
        cdef vector[TokenRef] refs
        cdef TokenRef ref
        if token_splits:
            self._core.derive_token_splits()
        self._core.reserve_tokens(len(token_bytes))
        refs.reserve(len(token_bytes))
        for index, value in enumerate(token_bytes):
            if value is None or index in excluded:
                continue
            token_id = _checked_id(index, "a token id")
            ref.bytes = <const uint8_t*>PyBytes_AS_STRING(value)
            ref.length = PyBytes_GET_SIZE(value)
            ref.id = token_id
            refs.push_back(ref)
            self._note_id(token_id)
        self._core.add_tokens(refs)

    def encode_ordinary(self, text, num_threads=None):
        """The ids of ``text``: scanned with ``pattern`` (or one piece), each piece merged.
        In char mode without a pattern a long text is cut where no merge can span and spread
        over up to ``num_threads`` threads (default: all cores); other texts take one.

        Python twin: ``reference.encode_piece`` / ``reference.merge_by_rank`` over ``patterns.split``.

        Raises ``UnknownCharacters`` in char mode for characters with no id.
        """
        cdef vector[vector[uint32_t]] outs
        cdef int threads = self._run_spread(text, num_threads, outs)
        if outs.size() == 1:
            return _ids_to_list(outs[0], self._id_objects)
        return _joined_list(outs, self._id_objects, threads)

    cdef int _run_spread(self, text, num_threads, vector[vector[uint32_t]]& outs) except -1:
        """Encodes one text into ``outs`` (one id list per span, see bp::encode_spread), with
        the GIL released; returns the threads it asked for."""
        cdef vector[uint32_t] unknown
        cdef TextRef ref
        cdef int threads = 1
        text = _checked_text(text)
        ref = _ref(text)
        if num_threads is not None or _spreads(self._core[0], ref, 2):
            import os

            threads = (os.cpu_count() or 1) if num_threads is None else _checked_threads(num_threads)
        with nogil:
            _encode_spread(self._core[0], ref, threads, outs, unknown)
        _raise_unknown(unknown)
        return threads

    def encode_pieces(self, pieces):
        """The ids of already-split pieces (a custom regex split in Python), in order.

        Python twin: ``reference.encode_piece`` / ``reference.merge_by_rank`` on each piece.
        """
        cdef vector[TextRef] refs
        pieces = [_checked_text(piece) for piece in pieces]
        for piece in pieces:
            refs.push_back(_ref(piece))
        return self._run_concat(refs, True)

    cdef _run_concat(self, const vector[TextRef]& refs, cbool one_piece):
        cdef vector[uint32_t] ids
        self._encode_concat(refs, one_piece, ids)
        return _ids_to_list(ids, self._id_objects)

    cdef int _encode_concat(self, const vector[TextRef]& refs, cbool one_piece,
                            vector[uint32_t]& ids) except -1:
        """Encodes ``refs`` into ``ids``, end to end, with the GIL released."""
        cdef vector[uint32_t] unknown
        with nogil:
            _encode_concat(self._core[0], refs, one_piece, ids, unknown)
        _raise_unknown(unknown)
        return 0

    def encode_batch(self, texts, num_threads=None):
        """``[encode_ordinary(t) for t in texts]``, on up to ``num_threads`` threads (default:
        all cores), with the GIL released. ``num_threads`` is an int >= 1; when the OS refuses
        threads (a pids or process limit), the batch runs on those it could start.

        Python twin: ``reference.encode_piece`` / ``reference.merge_by_rank`` over ``patterns.split``.
        """
        cdef vector[TextRef] refs
        cdef vector[vector[uint32_t]] outs
        cdef int threads
        texts = [_checked_str(text) for text in texts]
        threads = self._run_batch(texts, num_threads, refs, outs)
        return _batch_lists(outs, self._id_objects, threads)

    cdef int _run_batch(self, list texts, num_threads, vector[TextRef]& refs,
                        vector[vector[uint32_t]]& outs) except -1:
        """Encodes ``texts`` (checked by ``_checked_str``) into ``outs`` on threads; returns
        how many it asked for. The threads pass over texts with surrogates, which are cleaned
        here and encoded after the others."""
        cdef vector[uint32_t] unknown, surrogates
        cdef vector[TextRef] cleaned_refs
        cdef vector[vector[uint32_t]] cleaned_outs
        cdef size_t k
        cdef int threads
        total = 0
        for text in texts:
            refs.push_back(_ref(text))
            total += len(text)
        import os

        wanted = (os.cpu_count() or 1) if num_threads is None else _checked_threads(num_threads)
        # a thread costs about as much to start as encoding 10K characters
        threads = max(1, min(wanted, len(texts), total // 10_000 + 1))
        with nogil:
            _encode_batch(self._core[0], refs, threads, outs, unknown, &surrogates)
        if surrogates.size():
            cleaned = [clean_surrogates(texts[k]) for k in surrogates]
            for text in cleaned:
                cleaned_refs.push_back(_ref(text))
            with nogil:
                _encode_batch(self._core[0], cleaned_refs, 1, cleaned_outs, unknown, NULL)
            for k in range(surrogates.size()):
                outs[surrogates[k]].swap(cleaned_outs[k])
        _raise_unknown(unknown)
        return threads

    def encode_batch_to_array(self, texts, num_threads=None, out_dtype="uint32"):
        """Every text's ids end to end in one numpy array, never as Python ints: ``(ids,
        offsets)``, where text k's ids are ``ids[offsets[k]:offsets[k + 1]]`` (``offsets``:
        int64, ``len(texts) + 1`` items). ``out_dtype``: "uint16" or "uint32"; threads as in
        ``encode_batch``.

        Python twin: ``encode_batch``, concatenated.

        Raises ``OverflowError`` if an id does not fit in ``uint16``.
        """
        cdef vector[TextRef] refs
        cdef vector[vector[uint32_t]] outs
        cdef int threads
        _check_out_dtype(out_dtype)
        texts = [_checked_str(text) for text in texts]
        threads = self._run_batch(texts, num_threads, refs, outs)
        return _concat_arrays(outs, out_dtype, threads)

    def encode_to_array(self, text, out_dtype="uint32", num_threads=None):
        """The ids of ``text`` as a numpy array of ``out_dtype`` ("uint16" or "uint32"); threads
        as in ``encode_ordinary``.

        Python twin: ``reference.encode_piece`` / ``reference.merge_by_rank`` over ``patterns.split``.

        Raises ``OverflowError`` if an id does not fit in ``uint16``.
        """
        cdef vector[vector[uint32_t]] outs
        _check_out_dtype(out_dtype)
        cdef int threads = self._run_spread(text, num_threads, outs)
        return _concat_arrays(outs, out_dtype, threads)[0]

    def split(self, text):
        """The scanner's pieces of ``text`` (after the surrogate clean-up), for debugging.

        Python twin: ``bytepair.patterns.split``.
        """
        text = _checked_text(text)
        return _pieces(text, _pattern_id(self.pattern, self.unicode))


# Below this many ids in a batch, lists are built one id at a time: the per-thread use counts
# cost a pass over the whole id table.
PARALLEL_LISTS_MIN_IDS = 1 << 16


cdef list _batch_lists(const vector[vector[uint32_t]]& outs, list table, int threads):
    """One list of ints per text, sharing ``table``'s int objects; filled on ``threads``
    threads without the GIL when the batch is large (see bp::fill_lists)."""
    cdef size_t k, total = 0
    for k in range(outs.size()):
        total += outs[k].size()
    if threads < 2 or total < PARALLEL_LISTS_MIN_IDS or total >= 2**32:  # counts are 32-bit
        return [_ids_to_list(outs[k], table) for k in range(outs.size())]
    cdef list lists = []
    cdef vector[PyObject**] items
    for k in range(outs.size()):
        result = PyList_New(outs[k].size())
        # its items lack their references until _add_references: nothing may traverse it
        PyObject_GC_UnTrack(result)
        lists.append(result)
        items.push_back(PySequence_Fast_ITEMS(result))
    _fill_items(outs, table, items, threads)
    for result in lists:
        PyObject_GC_Track(result)
    return lists


cdef list _joined_list(const vector[vector[uint32_t]]& outs, list table, int threads):
    """``outs`` end to end as one list of ints, sharing ``table``'s int objects; each part
    filled on ``threads`` threads without the GIL (see bp::fill_lists)."""
    cdef size_t k, total = 0
    for k in range(outs.size()):
        total += outs[k].size()
    if threads < 2 or total < PARALLEL_LISTS_MIN_IDS or total >= 2**32:  # counts are 32-bit
        return [i for k in range(outs.size()) for i in _ids_to_list(outs[k], table)]
    cdef list result = PyList_New(total)
    PyObject_GC_UnTrack(result)  # as in _batch_lists
    cdef vector[PyObject**] items
    cdef PyObject** first = PySequence_Fast_ITEMS(result)
    total = 0
    for k in range(outs.size()):
        items.push_back(first + total)
        total += outs[k].size()
    _fill_items(outs, table, items, threads)
    PyObject_GC_Track(result)
    return result


cdef int _fill_items(const vector[vector[uint32_t]]& outs, list table, const vector[PyObject**]& items,
                     int threads) except -1:
    """``items[k]`` (each ``outs[k].size()`` slots of a new, untracked list) gets the int
    objects of ``outs[k]``'s ids, with their references."""
    cdef size_t k
    cdef vector[vector[uint32_t]] uses
    cdef PyObject* const* objects = PySequence_Fast_ITEMS(table)
    cdef size_t size = len(table)
    try:
        with nogil:
            _fill_lists(outs, objects, size, items, threads, uses)
    except BaseException:
        for k in range(outs.size()):  # items without their references must not be released
            if outs[k].size():
                memset(items[k], 0, outs[k].size() * sizeof(PyObject*))
        raise
    _add_references(objects, uses)
    return 0


cdef _raise_unknown(const vector[uint32_t]& unknown):
    cdef size_t k
    if unknown.size():
        raise UnknownCharacters([chr(unknown[k]) for k in range(unknown.size())])


cdef int _check_out_dtype(object out_dtype) except -1:
    if out_dtype not in ("uint16", "uint32"):
        raise ValueError(f"out_dtype must be 'uint16' or 'uint32', not {out_dtype!r}")
    return 0


cdef tuple _concat_arrays(const vector[vector[uint32_t]]& outs, str out_dtype, int threads):
    """``outs`` end to end in one numpy array of ``out_dtype`` and the int64 offsets where each
    starts (``len(outs) + 1`` items), copied on ``threads`` threads; ``OverflowError`` if an id
    does not fit in uint16."""
    import numpy

    cdef size_t k, total = 0
    cdef uint32_t bad = 0
    cdef cbool fits
    cdef int64_t[::1] starts
    cdef uint16_t[::1] small
    cdef uint32_t[::1] large
    for k in range(outs.size()):
        total += outs[k].size()
    ids = numpy.empty(total, dtype=out_dtype)
    offsets = numpy.empty(outs.size() + 1, dtype=numpy.int64)
    starts = offsets
    if out_dtype == "uint32":
        large = ids
        with nogil:
            fits = _concat_ids(outs, &large[0] if total else <uint32_t*>NULL, &starts[0], bad, threads)
    else:
        small = ids
        with nogil:
            fits = _concat_ids(outs, &small[0] if total else <uint16_t*>NULL, &starts[0], bad, threads)
    if not fits:
        raise OverflowError(f"token id {bad} does not fit in uint16; use out_dtype='uint32'")
    return ids, offsets
