/*
 * hci-attach TTY [SECONDS]: puts TTY into the kernel's HCI UART line discipline (N_HCI)
 * with the H4 protocol, as `btattach -P h4` does, so hci_uart registers an hciN backed by
 * whatever is at the other end of the tty (in the rig: the virtual world's controller on
 * the host, through a virtio console).
 *
 * The kernel then powers the new adapter on by itself and runs its own init (Reset,
 * version, features, buffer sizes, event masks, ...), which the world's controller must
 * answer before any user channel is possible. Through the HCI monitor channel (what btmon
 * reads) this program watches that exchange for up to SECONDS (default 30) and prints
 *
 *   hciN
 *   hciN init: C commands, A answered, F failed[: OPCODE=STATUS ...]
 *   hciN up | hciN not up: ...
 *
 * then holds the tty open: hciN lives exactly as long as this process (SIGTERM/SIGINT).
 *
 * Built on the host by Tests/Kernel/conftest.py; runs in the guest (same root).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>

/* From the kernel's drivers/bluetooth/hci_uart.h, include/uapi/linux/tty.h and
 * include/net/bluetooth/hci_mon.h: not in bluez's installed headers. */
#define N_HCI 15
#define HCIUARTSETPROTO _IOW('U', 200, int)
#define HCIUARTGETDEVICE _IOR('U', 202, int)
#define HCI_UART_H4 0
#define MONITOR_COMMAND 2
#define MONITOR_EVENT 3
#define EVENT_COMMAND_COMPLETE 0x0e
#define EVENT_COMMAND_STATUS 0x0f

static volatile sig_atomic_t stop;

static void on_signal(int signo) {
    (void)signo;
    stop = 1;
}

static int fail(const char *what, const char *path) {
    fprintf(stderr, "hci-attach: %s %s: %s\n", what, path, strerror(errno));
    return 1;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int open_monitor(void) {
    int sock = socket(AF_BLUETOOTH, SOCK_RAW | SOCK_CLOEXEC, BTPROTO_HCI);
    if (sock < 0) return -1;
    struct sockaddr_hci address;
    memset(&address, 0, sizeof address);
    address.hci_family = AF_BLUETOOTH;
    address.hci_dev = HCI_DEV_NONE;
    address.hci_channel = HCI_CHANNEL_MONITOR;
    if (bind(sock, (struct sockaddr *)&address, sizeof address) < 0) {
        close(sock);
        return -1;
    }
    return sock;
}

/* HCI_INIT in hdev->flags while the kernel's init runs. (HCI_UP is no use: the kernel
 * hides it while the 2 s auto-power-off of an unmanaged adapter is pending.) */
static int in_init(int index) {
    int sock = socket(AF_BLUETOOTH, SOCK_RAW | SOCK_CLOEXEC, BTPROTO_HCI);
    if (sock < 0) return 1;
    struct hci_dev_info info;
    memset(&info, 0, sizeof info);
    info.dev_id = (uint16_t)index;
    int busy = ioctl(sock, HCIGETDEVINFO, &info) < 0 || (info.flags & (1u << HCI_INIT)) != 0;
    close(sock);
    return busy;
}

struct init_trace {
    int commands, answered, failed;
    char failures[512];
};

/* One monitor record: 6-byte header (opcode, index, length, little endian), payload. */
static void trace(struct init_trace *t, int index, const uint8_t *record, ssize_t size) {
    if (size < 6) return;
    int opcode = record[0] | record[1] << 8, dev = record[2] | record[3] << 8;
    const uint8_t *p = record + 6;
    ssize_t n = size - 6;
    if (dev != index) return;
    if (opcode == MONITOR_COMMAND && n >= 3) {
        t->commands++;
        return;
    }
    if (opcode != MONITOR_EVENT || n < 2) return;
    int status, command;
    if (p[0] == EVENT_COMMAND_COMPLETE && n >= 6) {
        command = p[3] | p[4] << 8;
        status = p[5];
    } else if (p[0] == EVENT_COMMAND_STATUS && n >= 6) {
        status = p[2];
        command = p[4] | p[5] << 8;
    } else {
        return;
    }
    if (command == 0) return; /* a credit-only event, not an answer */
    t->answered++;
    if (status != 0) {
        t->failed++;
        size_t used = strlen(t->failures);
        if (used + 16 < sizeof t->failures)
            snprintf(t->failures + used, sizeof t->failures - used, " 0x%04x=0x%02x", command, status);
    }
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "/dev/hvc0";
    double seconds = argc > 2 ? atof(argv[2]) : 30;
    int monitor = open_monitor();
    if (monitor < 0) return fail("HCI monitor socket for", path);

    int fd = open(path, O_RDWR | O_NOCTTY);
    if (fd < 0) return fail("open", path);
    /* Raw bytes: no echo, no line editing, no CR/LF translation of HCI packets. */
    struct termios tio;
    if (tcgetattr(fd, &tio) == 0) {
        cfmakeraw(&tio);
        if (tcsetattr(fd, TCSANOW, &tio) < 0) return fail("tcsetattr", path);
    }
    tcflush(fd, TCIOFLUSH);

    int ldisc = N_HCI;
    if (ioctl(fd, TIOCSETD, &ldisc) < 0) return fail("TIOCSETD N_HCI on", path);
    if (ioctl(fd, HCIUARTSETPROTO, HCI_UART_H4) < 0) return fail("HCIUARTSETPROTO H4 on", path);
    int index = ioctl(fd, HCIUARTGETDEVICE, 0);
    if (index < 0) return fail("HCIUARTGETDEVICE on", path);
    printf("hci%d\n", index);
    fflush(stdout);

    /* Done when the kernel has sent commands, every one is answered, and HCI_INIT is clear. */
    struct init_trace t = {0};
    uint8_t record[2048];
    double deadline = now() + seconds;
    int done = 0;
    while (!done && now() < deadline) {
        struct pollfd pfd = {.fd = monitor, .events = POLLIN};
        if (poll(&pfd, 1, 100) > 0) {
            ssize_t size = read(monitor, record, sizeof record);
            if (size > 0) trace(&t, index, record, size);
            continue;
        }
        done = t.commands > 0 && t.answered >= t.commands && !in_init(index);
    }
    close(monitor);
    printf("hci%d init: %d commands, %d answered, %d failed%s%s\n", index, t.commands, t.answered, t.failed,
           t.failed ? ":" : "", t.failures);
    if (done && t.failed == 0) printf("hci%d up\n", index);
    else printf("hci%d not up after %.0f s\n", index, seconds);
    fflush(stdout);

    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_signal;
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGINT, &action, NULL);
    while (!stop) pause();
    close(fd);
    return 0;
}
