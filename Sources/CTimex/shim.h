#ifndef BEACON_GATEWAY_CTIMEX_SHIM_H
#define BEACON_GATEWAY_CTIMEX_SHIM_H
// adjtimex(2) and its status bits (glibc; no library beyond libc). Glibc's Swift module
// leaves <sys/timex.h> out.
#include <sys/timex.h>

// Whether the kernel reports the system clock as synchronised: 1 yes, 0 no, -1 the call
// failed. A read (modes = 0); the struct stays on this side of the shim.
static inline int ctimex_clock_synchronised(void) {
    struct timex state = {0};
    int result = adjtimex(&state);
    if (result < 0) return -1;
    return (result == TIME_ERROR || (state.status & STA_UNSYNC)) ? 0 : 1;
}
#endif
