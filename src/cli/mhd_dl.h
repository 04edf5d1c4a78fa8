/* libmicrohttpd for `gpuwhy serve`, loaded with dlopen when serve starts rather than linked:
 * the library brings GnuTLS, p11-kit, nettle, GMP and libidn2 with it, ~3 MiB of resident
 * memory in every gpuwhy process (analyze, run, attach) that never serves HTTP. The header
 * gives the types and constants; these are the few functions serve calls. */
#ifndef GW_CLI_MHD_DL_H
#define GW_CLI_MHD_DL_H

#include <stddef.h>
#include <stdint.h>

#include <microhttpd.h>

typedef struct gw_mhd_api {
    struct MHD_Daemon *(*start_daemon)(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc,
                                       void *apc_cls, MHD_AccessHandlerCallback dh, void *dh_cls, ...);
    void (*stop_daemon)(struct MHD_Daemon *daemon);
    struct MHD_Response *(*create_response_from_buffer)(size_t size, void *buffer,
                                                         enum MHD_ResponseMemoryMode mode);
    enum MHD_Result (*add_response_header)(struct MHD_Response *response, const char *header,
                                           const char *content);
    void (*destroy_response)(struct MHD_Response *response);
    enum MHD_Result (*queue_response)(struct MHD_Connection *connection, unsigned int status_code,
                                      struct MHD_Response *response);
} gw_mhd_api;

/* The library's functions (loaded once, kept for the process), or NULL with why in err
 * (which library could not be loaded, or which function it lacks). Not thread-safe: serve
 * calls it before it starts its threads. */
const gw_mhd_api *gw_mhd_load(char *err, size_t err_len);

#endif
