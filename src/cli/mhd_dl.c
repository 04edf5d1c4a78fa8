/* Loads libmicrohttpd for `gpuwhy serve` (see mhd_dl.h). Empty in a build without serve
 * (-DGW_SERVE=OFF: no header). */
#ifdef GW_HAVE_MHD
#include "cli/mhd_dl.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* Debian 12's libmicrohttpd12 first; the unversioned name where a distribution ships
 * another soname with its development files. */
static const char *const LIBRARY_NAMES[] = {"libmicrohttpd.so.12", "libmicrohttpd.so"};

/* POSIX allows converting dlsym's object pointer to a function pointer; memcpy keeps
 * -Wpedantic quiet about it. */
static int resolve(void *lib, const char *name, void *fn_slot, size_t fn_size, char *err, size_t err_len)
{
    void *sym = dlsym(lib, name);
    if (!sym) {
        snprintf(err, err_len, "libmicrohttpd has no %s (too old? apt-get install libmicrohttpd12)", name);
        return -1;
    }
    memcpy(fn_slot, &sym, fn_size);
    return 0;
}

const gw_mhd_api *gw_mhd_load(char *err, size_t err_len)
{
    static gw_mhd_api api;
    static int loaded;
    if (loaded)
        return &api;
    void *lib = NULL;
    for (size_t i = 0; i < sizeof LIBRARY_NAMES / sizeof LIBRARY_NAMES[0] && !lib; i++)
        lib = dlopen(LIBRARY_NAMES[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        snprintf(err, err_len, "cannot load libmicrohttpd (%s): apt-get install libmicrohttpd12",
                 why ? why : "not found");
        return NULL;
    }
    gw_mhd_api found;
#define RESOLVE(field, name) resolve(lib, name, &found.field, sizeof found.field, err, err_len)
    if (RESOLVE(start_daemon, "MHD_start_daemon") != 0 || RESOLVE(stop_daemon, "MHD_stop_daemon") != 0 ||
        RESOLVE(create_response_from_buffer, "MHD_create_response_from_buffer") != 0 ||
        RESOLVE(add_response_header, "MHD_add_response_header") != 0 ||
        RESOLVE(destroy_response, "MHD_destroy_response") != 0 ||
        RESOLVE(queue_response, "MHD_queue_response") != 0) {
        (void)dlclose(lib); /* failing anyway: a close error changes nothing */
        return NULL;
    }
#undef RESOLVE
    api = found;
    loaded = 1; /* the library stays loaded for the process: the daemon's thread runs in it */
    return &api;
}
#else
typedef int gw_mhd_dl_unused; /* ISO C wants a translation unit to declare something */
#endif
