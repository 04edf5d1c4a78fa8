/* Framing and sending for the job's end of the hand-over (see handover_writer.h). */
#include "inject/handover_writer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "inject/gw_handover.h"

void gw_ho_writer_init(gw_ho_writer *w, uint32_t pid)
{
    memset(w, 0, sizeof *w);
    w->fd = -1;
    w->pid = pid;
}

int gw_ho_writer_connect(gw_ho_writer *w, const char *path, int send_timeout_ms)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof addr.sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(addr.sun_path, path);
    /* CLOEXEC: programs the job execs are not ours to trace through this connection. */
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct timeval tv = {.tv_sec = send_timeout_ms / 1000, .tv_usec = (send_timeout_ms % 1000) * 1000};
    if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0 ||
        connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    gw_ho_writer_adopt_fd(w, fd);
    return 0;
}

void gw_ho_writer_adopt_fd(gw_ho_writer *w, int fd)
{
    w->fd = fd;
}

void gw_ho_writer_close(gw_ho_writer *w)
{
    if (w->fd >= 0)
        close(w->fd);
    w->fd = -1;
    free(w->sent_names);
    w->sent_names = NULL;
    w->sent_name_count = 0;
}

int gw_ho_writer_ok(const gw_ho_writer *w)
{
    return w->fd >= 0;
}

static void mark_broken(gw_ho_writer *w)
{
    if (w->fd >= 0)
        close(w->fd);
    w->fd = -1;
}

/* Writes every byte of iov[0..n), resuming after partial writes. */
static int send_all(gw_ho_writer *w, struct iovec *iov, int n)
{
    while (n > 0) {
        struct msghdr msg = {.msg_iov = iov, .msg_iovlen = (size_t)n};
        ssize_t put = sendmsg(w->fd, &msg, MSG_NOSIGNAL);
        if (put < 0 && errno == ENOTSOCK)
            put = writev(w->fd, iov, n);  /* a pipe (tests): the caller owns SIGPIPE then */
        if (put < 0) {
            if (errno == EINTR)
                continue;
            return -1;  /* includes EAGAIN from the send timeout: gpuwhy is not reading */
        }
        size_t left = (size_t)put;
        while (n > 0 && left >= iov->iov_len) {
            left -= iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + left;
            iov->iov_len -= left;
        }
    }
    return 0;
}

static int write_parts(gw_ho_writer *w, uint16_t type, struct iovec *parts, int nparts)
{
    if (w->fd < 0)
        return -1;
    size_t total = 0;
    for (int i = 0; i < nparts; i++)
        total += parts[i].iov_len;
    if (total > GW_HO_MAX_PAYLOAD)
        return -1;
    gw_ho_header h = {.magic = GW_HO_MAGIC, .version = GW_HO_VERSION, .type = type, .pid = w->pid,
                      .payload_len = (uint32_t)total};
    struct iovec iov[8];
    iov[0] = (struct iovec){.iov_base = &h, .iov_len = sizeof h};
    int n = 1;
    for (int i = 0; i < nparts && n < 8; i++)
        if (parts[i].iov_len)
            iov[n++] = parts[i];
    if (send_all(w, iov, n) != 0) {
        mark_broken(w);
        return -1;
    }
    w->frames_sent++;
    return 0;
}

int gw_ho_write_frame(gw_ho_writer *w, uint16_t type, const void *a, size_t alen, const void *b, size_t blen)
{
    struct iovec parts[2] = {{.iov_base = (void *)a, .iov_len = alen}, {.iov_base = (void *)b, .iov_len = blen}};
    return write_parts(w, type, parts, 2);
}

/* 1 when address was already sent; otherwise remembers it and returns 0. */
static int name_seen(gw_ho_writer *w, uint64_t address)
{
    if (!w->sent_names) {
        w->sent_names = calloc(GW_HO_NAME_CACHE, sizeof *w->sent_names);
        if (!w->sent_names)
            return 0;
    }
    if (w->sent_name_count * 4 >= GW_HO_NAME_CACHE * 3) {
        memset(w->sent_names, 0, GW_HO_NAME_CACHE * sizeof *w->sent_names);
        w->sent_name_count = 0;
    }
    size_t i = (size_t)((address >> 3) * 0x9E3779B97F4A7C15ULL) & (GW_HO_NAME_CACHE - 1);
    while (w->sent_names[i]) {
        if (w->sent_names[i] == address)
            return 1;
        i = (i + 1) & (GW_HO_NAME_CACHE - 1);
    }
    w->sent_names[i] = address;
    w->sent_name_count++;
    return 0;
}

int gw_ho_write_string(gw_ho_writer *w, uint64_t address, const char *text, int once)
{
    if (address == 0 || !text)
        return 0;
    if (once && name_seen(w, address))
        return 0;
    size_t len = strnlen(text, 65536);
    return gw_ho_write_frame(w, GW_HO_STRING, &address, sizeof address, text, len);
}

int gw_ho_write_buffer(gw_ho_writer *w, const uint8_t *records, size_t valid, const uint32_t *offsets,
                       uint32_t count)
{
    uint32_t head[2] = {count, 0};
    static const uint8_t zeros[8] = {0};
    size_t off_bytes = (size_t)count * sizeof *offsets;
    size_t pad = (8 - (sizeof head + off_bytes) % 8) % 8;
    struct iovec parts[4] = {
        {.iov_base = head, .iov_len = sizeof head},
        {.iov_base = (void *)offsets, .iov_len = off_bytes},
        {.iov_base = (void *)zeros, .iov_len = pad},
        {.iov_base = (void *)records, .iov_len = valid},
    };
    if (write_parts(w, GW_HO_BUFFER, parts, 4) != 0)
        return -1;
    w->records_sent += count;
    w->buffers_sent++;
    return 0;
}
