#ifndef PREFS_CLIBPQ_SHIM_H
#define PREFS_CLIBPQ_SHIM_H

// libpq, PostgreSQL's client library (Debian: libpq-dev, headers in /usr/include/postgresql).
// Only PrefsPostgreSQL imports this module: an app that does not use the PostgreSQL store never links libpq.
#if __has_include(<libpq-fe.h>)
#include <libpq-fe.h>
#else
#include <postgresql/libpq-fe.h>
#endif

#endif
