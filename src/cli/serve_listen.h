/* The listening socket of `gpuwhy serve` from its --listen text, with the Go exporters'
 * meaning: ":PORT" is every interface (IPv6 and IPv4 when the host has IPv6), "HOST:PORT"
 * one numeric address ("127.0.0.1:19400", "[::1]:19400") or "localhost". Names other than
 * localhost are refused rather than resolved: an exporter must not listen somewhere a DNS
 * answer chose. */
#ifndef GW_CLI_SERVE_LISTEN_H
#define GW_CLI_SERVE_LISTEN_H

#include <stddef.h>

/* The default: dcgm-exporter's 9400 moved out of the exporters' range 9100-9999 (full, and
 * 9400 is dcgm-exporter's) and below the kernel's ephemeral ports (32768+); loopback only. */
#define GW_SERVE_DEFAULT_PORT "19400"
#define GW_SERVE_DEFAULT_LISTEN "127.0.0.1:" GW_SERVE_DEFAULT_PORT

/* Returns a bound, listening, non-blocking socket, or -1 with the reason in msg (a usage
 * error: *usage = 1; the system refused: *usage = 0). */
int gw_serve_listen(const char *address, char *msg, size_t msg_size, int *usage);

#endif
