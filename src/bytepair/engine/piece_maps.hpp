// Piece -> ids maps: the whole-piece vocabulary lookup and each worker's piece cache.
//
// Two open-addressing tables, both grown when half full, so that a cache costs memory in
// proportion to the pieces it has seen:
// - ShortMap: keys of up to SHORT_KEY bytes (hashing.hpp), in 32-byte slots that hold the
//   key and, for a single id (most pieces), the id itself: a lookup reads one slot and
//   nothing else. Longer id runs sit in a side array. Beside the slots, one byte per slot
//   holds 7 bits of the key's hash: a miss reads the bytes, not the slots (cl100k's
//   whole-piece table: 256 KB of tags against 8 MB of slots; text of new pieces, UDHR or
//   random CJK, misses it on most pieces).
// - PieceMap: longer keys, with keys and ids in arrays beside the slots; a slot keeps the full
//   hash so most mismatches cost no key comparison.
// - WordMap: keys that are one nonzero 64-bit word (char mode's cut parts of 4-8 ASCII
//   characters, encoder.hpp's encode_cut), in 16-byte slots, four per cache line: packing and
//   comparing a key is one word, and a full cache of 65,536 entries is 2 MB instead of 4.
// Own tables rather than std::unordered_map: see pair_table.hpp (1.5-3x fewer ns per lookup).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "compat.hpp"
#include "hashing.hpp"

namespace bp {

// Appends `count` ids, one by one when they are a few: a piece's ids are 1-6, and a memcpy
// call for so few cost more than the copy (random CJK + emoji: 7% of its time in memmove,
// from cache hits and inserts; 2-5% faster without, WikiText-2 valid and UDHR within the
// noise, char mode unchanged). Above 16, one bulk copy.
BP_ALWAYS_INLINE void append_ids(std::vector<uint32_t>& out, const uint32_t* ids, size_t count) {
    if (count > 16) {
        out.insert(out.end(), ids, ids + count);
        return;
    }
    for (size_t k = 0; k < count; ++k) out.push_back(ids[k]);
}

// Slots a new ShortMap starts with: 32 KB, small enough that an idle cache costs little and
// large enough that a short text does not grow it at all. Untuned.
static const size_t SHORT_MAP_INITIAL_SLOTS = 1024;
// Slots a new WordMap starts with (as ShortMap's; 16 KB). Untuned.
static const size_t WORD_MAP_INITIAL_SLOTS = 1024;
// Slots a new PieceMap starts with (long pieces are rare). Untuned.
static const size_t PIECE_MAP_INITIAL_SLOTS = 64;

class ShortMap {
  public:
    ShortMap() {
        slots_.assign(SHORT_MAP_INITIAL_SLOTS, Slot{});
        tags_.assign(SHORT_MAP_INITIAL_SLOTS, 0);
    }

    // The ids of `key` (hash `h`) and their number in *count, or nullptr.
    inline const uint32_t* find(const ShortKey& key, uint64_t h, size_t* count) const {
        size_t mask = slots_.size() - 1, i = h & mask;
        uint8_t tag = tag_of(h);
        for (;; i = (i + 1) & mask) {
            uint8_t t = tags_[i];
            if (t == tag) {
                const Slot& s = slots_[i];
                if (s.len == key.len && s.w[0] == key.w[0] && s.w[1] == key.w[1] && s.w[2] == key.w[2]) {
                    *count = s.count;
                    return s.count == 1 ? &s.value : &ids_[s.value];
                }
            } else if (t == 0) {
                return nullptr;
            }
        }
    }

    // Starts loading the first tag and slot a lookup of hash `h` reads.
    inline void prefetch(uint64_t h) const {
        size_t i = h & (slots_.size() - 1);
        BP_PREFETCH(&tags_[i]);
        BP_PREFETCH(&slots_[i]);
    }

    // Adds a key that is not in the map; 1 <= count < 2**16 and key.len >= 1.
    void insert(const ShortKey& key, uint64_t h, const uint32_t* ids, size_t count) {
        if (2 * (entries_ + 1) > slots_.size()) grow();
        Slot slot{{key.w[0], key.w[1], key.w[2]}, uint16_t(key.len), uint16_t(count), ids[0]};
        if (count != 1) {
            slot.value = uint32_t(ids_.size());
            append_ids(ids_, ids, count);
        }
        place(slot, h);
        ++entries_;
    }

    // Room for `n` entries without growing (a vocabulary's size is known before it is added).
    void reserve(size_t n) {
        while (2 * n > slots_.size()) grow();
    }

    // Empties the map and keeps its size: only the tags are zeroed (a slot is read only under
    // its tag). Shrinking to the first size made a full cache (UDHR: 201 K distinct merged
    // pieces, a clear every 65 K) grow back through every size, each a fresh zeroed table:
    // 4-5% of encoding time in page faults and zeroing (perf, UDHR, o200k).
    void clear() {
        std::fill(tags_.begin(), tags_.end(), uint8_t(0));
        ids_.clear();
        entries_ = 0;
    }

    size_t entries() const { return entries_; }
    size_t slots() const { return slots_.size(); }
    size_t bytes() const {
        return slots_.capacity() * sizeof(Slot) + tags_.capacity() + ids_.capacity() * sizeof(uint32_t);
    }

  private:
    // ShortKey's fields with the id count beside the length: 32 bytes, two per cache line
    struct Slot {
        uint64_t w[3] = {0, 0, 0};
        uint16_t len = 0, count = 0;
        uint32_t value = 0;
    };
    // A slot's tag: 7 bits of the hash that the index does not use, and a bit so that it is
    // never 0 (an empty slot).
    static inline uint8_t tag_of(uint64_t h) { return uint8_t(h >> 57) | 0x80; }
    void place(const Slot& slot, uint64_t h) {
        size_t mask = slots_.size() - 1, i = h & mask;
        while (tags_[i]) i = (i + 1) & mask;
        slots_[i] = slot;
        tags_[i] = tag_of(h);
    }
    void grow() {
        std::vector<Slot, HugePageAllocator<Slot>> old;
        old.swap(slots_);
        slots_.assign(old.size() * 2, Slot{});
        std::vector<uint8_t> old_tags(old.size() * 2, 0);
        old_tags.swap(tags_);
        for (size_t i = 0; i < old.size(); ++i) {
            if (!old_tags[i]) continue;  // empty, or left over from before a clear()
            const Slot& s = old[i];
            place(s, ShortKey{{s.w[0], s.w[1], s.w[2]}, s.len}.hash());
        }
    }

    std::vector<Slot, HugePageAllocator<Slot>> slots_;
    std::vector<uint8_t> tags_;  // beside the slots: a miss mostly reads only these
    std::vector<uint32_t> ids_;
    size_t entries_ = 0;
};

class WordMap {
  public:
    WordMap() { resize(WORD_MAP_INITIAL_SLOTS); }

    // The ids of `key` (nonzero) and their number in *count, or nullptr.
    inline const uint32_t* find(uint64_t key, size_t* count) const {
        size_t mask = slots_.size() - 1;
        for (size_t i = slot_of(key); ; i = (i + 1) & mask) {
            const Slot& s = slots_[i];
            if (s.key == key) {
                *count = s.count;
                return s.count == 1 ? &s.value : &ids_[s.value];
            }
            if (s.key == 0) return nullptr;
        }
    }

    // Starts loading the first slot of `key` (as ShortMap::prefetch).
    inline void prefetch(uint64_t key) const { BP_PREFETCH(&slots_[slot_of(key)]); }

    // Adds a key (nonzero) that is not in the map; count >= 1.
    void insert(uint64_t key, const uint32_t* ids, size_t count) {
        if (2 * (entries_ + 1) > slots_.size()) grow();
        Slot slot{key, ids[0], uint32_t(count)};
        if (count != 1) {
            slot.value = uint32_t(ids_.size());
            append_ids(ids_, ids, count);
        }
        place(slot);
        ++entries_;
    }

    void clear() {
        resize(WORD_MAP_INITIAL_SLOTS);
        ids_.clear();
        entries_ = 0;
    }

    size_t entries() const { return entries_; }
    size_t slots() const { return slots_.size(); }
    size_t bytes() const { return slots_.capacity() * sizeof(Slot) + ids_.capacity() * sizeof(uint32_t); }

  private:
    struct Slot {
        uint64_t key = 0;  // 0: empty
        uint32_t value = 0, count = 0;
    };
    // Fibonacci hashing: the product's top bits, which every bit of the key reaches (its low
    // bits would depend on the first characters only)
    inline size_t slot_of(uint64_t key) const { return size_t((key * 0x9E3779B97F4A7C15ULL) >> shift_); }
    void resize(size_t slots) {
        slots_.assign(slots, Slot{});
        shift_ = 64;
        for (size_t n = slots; n > 1; n >>= 1) --shift_;
    }
    void place(const Slot& slot) {
        size_t mask = slots_.size() - 1, i = slot_of(slot.key);
        while (slots_[i].key) i = (i + 1) & mask;
        slots_[i] = slot;
    }
    void grow() {
        std::vector<Slot> old;
        old.swap(slots_);
        resize(old.size() * 2);
        for (const Slot& s : old)
            if (s.key) place(s);
    }

    std::vector<Slot> slots_;
    std::vector<uint32_t> ids_;
    size_t entries_ = 0;
    unsigned shift_ = 64;
};

class PieceMap {
  public:
    PieceMap() { slots_.assign(PIECE_MAP_INITIAL_SLOTS, Slot{0, 0, 0, 0, 0}); }

    // The ids of `key` (len bytes, hash `h` from hash_bytes) and their number, or nullptr.
    inline const uint32_t* find(const uint8_t* key, size_t len, uint64_t h, size_t* count) const {
        size_t mask = slots_.size() - 1, i = h & mask;
        while (slots_[i].hash) {
            const Slot& s = slots_[i];
            if (s.hash == h && s.key_len == len && std::memcmp(&keys_[s.key_at], key, len) == 0) {
                *count = s.ids_len;
                return &ids_[s.ids_at];
            }
            i = (i + 1) & mask;
        }
        return nullptr;
    }

    // Adds a key that is not in the map.
    void insert(const uint8_t* key, size_t len, uint64_t h, const uint32_t* ids, size_t count) {
        if (2 * (entries_ + 1) > slots_.size()) grow();
        place(Slot{h, uint32_t(keys_.size()), uint32_t(len), uint32_t(ids_.size()), uint32_t(count)});
        keys_.insert(keys_.end(), key, key + len);
        append_ids(ids_, ids, count);
        ++entries_;
    }

    void clear() {
        slots_.assign(PIECE_MAP_INITIAL_SLOTS, Slot{0, 0, 0, 0, 0});
        keys_.clear();
        ids_.clear();
        entries_ = 0;
    }

    size_t entries() const { return entries_; }
    size_t slots() const { return slots_.size(); }
    size_t bytes() const {
        return slots_.capacity() * sizeof(Slot) + keys_.capacity() + ids_.capacity() * sizeof(uint32_t);
    }

  private:
    struct Slot {
        uint64_t hash;
        uint32_t key_at, key_len, ids_at, ids_len;
    };
    void place(const Slot& slot) {
        size_t mask = slots_.size() - 1, i = slot.hash & mask;
        while (slots_[i].hash) i = (i + 1) & mask;
        slots_[i] = slot;
    }
    void grow() {
        std::vector<Slot> old;
        old.swap(slots_);
        slots_.assign(old.size() * 2, Slot{0, 0, 0, 0, 0});
        for (const Slot& s : old)
            if (s.hash) place(s);
    }

    std::vector<Slot> slots_;
    std::vector<uint8_t> keys_;
    std::vector<uint32_t> ids_;
    size_t entries_ = 0;
};

}  // namespace bp
