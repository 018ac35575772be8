"""An H4 proxy between a gateway and its RootCanal controller.

RootCanal's RSSI is one process-wide counter (meaningless), so the proxy rewrites the
RSSI of every advertising report from the world's path-loss model, by the advertiser's
address. It also counts what the host sends (LE Create Connection commands, cancels),
which is what tests of "no re-issue by a timer" assert on."""

from __future__ import annotations

import asyncio
import logging
import random
import socket
import struct

from .. import hcibytes
from ..h4 import H4FramingError, H4Parser
from ..world import World

logger = logging.getLogger(__name__)

OP_LE_CREATE_CONNECTION = 0x200D
OP_LE_CREATE_CONNECTION_CANCEL = 0x200E
OP_LE_EXTENDED_CREATE_CONNECTION = 0x2043
READ_CHUNK = 4096
EXTENDED_REPORT_FIXED = 24  # bytes of an extended report before its data


class ProxySession:
    def __init__(self, number: int, world: World) -> None:
        self.number = number
        self.world = world
        self.rng = random.Random(world.seed * 7_000_003 + number)
        self.commands: dict[int, int] = {}
        self.open = True
        self.errors = 0

    def host_packet(self, packet: bytes) -> bytes:
        if packet[0] == hcibytes.H4_COMMAND and len(packet) >= 3:
            opcode = packet[1] | packet[2] << 8
            self.commands[opcode] = self.commands.get(opcode, 0) + 1
        return packet

    def controller_packet(self, packet: bytes) -> bytes:
        if packet[0] != hcibytes.H4_EVENT or len(packet) < 5 or packet[1] != hcibytes.EVT_LE_META:
            return packet
        try:
            if packet[3] == hcibytes.LE_ADVERTISING_REPORT:
                return self._legacy(bytearray(packet))
            if packet[3] == hcibytes.LE_EXTENDED_ADVERTISING_REPORT:
                return self._extended(bytearray(packet))
        except (IndexError, struct.error):
            self.errors += 1  # RootCanal sent something odd: pass it on untouched
        return packet

    def _rssi(self, address_le: bytes, address_type: int) -> int:
        from bumble import hci

        tag = self.world.tag_for(hci.Address(bytes(address_le), address_type & 0x01))
        rssi = self.world.rssi_for(tag, self.rng) if tag is not None else None
        return hcibytes.RSSI_MIN if rssi is None else rssi

    def _legacy(self, packet: bytearray) -> bytes:
        count, offset = packet[4], 5
        for _ in range(count):
            address_type, address = packet[offset + 1], bytes(packet[offset + 2: offset + 8])
            length = packet[offset + 8]
            rssi_at = offset + 9 + length
            struct.pack_into("<b", packet, rssi_at, self._rssi(address, address_type))
            offset = rssi_at + 1
        return bytes(packet)

    def _extended(self, packet: bytearray) -> bytes:
        count, offset = packet[4], 5
        for _ in range(count):
            address_type, address = packet[offset + 2], bytes(packet[offset + 3: offset + 9])
            struct.pack_into("<b", packet, offset + 13, self._rssi(address, address_type))
            offset += EXTENDED_REPORT_FIXED + packet[offset + 23]
        return bytes(packet)

    def status(self) -> dict:
        return {
            "id": self.number,
            "open": self.open,
            "createConnectionCommands": self.commands.get(OP_LE_CREATE_CONNECTION, 0)
            + self.commands.get(OP_LE_EXTENDED_CREATE_CONNECTION, 0),
            "cancelCommands": self.commands.get(OP_LE_CREATE_CONNECTION_CANCEL, 0),
            "commands": sum(self.commands.values()),
            "errors": self.errors,
        }


class GatewayProxy:
    def __init__(self, world: World, upstream_port: int, host: str = "127.0.0.1", port: int = 0) -> None:
        self.world = world
        self.upstream_port = upstream_port
        self.host = host
        self.port = port
        self.sessions: list[ProxySession] = []
        self._server: asyncio.base_events.Server | None = None

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._on_client, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()

    async def _on_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        session = ProxySession(len(self.sessions) + 1, self.world)
        self.sessions.append(session)
        try:
            up_reader, up_writer = await asyncio.open_connection(self.host, self.upstream_port)
        except OSError as error:
            logger.warning("cannot reach RootCanal: %s", error)
            writer.close()
            return
        for stream in (writer, up_writer):
            sock = stream.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        pumps = [
            asyncio.ensure_future(self._pump(reader, up_writer, session.host_packet)),
            asyncio.ensure_future(self._pump(up_reader, writer, session.controller_packet)),
        ]
        await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
        for pump in pumps:
            pump.cancel()
        session.open = False
        writer.close()
        up_writer.close()

    @staticmethod
    async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, transform) -> None:
        parser = H4Parser()
        try:
            while True:
                data = await reader.read(READ_CHUNK)
                if not data:
                    return
                for packet in parser.feed(data):
                    writer.write(transform(packet))
                await writer.drain()
        except (H4FramingError, ConnectionError, OSError):
            return

    def status(self) -> list[dict]:
        return [session.status() for session in self.sessions]
