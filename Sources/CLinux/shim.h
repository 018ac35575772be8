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

// SO_PEERCRED and SO_PEERGROUPS (socket(7), Linux 4.13): who is at the other end of a
// UNIX socket, as of its connect(). struct ucred is a GNU extension: the same layout here.
#ifndef SO_PEERCRED
#define SO_PEERCRED 17
#endif
#ifndef SO_PEERGROUPS
#define SO_PEERGROUPS 59
#endif

// The peer's pid, uid and gid; 0, or -1 with errno.
static inline int clinux_peer_credentials(int fd, int *pid, unsigned int *uid, unsigned int *gid) {
    struct { int pid; unsigned int uid; unsigned int gid; } credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -1;
    if (length != sizeof credentials) return -1;
    *pid = credentials.pid;
    *uid = credentials.uid;
    *gid = credentials.gid;
    return 0;
}

// The peer's supplementary groups into `groups` (room for `capacity`): how many, or -1
// with errno (ERANGE: more than `capacity`).
static inline int clinux_peer_groups(int fd, unsigned int *groups, int capacity) {
    socklen_t length = (socklen_t)capacity * sizeof(unsigned int);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &length) != 0) return -1;
    return (int)(length / sizeof(unsigned int));
}

#endif
