"""A tag's ATT server, written byte by byte (Core Vol 3, Part F) so that a test world can
also misbehave on purpose: every answer a gateway sees is real ATT on a real L2CAP
fixed channel, but which answer comes is up to the tag variant (see peer.py).

Only what a GATT client needs for discovery, read and write is here: Exchange MTU,
Find Information, Find By Type Value, Read By Type, Read, Read Blob, Read By Group Type,
Write Request and Write Command. Anything else gets "Request Not Supported"."""

from __future__ import annotations

import dataclasses
import struct
import uuid as uuidlib
from typing import Callable

# ATT opcodes (Core Vol 3, Part F, 3.4.8).
ERROR_RSP = 0x01
EXCHANGE_MTU_REQ = 0x02
EXCHANGE_MTU_RSP = 0x03
FIND_INFORMATION_REQ = 0x04
FIND_INFORMATION_RSP = 0x05
FIND_BY_TYPE_VALUE_REQ = 0x06
FIND_BY_TYPE_VALUE_RSP = 0x07
READ_BY_TYPE_REQ = 0x08
READ_BY_TYPE_RSP = 0x09
READ_REQ = 0x0A
READ_RSP = 0x0B
READ_BLOB_REQ = 0x0C
READ_BLOB_RSP = 0x0D
READ_BY_GROUP_TYPE_REQ = 0x10
READ_BY_GROUP_TYPE_RSP = 0x11
WRITE_REQ = 0x12
WRITE_RSP = 0x13
WRITE_CMD = 0x52
COMMAND_FLAG = 0x40

# ATT error codes (3.4.1.1).
ERR_INVALID_HANDLE = 0x01
ERR_READ_NOT_PERMITTED = 0x02
ERR_WRITE_NOT_PERMITTED = 0x03
ERR_INVALID_PDU = 0x04
ERR_INSUFFICIENT_AUTHENTICATION = 0x05
ERR_REQUEST_NOT_SUPPORTED = 0x06
ERR_INVALID_OFFSET = 0x07
ERR_ATTRIBUTE_NOT_FOUND = 0x0A
ERR_ATTRIBUTE_NOT_LONG = 0x0B
ERR_INVALID_ATTRIBUTE_VALUE_LENGTH = 0x0D
ERR_UNLIKELY_ERROR = 0x0E
ERR_UNSUPPORTED_GROUP_TYPE = 0x10
ERR_VALUE_NOT_ALLOWED = 0x13

# GATT attribute types (Assigned Numbers).
PRIMARY_SERVICE = 0x2800
SECONDARY_SERVICE = 0x2801
INCLUDE = 0x2802
CHARACTERISTIC = 0x2803
GAP_SERVICE = 0x1800
GATT_SERVICE = 0x1801
DEVICE_NAME = 0x2A00

# Characteristic properties (Vol 3, Part G, 3.3.1.1).
PROP_READ = 0x02
PROP_WRITE = 0x08

DEFAULT_MTU = 23
MAX_ATTRIBUTE_VALUE = 512

# L2CAP fixed channels on LE (Vol 3, Part A, 2.1) and what a tag says on the others.
CID_ATT = 0x0004
CID_LE_SIGNALING = 0x0005
CID_SMP = 0x0006
SIGNALING_COMMAND_REJECT = 0x01
SMP_PAIRING_FAILED = 0x05
SMP_PAIRING_NOT_SUPPORTED = 0x05


class AttError(Exception):
    def __init__(self, code: int, handle: int = 0) -> None:
        super().__init__(f"ATT error 0x{code:02x} at 0x{handle:04x}")
        self.code = code
        self.handle = handle


def uuid_bytes(value: int | str) -> bytes:
    """A UUID as it goes on the air: 2 bytes for a 16-bit one, else 16 bytes, little-endian."""
    if isinstance(value, int):
        return struct.pack("<H", value)
    return uuidlib.UUID(value).bytes[::-1]


@dataclasses.dataclass
class Attribute:
    handle: int
    type: bytes  # on-air UUID bytes (2 or 16)
    value: bytes = b""
    # Dynamic values: read(handle) -> bytes, write(handle, bytes) -> None; both may raise AttError.
    read: Callable[[int], bytes] | None = None
    write: Callable[[int, bytes], None] | None = None
    group_end: int = 0  # service declarations: last handle of the service

    def read_value(self) -> bytes:
        if self.read is not None:
            return self.read(self.handle)
        return self.value


class Database:
    """Attributes in handle order, built service by service."""

    def __init__(self) -> None:
        self.attributes: list[Attribute] = []

    @property
    def next_handle(self) -> int:
        return len(self.attributes) + 1

    def add_service(self, service_uuid: int | str) -> Attribute:
        service = Attribute(self.next_handle, uuid_bytes(PRIMARY_SERVICE), uuid_bytes(service_uuid))
        service.group_end = service.handle
        self.attributes.append(service)
        self._current = service
        return service

    def add_characteristic(self, char_uuid: int | str, properties: int, value: bytes = b"",
                           read=None, write=None) -> Attribute:
        declaration_handle = self.next_handle
        value_handle = declaration_handle + 1
        declaration = Attribute(declaration_handle, uuid_bytes(CHARACTERISTIC),
                                bytes((properties,)) + struct.pack("<H", value_handle) + uuid_bytes(char_uuid))
        attribute = Attribute(value_handle, uuid_bytes(char_uuid), value, read=read, write=write)
        self.attributes += [declaration, attribute]
        self._current.group_end = value_handle
        return attribute

    def in_range(self, start: int, end: int) -> list[Attribute]:
        return [a for a in self.attributes if start <= a.handle <= end]

    def get(self, handle: int) -> Attribute | None:
        if 1 <= handle <= len(self.attributes):
            return self.attributes[handle - 1]
        return None


def error_response(request_opcode: int, handle: int, code: int) -> bytes:
    return struct.pack("<BBHB", ERROR_RSP, request_opcode, handle, code)


def l2cap(cid: int, payload: bytes) -> bytes:
    return struct.pack("<HH", len(payload), cid) + payload


class AttServer:
    """Answers ATT requests from a database. Returns the response PDU, or None for
    commands (no response). Malformed requests get an Error Response (Invalid PDU)."""

    def __init__(self, database: Database, mtu: int = DEFAULT_MTU, respect_mtu: bool = True) -> None:
        self.database = database
        self.server_mtu = mtu
        self.mtu = DEFAULT_MTU
        # False for a tag that sends whole values in one Read Response, MTU or not.
        self.respect_mtu = respect_mtu

    def _fit(self, value: bytes) -> bytes:
        return value[: self.mtu - 1] if self.respect_mtu else value

    def handle(self, pdu: bytes) -> bytes | None:
        if not pdu:
            return None
        opcode = pdu[0]
        try:
            return self._dispatch(opcode, pdu[1:])
        except AttError as error:
            if opcode & COMMAND_FLAG:
                return None
            return error_response(opcode, error.handle, error.code)
        except (struct.error, IndexError):
            if opcode & COMMAND_FLAG:
                return None
            return error_response(opcode, 0, ERR_INVALID_PDU)

    def _dispatch(self, opcode: int, body: bytes) -> bytes | None:
        match opcode:
            case 0x02:  # EXCHANGE_MTU_REQ
                (client_mtu,) = struct.unpack("<H", body)
                self.mtu = max(DEFAULT_MTU, min(client_mtu, self.server_mtu))
                return struct.pack("<BH", EXCHANGE_MTU_RSP, self.server_mtu)
            case 0x04:  # FIND_INFORMATION_REQ
                start, end = self._range(struct.unpack("<HH", body))
                return self._find_information(start, end)
            case 0x06:  # FIND_BY_TYPE_VALUE_REQ
                start, end, attribute_type = struct.unpack_from("<HHH", body)
                self._range((start, end))
                return self._find_by_type_value(start, end, struct.pack("<H", attribute_type), body[6:])
            case 0x08:  # READ_BY_TYPE_REQ
                start, end = self._range(struct.unpack_from("<HH", body))
                return self.read_by_type(start, end, self._uuid(body[4:]))
            case 0x0A:  # READ_REQ
                (handle,) = struct.unpack("<H", body)
                value = self._attribute(handle).read_value()
                return bytes((READ_RSP,)) + self._fit(value)
            case 0x0C:  # READ_BLOB_REQ
                handle, offset = struct.unpack("<HH", body)
                value = self._attribute(handle).read_value()
                if offset > len(value):
                    raise AttError(ERR_INVALID_OFFSET, handle)
                return bytes((READ_BLOB_RSP,)) + self._fit(value[offset:])
            case 0x10:  # READ_BY_GROUP_TYPE_REQ
                start, end = self._range(struct.unpack_from("<HH", body))
                return self.read_by_group_type(start, end, self._uuid(body[4:]))
            case 0x12 | 0x52:  # WRITE_REQ, WRITE_CMD
                (handle,) = struct.unpack_from("<H", body)
                attribute = self._attribute(handle)
                if attribute.write is None:
                    raise AttError(ERR_WRITE_NOT_PERMITTED, handle)
                if len(body) - 2 > MAX_ATTRIBUTE_VALUE:
                    raise AttError(ERR_INVALID_ATTRIBUTE_VALUE_LENGTH, handle)
                attribute.write(handle, body[2:])
                return bytes((WRITE_RSP,)) if opcode == WRITE_REQ else None
            case _:
                if opcode & COMMAND_FLAG:
                    return None
                raise AttError(ERR_REQUEST_NOT_SUPPORTED)

    @staticmethod
    def _range(pair: tuple[int, int]) -> tuple[int, int]:
        start, end = pair
        if start == 0 or start > end:
            raise AttError(ERR_INVALID_HANDLE, start)
        return start, end

    @staticmethod
    def _uuid(raw: bytes) -> bytes:
        if len(raw) not in (2, 16):
            raise AttError(ERR_INVALID_PDU)
        return raw

    def _attribute(self, handle: int) -> Attribute:
        attribute = self.database.get(handle)
        if attribute is None:
            raise AttError(ERR_INVALID_HANDLE, handle)
        return attribute

    def _find_information(self, start: int, end: int) -> bytes:
        found = self.database.in_range(start, end)
        if not found:
            raise AttError(ERR_ATTRIBUTE_NOT_FOUND, start)
        size = len(found[0].type)
        entries = b""
        for attribute in found:
            entry = struct.pack("<H", attribute.handle) + attribute.type
            if len(attribute.type) != size or 2 + len(entries) + len(entry) > self.mtu:
                break
            entries += entry
        return bytes((FIND_INFORMATION_RSP, 1 if size == 2 else 2)) + entries

    def _find_by_type_value(self, start: int, end: int, attribute_type: bytes, value: bytes) -> bytes:
        entries = b""
        for attribute in self.database.in_range(start, end):
            if attribute.type == attribute_type and attribute.value == value:
                if 1 + len(entries) + 4 > self.mtu:
                    break
                entries += struct.pack("<HH", attribute.handle, attribute.group_end or attribute.handle)
        if not entries:
            raise AttError(ERR_ATTRIBUTE_NOT_FOUND, start)
        return bytes((FIND_BY_TYPE_VALUE_RSP,)) + entries

    def read_by_type(self, start: int, end: int, attribute_type: bytes) -> bytes:
        entries: list[bytes] = []
        for attribute in self.database.in_range(start, end):
            if attribute.type != attribute_type:
                continue
            value = attribute.read_value()[: min(self.mtu - 4, 253)]
            entry = struct.pack("<H", attribute.handle) + value
            if entries and (len(entry) != len(entries[0]) or 2 + len(entries) * len(entry) + len(entry) > self.mtu):
                break
            entries.append(entry)
        if not entries:
            raise AttError(ERR_ATTRIBUTE_NOT_FOUND, start)
        return bytes((READ_BY_TYPE_RSP, len(entries[0]))) + b"".join(entries)

    def read_by_group_type(self, start: int, end: int, group_type: bytes) -> bytes:
        if group_type not in (uuid_bytes(PRIMARY_SERVICE), uuid_bytes(SECONDARY_SERVICE)):
            raise AttError(ERR_UNSUPPORTED_GROUP_TYPE, start)
        entries: list[bytes] = []
        for attribute in self.database.in_range(start, end):
            if attribute.type != group_type:
                continue
            entry = struct.pack("<HH", attribute.handle, attribute.group_end) + attribute.value
            if entries and (len(entry) != len(entries[0]) or 2 + len(entries) * len(entry) + len(entry) > self.mtu):
                break
            entries.append(entry)
        if not entries:
            raise AttError(ERR_ATTRIBUTE_NOT_FOUND, start)
        return bytes((READ_BY_GROUP_TYPE_RSP, len(entries[0]))) + b"".join(entries)
