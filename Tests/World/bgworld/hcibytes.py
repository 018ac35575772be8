"""Raw HCI numbers and byte builders.

The world writes advertising reports and error answers as bytes itself rather than
through Bumble's packet classes: it needs exact control over what reaches the host
(event type, RSSI, one report per PDU), and raw bytes are also what the ingest
benchmark generates by the million.
"""

from __future__ import annotations

import struct

# H4 packet indicators (Core Vol 4, Part A, 2).
H4_COMMAND = 0x01
H4_ACL = 0x02
H4_SCO = 0x03
H4_EVENT = 0x04
H4_ISO = 0x05

# Event codes (Core Vol 4, Part E, 7.7).
EVT_COMMAND_COMPLETE = 0x0E
EVT_COMMAND_STATUS = 0x0F
EVT_HARDWARE_ERROR = 0x10
EVT_LE_META = 0x3E

# LE Meta subevents.
LE_ADVERTISING_REPORT = 0x02
LE_EXTENDED_ADVERTISING_REPORT = 0x0D

# Error codes (Core Vol 1, Part F).
STATUS_SUCCESS = 0x00
STATUS_UNKNOWN_HCI_COMMAND = 0x01
STATUS_UNKNOWN_CONNECTION_ID = 0x02
STATUS_INVALID_PARAMETERS = 0x12
STATUS_UNSPECIFIED_ERROR = 0x1F

# Legacy advertising report event types (Core Vol 4, Part E, 7.7.65.2).
ADV_IND = 0x00
ADV_DIRECT_IND = 0x01
ADV_SCAN_IND = 0x02
ADV_NONCONN_IND = 0x03
SCAN_RSP = 0x04

# Extended report event-type bits (7.7.65.13) and the legacy combinations the spec
# lists for legacy PDUs reported through the extended event.
EXT_CONNECTABLE = 0x0001
EXT_SCANNABLE = 0x0002
EXT_DIRECTED = 0x0004
EXT_SCAN_RESPONSE = 0x0008
EXT_LEGACY = 0x0010
EXT_LEGACY_ADV_IND = 0x0013
EXT_LEGACY_ADV_NONCONN_IND = 0x0010
EXT_LEGACY_SCAN_RSP_TO_ADV_IND = 0x001B

# Event mask bits (7.3.1 and 7.8.1).
EVENT_MASK_LE_META_BIT = 61
LE_EVENT_MASK_ADVERTISING_REPORT_BIT = 1
LE_EVENT_MASK_EXTENDED_ADVERTISING_REPORT_BIT = 12
# Power-on / reset defaults (7.3.1, 7.8.1): LE Meta is *off* until the host sets it.
DEFAULT_EVENT_MASK = 0x00001FFFFFFFFFFF
DEFAULT_LE_EVENT_MASK = 0x000000000000001F

PHY_LE_1M = 0x01
NO_TX_POWER = 0x7F
RSSI_MIN = -127
RSSI_MAX = 20


def event(code: int, parameters: bytes) -> bytes:
    """An H4 event packet. Parameters longer than 255 bytes are a bug of the caller."""
    if len(parameters) > 255:
        raise ValueError(f"event parameters too long: {len(parameters)}")
    return bytes((H4_EVENT, code, len(parameters))) + parameters


def command(opcode: int, parameters: bytes = b"") -> bytes:
    return struct.pack("<BHB", H4_COMMAND, opcode, len(parameters)) + parameters


def command_complete(opcode: int, return_parameters: bytes) -> bytes:
    return event(EVT_COMMAND_COMPLETE, struct.pack("<BH", 1, opcode) + return_parameters)


def command_status(status: int, opcode: int) -> bytes:
    return event(EVT_COMMAND_STATUS, struct.pack("<BBH", status, 1, opcode))


def hardware_error(code: int) -> bytes:
    return event(EVT_HARDWARE_ERROR, bytes((code & 0xFF,)))


def legacy_report(event_type: int, address_type: int, address_le: bytes, data: bytes, rssi: int) -> bytes:
    """One report entry of an LE Advertising Report (without the event header)."""
    return (
        bytes((event_type, address_type))
        + address_le
        + bytes((len(data),))
        + data
        + struct.pack("<b", max(RSSI_MIN, min(RSSI_MAX, rssi)))
    )


def legacy_reports_event(reports: list[bytes]) -> bytes:
    body = bytes((LE_ADVERTISING_REPORT, len(reports))) + b"".join(reports)
    return event(EVT_LE_META, body)


def extended_report(
    event_type: int,
    address_type: int,
    address_le: bytes,
    data: bytes,
    rssi: int,
    tx_power: int = NO_TX_POWER,
    sid: int = 0xFF,
    primary_phy: int = PHY_LE_1M,
    secondary_phy: int = 0x00,
) -> bytes:
    """One report entry of an LE Extended Advertising Report (7.7.65.13)."""
    return (
        struct.pack("<HB", event_type, address_type)
        + address_le
        + struct.pack(
            "<BBBbbH",
            primary_phy,
            secondary_phy,
            sid,
            tx_power,
            max(RSSI_MIN, min(RSSI_MAX, rssi)),
            0,  # periodic advertising interval: none
        )
        + bytes((0x00,))  # direct address type
        + bytes(6)  # direct address
        + bytes((len(data),))
        + data
    )


def extended_reports_event(reports: list[bytes]) -> bytes:
    body = bytes((LE_EXTENDED_ADVERTISING_REPORT, len(reports))) + b"".join(reports)
    return event(EVT_LE_META, body)


# -- connections (added with the initiator model, see initiator.py) --------------------

EVT_DISCONNECTION_COMPLETE = 0x05
LE_CONNECTION_COMPLETE = 0x01
LE_READ_REMOTE_FEATURES_COMPLETE = 0x04
LE_ENHANCED_CONNECTION_COMPLETE = 0x0A

STATUS_MEMORY_CAPACITY_EXCEEDED = 0x07
STATUS_COMMAND_DISALLOWED = 0x0C

EVENT_MASK_DISCONNECTION_COMPLETE_BIT = 4
LE_EVENT_MASK_CONNECTION_COMPLETE_BIT = 0
LE_EVENT_MASK_READ_REMOTE_FEATURES_COMPLETE_BIT = 3
LE_EVENT_MASK_ENHANCED_CONNECTION_COMPLETE_BIT = 9

ROLE_CENTRAL = 0x00

# ACL packet-boundary flags (Core Vol 4, Part E, 5.4.2).
ACL_PB_CONTINUING = 0b01
ACL_PB_FIRST_FLUSHABLE = 0b10


def le_connection_complete(status: int, handle: int, role: int, peer_address_type: int, peer_address_le: bytes,
                           interval: int, latency: int, supervision_timeout: int, clock_accuracy: int = 0) -> bytes:
    """LE Connection Complete (7.7.65.1)."""
    body = struct.pack("<BBHBB", LE_CONNECTION_COMPLETE, status, handle, role, peer_address_type) + peer_address_le
    body += struct.pack("<HHHB", interval, latency, supervision_timeout, clock_accuracy)
    return event(EVT_LE_META, body)


def le_enhanced_connection_complete(status: int, handle: int, role: int, peer_address_type: int, peer_address_le: bytes,
                                    interval: int, latency: int, supervision_timeout: int,
                                    clock_accuracy: int = 0) -> bytes:
    """LE Enhanced Connection Complete v1 (7.7.65.10), no resolvable private addresses."""
    body = struct.pack("<BBHBB", LE_ENHANCED_CONNECTION_COMPLETE, status, handle, role, peer_address_type)
    body += peer_address_le + bytes(6) + bytes(6)
    body += struct.pack("<HHHB", interval, latency, supervision_timeout, clock_accuracy)
    return event(EVT_LE_META, body)


def disconnection_complete(status: int, handle: int, reason: int) -> bytes:
    return event(EVT_DISCONNECTION_COMPLETE, struct.pack("<BHB", status, handle, reason))


def le_read_remote_features_complete(status: int, handle: int, features: bytes) -> bytes:
    return event(EVT_LE_META, struct.pack("<BBH", LE_READ_REMOTE_FEATURES_COMPLETE, status, handle) + features[:8].ljust(8, b"\0"))


def acl(handle: int, pb_flag: int, data: bytes) -> bytes:
    return struct.pack("<BHH", H4_ACL, (handle & 0x0FFF) | (pb_flag << 12), len(data)) + data


def acl_fragments(handle: int, pdu: bytes, max_length: int) -> list[bytes]:
    """An L2CAP PDU cut to the controller's buffer size, as controllers deliver it."""
    pieces = [pdu[i: i + max_length] for i in range(0, len(pdu), max_length)] or [b""]
    return [acl(handle, ACL_PB_FIRST_FLUSHABLE if i == 0 else ACL_PB_CONTINUING, piece) for i, piece in enumerate(pieces)]
