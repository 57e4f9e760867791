#ifndef PREFS_BENCH_SQLITE_SHIM_H
#define PREFS_BENCH_SQLITE_SHIM_H

// The system SQLite (Debian: libsqlite3-dev), for the raw sqlite3 baseline. A module of the benchmark's own: the root
// package's CSQLite is not a product.
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import.
static inline sqlite3_destructor_type prefs_bench_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

#endif
