// Hashing of pieces and pair keys, and the packed form of short keys.
//
// A piece is keyed by its UTF-8, so that a piece hits whichever str width (1, 2 or 4 bytes
// per code point) it came from. Keys of up to SHORT_KEY bytes, nearly every piece of real
// text, are packed into three zero-padded words (`ShortKey`) that a table slot holds inline:
// one lookup reads one slot. perf on WikiText-2 valid showed the older layout (slot -> key
// array -> id array) waiting on memory for half of encoding time. Longer keys are hashed
// word by word (`hash_bytes`).
//
// The mixers are the finalizer of MurmurHash3 (`mix64`) and multiply-xorshift rounds; they
// only need to spread keys over power-of-two open-addressing tables, not resist attacks
// (a table degrades to slower probing, never to a wrong answer).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace bp {

// UTF-8 bytes up to which a key is packed into a slot. 24 = three words: with the length and
// an id that makes a 32-byte slot, two per cache line. Covers nearly every piece of prose
// (English words are under 24 bytes); longer pieces take the PieceMap path. Not tuned further.
static const size_t SHORT_KEY = 24;

inline uint64_t mix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

// One multiply-xorshift round: the product's high half, which every key bit reaches, folded
// onto the low half that slot indexes read. About 5 cycles of latency against mix64's 12, for
// the pair table, whose lookups lie on the path of every merge (pair_table.hpp has the
// measurements). Not for piece keys: on cl100k's and o200k's tokens it clustered more than
// mix64 (whole-piece table, o200k: mean displacement 0.49 against 0.31, longest 40 against 22).
inline uint64_t fold_mix(uint64_t x) {
    uint64_t h = x * 0x9E3779B97F4A7C15ULL;
    return h ^ (h >> 32);
}

// Keys of at least 8 bytes (the engine passes only those longer than SHORT_KEY): whole words,
// then the last 8 bytes, which may overlap the words already read (copying the tail byte by
// byte into a word stalled the load that read it back: 15% of encoding time in perf).
// Never 0: 0 marks an empty slot.
inline uint64_t hash_bytes(const uint8_t* p, size_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (n * 0xC2B2AE3D27D4EB4FULL), word;
    for (size_t k = 0; k + 8 <= n; k += 8) {
        std::memcpy(&word, p + k, 8);
        h = (h ^ word) * 0x9FB21C651E98DF25ULL;
        h ^= h >> 29;
    }
    std::memcpy(&word, p + n - 8, 8);
    h = mix64(h ^ word);
    return h ? h : 1;
}

// A blocked Bloom filter over 64-bit hashes: two bits of one 64-bit word per key, so that a
// lookup reads one word. The bits come from hash bits that the tables' slot indexes (the low
// bits; tables stay under 2**32 slots) do not use: the word from bits 32 up (under 2**20
// words), the two bits from 52-63. A hash without both bits set was never added. Empty (one
// zero word) until sized: then it holds nothing.
struct HashFilter {
    std::vector<uint64_t> words = std::vector<uint64_t>(1, 0);
    size_t mask = 0;

    // Room for `keys` keys at `bits_per_key` bits each (rounded up to a power of two); empties it.
    void size_for(size_t keys, size_t bits_per_key) {
        size_t n = 1;
        while (64 * n < bits_per_key * keys) n <<= 1;
        words.assign(n, 0);
        mask = n - 1;
    }
    static inline uint64_t bits_of(uint64_t h) { return (1ULL << ((h >> 52) & 63)) | (1ULL << (h >> 58)); }
    inline size_t word_of(uint64_t h) const { return size_t(h >> 32) & mask; }
    inline void add(uint64_t h) { words[word_of(h)] |= bits_of(h); }
    inline bool may_hold(uint64_t h) const {
        uint64_t bits = bits_of(h);
        return (words[word_of(h)] & bits) == bits;
    }
    size_t bytes() const { return words.capacity() * sizeof(uint64_t); }
};

// The UTF-8 of code point c as a number, its first byte lowest, and its length in bytes.
inline uint32_t utf8_of(uint32_t c, unsigned& bytes) {
    if (c < 0x80) {
        bytes = 1;
        return c;
    }
    if (c < 0x800) {
        bytes = 2;
        return (0xC0 | (c >> 6)) | (0x80 | (c & 0x3F)) << 8;
    }
    if (c < 0x10000) {
        bytes = 3;
        return (0xE0 | (c >> 12)) | (0x80 | ((c >> 6) & 0x3F)) << 8 | (0x80 | (c & 0x3F)) << 16;
    }
    bytes = 4;
    return (0xF0 | (c >> 18)) | (0x80 | ((c >> 12) & 0x3F)) << 8 | (0x80 | ((c >> 6) & 0x3F)) << 16 |
           (0x80 | (c & 0x3F)) << 24;
}

// UTF-8's structure, byte by byte: whether a byte continues a character (10xxxxxx), and how
// many bytes the character a byte starts has (1: ASCII; 2-4: a lead byte; 0: a continuation
// byte, or 0xF8 and above, which start nothing).
inline bool utf8_continuation(uint32_t byte) { return (byte & 0xC0) == 0x80; }
inline unsigned utf8_sequence_length(uint32_t byte) {
    return byte < 0x80 ? 1 : byte < 0xC0 ? 0 : byte < 0xE0 ? 2 : byte < 0xF0 ? 3 : byte < 0xF8 ? 4 : 0;
}

// The first character of `bytes` (n of them) as a code point, and its length in bytes; 0 when
// they do not start with a whole, well-formed character (utf8_of's inverse on its results).
inline unsigned utf8_first(const uint8_t* bytes, size_t n, uint32_t& cp) {
    static const uint32_t lowest[5] = {0, 0, 0x80, 0x800, 0x10000};  // shorter is overlong
    unsigned length = n ? utf8_sequence_length(bytes[0]) : 0;
    if (length == 0 || n < length) return 0;
    cp = bytes[0] & (length == 1 ? 0x7F : 0xFF >> (length + 1));
    for (unsigned k = 1; k < length; ++k) {
        if (!utf8_continuation(bytes[k])) return 0;
        cp = cp << 6 | (bytes[k] & 0x3F);
    }
    bool surrogate = cp >= 0xD800 && cp < 0xE000;
    return cp < lowest[length] || cp > 0x10FFFF || surrogate ? 0 : length;
}

// A key of at most SHORT_KEY bytes packed into three zero-padded words, in byte order in
// memory (so `bytes()` reads it back), compared and hashed as words.
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define BP_BYTE_SHIFT(k) (56 - 8 * (k))
#else
#define BP_BYTE_SHIFT(k) (8 * (k))
#endif
struct ShortKey {
    uint64_t w[3];
    uint32_t len;
    const uint8_t* bytes() const { return reinterpret_cast<const uint8_t*>(w); }
    inline uint64_t hash() const {
        return mix64((w[0] * 0x9E3779B97F4A7C15ULL) ^ (w[1] * 0xC2B2AE3D27D4EB4FULL) ^
                     (w[2] * 0x165667B19E3779F9ULL) ^ len);
    }
};

// Code units from..to (at most 8) of p as one word of a key, their bits OR-ed into `high`.
template <class C> inline uint64_t pack_key_word(const C* p, size_t from, size_t to, uint32_t& high) {
    uint64_t word = 0;
    for (size_t k = from; k < to; ++k) {
        high |= uint32_t(p[k]);
        word |= uint64_t(p[k]) << BP_BYTE_SHIFT(k & 7);
    }
    return word;
}

// Code units -> key, when every one is ASCII (then they are the UTF-8 bytes) and they fit.
// The words are built in three locals, each in a register: OR-ing into key.w[k >> 3], or into
// an array indexed by a loop, went through memory, each store feeding a later load (perf on
// UDHR, o200k: 18% of encode_chars on the hash's multiply that waited for the reload).
template <class C> inline bool pack_ascii(const C* p, size_t len, ShortKey& key) {
    if (len > SHORT_KEY) return false;
    uint32_t high = 0;
    uint64_t w0 = pack_key_word(p, 0, len < 8 ? len : 8, high);
    uint64_t w1 = len > 8 ? pack_key_word(p, 8, len < 16 ? len : 16, high) : 0;
    uint64_t w2 = len > 16 ? pack_key_word(p, 16, len, high) : 0;
    if (high >= 0x80) return false;
    key.w[0] = w0;
    key.w[1] = w1;
    key.w[2] = w2;
    key.len = uint32_t(len);
    return true;
}

// Code units -> one nonzero word, when every one is ASCII (1 <= len <= 8): the bytes in
// order, the last one's top bit set (so the word also says the length).
template <class C> inline bool pack_word(const C* p, size_t len, uint64_t& key) {
    uint32_t high = 0;
    key = pack_key_word(p, 0, len, high) | uint64_t(0x80) << BP_BYTE_SHIFT(len - 1);
    return high < 0x80;
}

// Bytes -> key; len <= SHORT_KEY. A copy, since the key holds its bytes in memory order on
// either byte order.
inline void pack_bytes(const uint8_t* p, size_t len, ShortKey& key) {
    key.w[0] = key.w[1] = key.w[2] = 0;
    std::memcpy(key.w, p, len);
    key.len = uint32_t(len);
}

// pack_bytes for bytes followed by at least SHORT_KEY - len readable ones (the encoder's UTF-8
// buffer): three whole-word loads, the bytes past len masked off. On random CJK text, whose
// pieces all come this way, OR-ing byte by byte into the words (each store feeding the next
// load) was 13% of encoding time in perf, and a memcpy of len bytes stalled the loads of the
// hash that read it back (17% of encode_chars).
inline void pack_padded(const uint8_t* p, size_t len, ShortKey& key) {
    for (size_t part = 0; part < 3; ++part) {
        uint64_t word;
        std::memcpy(&word, p + 8 * part, 8);
        size_t keep = len > 8 * part ? len - 8 * part : 0;  // bytes of this word in the key
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        uint64_t mask = keep >= 8 ? ~0ULL : keep ? ~0ULL << (64 - 8 * keep) : 0;
#else
        uint64_t mask = keep >= 8 ? ~0ULL : (1ULL << (8 * keep)) - 1;
#endif
        key.w[part] = word & mask;
    }
    key.len = uint32_t(len);
}

}  // namespace bp
