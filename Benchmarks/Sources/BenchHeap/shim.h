#ifndef PREFS_BENCH_HEAP_SHIM_H
#define PREFS_BENCH_HEAP_SHIM_H

// The bytes malloc has handed out and not yet had back, for the memory workload's bytes per key: VmHWM counts pages,
// too coarse for a store of 1,000 keys. glibc's mallinfo2 (which Swift's Glibc module does not import); -1 elsewhere.
#if defined(__GLIBC__) || __has_include(<malloc.h>)
#include <malloc.h>
#endif

static inline long long prefs_bench_heap_in_use(void) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 info = mallinfo2();
    return (long long)(info.uordblks + info.hblkhd);
#else
    return -1;
#endif
}

#endif
