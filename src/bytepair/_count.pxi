# Counting the unique pieces of a training text (``count_pieces``), for ``train.py``.
#
# Must equal ``collections.Counter(piece for block in blocks for piece in split(block,
# pattern))``: the same unique pieces, in order of first appearance, with the same counts.
#
# Why here: in Python the cost is not the scanning but making one str object per piece and
# hashing it (2.5M pieces for WikiText-2 train, about a second). Here each block is scanned
# and its pieces counted in a hash map keyed by views into the block's own code units, on one
# thread per block, without the GIL; a str is made only once per unique piece. Blocks are
# merged in order, each block's unique pieces in their order of first appearance, so the
# result keeps first-appearance order over the whole input. Keys are widened to UTF-32 for the
# merge, because two blocks can store the same piece at different widths (1, 2 or 4 bytes).
#
# Complexity: O(n) per block, plus O(unique pieces per block) to merge.

from cpython.unicode cimport PyUnicode_GET_LENGTH, PyUnicode_KIND, PyUnicode_DATA, PyUnicode_Substring
from libc.stdint cimport int64_t
from libcpp.vector cimport vector

cdef extern from *:
    """
    #include <string>
    #include <string_view>
    #include <thread>
    #include <unordered_map>
    #include <vector>

    namespace bp_count {

    // One block's unique pieces: (start, end) of the first occurrence, and the count.
    struct BlockCounts {
        std::vector<size_t> first_bounds;
        std::vector<int64_t> counts;
    };

    inline void count_block(int pattern, int kind, const void* data, size_t n, BlockCounts& out) {
        std::vector<size_t> bounds;
        bp::scan_bounds(pattern, kind, data, n, bounds);
        std::unordered_map<std::string_view, size_t> index;
        index.reserve(bounds.size() / 8 + 16);
        const char* base = static_cast<const char*>(data);
        for (size_t k = 0; k < bounds.size(); k += 2) {
            std::string_view key(base + bounds[k] * kind, (bounds[k + 1] - bounds[k]) * kind);
            auto found = index.try_emplace(key, out.counts.size());
            if (found.second) {
                out.first_bounds.push_back(bounds[k]);
                out.first_bounds.push_back(bounds[k + 1]);
                out.counts.push_back(1);
            } else {
                out.counts[found.first->second] += 1;
            }
        }
    }

    inline std::u32string widen(int kind, const void* data, size_t start, size_t end) {
        std::u32string wide(end - start, U'\\0');
        for (size_t i = start; i < end; ++i) {
            if (kind == 1) wide[i - start] = static_cast<const uint8_t*>(data)[i];
            else if (kind == 2) wide[i - start] = static_cast<const uint16_t*>(data)[i];
            else wide[i - start] = static_cast<const uint32_t*>(data)[i];
        }
        return wide;
    }

    // Count every block on ``threads`` threads, then merge in block order. ``owner`` and
    // ``bounds`` say, for each unique piece overall, the block and span of its first occurrence.
    inline void count_blocks(int pattern, const std::vector<int>& kinds,
                             const std::vector<const void*>& datas, const std::vector<size_t>& sizes,
                             int threads, std::vector<size_t>& owner, std::vector<size_t>& bounds,
                             std::vector<int64_t>& counts) {
        size_t blocks = datas.size();
        std::vector<BlockCounts> per_block(blocks);
        if (threads < 1) threads = 1;
        if (static_cast<size_t>(threads) > blocks) threads = static_cast<int>(blocks);
        std::vector<std::thread> workers;
        for (int t = 0; t < threads; ++t) {
            workers.emplace_back([&, t]() {
                for (size_t b = t; b < blocks; b += threads)
                    count_block(pattern, kinds[b], datas[b], sizes[b], per_block[b]);
            });
        }
        for (auto& worker : workers) worker.join();
        std::unordered_map<std::u32string, size_t> index;
        for (size_t b = 0; b < blocks; ++b) {
            const BlockCounts& block = per_block[b];
            for (size_t u = 0; u < block.counts.size(); ++u) {
                size_t start = block.first_bounds[2 * u], end = block.first_bounds[2 * u + 1];
                auto found = index.try_emplace(widen(kinds[b], datas[b], start, end), counts.size());
                if (found.second) {
                    owner.push_back(b);
                    bounds.push_back(start);
                    bounds.push_back(end);
                    counts.push_back(block.counts[u]);
                } else {
                    counts[found.first->second] += block.counts[u];
                }
            }
        }
    }

    }  // namespace bp_count
    """
    void _count_blocks "bp_count::count_blocks"(
        int pattern, const vector[int]& kinds, const vector[const void*]& datas,
        const vector[size_t]& sizes, int threads, vector[size_t]& owner, vector[size_t]& bounds,
        vector[int64_t]& counts) nogil


def count_pieces(blocks, pattern, int num_threads=1):
    """The unique pieces of ``blocks`` under a named pattern, in order of first appearance,
    with their counts: ``(pieces, counts)``, equal to a ``Counter`` over ``split`` of each block.

    Blocks are counted on ``num_threads`` threads with the GIL released; cut a long text into
    blocks only where its pieces end anyway (``patterns.safe_cut``).

    Example:
        >>> count_pieces(["a b a", " b"], "gpt2")
        (['a', ' b', ' a'], [1, 2, 1])
    """
    cdef int pattern_id = _pattern_id(pattern)
    if pattern_id == P_NONE:
        raise ValueError("count_pieces needs a named pattern; without one each text is one piece")
    _char_tables()
    cdef list texts = list(blocks)
    cdef vector[int] kinds
    cdef vector[const void*] datas
    cdef vector[size_t] sizes
    cdef str text
    for text in texts:
        kinds.push_back(PyUnicode_KIND(text))
        datas.push_back(PyUnicode_DATA(text))
        sizes.push_back(PyUnicode_GET_LENGTH(text))
    cdef vector[size_t] owner, bounds
    cdef vector[int64_t] counts
    with nogil:
        _count_blocks(pattern_id, kinds, datas, sizes, num_threads, owner, bounds, counts)
    cdef size_t u
    pieces = [PyUnicode_Substring(texts[owner[u]], bounds[2 * u], bounds[2 * u + 1]) for u in range(owner.size())]
    return pieces, [counts[u] for u in range(counts.size())]
