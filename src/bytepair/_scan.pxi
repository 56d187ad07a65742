# The pre-tokenizer scanner's Python side: the class tables, scanner ids, ``split``.
#
# Included by _engine.pyx. The scanner itself, with its design note, is engine/scanner.hpp;
# it must give exactly ``patterns.split(text, name)`` (tests/engine/test_scanner.py).

from cpython.unicode cimport PyUnicode_GET_LENGTH, PyUnicode_KIND, PyUnicode_DATA, PyUnicode_Substring
from libc.stdint cimport uint8_t, uint32_t
from libcpp cimport bool as cbool
from libcpp.vector cimport vector

cdef extern from "engine/scanner.hpp":
    cdef struct TextRef "bp::TextRef":
        int kind
        const void* data
        size_t length
        cbool ascii

    int P_NONE "bp::P_NONE"
    int _scanner_id "bp::scanner_id"(int pattern, int unicode)
    void _fill_generated "bp::fill_generated"(int unicode)
    uint8_t F_L "bp::F_L"
    uint8_t F_N "bp::F_N"
    uint8_t F_S "bp::F_S"
    uint8_t F_U "bp::F_U"
    uint8_t F_W "bp::F_W"
    uint8_t F_FOLD "bp::F_FOLD"
    int U_REGEX "bp::U_REGEX"
    int U_REGEX_CASE "bp::U_REGEX_CASE"
    const uint8_t* _class_flags "bp::class_flags"(int unicode)
    void _set_flags "bp::set_flags"(int unicode, size_t start, size_t end, uint8_t bit)
    void _add_fold "bp::add_fold"(int unicode, uint32_t cp, char letter) except +
    void _scan_bounds "bp::scan_bounds"(int pattern, int kind, const void* data, size_t n,
                                        vector[size_t]& bounds) except + nogil


# Pattern name -> the scanner's id for it (bp::Pattern).
SCANNED_PATTERNS = {"gpt2": 1, "cl100k": 2, "o200k": 3, "llama3": 4}

# Whose Unicode tables the scanner's classes (\p{L}, \p{N}, \s, ...) follow -> bp::Unicode.
# "regex": the installed `regex` module's, read from it at first use, so that the scanner gives
# exactly ``patterns.split``; a version: the ranges generated from that Unicode version's data
# (engine/unicode_tables.hpp, by tools/gen_unicode_tables.py), the tables compiled into a peer.
UNICODE_TABLES = {"regex": 0, "16.0.0": 1}

_tables_ready = set()

# The bits of ``char_flags``: \p{L}, \p{N}, \s, o200k's [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] and
# [\p{Ll}\p{Lm}\p{Lo}\p{M}], and "a non-ASCII code point that (?i:...) matches as a contraction
# letter".
CHAR_CLASSES = {"L": F_L, "N": F_N, "S": F_S, "upper": F_U, "lower": F_W, "fold": F_FOLD}


def char_flags(unicode="regex"):
    """The scanner's class flags of every code point under ``unicode``'s tables: 0x110000
    bytes, byte ``c`` holding code point ``c``'s bits (``CHAR_CLASSES``). For tests and
    for finding out why a character splits as it does.

    Example:
        >>> char_flags("16.0.0")[ord("a")] & CHAR_CLASSES["L"] != 0
        True
    """
    if not isinstance(unicode, str) or unicode not in UNICODE_TABLES:
        raise ValueError(f"the scanner has the Unicode tables {sorted(UNICODE_TABLES)}, not {unicode!r}")
    cdef int table = _char_tables(unicode, case=True)
    return (<const char*>_class_flags(table))[:0x110000]


def _char_tables(unicode="regex", case=True):
    """Fill one Unicode table set of the scanner's class flags, once, and return its index
    (bp::Unicode). ``case=False``: without o200k's case classes, which only ``"regex"`` leaves
    out (0.04 s to fill instead of 0.07)."""
    cdef int table = UNICODE_TABLES[unicode]
    if table == U_REGEX and case:
        table = U_REGEX_CASE
    if table in _tables_ready:
        return table
    if unicode != "regex":
        _fill_generated(table)
        _tables_ready.add(table)
        return table
    import regex

    # The classes are matched over one string that holds every code point, surrogates
    # included, so the table is whatever `regex` (and thus ``patterns.split``) believes.
    everything = _all_code_points()
    # o200k's case classes are unions of general categories, F_U = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
    # and F_W = [\p{Ll}\p{Lm}\p{Lo}\p{M}], matched one category at a time: `regex` scans the
    # code points in about 5 ms per category but 35-40 ms per union (the first scan of a process
    # took 0.11 s, before any training or encoding could start).
    classes = [(F_L, r"\p{L}+"), (F_N, r"\p{N}+"), (F_S, r"\s+")]
    if case:
        classes += [
            (F_U, r"\p{Lu}+"),
            (F_U, r"\p{Lt}+"),
            (F_W, r"\p{Ll}+"),
            (F_U | F_W, r"\p{Lm}+"),
            (F_U | F_W, r"\p{Lo}+"),
            (F_U | F_W, r"\p{M}+"),
        ]
    for bits, class_regex in classes:
        for match in regex.finditer(class_regex, everything):
            _set_flags(table, match.start(), match.end(), bits)
    letters = "sdmtlvre"  # the letters of the contractions 's 'd 'm 't 'll 've 're
    any_letter = "(?i:" + "|".join(f"({letter})" for letter in letters) + ")"
    for match in regex.finditer(any_letter, everything):
        letter = letters[match.lastindex - 1]
        code_point = match.start()
        if code_point >= 128:
            _add_fold(table, code_point, ord(letter))
        elif chr(code_point) not in (letter, letter.upper()):
            # the scanner folds ASCII by plain lower-casing; a `regex` that disagrees is one
            # this scanner was not written for
            raise RuntimeError(f"regex matches {chr(code_point)!r} as {letter!r} ignoring case")
    _tables_ready.add(table)
    return table


cdef extern from "Python.h":
    object _new_unicode "PyUnicode_New"(Py_ssize_t size, Py_UCS4 maxchar)


cdef str _all_code_points():
    """Every code point, surrogates included, in one str (written in place: 1 ms, where
    decoding a UTF-32 buffer took 12)."""
    cdef str text = _new_unicode(0x110000, 0x10FFFF)
    cdef uint32_t* out = <uint32_t*>PyUnicode_DATA(text)
    cdef uint32_t code_point
    for code_point in range(0x110000):
        out[code_point] = code_point
    return text


cdef inline TextRef _ref(str text):
    """``text``'s code units, read in place by the engine (the str must outlive the call)."""
    cdef TextRef ref
    ref.kind = PyUnicode_KIND(text)
    ref.data = PyUnicode_DATA(text)
    ref.length = PyUnicode_GET_LENGTH(text)
    ref.ascii = text.isascii()
    return ref


cdef int _pattern_id(object pattern, object unicode="regex") except -1:
    """The scanner id of a named pattern (or None) under ``unicode``'s tables, filled if needed."""
    if pattern is None:
        return P_NONE
    try:
        pattern_id = SCANNED_PATTERNS[pattern]
    except (KeyError, TypeError):
        raise ValueError(
            f"the scanner knows the patterns {sorted(SCANNED_PATTERNS)} and None, not {pattern!r}; "
            "split custom patterns with bytepair.patterns.split"
        ) from None
    if not isinstance(unicode, str) or unicode not in UNICODE_TABLES:
        raise ValueError(f"the scanner has the Unicode tables {sorted(UNICODE_TABLES)}, not {unicode!r}")
    return _scanner_id(pattern_id, _char_tables(unicode, case=pattern_id == SCANNED_PATTERNS["o200k"]))


cdef list _pieces(str text, int pattern_id):
    """The pieces of ``text`` as str objects (the scanner, no text clean-up)."""
    cdef vector[size_t] bounds
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text)
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    if pattern_id == P_NONE:
        return [text] if n else []
    with nogil:
        _scan_bounds(pattern_id, kind, data, n, bounds)
    cdef size_t k
    return [PyUnicode_Substring(text, bounds[k], bounds[k + 1]) for k in range(0, bounds.size(), 2)]


def split(text, pattern, unicode="regex"):
    """The scanner's pieces of ``text`` for a named pattern, its classes from ``unicode``'s
    tables (a key of ``UNICODE_TABLES``).

    Python twin: ``bytepair.patterns.split`` (with ``unicode="regex"``).

    Example:
        >>> split("Hello world!!", "gpt2")
        ['Hello', ' world', '!!']
    """
    return _pieces(_exact_str(text), _pattern_id(pattern, unicode))
