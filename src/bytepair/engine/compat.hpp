// Compiler builtins behind macros, each with a portable fallback.
//
// The engine is written for GCC and Clang, which is what CPython extensions are built with on
// Linux and macOS; another compiler gets the plain-C++ fallbacks below, which are correct and
// only slower. Nothing else in engine/ names a __builtin directly.
#pragma once

#include <cstdint>

#if defined(__GNUC__) || defined(__clang__)
#define BP_PREFETCH(address) __builtin_prefetch(address)
#define BP_LIKELY(x) __builtin_expect(!!(x), 1)
#define BP_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define BP_PREFETCH(address) ((void)(address))
#define BP_LIKELY(x) (x)
#define BP_UNLIKELY(x) (x)
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

}  // namespace bp
