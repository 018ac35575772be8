"""btsnoop files (datalink 1002, H4), as Wireshark/tshark and the gateway's --capture
write them. Reader for tests, writer for the ingest benchmark."""

from __future__ import annotations

import dataclasses
import struct
from typing import BinaryIO, Iterator

MAGIC = b"btsnoop\x00"
VERSION = 1
DATALINK_H4 = 1002
HEADER = struct.Struct(">8sII")
RECORD = struct.Struct(">IIIIq")
# Microseconds from year 0 to the Unix epoch, as btsnoop timestamps count.
EPOCH_OFFSET_US = 0x00DCDDB30F2F8000

FLAG_RECEIVED = 0x01  # controller -> host
FLAG_COMMAND_OR_EVENT = 0x02


class BtsnoopError(Exception):
    pass


@dataclasses.dataclass
class Record:
    flags: int
    timestamp_us: int
    data: bytes
    original_length: int
    drops: int

    @property
    def from_controller(self) -> bool:
        return bool(self.flags & FLAG_RECEIVED)


def flags_for(h4_packet: bytes) -> int:
    """Direction and kind from the H4 indicator: commands go to the controller, events
    come from it; data packets are assumed to come from the controller."""
    indicator = h4_packet[0] if h4_packet else 0
    if indicator == 0x01:
        return FLAG_COMMAND_OR_EVENT
    if indicator == 0x04:
        return FLAG_RECEIVED | FLAG_COMMAND_OR_EVENT
    return FLAG_RECEIVED


def header() -> bytes:
    return HEADER.pack(MAGIC, VERSION, DATALINK_H4)


def record(packet: bytes, flags: int, unix_us: int) -> bytes:
    return RECORD.pack(len(packet), len(packet), flags, 0, unix_us + EPOCH_OFFSET_US) + packet


def read(stream: BinaryIO) -> Iterator[Record]:
    head = stream.read(HEADER.size)
    if len(head) != HEADER.size:
        raise BtsnoopError("file shorter than the btsnoop header")
    magic, version, datalink = HEADER.unpack(head)
    if magic != MAGIC or version != VERSION:
        raise BtsnoopError(f"not a btsnoop v1 file (magic {magic!r}, version {version})")
    if datalink != DATALINK_H4:
        raise BtsnoopError(f"datalink {datalink}, expected {DATALINK_H4} (H4)")
    while True:
        fixed = stream.read(RECORD.size)
        if not fixed:
            return
        if len(fixed) != RECORD.size:
            raise BtsnoopError("truncated record header")
        original, included, flags, drops, timestamp = RECORD.unpack(fixed)
        data = stream.read(included)
        if len(data) != included:
            raise BtsnoopError("truncated record data")
        yield Record(flags, timestamp - EPOCH_OFFSET_US, data, original, drops)
