// A malloc shim for tests/engine/test_engine_reliability.py, loaded with LD_PRELOAD: memory
// runs out for the threads a process starts, never for its main thread. In any other thread an
// allocation of 256 bytes or more fails, and once one has failed every allocation of that
// thread fails, so its first C++ exception (std::bad_alloc) finds no memory left at all.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef void* (*malloc_fn)(size_t);
typedef void* (*calloc_fn)(size_t, size_t);
typedef void* (*realloc_fn)(void*, size_t);
typedef int (*memalign_fn)(void**, size_t, size_t);
typedef void* (*aligned_fn)(size_t, size_t);

static __thread int exhausted;

static int refuse(size_t size) {
    if (syscall(SYS_gettid) == getpid()) return 0;
    if (size >= 256) exhausted = 1;
    return exhausted;
}

static void* refused(void) {
    errno = ENOMEM;
    return NULL;
}

void* malloc(size_t size) {
    static malloc_fn real;
    if (!real) real = (malloc_fn)dlsym(RTLD_NEXT, "malloc");
    if (refuse(size)) return refused();
    return real(size);
}

void* calloc(size_t n, size_t size) {
    static calloc_fn real;
    static int looking;  // dlsym may call calloc before the real one is known
    if (!real) {
        if (looking) return NULL;
        looking = 1;
        real = (calloc_fn)dlsym(RTLD_NEXT, "calloc");
        looking = 0;
    }
    if (refuse(n * size)) return refused();
    return real(n, size);
}

void* realloc(void* p, size_t size) {
    static realloc_fn real;
    if (!real) real = (realloc_fn)dlsym(RTLD_NEXT, "realloc");
    if (refuse(size)) return refused();
    return real(p, size);
}

int posix_memalign(void** p, size_t align, size_t size) {
    static memalign_fn real;
    if (!real) real = (memalign_fn)dlsym(RTLD_NEXT, "posix_memalign");
    if (refuse(size)) return ENOMEM;
    return real(p, align, size);
}

void* aligned_alloc(size_t align, size_t size) {
    static aligned_fn real;
    if (!real) real = (aligned_fn)dlsym(RTLD_NEXT, "aligned_alloc");
    if (refuse(size)) return refused();
    return real(align, size);
}
