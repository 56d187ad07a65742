// Python id sequences -> bytes through a ByteTable (decoder.hpp): where decoding meets CPython.
//
// Python twin: Tokenizer.decode_bytes' definition, `b"".join(token_bytes[i] for i in ids)`.
//
// Why here and not in Python: a list of 2.5 M ids took 0.8 s through a list comprehension and
// b"".join; read here, each item costs a type test and a small-int read. What this file
// accepts without help is the common case: a list or tuple of exact ints, or a 1-D numpy array
// (any stride) of a native-order integer dtype. Anything else, and any id with no token, gives
// Py_None: the caller (Tokenizer) then runs Python's checks, which raise the error users see
// (bytepair/ids.py) or normalize the ids (numpy integers in a list, an iterator) for a second
// call. So the errors and their order stay exactly Python's, and this file holds no policy.
#pragma once

#include <Python.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "decoder.hpp"

namespace bp {

// Ids this many or fewer are read into the stack; more into one vector.
static const size_t STACK_IDS = 512;

// A new bytes object of `total` bytes written by `fill(char* out, char* end)`.
template <class Fill> inline PyObject* new_bytes(size_t total, Fill fill) {
    PyObject* result = PyBytes_FromStringAndSize(nullptr, Py_ssize_t(total));
    if (!result) return nullptr;
    char* out = PyBytes_AS_STRING(result);
    fill(out, out + total);
    return result;
}

// A list or tuple of exact ints (the GIL held throughout: nothing here runs Python code, so
// the sequence cannot change under us).
inline PyObject* decode_sequence(const ByteTable& table, PyObject* seq) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject** items = PySequence_Fast_ITEMS(seq);
    uint32_t local[STACK_IDS];
    std::vector<uint32_t> heap;
    uint32_t* ids = local;
    if (size_t(n) > STACK_IDS) {
        heap.resize(size_t(n));  // std::bad_alloc reaches the caller (MemoryError)
        ids = heap.data();
    }
    size_t total = 0;
    for (Py_ssize_t k = 0; k < n; ++k) {
        PyObject* item = items[k];
        if (!PyLong_CheckExact(item)) Py_RETURN_NONE;  // bool, numpy integers, anything else
        int overflow = 0;
        long value = PyLong_AsLongAndOverflow(item, &overflow);
        if (overflow) Py_RETURN_NONE;
        uint32_t len = table.length(uint64_t(value));  // a negative value wraps past the table
        if (len == ByteTable::HOLE) Py_RETURN_NONE;
        total += len;
        ids[k] = uint32_t(value);
    }
    return new_bytes(total, [&](char* out, char* end) {
        table.write<uint32_t>(reinterpret_cast<const char*>(ids), size_t(n), sizeof(uint32_t), out, end);
    });
}

template <class T> inline PyObject* decode_strided(const ByteTable& table, const Py_buffer& view) {
    const char* ids = static_cast<const char*>(view.buf);
    size_t n = size_t(view.shape[0]);
    ptrdiff_t stride = view.strides ? view.strides[0] : ptrdiff_t(sizeof(T));
    size_t total = 0;
    if (table.measure<T>(ids, n, stride, total) != n) Py_RETURN_NONE;
    return new_bytes(total, [&](char* out, char* end) { table.write<T>(ids, n, stride, out, end); });
}

// The integer type of a buffer format ("q", "<I", "=h" ...) as (signed, size), or false.
inline bool integer_format(const char* format, Py_ssize_t itemsize, bool& is_signed) {
    if (!format) return false;
    const uint16_t probe = 1;
    const bool little = *reinterpret_cast<const uint8_t*>(&probe) == 1;
    if (*format == '@' || *format == '=' || *format == (little ? '<' : '>')) ++format;
    if (!*format || format[1]) return false;
    switch (*format) {
        case 'b': case 'h': case 'i': case 'l': case 'q': case 'n': is_signed = true; break;
        case 'B': case 'H': case 'I': case 'L': case 'Q': case 'N': is_signed = false; break;
        default: return false;  // '?' bool, floats, '>' foreign byte order ...
    }
    return itemsize == 1 || itemsize == 2 || itemsize == 4 || itemsize == 8;
}

// A 1-D integer array, read through the buffer protocol.
inline PyObject* decode_array(const ByteTable& table, PyObject* array) {
    Py_buffer view;
    if (PyObject_GetBuffer(array, &view, PyBUF_STRIDES | PyBUF_FORMAT) != 0) {
        PyErr_Clear();  // e.g. a dtype with no buffer format: Python's checks name it
        Py_RETURN_NONE;
    }
    bool is_signed = false;
    PyObject* result;
    if (view.ndim != 1 || !integer_format(view.format, view.itemsize, is_signed)) {
        Py_INCREF(Py_None);
        result = Py_None;
    } else {
        switch (view.itemsize * (is_signed ? -1 : 1)) {
            case -1: result = decode_strided<int8_t>(table, view); break;
            case -2: result = decode_strided<int16_t>(table, view); break;
            case -4: result = decode_strided<int32_t>(table, view); break;
            case -8: result = decode_strided<int64_t>(table, view); break;
            case 1: result = decode_strided<uint8_t>(table, view); break;
            case 2: result = decode_strided<uint16_t>(table, view); break;
            case 4: result = decode_strided<uint32_t>(table, view); break;
            default: result = decode_strided<uint64_t>(table, view); break;
        }
    }
    PyBuffer_Release(&view);
    return result;
}

// bytes, Py_None (the caller checks the ids in Python), or nullptr with a Python error set.
inline PyObject* decode_ids(const ByteTable& table, PyObject* ids, bool is_array) {
    if (is_array) return decode_array(table, ids);
    if (PyList_Check(ids) || PyTuple_Check(ids)) return decode_sequence(table, ids);
    Py_RETURN_NONE;
}

}  // namespace bp
