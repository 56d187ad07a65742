// Workers (one thread's scratch buffers and piece cache) and the pool that lends them out.
//
// Each encoding call borrows a worker per thread and gives it back, so that a worker's cache
// stays warm from call to call: most pieces of real text repeat, and a cached piece costs one
// hash and one probe of a table small enough to stay in the CPU's cache.
//
// Bounded memory. A burst of many threads leaves as many idle workers, each with a cache of
// up to ~14 MB (CACHE_LIMIT entries in each of its maps) and scratch buffers as large as the longest
// piece it merged; kept as they were, 64 idle workers held about 1 GB. So a returned worker
// first gives back scratch buffers beyond SCRATCH_KEEP elements, and it is kept only while the
// idle workers of every pool together (`idle_cache_bytes`) stay under the budget; otherwise it
// is freed. The budget bounds the total, not each worker.
//
// Fork safety. A fork() while another thread holds a pool's mutex would leave it locked
// forever in the child (its owner does not exist there), so the child's first encode would
// hang. pthread_atfork handlers take every pool's mutex before fork() (they are held only for
// a push or pop, never while encoding), so that each pool is consistent when copied, and give
// them back in the parent and, freshly initialized, in the child. Workers borrowed by the
// parent's other threads are simply absent from the child.
#pragma once

#include <atomic>
#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <mutex>
#include <new>
#include <vector>

#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#define BP_HAVE_ATFORK 1
#endif

#include "merge.hpp"
#include "piece_maps.hpp"
#include "threads.hpp"

namespace bp {

// Entries after which a cache is emptied (in each of a worker's two maps). 65,536 keeps the
// distinct pieces of WikiText-2 valid's text (about 30K) without a clear, and a full cache
// (~12 MB with both maps) far from the budget below. Untuned beyond that.
static const size_t CACHE_LIMIT = size_t(1) << 16;
// Pieces of more UTF-8 bytes than this are not cached (few repeat). Untuned.
static const size_t CACHE_MAX_BYTES = 64;
// Sparse caching: text whose pieces never repeat (random CJK + emoji: no hits at all) paid an
// insert per piece into a cache that grew to 4 MB, only to be emptied. So the cache's hits are
// counted over windows of CACHE_WINDOW probes; after a window with fewer than one hit in
// CACHE_SPARSE, only one piece in CACHE_SAMPLE is looked up, and inserted if it misses (the
// cache keeps learning, smaller), until a window has hits again. Untuned.
static const uint32_t CACHE_WINDOW = 4096;
static const uint32_t CACHE_SPARSE = 32;
static const uint32_t CACHE_SAMPLE = 16;
// Idle workers a pool keeps at most (besides the byte budget). Untuned.
static const size_t MAX_IDLE_WORKERS = 64;
// Scratch elements a returned worker keeps per buffer: a piece of up to 65,536 symbols (256 KB
// per buffer) is merged again without allocating; a huge piece's buffers are given back. Untuned.
static const size_t SCRATCH_KEEP = size_t(1) << 16;
// Bytes that idle workers of all pools may hold together, by default: 256 MB keeps about 20
// full caches warm, more than the cores of the machines bench/run.py has run on, where
// unbounded idle workers reached about 1 GB after a burst of 64 threads. Untuned otherwise;
// set_idle_cache_budget changes it.
static const size_t IDLE_CACHE_BUDGET = size_t(256) << 20;

// A piece's UTF-8; the buffer only grows (a vector resized down and up again zero-fills).
struct Utf8Buffer {
    std::vector<uint8_t> bytes;
    size_t length = 0;
    const uint8_t* data() const { return bytes.data(); }
    size_t size() const { return length; }
};

// The ids of single characters, merged once per worker: the parts of a cut piece are mostly
// one character (encode_part), and one load of this table replaces a hashed probe of the
// cache, which waits on two misses (the slot, then its ids). Direct-mapped by code point;
// characters of more than MAX_IDS ids are not kept. Allocated at the first use.
// 65,536 entries (1 MB): the BMP has a place per character, and emoji (U+1F300-U+1FAFF) share
// theirs with the private use area and compatibility ideographs. At 32,768 they evicted CJK
// U+7300-U+7AFF: random CJK + emoji (23K characters) encoded 5-7% faster at 65,536.
struct CharMemo {
    static const size_t SIZE = size_t(1) << 16;
    static const uint32_t MAX_IDS = 3;
    struct Entry {
        uint32_t key;  // code point | id count << 24; 0: empty (every count is at least 1)
        uint32_t ids[MAX_IDS];
    };
    std::vector<Entry, HugePageAllocator<Entry>> entries;

    // The ids of `cp` and their count, or 0 if not kept.
    inline uint32_t find(uint32_t cp, const uint32_t*& ids) const {
        if (entries.empty()) return 0;
        const Entry& e = entries[cp & (SIZE - 1)];
        if ((e.key & 0xFFFFFF) != cp || e.key == 0) return 0;
        ids = e.ids;
        return e.key >> 24;
    }
    inline void insert(uint32_t cp, const uint32_t* ids, size_t count) {
        if (count == 0 || count > MAX_IDS) return;
        if (entries.empty()) entries.assign(SIZE, Entry{0, {0, 0, 0}});
        Entry& e = entries[cp & (SIZE - 1)];
        e.key = cp | uint32_t(count) << 24;
        std::copy(ids, ids + count, e.ids);
    }
    size_t bytes() const { return entries.capacity() * sizeof(Entry); }
};

// The ids of two-character parts, merged once per worker: after single characters, the
// commonest parts of a cut piece (random CJK + emoji: 22K of its 45K distinct parts), whose
// probe of the cache waited on three misses (perf: the tag, the slot, then the ids beside).
// Here a pair is one cache line: two entries per bucket, the newer first; a pair of more than
// MAX_IDS ids is merged each time. Random CJK + emoji, warm: cl100k 3.24-3.31x -> 3.51-3.75x
// tiktoken, o200k 3.07-3.15x -> 3.66-3.88x; UDHR within the noise. Allocated at the first use.
struct CharPairMemo {
    static const unsigned BUCKET_BITS = 14;  // 16,384 buckets of 64 bytes: 1 MB, 32,768 pairs
    static const uint32_t MAX_IDS = 6;
    static const uint64_t PAIR_MASK = (uint64_t(1) << 42) - 1;
    struct Entry {
        uint64_t key = 0;  // first << 21 | second | id count << 56; 0: empty (a count is >= 1)
        uint32_t ids[MAX_IDS] = {0, 0, 0, 0, 0, 0};
    };
    struct alignas(64) Bucket {
        Entry way[2];
    };
    std::vector<Bucket, HugePageAllocator<Bucket>> buckets;

    static inline uint64_t pair_of(uint32_t first, uint32_t second) { return uint64_t(first) << 21 | second; }
    static inline size_t bucket_of(uint64_t pair) { return size_t((pair * 0x9E3779B97F4A7C15ull) >> (64 - BUCKET_BITS)); }

    // The ids of the two code points and their count, or 0 if not kept.
    inline uint32_t find(uint32_t first, uint32_t second, const uint32_t*& ids) const {
        if (buckets.empty()) return 0;
        uint64_t pair = pair_of(first, second);
        const Bucket& b = buckets[bucket_of(pair)];
        for (const Entry& e : b.way)
            if (e.key && (e.key & PAIR_MASK) == pair) {
                ids = e.ids;
                return uint32_t(e.key >> 56);
            }
        return 0;
    }
    // Keeps the pair's ids (the bucket's older entry gives way); false if they are too many.
    inline bool insert(uint32_t first, uint32_t second, const uint32_t* ids, size_t count) {
        if (count == 0 || count > MAX_IDS) return false;
        if (buckets.empty()) buckets.assign(size_t(1) << BUCKET_BITS, Bucket{});
        uint64_t pair = pair_of(first, second);
        Bucket& b = buckets[bucket_of(pair)];
        b.way[1] = b.way[0];
        b.way[0].key = pair | uint64_t(count) << 56;
        std::copy(ids, ids + count, b.way[0].ids);
        return true;
    }
    size_t bytes() const { return buckets.capacity() * sizeof(Bucket); }
};

// One thread's scratch space and piece cache; on its own cache lines (no false sharing with
// another thread's worker).
struct alignas(64) Worker {
    ShortMap cache;                 // pieces of up to SHORT_KEY bytes
    PieceMap long_cache;            // longer ones, up to CACHE_MAX_BYTES
    WordMap words;                  // char mode's cut parts of 4-8 ASCII characters (encode_cut)
    CharMemo chars;                 // byte mode's cut parts of one character (encode_part)
    CharPairMemo char_pairs;        // and of two characters
    Utf8Buffer utf8;
    Utf8Buffer part_utf8;           // a part of a cut piece (encode_part), while `utf8` holds the piece
    MergeScratch scratch;
    std::vector<uint32_t> ids;      // one text's or span's ids before they are copied out
    std::vector<uint32_t> unknown;  // code points with no base id, in this call
    size_t accounted = 0;           // bytes counted in idle_cache_bytes while idle
    uint32_t probes = 0, hits = 0;  // of `cache`, in this window (CACHE_WINDOW)
    uint32_t skipped = 0;           // while sparse: pieces since the last probe
    bool sparse = false;            // the last window had almost no hits

    // Notes a probe of `cache`.
    inline void count_probe(bool hit) {
        hits += hit;
        if (++probes < CACHE_WINDOW) return;
        sparse = hits * CACHE_SPARSE < CACHE_WINDOW;
        probes = hits = 0;
    }
    // Whether to probe `cache` for this piece (and insert it on a miss): while sparse, one
    // piece in CACHE_SAMPLE (the window then counts those probes only), since a probe of a
    // cache that almost never hits costs a memory miss per piece for nothing.
    inline bool probe_cache() { return !sparse || ++skipped % CACHE_SAMPLE == 0; }

    size_t bytes() const {
        return sizeof(Worker) + cache.bytes() + long_cache.bytes() + words.bytes() + chars.bytes() + char_pairs.bytes() + utf8.bytes.capacity() + part_utf8.bytes.capacity() +
               scratch.bytes() + (ids.capacity() + unknown.capacity()) * sizeof(uint32_t);
    }
    void trim() noexcept {
        scratch.trim(SCRATCH_KEEP);
        for (Utf8Buffer* buffer : {&utf8, &part_utf8}) {
            if (buffer->bytes.capacity() <= 4 * SCRATCH_KEEP) continue;
            std::vector<uint8_t>().swap(buffer->bytes);
            buffer->length = 0;
        }
        if (ids.capacity() > SCRATCH_KEEP) std::vector<uint32_t>().swap(ids);
        if (unknown.capacity() > SCRATCH_KEEP) std::vector<uint32_t>().swap(unknown);
        unknown.clear();
    }
};

inline std::atomic<size_t> idle_cache_bytes{0};
inline std::atomic<size_t> idle_cache_budget{IDLE_CACHE_BUDGET};

class WorkerPool;

// Every live pool, for the fork handlers.
struct PoolRegistry {
    std::mutex mutex;
    std::vector<WorkerPool*> pools;
};
inline PoolRegistry& pool_registry() {
    static PoolRegistry* registry = new PoolRegistry();  // never destroyed: outlives every pool
    return *registry;
}
inline void install_fork_handlers();

class WorkerPool {
  public:
    WorkerPool() {
        install_fork_handlers();
        idle_.reserve(MAX_IDLE_WORKERS);  // so that release() never allocates
        PoolRegistry& registry = pool_registry();
        std::lock_guard<std::mutex> guard(registry.mutex);
        registry.pools.push_back(this);
    }
    ~WorkerPool() {
        {
            PoolRegistry& registry = pool_registry();
            std::lock_guard<std::mutex> guard(registry.mutex);
            for (size_t k = 0; k < registry.pools.size(); ++k)
                if (registry.pools[k] == this) {
                    registry.pools[k] = registry.pools.back();
                    registry.pools.pop_back();
                    break;
                }
        }
        for (Worker* w : idle_) {
            idle_cache_bytes -= w->accounted;
            delete w;
        }
    }
    WorkerPool(const WorkerPool&) = delete;
    WorkerPool& operator=(const WorkerPool&) = delete;

    // An idle worker, or a new one (may throw std::bad_alloc).
    Worker* acquire() {
        ready_for_exceptions();  // the thread's encode may end in std::bad_alloc (threads.hpp)
        {
            std::lock_guard<std::mutex> guard(mutex_);
            if (!idle_.empty()) {
                Worker* w = idle_.back();
                idle_.pop_back();
                idle_cache_bytes -= w->accounted;
                w->accounted = 0;
                return w;
            }
        }
        return new Worker();
    }

    // Takes a worker back: kept idle within the budget, freed otherwise. Never throws.
    void release(Worker* w) noexcept {
        w->trim();
        size_t bytes = w->bytes();
        {
            std::lock_guard<std::mutex> guard(mutex_);
            if (idle_.size() < idle_.capacity() &&
                idle_cache_bytes.load() + bytes <= idle_cache_budget.load()) {
                w->accounted = bytes;
                idle_cache_bytes += bytes;
                idle_.push_back(w);  // within capacity: no allocation
                return;
            }
        }
        delete w;
    }

    // The pool's lock, for the fork handlers and the native tests (which hold it across fork).
    std::mutex& mutex() { return mutex_; }

    size_t idle_workers() {
        std::lock_guard<std::mutex> guard(mutex_);
        return idle_.size();
    }

    // fork() handlers (see the note at the top): all pools' mutexes, registry first.
    static void before_fork() {
        PoolRegistry& registry = pool_registry();
        registry.mutex.lock();
        for (WorkerPool* pool : registry.pools) pool->mutex_.lock();
    }
    static void after_fork_in_parent() {
        PoolRegistry& registry = pool_registry();
        for (WorkerPool* pool : registry.pools) pool->mutex_.unlock();
        registry.mutex.unlock();
    }
    static void after_fork_in_child() {
        // the child's only thread did not lock these in its own name: make them new
        PoolRegistry& registry = pool_registry();
        for (WorkerPool* pool : registry.pools) new (&pool->mutex_) std::mutex();
        new (&registry.mutex) std::mutex();
    }

  private:
    std::mutex mutex_;
    std::vector<Worker*> idle_;
};

inline void install_fork_handlers() {
#ifdef BP_HAVE_ATFORK
    static std::once_flag once;
    std::call_once(once, [] {
        pthread_atfork(WorkerPool::before_fork, WorkerPool::after_fork_in_parent,
                       WorkerPool::after_fork_in_child);
    });
#endif
}

// Sets the byte budget of idle workers (all pools together); returns the previous one.
// Idle workers already over a lowered budget are freed as they are next borrowed and returned.
inline size_t set_idle_cache_budget(size_t bytes) { return idle_cache_budget.exchange(bytes); }

// Holds a worker for the length of a call and gives it back (also on exceptions).
struct Borrowed {
    WorkerPool& pool;
    Worker* w;
    explicit Borrowed(WorkerPool& p) : pool(p), w(p.acquire()) {}
    ~Borrowed() { pool.release(w); }
    Borrowed(const Borrowed&) = delete;
    Borrowed& operator=(const Borrowed&) = delete;
};

}  // namespace bp
