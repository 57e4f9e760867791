#ifndef PREFS_CRASH_VFS_H
#define PREFS_CRASH_VFS_H

/// Test support for simulated power cuts: a pass-through SQLite VFS ("prefs-crash") wrapping the default one.
/// Files whose path starts with the watched prefix report each successful xSync to the callback, which records
/// the file's synced content; a test then rebuilds the files as a power cut after any sync would leave them
/// (every unsynced write dropped) and opens them normally.

/// Called after each successful xSync of a watched file, with the file's path.
typedef void (*prefs_crash_sync_callback)(const char *path);

/// Registers the VFS once (wrapping the default VFS of that moment) and makes it the default VFS. Files outside
/// the watched prefix pass through untouched. Returns an SQLite result code.
int prefs_crash_vfs_install(void);

/// Makes the wrapped VFS the default again. Connections already open through the wrapper keep working.
void prefs_crash_vfs_uninstall(void);

/// Starts (prefix and callback set) or stops (NULL) watching. The prefix is copied.
void prefs_crash_vfs_watch(const char *prefix, prefs_crash_sync_callback callback);

#endif
