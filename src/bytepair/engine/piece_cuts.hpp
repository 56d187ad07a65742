// Safe cuts inside a piece of a byte-level vocabulary: boundaries between two characters that
// no merge can span, so that the piece's parts, merged apart, give the piece's ids.
//
// Python twin: bytepair.reference.safe_piece_cuts (and the piece merged whole, which the
// parts must equal end to end: tests/engine/test_engine_piece_cuts.py).
//
// The rule, and why it is exact (cuts.hpp's argument, on bytes). A token that spans the
// boundary between characters a and b is first made by a merge (A, B) whose own junction is
// that boundary: A is a suffix of the text before it, B a prefix of the text after. So A's
// bytes from its last lead byte are a's UTF-8 (or, with no lead byte, a suffix of it: A lies
// inside a), and B's bytes up to the end of its first character are b's UTF-8 (or a prefix).
// Those two are the merge's junction keys; a boundary where no merge's keys fit is never
// spanned, and each side merges as it would alone (lowest rank first, or replay's order,
// picks on each side what that side alone picks). Merges whose junction cannot fall between
// two characters of valid UTF-8 (B starts with a continuation byte, A ends inside a
// character) have no keys. Only merges the pair table can make count: under tiktoken's rule,
// the table keeps each token's last merge only (EncoderCore::keep_last_merges).
//
// Shape (as cuts.hpp): a character's left class is the longest left key that is a suffix of
// its UTF-8 (0: none), its right class the longest right key that is a prefix; a bit matrix
// says which classes meet in some junction. Characters from U+20000 on, rare, are in class
// NEVER (never cut next to them). cl100k: 5.7K junctions, 577 x 556 classes (40 KB);
// o200k: 22K junctions, 2,870 x 2,841 (1 MB). Random CJK + emoji, 2 M characters: 76% of the
// boundaries inside pieces are safe, and 165K pieces, 141K of them distinct, become 542K parts
// of which 45K are distinct: parts come from the cache where pieces had to be merged.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "compat.hpp"
#include "hashing.hpp"

namespace bp {

// Bits of the class matrix above which cutting is left off. Untuned.
static const size_t MAX_PIECE_CUT_BITS = size_t(1) << 26;
// Code points with classes of their own; the rest are NEVER. Covers the Basic Multilingual
// Plane and the emoji of the Supplementary Multilingual Plane.
static const uint32_t PIECE_CUT_CODE_POINTS = 0x20000;

// A set of cells of a rows x columns grid, each row in whole words (so rows OR as words).
class BitMatrix {
  public:
    void assign(size_t rows, size_t columns) {
        words_ = (columns + 63) / 64;
        bits_.assign(rows * words_, 0);
    }
    size_t words_per_row() const { return words_; }
    inline uint64_t* row(size_t r) { return &bits_[r * words_]; }
    inline const uint64_t* row(size_t r) const { return &bits_[r * words_]; }
    inline void set(size_t r, size_t column) { bits_[r * words_ + column / 64] |= 1ULL << (column % 64); }
    inline bool test(size_t r, size_t column) const { return (bits_[r * words_ + column / 64] >> (column % 64)) & 1; }
    size_t bytes() const { return bits_.capacity() * sizeof(uint64_t); }

  private:
    size_t words_ = 0;
    std::vector<uint64_t> bits_;
};

class PieceCutTable {
  public:
    static constexpr uint32_t NONE = 0, NEVER = 1;  // classes: no junction; never cut next to it

    // The first up to 4 bytes of an id's value and the last up to 4 (first byte lowest), and
    // its length in bytes (0: unknown).
    struct Ends {
        uint32_t head = 0, tail = 0, length = 0;
    };

    // `ends`: every id's Ends, unknown (length 0) for an id that no merge of base bytes makes;
    // `pairs`: (left, right) of every pair the table can merge. A pair with such a part never
    // merges and is left out. After it, `enabled()` says whether cuts are known.
    void build(const std::vector<Ends>& ends, const std::vector<std::pair<uint32_t, uint32_t>>& pairs) {
        enabled_ = false;
        KeyIndex left_class, right_class;
        std::vector<uint32_t> junctions;  // left class << 16 | right class, repeats included
        for (const auto& pair : pairs) {
            uint32_t left = pair.first, right = pair.second;
            if (left >= ends.size() || right >= ends.size() || !ends[left].length || !ends[right].length) continue;
            uint64_t s, t;
            if (!left_key(ends[left], s) || !right_key(ends[right], t)) continue;
            uint32_t l = left_class.add(s), r = right_class.add(t);
            if (l > 0xFFFF || r > 0xFFFF) return;
            junctions.push_back(l << 16 | r);
        }
        size_t rows = left_class.size() + 2, columns = right_class.size() + 2;
        if (rows * columns > MAX_PIECE_CUT_BITS) return;
        // the right classes each right key reaches (those whose key starts with it); each
        // left key's own row, what its junctions reach; then a left class's row, which holds
        // its character's longest left key, joins the own rows of every left key ending it
        BitMatrix met, reach, own;
        met.assign(rows, columns);
        reach.assign(columns, columns);
        own.assign(rows, columns);
        matrix_.assign(rows, columns);
        size_t words = matrix_.words_per_row();
        for (uint32_t j : junctions) met.set(j >> 16, j & 0xFFFF);
        for (size_t k = 0; k < right_class.size(); ++k) {
            uint64_t key = right_class.keys[k];
            for (uint32_t n = 1; n <= length_of(key); ++n) {
                uint32_t shorter = right_class.find(prefix(key, n));
                if (shorter != NONE) reach.set(shorter, k + 2);
            }
        }
        for (size_t l = 2; l < rows; ++l) {
            const uint64_t* cells = met.row(l);
            for (size_t k = 0; k < words; ++k)
                for (uint64_t bits = cells[k]; bits; bits &= bits - 1)
                    or_row(own.row(l), reach.row(64 * k + count_trailing_zeros(bits)), words);
        }
        for (size_t k = 0; k < left_class.size(); ++k) {
            uint64_t key = left_class.keys[k];
            for (uint32_t n = 1; n <= length_of(key); ++n) {
                uint32_t shorter = left_class.find(suffix(key, n));
                if (shorter != NONE) or_row(matrix_.row(k + 2), own.row(shorter), words);
            }
        }
        for (size_t c = 0; c < columns; ++c) matrix_.set(NEVER, c);
        for (size_t r = 0; r < rows; ++r) matrix_.set(r, NEVER);
        // Each code point's longest left key that ends its UTF-8 and longest right key that
        // starts it. Shorter than the character, a left key is continuation bytes only (one or
        // two: in tables here), and a right key a prefix that the code points around it share
        // (looked up once per prefix): 2-3 lookups a code point instead of up to 8. The engine
        // of 32,768 merges learned on WikiText-2 train: 13.5 -> 8.1 ms; o200k's: 178 -> 170.
        std::vector<uint32_t> tail1(64, NONE), tail2(64 * 64, NONE);
        for (size_t k = 0; k < left_class.size(); ++k) {
            uint64_t key = left_class.keys[k];
            uint32_t bytes = uint32_t(key), n = length_of(key);
            if (n == 1 && utf8_continuation(bytes & 0xFF)) tail1[bytes & 0x3F] = uint32_t(k + 2);
            if (n == 2 && utf8_continuation(bytes & 0xFF) && utf8_continuation((bytes >> 8) & 0xFF))
                tail2[(bytes & 0x3F) << 6 | ((bytes >> 8) & 0x3F)] = uint32_t(k + 2);
        }
        // The first bytes of the keys: a key a code point's bytes do not start with is not
        // looked up (a vocabulary learned on one language's text has keys for few of them).
        // A Tokenizer of the 32,768 merges learned on WikiText-2 train: 5.9-6.0 -> 3.9 ms to
        // build (best of 100); cl100k and o200k, whose keys start with most bytes, unchanged.
        std::vector<uint8_t> starts_left(256, 0), starts_right(256, 0);
        for (uint64_t key : left_class.keys) starts_left[key & 0xFF] = 1;
        for (uint64_t key : right_class.keys) starts_right[key & 0xFF] = 1;
        uint64_t shared_prefix = ~0ULL;
        uint32_t shared_right = NONE;  // the class of shared_prefix's longest right key
        classes_.assign(PIECE_CUT_CODE_POINTS, NEVER << 16 | NEVER);
        for (uint32_t cp = 0; cp < PIECE_CUT_CODE_POINTS; ++cp) {
            if (cp >= 0xD800 && cp < 0xE000) continue;
            uint64_t utf8 = utf8_key(cp);
            uint32_t n = length_of(utf8), bytes = uint32_t(utf8);
            uint32_t left = starts_left[bytes & 0xFF] ? left_class.find(utf8) : NONE;
            if (left == NONE && n == 4 && starts_left[(bytes >> 8) & 0xFF]) left = left_class.find(suffix(utf8, 3));
            if (left == NONE && n >= 3) {
                uint32_t last2 = bytes >> (8 * (n - 2));
                left = tail2[(last2 & 0x3F) << 6 | ((last2 >> 8) & 0x3F)];
            }
            if (left == NONE && n >= 2) left = tail1[(bytes >> (8 * (n - 1))) & 0x3F];
            bool may_start = starts_right[bytes & 0xFF];  // the character and its prefixes start with it
            uint32_t right = may_start ? right_class.find(utf8) : NONE;
            if (right == NONE && n >= 2 && may_start) {
                uint64_t shorter = prefix(utf8, n - 1);
                if (shorter != shared_prefix) {
                    shared_prefix = shorter;
                    shared_right = NONE;
                    for (uint32_t k = n - 1; k >= 1 && shared_right == NONE; --k)
                        shared_right = right_class.find(prefix(utf8, k));
                }
                right = shared_right;
            }
            classes_[cp] = left << 16 | right;
        }
        enabled_ = true;
    }

    bool enabled() const { return enabled_; }

    // Both classes of a code point: left class << 16 | right class.
    inline uint32_t classes(uint32_t cp) const {
        return cp < PIECE_CUT_CODE_POINTS ? classes_[cp] : (NEVER << 16 | NEVER);
    }
    // Whether the boundary between characters of classes `before` and `after` may be cut.
    inline bool safe(uint32_t before, uint32_t after) const { return !matrix_.test(before >> 16, after & 0xFFFF); }

    size_t bytes() const { return matrix_.bytes() + classes_.capacity() * sizeof(uint32_t); }

    // The Ends of a value made of `a` then `b`.
    static Ends joined(const Ends& a, const Ends& b) {
        Ends e;
        e.length = std::min<uint32_t>(a.length + b.length, 0xFFFF);
        uint32_t a_head = std::min<uint32_t>(a.length, 4), b_head = std::min<uint32_t>(b.length, 4);
        uint64_t heads = uint64_t(a.head) | uint64_t(b.head) << (8 * a_head);
        e.head = uint32_t(heads);  // the first 4 bytes (fewer if shorter)
        uint64_t tails = uint64_t(a.tail) | uint64_t(b.tail) << (8 * a_head);
        uint32_t in_tails = a_head + b_head, keep = std::min<uint32_t>(in_tails, 4);
        e.tail = uint32_t(tails >> (8 * (in_tails - keep)));
        return e;
    }
    static Ends one_byte(uint8_t byte) { return Ends{byte, byte, 1}; }

    // Keys: up to 4 bytes, first byte lowest, with their count in bits 32 up.
    static inline uint32_t length_of(uint64_t key) { return uint32_t(key >> 32); }
    static inline uint64_t make_key(uint64_t bytes, uint32_t n) {
        return uint64_t(n) << 32 | (bytes & ((n >= 4 ? 0 : 1ULL << (8 * n)) - 1) & 0xFFFFFFFFull);
    }

  private:
    static void or_row(uint64_t* to, const uint64_t* from, size_t words) {
        for (size_t k = 0; k < words; ++k) to[k] |= from[k];
    }
    static inline uint64_t prefix(uint64_t key, uint32_t n) { return make_key(key, n); }
    static inline uint64_t suffix(uint64_t key, uint32_t n) {
        return make_key(uint32_t(key) >> (8 * (length_of(key) - n)), n);
    }
    static uint64_t utf8_key(uint32_t cp) {
        unsigned n;
        uint32_t bytes = utf8_of(cp, n);
        return make_key(bytes, n);
    }

  public:
    // A pair's junction keys. The left side's key: its last character, whole, or its bytes if all are continuation
    // bytes; false if it ends inside a character (or in bytes valid UTF-8 never has).
    static bool left_key(const Ends& e, uint64_t& key) {
        uint32_t n = std::min<uint32_t>(e.length, 4);
        for (uint32_t k = 1; k <= n; ++k) {  // k: bytes from the end, the last one included
            uint32_t byte = (e.tail >> (8 * (n - k))) & 0xFF;
            if (utf8_continuation(byte)) continue;
            if (utf8_sequence_length(byte) != k) return false;
            key = make_key(e.tail >> (8 * (n - k)), k);
            return true;
        }
        if (e.length >= 4) return false;  // four continuation bytes in a row
        key = make_key(e.tail, n);
        return true;
    }
    // The right side's key: its first character, or all of it if it ends inside that one;
    // false if it starts inside a character.
    static bool right_key(const Ends& e, uint64_t& key) {
        uint32_t need = utf8_sequence_length(e.head & 0xFF);
        if (need == 0) return false;
        key = make_key(e.head, std::min(need, e.length));
        return true;
    }

  private:
    // Keys -> classes 2, 3, ... in order of arrival; open addressing, at most half full (an
    // unordered_map made the build 3x slower: it looks up 200K junction keys and 1M suffixes
    // and prefixes of code points).
    struct KeyIndex {
        std::vector<uint64_t> keys;                    // class - 2 -> key
        std::vector<uint64_t> slots = std::vector<uint64_t>(64, 0);  // key (never 0: its length is set), 0: empty
        std::vector<uint32_t> slot_class = std::vector<uint32_t>(64, NONE);
        size_t size() const { return keys.size(); }
        inline uint32_t find(uint64_t key) const {
            size_t mask = slots.size() - 1;
            for (size_t i = mix64(key) & mask;; i = (i + 1) & mask) {
                if (slots[i] == key) return slot_class[i];
                if (slots[i] == 0) return NONE;
            }
        }
        uint32_t add(uint64_t key) {
            size_t mask = slots.size() - 1, i = mix64(key) & mask;
            for (; slots[i] != 0; i = (i + 1) & mask)
                if (slots[i] == key) return slot_class[i];
            keys.push_back(key);
            slots[i] = key;
            slot_class[i] = uint32_t(keys.size() + 1);
            if (2 * keys.size() > slots.size()) grow();
            return uint32_t(keys.size() + 1);
        }
        void grow() {
            slots.assign(2 * slots.size(), 0);
            slot_class.assign(slots.size(), NONE);
            size_t mask = slots.size() - 1;
            for (size_t k = 0; k < keys.size(); ++k) {
                size_t i = mix64(keys[k]) & mask;
                while (slots[i] != 0) i = (i + 1) & mask;
                slots[i] = keys[k];
                slot_class[i] = uint32_t(k + 2);
            }
        }
    };

    bool enabled_ = false;
    BitMatrix matrix_;
    std::vector<uint32_t> classes_;
};

}  // namespace bp
