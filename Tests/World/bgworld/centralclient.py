"""A raw H4 central for tests: accept list, create connection, cancel, disconnect,
Read RSSI, and ATT requests over the connection's L2CAP channel, with every event
recorded as bytes. Independent of Bumble's host (like hostclient.py) so that tests see
exactly what the world's controller sent."""

from __future__ import annotations

import asyncio
import dataclasses
import struct

from . import att, hcibytes
from .hostclient import ALL_EVENTS_MASK, LE_ALL_EVENTS_MASK, OP_LE_SET_EVENT_MASK, OP_RESET, OP_SET_EVENT_MASK, HostClient

OP_DISCONNECT = 0x0406
OP_READ_RSSI = 0x1405
OP_LE_READ_BUFFER_SIZE = 0x2002
OP_LE_CREATE_CONNECTION = 0x200D
OP_LE_CREATE_CONNECTION_CANCEL = 0x200E
OP_LE_READ_FILTER_ACCEPT_LIST_SIZE = 0x200F
OP_LE_CLEAR_FILTER_ACCEPT_LIST = 0x2010
OP_LE_ADD_DEVICE_TO_FILTER_ACCEPT_LIST = 0x2011
OP_LE_REMOVE_DEVICE_FROM_FILTER_ACCEPT_LIST = 0x2012
OP_LE_READ_SUPPORTED_STATES = 0x201C

EVT_NUMBER_OF_COMPLETED_PACKETS = 0x13
# LE event mask without Enhanced Connection Complete (bit 9), so that the legacy LE
# Connection Complete is what arrives.
LE_MASK_LEGACY_CONNECTIONS = LE_ALL_EVENTS_MASK & ~(1 << 9)


def address_le(text: str) -> bytes:
    return bytes(reversed(bytes.fromhex(text.replace(":", ""))))


@dataclasses.dataclass
class ConnectionComplete:
    status: int
    handle: int
    role: int
    peer_address_type: int
    peer_address: str
    interval: int
    latency: int
    supervision_timeout: int


@dataclasses.dataclass
class DisconnectionComplete:
    status: int
    handle: int
    reason: int


class CentralClient(HostClient):
    def __init__(self, reader, writer) -> None:
        super().__init__(reader, writer)
        self.connections: list[ConnectionComplete] = []
        self.disconnections: list[DisconnectionComplete] = []
        self.completed_packets = 0
        self.acl_fragments: list[tuple[int, int, bytes]] = []  # (handle, pb flag, data)
        self._partial: dict[int, bytearray] = {}
        self._att: dict[int, asyncio.Queue[bytes]] = {}
        self.l2cap: list[tuple[int, bytes]] = []

    # -- events ------------------------------------------------------------------------

    def _on_packet(self, packet: bytes) -> None:
        super()._on_packet(packet)
        if packet[0] != hcibytes.H4_EVENT or len(packet) < 3:
            return
        code, parameters = packet[1], packet[3:]
        if code == hcibytes.EVT_LE_META and parameters[:1] == bytes((hcibytes.LE_CONNECTION_COMPLETE,)):
            status, handle, role, peer_type = struct.unpack_from("<BHBB", parameters, 1)
            peer = ":".join(f"{b:02X}" for b in reversed(parameters[6:12]))
            interval, latency, timeout = struct.unpack_from("<HHH", parameters, 12)
            self.connections.append(ConnectionComplete(status, handle, role, peer_type, peer, interval, latency, timeout))
        elif code == hcibytes.EVT_DISCONNECTION_COMPLETE:
            self.disconnections.append(DisconnectionComplete(*struct.unpack("<BHB", parameters)))
        elif code == EVT_NUMBER_OF_COMPLETED_PACKETS:
            count = parameters[0]
            self.completed_packets += sum(struct.unpack_from("<H", parameters, 1 + 2 * count + 2 * i)[0] for i in range(count))

    def on_acl(self, packet: bytes) -> None:
        header, length = struct.unpack_from("<HH", packet, 1)
        handle, pb_flag = header & 0x0FFF, header >> 12 & 0x3
        data = packet[5: 5 + length]
        self.acl_fragments.append((handle, pb_flag, data))
        if pb_flag != hcibytes.ACL_PB_CONTINUING:
            self._partial[handle] = bytearray(data)
        elif handle in self._partial:
            self._partial[handle] += data
        else:
            return
        buffer = self._partial[handle]
        if len(buffer) >= 4 and len(buffer) >= 4 + struct.unpack_from("<H", buffer)[0]:
            pdu = bytes(buffer)
            del self._partial[handle]
            self.l2cap.append((handle, pdu))
            if struct.unpack_from("<H", pdu, 2)[0] == att.CID_ATT:
                self._att.setdefault(handle, asyncio.Queue()).put_nowait(pdu[4:])

    # -- set-up ------------------------------------------------------------------------

    async def bring_up(self) -> None:
        for opcode, parameters in (
            (OP_RESET, b""),
            (OP_SET_EVENT_MASK, struct.pack("<Q", ALL_EVENTS_MASK)),
            (OP_LE_SET_EVENT_MASK, struct.pack("<Q", LE_MASK_LEGACY_CONNECTIONS)),
        ):
            await self.ok(opcode, parameters)

    async def ok(self, opcode: int, parameters: bytes = b"") -> bytes:
        answer = await self.command(opcode, parameters)
        if answer.status != hcibytes.STATUS_SUCCESS:
            raise RuntimeError(f"command 0x{opcode:04x} failed with status 0x{answer.status:02x}")
        return answer.return_parameters

    # -- accept list and connections ---------------------------------------------------

    async def accept_list_add(self, address: str, address_type: int = 1) -> int:
        answer = await self.command(OP_LE_ADD_DEVICE_TO_FILTER_ACCEPT_LIST, bytes((address_type,)) + address_le(address))
        return answer.status

    async def accept_list_remove(self, address: str, address_type: int = 1) -> int:
        answer = await self.command(OP_LE_REMOVE_DEVICE_FROM_FILTER_ACCEPT_LIST, bytes((address_type,)) + address_le(address))
        return answer.status

    async def create_connection(self, policy: int = 1, peer: str = "00:00:00:00:00:00", peer_type: int = 1,
                                supervision_timeout: int = 100, interval: int = 24) -> int:
        """LE Create Connection with own address public; returns the Command Status."""
        parameters = struct.pack("<HHB", 0x0060, 0x0030, policy) + bytes((peer_type,)) + address_le(peer)
        parameters += struct.pack("<BHHHHHH", 0, interval, interval, 0, supervision_timeout, 0, 0)
        return (await self.command(OP_LE_CREATE_CONNECTION, parameters)).status

    async def cancel_connection(self) -> int:
        return (await self.command(OP_LE_CREATE_CONNECTION_CANCEL)).status

    async def disconnect(self, handle: int, reason: int = 0x13) -> int:
        return (await self.command(OP_DISCONNECT, struct.pack("<HB", handle, reason))).status

    async def read_rssi(self, handle: int) -> tuple[int, int]:
        answer = await self.command(OP_READ_RSSI, struct.pack("<H", handle))
        if answer.status != hcibytes.STATUS_SUCCESS:
            return answer.status, 0
        _, _, rssi = struct.unpack("<BHb", answer.return_parameters)
        return answer.status, rssi

    async def wait_for_connections(self, count: int, timeout: float) -> list[ConnectionComplete]:
        await self.wait_for_events(lambda _events: len(self.connections) >= count, timeout)
        return self.connections

    async def wait_for_disconnections(self, count: int, timeout: float) -> list[DisconnectionComplete]:
        await self.wait_for_events(lambda _events: len(self.disconnections) >= count, timeout)
        return self.disconnections

    # -- ATT over the connection ---------------------------------------------------------

    async def send_att(self, handle: int, pdu: bytes) -> None:
        """One ATT PDU in an L2CAP basic frame, cut to 27-byte ACL packets (the LE buffer size)."""
        frame = att.l2cap(att.CID_ATT, pdu)
        pieces = [frame[i: i + 27] for i in range(0, len(frame), 27)]
        for i, piece in enumerate(pieces):
            pb_flag = 0b00 if i == 0 else hcibytes.ACL_PB_CONTINUING  # first non-flushable from a host
            self.writer.write(hcibytes.acl(handle, pb_flag, piece))
        await self.writer.drain()

    async def att_request(self, handle: int, pdu: bytes, timeout: float = 2.0) -> bytes:
        """Send a request, return the next ATT PDU from the peer (TimeoutError if none)."""
        queue = self._att.setdefault(handle, asyncio.Queue())
        await self.send_att(handle, pdu)
        return await asyncio.wait_for(queue.get(), timeout)


@dataclasses.dataclass
class ProofResult:
    outcome: str  # valid, invalid, no-service, no-characteristics, att-error, malformed, timeout, too-many
    detail: str = ""
    response: bytes = b""
    round_trips: int = 0


MAX_DISCOVERY_ROUND_TRIPS = 64


async def proof_handshake(client: CentralClient, handle: int, key: bytes | None, nonce: bytes,
                          timeout: float = 2.0) -> ProofResult:
    """The handshake of docs/proof-protocol.md from the gateway's side, bounded: find the service by UUID, its two
    characteristics, write the challenge, read the response, verify with `key`."""
    from . import proof

    trips = 0

    async def request(pdu: bytes) -> bytes:
        nonlocal trips
        trips += 1
        return await client.att_request(handle, pdu, timeout)

    try:
        answer = await request(struct.pack("<BHHH", att.FIND_BY_TYPE_VALUE_REQ, 1, 0xFFFF, att.PRIMARY_SERVICE)
                               + att.uuid_bytes(proof.SERVICE_UUID))
        if answer[0] == att.ERROR_RSP:
            return ProofResult("no-service", f"error 0x{answer[-1]:02x}", round_trips=trips)
        if answer[0] != att.FIND_BY_TYPE_VALUE_RSP or len(answer) < 5 or (len(answer) - 1) % 4:
            return ProofResult("malformed", answer.hex(), round_trips=trips)
        start, end = struct.unpack_from("<HH", answer, 1)
        wanted = {att.uuid_bytes(proof.CHALLENGE_UUID): "challenge", att.uuid_bytes(proof.RESPONSE_UUID): "response"}
        found: dict[str, int] = {}
        cursor = start
        while cursor <= end and len(found) < 2:
            if trips > MAX_DISCOVERY_ROUND_TRIPS:
                return ProofResult("too-many", f"discovery at 0x{cursor:04x}", round_trips=trips)
            answer = await request(struct.pack("<BHHH", att.READ_BY_TYPE_REQ, cursor, end, att.CHARACTERISTIC))
            if answer[0] == att.ERROR_RSP:
                break
            if answer[0] != att.READ_BY_TYPE_RSP or len(answer) < 2 or answer[1] < 7 or (len(answer) - 2) % answer[1]:
                return ProofResult("malformed", answer.hex(), round_trips=trips)
            size = answer[1]
            last = cursor
            for offset in range(2, len(answer), size):
                declaration_handle, _properties, value_handle = struct.unpack_from("<HBH", answer, offset)
                uuid = answer[offset + 5: offset + size]
                if uuid in wanted:
                    found[wanted[uuid]] = value_handle
                last = declaration_handle
            if last < cursor:
                return ProofResult("malformed", "handles going backwards", round_trips=trips)
            cursor = last + 1
        if len(found) < 2:
            return ProofResult("no-characteristics", str(found), round_trips=trips)
        challenge = proof.challenge(nonce)
        answer = await request(struct.pack("<BH", att.WRITE_REQ, found["challenge"]) + challenge)
        if answer[0] == att.ERROR_RSP:
            return ProofResult("att-error", f"write 0x{answer[-1]:02x}", round_trips=trips)
        answer = await request(struct.pack("<BH", att.READ_REQ, found["response"]))
        if answer[0] == att.ERROR_RSP:
            return ProofResult("att-error", f"read 0x{answer[-1]:02x}", round_trips=trips)
        value = answer[1:]
        if answer[0] != att.READ_RSP or len(answer) > att.DEFAULT_MTU:
            return ProofResult("malformed", f"{len(answer)}-byte read response", value, trips)
        if len(value) != proof.RESPONSE_LENGTH or value[0] != proof.VERSION:
            return ProofResult("malformed", f"response {value.hex()}", value, trips)
        ok = key is not None and proof.verify(key, challenge, value)
        return ProofResult("valid" if ok else "invalid", value.hex(), value, trips)
    except (TimeoutError, asyncio.TimeoutError):
        return ProofResult("timeout", round_trips=trips)
    except (struct.error, IndexError) as error:
        return ProofResult("malformed", str(error), round_trips=trips)
