// Rank-based merging of one piece: initial symbols in, final ids out.
//
// Python twin: bytepair.reference.merge_by_rank (lowest (rank, position) first; with
// `monotonic`, a pair only at a rank above the one just applied, which is exactly replaying a
// merge list in order, reference.encode_piece).
//
// Three strategies, which pick the same merge at every step (the tests cross both thresholds,
// for every rule):
// - Short pieces (<= SHORT_PIECE symbols, nearly all of them): tiktoken's O(n^2) scan over a
//   small array (`merge_short`).
// - Long ones: a linked list with a binary heap of (rank, position), O(n log n)
//   (`merge_long_heap`).
// - Huge ones (BUCKET_PIECE symbols or more: a 1 MB run of one character, a whole text with
//   no pattern): one bucket of positions per rank, walked from the lowest rank with work left,
//   O(n + ranks) (`merge_long_buckets`): 7x less time than the heap on 'x' * 2**20 with
//   cl100k, so such a run costs about what 1 MB of prose does.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <vector>

#include "compat.hpp"
#include "pair_table.hpp"

namespace bp {

// Symbols up to which a piece is merged by the O(n^2) scan; above it, the heap. Pieces of
// prose are a few symbols; 64 keeps every ordinary word and number on the scan. Untuned.
static const size_t SHORT_PIECE = 64;
// Symbols from which a piece is merged by rank buckets (when the vocabulary has fewer than
// 4x as many ranks as the piece has symbols, since the buckets cost O(ranks) to set up).
// Evidence: 7x less time than the heap on 'x' * 2**20 with cl100k; 2**16 is untuned beyond
// keeping ordinary long pieces (code lines, URLs) on the heap.
static const size_t BUCKET_PIECE = size_t(1) << 16;

// One thread's merging buffers, reused from piece to piece (allocation-free when warm).
// `symbols` holds the piece's ids: the initial symbols before a merge, the result after.
struct MergeScratch {
    std::vector<uint32_t> symbols, ranks, merged;  // short pieces: ranks, merged ids per pair
    std::vector<uint32_t> next, prev;              // long pieces: the linked list
    std::vector<uint64_t> heap;

    size_t bytes() const {
        return (symbols.capacity() + ranks.capacity() + merged.capacity() + next.capacity() +
                prev.capacity()) * sizeof(uint32_t) + heap.capacity() * sizeof(uint64_t);
    }
    // Gives back buffers grown past `keep` elements (a huge piece's), keeping small ones warm.
    void trim(size_t keep) noexcept {
        if (symbols.capacity() > keep) std::vector<uint32_t>().swap(symbols);
        if (ranks.capacity() > keep) std::vector<uint32_t>().swap(ranks);
        if (merged.capacity() > keep) std::vector<uint32_t>().swap(merged);
        if (next.capacity() > keep) std::vector<uint32_t>().swap(next);
        if (prev.capacity() > keep) std::vector<uint32_t>().swap(prev);
        if (heap.capacity() > keep) std::vector<uint64_t>().swap(heap);
    }
};

// Lowest (rank, position) first over a small array: tiktoken's byte_pair_merge, O(n^2).
inline void merge_short(const PairTable& pairs, bool monotonic, MergeScratch& w) {
    std::vector<uint32_t>& ids = w.symbols;
    std::vector<uint32_t>& ranks = w.ranks;  // ranks[i]: the pair (ids[i], ids[i+1])
    std::vector<uint32_t>& merged = w.merged;
    size_t n = ids.size();
    if (n < 2) return;
    ranks.resize(n);
    merged.resize(n);
    // a piece that reaches this point is seldom in any CPU cache: ask for all its pairs at
    // once rather than waiting for each in turn
    for (size_t i = 0; i + 1 < n; ++i) pairs.prefetch(ids[i], ids[i + 1]);
    for (size_t i = 0; i + 1 < n; ++i) ranks[i] = pairs.rank_at_least(ids[i], ids[i + 1], 0, &merged[i]);
    ranks[n - 1] = NO_RANK;
    while (n > 1) {
        size_t best = 0;
        uint32_t best_rank = ranks[0];
        for (size_t i = 1; i + 1 < n; ++i)
            if (ranks[i] < best_rank) {
                best_rank = ranks[i];
                best = i;
            }
        if (best_rank == NO_RANK) break;
        ids[best] = merged[best];
        // drop symbol best+1 and the pair that started at it
        size_t tail = (n - best - 2) * sizeof(uint32_t);
        std::memmove(ids.data() + best + 1, ids.data() + best + 2, tail);
        std::memmove(ranks.data() + best + 1, ranks.data() + best + 2, tail);
        std::memmove(merged.data() + best + 1, merged.data() + best + 2, tail);
        --n;
        uint32_t floor = monotonic ? best_rank + 1 : 0;  // replay has done rank best_rank
        ranks[best] = best + 1 < n ? pairs.rank_at_least(ids[best], ids[best + 1], floor, &merged[best]) : NO_RANK;
        if (best > 0) ranks[best - 1] = pairs.rank_at_least(ids[best - 1], ids[best], floor, &merged[best - 1]);
    }
    ids.resize(n);
}

// Long pieces: a linked list over positions; rank[i] is the rank of the pair that starts at i
// (NO_RANK if none), so a queued (rank, position) entry is stale when they differ.
struct LongPiece {
    const PairTable& pairs;
    bool monotonic;
    std::vector<uint32_t>& ids;
    std::vector<uint32_t>& rank;
    std::vector<uint32_t>& next;
    std::vector<uint32_t>& prev;
    uint32_t n;
    static const uint32_t NONE = 0xFFFFFFFFu;

    LongPiece(const PairTable& table, bool monotonic_, MergeScratch& w)
        : pairs(table), monotonic(monotonic_), ids(w.symbols), rank(w.ranks), next(w.next),
          prev(w.prev), n(uint32_t(w.symbols.size())) {
        rank.assign(n, NO_RANK);
        next.resize(n);
        prev.resize(n);
        uint32_t unused;
        for (uint32_t i = 0; i < n; ++i) {
            next[i] = i + 1;
            prev[i] = i ? i - 1 : NONE;
            if (i + 1 < n) rank[i] = pairs.rank_at_least(ids[i], ids[i + 1], 0, &unused);
        }
    }
    // Merges the pair at i (of rank r); calls queue(rank, position) for the two new pairs.
    template <class Queue> inline void merge_at(uint32_t i, uint32_t r, Queue&& queue) {
        uint32_t j = next[i], k = next[j], unused;
        ids[i] = pairs.merged_of(ids[i], ids[j]);
        next[i] = k;
        if (k < n) prev[k] = i;
        rank[j] = NO_RANK;
        uint32_t floor = monotonic ? r + 1 : 0;  // replay has done rank r
        rank[i] = k < n ? pairs.rank_at_least(ids[i], ids[k], floor, &unused) : NO_RANK;
        if (rank[i] != NO_RANK) queue(rank[i], i);
        uint32_t p = prev[i];
        if (p != NONE) {
            rank[p] = pairs.rank_at_least(ids[p], ids[i], floor, &unused);
            if (rank[p] != NO_RANK) queue(rank[p], p);
        }
    }
    void collect() {
        size_t out = 0;
        for (uint32_t i = 0; i < n; i = next[i]) ids[out++] = ids[i];
        ids.resize(out);
    }
};

// Any rule: a binary heap of (rank << 32 | position), lowest first. O(n log n).
inline void merge_long_heap(const PairTable& pairs, bool monotonic, MergeScratch& w) {
    LongPiece piece(pairs, monotonic, w);
    std::vector<uint64_t>& heap = w.heap;
    heap.clear();
    for (uint32_t i = 0; i < piece.n; ++i)
        if (piece.rank[i] != NO_RANK) heap.push_back((uint64_t(piece.rank[i]) << 32) | i);
    std::greater<uint64_t> later;
    std::make_heap(heap.begin(), heap.end(), later);
    auto queue = [&](uint32_t r, uint32_t i) {
        heap.push_back((uint64_t(r) << 32) | i);
        std::push_heap(heap.begin(), heap.end(), later);
    };
    while (!heap.empty()) {
        std::pop_heap(heap.begin(), heap.end(), later);
        uint64_t top = heap.back();
        heap.pop_back();
        uint32_t r = uint32_t(top >> 32), i = uint32_t(top);
        if (piece.rank[i] == r) piece.merge_at(i, r, queue);
    }
    piece.collect();
}

// Huge pieces (a 1 MB run of one character): one bucket of positions per rank instead of the
// heap, each walked left to right, and a pointer to the lowest rank with work left. A merge at
// rank r never makes a pair of rank r (the new pair's value is longer than the value just
// made, and in replay it ranks above r), so the bucket being walked never grows. Replay only
// makes higher ranks; tiktoken's and HF's rules can make a lower one, and then the walk goes
// down to it and later resumes the bucket it left where it stopped. A bucket that got
// positions out of order is sorted before it is walked. O(n + ranks) plus those sorts; 7x less
// time than the heap on 'x' * 2**20 with cl100k, 2.5x on 10.8M characters of WikiText-2 with
// 300 replayed merges (the heap's sift-downs miss the cache at every level).
inline void merge_long_buckets(const PairTable& pairs, bool monotonic, MergeScratch& w) {
    LongPiece piece(pairs, monotonic, w);
    const size_t ranks = size_t(pairs.max_rank()) + 1;
    std::vector<std::vector<uint32_t>> buckets(ranks);
    std::vector<uint32_t> walked(ranks, 0);               // positions before it are done
    std::vector<bool> unsorted(ranks, false);
    std::vector<uint64_t> has_work((ranks + 63) / 64, 0);  // bit r: bucket r has positions left
    size_t lowest_new = ranks;
    auto queue = [&](uint32_t r, uint32_t i) {
        std::vector<uint32_t>& bucket = buckets[r];
        if (bucket.size() > walked[r] && bucket.back() > i) unsorted[r] = true;
        bucket.push_back(i);
        has_work[r >> 6] |= 1ULL << (r & 63);
        lowest_new = std::min(lowest_new, size_t(r));
    };
    auto first_with_work = [&](size_t r) {  // the lowest rank >= r with work left, or `ranks`
        size_t word = r >> 6;
        if (word >= has_work.size()) return ranks;
        uint64_t bits = has_work[word] & (~0ULL << (r & 63));
        while (!bits) {
            if (++word == has_work.size()) return ranks;
            bits = has_work[word];
        }
        return (word << 6) + size_t(count_trailing_zeros(bits));
    };
    for (uint32_t i = 0; i < piece.n; ++i)
        if (piece.rank[i] != NO_RANK) queue(piece.rank[i], i);
    for (size_t r = first_with_work(0); r < ranks;) {
        std::vector<uint32_t>& bucket = buckets[r];
        if (unsorted[r]) {
            std::sort(bucket.begin() + walked[r], bucket.end());
            unsorted[r] = false;
        }
        lowest_new = ranks;
        while (walked[r] < bucket.size() && lowest_new > r) {
            uint32_t i = bucket[walked[r]++];
            if (piece.rank[i] == r) piece.merge_at(i, uint32_t(r), queue);
        }
        if (walked[r] == bucket.size()) {
            std::vector<uint32_t>().swap(bucket);
            walked[r] = 0;
            has_work[r >> 6] &= ~(1ULL << (r & 63));
        }
        r = lowest_new < r ? lowest_new : first_with_work(r);
    }
    piece.collect();
}

inline void merge_long(const PairTable& pairs, bool monotonic, MergeScratch& w) {
    size_t n = w.symbols.size();
    if (n >= 0xFFFFFFFFu) throw std::overflow_error("a piece of 2**32 symbols or more; encode it in parts");
    // the buckets cost O(ranks) to set up: worth it only for pieces much longer than that
    if (n >= BUCKET_PIECE && pairs.max_rank() < 4 * n) merge_long_buckets(pairs, monotonic, w);
    else merge_long_heap(pairs, monotonic, w);
}

// Merges w.symbols in place, choosing the strategy by length.
inline void merge_symbols(const PairTable& pairs, bool monotonic, MergeScratch& w) {
    if (w.symbols.size() > SHORT_PIECE) merge_long(pairs, monotonic, w);
    else if (w.symbols.size() > 1) merge_short(pairs, monotonic, w);
}

}  // namespace bp
