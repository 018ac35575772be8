"""Virtual tags: what they advertise, where they are, and when they advertise.

A tag is not a Bumble Controller: it only needs to put advertising PDUs on the link at
the right moments, and Bumble's own advertiser gets the timing wrong (interval_min/1000
seconds, no advDelay). Timing here follows the Core spec (Vol 6, Part B, 4.4.2.2.1):
each advertising event starts advInterval + advDelay after the previous one, advDelay
uniformly random in 0…10 ms.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import random
from typing import Callable

from bumble import hci, ll
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from . import ad, proof
from .peer import TagPeer
from .rooms import PathXY, Point, path_from_spec, waypoint_at

ADV_DELAY_MAX_S = 0.010
FAR_AWAY_M = float("inf")


@dataclasses.dataclass
class Trajectory:
    """Distance to the door over scenario time: waypoints (t seconds, metres), linear in
    between, held flat before the first and after the last; `loop` repeats the script
    with the period of its last waypoint. A distance of null/None in a waypoint means
    "not here" (out of range)."""

    waypoints: list[tuple[float, float]]
    loop: bool = False

    def __post_init__(self) -> None:
        if not self.waypoints:
            raise ValueError("a trajectory needs at least one waypoint")
        self.waypoints = sorted((float(t), FAR_AWAY_M if d is None else float(d)) for t, d in self.waypoints)
        self._times = [t for t, _ in self.waypoints]

    @classmethod
    def fixed(cls, distance_m: float) -> "Trajectory":
        return cls([(0.0, distance_m)])

    def distance_at(self, t: float) -> float:
        d0, d1, share = waypoint_at(self._times, self.waypoints, self.loop, t)
        if d0 == FAR_AWAY_M or d1 == FAR_AWAY_M:
            # Arriving from / leaving to "nowhere" has no midpoint: step at the far end.
            return d0
        return d0 + (d1 - d0) * share


@dataclasses.dataclass
class Tag:
    id: str
    kind: str
    address: hci.Address
    advertising_data: bytes
    interval_s: float
    connectable: bool
    trajectory: Trajectory
    scan_response_data: bytes = b""
    tx_power_at_1m: float | None = None  # None: the radio model's default
    identity: dict = dataclasses.field(default_factory=dict)
    # Set by the control channel: a fixed distance that overrides the trajectory.
    distance_override: float | None = None
    pdus_sent: int = 0
    # Connectable tags answer on the link (peer.py); None for advertise-only tags.
    peer: TagPeer | None = None
    # Advertising starts at this scenario time (a tag switched on later) …
    advertise_after: float = 0.0
    # … unless the control channel switched it on or off (None: follow advertise_after).
    advertising_override: bool | None = None
    # The link (links.Link) while a gateway is connected: a connected tag does not advertise.
    link: object | None = None
    # address_type "rpa": the IRK its addresses are generated with (None: made up), and
    # after how many PDUs it takes a new one (0: only on `rotate-address`).
    irk: bytes | None = None
    rotate_every: int = 0
    # In a rooms world (rooms.py): the tag's position over time instead of a distance,
    # and a position the control channel pinned it at (overrides the path).
    path_xy: PathXY | None = None
    position_override: Point | None = None

    def advertising_at(self, scenario_t: float) -> bool:
        if self.link is not None:
            return False
        if self.advertising_override is not None:
            return self.advertising_override
        return scenario_t >= self.advertise_after

    @property
    def scannable(self) -> bool:
        # ADV_IND is connectable *and* scannable; ADV_NONCONN_IND is neither.
        return self.connectable

    def distance_at(self, scenario_t: float) -> float:
        if self.distance_override is not None:
            return self.distance_override
        return self.trajectory.distance_at(scenario_t)

    def position_at(self, scenario_t: float) -> Point | None:
        """Where the tag is in a rooms world (None: away); `set-distance TAG off` sends
        it away there too."""
        if self.distance_override == FAR_AWAY_M:
            return None
        if self.position_override is not None:
            return self.position_override
        return self.path_xy.position_at(scenario_t) if self.path_xy is not None else None

    def pdu(self) -> ll.AdvertisingPdu:
        if self.connectable:
            return ll.AdvInd(advertiser_address=self.address, data=self.advertising_data)
        return ll.AdvNonConnInd(advertiser_address=self.address, data=self.advertising_data)


def _address(text: str, address_type: str) -> hci.Address:
    kind = address_type.lower()
    if kind == "public":
        return hci.Address(text, hci.Address.PUBLIC_DEVICE_ADDRESS)
    if kind in ("random", "static", "static-random"):
        address = hci.Address(text, hci.Address.RANDOM_DEVICE_ADDRESS)
        if address.address_bytes[5] & 0xC0 != 0xC0:
            raise ValueError(f"{text} is not a static random address (top two bits must be 11)")
        return address
    raise ValueError(f"address_type must be public or random, not {address_type!r}")


def ah(irk: bytes, prand: bytes) -> bytes:
    """The random address hash ah(k, r) of the Core spec (Vol 3, Part H, 2.2.2): AES-128
    of 13 zero octets and r, key and block most significant octet first, as the
    configuration writes an IRK; the hash is the last three octets."""
    encryptor = Cipher(algorithms.AES(irk), modes.ECB()).encryptor()
    return (encryptor.update(bytes(13) + prand) + encryptor.finalize())[13:]


def resolvable_private_address(irk: bytes | None, rng: random.Random) -> hci.Address:
    """A resolvable private address (top two bits 01): generated with `irk`, as a phone's,
    or — without one — a made-up one that only looks resolvable, as a flood's."""
    prand = bytes([0x40 | rng.randrange(64), rng.randrange(256), rng.randrange(256)])
    hash_ = ah(irk, prand) if irk is not None else bytes(rng.randrange(256) for _ in range(3))
    return hci.Address(":".join(f"{o:02X}" for o in prand + hash_), hci.Address.RANDOM_DEVICE_ADDRESS)


def random_static_address(rng: random.Random) -> str:
    octets = [rng.randrange(256) for _ in range(6)]
    octets[0] |= 0xC0
    return ":".join(f"{o:02X}" for o in octets)


TAG_KEYS = {
    "id", "kind", "address", "address_type", "interval_ms", "connectable", "distance",
    "path", "loop", "tx_power_at_1m", "uuid", "major", "minor", "measured_power",
    "namespace", "instance", "tx_power_at_0m", "name", "tx_power", "scan_response_name",
    "company_id", "payload_hex", "proof", "key", "master_key", "proof_tag_id", "advertise_after",
    "advertising", "irk", "rotate_every", "answer_delay_ms", "position",
}


def tag_from_dict(spec: dict, rng: random.Random) -> Tag:
    """Build a tag from its scenario description (see bgworld/README.md)."""
    unknown = set(spec) - TAG_KEYS
    if unknown:
        raise ValueError(f"tag {spec.get('id')!r}: unknown keys {sorted(unknown)}")
    tag_id = str(spec["id"])
    kind = spec.get("kind", "ibeacon")
    irk = bytes.fromhex(str(spec["irk"])) if "irk" in spec else None
    if irk is not None and len(irk) != 16:
        raise ValueError(f"tag {tag_id!r}: irk must be 32 hex digits")
    if spec.get("address_type") == "rpa":
        # A phone's rotating address (its IRK), or a flood's made-up one (none).
        if "address" in spec:
            raise ValueError(f"tag {tag_id!r}: an rpa tag's address is generated")
        address = resolvable_private_address(irk, rng)
    elif irk is not None or "rotate_every" in spec:
        raise ValueError(f"tag {tag_id!r}: irk and rotate_every need address_type rpa")
    else:
        address = _address(spec.get("address") or random_static_address(rng), spec.get("address_type", "random"))
    identity: dict = {}
    if kind == "ibeacon":
        uuid = str(spec["uuid"]).lower()
        major, minor = int(spec["major"]), int(spec["minor"])
        data = ad.ibeacon(uuid, major, minor, int(spec.get("measured_power", -59)))
        identity["ibeacon"] = f"{uuid}:{major}:{minor}"
        connectable = bool(spec.get("connectable", False))
    elif kind == "eddystone-uid":
        namespace, instance = str(spec["namespace"]).lower(), str(spec["instance"]).lower()
        data = ad.eddystone_uid(namespace, instance, int(spec.get("tx_power_at_0m", -18)))
        identity["eddystone_uid"] = f"{namespace}:{instance}"
        connectable = bool(spec.get("connectable", False))
    elif kind == "named":
        name = str(spec["name"])
        data = ad.named(name, spec.get("tx_power"))
        identity["name"] = name
        connectable = bool(spec.get("connectable", True))
    elif kind == "manufacturer":
        data = ad.manufacturer(int(spec["company_id"]), bytes.fromhex(spec.get("payload_hex", "")))
        identity["manufacturer"] = int(spec["company_id"])
        connectable = bool(spec.get("connectable", False))
    else:
        raise ValueError(f"tag {tag_id!r}: kind must be ibeacon, eddystone-uid, named or manufacturer")
    if len(data) > ad.LEGACY_ADV_DATA_MAX:
        raise ValueError(f"tag {tag_id!r}: advertising data is {len(data)} bytes, legacy limit is 31")

    scan_response = b""
    if "scan_response_name" in spec:
        scan_response = ad.structure(ad.AD_COMPLETE_LOCAL_NAME, str(spec["scan_response_name"]).encode())

    path_xy = path_from_spec(spec, tag_id)
    if path_xy is not None:
        trajectory = Trajectory.fixed(FAR_AWAY_M)  # placed by position (rooms.py), not by distance
    elif "path" in spec:
        trajectory = Trajectory([(float(t), d) for t, d in spec["path"]], loop=bool(spec.get("loop", False)))
    else:
        trajectory = Trajectory.fixed(float(spec.get("distance", 1.0)))
    peer = None
    variant = spec.get("proof")
    if variant is not None:
        if spec.get("connectable") is False:
            raise ValueError(f"tag {tag_id!r}: a tag with a proof variant is connectable")
        connectable = True
    if connectable:
        key = None
        if "key" in spec:
            key = proof.parse_key(str(spec["key"]), f"tag {tag_id!r}: key")
        elif "master_key" in spec:
            master = proof.parse_key(str(spec["master_key"]), f"tag {tag_id!r}: master_key")
            key = proof.derive_tag_key(master, str(spec.get("proof_tag_id", tag_id)))
        try:
            peer = TagPeer(tag_id, str(variant or "none"), key,
                           answer_delay_s=float(spec.get("answer_delay_ms", 0)) / 1000)
        except ValueError as error:
            raise ValueError(f"tag {tag_id!r}: {error}") from error
    if spec.get("advertising") is False and "advertise_after" in spec:
        raise ValueError(f"tag {tag_id!r}: advertising false and advertise_after exclude each other")
    advertise_after = float(spec.get("advertise_after", 0.0))
    if spec.get("advertising") is False:
        advertise_after = math.inf

    rotate_every = int(spec.get("rotate_every", 0))
    if rotate_every < 0:
        raise ValueError(f"tag {tag_id!r}: rotate_every must be 0 (never) or a number of PDUs")
    interval_ms = float(spec.get("interval_ms", 100))
    if not 20 <= interval_ms <= 10_485_759.375:
        raise ValueError(f"tag {tag_id!r}: interval_ms must be within 20…10485759.375 (Core spec)")
    return Tag(
        id=tag_id,
        kind=kind,
        address=address,
        advertising_data=data,
        interval_s=interval_ms / 1000.0,
        connectable=connectable,
        trajectory=trajectory,
        scan_response_data=scan_response,
        tx_power_at_1m=spec.get("tx_power_at_1m"),
        identity=identity,
        peer=peer,
        advertise_after=advertise_after,
        irk=irk,
        rotate_every=rotate_every,
        path_xy=path_xy,
    )


class TagAdvertiser:
    """Drives one tag's advertising events on the event loop.

    Events are scheduled on absolute loop times (previous start + interval + advDelay),
    so callback latency does not accumulate into a slower rate."""

    def __init__(self, tag: Tag, emit: Callable[[Tag], None], rng: random.Random) -> None:
        self.tag = tag
        self._emit = emit
        self._rng = rng
        self._handle: asyncio.TimerHandle | None = None
        self._next: float = 0.0

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        # Random phase so that tags configured alike do not advertise in lockstep.
        self._next = loop.time() + self._rng.uniform(0.0, self.tag.interval_s)
        self._handle = loop.call_at(self._next, self._fire)

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _fire(self) -> None:
        loop = asyncio.get_running_loop()
        self._emit(self.tag)
        self._next += self.tag.interval_s + self._rng.uniform(0.0, ADV_DELAY_MAX_S)
        # If the loop fell far behind (a stalled machine), skip the missed events
        # rather than bursting them all at once.
        now = loop.time()
        if self._next < now - self.tag.interval_s:
            self._next = now
        self._handle = loop.call_at(self._next, self._fire)
