#ifndef PREFS_CSQLITE_SHIM_H
#define PREFS_CSQLITE_SHIM_H

#include <sqlite3.h>

/// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import.
/// Binding with it makes SQLite copy the bytes before the call returns.
static inline sqlite3_destructor_type prefs_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

/// sqlite3_db_config is variadic, which Swift cannot call. Stops the checkpoint SQLite runs when the last connection
/// closes, which would copy the write-ahead log into the database file.
static inline int prefs_sqlite_keep_wal_on_close(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)0);
}

#endif
