// The decoder: ids -> the bytes they stand for, from one flat table.
//
// Python twin: `b"".join(token_bytes[i] for i in ids)` (Tokenizer.decode_bytes' definition;
// tests/engine/test_engine_decode.py checks the two agree, and tests/peers that the bytes equal
// tiktoken's). Policy stays in Python: this file only says "the id at position k has no
// token", and Tokenizer raises the error users see (bytepair/ids.py, Tokenizer.decode_bytes).
//
// Design, and why:
// - One table per Tokenizer, special tokens included: an entry (start, length) per id into
//   one byte buffer. An unused id (a hole) has length HOLE, so "past the table or unused" is
//   one test of the entry's length, and the check costs nothing beside the copy.
// - Two passes: `measure` checks every id and sums the lengths, so that the caller allocates
//   the result once at its final size (a PyBytes), and `write` copies into it. The buffer ends
//   with PAD spare bytes, so a token of at most PAD bytes is copied as a fixed PAD-byte block
//   (two vector moves, no call) while PAD bytes of room remain in the output; the next token
//   overwrites the excess.
// - Ids come as any integer type with any byte stride (numpy arrays as they are, lists read
//   into a uint32 buffer by py_ids.hpp); a negative id, converted to uint64, is past the table.
// Measured (2.5 M cl100k ids of WikiText-2 train, best of 5): decode_bytes 7 ns an id from a
// list or a uint32 array, tiktoken 37 ns from a list (it first converts the ids to a Rust
// vector) and 80 ns from an array; see bench/run.py --only decode.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace bp {

struct ByteTable {
    struct Entry {
        uint32_t start, length;
    };
    static constexpr uint32_t HOLE = 0xFFFFFFFFu;
    static constexpr size_t PAD = 16;

    std::vector<Entry> entries;
    std::vector<char> bytes;  // every token's bytes in id order, then PAD spare bytes

    // Appends the next id's token (its bytes), or a hole (no token).
    void add(const char* data, size_t n) {
        if (n >= HOLE || bytes.size() + n >= HOLE) throw std::length_error("token bytes over 4 GB");
        entries.push_back(Entry{uint32_t(bytes.size()), uint32_t(n)});
        bytes.insert(bytes.end(), data, data + n);
    }
    void add_hole() { entries.push_back(Entry{0, HOLE}); }
    void finish() { bytes.resize(bytes.size() + PAD, 0); }

    // The length of token `id`, or HOLE for an id past the table or unused.
    inline uint32_t length(uint64_t id) const { return id < entries.size() ? entries[id].length : HOLE; }

    // Checks ids[0..n) (`stride` bytes apart) and adds their lengths to `total`; returns n, or
    // the position of the first id with no token.
    template <class T>
    size_t measure(const char* ids, size_t n, ptrdiff_t stride, size_t& total) const {
        size_t sum = 0;
        for (size_t k = 0; k < n; ++k) {
            T value;
            std::memcpy(&value, ids + ptrdiff_t(k) * stride, sizeof(T));
            uint32_t len = length(uint64_t(value));  // a negative value wraps past the table
            if (len == HOLE) return k;
            sum += len;
        }
        total += sum;
        return n;
    }

    // Writes the tokens of ids[0..n), already measured, to out[0..total); returns the end.
    template <class T>
    char* write(const char* ids, size_t n, ptrdiff_t stride, char* out, char* end) const {
        const char* base = bytes.data();
        const Entry* table = entries.data();
        for (size_t k = 0; k < n; ++k) {
            T value;
            std::memcpy(&value, ids + ptrdiff_t(k) * stride, sizeof(T));
            const Entry e = table[size_t(value)];
            if (e.length <= PAD && size_t(end - out) >= PAD) std::memcpy(out, base + e.start, PAD);
            else std::memcpy(out, base + e.start, e.length);
            out += e.length;
        }
        return out;
    }
};

}  // namespace bp
