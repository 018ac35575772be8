"""A tag as a host of its own RootCanal controller: a raw H4 client that advertises the
tag's data with its address, and answers L2CAP/ATT through the same TagPeer (peer.py)
the Bumble world uses, so every proof variant behaves identically on both."""

from __future__ import annotations

import asyncio
import logging
import struct

from .. import hcibytes
from ..hostclient import ALL_EVENTS_MASK, LE_ALL_EVENTS_MASK, OP_LE_SET_EVENT_MASK, OP_RESET, OP_SET_EVENT_MASK, HostClient
from ..tags import Tag

logger = logging.getLogger(__name__)

OP_DISCONNECT = 0x0406
OP_LE_SET_RANDOM_ADDRESS = 0x2005
OP_LE_SET_ADVERTISING_PARAMETERS = 0x2006
OP_LE_SET_ADVERTISING_DATA = 0x2008
OP_LE_SET_SCAN_RESPONSE_DATA = 0x2009
OP_LE_SET_ADVERTISING_ENABLE = 0x200A
ADV_IND = 0x00
ADV_NONCONN_IND = 0x03
OWN_ADDRESS_PUBLIC = 0x00
OWN_ADDRESS_RANDOM = 0x01
ADVERTISING_UNIT_S = 0.000625
ALL_CHANNELS = 0x07
LE_ACL_LENGTH = 27


class TagHost(HostClient):
    def __init__(self, reader, writer, tag: Tag) -> None:
        super().__init__(reader, writer)
        self.tag = tag
        self.device_id: int | None = None
        self.handle: int | None = None
        self.advertising = False
        self.wanted = False  # whether the tag should be advertising when not connected
        self._partial = bytearray()
        self._work: asyncio.Queue = asyncio.Queue()
        self._worker = asyncio.ensure_future(self._run_work())

    @classmethod
    async def attach(cls, host: str, port: int, tag: Tag) -> "TagHost":
        reader, writer = await asyncio.open_connection(host, port)
        tag_host = cls(reader, writer, tag)
        await tag_host._bring_up()
        return tag_host

    async def _ok(self, opcode: int, parameters: bytes = b"") -> None:
        answer = await self.command(opcode, parameters)
        if answer.status != hcibytes.STATUS_SUCCESS:
            raise RuntimeError(f"tag {self.tag.id}: command 0x{opcode:04x} failed with 0x{answer.status:02x}")

    async def _bring_up(self) -> None:
        tag = self.tag
        await self._ok(OP_RESET)
        await self._ok(OP_SET_EVENT_MASK, struct.pack("<Q", ALL_EVENTS_MASK))
        await self._ok(OP_LE_SET_EVENT_MASK, struct.pack("<Q", LE_ALL_EVENTS_MASK & ~(1 << 9)))
        random = int(tag.address.address_type) == 1
        if random:
            await self._ok(OP_LE_SET_RANDOM_ADDRESS, bytes(tag.address.address_bytes))
        interval = max(0x20, min(0x4000, round(tag.interval_s / ADVERTISING_UNIT_S)))
        await self._ok(OP_LE_SET_ADVERTISING_PARAMETERS, struct.pack(
            "<HHBBB6sBB", interval, interval, ADV_IND if tag.connectable else ADV_NONCONN_IND,
            OWN_ADDRESS_RANDOM if random else OWN_ADDRESS_PUBLIC, 0, bytes(6), ALL_CHANNELS, 0))
        data = tag.advertising_data
        await self._ok(OP_LE_SET_ADVERTISING_DATA, bytes((len(data),)) + data.ljust(31, b"\0"))
        if tag.scan_response_data:
            response = tag.scan_response_data
            await self._ok(OP_LE_SET_SCAN_RESPONSE_DATA, bytes((len(response),)) + response.ljust(31, b"\0"))

    # -- advertising ---------------------------------------------------------------------

    async def set_advertising(self, on: bool) -> None:
        """What the scenario wants; applied while not connected."""
        self.wanted = on
        await self._apply()

    async def _apply(self) -> None:
        target = self.wanted and self.handle is None
        if target == self.advertising:
            return
        answer = await self.command(OP_LE_SET_ADVERTISING_ENABLE, bytes((int(target),)))
        if answer.status == hcibytes.STATUS_SUCCESS:
            self.advertising = target

    # -- link events ---------------------------------------------------------------------

    def _on_packet(self, packet: bytes) -> None:
        super()._on_packet(packet)
        if packet[0] != hcibytes.H4_EVENT or len(packet) < 3:
            return
        code, parameters = packet[1], packet[3:]
        if code == hcibytes.EVT_LE_META and parameters[:1] in (b"\x01", b"\x0a") and len(parameters) >= 4:
            status, handle = struct.unpack_from("<BH", parameters, 1)
            if status == hcibytes.STATUS_SUCCESS:
                self.handle = handle
                self.advertising = False  # legacy advertising ends with the connection
                self._partial.clear()
                self.tag.link = self  # the world's view: connected tags do not advertise
                if self.tag.peer is not None:
                    self.tag.peer.on_connect()
        elif code == hcibytes.EVT_DISCONNECTION_COMPLETE and len(parameters) >= 4:
            status, handle, reason = struct.unpack("<BHB", parameters[:4])
            if status == hcibytes.STATUS_SUCCESS and handle == self.handle:
                self.handle = None
                self.tag.link = None
                if self.tag.peer is not None:
                    self.tag.peer.on_disconnect(reason)
                self._work.put_nowait(self._apply)

    def on_acl(self, packet: bytes) -> None:
        header, length = struct.unpack_from("<HH", packet, 1)
        pb_flag = header >> 12 & 0x3
        data = packet[5: 5 + length]
        if pb_flag != hcibytes.ACL_PB_CONTINUING:
            self._partial = bytearray(data)
        else:
            self._partial += data
        if len(self._partial) >= 4 and len(self._partial) >= 4 + struct.unpack_from("<H", self._partial)[0]:
            pdu, self._partial = bytes(self._partial), bytearray()
            if self.tag.peer is None or self.handle is None:
                return
            for answer in self.tag.peer.on_l2cap(pdu):
                for fragment in hcibytes.acl_fragments(self.handle, answer, LE_ACL_LENGTH):
                    self.writer.write(fragment)

    async def disconnect(self, reason: int) -> bool:
        if self.handle is None:
            return False
        answer = await self.command(OP_DISCONNECT, struct.pack("<HB", self.handle, reason))
        return answer.status == hcibytes.STATUS_SUCCESS

    async def _run_work(self) -> None:
        while True:
            job = await self._work.get()
            try:
                await job()
            except Exception:  # a failed re-enable must not end the tag
                logger.exception("tag %s: background job failed", self.tag.id)

    async def close(self) -> None:
        self._worker.cancel()
        await super().close()
