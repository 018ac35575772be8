"""The world: one virtual radio (a Bumble LocalLink), the tags on it, the radio model,
and the statistics the control channel reports."""

from __future__ import annotations

import asyncio
import dataclasses
import random
import time

from bumble import hci

from . import hcibytes
from .links import LinkManager, WorldLink
from .radio import RadioModel
from .rooms import Gateway, Rooms
from .tags import Tag, TagAdvertiser, resolvable_private_address, tag_from_dict

# A PDU from something that is not a scripted tag (a Bumble Device on the link).
DEFAULT_PEER_DISTANCE_M = 1.0


@dataclasses.dataclass
class TagStats:
    pdus: int = 0
    reports: int = 0


class World:
    def __init__(self, scenario: dict, seed: int = 1, time_scale: float = 1.0,
                 supervision_timeout_s: float | None = None) -> None:
        if time_scale <= 0:
            raise ValueError("time scale must be positive")
        if supervision_timeout_s is not None and not 0 < supervision_timeout_s <= 3600:
            raise ValueError("supervision timeout must be within (0, 3600] s")
        self.loop = asyncio.get_running_loop()
        self.link = WorldLink(self)
        self.links = LinkManager(self, supervision_timeout_s)
        self.seed = seed
        self.time_scale = time_scale
        self.rng = random.Random(seed)
        self.radio = RadioModel.from_dict(scenario.get("radio"))
        # Gateways at positions, walls (rooms.py); None: the one-distance model.
        self.rooms = Rooms.from_scenario(scenario, seed)
        self.scenario_name = scenario.get("name", "custom")
        self.tags: dict[str, Tag] = {}
        self._by_address: dict[tuple[bytes, int], Tag] = {}
        for spec in scenario.get("tags", []):
            self.add_tag(tag_from_dict(spec, self.rng))
        for tag in self.tags.values():
            if (tag.path_xy is not None) != (self.rooms is not None):
                raise ValueError(f"tag {tag.id!r}: a position or path of positions in a world with gateways, "
                                 "a distance or path of distances in one without")
        self._next_session = 1
        self.stats: dict[str, TagStats] = {tag_id: TagStats() for tag_id in self.tags}
        self.other_reports = 0
        self._advertisers: list[TagAdvertiser] = []
        self._t0_loop = self.loop.time()
        self._t0_wall = time.time()
        self.muted = False

    def next_session_number(self) -> int:
        """Sessions are numbered across every gateway's port (their controllers' public
        addresses derive from it and must differ on the one link)."""
        number = self._next_session
        self._next_session += 1
        return number

    def add_tag(self, tag: Tag) -> None:
        if tag.id in self.tags:
            raise ValueError(f"duplicate tag id {tag.id!r}")
        key = (bytes(tag.address.address_bytes), int(tag.address.address_type))
        if key in self._by_address:
            raise ValueError(f"tag {tag.id!r}: address {tag.address} already used by another tag")
        self.tags[tag.id] = tag
        self._by_address[key] = tag

    def rotate_address(self, tag: Tag) -> None:
        """A new resolvable private address for an `rpa` tag (from its IRK, or made up)."""
        del self._by_address[(bytes(tag.address.address_bytes), int(tag.address.address_type))]
        while True:
            address = resolvable_private_address(tag.irk, self.rng)
            key = (bytes(address.address_bytes), int(address.address_type))
            if key not in self._by_address:
                break
        tag.address = address
        self._by_address[key] = tag

    # -- time --------------------------------------------------------------------

    def uptime(self) -> float:
        return self.loop.time() - self._t0_loop

    def scenario_time(self) -> float:
        """Scenario scripts run `time_scale` times faster than real time; advertising
        intervals do not (so reports/s stay meaningful)."""
        return self.uptime() * self.time_scale

    # -- advertising ---------------------------------------------------------------

    def restart_script(self) -> None:
        """Scenario time starts again at 0: a test starts the walkers' scripts when the
        gateway under test reports it is scanning, not when the world started, so a
        slow start (emulation, a busy machine) does not miss the first arrival."""
        self._t0_loop = self.loop.time()

    def start(self) -> None:
        self._t0_loop = self.loop.time()
        for tag in self.tags.values():
            advertiser = TagAdvertiser(tag, self._emit, random.Random(self.rng.random()))
            advertiser.start()
            self._advertisers.append(advertiser)
        self.links.start()

    def stop(self) -> None:
        for advertiser in self._advertisers:
            advertiser.stop()
        self._advertisers.clear()
        self.links.stop()

    def _emit(self, tag: Tag) -> None:
        if self.muted or not tag.advertising_at(self.scenario_time()):
            return
        if tag.rotate_every and tag.pdus_sent and tag.pdus_sent % tag.rotate_every == 0:
            self.rotate_address(tag)
        tag.pdus_sent += 1
        self.stats[tag.id].pdus += 1
        # As a peer controller would: the link fans the PDU out to every controller
        # (the tag is not one, so none is skipped as the sender).
        self.link.send_advertising_pdu(None, tag.pdu())

    # -- what receivers ask --------------------------------------------------------

    def tag_for(self, address: hci.Address) -> Tag | None:
        return self._by_address.get((bytes(address.address_bytes), int(address.address_type)))

    def distance_of(self, tag: Tag | None) -> float:
        if tag is None:
            return DEFAULT_PEER_DISTANCE_M
        return tag.distance_at(self.scenario_time())

    def in_range(self, tag: Tag, gateway: Gateway | None = None) -> bool:
        """Whether the tag's radio reaches the door (in a rooms world: that gateway) at
        all (mean RSSI, no noise): what keeps a connection alive."""
        if self.rooms is not None and gateway is not None:
            return self.rooms.in_range(self.radio, tag.position_at(self.scenario_time()), gateway, tag.tx_power_at_1m)
        distance = self.distance_of(tag)
        if not distance <= self.radio.max_range_m:
            return False
        return self.radio.mean_rssi(distance, tag.tx_power_at_1m) >= self.radio.min_rssi

    def connection_rssi(self, tag: Tag, rng: random.Random, gateway: Gateway | None = None) -> int:
        """RSSI of a connection's packets (Read RSSI): the path-loss model (in a rooms
        world, that gateway's), and the weakest value when nothing is received."""
        rssi = self.rssi_for(tag, rng, gateway)
        return hcibytes.RSSI_MIN if rssi is None else rssi

    def proof_stats(self) -> dict:
        return {tag_id: tag.peer.status() for tag_id, tag in self.tags.items() if tag.peer is not None}

    def rssi_for(self, tag: Tag | None, rng: random.Random, gateway: Gateway | None = None) -> int | None:
        """The RSSI one PDU of `tag` is received with, or None. In a rooms world, at
        `gateway` (its position, the walls, its fading; `rng` is not used: the gateway
        has its own); a PDU of something that is not a tag is at 1 m in either world."""
        tx = tag.tx_power_at_1m if tag is not None else None
        if self.rooms is not None and gateway is not None and tag is not None:
            return self.rooms.sample(self.radio, tag.position_at(self.scenario_time()), gateway, tag.id,
                                     self.uptime(), tx)
        return self.radio.sample(self.distance_of(tag), rng, tx)

    def count_reports(self, tag: Tag | None, _address: hci.Address, count: int) -> None:
        if tag is None:
            self.other_reports += count
        else:
            self.stats[tag.id].reports += count

    def status(self) -> dict:
        result = self._status()
        if self.rooms is not None:
            now = self.scenario_time()
            for tag_id, tag in self.tags.items():
                position = tag.position_at(now)
                result["tags"][tag_id]["position"] = None if position is None else [round(v, 3) for v in position]
                result["tags"][tag_id]["gateways"] = self.rooms.describe(self.radio, position, tag.tx_power_at_1m)
                for gateway_id, slow in self.rooms.slow_now(tag_id).items():
                    result["tags"][tag_id]["gateways"][gateway_id]["slowDb"] = slow
        return result

    def _status(self) -> dict:
        return {
            "scenario": self.scenario_name,
            "uptime": round(self.uptime(), 3),
            "scenarioTime": round(self.scenario_time(), 3),
            "muted": self.muted,
            "tags": {
                tag_id: {
                    "pdus": self.stats[tag_id].pdus,
                    "reports": self.stats[tag_id].reports,
                    "distance": _finite_or_none(self.distance_of(tag)),
                    "address": str(tag.address),
                    "identity": tag.identity,
                    "intervalMs": tag.interval_s * 1000.0,
                    "connectable": tag.connectable,
                    "advertising": tag.advertising_at(self.scenario_time()) and not self.muted,
                    "connected": tag.link is not None,
                    "proof": tag.peer.variant if tag.peer is not None else None,
                }
                for tag_id, tag in self.tags.items()
            },
            "otherReports": self.other_reports,
        }


def _finite_or_none(value: float) -> float | None:
    return round(value, 3) if value != float("inf") else None
