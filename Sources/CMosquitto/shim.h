#ifndef BEACON_GATEWAY_CMOSQUITTO_SHIM_H
#define BEACON_GATEWAY_CMOSQUITTO_SHIM_H
#include <mosquitto.h>
#include <mqtt_protocol.h>
#endif
