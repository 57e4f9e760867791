#include "CCurlShim.h"

#if defined(__linux__)
#include <dlfcn.h>
#include <pthread.h>

typedef void *(*easy_init_fn)(void);
typedef void (*easy_cleanup_fn)(void *);
typedef int (*easy_setopt_fn)(void *, int, ...);
typedef int (*easy_perform_fn)(void *);
typedef int (*easy_getinfo_fn)(void *, int, ...);
typedef void *(*slist_append_fn)(void *, const char *);
typedef void (*slist_free_all_fn)(void *);
typedef const char *(*easy_strerror_fn)(int);
typedef int (*global_init_fn)(long);

static struct {
    easy_init_fn easy_init;
    easy_cleanup_fn easy_cleanup;
    easy_setopt_fn easy_setopt;
    easy_perform_fn easy_perform;
    easy_getinfo_fn easy_getinfo;
    slist_append_fn slist_append;
    slist_free_all_fn slist_free_all;
    easy_strerror_fn easy_strerror;
    int available;
} curl;

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!library) library = dlopen("libcurl.so", RTLD_NOW | RTLD_LOCAL);
    if (!library) return;
    global_init_fn global_init = (global_init_fn)dlsym(library, "curl_global_init");
    curl.easy_init = (easy_init_fn)dlsym(library, "curl_easy_init");
    curl.easy_cleanup = (easy_cleanup_fn)dlsym(library, "curl_easy_cleanup");
    curl.easy_setopt = (easy_setopt_fn)dlsym(library, "curl_easy_setopt");
    curl.easy_perform = (easy_perform_fn)dlsym(library, "curl_easy_perform");
    curl.easy_getinfo = (easy_getinfo_fn)dlsym(library, "curl_easy_getinfo");
    curl.slist_append = (slist_append_fn)dlsym(library, "curl_slist_append");
    curl.slist_free_all = (slist_free_all_fn)dlsym(library, "curl_slist_free_all");
    curl.easy_strerror = (easy_strerror_fn)dlsym(library, "curl_easy_strerror");
    if (!global_init || !curl.easy_init || !curl.easy_cleanup || !curl.easy_setopt || !curl.easy_perform
        || !curl.easy_getinfo || !curl.slist_append || !curl.slist_free_all || !curl.easy_strerror) return;
    // CURL_GLOBAL_ALL (3); a no-op when FoundationNetworking already did it.
    if (global_init(3L) != 0) return;
    curl.available = 1;
}

int prefs_curl_available(void) {
    pthread_once(&once, load);
    return curl.available;
}

void *prefs_curl_easy_init(void) { return prefs_curl_available() ? curl.easy_init() : NULL; }
void prefs_curl_easy_cleanup(void *handle) { if (handle) curl.easy_cleanup(handle); }
int prefs_curl_setopt_long(void *handle, int option, long value) { return curl.easy_setopt(handle, option, value); }
int prefs_curl_setopt_pointer(void *handle, int option, const void *value) { return curl.easy_setopt(handle, option, value); }
int prefs_curl_setopt_data_callback(void *handle, int option, prefs_curl_data_callback callback) {
    return curl.easy_setopt(handle, option, callback);
}
int prefs_curl_setopt_progress_callback(void *handle, int option, prefs_curl_progress_callback callback) {
    return curl.easy_setopt(handle, option, callback);
}
int prefs_curl_easy_perform(void *handle) { return curl.easy_perform(handle); }
int prefs_curl_getinfo_long(void *handle, int info, long *value) { return curl.easy_getinfo(handle, info, value); }
int prefs_curl_getinfo_string(void *handle, int info, const char **value) { return curl.easy_getinfo(handle, info, value); }
void *prefs_curl_slist_append(void *list, const char *string) { return curl.slist_append(list, string); }
void prefs_curl_slist_free_all(void *list) { if (list) curl.slist_free_all(list); }
const char *prefs_curl_strerror(int code) { return curl.easy_strerror(code); }

#else

int prefs_curl_available(void) { return 0; }
void *prefs_curl_easy_init(void) { return NULL; }
void prefs_curl_easy_cleanup(void *handle) { (void)handle; }
int prefs_curl_setopt_long(void *handle, int option, long value) { (void)handle; (void)option; (void)value; return 2; }
int prefs_curl_setopt_pointer(void *handle, int option, const void *value) { (void)handle; (void)option; (void)value; return 2; }
int prefs_curl_setopt_data_callback(void *handle, int option, prefs_curl_data_callback callback) { (void)handle; (void)option; (void)callback; return 2; }
int prefs_curl_setopt_progress_callback(void *handle, int option, prefs_curl_progress_callback callback) { (void)handle; (void)option; (void)callback; return 2; }
int prefs_curl_easy_perform(void *handle) { (void)handle; return 2; }
int prefs_curl_getinfo_long(void *handle, int info, long *value) { (void)handle; (void)info; (void)value; return 2; }
int prefs_curl_getinfo_string(void *handle, int info, const char **value) { (void)handle; (void)info; (void)value; return 2; }
void *prefs_curl_slist_append(void *list, const char *string) { (void)list; (void)string; return NULL; }
void prefs_curl_slist_free_all(void *list) { (void)list; }
const char *prefs_curl_strerror(int code) { (void)code; return "libcurl is not used on this platform"; }

#endif
