"""H4 stream framing, one parser per client connection.

Bumble's tcp-server shares one parser among all clients, so a host killed in the middle
of a packet leaves half a packet that corrupts the next session. Each session here owns
its parser, and a stream that cannot be framed ends that session only.
"""

from __future__ import annotations

from . import hcibytes

# Header length and where the payload length sits, per packet indicator.
# (header bytes after the indicator, length offset in header, length size, length mask)
_LAYOUT = {
    hcibytes.H4_COMMAND: (3, 2, 1, 0xFF),
    hcibytes.H4_ACL: (4, 2, 2, 0xFFFF),
    hcibytes.H4_SCO: (3, 2, 1, 0xFF),
    hcibytes.H4_EVENT: (2, 1, 1, 0xFF),
    hcibytes.H4_ISO: (4, 2, 2, 0x3FFF),
}


class H4FramingError(Exception):
    pass


class H4Parser:
    """Feed bytes, get whole packets (indicator byte included). Memory is bounded by the
    largest packet the framing can describe (ACL: 5 + 65535 bytes)."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    @property
    def pending(self) -> int:
        return len(self._buffer)

    def feed(self, data: bytes) -> list[bytes]:
        self._buffer += data
        packets: list[bytes] = []
        while self._buffer:
            indicator = self._buffer[0]
            layout = _LAYOUT.get(indicator)
            if layout is None:
                raise H4FramingError(f"unknown H4 packet indicator 0x{indicator:02x}")
            header, offset, size, mask = layout
            if len(self._buffer) < 1 + header:
                break
            length = int.from_bytes(self._buffer[1 + offset : 1 + offset + size], "little") & mask
            total = 1 + header + length
            if len(self._buffer) < total:
                break
            packets.append(bytes(self._buffer[:total]))
            del self._buffer[:total]
        return packets
