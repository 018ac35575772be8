#ifndef BEACON_GATEWAY_CLINUX_SHIM_H
#define BEACON_GATEWAY_CLINUX_SHIM_H

// Not _GNU_SOURCE: it changes shared types (fd_set) and the module would clash with
// the others that include the same system headers. accept4 is declared as glibc does.
#include <sys/socket.h>
#include <sys/timex.h>

extern int accept4(int fd, struct sockaddr *addr, socklen_t *addr_len, int flags);

// accept4(2): the client socket non-blocking and close-on-exec from the start.
static inline int clinux_accept_nonblocking(int listener) {
    return accept4(listener, 0, 0, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

// adjtimex(2) with no change requested: 1 while the kernel considers the clock
// synchronised, 0 when it reports TIME_ERROR (not synchronised), -1 on failure.
static inline int clinux_clock_synchronised(void) {
    struct timex state = {0};
    int result = adjtimex(&state);
    if (result < 0) return -1;
    return result == TIME_ERROR ? 0 : 1;
}

#endif
