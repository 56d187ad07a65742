// The pair table: (left id, right id) -> (rank, merged id), for rank-based merging.
//
// Keyed by `left << 32 | right` in one open-addressing table of 16-byte slots, at most half
// full: 1.5-3x fewer ns per random lookup than std::unordered_map in a micro-benchmark with
// 233K pairs (cl100k's size), since a probe reads flat memory instead of chasing a node.
//
// A pair that a merge list learns twice keeps all its ranks: keeping only the first was wrong
// (hypothesis found lists where a pair reappears after a later merge rebuilds one of its
// parts). The slot holds the lowest rank; the others, rare, sit in a side map and are found by
// `rank_at_least`, which replay ("monotonic") merging asks with a floor above the rank it has
// just applied.
//
// Use: add() every pair, then build() once, then look up from any number of threads.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "compat.hpp"
#include "hashing.hpp"

namespace bp {

static const uint32_t NO_RANK = 0xFFFFFFFFu;

class PairTable {
  public:
    void add(uint32_t left, uint32_t right, uint32_t rank, uint32_t merged) {
        staged_.push_back({key(left, right), rank, merged});
        max_rank_ = std::max(max_rank_, rank);
    }

    // Inserts the staged pairs in the order added, loading the slot of the pair 16 ahead
    // early; a pair added again leaves its lowest rank in the slot and the others, sorted, in
    // later_. Sorting the staged pairs first (to meet a pair's ranks together) took 15-20 ms
    // of cl100k's 233K derived pairs, most of the table's build.
    void reserve(size_t pairs) { staged_.reserve(pairs); }

    void build() {
        size_t size = 16;
        while (size < 2 * staged_.size()) size <<= 1;
        slots_.assign(size, Slot{EMPTY, 0, 0});
        mask_ = size - 1;
        size_t count = staged_.size();
        for (size_t k = 0; k < count; ++k) {
            if (k + AHEAD < count) BP_PREFETCH(&slots_[mix64(staged_[k + AHEAD].key) & mask_]);
            const Slot& entry = staged_[k];
            size_t i = mix64(entry.key) & mask_;
            while (slots_[i].key != EMPTY && slots_[i].key != entry.key) i = (i + 1) & mask_;
            Slot& slot = slots_[i];
            if (slot.key == EMPTY) {
                slot = entry;
                continue;
            }
            std::vector<uint32_t>& later = later_[entry.key];
            if (entry.rank < slot.rank) {
                later.push_back(slot.rank);
                slot.rank = entry.rank;
                slot.merged = entry.merged | MORE;
            } else {
                later.push_back(entry.rank);
                slot.merged |= MORE;
            }
        }
        for (auto& item : later_) std::sort(item.second.begin(), item.second.end());
        std::vector<Slot>().swap(staged_);
    }

    // The smallest rank >= floor of the pair, and its merged id; NO_RANK if none.
    inline uint32_t rank_at_least(uint32_t left, uint32_t right, uint32_t floor,
                                  uint32_t* merged) const {
        const Slot* slot = find_slot(key(left, right));
        if (!slot) return NO_RANK;
        *merged = slot->merged & ~MORE;
        if (slot->rank >= floor) return slot->rank;
        if (!(slot->merged & MORE)) return NO_RANK;
        const std::vector<uint32_t>& ranks = later_.find(slot->key)->second;
        auto it = std::lower_bound(ranks.begin(), ranks.end(), floor);
        return it == ranks.end() ? NO_RANK : *it;
    }

    // Starts loading the pair's slot, so that several lookups wait on memory together.
    inline void prefetch(uint32_t left, uint32_t right) const {
        if (!slots_.empty()) BP_PREFETCH(&slots_[mix64(key(left, right)) & mask_]);
    }

    // The merged id of a pair that is in the table.
    inline uint32_t merged_of(uint32_t left, uint32_t right) const {
        return find_slot(key(left, right))->merged & ~MORE;
    }

    uint32_t max_rank() const { return max_rank_; }
    size_t bytes() const {
        return slots_.capacity() * sizeof(Slot) + staged_.capacity() * sizeof(Slot);
    }

  private:
    struct Slot {
        uint64_t key;
        uint32_t rank;
        uint32_t merged;
    };
    static constexpr uint64_t EMPTY = ~0ULL;
    static constexpr uint32_t MORE = 0x80000000u;  // ids are < 2**31 (checked in Python)
    static constexpr size_t AHEAD = 16;  // untuned

    static inline uint64_t key(uint32_t left, uint32_t right) {
        return (uint64_t(left) << 32) | right;
    }
    inline Slot* find_slot(uint64_t k) const {
        if (slots_.empty()) return nullptr;
        size_t i = mix64(k) & mask_;
        while (slots_[i].key != k) {
            if (slots_[i].key == EMPTY) return nullptr;
            i = (i + 1) & mask_;
        }
        return const_cast<Slot*>(&slots_[i]);
    }

    std::vector<Slot> slots_, staged_;
    size_t mask_ = 0;
    uint32_t max_rank_ = 0;
    std::unordered_map<uint64_t, std::vector<uint32_t>> later_;
};

}  // namespace bp
