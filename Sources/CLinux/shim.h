#ifndef BEACON_GATEWAY_CLINUX_SHIM_H
#define BEACON_GATEWAY_CLINUX_SHIM_H

// Not _GNU_SOURCE: it changes shared types (fd_set) and the module would clash with
// the others that include the same system headers. accept4 is declared as glibc does.
#include <sys/socket.h>

extern int accept4(int fd, struct sockaddr *addr, socklen_t *addr_len, int flags);

// accept4(2): the client socket non-blocking and close-on-exec from the start.
static inline int clinux_accept_nonblocking(int listener) {
    return accept4(listener, 0, 0, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

#endif
