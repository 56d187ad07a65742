// Compiler builtins behind macros, each with a portable fallback.
//
// The engine is written for GCC and Clang, which is what CPython extensions are built with on
// Linux and macOS; another compiler gets the plain-C++ fallbacks below, which are correct and
// only slower. Nothing else in engine/ names a __builtin directly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#define BP_HUGE_PAGES 1
#endif

#if defined(__GNUC__) || defined(__clang__)
// The empty volatile asm keeps the hint. GCC 12 counts a prefetch as free of side effects, so
// a helper whose only effect is a prefetch under a condition is a const function to it, and
// every call whose result is unused is dead: the pair table's prefetch never reached the merges
// (bench/RESULTS.md, "Prefetches that were not there").
#define BP_PREFETCH(address)           \
    do {                               \
        __builtin_prefetch(address);   \
        __asm__ __volatile__("");      \
    } while (0)
#define BP_LIKELY(x) __builtin_expect(!!(x), 1)
#define BP_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define BP_NOINLINE __attribute__((noinline))
#define BP_ALWAYS_INLINE __attribute__((always_inline)) inline
#else
#define BP_PREFETCH(address) ((void)(address))
#define BP_LIKELY(x) (x)
#define BP_UNLIKELY(x) (x)
#define BP_NOINLINE
#define BP_ALWAYS_INLINE inline
#endif

namespace bp {

// The index of the lowest set bit of `bits`, which must not be 0.
inline unsigned count_trailing_zeros(uint64_t bits) {
#if defined(__GNUC__) || defined(__clang__)
    return unsigned(__builtin_ctzll(bits));
#else
    unsigned n = 0;
    while (!(bits & 1)) { bits >>= 1; ++n; }
    return n;
#endif
}

// Asks for huge pages under [p, p + bytes) where that holds whole 2 MB pages, before the
// block is first written: a large output (a text's ids, its Python list) otherwise takes one
// page fault per 4 KB in a fresh process. Random CJK + emoji, cl100k, first call in a fresh
// child (median of 24): 6,581 faults and 41.1 ms before, 3,470 and 40.0 with this hint on the
// ids and the list, 2,655 and 36.9 with the allocator below too. A hint; a no-op elsewhere.
inline void advise_huge_pages(void* p, size_t bytes) {
#ifdef BP_HUGE_PAGES
    const uintptr_t huge = uintptr_t(1) << 21;
    uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + huge - 1) & ~(huge - 1);
    uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(huge - 1);
    if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}

// An allocator for the big lookup tables (pair table, whole-piece table, the piece cache, the
// memos of characters): on Linux, blocks of 512 KB or more take whole 2 MB pages, aligned and
// asked to be backed by huge pages (madvise, honoured when transparent huge pages are
// "madvise" or "always"), so that random probes of a table of several MB do not also miss the
// TLB on nearly every probe (perf on random CJK text: most of the encode time on the first
// load of a slot), and a fresh process fills a table with a fault per 2 MB, not per 4 KB
// (the piece cache's growth and the memos were 1,500 of the 3,700 faults of a first call on
// random CJK + emoji). A block of 512 KB to 2 MB so holds up to 1.5 MB more than it uses.
// Elsewhere, or when smaller, plain operator new.
template <class T> struct HugePageAllocator {
    using value_type = T;
    static constexpr size_t HUGE_PAGE = size_t(1) << 21;
    static constexpr size_t HUGE_FROM = HUGE_PAGE / 4;  // smallest block on huge pages
    HugePageAllocator() = default;
    template <class U> HugePageAllocator(const HugePageAllocator<U>&) {}
    T* allocate(size_t n) {
#ifdef BP_HUGE_PAGES
        size_t bytes = n * sizeof(T);
        if (bytes >= HUGE_FROM) {
            size_t rounded = (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
            void* p = nullptr;
            if (posix_memalign(&p, HUGE_PAGE, rounded) != 0) throw std::bad_alloc();
            madvise(p, rounded, MADV_HUGEPAGE);  // a hint: failing leaves ordinary pages
            return static_cast<T*>(p);
        }
#endif
        return std::allocator<T>().allocate(n);
    }
    void deallocate(T* p, size_t n) noexcept {
#ifdef BP_HUGE_PAGES
        if (n * sizeof(T) >= HUGE_FROM) return std::free(p);
#endif
        std::allocator<T>().deallocate(p, n);
    }
    template <class U> bool operator==(const HugePageAllocator<U>&) const { return true; }
    template <class U> bool operator!=(const HugePageAllocator<U>&) const { return false; }
};

// An allocator whose resize(n) leaves the new elements unset, for a buffer that is written
// before it is read. A piece's first symbols went into a vector cleared and then resized: the
// zeroing was a memset call per new piece, 2.2-3.9% of a warm UDHR call on o200k (perf).
// With it, UDHR's first call (fastest of 9 children, three rounds): cl100k 95.8-97.5 ->
// 91.6-95.8 ms, o200k 115.0-117.7 -> 111.5-113.7.
template <class T> struct UnsetAllocator : std::allocator<T> {
    template <class U> struct rebind {
        using other = UnsetAllocator<U>;
    };
    UnsetAllocator() = default;
    template <class U> UnsetAllocator(const UnsetAllocator<U>&) {}
    template <class U> void construct(U* p) noexcept { ::new (static_cast<void*>(p)) U; }
    template <class U, class... Args> void construct(U* p, Args&&... args) {
        ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
};

}  // namespace bp
