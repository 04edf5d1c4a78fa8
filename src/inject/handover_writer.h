/* The job's end of the hand-over protocol (gw_handover.h): framing and sending over the
 * socket gpuwhy named. No CUPTI here, so the unit tests drive the very same code. Writes
 * never raise SIGPIPE (a dead gpuwhy must not kill the job) and give up after a send
 * timeout (a stopped gpuwhy must not hang the job's exit); after any failure the writer is
 * "broken": it sends nothing more and the caller counts what it could not send. */
#ifndef GW_INJECT_HANDOVER_WRITER_H
#define GW_INJECT_HANDOVER_WRITER_H

#include <stddef.h>
#include <stdint.h>

/* Kernel names are sent once per address; this many remembered, then forgotten (resending
 * a name is harmless, remembering unboundedly is not). */
#define GW_HO_NAME_CACHE 65536u

typedef struct gw_ho_writer {
    int fd;                        /* owned; -1 when not connected or broken */
    uint32_t pid;
    uint64_t records_sent, buffers_sent, frames_sent;
    uint64_t *sent_names;          /* owned: open-addressing set of name addresses, 0 empty */
    size_t sent_name_count;
} gw_ho_writer;

void gw_ho_writer_init(gw_ho_writer *w, uint32_t pid);
/* Connects to the Unix socket at path; send_timeout_ms bounds each blocked send.
 * 0, or -1 (errno set). */
int gw_ho_writer_connect(gw_ho_writer *w, const char *path, int send_timeout_ms);
/* Uses an already open descriptor (a socketpair or pipe in tests). Takes ownership. */
void gw_ho_writer_adopt_fd(gw_ho_writer *w, int fd);
void gw_ho_writer_close(gw_ho_writer *w);
int gw_ho_writer_ok(const gw_ho_writer *w);

/* Sends one frame made of two payload parts (either may be empty). 0 or -1 (broken). */
int gw_ho_write_frame(gw_ho_writer *w, uint16_t type, const void *a, size_t alen, const void *b, size_t blen);
/* A string the records point to. `once`: skip when this address was already sent (kernel
 * names are shared by every launch of the kernel; marker names are not). */
int gw_ho_write_string(gw_ho_writer *w, uint64_t address, const char *text, int once);
/* An activity buffer: record offsets (increasing, 8-aligned) and the bytes. */
int gw_ho_write_buffer(gw_ho_writer *w, const uint8_t *records, size_t valid, const uint32_t *offsets,
                       uint32_t count);

#endif
