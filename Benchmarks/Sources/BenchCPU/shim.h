#ifndef PREFS_BENCH_CPU_SHIM_H
#define PREFS_BENCH_CPU_SHIM_H

// A thread's or process's CPU affinity, for the PostgreSQL workload's one-client rows: Swift's Glibc module does not
// import sched_setaffinity (it is behind _GNU_SOURCE), so the two calls are declared here as glibc exports them.
// A mask of the first 64 CPUs; -1 and 0 where there is no such call.

#if defined(__linux__)
#include <sys/types.h>
int sched_setaffinity(pid_t pid, unsigned long cpusetsize, const void *mask);
int sched_getaffinity(pid_t pid, unsigned long cpusetsize, void *mask);
#endif

static inline int prefs_bench_set_cpus(int tid, unsigned long long mask) {
#if defined(__linux__)
    unsigned long long words[16] = {mask};
    return sched_setaffinity(tid, sizeof words, words);
#else
    return -1;
#endif
}

static inline unsigned long long prefs_bench_cpus(int tid) {
#if defined(__linux__)
    unsigned long long words[16] = {0};
    return sched_getaffinity(tid, sizeof words, words) == 0 ? words[0] : 0;
#else
    return 0;
#endif
}

#endif
