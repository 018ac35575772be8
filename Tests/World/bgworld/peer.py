"""The tag end of a connection: what a connectable tag answers on the link.

A peer is deliberately not a Bumble Controller + Device pair: a tag only needs to take a
connection, answer ATT on L2CAP and drop the link, and the ATT bytes must be under the
scenario's control so that malicious tags can misbehave exactly. The world (links.py)
routes L2CAP PDUs between the gateway's controller and the peer.

Variants (scenario key "proof"; see bgworld/README.md):
  none                 connectable, GAP + GATT services only (the default)
  silent               the same, named for tests: no Presence Proof service
  genuine              Presence Proof service answering with K_tag
  clone                same identity and address, but a wrong key
  malicious-oversized  Response read gives 300 bytes, beyond what the ATT MTU allows
  malicious-malformed  Response of the wrong length (9 bytes)
  malicious-version    Response with version byte 0x02 (otherwise valid)
  malicious-error      Challenge write -> Insufficient Authentication, Response read -> Read Not Permitted
  malicious-mute       never answers an ATT request (stays connected)
  malicious-endless    the proof service spans 0x0005…0xFFFF and characteristic discovery
                       always returns one more (unrelated) characteristic
  malicious-garbled    discovery responses whose length fields disagree with their size
"""

from __future__ import annotations

import dataclasses
import struct

from . import att, proof

VARIANTS = (
    "none", "silent", "genuine", "clone", "malicious-oversized", "malicious-malformed",
    "malicious-version", "malicious-error", "malicious-mute", "malicious-endless", "malicious-garbled",
)
NEEDS_KEY = {"genuine", "clone", "malicious-oversized", "malicious-malformed", "malicious-version"}
OVERSIZED_LENGTH = 300
MALFORMED_LENGTH = 9
ENDLESS_UUID_BASE = 0xFF00


@dataclasses.dataclass
class PeerStats:
    connections: int = 0
    disconnections: int = 0
    att_requests: int = 0
    att_unanswered: int = 0
    challenges: int = 0
    responses: int = 0  # Response reads served with a value
    last_disconnect_reason: int | None = None

    def as_dict(self) -> dict:
        return {
            "connections": self.connections,
            "disconnections": self.disconnections,
            "attRequests": self.att_requests,
            "attUnanswered": self.att_unanswered,
            "challenges": self.challenges,
            "responses": self.responses,
            "lastDisconnectReason": self.last_disconnect_reason,
        }


class TagPeer:
    def __init__(self, name: str, variant: str = "none", key: bytes | None = None, answer_delay_s: float = 0.0) -> None:
        """`answer_delay_s`: how much later than at once each answer leaves, as through a
        relay in front of the tag (the Bumble world's links only)."""
        if variant not in VARIANTS:
            raise ValueError(f"proof variant must be one of {', '.join(VARIANTS)}, not {variant!r}")
        if variant in NEEDS_KEY and key is None:
            raise ValueError(f"proof variant {variant!r} needs a key (key or master_key)")
        self.name = name
        self.variant = variant
        self.key = proof.clone_key(key) if variant == "clone" and key is not None else key
        self.answer_delay_s = max(0.0, answer_delay_s)
        self.stats = PeerStats()
        self.connected = False
        self._server: att.AttServer | None = None
        self._challenge: bytes | None = None

    # -- link events ---------------------------------------------------------------

    def on_connect(self) -> None:
        self.connected = True
        self.stats.connections += 1
        self._challenge = None  # a challenge never outlives its connection
        self._server = self._make_server()

    def on_disconnect(self, reason: int) -> None:
        self.connected = False
        self.stats.disconnections += 1
        self.stats.last_disconnect_reason = reason
        self._server = None

    def on_l2cap(self, pdu: bytes) -> list[bytes]:
        """One L2CAP PDU from the central; returns the PDUs to send back."""
        if len(pdu) < 4:
            return []
        length, cid = struct.unpack_from("<HH", pdu)
        payload = pdu[4: 4 + length]
        if cid == att.CID_ATT:
            return self._on_att(payload)
        if cid == att.CID_LE_SIGNALING and len(payload) >= 2 and payload[0] in (0x06, 0x12, 0x14, 0x17, 0x19):
            # A request this tag does not implement: Command Reject, "not understood".
            return [att.l2cap(cid, struct.pack("<BBHH", att.SIGNALING_COMMAND_REJECT, payload[1], 2, 0))]
        if cid == att.CID_SMP and payload[:1] == b"\x01":
            return [att.l2cap(cid, bytes((att.SMP_PAIRING_FAILED, att.SMP_PAIRING_NOT_SUPPORTED)))]
        return []

    def _on_att(self, payload: bytes) -> list[bytes]:
        if not payload or self._server is None:
            return []
        is_request = not payload[0] & att.COMMAND_FLAG
        if is_request:
            self.stats.att_requests += 1
        if self.variant == "malicious-mute":
            self.stats.att_unanswered += int(is_request)
            return []
        if self.variant == "malicious-garbled":
            garbled = _GARBLED.get(payload[0])
            if garbled is not None:
                return [att.l2cap(att.CID_ATT, garbled)]
        answer = self._server.handle(payload)
        return [] if answer is None else [att.l2cap(att.CID_ATT, answer)]

    # -- the GATT database -----------------------------------------------------------

    def _make_server(self) -> att.AttServer:
        database = att.Database()
        database.add_service(att.GAP_SERVICE)
        database.add_characteristic(att.DEVICE_NAME, att.PROP_READ, self.name.encode()[:att.MAX_ATTRIBUTE_VALUE])
        database.add_service(att.GATT_SERVICE)
        if self.variant in ("none", "silent"):
            return att.AttServer(database)
        service = database.add_service(proof.SERVICE_UUID)
        database.add_characteristic(proof.CHALLENGE_UUID, att.PROP_WRITE, write=self._write_challenge)
        database.add_characteristic(proof.RESPONSE_UUID, att.PROP_READ, read=self._read_response)
        if self.variant == "malicious-endless":
            service.group_end = 0xFFFF
            return _EndlessServer(database, service.handle)
        return att.AttServer(database, respect_mtu=self.variant != "malicious-oversized")

    def _write_challenge(self, handle: int, value: bytes) -> None:
        self.stats.challenges += 1
        if self.variant == "malicious-error":
            raise att.AttError(att.ERR_INSUFFICIENT_AUTHENTICATION, handle)
        if len(value) != proof.CHALLENGE_LENGTH:
            raise att.AttError(att.ERR_INVALID_ATTRIBUTE_VALUE_LENGTH, handle)
        if value[0] != proof.VERSION:
            raise att.AttError(att.ERR_VALUE_NOT_ALLOWED, handle)
        self._challenge = bytes(value)

    def _read_response(self, handle: int) -> bytes:
        if self.variant == "malicious-error":
            raise att.AttError(att.ERR_READ_NOT_PERMITTED, handle)
        if self._challenge is None or self.key is None:
            raise att.AttError(att.ERR_UNLIKELY_ERROR, handle)
        value = proof.response(self.key, self._challenge)
        if self.variant == "malicious-oversized":
            value = (value * (OVERSIZED_LENGTH // len(value) + 1))[:OVERSIZED_LENGTH]
        elif self.variant == "malicious-malformed":
            value = value[:MALFORMED_LENGTH]
        elif self.variant == "malicious-version":
            value = bytes((proof.VERSION + 1,)) + value[1:]
        self.stats.responses += 1
        return value

    def status(self) -> dict:
        return {"variant": self.variant, "connected": self.connected, **self.stats.as_dict()}


class _EndlessServer(att.AttServer):
    """Characteristic discovery inside the proof service never runs dry: each Read By
    Type for characteristic declarations answers one more, right at the start handle.
    A client walks 0xFFFF handles (tens of thousands of round trips) unless it gives up."""

    def __init__(self, database: att.Database, service_handle: int) -> None:
        super().__init__(database)
        self.service_handle = service_handle

    def read_by_type(self, start: int, end: int, attribute_type: bytes) -> bytes:
        if attribute_type != att.uuid_bytes(att.CHARACTERISTIC) or start <= self.service_handle or start >= 0xFFFF:
            return super().read_by_type(start, end, attribute_type)
        declaration = bytes((att.PROP_READ,)) + struct.pack("<HH", start + 1, ENDLESS_UUID_BASE | (start & 0xFF))
        return bytes((att.READ_BY_TYPE_RSP, 2 + len(declaration))) + struct.pack("<H", start) + declaration

    def _dispatch(self, opcode: int, body: bytes) -> bytes | None:
        if opcode == att.READ_REQ and len(body) == 2:
            (handle,) = struct.unpack("<H", body)
            if handle > len(self.database.attributes):
                return bytes((att.READ_RSP,))  # the phantom characteristics read as empty
        return super()._dispatch(opcode, body)


# Responses whose length fields contradict their size: Read By Group Type says 20-byte
# entries and carries 2 bytes; Read By Type says 7 and carries 1; Find By Type Value
# carries half an entry; Find Information names a format that does not exist.
_GARBLED = {
    att.READ_BY_GROUP_TYPE_REQ: bytes((att.READ_BY_GROUP_TYPE_RSP, 20, 0x01, 0x00)),
    att.READ_BY_TYPE_REQ: bytes((att.READ_BY_TYPE_RSP, 7, 0x05)),
    att.FIND_BY_TYPE_VALUE_REQ: bytes((att.FIND_BY_TYPE_VALUE_RSP, 0x05)),
    att.FIND_INFORMATION_REQ: bytes((att.FIND_INFORMATION_RSP, 0x07, 0x01, 0x00)),
}
