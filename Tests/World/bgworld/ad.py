"""Advertising-data (AD structure) builders for the virtual tags (Core Supplement, Part A)."""

from __future__ import annotations

import struct
import uuid as uuidlib

AD_FLAGS = 0x01
AD_COMPLETE_16BIT_UUIDS = 0x03
AD_SHORTENED_LOCAL_NAME = 0x08
AD_COMPLETE_LOCAL_NAME = 0x09
AD_TX_POWER_LEVEL = 0x0A
AD_SERVICE_DATA_16BIT = 0x16
AD_MANUFACTURER_SPECIFIC = 0xFF

FLAGS_LE_GENERAL_DISCOVERABLE = 0x02
FLAGS_BR_EDR_NOT_SUPPORTED = 0x04

COMPANY_APPLE = 0x004C
IBEACON_TYPE = 0x02
IBEACON_LENGTH = 0x15
EDDYSTONE_SERVICE_UUID = 0xFEAA
EDDYSTONE_FRAME_UID = 0x00

LEGACY_ADV_DATA_MAX = 31


def structure(ad_type: int, value: bytes) -> bytes:
    if len(value) + 1 > 255:
        raise ValueError("AD structure too long")
    return bytes((len(value) + 1, ad_type)) + value


def flags(value: int = FLAGS_LE_GENERAL_DISCOVERABLE | FLAGS_BR_EDR_NOT_SUPPORTED) -> bytes:
    return structure(AD_FLAGS, bytes((value,)))


def ibeacon(uuid: str, major: int, minor: int, measured_power: int) -> bytes:
    """Flags + Apple iBeacon manufacturer data: 30 bytes, as real iBeacons send."""
    payload = (
        struct.pack("<H", COMPANY_APPLE)
        + bytes((IBEACON_TYPE, IBEACON_LENGTH))
        + uuidlib.UUID(uuid).bytes
        + struct.pack(">HHb", major, minor, measured_power)
    )
    return flags() + structure(AD_MANUFACTURER_SPECIFIC, payload)


def eddystone_uid(namespace_hex: str, instance_hex: str, tx_power_at_0m: int) -> bytes:
    namespace = bytes.fromhex(namespace_hex)
    instance = bytes.fromhex(instance_hex)
    if len(namespace) != 10 or len(instance) != 6:
        raise ValueError("Eddystone-UID needs a 10-byte namespace and a 6-byte instance")
    frame = (
        struct.pack("<H", EDDYSTONE_SERVICE_UUID)
        + struct.pack("<Bb", EDDYSTONE_FRAME_UID, tx_power_at_0m)
        + namespace
        + instance
        + bytes(2)  # RFU
    )
    return (
        flags()
        + structure(AD_COMPLETE_16BIT_UUIDS, struct.pack("<H", EDDYSTONE_SERVICE_UUID))
        + structure(AD_SERVICE_DATA_16BIT, frame)
    )


def named(name: str, tx_power: int | None = None) -> bytes:
    data = flags()
    if tx_power is not None:
        data += structure(AD_TX_POWER_LEVEL, struct.pack("<b", tx_power))
    encoded = name.encode("utf-8")
    room = LEGACY_ADV_DATA_MAX - len(data) - 2
    if len(encoded) <= room:
        return data + structure(AD_COMPLETE_LOCAL_NAME, encoded)
    return data + structure(AD_SHORTENED_LOCAL_NAME, encoded[:room])


def manufacturer(company_id: int, payload: bytes) -> bytes:
    return flags() + structure(AD_MANUFACTURER_SPECIFIC, struct.pack("<H", company_id) + payload)
