// Rank-based merging of one piece: initial symbols in, final ids out.
//
// Python twin: bytepair.reference.merge_by_rank (lowest (rank, position) first; with
// `monotonic`, a pair only at a rank above the one just applied, which is exactly replaying a
// merge list in order, reference.encode_piece).
//
// Three strategies, which give the same ids (the tests cross each threshold, for every rule):
// - Short pieces (<= SHORT_PIECE symbols, nearly all of them): tiktoken's O(n^2) scan over a
//   small array (`merge_short`).
// - Longer ones under tiktoken's and HF's rule: chunks of CHUNK symbols, each merged by the
//   scan and joined at seams that are checked (`merge_chunked`): O(n); cl100k, one piece of
//   1,000-64,000 symbols: 2-3 ns per character on 'x' * n (a chunk equal to the one before is
//   not merged again); on random letters 27-30 for a new text each call (its pairs of tokens
//   miss the CPU caches), 12-27 for one text encoded again and again (its pairs and seams stay
//   cached).
// - Longer ones in replay, and any piece whose seams keep failing: a linked list with one
//   bucket of positions per rank that occurs, O(n + merges + d log d) for d distinct ranks
//   (`merge_long`): about 20 ns per character on 'x' * n, 30-47 on random letters.
// (One process, best of 5 by CPU time; bench/run.py --only pieces has the ratios to the peers.)
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

// Symbols up to which a piece is merged by the O(n^2) scan; above it, the buckets. Pieces of
// prose are a few symbols; 64 keeps every ordinary word and number on the scan. Untuned.
static const size_t SHORT_PIECE = 64;

// The buckets of `merge_long`, kept in a thread's scratch so that a warm one allocates nothing.
struct RankBuckets {
    struct Bucket {
        uint32_t rank;
        uint32_t cursor;  // the first node not yet walked, or NIL
        uint32_t tail;    // the last node appended
        bool unsorted;    // the unwalked nodes are out of position order
        bool queued;      // the rank is in `order`
    };
    struct Node {
        uint32_t position, next;
    };
    static const uint32_t NIL = 0xFFFFFFFFu;
    std::vector<Bucket> buckets;
    std::vector<Node> nodes;      // only grows: its elements are written before read
    std::vector<uint32_t> slots;  // rank -> bucket index + 1 (0: empty); a power of two long
    std::vector<uint32_t> order;  // min-heap of queued ranks
    std::vector<uint32_t> sorting;

    void reset() {
        buckets.clear();
        order.clear();
        slots.assign(256, 0);
    }
    static inline size_t slot_of(uint32_t rank, size_t mask) { return (uint32_t(rank * 0x9E3779B1u) >> 7) & mask; }
    // The index of the rank's bucket, added (empty) if the rank has none yet.
    inline uint32_t index_of(uint32_t rank) {
        size_t mask = slots.size() - 1;
        for (size_t k = slot_of(rank, mask);; k = (k + 1) & mask) {
            uint32_t b = slots[k];
            if (b == 0) {
                buckets.push_back({rank, NIL, NIL, false, false});
                if (2 * buckets.size() > slots.size()) rehash();
                else slots[k] = uint32_t(buckets.size());
                return uint32_t(buckets.size() - 1);
            }
            if (buckets[b - 1].rank == rank) return b - 1;
        }
    }
    void rehash() {
        slots.assign(slots.size() * 2, 0);
        size_t mask = slots.size() - 1;
        for (size_t b = 0; b < buckets.size(); ++b) {
            size_t k = slot_of(buckets[b].rank, mask);
            while (slots[k]) k = (k + 1) & mask;
            slots[k] = uint32_t(b + 1);
        }
    }
    size_t bytes() const {
        return buckets.capacity() * sizeof(Bucket) + nodes.capacity() * sizeof(Node) +
               (slots.capacity() + order.capacity() + sorting.capacity()) * sizeof(uint32_t);
    }
    void trim(size_t keep) noexcept {
        if (buckets.capacity() > keep) std::vector<Bucket>().swap(buckets);
        if (nodes.capacity() > 3 * keep) std::vector<Node>().swap(nodes);  // 3 per symbol
        if (slots.capacity() > keep) std::vector<uint32_t>().swap(slots);
        if (order.capacity() > keep) std::vector<uint32_t>().swap(order);
        if (sorting.capacity() > keep) std::vector<uint32_t>().swap(sorting);
    }
};

// An element of the O(n^2) scan: a symbol and the pair that starts at it (`merge_array`).
struct ShortSymbol {
    static const bool spans = false;
    uint32_t id, rank, merged;
};
// The same, with how many initial symbols the id covers: the chunked merge needs to know
// where its last token starts.
struct SpanSymbol {
    static const bool spans = true;
    uint32_t id, rank, merged, length;
};

// Seams of the chunked merge already checked (seam_holds), for one pair table.
struct SeamMemo {
    static const size_t SIZE = 256;
    const PairTable* table = nullptr;
    uint64_t keys[SIZE];  // (left id << 32 | right id) + 1; 0: empty
    bool held[SIZE];
    void clear(const PairTable* for_table) {
        table = for_table;
        std::fill(keys, keys + SIZE, 0);
    }
};

// A piece's symbols: resized for each new piece and written before they are read.
using SymbolBuffer = std::vector<uint32_t, UnsetAllocator<uint32_t>>;

// One thread's merging buffers, reused from piece to piece (allocation-free when warm).
// `symbols` holds the piece's ids: the initial symbols before a merge, the result after.
struct MergeScratch {
    SymbolBuffer symbols;
    std::vector<uint32_t> ranks, merged;           // long pieces: ranks, merged ids per pair
    std::vector<uint32_t> next, prev;              // long pieces: the linked list
    RankBuckets buckets;                           // long pieces: what merges next
    std::vector<ShortSymbol> short_symbols;        // short pieces
    std::vector<SpanSymbol> chunk, seam, repair, done;  // long pieces in chunks (merge_chunked)
    SeamMemo seams;

    size_t bytes() const {
        return (symbols.capacity() + ranks.capacity() + merged.capacity() + next.capacity() +
                prev.capacity()) * sizeof(uint32_t) + short_symbols.capacity() * sizeof(ShortSymbol) +
               (chunk.capacity() + seam.capacity() + repair.capacity() + done.capacity()) * sizeof(SpanSymbol) + buckets.bytes();
    }
    // Gives back buffers grown past `keep` elements (a huge piece's), keeping small ones warm.
    void trim(size_t keep) noexcept {
        if (symbols.capacity() > keep) SymbolBuffer().swap(symbols);
        if (ranks.capacity() > keep) std::vector<uint32_t>().swap(ranks);
        if (merged.capacity() > keep) std::vector<uint32_t>().swap(merged);
        if (next.capacity() > keep) std::vector<uint32_t>().swap(next);
        if (prev.capacity() > keep) std::vector<uint32_t>().swap(prev);
        if (short_symbols.capacity() > keep) std::vector<ShortSymbol>().swap(short_symbols);
        if (chunk.capacity() > keep) std::vector<SpanSymbol>().swap(chunk);
        if (seam.capacity() > keep) std::vector<SpanSymbol>().swap(seam);
        if (repair.capacity() > keep) std::vector<SpanSymbol>().swap(repair);
        if (done.capacity() > keep) std::vector<SpanSymbol>().swap(done);
        buckets.trim(keep);
    }
};

// Moves the `count` elements after s[1] down by one, over s[1]: in blocks of four through
// registers, the rest one by one, not a memmove call per merge of a few elements. One piece of
// random letters (cl100k), a new text each call: 33.7 -> 32.4 ns per character at 1,000, 32.6
// -> 31.0 at 64,000; UDHR and random CJK + emoji within the noise.
template <class Element>
BP_ALWAYS_INLINE void drop_next(Element* s, size_t count) {
    Element* to = s + 1;
    for (; count >= 4; count -= 4, to += 4) {
        Element block[4];
        std::memcpy(block, to + 1, sizeof(block));
        std::memcpy(to, block, sizeof(block));
    }
    switch (count) {
        case 3: to[0] = to[1]; to[1] = to[2]; to[2] = to[3]; break;
        case 2: to[0] = to[1]; to[1] = to[2]; break;
        case 1: to[0] = to[1]; break;
        default: break;
    }
}

// Lowest (rank, position) first over a small array: tiktoken's byte_pair_merge, O(n^2).
// Merges the n symbols `ids` into `s` (room for n elements) and returns how many are left;
// `last_pair`, if given, gets the last pair merged (left << 32 | right).
// Each symbol with its pair's rank and merged id in one element, so that a merge moves the
// tail with one memmove, not three (the three were 5.5% of encoding time on random CJK text).
// Always inlined: merge_short calling it out of line made random CJK text 6% slower.
template <class Element>
BP_ALWAYS_INLINE size_t merge_array(const PairTable& pairs, bool monotonic, const uint32_t* ids, size_t n, Element* s,
                                     uint64_t* last_pair = nullptr) {
    if (n == 0) return 0;
    for (size_t i = 0; i + 1 < n; ++i) {
        s[i].id = ids[i];
        s[i].rank = pairs.rank_at_least(ids[i], ids[i + 1], 0, &s[i].merged);
        if constexpr (Element::spans) s[i].length = 1;
    }
    s[n - 1].id = ids[n - 1];
    s[n - 1].rank = NO_RANK;
    if constexpr (Element::spans) s[n - 1].length = 1;
    while (n > 1) {
        size_t best = 0;
        uint32_t best_rank = s[0].rank;
        for (size_t i = 1; i + 1 < n; ++i)
            if (s[i].rank < best_rank) {
                best_rank = s[i].rank;
                best = i;
            }
        if (best_rank == NO_RANK) break;
        if (last_pair) *last_pair = (uint64_t(s[best].id) << 32) | s[best + 1].id;
        s[best].id = s[best].merged;
        if constexpr (Element::spans) s[best].length += s[best + 1].length;
        // drop symbol best+1 and the pair that started at it
        drop_next(s + best, n - best - 2);
        --n;
        uint32_t floor = monotonic ? best_rank + 1 : 0;  // replay has done rank best_rank
        s[best].rank = best + 1 < n ? pairs.rank_at_least(s[best].id, s[best + 1].id, floor, &s[best].merged) : NO_RANK;
        if (best > 0) s[best - 1].rank = pairs.rank_at_least(s[best - 1].id, s[best].id, floor, &s[best - 1].merged);
    }
    return n;
}

inline void merge_short(const PairTable& pairs, bool monotonic, MergeScratch& w) {
    SymbolBuffer& ids = w.symbols;
    if (ids.size() < 2) return;
    if (w.short_symbols.size() < ids.size()) w.short_symbols.resize(ids.size());
    ShortSymbol* s = w.short_symbols.data();
    size_t n = merge_array(pairs, monotonic, ids.data(), ids.size(), s);
    for (size_t i = 0; i < n; ++i) ids[i] = s[i].id;
    ids.resize(n);
}

// Long pieces: a linked list over positions; rank[i] is the rank of the pair that starts at i
// (NO_RANK if none) and merged[i] the id it merges into, so a queued (rank, position) entry is
// stale when rank[i] differs and a merge needs no second look-up.
struct LongPiece {
    const PairTable& pairs;
    bool monotonic;
    SymbolBuffer& ids;
    std::vector<uint32_t>& rank;
    std::vector<uint32_t>& merged;
    std::vector<uint32_t>& next;
    std::vector<uint32_t>& prev;
    uint32_t n;
    static const uint32_t NONE = 0xFFFFFFFFu;

    LongPiece(const PairTable& table, bool monotonic_, MergeScratch& w)
        : pairs(table), monotonic(monotonic_), ids(w.symbols), rank(w.ranks), merged(w.merged),
          next(w.next), prev(w.prev), n(uint32_t(w.symbols.size())) {
        rank.resize(n);
        merged.resize(n);
        next.resize(n);
        prev.resize(n);
        for (uint32_t i = 0; i < n; ++i) {
            next[i] = i + 1;
            prev[i] = i ? i - 1 : NONE;
            rank[i] = i + 1 < n ? pairs.rank_at_least(ids[i], ids[i + 1], 0, &merged[i]) : NO_RANK;
        }
    }
    // Merges the pair at i (of rank r); calls queue(rank, position) for the two new pairs.
    template <class Queue> inline void merge_at(uint32_t i, uint32_t r, Queue&& queue) {
        uint32_t j = next[i], k = next[j];
        ids[i] = merged[i];
        next[i] = k;
        if (k < n) prev[k] = i;
        rank[j] = NO_RANK;
        uint32_t floor = monotonic ? r + 1 : 0;  // replay has done rank r
        rank[i] = k < n ? pairs.rank_at_least(ids[i], ids[k], floor, &merged[i]) : NO_RANK;
        if (rank[i] != NO_RANK) queue(rank[i], i);
        uint32_t p = prev[i];
        if (p != NONE) {
            rank[p] = pairs.rank_at_least(ids[p], ids[i], floor, &merged[p]);
            if (rank[p] != NO_RANK) queue(rank[p], p);
        }
    }
    void collect() {
        size_t out = 0;
        for (uint32_t i = 0; i < n; i = next[i]) ids[out++] = ids[i];
        ids.resize(out);
    }
};

// Every long piece: one bucket of positions per rank that occurs in the piece, each walked left
// to right, and a small heap of the ranks whose bucket has work. A merge at rank r never makes a
// pair of rank r (the new pair's value is longer than the value just made, and in replay it
// ranks above r), so the bucket being walked never grows. Replay only makes higher ranks;
// tiktoken's and HF's rules can make a lower one, and then the walk goes down to it and later
// resumes the bucket it left where it stopped. A bucket that got positions out of order is
// sorted before it is walked. The buckets are linked lists in one pool of nodes and a rank
// finds its bucket through a small open-addressing table, so nothing costs O(vocabulary) and
// nothing is allocated per bucket: O(n + merges + d log d) for d distinct ranks, plus those
// sorts.
//
// Evidence (cl100k, tiktoken's rule, one piece): 'x' * n at 1,000-64,000 symbols took 140-220 ns
// per character with a binary heap of (rank, position) entries, whose sift-downs were half the
// time; the earlier dense variant (an array of buckets over all 100K ranks) was 35 ns from 2**16
// symbols but cost O(ranks) to set up, so shorter pieces stayed on the heap. Tried and kept:
// the merged id stored beside each rank (a merge looked its pair up twice). Tried and dropped:
// loading the pairs of the next 8 merges early. It once made random letters about 1.4x
// faster, when cl100k's pairs took 32 MB; by the packed table and its filter the compiler had
// come to delete those loads, and made real again they were slower (replay of one piece of
// 64,000 random letters, a 4,096-token vocabulary: 0.46 ms against 0.38; bench/RESULTS.md,
// "Prefetches that were not there").

// `last_pair`, if not null, gets the last pair merged (left << 32 | right), as merge_array's.
inline void merge_long(const PairTable& pairs, bool monotonic, MergeScratch& w, uint64_t* last_pair) {
    size_t n = w.symbols.size();
    if (n >= 0xFFFFFFFFu / 4) throw std::overflow_error("a piece of 2**30 symbols or more; encode it in parts");
    LongPiece piece(pairs, monotonic, w);
    RankBuckets& q = w.buckets;
    q.reset();
    // every pair queued: at most n - 1 at first and two per merge; sized once, never moved
    if (q.nodes.size() < 3 * n) q.nodes.resize(3 * n);
    RankBuckets::Node* nodes = q.nodes.data();
    uint32_t used = 0;
    std::greater<uint32_t> later;
    uint32_t lowest_new = NO_RANK;
    uint32_t last_rank = NO_RANK, last_bucket = 0;  // runs of one rank skip the table
    auto queue = [&](uint32_t r, uint32_t i) {
        if (r != last_rank) {
            last_bucket = q.index_of(r);
            last_rank = r;
        }
        RankBuckets::Bucket& b = q.buckets[last_bucket];
        uint32_t node = used++;
        nodes[node] = {i, RankBuckets::NIL};
        if (b.cursor == RankBuckets::NIL) {
            b.cursor = node;
        } else {
            nodes[b.tail].next = node;
            if (nodes[b.tail].position > i) b.unsorted = true;
        }
        b.tail = node;
        if (!b.queued) {
            b.queued = true;
            q.order.push_back(r);
            std::push_heap(q.order.begin(), q.order.end(), later);
        }
        if (r < lowest_new) lowest_new = r;
    };
    for (uint32_t i = 0; i < piece.n; ++i)
        if (piece.rank[i] != NO_RANK) queue(piece.rank[i], i);
    while (!q.order.empty()) {
        uint32_t r = q.order.front();
        uint32_t index = q.index_of(r);
        RankBuckets::Bucket* b = &q.buckets[index];
        if (b->cursor == RankBuckets::NIL) {  // done: drop the rank until it gets work again
            std::pop_heap(q.order.begin(), q.order.end(), later);
            q.order.pop_back();
            b->queued = false;
            continue;
        }
        if (b->unsorted) {  // sort the positions left to walk, in place along the list
            q.sorting.clear();
            for (uint32_t k = b->cursor; k != RankBuckets::NIL; k = nodes[k].next) q.sorting.push_back(nodes[k].position);
            std::sort(q.sorting.begin(), q.sorting.end());
            size_t at = 0;
            for (uint32_t k = b->cursor; k != RankBuckets::NIL; k = nodes[k].next) nodes[k].position = q.sorting[at++];
            b->unsorted = false;
        }
        lowest_new = NO_RANK;
        // a merge never queues rank r itself, so the cursor is this loop's alone until it
        // stops; `queue` may add buckets and move them, so it is written back through `index`
        uint32_t cursor = b->cursor;
        while (cursor != RankBuckets::NIL && lowest_new > r) {
            uint32_t i = nodes[cursor].position;
            cursor = nodes[cursor].next;
            if (piece.rank[i] != r) continue;
            if (last_pair) *last_pair = (uint64_t(piece.ids[i]) << 32) | piece.ids[piece.next[i]];
            piece.merge_at(i, r, queue);
        }
        q.buckets[index].cursor = cursor;
    }
    piece.collect();
}

inline void merge_long(const PairTable& pairs, bool monotonic, MergeScratch& w) {
    merge_long(pairs, monotonic, w, nullptr);
}

// Long pieces under tiktoken's and HF's rule (the lowest (rank, position) first, no replay
// order), in chunks of `Chunk` symbols: each chunk merged alone by the scan, then joined to
// the ids before it. Why that is exact: the ids the rule gives for a text stay its ids when
// cut between two of them (no merge crossed the cut), and two such sequences join into one
// whenever their seam, the last id of one and the first of the other merged alone, stays those
// two ids (the whole's merges are then the two parts' merges interleaved); this is the bpe
// crate's argument (github/rust-gems, crates/bpe/README.md, corollaries II and III). A seam
// that merges otherwise gives its left id back to the chunk, which is merged again.
// Replay (`monotonic`) orders merges by the last rank applied, which no part knows, so it
// stays on merge_long; so does a piece whose seams keep failing (false: a window past
// 8 chunks; w.symbols is then untouched).
// CHUNK = 8, measured with mended seams (cl100k, random letters, ns per character at 1,000 /
// 4,000 / 16,000 / 64,000 symbols; merge_long: 30 / 46 / 44 / 45): 6: 18 / 24 / 33 / 35;
// 8: 16 / 23 / 30 / 34; 12: 15 / 26 / 31 / 35; 16: 14 / 27 / 34 / 36. 8 also keeps 'x' * n at
// 11 ns, its seams falling between cl100k's runs of x (12 and 6: 28-30 ns, seams mended).
// Before mending, a failed seam merged its chunk again: 8 symbols took 17 / 29 / 39 / 41.
static const size_t CHUNK = 8;

// Whether ids a and b, each its symbols merged alone, stay two when their symbols are merged
// together, read off their merge trees instead of merging again (the bpe crate's
// is_valid_token_pair, github/rust-gems crates/bpe; derived here for ranks that rise from a
// token's parts to the token). Merged together, each side first merges as it did alone, so
// a's last id passes down a's right spine (bytes, ..., a's right part, a) and b's first id
// down b's left spine; a pair across the seam merges iff, while both of its ids stand, it
// ranks below the merge that ends either: below the one ending the left id (that pair lies
// left of it and wins a tie), at most the one ending the right id (the seam then wins). The
// walk visits the pairs that stand together, newest first: depth(a) + depth(b) + 1 lookups.
inline bool seam_walk(const PairTable& pairs, uint32_t a, uint32_t b) {
    static const uint64_t NEVER = uint64_t(1) << 32;  // above every rank
    uint32_t x = a, y = b;
    uint64_t x_ends = NEVER, y_ends = NEVER;  // the rank of the merge that ends x, y
    for (;;) {
        uint32_t merged;
        uint32_t rank = pairs.rank_at_least(x, y, 0, &merged);
        if (rank != NO_RANK && rank < x_ends && rank <= y_ends) return false;
        uint64_t x_maker = pairs.maker(x), y_maker = pairs.maker(y);
        bool x_base = x_maker == PairTable::NOT_MADE, y_base = y_maker == PairTable::NOT_MADE;
        if (x_base && y_base) return true;
        // step back on the side whose id formed later (ranks are ids; one id on both sides
        // may go either way: the pair in between ranks above it and is never merged)
        if (!x_base && (y_base || x > y)) {
            x_ends = x;
            x = uint32_t(x_maker);
        } else {
            y_ends = y;
            y = uint32_t(y_maker >> 32);
        }
    }
}

// Whether the ids a, b (a's symbols start at `symbols`) merge alone into themselves,
// remembered per pair of ids: one piece meets the same seams again and again when it
// repeats itself ('x' * n: one seam, of two long tokens). By the merge trees where the table
// has them (seam_walk), else by merging the seam's symbols again.
inline bool seam_holds(const PairTable& pairs, const uint32_t* symbols, const SpanSymbol& a, const SpanSymbol& b,
                       MergeScratch& w) {
    SeamMemo& memo = w.seams;
    if (memo.table != &pairs) memo.clear(&pairs);
    uint64_t key = (uint64_t(a.id) << 32 | b.id) + 1;
    size_t slot = size_t((key * 0x9E3779B97F4A7C15ull) >> 56) % SeamMemo::SIZE;
    if (memo.keys[slot] == key) return memo.held[slot];
    bool held;
    if (pairs.has_makers()) {
        held = seam_walk(pairs, a.id, b.id);
    } else {
        size_t length = size_t(a.length) + b.length;
        if (w.seam.size() < length) w.seam.resize(length);
        SpanSymbol* s = w.seam.data();
        held = merge_array(pairs, false, symbols, length, s) == 2 && s[0].id == a.id && s[1].id == b.id;
    }
    memo.keys[slot] = key;
    memo.held[slot] = held;
    return held;
}

template <size_t Chunk = CHUNK>
inline bool merge_chunked(const PairTable& pairs, MergeScratch& w) {
    const uint32_t* ids = w.symbols.data();
    size_t n = w.symbols.size();
    const size_t window = 8 * Chunk;
    if (w.chunk.size() < window) w.chunk.resize(window);
    SpanSymbol* part = w.chunk.data();  // the ids of symbols start..end, m of them
    // while last_length > 0, `part` holds the chunk of symbols last_start.. as merged, last_m ids
    size_t last_start = 0, last_length = 0, last_m = 0;
    std::vector<SpanSymbol>& done = w.done;
    done.clear();
    for (size_t pos = 0; pos < n;) {
        size_t start = pos, end = n - pos < Chunk + Chunk / 2 ? n : pos + Chunk;  // no short last chunk
        size_t m;
        // a chunk equal to the last one merges alike: a run of one character, or of any text
        // whose period divides Chunk ('x' * n, "ab" * n), is merged once while its seams hold.
        // cl100k: 'x' * n 10 -> 2.2-2.8 ns per character, "ab" * n 7.8 -> 3.0
        if (end - start == last_length && ids[start] == ids[last_start] &&
            std::memcmp(ids + start, ids + last_start, last_length * sizeof(uint32_t)) == 0) {
            m = last_m;
        } else {
            m = merge_array(pairs, false, ids + start, end - start, part);
            last_start = start;
            last_length = end - start;
            last_m = m;
        }
        while (!done.empty() && !seam_holds(pairs, ids + start - done.back().length, done.back(), part[0], w)) {
            last_length = 0;  // `part` is mended below
            // The seam's two ids merged alone take their place when that joins the part's
            // second id (a third of the seams of random letters fail, 2,620 of 7,610 on
            // 4,000 of them, and most are mended so); else the part is merged again with the
            // last id given back.
            size_t from = start - done.back().length, length = done.back().length + part[0].length;
            if (end - from > window) return false;
            if (w.repair.size() < length) w.repair.resize(length);
            SpanSymbol* mended = w.repair.data();
            size_t k = merge_array(pairs, false, ids + from, length, mended);
            if (m == 1 || seam_holds(pairs, ids + from + length - mended[k - 1].length, mended[k - 1], part[1], w)) {
                std::memmove(part + k, part + 1, (m - 1) * sizeof(SpanSymbol));
                std::copy(mended, mended + k, part);
                m += k - 1;
            } else {
                m = merge_array(pairs, false, ids + from, end - from, part);
            }
            start = from;
            done.pop_back();
        }
        done.insert(done.end(), part, part + m);
        pos = end;
    }
    for (size_t i = 0; i < done.size(); ++i) w.symbols[i] = done[i].id;
    w.symbols.resize(done.size());
    return true;
}

// A piece of more than SHORT_PIECE symbols; kept out of line, so that the short path that
// nearly every piece takes stays small where it is inlined (UDHR: 7% slower with it inlined).
BP_NOINLINE inline void merge_long_piece(const PairTable& pairs, bool monotonic, MergeScratch& w) {
    if (monotonic || !merge_chunked(pairs, w)) merge_long(pairs, monotonic, w);
}

// Merges w.symbols in place, choosing the strategy by length and rule.
inline void merge_symbols(const PairTable& pairs, bool monotonic, MergeScratch& w) {
    if (w.symbols.size() > SHORT_PIECE) merge_long_piece(pairs, monotonic, w);
    else if (w.symbols.size() > 1) merge_short(pairs, monotonic, w);
}

}  // namespace bp
