/* --listen of `gpuwhy serve`; see serve_listen.h. */
#include "cli/serve_listen.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Room for Prometheus's and every browser's connections arriving at once. */
#define LISTEN_BACKLOG 256

static int bind_listen(int family, const struct sockaddr *addr, socklen_t len, bool dual_stack)
{
    /* Non-blocking: a client that resets between poll and accept must not stall the server. */
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    int one = 1, zero = 0;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        (dual_stack && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero) != 0) ||
        bind(fd, addr, len) != 0 || listen(fd, LISTEN_BACKLOG) != 0) {
        int error = errno;
        (void)close(fd);   /* already failing; the bind error is the one to report */
        errno = error;
        return -1;
    }
    return fd;
}

/* ":PORT": [::] with IPv4 mapped in; 0.0.0.0 on a host without IPv6. */
static int listen_everywhere(unsigned short port)
{
    struct sockaddr_in6 a6;
    memset(&a6, 0, sizeof a6);
    a6.sin6_family = AF_INET6;
    a6.sin6_addr = in6addr_any;
    a6.sin6_port = htons(port);
    int fd = bind_listen(AF_INET6, (const struct sockaddr *)&a6, sizeof a6, true);
    if (fd >= 0 || (errno != EAFNOSUPPORT && errno != EADDRNOTAVAIL))
        return fd;
    struct sockaddr_in a4;
    memset(&a4, 0, sizeof a4);
    a4.sin_family = AF_INET;
    a4.sin_addr.s_addr = htonl(INADDR_ANY);
    a4.sin_port = htons(port);
    return bind_listen(AF_INET, (const struct sockaddr *)&a4, sizeof a4, false);
}

int gw_serve_listen(const char *address, char *msg, size_t msg_size, int *usage)
{
    *usage = 1;
    char host[256];
    const char *port;
    if (address[0] == '[') {
        const char *bracket = strchr(address, ']');
        if (!bracket || bracket[1] != ':' || (size_t)(bracket - address - 1) >= sizeof host) {
            snprintf(msg, msg_size, "--listen '%s': give [ADDRESS]:PORT, e.g. [::1]:%s", address, GW_SERVE_DEFAULT_PORT);
            return -1;
        }
        memcpy(host, address + 1, (size_t)(bracket - address - 1));
        host[bracket - address - 1] = '\0';
        port = bracket + 2;
    } else {
        const char *colon = strrchr(address, ':');
        if (!colon || (size_t)(colon - address) >= sizeof host || memchr(address, ':', (size_t)(colon - address))) {
            snprintf(msg, msg_size, "--listen '%s': give ADDRESS:PORT or :PORT (every interface), e.g. %s",
                     address, GW_SERVE_DEFAULT_LISTEN);
            return -1;
        }
        memcpy(host, address, (size_t)(colon - address));
        host[colon - address] = '\0';
        port = colon + 1;
    }
    char *end = NULL;
    long port_number = strtol(port, &end, 10);
    if (!*port || !end || *end || port_number < 0 || port_number > 65535) {
        snprintf(msg, msg_size, "--listen '%s': '%s' is not a port number", address, port);
        return -1;
    }
    if (!host[0] && address[0] != '[') {
        *usage = 0;
        int fd = listen_everywhere((unsigned short)port_number);
        if (fd < 0)
            snprintf(msg, msg_size, "cannot listen on %s: %s", address, strerror(errno));
        return fd;
    }
    if (strcmp(host, "localhost") == 0)
        snprintf(host, sizeof host, "127.0.0.1");
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
    int gai = getaddrinfo(host, port, &hints, &res);
    if (gai != 0) {
        snprintf(msg, msg_size, "--listen '%s': '%s' is not an IP address (%s); use :PORT for every interface",
                 address, host, gai_strerror(gai));
        return -1;
    }
    *usage = 0;
    int fd = bind_listen(res->ai_family, res->ai_addr, res->ai_addrlen, false);
    if (fd < 0)
        snprintf(msg, msg_size, "cannot listen on %s: %s", address, strerror(errno));
    freeaddrinfo(res);
    return fd;
}
