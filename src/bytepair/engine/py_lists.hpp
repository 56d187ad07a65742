// Id vectors -> Python lists of ints, sharing one int object per id.
//
// Python twin: none (it is `list(ids)`); this is where the engine meets CPython objects, and
// one of the two engine files that include Python.h (with py_ids.hpp).
//
// Why: a batch's ids are most of its result; allocating an int per id, or adding a reference
// per id under the GIL, was a quarter of a warm batch and kept two threads under 1.7x. So the
// lists share `table[id]` (one int object per id, made once per Encoder), their item arrays
// are filled on the worker threads without the GIL (`fill_lists`), and the references they
// gain are counted per thread and added once per object, holding the GIL (`add_references`).
// The lists must be untracked by the GC until then (see _batch_lists in _engine.pyx).
#pragma once

#include <Python.h>

#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

#include "compat.hpp"
#include "threads.hpp"

namespace bp {

// items[i] = table[ids[i]] for the n ids, each id's uses counted in `count` (no reference
// added: add_counted adds them once per object). Needs no GIL.
inline void fill_counted(const uint32_t* ids, size_t n, PyObject* const* table, PyObject** items, uint32_t* count) {
    for (size_t i = 0; i < n; ++i) {
        items[i] = table[ids[i]];
        ++count[ids[i]];
    }
}

// Adds count[id] references to each table[id]; holds the GIL.
inline void add_counted(PyObject* const* table, const std::vector<uint32_t>& count) {
    for (size_t id = 0; id < count.size(); ++id)
        if (count[id]) Py_SET_REFCNT(table[id], Py_REFCNT(table[id]) + count[id]);
}

// ids -> a new list (nullptr and a Python error if it cannot be made); holds the GIL.
// A list of at least as many ids as the table has objects counts each object's uses in an
// array (L2-sized) and adds them once, as add_references: a reference added per id wrote to
// int objects scattered over 6 MB (o200k). UDHR, one call, six alternated rounds of best of 9:
// cl100k 81.2 -> 79.2 ms, o200k 90.5 -> 87.7 (medians).
inline PyObject* ids_to_list(const std::vector<uint32_t>& ids, PyObject* table) {
    PyObject* out = PyList_New(Py_ssize_t(ids.size()));
    if (!out) return nullptr;
    PyObject** items = reinterpret_cast<PyListObject*>(out)->ob_item;
    advise_huge_pages(items, ids.size() * sizeof(PyObject*));
    size_t table_size = size_t(PyList_GET_SIZE(table));
    std::vector<uint32_t> uses;
    // counts fit 32 bits below 2**32 ids; without room for them, a reference per id
    if (ids.size() >= table_size && ids.size() < (size_t(1) << 32)) {
        try {
            uses.assign(table_size, 0);
        } catch (const std::bad_alloc&) {
        }
    }
    if (!uses.empty()) {
        PyObject* const* objects = reinterpret_cast<PyListObject*>(table)->ob_item;
        fill_counted(ids.data(), ids.size(), objects, items, uses.data());
        add_counted(objects, uses);
        return out;
    }
    for (size_t k = 0; k < ids.size(); ++k) {
        PyObject* item = PyList_GET_ITEM(table, ids[k]);
        Py_INCREF(item);
        PyList_SET_ITEM(out, Py_ssize_t(k), item);
    }
    return out;
}

// The part without the GIL: each list's item array gets the shared int objects of its ids,
// and `uses[thread][id]` counts the references they gain. Allocates only before the threads
// start (std::bad_alloc then reaches the caller).
inline void fill_lists(const std::vector<std::vector<uint32_t>>& outs, PyObject* const* table,
                       size_t table_size, const std::vector<PyObject**>& items, int threads,
                       std::vector<std::vector<uint32_t>>& uses) {
    uses.assign(size_t(threads), std::vector<uint32_t>(table_size, 0));
    share_out(threads, outs.size(), [&](int t, auto& next) {
        uint32_t* count = uses[size_t(t)].data();
        for (size_t k; next(k);) fill_counted(outs[k].data(), outs[k].size(), table, items[k], count);
    });
}

// Adds the references counted by fill_lists; holds the GIL.
inline void add_references(PyObject* const* table, const std::vector<std::vector<uint32_t>>& uses) {
    for (const std::vector<uint32_t>& count : uses) add_counted(table, count);
}

}  // namespace bp
