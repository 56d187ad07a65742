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

#if defined(__linux__)
#include <sys/mman.h>
#define BP_HUGE_PAGES 1
#endif

#if defined(__GNUC__) || defined(__clang__)
#define BP_PREFETCH(address) __builtin_prefetch(address)
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

// An allocator for the big lookup tables (pair table, whole-piece table, a full piece cache):
// on Linux, blocks of 2 MB or more are 2 MB-aligned and asked to be backed by huge pages
// (madvise, honoured when transparent huge pages are "madvise" or "always"), so that random
// probes of a table of several MB do not also miss the TLB on nearly every probe (perf on
// random CJK text: most of the encode time on the first load of a slot). Elsewhere, or when
// smaller, plain operator new.
template <class T> struct HugePageAllocator {
    using value_type = T;
    static constexpr size_t HUGE_PAGE = size_t(1) << 21;
    HugePageAllocator() = default;
    template <class U> HugePageAllocator(const HugePageAllocator<U>&) {}
    T* allocate(size_t n) {
#ifdef BP_HUGE_PAGES
        size_t bytes = n * sizeof(T);
        if (bytes >= HUGE_PAGE) {
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
        if (n * sizeof(T) >= HUGE_PAGE) return std::free(p);
#endif
        std::allocator<T>().deallocate(p, n);
    }
    template <class U> bool operator==(const HugePageAllocator<U>&) const { return true; }
    template <class U> bool operator!=(const HugePageAllocator<U>&) const { return false; }
};

}  // namespace bp
