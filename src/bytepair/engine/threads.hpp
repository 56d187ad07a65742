// Running one job on several threads, safely: the one thread pool helper of the engine.
//
// Used by batch encoding, by building a batch's Python lists, by counting pieces and by
// loading a vocabulary (side_by_side). Each of them hands out its items through `share_out`'s
// shared counter, so any number of threads (one included) finishes the whole job; that is
// what lets `on_threads` degrade instead of failing:
// - The OS may refuse a thread (a container's pids limit, RLIMIT_NPROC, address space for the
//   stack): std::thread then throws std::system_error. The threads already started, and the
//   calling thread, do the work; the process is never aborted.
// - An exception in a worker (std::bad_alloc above all) must not reach the end of the thread,
//   where it would call std::terminate: the first one is kept and rethrown on the calling
//   thread after every worker has joined, so Cython's `except +` turns it into MemoryError.
// Plain std::threads per call rather than a persistent pool: a thread costs about as much to
// start as encoding 10K characters (the Python side starts no more than the text is worth),
// and a pool of parked threads would be one more thing to make safe across fork().
#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace bp {

// Makes the calling thread's C++ exception state exist now, before it does any work. libstdc++
// keeps that state in thread-local storage, which glibc allocates for a library loaded at run
// time on the thread's first exception; when that first exception is std::bad_alloc, the
// allocation fails as well and glibc ends the process ("cannot allocate memory for thread-local
// data: ABORT", exit 127). A worker's first exception is exactly that one when memory runs out:
// under RLIMIT_AS with 12-20 MB to spare, about 1 run in 30 ended so; under a malloc shim that
// starves worker threads, every run (tests/engine/test_engine_reliability.py). WorkerPool::
// acquire (worker_pool.hpp) does the same for a thread that encodes alone. The count goes to
// a volatile: the function is declared pure, and an unused call of it is dropped.
inline void ready_for_exceptions() noexcept {
    volatile int uncaught = std::uncaught_exceptions();
    (void)uncaught;
}

// work(t) for t = 1 .. threads - 1 on new threads and work(0) on this one; returns when all
// have ended, with the number of threads that ran (fewer than asked if the OS refused some).
// Rethrows the first exception any of them threw.
template <class Work> int on_threads(int threads, Work&& work) {
    std::mutex mutex;
    std::exception_ptr error;
    auto guarded = [&](int t) {
        ready_for_exceptions();
        try {
            work(t);
        } catch (...) {
            std::lock_guard<std::mutex> guard(mutex);
            if (!error) error = std::current_exception();
        }
    };
    std::vector<std::thread> pool;
    int started = 1;
    try {
        pool.reserve(size_t(threads > 1 ? threads - 1 : 0));
        for (int t = 1; t < threads; ++t) {
            pool.emplace_back(guarded, t);
            ++started;
        }
    } catch (...) {
        // std::system_error (no thread for us) or std::bad_alloc: run with those we have
    }
    guarded(0);
    for (std::thread& thread : pool) thread.join();
    if (error) std::rethrow_exception(error);
    return started;
}

// work(t, next) on up to `threads` threads, as on_threads, where `next(k)` hands out the items
// 0 .. n - 1 in turn, each to one thread, and returns false once none is left. After an
// exception in one thread the others take no further item; the exception reaches the caller.
template <class Work> int share_out(int threads, size_t n, Work&& work) {
    std::atomic<size_t> next_item{0};
    auto next = [&](size_t& k) { return (k = next_item.fetch_add(1)) < n; };
    return on_threads(threads, [&](int t) {
        try {
            work(t, next);
        } catch (...) {
            next_item = n;  // the others stop too
            throw;          // on_threads carries it to the caller
        }
    });
}

// first() and second(), on two threads if the OS gives one, else one after the other here.
template <class First, class Second> void side_by_side(First&& first, Second&& second) {
    share_out(2, 2, [&](int, auto& next) {
        for (size_t k; next(k);) k == 0 ? first() : second();
    });
}

}  // namespace bp
