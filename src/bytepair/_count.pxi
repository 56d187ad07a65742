# Counting the unique pieces of a training text (``count_pieces``), for ``train.py``.
#
# Must equal ``collections.Counter(piece for block in blocks for piece in split(block,
# pattern))``: the same unique pieces, in order of first appearance, with the same counts.
#
# Why here: in Python the cost is not the scanning but making one str object per piece and
# hashing it (2.5M pieces for WikiText-2 train, about a second). Here each block is scanned
# and its pieces counted in a flat hash table of views into the block's own code units, on one
# thread per block, without the GIL; a str is made only once per unique piece. Blocks are
# merged in order, each block's unique pieces in their order of first appearance, so the
# result keeps first-appearance order over the whole input. A piece's hash is taken over its
# code points, not its bytes, so that the merge reuses it although two blocks can store the
# same piece at different widths (1, 2 or 4 bytes); node-based maps keyed by widened copies
# made that serial merge a third of counting time (perf, WikiText-2 train).
#
# Complexity: O(n) per block, plus O(unique pieces per block) to merge.

from cpython.unicode cimport PyUnicode_GET_LENGTH, PyUnicode_KIND, PyUnicode_DATA, PyUnicode_Substring
from libc.stdint cimport int64_t
from libcpp.vector cimport vector

cdef extern from *:
    """
    #include <cstring>
    #include <thread>
    #include <vector>

    namespace bp_count {

    static const uint32_t EMPTY = 0xFFFFFFFFu;

    template <class C> static inline uint64_t hash_code_points(const C* p, size_t n) {
        uint64_t h = 0xCBF29CE484222325ULL ^ n;
        for (size_t i = 0; i < n; ++i) h = (h ^ uint32_t(p[i])) * 0x100000001B3ULL;
        return bp::mix64(h);
    }

    static inline uint32_t code_point(int kind, const void* data, size_t i) {
        if (kind == 1) return static_cast<const uint8_t*>(data)[i];
        if (kind == 2) return static_cast<const uint16_t*>(data)[i];
        return static_cast<const uint32_t*>(data)[i];
    }

    // A piece where it first occurred: its text (width `kind`), span and hash.
    struct PieceRef { int kind; const void* data; size_t start, end; uint64_t hash; };

    static inline bool same_piece(const PieceRef& a, const PieceRef& b) {
        size_t n = a.end - a.start;
        if (a.hash != b.hash || n != b.end - b.start) return false;
        if (a.kind == b.kind)
            return std::memcmp(static_cast<const char*>(a.data) + a.start * a.kind,
                               static_cast<const char*>(b.data) + b.start * b.kind, n * a.kind) == 0;
        for (size_t i = 0; i < n; ++i)
            if (code_point(a.kind, a.data, a.start + i) != code_point(b.kind, b.data, b.start + i)) return false;
        return true;
    }

    // Unique pieces in order of first appearance, with counts; an open-addressing table of
    // indices into them, grown when half full.
    struct PieceCounts {
        std::vector<PieceRef> pieces;
        std::vector<int64_t> counts;
        std::vector<uint32_t> table = std::vector<uint32_t>(1024, EMPTY);

        void add(const PieceRef& piece, int64_t count) {
            size_t mask = table.size() - 1, i = piece.hash & mask;
            for (; table[i] != EMPTY; i = (i + 1) & mask) {
                if (same_piece(pieces[table[i]], piece)) {
                    counts[table[i]] += count;
                    return;
                }
            }
            table[i] = uint32_t(pieces.size());
            pieces.push_back(piece);
            counts.push_back(count);
            if (2 * pieces.size() > table.size()) grow();
        }
        void grow() {
            table.assign(table.size() * 2, EMPTY);
            size_t mask = table.size() - 1;
            for (size_t k = 0; k < pieces.size(); ++k) {
                size_t i = pieces[k].hash & mask;
                while (table[i] != EMPTY) i = (i + 1) & mask;
                table[i] = uint32_t(k);
            }
        }
    };

    template <class C>
    inline void count_block(int pattern, const C* s, size_t n, int kind, PieceCounts& out) {
        bp::Scanner<C> scanner(s, n, pattern);
        size_t start, end;
        while (scanner.next(start, end))
            out.add(PieceRef{kind, s, start, end, hash_code_points(s + start, end - start)}, 1);
    }

    // Count every block on ``threads`` threads, then merge in block order (each block's
    // pieces keep their hashes). Then ``owner`` and ``bounds`` say, for each unique piece
    // overall, the block and span of its first occurrence.
    inline void count_blocks(int pattern, const std::vector<int>& kinds,
                             const std::vector<const void*>& datas, const std::vector<size_t>& sizes,
                             int threads, std::vector<size_t>& owner, std::vector<size_t>& bounds,
                             std::vector<int64_t>& counts) {
        size_t blocks = datas.size();
        std::vector<PieceCounts> per_block(blocks);
        if (threads < 1) threads = 1;
        if (static_cast<size_t>(threads) > blocks) threads = static_cast<int>(blocks);
        auto count = [&](size_t b) {
            if (kinds[b] == 1) count_block(pattern, (const uint8_t*)datas[b], sizes[b], 1, per_block[b]);
            else if (kinds[b] == 2) count_block(pattern, (const uint16_t*)datas[b], sizes[b], 2, per_block[b]);
            else count_block(pattern, (const uint32_t*)datas[b], sizes[b], 4, per_block[b]);
        };
        std::vector<std::thread> workers;
        for (int t = 0; t < threads; ++t)
            workers.emplace_back([&, t]() { for (size_t b = t; b < blocks; b += threads) count(b); });
        for (auto& worker : workers) worker.join();
        PieceCounts all;
        std::vector<size_t> block_of;
        for (size_t b = 0; b < blocks; ++b) {
            PieceCounts& block = per_block[b];
            for (size_t u = 0; u < block.pieces.size(); ++u) {
                size_t before = all.pieces.size();
                all.add(block.pieces[u], block.counts[u]);
                if (all.pieces.size() > before) block_of.push_back(b);
            }
            std::vector<uint32_t>().swap(block.table);  // no longer needed
        }
        for (size_t k = 0; k < all.pieces.size(); ++k) {
            owner.push_back(block_of[k]);
            bounds.push_back(all.pieces[k].start);
            bounds.push_back(all.pieces[k].end);
        }
        counts.swap(all.counts);
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
