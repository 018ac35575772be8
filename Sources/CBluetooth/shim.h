#ifndef BEACON_GATEWAY_CBLUETOOTH_SHIM_H
#define BEACON_GATEWAY_CBLUETOOTH_SHIM_H

#include <sys/socket.h>
#include <sys/ioctl.h>
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

#endif
