#ifndef BEACON_GATEWAY_CBLUETOOTH_SHIM_H
#define BEACON_GATEWAY_CBLUETOOTH_SHIM_H

#include <stdint.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <sys/time.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>

// HCI_CHANNEL_USER is in the kernel's uapi but not in every BlueZ header set.
#ifndef HCI_CHANNEL_USER
#define HCI_CHANNEL_USER 1
#endif

// ioctl request numbers are macros built with _IOW(); Swift cannot import them.
static inline unsigned long cbt_hcidevdown(void) { return HCIDEVDOWN; }
static inline unsigned long cbt_hcigetdevinfo(void) { return HCIGETDEVINFO; }

// ioctl(2) is variadic; Swift cannot call it with an integer argument of the width the
// kernel reads, so pass the device number here exactly as BlueZ's hciconfig does.
static inline int cbt_hci_dev_down(int control_socket, int dev_id) {
    return ioctl(control_socket, HCIDEVDOWN, dev_id);
}

// The user channel's timestamps (SO_TIMESTAMP): the kernel stamps each packet as it
// arrives from the controller, and recvmsg(2) hands the stamp over as ancillary data
// whose macros (CMSG_*) Swift cannot import.
static inline int cbt_enable_timestamps(int fd) {
    int on = 1;
    return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMP, &on, sizeof on);
}

// One packet into `buffer` (recvmsg(2), non-blocking as the socket is); `*arrival_us` is
// the kernel's CLOCK_REALTIME stamp in microseconds, or 0 when the packet carried none.
static inline long cbt_receive_stamped(int fd, void *buffer, unsigned long length, int64_t *arrival_us) {
    struct iovec vector = { .iov_base = buffer, .iov_len = length };
    union { char bytes[CMSG_SPACE(sizeof(struct timeval))]; struct cmsghdr align; } control;
    struct msghdr message = { 0 };
    message.msg_iov = &vector;
    message.msg_iovlen = 1;
    message.msg_control = control.bytes;
    message.msg_controllen = sizeof control.bytes;
    *arrival_us = 0;
    long count = recvmsg(fd, &message, 0);
    if (count <= 0) return count;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_TIMESTAMP
            && header->cmsg_len >= CMSG_LEN(sizeof(struct timeval))) {
            struct timeval stamp;
            __builtin_memcpy(&stamp, CMSG_DATA(header), sizeof stamp);
            *arrival_us = (int64_t)stamp.tv_sec * 1000000 + stamp.tv_usec;
        }
    }
    return count;
}

#endif
