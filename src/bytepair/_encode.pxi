# The encoder: pieces -> ids by rank-based merging, with a piece cache and batch threads.
#
# Included by _engine.pyx (after _scan.pxi, whose scanner it uses). It must equal
# ``reference.encode_piece`` for rule "replay" (``monotonic=True``) and the libraries' own
# encoders for "tiktoken"/"hf" (``whole_piece`` and no monotonic restriction); see
# docs/internals.md for the contract and tests/test_engine_encode.py for the parity tests.
# It does not handle special tokens, normalization or custom regexes: the Python layer does.
#
# Design, and why:
# - One piece at a time, from its initial symbols (bytes or characters mapped to base ids),
#   merging by a pair table (left_id << 32 | right_id) -> (rank, merged_id). Lowest
#   (rank, position) first. With ``monotonic`` a pair is only merged at a rank above the one
#   just applied, which is exactly replaying the merges in order. A pair that a merge list
#   learns twice keeps all its ranks: keeping only the first was wrong (hypothesis found
#   lists where a pair reappears after a later merge rebuilds one of its parts).
# - Short pieces (<= SHORT_PIECE symbols, nearly all of them): tiktoken's O(n^2) scan over a
#   small array. Long ones: a linked list with a binary heap of (rank, position),
#   O(n log n). Huge ones (over BUCKET_PIECE symbols: a 1 MB run of one character, a whole
#   text with no pattern): one bucket of positions per rank, walked from the lowest rank with
#   work left, O(n + ranks): 7x less time than the heap on 'x' * 2**20 with cl100k, so such a
#   run costs about what 1 MB of prose does. All three pick the same merge at every step;
#   the tests cross both thresholds, for every rule.
# - Own open-addressing tables for pairs, the vocabulary and the cache, instead of
#   std::unordered_map: 1.5-3x fewer ns per random lookup in a micro-benchmark with 233K
#   pairs (cl100k's size), since a probe reads flat memory instead of chasing a node.
# - Keys are the piece's UTF-8 (so a piece hits whichever str width it came from). Those of up
#   to SHORT_KEY = 24 bytes, nearly every piece, are packed into three words inside a 32-byte
#   slot beside the id: one lookup reads one slot. perf on WikiText-2 valid showed the old
#   layout (slot -> key array -> id array) waiting on memory for half of encoding time.
# - A cache per worker (piece -> ids) for pieces up to CACHE_MAX_BYTES, grown as it fills and
#   emptied at CACHE_LIMIT entries: most pieces of real text repeat, so most cost one hash
#   and one probe of a table small enough to stay in the CPU's cache.
# - The GIL is released while scanning and merging; batches run on plain std::threads, each
#   with its own worker (scratch buffers and cache) taken from a pool.
# Result: 5-7x tiktoken's single-thread encode_ordinary on cl100k (bench/run.py --only encode).

from cpython.list cimport PyList_New
from cpython.ref cimport PyObject
from cpython.unicode cimport PyUnicode_GET_LENGTH, PyUnicode_KIND, PyUnicode_DATA, PyUnicode_Substring
from libc.stdint cimport uint16_t, uint32_t, uint64_t
from libc.string cimport memcpy, memset
from libcpp cimport bool as cbool
from libcpp.vector cimport vector

cdef extern from *:
    """
    #include <cstring>
    #include <vector>
    #include <memory>
    #include <mutex>
    #include <thread>
    #include <atomic>
    #include <algorithm>
    #include <functional>
    #include <unordered_map>
    #include <stdexcept>
    #include <exception>

    namespace bp {

    static const uint32_t NO_ID = 0xFFFFFFFFu;
    static const uint32_t NO_RANK = 0xFFFFFFFFu;
    static const size_t SHORT_PIECE = 64;        // symbols; above this, the heap
    static const size_t BUCKET_PIECE = 1u << 16; // symbols; above this, rank buckets
    static const size_t SHORT_KEY = 24;          // UTF-8 bytes; up to this, keys live in the slot
    static const size_t CACHE_MAX_BYTES = 64;    // longer pieces are not cached
    static const size_t CACHE_LIMIT = 1u << 16;  // entries before a cache is emptied
    static const size_t MAX_IDLE_WORKERS = 64;

    static inline uint64_t mix64(uint64_t x) {
        x ^= x >> 33; x *= 0xff51afd7ed558ccdULL;
        x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL;
        return x ^ (x >> 33);
    }

    // Keys longer than SHORT_KEY (so n >= 8): whole words, then the last 8 bytes, which may
    // overlap the words already read (copying the tail byte by byte into a word stalled the
    // load that read it back: 15% of encoding time in perf).
    static inline uint64_t hash_bytes(const uint8_t* p, size_t n) {
        uint64_t h = 0x9E3779B97F4A7C15ULL ^ (n * 0xC2B2AE3D27D4EB4FULL), word;
        for (size_t k = 0; k + 8 <= n; k += 8) {
            std::memcpy(&word, p + k, 8);
            h = (h ^ word) * 0x9FB21C651E98DF25ULL;
            h ^= h >> 29;
        }
        std::memcpy(&word, p + n - 8, 8);
        h = mix64(h ^ word);
        return h ? h : 1;  // 0 marks an empty slot
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
        const uint8_t* bytes() const { return (const uint8_t*)w; }
        inline uint64_t hash() const {
            return mix64((w[0] * 0x9E3779B97F4A7C15ULL) ^ (w[1] * 0xC2B2AE3D27D4EB4FULL)
                         ^ (w[2] * 0x165667B19E3779F9ULL) ^ len);
        }
    };

    // Code units -> key, when every one is ASCII (then they are the UTF-8 bytes) and they fit.
    template <class C> static inline bool pack_ascii(const C* p, size_t len, ShortKey& key) {
        if (len > SHORT_KEY) return false;
        key.w[0] = key.w[1] = key.w[2] = 0;
        for (size_t k = 0; k < len; ++k) {
            uint32_t c = p[k];
            if (c >= 0x80) return false;
            key.w[k >> 3] |= uint64_t(c) << BP_BYTE_SHIFT(k & 7);
        }
        key.len = uint32_t(len);
        return true;
    }

    static inline void pack_bytes(const uint8_t* p, size_t len, ShortKey& key) {  // len <= SHORT_KEY
        key.w[0] = key.w[1] = key.w[2] = 0;
        for (size_t k = 0; k < len; ++k) key.w[k >> 3] |= uint64_t(p[k]) << BP_BYTE_SHIFT(k & 7);
        key.len = uint32_t(len);
    }

    // (left, right) -> ranks and merged id; ranks beyond the first only for pairs learned twice.
    class PairTable {
      public:
        void add(uint32_t left, uint32_t right, uint32_t rank, uint32_t merged) {
            staged_.push_back({key(left, right), rank, merged});
            max_rank_ = std::max(max_rank_, rank);
        }
        void build() {
            std::sort(staged_.begin(), staged_.end(), [](const Slot& a, const Slot& b) {
                return a.key != b.key ? a.key < b.key : a.rank < b.rank;
            });
            size_t size = 16;
            while (size < 2 * staged_.size()) size <<= 1;
            slots_.assign(size, Slot{EMPTY, 0, 0});
            mask_ = size - 1;
            for (size_t k = 0; k < staged_.size(); ++k) {
                const Slot& entry = staged_[k];
                if (k > 0 && staged_[k - 1].key == entry.key) {
                    later_[entry.key].push_back(entry.rank);
                    find_slot(entry.key)->merged |= MORE;
                    continue;
                }
                size_t i = mix64(entry.key) & mask_;
                while (slots_[i].key != EMPTY) i = (i + 1) & mask_;
                slots_[i] = entry;
            }
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
            const std::vector<uint32_t>& ranks = later_.at(slot->key);
            auto it = std::lower_bound(ranks.begin(), ranks.end(), floor);
            return it == ranks.end() ? NO_RANK : *it;
        }
        // Starts loading the pair's slot, so that several lookups wait on memory together.
        inline void prefetch(uint32_t left, uint32_t right) const {
            if (!slots_.empty()) __builtin_prefetch(&slots_[mix64(key(left, right)) & mask_]);
        }
        inline uint32_t merged_of(uint32_t left, uint32_t right) const {
            return find_slot(key(left, right))->merged & ~MORE;
        }
        uint32_t max_rank() const { return max_rank_; }

      private:
        struct Slot { uint64_t key; uint32_t rank; uint32_t merged; };
        static const uint64_t EMPTY = ~0ULL;
        static const uint32_t MORE = 0x80000000u;  // ids are < 2**31 (checked in Python)
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

    // Short key -> a run of ids, open addressing, 32-byte slots that hold the key and, for a
    // single id (most pieces), the id itself: a lookup reads one slot and nothing else. Grows
    // when half full, so a cache costs memory in proportion to the pieces it has seen.
    class ShortMap {
      public:
        ShortMap() { slots_.assign(1024, Slot{}); }
        inline const uint32_t* find(const ShortKey& key, uint64_t h, size_t* count) const {
            size_t mask = slots_.size() - 1, i = h & mask;
            for (;; i = (i + 1) & mask) {
                const Slot& s = slots_[i];
                if (s.len == key.len && s.w[0] == key.w[0] && s.w[1] == key.w[1] && s.w[2] == key.w[2]) {
                    *count = s.count;
                    return s.count == 1 ? &s.value : &ids_[s.value];
                }
                if (s.len == 0) return nullptr;
            }
        }
        void insert(const ShortKey& key, uint64_t h, const uint32_t* ids, size_t count) {
            if (2 * (entries_ + 1) > slots_.size()) grow();
            Slot slot{{key.w[0], key.w[1], key.w[2]}, uint16_t(key.len), uint16_t(count), ids[0]};
            if (count != 1) {
                slot.value = uint32_t(ids_.size());
                ids_.insert(ids_.end(), ids, ids + count);
            }
            place(slot, h);
            ++entries_;
        }
        void clear() {
            slots_.assign(1024, Slot{});
            ids_.clear();
            entries_ = 0;
        }
        size_t entries() const { return entries_; }

      private:
        // ShortKey's fields with the id count beside the length: 32 bytes, two per cache line
        struct Slot { uint64_t w[3] = {0, 0, 0}; uint16_t len = 0, count = 0; uint32_t value = 0; };
        void place(const Slot& slot, uint64_t h) {
            size_t mask = slots_.size() - 1, i = h & mask;
            while (slots_[i].len) i = (i + 1) & mask;
            slots_[i] = slot;
        }
        void grow() {
            std::vector<Slot> old;
            old.swap(slots_);
            slots_.assign(old.size() * 2, Slot{});
            for (const Slot& s : old)
                if (s.len) place(s, ShortKey{{s.w[0], s.w[1], s.w[2]}, s.len}.hash());
        }
        std::vector<Slot> slots_;
        std::vector<uint32_t> ids_;
        size_t entries_ = 0;
    };

    // Longer bytes -> a run of ids, open addressing, keys and ids in arrays beside the slots.
    // Grows when half full.
    class PieceMap {
      public:
        PieceMap() { slots_.assign(64, Slot{0, 0, 0, 0, 0}); }
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
        void insert(const uint8_t* key, size_t len, uint64_t h, const uint32_t* ids, size_t count) {
            if (2 * (entries_ + 1) > slots_.size()) grow();
            place(Slot{h, uint32_t(keys_.size()), uint32_t(len), uint32_t(ids_.size()), uint32_t(count)});
            keys_.insert(keys_.end(), key, key + len);
            ids_.insert(ids_.end(), ids, ids + count);
            ++entries_;
        }
        void clear() {
            slots_.assign(64, Slot{0, 0, 0, 0, 0});
            keys_.clear(); ids_.clear(); entries_ = 0;
        }
        size_t entries() const { return entries_; }

      private:
        struct Slot { uint64_t hash; uint32_t key_at, key_len, ids_at, ids_len; };
        void place(const Slot& slot) {
            size_t mask = slots_.size() - 1, i = slot.hash & mask;
            while (slots_[i].hash) i = (i + 1) & mask;
            slots_[i] = slot;
        }
        void grow() {
            std::vector<Slot> old;
            old.swap(slots_);
            slots_.assign(old.size() * 2, Slot{0, 0, 0, 0, 0});
            for (const Slot& s : old) if (s.hash) place(s);
        }
        std::vector<Slot> slots_;
        std::vector<uint8_t> keys_;
        std::vector<uint32_t> ids_;
        size_t entries_ = 0;
    };

    // A piece's UTF-8; the buffer only grows (a vector resized down and up again zero-fills).
    struct Utf8Buffer {
        std::vector<uint8_t> bytes;
        size_t length = 0;
        const uint8_t* data() const { return bytes.data(); }
        size_t size() const { return length; }
    };

    // One thread's scratch space and piece cache.
    struct Worker {
        ShortMap cache;                                    // pieces of up to SHORT_KEY bytes
        PieceMap long_cache;                               // up to CACHE_MAX_BYTES
        Utf8Buffer utf8;
        std::vector<uint32_t> symbols, ranks, merged;      // short pieces
        std::vector<uint32_t> next, prev;                  // long pieces
        std::vector<uint64_t> heap;
        std::vector<uint32_t> unknown;                     // code points with no base id
    };

    struct TextRef { int kind; const void* data; size_t length; bool ascii; };

    static inline uint8_t* put_utf8(uint32_t c, uint8_t* o) {
        if (c < 0x80) {
            *o++ = uint8_t(c);
        } else if (c < 0x800) {
            *o++ = uint8_t(0xC0 | (c >> 6)); *o++ = uint8_t(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            *o++ = uint8_t(0xE0 | (c >> 12)); *o++ = uint8_t(0x80 | ((c >> 6) & 0x3F));
            *o++ = uint8_t(0x80 | (c & 0x3F));
        } else {
            *o++ = uint8_t(0xF0 | (c >> 18)); *o++ = uint8_t(0x80 | ((c >> 12) & 0x3F));
            *o++ = uint8_t(0x80 | ((c >> 6) & 0x3F)); *o++ = uint8_t(0x80 | (c & 0x3F));
        }
        return o;
    }

    template <class C> static inline void utf8_encode(const C* p, size_t n, Utf8Buffer& out) {
        if (out.bytes.size() < 4 * n) out.bytes.resize(4 * n);
        uint8_t* o = out.bytes.data();
        for (size_t k = 0; k < n; ++k) o = put_utf8(p[k], o);
        out.length = size_t(o - out.bytes.data());
    }

    struct EncoderCore {
        bool char_mode, whole_piece, monotonic;
        int pattern;
        uint32_t base_byte[256];
        std::vector<uint32_t> base_bmp;                     // char mode, code points < 0x10000
        std::unordered_map<uint32_t, uint32_t> base_astral; // char mode, the rest
        bool has_fallback = false;
        uint32_t fallback[256];
        PairTable pairs;
        ShortMap short_vocab;                               // whole-piece lookup
        PieceMap long_vocab;
        std::mutex pool_mutex;
        std::vector<std::unique_ptr<Worker>> idle;

        EncoderCore(bool char_mode_, int pattern_, bool whole_piece_, bool monotonic_)
            : char_mode(char_mode_), whole_piece(whole_piece_), monotonic(monotonic_), pattern(pattern_) {
            std::fill(base_byte, base_byte + 256, NO_ID);
            std::fill(fallback, fallback + 256, NO_ID);
            if (char_mode) base_bmp.assign(0x10000, NO_ID);
        }
        void set_base_byte(int byte, uint32_t id) { base_byte[byte & 0xFF] = id; }
        void set_base_char(uint32_t cp, uint32_t id) {
            if (cp < 0x10000) base_bmp[cp] = id; else base_astral[cp] = id;
        }
        void set_fallback(int byte, uint32_t id) { fallback[byte & 0xFF] = id; has_fallback = true; }
        void add_pair(uint32_t left, uint32_t right, uint32_t rank, uint32_t merged) {
            pairs.add(left, right, rank, merged);
        }
        void add_token(const char* bytes, size_t n, uint32_t id) {
            const uint8_t* key = (const uint8_t*)bytes;
            size_t count;
            if (n == 0) return;  // pieces are never empty
            if (n <= SHORT_KEY) {
                ShortKey packed;
                pack_bytes(key, n, packed);
                uint64_t h = packed.hash();
                if (!short_vocab.find(packed, h, &count)) short_vocab.insert(packed, h, &id, 1);
            } else {
                uint64_t h = hash_bytes(key, n);
                if (!long_vocab.find(key, n, h, &count)) long_vocab.insert(key, n, h, &id, 1);
            }
        }
        void finish() { pairs.build(); }

        inline uint32_t base_char(uint32_t cp) const {
            if (cp < 0x10000) return base_bmp[cp];
            auto it = base_astral.find(cp);
            return it == base_astral.end() ? NO_ID : it->second;
        }
        Worker* acquire() {
            std::lock_guard<std::mutex> guard(pool_mutex);
            if (idle.empty()) return new Worker();
            Worker* w = idle.back().release();
            idle.pop_back();
            return w;
        }
        void release(Worker* w) {
            std::lock_guard<std::mutex> guard(pool_mutex);
            if (idle.size() < MAX_IDLE_WORKERS) idle.emplace_back(w); else delete w;
        }
    };

    // Lowest (rank, position) first over a small array: tiktoken's byte_pair_merge, O(n^2).
    static void merge_short(const EncoderCore& core, Worker& w) {
        std::vector<uint32_t>& ids = w.symbols;
        std::vector<uint32_t>& ranks = w.ranks;      // ranks[i]: the pair (ids[i], ids[i+1])
        std::vector<uint32_t>& merged = w.merged;
        size_t n = ids.size();
        ranks.resize(n);
        merged.resize(n);
        // a piece that reaches this point is seldom in any CPU cache: ask for all its pairs
        // at once rather than waiting for each in turn
        for (size_t i = 0; i + 1 < n; ++i) core.pairs.prefetch(ids[i], ids[i + 1]);
        for (size_t i = 0; i + 1 < n; ++i)
            ranks[i] = core.pairs.rank_at_least(ids[i], ids[i + 1], 0, &merged[i]);
        ranks[n - 1] = NO_RANK;
        while (n > 1) {
            size_t best = 0;
            uint32_t best_rank = ranks[0];
            for (size_t i = 1; i + 1 < n; ++i)
                if (ranks[i] < best_rank) { best_rank = ranks[i]; best = i; }
            if (best_rank == NO_RANK) break;
            ids[best] = merged[best];
            // drop symbol best+1 and the pair that started at it
            size_t tail = (n - best - 2) * sizeof(uint32_t);
            std::memmove(ids.data() + best + 1, ids.data() + best + 2, tail);
            std::memmove(ranks.data() + best + 1, ranks.data() + best + 2, tail);
            std::memmove(merged.data() + best + 1, merged.data() + best + 2, tail);
            --n;
            uint32_t floor = core.monotonic ? best_rank + 1 : 0;  // replay has done rank best_rank
            ranks[best] = best + 1 < n
                ? core.pairs.rank_at_least(ids[best], ids[best + 1], floor, &merged[best]) : NO_RANK;
            if (best > 0)
                ranks[best - 1] = core.pairs.rank_at_least(ids[best - 1], ids[best], floor, &merged[best - 1]);
        }
        ids.resize(n);
    }

    // Long pieces: a linked list over positions; rank[i] is the rank of the pair that starts
    // at i (NO_RANK if none), so a queued (rank, position) entry is stale when they differ.
    struct LongPiece {
        const EncoderCore& core;
        Worker& w;
        std::vector<uint32_t>& ids;
        std::vector<uint32_t>& rank;
        std::vector<uint32_t>& next;
        std::vector<uint32_t>& prev;
        uint32_t n;
        static const uint32_t NONE = 0xFFFFFFFFu;

        LongPiece(const EncoderCore& c, Worker& worker)
            : core(c), w(worker), ids(worker.symbols), rank(worker.ranks), next(worker.next),
              prev(worker.prev), n(uint32_t(worker.symbols.size())) {
            rank.assign(n, NO_RANK);
            next.resize(n);
            prev.resize(n);
            uint32_t unused;
            for (uint32_t i = 0; i < n; ++i) {
                next[i] = i + 1;
                prev[i] = i ? i - 1 : NONE;
                if (i + 1 < n) rank[i] = core.pairs.rank_at_least(ids[i], ids[i + 1], 0, &unused);
            }
        }
        // Merges the pair at i (of rank r); calls queue(rank, position) for the two new pairs.
        template <class Queue> inline void merge_at(uint32_t i, uint32_t r, Queue&& queue) {
            uint32_t j = next[i], k = next[j], unused;
            ids[i] = core.pairs.merged_of(ids[i], ids[j]);
            next[i] = k;
            if (k < n) prev[k] = i;
            rank[j] = NO_RANK;
            uint32_t floor = core.monotonic ? r + 1 : 0;  // replay has done rank r
            rank[i] = k < n ? core.pairs.rank_at_least(ids[i], ids[k], floor, &unused) : NO_RANK;
            if (rank[i] != NO_RANK) queue(rank[i], i);
            uint32_t p = prev[i];
            if (p != NONE) {
                rank[p] = core.pairs.rank_at_least(ids[p], ids[i], floor, &unused);
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
    static void merge_long_heap(const EncoderCore& core, Worker& w) {
        LongPiece piece(core, w);
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

    // Huge pieces (a 1 MB run of one character): one bucket of positions per rank instead of
    // the heap, each walked left to right, and a pointer to the lowest rank with work left.
    // A merge at rank r never makes a pair of rank r (the new pair's value is longer than the
    // value just made, and in replay it ranks above r), so the bucket being walked never
    // grows. Replay only makes higher ranks; tiktoken's and HF's rules can make a lower one,
    // and then the walk goes down to it and later resumes the bucket it left where it stopped.
    // A bucket that got positions out of order is sorted before it is walked. O(n + ranks)
    // plus those sorts; 7x less time than the heap on 'x' * 2**20 with cl100k, 2.5x on
    // 10.8M characters of WikiText-2 with 300 replayed merges (the heap's sift-downs miss the
    // cache at every level).
    static void merge_long_buckets(const EncoderCore& core, Worker& w) {
        LongPiece piece(core, w);
        const size_t ranks = size_t(core.pairs.max_rank()) + 1;
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
            return (word << 6) + size_t(__builtin_ctzll(bits));
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

    static inline void merge_long(const EncoderCore& core, Worker& w) {
        size_t n = w.symbols.size();
        if (n >= 0xFFFFFFFFu) throw std::overflow_error("a piece of 2**32 symbols or more; encode it in parts");
        // the buckets cost O(ranks) to set up: worth it only for pieces much longer than that
        if (n >= BUCKET_PIECE && core.pairs.max_rank() < 4 * n) merge_long_buckets(core, w);
        else merge_long_heap(core, w);
    }

    // Initial symbols of a piece; false (and the code points noted) if a character is unknown.
    template <class C>
    static inline bool initial_symbols(const EncoderCore& core, Worker& w, const C* p, size_t len,
                                       const uint8_t* utf8, size_t utf8_len) {
        std::vector<uint32_t>& symbols = w.symbols;
        symbols.clear();
        if (!core.char_mode) {
            symbols.resize(utf8_len);
            for (size_t k = 0; k < utf8_len; ++k) symbols[k] = core.base_byte[utf8[k]];
            return true;
        }
        bool known = true;
        symbols.reserve(len);
        for (size_t k = 0; k < len; ++k) {
            uint32_t id = core.base_char(p[k]);
            if (id != NO_ID) {
                symbols.push_back(id);
            } else if (core.has_fallback) {
                uint8_t bytes[4];
                uint8_t* end = put_utf8(p[k], bytes);
                for (uint8_t* b = bytes; b < end; ++b) symbols.push_back(core.fallback[*b]);
            } else {
                w.unknown.push_back(p[k]);
                known = false;
            }
        }
        return known;
    }

    static inline void merge_symbols(const EncoderCore& core, Worker& w) {
        if (w.symbols.size() > SHORT_PIECE) merge_long(core, w);
        else if (w.symbols.size() > 1) merge_short(core, w);
    }

    // A piece whose UTF-8 is `key` (nearly all pieces): whole-piece lookup, cache, merging.
    template <class C>
    static inline void encode_short(const EncoderCore& core, Worker& w, const C* p, size_t len,
                                    const ShortKey& key, std::vector<uint32_t>& out) {
        uint64_t h = key.hash();
        size_t count;
        // the vocabulary first: it is shared by every thread, so none of them learns a
        // single-token piece again; the worker's cache then only holds what merging made
        const uint32_t* found = core.whole_piece ? core.short_vocab.find(key, h, &count) : nullptr;
        if (found) { out.push_back(*found); return; }
        if ((found = w.cache.find(key, h, &count))) {
            if (count == 1) out.push_back(*found);
            else out.insert(out.end(), found, found + count);
            return;
        }
        size_t start = out.size();
        if (!initial_symbols(core, w, p, len, key.bytes(), key.len)) return;
        merge_symbols(core, w);
        out.insert(out.end(), w.symbols.begin(), w.symbols.end());
        if (w.cache.entries() >= CACHE_LIMIT) w.cache.clear();
        w.cache.insert(key, h, out.data() + start, out.size() - start);
    }

    // A longer piece, given as UTF-8 (`utf8`, or nullptr in char mode when nothing needs it).
    template <class C>
    static void encode_long(const EncoderCore& core, Worker& w, const C* p, size_t len,
                            const uint8_t* utf8, size_t utf8_len, std::vector<uint32_t>& out) {
        bool cacheable = utf8 && utf8_len <= CACHE_MAX_BYTES;
        uint64_t h = cacheable || core.whole_piece ? hash_bytes(utf8, utf8_len) : 0;
        size_t count;
        const uint32_t* found = core.whole_piece ? core.long_vocab.find(utf8, utf8_len, h, &count) : nullptr;
        if (found) { out.push_back(*found); return; }
        if (cacheable && (found = w.long_cache.find(utf8, utf8_len, h, &count))) {
            out.insert(out.end(), found, found + count);
            return;
        }
        size_t start = out.size();
        if (!initial_symbols(core, w, p, len, utf8, utf8_len)) return;
        merge_symbols(core, w);
        out.insert(out.end(), w.symbols.begin(), w.symbols.end());
        if (cacheable) {
            if (w.long_cache.entries() >= CACHE_LIMIT) w.long_cache.clear();
            w.long_cache.insert(utf8, utf8_len, h, out.data() + start, out.size() - start);
        }
    }

    // Appends the ids of one piece (`ascii`: the whole text is ASCII, so p is its UTF-8).
    template <class C>
    static inline void encode_piece(const EncoderCore& core, Worker& w, const C* p, size_t len,
                                    bool ascii, std::vector<uint32_t>& out) {
        ShortKey key;
        if (pack_ascii(p, len, key)) return encode_short(core, w, p, len, key, out);
        // char mode needs no bytes for a long piece it neither caches nor looks up whole
        if (core.char_mode && !core.whole_piece && len > CACHE_MAX_BYTES)
            return encode_long(core, w, p, len, nullptr, 0, out);
        if (sizeof(C) == 1 && ascii) return encode_long(core, w, p, len, (const uint8_t*)p, len, out);
        utf8_encode(p, len, w.utf8);
        if (w.utf8.size() <= SHORT_KEY) {
            pack_bytes(w.utf8.data(), w.utf8.size(), key);
            return encode_short(core, w, p, len, key, out);
        }
        encode_long(core, w, p, len, w.utf8.data(), w.utf8.size(), out);
    }

    template <class C>
    static void encode_chars(const EncoderCore& core, Worker& w, const C* s, size_t n, bool ascii,
                             bool one_piece, std::vector<uint32_t>& out) {
        if (one_piece || core.pattern == P_NONE) {
            if (n) encode_piece(core, w, s, n, ascii, out);
            return;
        }
        out.reserve(out.size() + n / 3 + 16);  // ~4 characters per token in prose: one allocation
        Scanner<C> scanner(s, n, core.pattern);
        size_t start, end;
        while (scanner.next(start, end)) encode_piece(core, w, s + start, end - start, ascii, out);
    }

    static void encode_ref(const EncoderCore& core, Worker& w, const TextRef& t, bool one_piece,
                           std::vector<uint32_t>& out) {
        if (t.kind == 1) encode_chars(core, w, (const uint8_t*)t.data, t.length, t.ascii, one_piece, out);
        else if (t.kind == 2) encode_chars(core, w, (const uint16_t*)t.data, t.length, false, one_piece, out);
        else encode_chars(core, w, (const uint32_t*)t.data, t.length, false, one_piece, out);
    }

    // Holds a worker for the length of a call and gives it back (also on exceptions).
    struct Borrowed {
        EncoderCore& core;
        Worker* w;
        explicit Borrowed(EncoderCore& c) : core(c), w(c.acquire()) {}
        ~Borrowed() { w->unknown.clear(); core.release(w); }
    };

    static void sorted_unique(std::vector<uint32_t>& values) {
        std::sort(values.begin(), values.end());
        values.erase(std::unique(values.begin(), values.end()), values.end());
    }

    // All texts into one id list (encode_ordinary: one text; encode_pieces: each a piece).
    static void encode_concat(EncoderCore& core, const std::vector<TextRef>& texts, bool one_piece,
                              std::vector<uint32_t>& out, std::vector<uint32_t>& unknown) {
        Borrowed b(core);
        for (const TextRef& t : texts) encode_ref(core, *b.w, t, one_piece, out);
        unknown.insert(unknown.end(), b.w->unknown.begin(), b.w->unknown.end());
        sorted_unique(unknown);
    }

    // work(t) for t = 1 .. threads - 1 on new threads and work(0) on this one; returns when all end.
    template <class Work> static void on_threads(int threads, Work&& work) {
        std::vector<std::thread> pool;
        for (int t = 1; t < threads; ++t) pool.emplace_back(work, t);
        work(0);
        for (std::thread& thread : pool) thread.join();
    }

    // Each text into its own id list, on `threads` threads that take texts in turn.
    static void encode_batch(EncoderCore& core, const std::vector<TextRef>& texts, int threads,
                             std::vector<std::vector<uint32_t>>& outs, std::vector<uint32_t>& unknown) {
        outs.resize(texts.size());
        std::atomic<size_t> next_text{0};
        std::mutex mutex;
        std::exception_ptr error;
        on_threads(threads, [&](int) {
            try {
                Borrowed b(core);
                for (size_t k; (k = next_text.fetch_add(1)) < texts.size();)
                    encode_ref(core, *b.w, texts[k], false, outs[k]);
                std::lock_guard<std::mutex> guard(mutex);
                unknown.insert(unknown.end(), b.w->unknown.begin(), b.w->unknown.end());
            } catch (...) {
                std::lock_guard<std::mutex> guard(mutex);
                if (!error) error = std::current_exception();
                next_text = texts.size();  // the others stop too
            }
        });
        if (error) std::rethrow_exception(error);
        sorted_unique(unknown);
    }

    // Blocks of 256 without an early exit inside, so that the compiler vectorizes the test.
    template <class C> static bool any_surrogate(const C* s, size_t n) {
        for (size_t start = 0; start < n; start += 256) {
            size_t end = std::min(n, start + 256);
            bool found = false;
            for (size_t k = start; k < end; ++k) found |= (uint32_t(s[k]) & 0xFFFFF800u) == 0xD800;
            if (found) return true;
        }
        return false;
    }

    static bool has_surrogates(int kind, const void* data, size_t n) {
        if (kind == 2) return any_surrogate((const uint16_t*)data, n);
        if (kind == 4) return any_surrogate((const uint32_t*)data, n);
        return false;
    }

    // ids -> a Python list, sharing one int object per id (`table[id]`) instead of allocating.
    static PyObject* ids_to_list(const std::vector<uint32_t>& ids, PyObject* table) {
        PyObject* out = PyList_New(Py_ssize_t(ids.size()));
        if (!out) return nullptr;
        for (size_t k = 0; k < ids.size(); ++k) {
            PyObject* item = PyList_GET_ITEM(table, ids[k]);
            Py_INCREF(item);
            PyList_SET_ITEM(out, Py_ssize_t(k), item);
        }
        return out;
    }

    // Batch results -> Python lists, the part that runs without the GIL: each list's item
    // array gets the shared int objects of its ids, and `uses[thread][id]` counts the
    // references they gain, which `add_references` then adds holding the GIL, once per object
    // instead of once per id. The lists must be untracked by the GC until then (see
    // _batch_lists). Building lists one id at a time under the GIL was a quarter of a warm
    // batch and kept two threads under 1.7x.
    static void fill_lists(const std::vector<std::vector<uint32_t>>& outs, PyObject* const* table,
                           size_t table_size, const std::vector<PyObject**>& items, int threads,
                           std::vector<std::vector<uint32_t>>& uses) {
        uses.assign(size_t(threads), std::vector<uint32_t>(table_size, 0));
        std::atomic<size_t> next_list{0};
        on_threads(threads, [&](int t) {
            std::vector<uint32_t>& count = uses[size_t(t)];
            for (size_t k; (k = next_list.fetch_add(1)) < outs.size();) {
                const std::vector<uint32_t>& ids = outs[k];
                PyObject** out = items[k];
                for (size_t i = 0; i < ids.size(); ++i) {
                    out[i] = table[ids[i]];
                    ++count[ids[i]];
                }
            }
        });
    }

    static void add_references(PyObject* const* table, const std::vector<std::vector<uint32_t>>& uses) {
        for (const std::vector<uint32_t>& count : uses)
            for (size_t id = 0; id < count.size(); ++id)
                if (count[id]) Py_SET_REFCNT(table[id], Py_REFCNT(table[id]) + count[id]);
    }

    }  // namespace bp
    """
    cdef struct TextRef "bp::TextRef":
        int kind
        const void* data
        size_t length
        cbool ascii

    cdef cppclass EncoderCore "bp::EncoderCore":
        EncoderCore(cbool char_mode, int pattern, cbool whole_piece, cbool monotonic) except +
        void set_base_byte(int byte, uint32_t token_id)
        void set_base_char(uint32_t code_point, uint32_t token_id) except +
        void set_fallback(int byte, uint32_t token_id)
        void add_pair(uint32_t left, uint32_t right, uint32_t rank, uint32_t merged) except +
        void add_token(const char* data, size_t n, uint32_t token_id) except +
        void finish() except +

    void _encode_concat "bp::encode_concat"(EncoderCore& core, const vector[TextRef]& texts,
                                            cbool one_piece, vector[uint32_t]& out,
                                            vector[uint32_t]& unknown) except + nogil
    void _encode_batch "bp::encode_batch"(EncoderCore& core, const vector[TextRef]& texts,
                                          int threads, vector[vector[uint32_t]]& outs,
                                          vector[uint32_t]& unknown) except + nogil
    cbool _has_surrogates "bp::has_surrogates"(int kind, const void* data, size_t n) nogil
    object _ids_to_list "bp::ids_to_list"(const vector[uint32_t]& ids, object table)
    void _fill_lists "bp::fill_lists"(const vector[vector[uint32_t]]& outs, PyObject* const* table,
                                      size_t table_size, const vector[PyObject**]& items, int threads,
                                      vector[vector[uint32_t]]& uses) except + nogil
    void _add_references "bp::add_references"(PyObject* const* table, const vector[vector[uint32_t]]& uses)
    void PyObject_GC_Track(object)
    void PyObject_GC_UnTrack(object)
    PyObject** PySequence_Fast_ITEMS(object)


# Ids live in 31 bits: the pair table uses the top bit of a merged id as a flag.
MAX_ID = 2**31 - 1


class UnknownCharacters(ValueError):
    """Character-mode text holds characters with no base token and no byte fallback.

    ``characters``: the unknown characters, sorted, each once. ``Tokenizer`` turns this into
    the user-facing ``UnknownCharactersError``.
    """

    def __init__(self, characters):
        self.characters = sorted(set(characters))
        super().__init__(
            f"no base token for {self.characters!r}; add them to the base alphabet or enable "
            "byte fallback"
        )


cdef str _clean_surrogates(str text):
    """tiktoken's rule for lone surrogates: pairs joined, lone ones become U+FFFD.

    Python strs can hold surrogates that UTF-8 cannot; tiktoken re-decodes such text through
    UTF-16 (``encode("utf-16", "surrogatepass").decode("utf-16", "replace")``), and so do we,
    in both modes, so that ids agree with tiktoken and decode to valid text.
    """
    if _has_surrogates(PyUnicode_KIND(text), PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text)):
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


cdef inline TextRef _ref(str text):
    cdef TextRef ref
    ref.kind = PyUnicode_KIND(text)
    ref.data = PyUnicode_DATA(text)
    ref.length = PyUnicode_GET_LENGTH(text)
    ref.ascii = text.isascii()
    return ref


cdef str _checked_text(object text):
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, not {type(text).__name__}")
    if len(text) >= 2**32 - 1:
        raise ValueError(f"text of {len(text)} characters is too long; encode it in parts under 2**32")
    return _clean_surrogates(text)


cdef uint32_t _checked_id(object value, str what) except? 0xFFFFFFFF:
    if not isinstance(value, int) or not 0 <= value <= MAX_ID:
        raise ValueError(f"{what} must be an int in [0, 2**31), not {value!r}")
    return value


cdef class Encoder:
    """Turns text into ids for one vocabulary: the compiled half of ``Tokenizer``.

    Arguments (all keyword-only) are described in docs/internals.md. ``pair_table`` values are
    ``(rank, merged_id)``; for a pair that occurs more than once in a merge list, ``rank`` may
    be a sequence of all its ranks (replay applies the pair again at each of them).
    ``special_ids``: ids never produced from ordinary text (left out of the whole-piece lookup).

    Example:
        >>> enc = Encoder(mode="byte", token_bytes=[bytes([b]) for b in range(256)] + [b"ab"],
        ...               base_ids=list(range(256)), pair_table={(97, 98): (0, 256)},
        ...               whole_piece=False, monotonic=True, pattern="gpt2", fallback_ids=None)
        >>> enc.encode_ordinary("abc ab")
        [256, 99, 32, 256]

    NOTE: text with lone surrogates is first re-decoded like tiktoken does (pairs joined, lone
    ones replaced by U+FFFD); ``split`` shows the pieces of that text.
    """

    cdef EncoderCore* _core
    cdef list _id_objects
    cdef uint32_t _max_id
    cdef readonly str mode
    cdef readonly object pattern

    def __cinit__(self, *, mode, token_bytes, base_ids, pair_table, whole_piece, monotonic,
                  pattern, fallback_ids, special_ids=()):
        if mode not in ("char", "byte"):
            raise ValueError(f"mode must be 'char' or 'byte', not {mode!r}")
        cdef int pattern_id = _pattern_id(pattern)
        if pattern_id != P_NONE:
            _char_tables()
        self.mode = mode
        self.pattern = pattern
        self._core = new EncoderCore(mode == "char", pattern_id, bool(whole_piece), bool(monotonic))
        self._max_id = 0
        self._load_base(base_ids, fallback_ids)
        self._load_pairs(pair_table)
        if whole_piece:
            self._load_vocabulary(token_bytes, set(fallback_ids or ()) | set(special_ids))
        self._core.finish()
        self._id_objects = list(range(self._max_id + 1))

    def __dealloc__(self):
        del self._core

    cdef void _note_id(self, uint32_t token_id):
        if token_id > self._max_id:
            self._max_id = token_id

    cdef _load_base(self, base_ids, fallback_ids):
        cdef uint32_t token_id
        if self.mode == "byte":
            if len(base_ids) != 256:
                raise ValueError(f"byte mode needs 256 base ids, one per byte, not {len(base_ids)}")
            for byte, value in enumerate(base_ids):
                token_id = _checked_id(value, "a base id")
                self._core.set_base_byte(byte, token_id)
                self._note_id(token_id)
        else:
            for code_point, value in dict(base_ids).items():
                if not isinstance(code_point, int) or not 0 <= code_point < 0x110000:
                    raise ValueError(f"char-mode base_ids keys are code points, not {code_point!r}")
                token_id = _checked_id(value, "a base id")
                self._core.set_base_char(code_point, token_id)
                self._note_id(token_id)
        if fallback_ids is not None:
            if self.mode != "char" or len(fallback_ids) != 256:
                raise ValueError("fallback_ids are for char mode only and need 256 ids, one per byte")
            for byte, value in enumerate(fallback_ids):
                token_id = _checked_id(value, "a fallback id")
                self._core.set_fallback(byte, token_id)
                self._note_id(token_id)

    cdef _load_pairs(self, pair_table):
        cdef uint32_t left, right, merged
        for (left_value, right_value), (ranks, merged_value) in pair_table.items():
            left = _checked_id(left_value, "a pair's left id")
            right = _checked_id(right_value, "a pair's right id")
            merged = _checked_id(merged_value, "a pair's merged id")
            self._note_id(merged)
            for rank in ((ranks,) if isinstance(ranks, int) else ranks):
                self._core.add_pair(left, right, _checked_id(rank, "a rank"), merged)

    cdef _load_vocabulary(self, token_bytes, excluded):
        cdef uint32_t token_id
        cdef bytes value
        for index, value in enumerate(token_bytes):
            if value is None or index in excluded:
                continue
            token_id = _checked_id(index, "a token id")
            self._core.add_token(value, len(value), token_id)
            self._note_id(token_id)

    def encode_ordinary(self, text):
        """The ids of ``text``: scanned with ``pattern`` (or one piece), each piece merged.

        Raises ``UnknownCharacters`` in char mode for characters with no id.
        """
        cdef vector[TextRef] refs
        text = _checked_text(text)
        refs.push_back(_ref(text))
        return self._run_concat(refs, False)

    def encode_pieces(self, pieces):
        """The ids of already-split pieces (a custom regex split in Python), in order."""
        cdef vector[TextRef] refs
        pieces = [_checked_text(piece) for piece in pieces]
        for piece in pieces:
            refs.push_back(_ref(piece))
        return self._run_concat(refs, True)

    cdef _run_concat(self, const vector[TextRef]& refs, cbool one_piece):
        cdef vector[uint32_t] ids, unknown
        with nogil:
            _encode_concat(self._core[0], refs, one_piece, ids, unknown)
        _raise_unknown(unknown)
        return _ids_to_list(ids, self._id_objects)

    def encode_batch(self, texts, num_threads=None):
        """``[encode_ordinary(t) for t in texts]``, on up to ``num_threads`` threads (default:
        all cores), with the GIL released."""
        cdef vector[TextRef] refs
        cdef vector[vector[uint32_t]] outs
        cdef vector[uint32_t] unknown
        cdef int threads
        texts = [_checked_text(text) for text in texts]
        total = 0
        for text in texts:
            refs.push_back(_ref(text))
            total += len(text)
        import os

        wanted = (os.cpu_count() or 1) if num_threads is None else int(num_threads)
        # a thread costs about as much to start as encoding 10K characters
        threads = max(1, min(wanted, len(texts), total // 10_000 + 1))
        with nogil:
            _encode_batch(self._core[0], refs, threads, outs, unknown)
        _raise_unknown(unknown)
        return _batch_lists(outs, self._id_objects, threads)

    def encode_to_array(self, text, out_dtype="uint32"):
        """The ids of ``text`` as a numpy array of ``out_dtype`` ("uint16" or "uint32").

        Raises ``OverflowError`` if an id does not fit in ``uint16``.
        """
        import numpy

        cdef vector[TextRef] refs
        cdef vector[uint32_t] ids, unknown
        cdef size_t k, n
        cdef uint16_t[::1] small
        cdef uint32_t[::1] large
        if out_dtype not in ("uint16", "uint32"):
            raise ValueError(f"out_dtype must be 'uint16' or 'uint32', not {out_dtype!r}")
        text = _checked_text(text)
        refs.push_back(_ref(text))
        with nogil:
            _encode_concat(self._core[0], refs, False, ids, unknown)
        _raise_unknown(unknown)
        n = ids.size()
        array = numpy.empty(n, dtype=out_dtype)
        if n == 0:
            return array
        if out_dtype == "uint32":
            large = array
            memcpy(&large[0], ids.data(), n * sizeof(uint32_t))
            return array
        small = array
        for k in range(n):
            if ids[k] > 0xFFFF:
                raise OverflowError(f"token id {ids[k]} does not fit in uint16; use out_dtype='uint32'")
            small[k] = <uint16_t>ids[k]
        return array

    def split(self, text):
        """The scanner's pieces of ``text`` (after the surrogate clean-up), for debugging."""
        text = _checked_text(text)
        return _pieces(text, _pattern_id(self.pattern))


# Below this many ids in a batch, lists are built one id at a time: the per-thread use counts
# cost a pass over the whole id table.
PARALLEL_LISTS_MIN_IDS = 1 << 16


cdef list _batch_lists(const vector[vector[uint32_t]]& outs, list table, int threads):
    """One list of ints per text, sharing ``table``'s int objects; filled on ``threads``
    threads without the GIL when the batch is large (see bp::fill_lists)."""
    cdef size_t k, total = 0
    for k in range(outs.size()):
        total += outs[k].size()
    if threads < 2 or total < PARALLEL_LISTS_MIN_IDS or total >= 2**32:  # counts are 32-bit
        return [_ids_to_list(outs[k], table) for k in range(outs.size())]
    cdef list lists = []
    cdef vector[PyObject**] items
    for k in range(outs.size()):
        result = PyList_New(outs[k].size())
        # its items lack their references until _add_references: nothing may traverse it
        PyObject_GC_UnTrack(result)
        lists.append(result)
        items.push_back(PySequence_Fast_ITEMS(result))
    cdef vector[vector[uint32_t]] uses
    cdef PyObject* const* objects = PySequence_Fast_ITEMS(table)
    cdef size_t size = len(table)
    try:
        with nogil:
            _fill_lists(outs, objects, size, items, threads, uses)
    except BaseException:
        for k in range(outs.size()):  # items without their references must not be released
            if outs[k].size():
                memset(items[k], 0, outs[k].size() * sizeof(PyObject*))
        raise
    _add_references(objects, uses)
    for result in lists:
        PyObject_GC_Track(result)
    return lists


cdef _raise_unknown(const vector[uint32_t]& unknown):
    cdef size_t k
    if unknown.size():
        raise UnknownCharacters([chr(unknown[k]) for k in range(unknown.size())])
