// Counting the unique pieces of a training text, for train.py.
//
// Python twin: bytepair.reference.count_pieces, i.e. collections.Counter(piece for block in
// blocks for piece in patterns.split(block, pattern)): the same unique pieces, in order of
// first appearance, with the same counts.
//
// Why here: in Python the cost is not the scanning but making one str object per piece and
// hashing it (2.5M pieces for WikiText-2 train, about a second). Here each block is scanned
// and its pieces counted in a flat hash table of views into the block's own code units, on
// several threads, without the GIL; a str is made only once per unique piece. Blocks are
// merged in order, each block's unique pieces in their order of first appearance, so the
// result keeps first-appearance order over the whole input. A piece's hash is taken over its
// code points, not its bytes, so that the merge reuses it although two blocks can store the
// same piece at different widths (1, 2 or 4 bytes); node-based maps keyed by widened copies
// made that serial merge a third of counting time (perf, WikiText-2 train).
//
// Complexity: O(n) per block, plus O(unique pieces per block) to merge.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "hashing.hpp"
#include "scanner.hpp"
#include "threads.hpp"

namespace bp_count {

static const uint32_t EMPTY = 0xFFFFFFFFu;
// Slots a block's table starts with (grown when half full). Untuned.
static const size_t INITIAL_SLOTS = 1024;

template <class C> inline uint64_t hash_code_points(const C* p, size_t n) {
    uint64_t h = 0xCBF29CE484222325ULL ^ n;  // FNV-1a over code points, then mixed
    for (size_t i = 0; i < n; ++i) h = (h ^ uint32_t(p[i])) * 0x100000001B3ULL;
    return bp::mix64(h);
}

inline uint32_t code_point(int kind, const void* data, size_t i) {
    if (kind == 1) return static_cast<const uint8_t*>(data)[i];
    if (kind == 2) return static_cast<const uint16_t*>(data)[i];
    return static_cast<const uint32_t*>(data)[i];
}

// A piece where it first occurred in its block, and its hash over code points.
struct Span {
    uint64_t hash;
    uint32_t start, end;
};

inline bool same_piece(const bp::TextRef& a, const Span& x, const bp::TextRef& b, const Span& y) {
    size_t n = x.end - x.start;
    if (x.hash != y.hash || n != y.end - y.start) return false;
    if (a.kind == b.kind)
        return std::memcmp(static_cast<const char*>(a.data) + size_t(x.start) * size_t(a.kind),
                           static_cast<const char*>(b.data) + size_t(y.start) * size_t(b.kind),
                           n * size_t(a.kind)) == 0;
    for (size_t i = 0; i < n; ++i)
        if (code_point(a.kind, a.data, x.start + i) != code_point(b.kind, b.data, y.start + i)) return false;
    return true;
}

// Unique pieces in order of first appearance, with counts (and, when merging blocks, the
// block of each), and an open-addressing table of their indices, grown when half full.
struct PieceCounts {
    std::vector<Span> spans;
    std::vector<int64_t> counts;
    std::vector<uint32_t> blocks;
    std::vector<uint32_t> table = std::vector<uint32_t>(INITIAL_SLOTS, EMPTY);

    // Adds `count` to the piece that `same(index)` recognizes, or appends it; true if new.
    template <class Same> bool add(const Span& span, int64_t count, Same&& same) {
        size_t mask = table.size() - 1, i = span.hash & mask;
        for (; table[i] != EMPTY; i = (i + 1) & mask) {
            if (same(table[i])) {
                counts[table[i]] += count;
                return false;
            }
        }
        table[i] = uint32_t(spans.size());
        spans.push_back(span);
        counts.push_back(count);
        if (2 * spans.size() > table.size()) grow();
        return true;
    }
    void grow() {
        table.assign(table.size() * 2, EMPTY);
        size_t mask = table.size() - 1;
        for (size_t k = 0; k < spans.size(); ++k) {
            size_t i = spans[k].hash & mask;
            while (table[i] != EMPTY) i = (i + 1) & mask;
            table[i] = uint32_t(k);
        }
    }
};

inline void count_block(int pattern, const bp::TextRef& block, PieceCounts& out) {
    bp::with_code_units(block, [&](auto s) {
        bp::Scanner scanner(s, block.length, pattern);
        size_t start, end;
        while (scanner.next(start, end)) {
            Span span{hash_code_points(s + start, end - start), uint32_t(start), uint32_t(end)};
            out.add(span, 1, [&](uint32_t k) { return same_piece(block, out.spans[k], block, span); });
        }
    });
    std::vector<uint32_t>().swap(out.table);  // the merge needs only the spans and counts
}

// Counts every block on up to `threads` threads (fewer if the OS refuses some) and merges
// the blocks' counts in block order (each block's pieces keep their hashes) while the others
// are still being counted: whichever thread finishes a block merges every block that is
// ready in order, unless another thread is merging. Merging only after the last block kept
// every block's pieces at once: 11 MB at the peak of counting WikiText-2 train's 166
// documents, and the merge ran on one thread after the others had ended. Then `owner` and
// `bounds` say, for each unique piece overall, the block and span of its first occurrence.
inline void count_blocks(int pattern, const std::vector<bp::TextRef>& blocks, int threads,
                         std::vector<size_t>& owner, std::vector<size_t>& bounds,
                         std::vector<int64_t>& counts) {
    std::vector<PieceCounts> per_block(blocks.size());
    std::unique_ptr<std::atomic<bool>[]> counted(new std::atomic<bool>[blocks.size()]());
    if (threads < 1) threads = 1;
    if (static_cast<size_t>(threads) > blocks.size()) threads = static_cast<int>(blocks.size());
    PieceCounts all;
    size_t merged = 0;  // blocks merged into `all`; both only under `merging`
    std::mutex merging;
    auto merge_counted = [&] {
        for (; merged < blocks.size() && counted[merged].load(std::memory_order_acquire); ++merged) {
            size_t b = merged;
            PieceCounts& block = per_block[b];
            for (size_t u = 0; u < block.spans.size(); ++u) {
                const Span& span = block.spans[u];
                auto same = [&](uint32_t k) { return same_piece(blocks[all.blocks[k]], all.spans[k], blocks[b], span); };
                if (all.add(span, block.counts[u], same)) all.blocks.push_back(uint32_t(b));
            }
            std::vector<Span>().swap(block.spans);  // merged: free it now
            std::vector<int64_t>().swap(block.counts);
        }
    };
    bp::share_out(threads, blocks.size(), [&](int, auto& next) {
        for (size_t b; next(b);) {
            PieceCounts local;  // not in place: neighbours in per_block are written by other threads
            count_block(pattern, blocks[b], local);
            per_block[b] = std::move(local);
            counted[b].store(true, std::memory_order_release);
            std::unique_lock<std::mutex> lock(merging, std::try_to_lock);
            if (lock.owns_lock()) merge_counted();
        }
    });
    merge_counted();  // blocks counted while another thread held the lock and had looked past them
    for (size_t k = 0; k < all.spans.size(); ++k) {
        owner.push_back(all.blocks[k]);
        bounds.push_back(all.spans[k].start);
        bounds.push_back(all.spans[k].end);
    }
    counts.swap(all.counts);
}

}  // namespace bp_count
