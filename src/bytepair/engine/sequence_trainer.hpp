// BPE training over one long sequence in about 3 bytes per symbol: seed 000's job (char
// mode, no pattern: the whole text is one chunk) without a linked list per symbol.
//
// Python twin: bytepair.reference.train_bpe, exactly (same merges in the same order, ties to
// the pair whose first occurrence comes first). _train.pxi's _MergeTrainer does the same over
// unique chunks with a doubly linked list and every occurrence's position: 20 bytes per symbol
// plus 4-8 per occurrence, 30x the corpus on WikiText-2 train with no pattern, where nothing
// repeats to deduplicate. This one is chosen when chunks barely repeat (train_merges).
//
// Design, and why:
// - The sequence is one array of ids (uint16 when every id fits, else uint32); a symbol
//   absorbed into its left neighbour becomes DEAD, chunks are separated by EDGE (no pair
//   crosses it), and EDGE also sits at both ends so that walks need no bounds checks. A chunk
//   that occurs k times is written k times in a row: the counts are then the weighted counts,
//   and first occurrences keep their order (chunk, then position).
// - Per pair: its exact count, a lazy earliest position (lowered by new occurrences; when the
//   earliest one is destroyed it goes stale and is found again by scanning the pair's blocks
//   in order only when the pair reaches the top of the heap), and the blocks of TRAIN_BLOCK
//   positions where it was formed (deduplicated when appended in a row; sorted before use). A
//   merge scans those blocks, left to right, non-overlapping: replay's own order.
// - The heap holds each pair once, at a key at least as good as its true (count, -earliest):
//   counts that fall and earliest positions that go stale are corrected when the pair reaches
//   the top, and a top whose key is true is the reference's choice.
// Memory: the array (2 or 4 bytes per symbol), one 16-bit block id per (pair, block) it occurs
// in, and the pairs: a whole `train` call at vocab 500 peaks 35 MB above its start on
// WikiText-2 train (10.8 MB; 39 MB with 32-bit block ids), against 357 MB for _MergeTrainer.
// Time: a merge costs a scan of its pair's blocks (all of them for the frequent early merges):
// about _MergeTrainer's at vocab 500 there, 2.4x its time at vocab 2,000, where merges of
// rarer pairs still scan most blocks.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "compat.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace bp {

// Positions per block of the occurrence index. Larger: fewer block ids per pair; smaller: a rare
// pair's merge scans less. WikiText-2 train, vocab 500, with 32-bit block ids: 36 MB in all at
// 64 Ki, 44 MB at 16 Ki, in the same time (also at vocab 2,000, and 4 Ki was no faster).
// Untuned beyond that.
static const size_t TRAIN_BLOCK = size_t(1) << 16;
// A block's id: positions stay below 2**32 (end_chunk), so 16 bits hold every block. Block ids
// are most of the index (1.6 M of them on WikiText-2 train at vocab 500): as uint32 they took
// 9.5 MB of a 37 MB run.
typedef uint16_t BlockId;
static_assert((uint64_t(1) << 32) / TRAIN_BLOCK <= uint64_t(1) << 16, "a block id must fit in 16 bits");

class SequenceTrainerBase {
  public:
    virtual ~SequenceTrainerBase() {}
    virtual void reserve(size_t symbols) = 0;
    virtual void append(const uint32_t* ids, size_t n) = 0;  // the current chunk's next symbols
    virtual void end_chunk(int64_t times) = 0;                // the chunk occurs `times` times
    virtual void start() = 0;
    virtual void run(int64_t until) = 0;
    bool finished = false;
    std::vector<int64_t> records;  // 5 per merge: left, right, merged, frequency, length after
    int64_t merges_done() const { return int64_t(records.size() / 5); }
    int64_t merges_wanted() const { return std::max<int64_t>(vocab_size - distinct, 0); }

  protected:
    int64_t vocab_size = 0, min_frequency = 0, distinct = 0;
};

template <class S> class SequenceTrainer : public SequenceTrainerBase {
  public:
    static constexpr S DEAD = S(~S(0));
    static constexpr S EDGE = S(~S(0) - 1);
    static constexpr uint64_t MAX_ID = uint64_t(S(~S(0) - 2));

    // `values`: the base tokens' bytes, id = index.
    SequenceTrainer(const std::vector<std::string>& values, int64_t vocab_size_, int64_t min_frequency_) {
        vocab_size = vocab_size_;
        min_frequency = min_frequency_;
        for (const std::string& v : values) add_value(v);
        distinct = int64_t(values.size());
        seq_.push_back(EDGE);
    }

    void reserve(size_t symbols) override { seq_.reserve(symbols + 2); }
    void append(const uint32_t* ids, size_t n) override {
        for (size_t k = 0; k < n; ++k) seq_.push_back(S(ids[k]));
    }
    void end_chunk(int64_t times) override {
        size_t start = chunk_start_, end = seq_.size();
        if (end == start) return;
        seq_.push_back(EDGE);
        for (int64_t t = 1; t < times; ++t) {  // written again, in a row: weighted counts
            for (size_t k = start; k < end; ++k) {
                S symbol = seq_[k];
                seq_.push_back(symbol);
            }
            seq_.push_back(EDGE);
        }
        if (seq_.size() >= 0xFFFFFFF0u) throw std::overflow_error("the training sequence holds 2**32 symbols or more");
        length_ += int64_t(end - start) * times;
        chunk_start_ = seq_.size();
    }

    // After the last chunk: counts every pair.
    void start() override {
        if (seq_.size() == 1) seq_.push_back(EDGE);
        // no shrink_to_fit: the caller reserved the exact size, and a shrink copies the array
        // (twice its bytes at the peak: 43 MB instead of 22 on WikiText-2 train)
        for (size_t i = 1; i + 1 < seq_.size(); ++i)
            if (seq_[i] != EDGE && seq_[i + 1] != EDGE) add_occurrence(pair_id(seq_[i], seq_[i + 1]), uint32_t(i));
        push_touched();
    }

    void run(int64_t until) override {
        while (int64_t(records.size()) < 5 * until) {
            if (distinct >= vocab_size) {
                finished = true;
                return;
            }
            int64_t best = pop_best();
            if (best < 0 || pairs_[best].count < min_frequency) {
                finished = true;
                return;
            }
            Pair& p = pairs_[best];
            int64_t frequency = p.count;
            uint32_t left = p.left, right = p.right;
            uint32_t merged = merged_id(left, right);
            apply(uint32_t(best), merged);
            records.insert(records.end(), {int64_t(left), int64_t(right), int64_t(merged), frequency, length_});
        }
    }

  private:
    struct Pair {
        uint32_t left, right, earliest;
        int64_t count;
        bool touched;
        std::vector<BlockId> blocks;
        int64_t key_count;      // its key in the heap: at least its count,
        uint32_t key_earliest;  // at most its earliest position
        uint32_t heap_at;       // where it sits in the heap, or NOT_QUEUED
    };
    static constexpr uint32_t NOT_QUEUED = 0xFFFFFFFFu;
    std::vector<S> seq_;
    size_t chunk_start_ = 1;
    int64_t length_ = 0;
    std::vector<Pair> pairs_;
    std::unordered_map<uint64_t, uint32_t> pair_ids_;
    std::vector<uint32_t> touched_;
    std::vector<uint32_t> heap_;  // pair ids, a binary max-heap on (key_count, -key_earliest)
    std::vector<std::string> token_bytes_;
    std::unordered_map<std::string, uint32_t> token_id_;

    uint32_t add_value(const std::string& value) {
        uint32_t id = uint32_t(token_bytes_.size());
        if (id > MAX_ID) throw std::overflow_error("more token ids than the sequence's symbol type holds");
        token_bytes_.push_back(value);
        token_id_.emplace(value, id);
        return id;
    }
    uint32_t merged_id(uint32_t left, uint32_t right) {  // a new id unless the value exists (seed 000)
        std::string value = token_bytes_[left] + token_bytes_[right];
        auto found = token_id_.find(value);
        if (found != token_id_.end()) return found->second;
        ++distinct;
        return add_value(value);
    }

    uint32_t pair_id(uint32_t left, uint32_t right) {
        uint64_t key = uint64_t(left) << 32 | right;
        auto found = pair_ids_.find(key);
        if (found != pair_ids_.end()) return found->second;
        uint32_t id = uint32_t(pairs_.size());
        pairs_.push_back(Pair{left, right, 0xFFFFFFFFu, 0, false, {}, 0, 0, NOT_QUEUED});
        pair_ids_.emplace(key, id);
        return id;
    }
    void add_occurrence(uint32_t id, uint32_t position) {
        Pair& p = pairs_[id];
        ++p.count;
        p.earliest = std::min(p.earliest, position);
        BlockId block = BlockId(position / TRAIN_BLOCK);
        if (p.blocks.empty() || p.blocks.back() != block) p.blocks.push_back(block);
        if (!p.touched) {
            p.touched = true;
            touched_.push_back(id);
        }
    }
    void remove_occurrence(uint32_t left, uint32_t right) { --pairs_[pair_ids_.find(uint64_t(left) << 32 | right)->second].count; }

    // The heap holds each pair once (a pair queued again moves), so it stays as small as the
    // pair table; a lazy heap of (key, pair) entries pushed at every change held one per
    // touched pair per merge, which grew past the sequence itself.
    inline bool above(uint32_t x, uint32_t y) const {
        const Pair &a = pairs_[x], &b = pairs_[y];
        return a.key_count != b.key_count ? a.key_count > b.key_count : a.key_earliest < b.key_earliest;
    }
    void place(size_t at, uint32_t id) {
        heap_[at] = id;
        pairs_[id].heap_at = uint32_t(at);
    }
    void sift_up(size_t at) {
        uint32_t id = heap_[at];
        while (at > 0 && above(id, heap_[(at - 1) / 2])) {
            place(at, heap_[(at - 1) / 2]);
            at = (at - 1) / 2;
        }
        place(at, id);
    }
    void sift_down(size_t at) {
        uint32_t id = heap_[at];
        for (;;) {
            size_t child = 2 * at + 1;
            if (child >= heap_.size()) break;
            if (child + 1 < heap_.size() && above(heap_[child + 1], heap_[child])) ++child;
            if (!above(heap_[child], id)) break;
            place(at, heap_[child]);
            at = child;
        }
        place(at, id);
    }
    void push(uint32_t id) {  // queues the pair at its count and (lazy) earliest position
        Pair& p = pairs_[id];
        p.key_count = p.count;
        p.key_earliest = p.earliest;
        if (p.heap_at == NOT_QUEUED) {
            heap_.push_back(id);
            p.heap_at = uint32_t(heap_.size() - 1);
        }
        sift_up(p.heap_at);
        sift_down(p.heap_at);
    }
    void pop_top() {
        pairs_[heap_[0]].heap_at = NOT_QUEUED;
        uint32_t last = heap_.back();
        heap_.pop_back();
        if (!heap_.empty()) {
            place(0, last);
            sift_down(0);
        }
    }
    void push_touched() {
        for (uint32_t id : touched_) {
            pairs_[id].touched = false;
            if (pairs_[id].count > 0) push(id);
        }
        touched_.clear();
    }

    inline size_t next_live(size_t j) const {
        while (seq_[j] == DEAD) ++j;
        return j;
    }
    inline size_t prev_live(size_t j) const {
        while (seq_[j] == DEAD) --j;
        return j;
    }
    // The first position in [i, end) that holds `value`, or end. Most of training is this scan:
    // with SSE2, 32 bytes of symbols are compared at a time and a branch taken once per block
    // (the compiler does not vectorize the plain loop: it unrolls it into a compare and branch
    // per symbol, which took 85% of a WikiText-2 run).
    inline size_t find(size_t i, size_t end, S value) const {
        const S* s = seq_.data();
        constexpr size_t per = 16 / sizeof(S);  // symbols in 16 bytes
        for (;;) {
#if defined(__SSE2__)
            const __m128i needle = sizeof(S) == 2 ? _mm_set1_epi16(short(value)) : _mm_set1_epi32(int(value));
            while (i + 2 * per <= end) {
                __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
                __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + per));
                __m128i hits;
                if constexpr (sizeof(S) == 2) hits = _mm_or_si128(_mm_cmpeq_epi16(x, needle), _mm_cmpeq_epi16(y, needle));
                else hits = _mm_or_si128(_mm_cmpeq_epi32(x, needle), _mm_cmpeq_epi32(y, needle));
                if (_mm_movemask_epi8(hits)) break;
                i += 2 * per;
            }
#endif
            size_t stop = std::min(end, i + 2 * per);
            for (; i < stop; ++i)
                if (s[i] == value) return i;
            if (i >= end) return end;
        }
    }
    inline bool occurs_at(const Pair& p, size_t i) const {
        return seq_[i] == p.left && seq_[next_live(i + 1)] == p.right;
    }
    static void sort_blocks(std::vector<BlockId>& blocks) {
        if (!std::is_sorted(blocks.begin(), blocks.end())) std::sort(blocks.begin(), blocks.end());
        blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
    }

    // The pair's earliest live occurrence; its blocks before that one are dropped.
    uint32_t true_earliest(uint32_t id) {
        Pair& p = pairs_[id];
        if (p.earliest != 0xFFFFFFFFu && occurs_at(p, p.earliest)) return p.earliest;
        sort_blocks(p.blocks);
        size_t kept = 0;
        p.earliest = 0xFFFFFFFFu;
        for (; kept < p.blocks.size() && p.earliest == 0xFFFFFFFFu; ++kept) {
            size_t end = std::min(seq_.size() - 1, size_t(p.blocks[kept] + 1) * TRAIN_BLOCK);
            for (size_t i = std::max<size_t>(1, size_t(p.blocks[kept]) * TRAIN_BLOCK); i < end; ++i) {
                if (occurs_at(p, i)) {
                    p.earliest = uint32_t(i);
                    break;
                }
            }
        }
        if (p.earliest != 0xFFFFFFFFu) --kept;  // the block where it was found stays
        p.blocks.erase(p.blocks.begin(), p.blocks.begin() + kept);
        return p.earliest;
    }

    // The pair with the highest count, earliest first on ties; -1 when none is left. Every pair
    // with occurrences is queued at a key at least as good as its true one (counts fall and
    // earliest positions go stale without a move), so the top is the choice once its key is
    // true; otherwise it moves down to its true key and the next top is looked at.
    int64_t pop_best() {
        while (!heap_.empty()) {
            uint32_t id = heap_[0];
            Pair& p = pairs_[id];
            if (p.count <= 0) {
                pop_top();
                continue;
            }
            if (p.key_count != p.count) {
                p.key_count = p.count;
                sift_down(0);
                continue;
            }
            uint32_t earliest = true_earliest(id);
            if (p.key_earliest != earliest) {
                p.key_earliest = earliest;
                sift_down(0);
                continue;
            }
            return id;
        }
        return -1;
    }

    // Every occurrence of the pair, left to right, non-overlapping.
    void apply(uint32_t id, uint32_t merged) {
        std::vector<BlockId> blocks;
        blocks.swap(pairs_[id].blocks);
        sort_blocks(blocks);
        const S a = S(pairs_[id].left), b = S(pairs_[id].right), m = S(merged);
        size_t resume = 1;
        for (BlockId block : blocks) {
            size_t i = std::max(resume, size_t(block) * TRAIN_BLOCK);
            size_t end = std::min(seq_.size() - 1, size_t(block + 1) * TRAIN_BLOCK);
            for (; (i = find(i, end, a)) < end; ++i) {
                size_t j = next_live(i + 1);
                if (seq_[j] != b) continue;
                size_t before = prev_live(i - 1), after = next_live(j + 1);
                S p = seq_[before], k = seq_[after];
                if (p != EDGE) {
                    remove_occurrence(p, a);
                    add_occurrence(pair_id(p, m), uint32_t(before));
                }
                if (k != EDGE) {
                    remove_occurrence(b, k);
                    add_occurrence(pair_id(m, k), uint32_t(i));
                }
                seq_[i] = m;
                seq_[j] = DEAD;
                --length_;
                i = j;
            }
            resume = std::max(resume, i);
        }
        pairs_[id].count = 0;
        push_touched();
    }
};

// A trainer whose symbols are uint16 when every id up to `max_id` fits, else uint32.
inline SequenceTrainerBase* new_sequence_trainer(const std::vector<std::string>& values, int64_t vocab_size,
                                                 int64_t min_frequency, uint64_t max_id) {
    if (max_id <= SequenceTrainer<uint16_t>::MAX_ID) return new SequenceTrainer<uint16_t>(values, vocab_size, min_frequency);
    return new SequenceTrainer<uint32_t>(values, vocab_size, min_frequency);
}

}  // namespace bp
