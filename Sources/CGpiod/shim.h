#ifndef BEACON_GATEWAY_CGPIOD_SHIM_H
#define BEACON_GATEWAY_CGPIOD_SHIM_H
#include <gpiod.h>
#endif
