#ifndef PREFS_CCURLSHIM_H
#define PREFS_CCURLSHIM_H

#include <stddef.h>

// The few libcurl calls DialogGate's feed loader makes on Linux, through function pointers that dlopen finds in
// the libcurl FoundationNetworking already loads: no curl headers, no -dev package, and libcurl's variadic
// curl_easy_setopt called from C, where varargs are passed correctly. Option and info numbers are curl's stable ABI.

typedef size_t (*prefs_curl_data_callback)(char *data, size_t size, size_t count, void *context);
typedef int (*prefs_curl_progress_callback)(void *context, long long download_total, long long download_now,
                                            long long upload_total, long long upload_now);

/// 1 when libcurl was loaded and initialised (once, thread-safely), else 0.
int prefs_curl_available(void);
void *prefs_curl_easy_init(void);
void prefs_curl_easy_cleanup(void *handle);
int prefs_curl_setopt_long(void *handle, int option, long value);
int prefs_curl_setopt_pointer(void *handle, int option, const void *value);
int prefs_curl_setopt_data_callback(void *handle, int option, prefs_curl_data_callback callback);
int prefs_curl_setopt_progress_callback(void *handle, int option, prefs_curl_progress_callback callback);
int prefs_curl_easy_perform(void *handle);
int prefs_curl_getinfo_long(void *handle, int info, long *value);
int prefs_curl_getinfo_string(void *handle, int info, const char **value);
void *prefs_curl_slist_append(void *list, const char *string);
void prefs_curl_slist_free_all(void *list);
const char *prefs_curl_strerror(int code);

#endif
