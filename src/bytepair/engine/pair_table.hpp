// The pair table: (left id, right id) -> (rank, merged id), for rank-based merging.
//
// Three layouts, one lookup:
// - Pairs of two ids below 256 (the byte tokens of every byte-level vocabulary: the first
//   round of every piece) in a dense 256 x 256 array of (rank, merged): 512 KB, of which a
//   script's text touches a few rows, so its first-round pairs come from L1/L2.
// - The rest in an open-addressing table at most half full. When ids and ranks fit in 21 bits
//   and the rank determines the merged id (merged = rank + a constant: tiktoken's rule, where
//   ranks are ids, and merge lists whose i-th merge makes id base + i; or else through a
//   rank -> merged array), a slot is 8 bytes: key, rank and a flag packed in one word. cl100k:
//   4 MB instead of 8 MB of 16-byte slots. The profile of random CJK + emoji text had 42% of
//   encoding time waiting on this table's slots (bench/RESULTS.md).
// - Otherwise 16-byte slots: the 64-bit key, the rank, the merged id.
// Before either hashed layout's slots, a Bloom filter of the hashed pairs turns most absent
// pairs away (FILTER_BITS_PER_PAIR).
// Own tables rather than std::unordered_map: 1.5-3x fewer ns per random lookup in a
// micro-benchmark with 233K pairs (cl100k's size), since a probe reads flat memory.
//
// A pair that a merge list learns twice keeps all its ranks: keeping only the first was wrong
// (hypothesis found lists where a pair reappears after a later merge rebuilds one of its
// parts). The entry holds the lowest rank and that rank's merged id; the other ranks, rare,
// sit in a side map and are found by `rank_at_least`, which replay ("monotonic") merging asks
// with a floor above the rank it has just applied.
//
// Under tiktoken's rule the encoder keeps, of each token's splits, only the one that merging the
// token's bytes ends with (EncoderCore::keep_last_merges, through retain()): the others can
// never merge, and the table halves.
//
// Use: add() every pair, then build() once (and retain() if wanted), then look up from any
// number of threads.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "compat.hpp"
#include "hashing.hpp"

namespace bp {

static const uint32_t NO_RANK = 0xFFFFFFFFu;

// Bits of the pair filter (hashing.hpp's HashFilter) per hashed pair, rounded up to a power of
// two. Most hashed lookups ask for a pair that is not there (cl100k: 93% of them on random
// CJK + emoji, 59% on UDHR, 87% on random letters); the filter answers those from L2 instead
// of a slot of the 4 MB table. 8 bits: 256 KB for cl100k, about 5% of absent pairs let
// through; 4 was slower on random CJK + emoji (2.3x tiktoken against 2.8x), 16 no faster.
static const size_t FILTER_BITS_PER_PAIR = 8;

class PairTable {
  public:
    void add(uint32_t left, uint32_t right, uint32_t rank, uint32_t merged) {
        staged_.push_back({key(left, right), rank, merged});
        max_rank_ = std::max(max_rank_, rank);
    }

    void reserve(size_t pairs) { staged_.reserve(pairs); }

    // Sorted first so that a pair's ranks meet (by radix: sort_staged; inserting unsorted saved
    // the sort, but the layout choice below reads distinct pairs).
    void build() {
        sort_staged();
        dense_.assign(DENSE * DENSE, Dense{NO_RANK, 0});
        choose_layout();
        size_t hashed = 0;
        for (size_t k = 0; k < staged_.size(); ++k)
            if (!is_dense(staged_[k].key) && (k == 0 || staged_[k - 1].key != staged_[k].key)) ++hashed;
        size_t size = 16;
        while (size < 2 * hashed) size <<= 1;
        mask_ = size - 1;
        if (packed_) packed_slots_.assign(size, PACKED_EMPTY);
        else slots_.assign(size, Slot{EMPTY, 0, 0});
        filter_.size_for(hashed, FILTER_BITS_PER_PAIR);
        for (size_t k = 0; k < staged_.size(); ++k) {
            const Slot& entry = staged_[k];
            if (k > 0 && staged_[k - 1].key == entry.key) {
                later_[entry.key].push_back(entry.rank);  // sorted: staged_ is
                mark_more(entry.key);
                continue;
            }
            uint32_t left = uint32_t(entry.key >> 32), right = uint32_t(entry.key);
            if (is_dense(entry.key)) {
                dense_[left * DENSE + right] = Dense{entry.rank, entry.merged};
            } else if (packed_) {
                place_packed(packed_key(left, right), entry.rank);
            } else {
                place_slot(entry);
            }
        }
        std::vector<Slot>().swap(staged_);
    }

    // After build(): keeps the pairs for which keep(left, right, lowest rank) holds (a kept
    // pair's later ranks stay in the side map); slots and filter sized for what is left. The
    // dense pairs too: a token below id 256 can be a pair of two others there, and a split
    // left in place would be taken for the one its token forms from (seam_walk's makers).
    template <class Keep> void retain(Keep&& keep) {
        for (uint32_t k = 0; k < dense_.size(); ++k)
            if (dense_[k].rank != NO_RANK && !keep(k / DENSE, k % DENSE, dense_[k].rank)) dense_[k] = Dense{NO_RANK, 0};
        std::vector<Slot> kept;
        if (packed_) {
            for (uint64_t s : packed_slots_) {
                if (s == PACKED_EMPTY) continue;
                uint64_t pk = s >> 22;
                uint32_t left = uint32_t(pk >> 21), right = uint32_t(pk & PACKED_ID_LIMIT), rank = uint32_t(s & PACKED_RANK);
                if (keep(left, right, rank)) kept.push_back({pk, uint32_t(s & ((1ULL << 22) - 1)), 0});
            }
        } else {
            for (const Slot& s : slots_)
                if (s.key != EMPTY && keep(uint32_t(s.key >> 32), uint32_t(s.key), s.rank)) kept.push_back(s);
        }
        size_t size = 16;
        while (size < 2 * kept.size()) size <<= 1;
        mask_ = size - 1;
        filter_.size_for(kept.size(), FILTER_BITS_PER_PAIR);
        if (packed_) {
            std::vector<uint64_t, HugePageAllocator<uint64_t>>().swap(packed_slots_);
            packed_slots_.assign(size, PACKED_EMPTY);
            for (const Slot& e : kept) place_packed(e.key, e.rank);  // key: the packed key; rank: rank and MORE
        } else {
            std::vector<Slot, HugePageAllocator<Slot>>().swap(slots_);
            slots_.assign(size, Slot{EMPTY, 0, 0});
            for (const Slot& e : kept) place_slot(e);
        }
    }

    // After build(): calls f(left, right, lowest rank, merged id) for every pair in the table.
    // The pair that makes each id (left << 32 | right; NOT_MADE for an id no pair makes: a
    // base symbol), for the chunked merge's seam test (merge.hpp, seam_walk). Set by the
    // encoder where that test holds: ranks are the merged ids, each token keeps the one pair
    // it forms from, and every pair ranks above the merged ids it joins. Empty otherwise.
    static constexpr uint64_t NOT_MADE = ~0ULL;
    void set_makers(std::vector<uint64_t> makers) { makers_ = std::move(makers); }
    bool has_makers() const { return !makers_.empty(); }
    inline uint64_t maker(uint32_t id) const { return id < makers_.size() ? makers_[id] : NOT_MADE; }

    template <class F> void for_each_pair(F&& f) const {
        for (uint32_t k = 0; k < dense_.size(); ++k)
            if (dense_[k].rank != NO_RANK) f(k / DENSE, k % DENSE, dense_[k].rank, dense_[k].merged & ~MORE);
        for (uint64_t s : packed_slots_) {
            if (s == PACKED_EMPTY) continue;
            uint64_t pk = s >> 22;
            uint32_t rank = uint32_t(s & PACKED_RANK);
            f(uint32_t(pk >> 21), uint32_t(pk & PACKED_ID_LIMIT), rank, merged_of_rank(rank));
        }
        for (const Slot& s : slots_)
            if (s.key != EMPTY) f(uint32_t(s.key >> 32), uint32_t(s.key), s.rank, s.merged & ~MORE);
    }

    // The smallest rank >= floor of the pair, and its merged id; NO_RANK if none.
    // Always inlined: GCC inlined the dense path only and called the rest; inlined whole,
    // random CJK + emoji went 2.12-2.30x -> 2.14-2.47x tiktoken on o200k, 2.76-2.91x ->
    // 2.82-2.97x on cl100k (four alternated rounds; UDHR within the noise).
    BP_ALWAYS_INLINE uint32_t rank_at_least(uint32_t left, uint32_t right, uint32_t floor,
                                            uint32_t* merged) const {
        uint32_t rank;
        bool more;
        if ((left | right) < DENSE) {
            if (dense_.empty()) return NO_RANK;
            const Dense& d = dense_[left * DENSE + right];
            if (d.rank == NO_RANK) return NO_RANK;
            rank = d.rank;
            *merged = d.merged & ~MORE;
            more = (d.merged & MORE) != 0;
        } else if (packed_) {
            if ((left | right) >= PACKED_ID_LIMIT) return NO_RANK;
            uint64_t pk = packed_key(left, right);
            uint64_t h = pair_hash(pk);
            if (!may_hold(h)) return NO_RANK;
            size_t i = h & mask_;
            uint64_t s;
            for (;; i = (i + 1) & mask_) {
                s = packed_slots_[i];
                if ((s >> 22) == pk) break;
                if (s == PACKED_EMPTY) return NO_RANK;
            }
            rank = uint32_t(s & PACKED_RANK);
            *merged = merged_of_rank(rank);
            more = (s & PACKED_MORE) != 0;
        } else {
            uint64_t h = pair_hash(key(left, right));
            if (!may_hold(h)) return NO_RANK;
            const Slot* slot = find_slot(key(left, right), h);
            if (!slot) return NO_RANK;
            rank = slot->rank;
            *merged = slot->merged & ~MORE;
            more = (slot->merged & MORE) != 0;
        }
        if (rank >= floor) return rank;
        if (!more) return NO_RANK;
        const std::vector<uint32_t>& ranks = later_.find(key(left, right))->second;
        auto it = std::lower_bound(ranks.begin(), ranks.end(), floor);
        return it == ranks.end() ? NO_RANK : *it;
    }

    // The merged id of a pair that is in the table.
    inline uint32_t merged_of(uint32_t left, uint32_t right) const {
        uint32_t merged = 0;
        rank_at_least(left, right, 0, &merged);
        return merged;
    }

    // Whether the filter lets a lookup of a hashed pair through to the slots (for tests: true
    // for every pair in the table, false for most others).
    bool may_hold(uint32_t left, uint32_t right) const {
        if ((left | right) < DENSE) return true;
        if (packed_) return (left | right) < PACKED_ID_LIMIT && may_hold(pair_hash(packed_key(left, right)));
        return may_hold(pair_hash(key(left, right)));
    }

    uint32_t max_rank() const { return max_rank_; }
    // Whether the hashed pairs sit in 8-byte slots (for tests).
    bool packed() const { return packed_; }
    size_t bytes() const {
        return slots_.capacity() * sizeof(Slot) + staged_.capacity() * sizeof(Slot) +
               packed_slots_.capacity() * sizeof(uint64_t) + dense_.capacity() * sizeof(Dense) +
               rank_merged_.capacity() * sizeof(uint32_t) + filter_.bytes();
    }

  private:
    struct Slot {
        uint64_t key;
        uint32_t rank;
        uint32_t merged;
    };
    struct Dense {
        uint32_t rank, merged;  // merged | MORE
    };
    static constexpr uint32_t DENSE = 256;
    static constexpr uint64_t EMPTY = ~0ULL;
    static constexpr uint32_t MORE = 0x80000000u;  // ids are < 2**31 (checked in Python)
    // packed slot: left (21 bits) | right (21) | MORE (1) | rank (21); all ones is empty, so an
    // id is at most 2**21 - 2
    static constexpr uint32_t PACKED_ID_LIMIT = (1u << 21) - 1;
    static constexpr uint64_t PACKED_RANK = (1ULL << 21) - 1;
    static constexpr uint64_t PACKED_MORE = 1ULL << 21;
    static constexpr uint64_t PACKED_EMPTY = ~0ULL;

    inline bool may_hold(uint64_t h) const { return filter_.may_hold(h); }
    // A pair key's hash, on the path of every merge: fold_mix rather than mix64. Slots and
    // filter spread as with mix64 on cl100k's and o200k's pairs (mean probe length, false
    // positives); one piece of repeated random letters (cl100k, 1,000 symbols): 13.9 -> 12.7
    // ns per character. The multiply alone (slot from its top bits) was 13.0 there but 16-18
    // at 16,000 symbols, against 14.0: keys a fixed step apart land a fixed step apart.
    static inline uint64_t pair_hash(uint64_t k) { return fold_mix(k); }

    // A hashed pair into the filter and its first free slot (packed: the low 22 bits of
    // `value` are the rank and the MORE flag).
    void place_packed(uint64_t pk, uint64_t value) {
        uint64_t h = pair_hash(pk);
        filter_.add(h);
        size_t i = h & mask_;
        while (packed_slots_[i] != PACKED_EMPTY) i = (i + 1) & mask_;
        packed_slots_[i] = (pk << 22) | value;
    }
    void place_slot(const Slot& entry) {
        uint64_t h = pair_hash(entry.key);
        filter_.add(h);
        size_t i = h & mask_;
        while (slots_[i].key != EMPTY) i = (i + 1) & mask_;
        slots_[i] = entry;
    }

    static inline uint64_t key(uint32_t left, uint32_t right) {
        return (uint64_t(left) << 32) | right;
    }
    static inline bool is_dense(uint64_t k) {
        return (uint32_t(k >> 32) | uint32_t(k)) < DENSE;
    }
    static inline uint64_t packed_key(uint32_t left, uint32_t right) {
        return (uint64_t(left) << 21) | right;
    }
    inline uint32_t merged_of_rank(uint32_t rank) const {
        return rank_merged_.empty() ? rank + offset_ : rank_merged_[rank];
    }

    // staged_ by (key, rank). When ids and ranks fit 21 bits, (left, right, rank) is one 63-bit
    // number, sorted by a stable LSD radix sort in 16-bit digits instead of std::sort: loading
    // cl100k 86-89 -> 73-75 ms, o200k 183-187 -> 162-168 ms (process time, best of 5).
    void sort_staged() {
        uint32_t top = 0;
        for (const Slot& e : staged_) top |= uint32_t(e.key >> 32) | uint32_t(e.key) | e.rank;
        if (top > PACKED_ID_LIMIT || staged_.size() < 4096) {
            std::sort(staged_.begin(), staged_.end(), [](const Slot& a, const Slot& b) {
                return a.key != b.key ? a.key < b.key : a.rank < b.rank;
            });
            return;
        }
        auto order = [](const Slot& e) {
            return (uint64_t(e.key >> 32) << 42) | (uint64_t(uint32_t(e.key)) << 21) | e.rank;
        };
        std::vector<Slot> other(staged_.size());
        std::vector<size_t> count(size_t(1) << 16);
        for (int d = 0; d < 4; ++d) {
            std::fill(count.begin(), count.end(), 0);
            for (const Slot& e : staged_) ++count[(order(e) >> (16 * d)) & 0xFFFF];
            if (count[(order(staged_[0]) >> (16 * d)) & 0xFFFF] == staged_.size()) continue;
            size_t sum = 0;
            for (size_t& c : count) {
                size_t here = c;
                c = sum;
                sum += here;
            }
            for (const Slot& e : staged_) other[count[(order(e) >> (16 * d)) & 0xFFFF]++] = e;
            staged_.swap(other);
        }
    }

    // Packed slots when every hashed pair's ids and rank fit and each lowest rank has one
    // merged id; merged = rank + offset_ when that holds for all, else rank_merged_.
    void choose_layout() {
        packed_ = false;
        rank_merged_.clear();
        bool fits = true, constant = true, first = true;
        uint32_t top = 0;  // the highest lowest-rank of a hashed pair
        for (size_t k = 0; k < staged_.size() && fits; ++k) {
            const Slot& e = staged_[k];
            if (is_dense(e.key) || (k > 0 && staged_[k - 1].key == e.key)) continue;
            fits = uint32_t(e.key >> 32) < PACKED_ID_LIMIT && uint32_t(e.key) < PACKED_ID_LIMIT &&
                   e.rank <= PACKED_RANK;
            top = std::max(top, e.rank);
            if (first) offset_ = e.merged - e.rank;
            constant &= e.merged - e.rank == offset_;
            first = false;
        }
        if (!fits) return;
        if (!constant) {
            rank_merged_.assign(size_t(top) + 1, NO_RANK);
            for (size_t k = 0; k < staged_.size(); ++k) {
                const Slot& e = staged_[k];
                if (is_dense(e.key) || (k > 0 && staged_[k - 1].key == e.key)) continue;
                uint32_t& m = rank_merged_[e.rank];
                if (m != NO_RANK && m != e.merged) {  // one rank, two merged ids
                    std::vector<uint32_t>().swap(rank_merged_);
                    return;
                }
                m = e.merged;
            }
        }
        packed_ = true;
    }
    void mark_more(uint64_t k) {
        if (is_dense(k)) {
            dense_[(k >> 32) * DENSE + uint32_t(k)].merged |= MORE;
        } else if (packed_) {
            uint64_t pk = packed_key(uint32_t(k >> 32), uint32_t(k));
            size_t i = pair_hash(pk) & mask_;
            while ((packed_slots_[i] >> 22) != pk) i = (i + 1) & mask_;
            packed_slots_[i] |= PACKED_MORE;
        } else {
            find_slot(k)->merged |= MORE;
        }
    }
    inline Slot* find_slot(uint64_t k) const { return find_slot(k, pair_hash(k)); }
    inline Slot* find_slot(uint64_t k, uint64_t h) const {
        if (slots_.empty()) return nullptr;
        size_t i = h & mask_;
        while (slots_[i].key != k) {
            if (slots_[i].key == EMPTY) return nullptr;
            i = (i + 1) & mask_;
        }
        return const_cast<Slot*>(&slots_[i]);
    }

    std::vector<Slot, HugePageAllocator<Slot>> slots_;
    std::vector<Slot> staged_;
    std::vector<uint64_t, HugePageAllocator<uint64_t>> packed_slots_;
    std::vector<Dense> dense_;
    std::vector<uint32_t> rank_merged_;  // packed layout, when merged - rank varies
    HashFilter filter_;  // the hashed pairs (before build(): none)
    bool packed_ = false;
    uint32_t offset_ = 0;                // packed layout: merged = rank + offset_
    size_t mask_ = 0;
    uint32_t max_rank_ = 0;
    std::unordered_map<uint64_t, std::vector<uint32_t>> later_;
    std::vector<uint64_t> makers_;
};

}  // namespace bp
