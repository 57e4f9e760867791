// A pass-through SQLite VFS that reports syncs of watched files; see include/crash_vfs.h.
// In the spirit of SQLite's own test_vfstrace.c and crash tests (src/test6.c), reduced to what the power-cut
// simulation needs: it never changes what SQLite reads or writes.
#include "crash_vfs.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct CrashFile {
    sqlite3_file base;
    sqlite3_file *real;  // the wrapped VFS's file, allocated right after this struct
    char *path;          // set only for watched files
} CrashFile;

static sqlite3_vfs crash_vfs;
static sqlite3_vfs *real_vfs;
static pthread_once_t registered = PTHREAD_ONCE_INIT;
static int register_result = SQLITE_OK;
static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static char *watched_prefix;
static prefs_crash_sync_callback watched_callback;

#define REAL(file) (((CrashFile *)(file))->real)

static int crash_close(sqlite3_file *file) {
    CrashFile *crash = (CrashFile *)file;
    int rc = crash->real->pMethods->xClose(crash->real);
    free(crash->path);
    crash->path = NULL;
    return rc;
}
static int crash_read(sqlite3_file *f, void *b, int n, sqlite3_int64 o) { return REAL(f)->pMethods->xRead(REAL(f), b, n, o); }
static int crash_write(sqlite3_file *f, const void *b, int n, sqlite3_int64 o) { return REAL(f)->pMethods->xWrite(REAL(f), b, n, o); }
static int crash_truncate(sqlite3_file *f, sqlite3_int64 size) { return REAL(f)->pMethods->xTruncate(REAL(f), size); }
static int crash_sync(sqlite3_file *file, int flags) {
    CrashFile *crash = (CrashFile *)file;
    int rc = crash->real->pMethods->xSync(crash->real, flags);
    if (rc == SQLITE_OK && crash->path) {
        pthread_mutex_lock(&watch_lock);
        prefs_crash_sync_callback callback = watched_callback;
        pthread_mutex_unlock(&watch_lock);
        if (callback) callback(crash->path);
    }
    return rc;
}
static int crash_file_size(sqlite3_file *f, sqlite3_int64 *size) { return REAL(f)->pMethods->xFileSize(REAL(f), size); }
static int crash_lock(sqlite3_file *f, int level) { return REAL(f)->pMethods->xLock(REAL(f), level); }
static int crash_unlock(sqlite3_file *f, int level) { return REAL(f)->pMethods->xUnlock(REAL(f), level); }
static int crash_check_reserved(sqlite3_file *f, int *out) { return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out); }
static int crash_file_control(sqlite3_file *f, int op, void *arg) { return REAL(f)->pMethods->xFileControl(REAL(f), op, arg); }
static int crash_sector_size(sqlite3_file *f) { return REAL(f)->pMethods->xSectorSize(REAL(f)); }
static int crash_device(sqlite3_file *f) { return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f)); }
static int crash_shm_map(sqlite3_file *f, int region, int size, int extend, void volatile **out) {
    return REAL(f)->pMethods->xShmMap(REAL(f), region, size, extend, out);
}
static int crash_shm_lock(sqlite3_file *f, int offset, int n, int flags) { return REAL(f)->pMethods->xShmLock(REAL(f), offset, n, flags); }
static void crash_shm_barrier(sqlite3_file *f) { REAL(f)->pMethods->xShmBarrier(REAL(f)); }
static int crash_shm_unmap(sqlite3_file *f, int delete_flag) { return REAL(f)->pMethods->xShmUnmap(REAL(f), delete_flag); }
static int crash_fetch(sqlite3_file *f, sqlite3_int64 o, int n, void **out) { return REAL(f)->pMethods->xFetch(REAL(f), o, n, out); }
static int crash_unfetch(sqlite3_file *f, sqlite3_int64 o, void *p) { return REAL(f)->pMethods->xUnfetch(REAL(f), o, p); }

static const sqlite3_io_methods crash_io = {
    3, crash_close, crash_read, crash_write, crash_truncate, crash_sync, crash_file_size, crash_lock, crash_unlock,
    crash_check_reserved, crash_file_control, crash_sector_size, crash_device, crash_shm_map, crash_shm_lock,
    crash_shm_barrier, crash_shm_unmap, crash_fetch, crash_unfetch,
};

static int crash_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *out_flags) {
    (void)vfs;
    CrashFile *crash = (CrashFile *)file;
    crash->real = (sqlite3_file *)&crash[1];
    crash->path = NULL;
    int rc = real_vfs->xOpen(real_vfs, name, crash->real, flags, out_flags);
    if (rc != SQLITE_OK) {
        // SQLite calls xClose when pMethods is set, even after a failed open: forward it to the real file then.
        crash->base.pMethods = crash->real->pMethods ? &crash_io : NULL;
        return rc;
    }
    if (crash->real->pMethods->iVersion < 3) {  // the default VFS is version 3 everywhere SQLite runs with WAL
        crash->real->pMethods->xClose(crash->real);
        crash->base.pMethods = NULL;
        return SQLITE_CANTOPEN;
    }
    if (name) {
        pthread_mutex_lock(&watch_lock);
        if (watched_prefix && strncmp(name, watched_prefix, strlen(watched_prefix)) == 0) crash->path = strdup(name);
        pthread_mutex_unlock(&watch_lock);
    }
    crash->base.pMethods = &crash_io;
    return SQLITE_OK;
}

static void register_once(void) {
    real_vfs = sqlite3_vfs_find(NULL);
    if (!real_vfs) { register_result = SQLITE_ERROR; return; }
    crash_vfs = *real_vfs;  // every other method (delete, access, full path, time, …) is the real one's, with its pAppData
    crash_vfs.pNext = NULL;
    crash_vfs.zName = "prefs-crash";
    crash_vfs.szOsFile = (int)sizeof(CrashFile) + real_vfs->szOsFile;
    crash_vfs.xOpen = crash_open;
    register_result = sqlite3_vfs_register(&crash_vfs, 1);
}

int prefs_crash_vfs_install(void) {
    pthread_once(&registered, register_once);
    if (register_result != SQLITE_OK) return register_result;
    return sqlite3_vfs_register(&crash_vfs, 1);
}

void prefs_crash_vfs_uninstall(void) {
    if (real_vfs) sqlite3_vfs_register(real_vfs, 1);
}

void prefs_crash_vfs_watch(const char *prefix, prefs_crash_sync_callback callback) {
    pthread_mutex_lock(&watch_lock);
    free(watched_prefix);
    watched_prefix = prefix ? strdup(prefix) : NULL;
    watched_callback = callback;
    pthread_mutex_unlock(&watch_lock);
}
