#ifndef PREFS_CLMDB_SHIM_H
#define PREFS_CLMDB_SHIM_H

/// LMDB (Debian liblmdb-dev), for prefs-bench only: the fast key-value store a user might pick for speed,
/// measured beside Prefs. No library target links it.
#include <lmdb.h>

#endif
