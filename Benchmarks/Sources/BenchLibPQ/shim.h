#ifndef PREFS_BENCH_LIBPQ_SHIM_H
#define PREFS_BENCH_LIBPQ_SHIM_H

// libpq (Debian: libpq-dev), for the raw libpq baselines. A module of the benchmark's own: the root package's CLibPQ
// is not a product.
#if __has_include(<libpq-fe.h>)
#include <libpq-fe.h>
#else
#include <postgresql/libpq-fe.h>
#endif

#endif
