"""Two neighbouring doors in two rooms (SPEC §17, docs/neighbours.md) with real processes:
two `beacon-gateway run`, each on its own gateway of one rooms world (Tests/World/README.md,
"Rooms"), a real mosquitto between them for the sightings (docs/site-bus.md), and each door
its own event server, where the decisions are judged.

The world is docs/neighbours.md's: rooms A (x 1…6 m) and B (x 6…11 m) side by side, a 6 dB
drywall between them, a corridor along their fronts (y < 0) behind a 6 dB front wall with
a doorway per room, the two gateways just inside their doorways 2.4 m apart; a
log-distance path loss (−59 dBm at 1 m, exponent 2.2) and, at each gateway, its own slow
fading (σ 2 dB, τ 30 s) and fast one (σ 3 dB, 5 % deep fades of 10 dB, 10 % lost).
People walk at 1.2 m/s. The presence timings are compressed (`lost_after_s` 2,
`leave_after_s` 4, `handover_s` 3); the rule's own times (3 s of lead, 10 s of
silence, 2 s at a start) are the product's. `window_s` is 2: on `tcp:` reads gather up to
a second and a report counts from its read (docs/presence.md, "The signal"), and a window
of 1 s would at times hold fewer than `min_samples` of a present person (read by the rule
as "not heard here": docs/neighbours.md, "Status").

Each test takes about a minute of wall clock on the world's timeline, the doors mostly
idle: marked `waits`, they run beside the rest of the suite (docs/development.md).

Every wait is on a log line, a server record or the world's status, with a deadline.
Skipped (with the reason) when the binary is missing."""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import math
import os
import pathlib
import socket
import threading
import time

import pytest

from bgworld.rooms import PathXY
from conftest import wait_until
from eventserver import EventServer
from test_run import TOKEN, Agent, agents, ibeacon, person_id, tag_id, world_tag  # noqa: F401 - fixtures

SITE = "S_TEST"
PREFIX = "beacon-gateway"
DOORS = ("door-a", "door-b")
GATEWAYS = {"door-a": (4.8, 0.3), "door-b": (7.2, 0.3)}
WALL_X = 6.0
SPEED = 1.2  # m/s
MASTER_KEY = "5a" * 32

PRESENCE = {
    "enter_rssi": -78, "exit_rssi": -84, "window_s": 2.0, "min_samples": 3,
    "lost_after_s": 2, "leave_after_s": 4, "away_after_s": 6,
}
HANDOVER_S = 3
MARGIN_DB = 6
# Bounds of a stay's events (docs/presence.md, docs/neighbours.md, "The rule"): at a seat
# where no door leads by the margin (by the shared wall), the checkin comes after 10 s as
# the strongest, counted once this door's window holds the person (window_s) and the
# neighbour's strongest of the last 3 s no longer holds them walking past its doorway
# into this room (3 s), and a report period and the bus (2 s) for the confirming report:
# 17 s after the person enters the room. A checkout within lost_after_s + leave_after_s
# of going out of range.
CHECKIN_WITHIN_S = PRESENCE["window_s"] + 3 + 10 + 2
CHECKOUT_WITHIN_S = PRESENCE["lost_after_s"] + PRESENCE["leave_after_s"] + 3


def region(position) -> str:
    if position is None:
        return "away"
    x, y = position
    if y <= 0:
        return "corridor"
    return "A" if x < WALL_X else "B"


ROOM_OF = {"door-a": "A", "door-b": "B"}
DOOR_OF = {"A": "door-a", "B": "door-b"}


def rooms_world(people: list["Walker"], slow_sigma_db: float = 2) -> dict:
    front = 6  # the corridor's wall, with a doorway 1 m wide in front of each gateway
    return {
        "name": "two-rooms",
        "radio": {"tx_power_at_1m": -59, "path_loss_exponent": 2.2, "sigma_db": 3, "min_rssi": -95,
                  "min_distance_m": 0.5},
        "gateways": [{"id": door, "position": list(GATEWAYS[door])} for door in DOORS],
        "walls": [
            {"from": [WALL_X, 0], "to": [WALL_X, 5], "loss_db": 6},
            {"from": [1, 0], "to": [4.3, 0], "loss_db": front},
            {"from": [5.3, 0], "to": [6.7, 0], "loss_db": front},
            {"from": [7.7, 0], "to": [11, 0], "loss_db": front},
        ],
        "fading": {"slow_sigma_db": slow_sigma_db, "slow_tau_s": 30, "deep_fade_chance": 0.05, "deep_fade_db": 10,
                   "loss_chance": 0.1},
        "tags": [world_tag(p.index, path=p.path()) for p in people],
    }


class Walker:
    """One person's script on the floor: appears at a point, walks (1.2 m/s), sits, leaves."""

    def __init__(self, index: int, appears: float, at: tuple[float, float]) -> None:
        self.index = index
        self.t = appears
        self.waypoints: list[tuple[float, tuple[float, float] | None]] = [(0.0, None), (appears, at)]

    @property
    def here(self) -> tuple[float, float]:
        return self.waypoints[-1][1]

    def walk(self, *points: tuple[float, float]) -> "Walker":
        for point in points:
            here = self.here
            self.t += math.hypot(point[0] - here[0], point[1] - here[1]) / SPEED
            self.waypoints.append((self.t, point))
        return self

    def sit(self, seconds: float) -> "Walker":
        self.t += seconds
        self.waypoints.append((self.t, self.here))
        return self

    def leave(self) -> "Walker":
        self.waypoints.append((self.t + 0.01, None))
        self.gone = self.t + 0.01
        return self

    def path(self) -> list:
        return [[t, None if p is None else list(p)] for t, p in self.waypoints]

    def position(self, t: float):
        return PathXY(self.waypoints).position_at(t)

    def region_at(self, t: float) -> str:
        return region(self.position(t))

    def stays(self) -> list[tuple[str, float, float]]:
        """(room, entered, left) of every stretch of 10 s or more in one room."""
        result, step = [], 0.05
        current, since, t = None, 0.0, 0.0
        while t <= self.t + 1:
            now = self.region_at(t)
            if now != current:
                if current in ("A", "B") and t - since >= 10:
                    result.append((current, since, t))
                current, since = now, t
            t += step
        return result

    def entered(self, room: str, after: float = 0.0) -> float:
        t = after
        while self.region_at(t) != room:
            t += 0.05
            assert t < self.t + 1, f"person {self.index} never enters {room} after {after} s"
        return t


# Seats by the shared wall, 0.4 m from it (docs/neighbours.md's).
WALL_SEAT_A = [(5.6, 1.5), (5.6, 2.5)]
WALL_SEAT_B = [(6.4, 1.5), (6.4, 2.5)]


# Where people come from and go to: the corridor's ends, out of hearing above
# `enter_rssi` at either door (a person appearing next to a doorway would be taken by the
# door whose window fills first, before the neighbour's first report of them).
WEST, EAST = (-4.0, -1.0), (16.0, -1.0)


def into_a(walker: Walker, seat) -> Walker:
    """Along the corridor to A's doorway, in, to the seat."""
    return walker.walk((4.8, -1.0), (4.8, 0.5), seat)


def into_b(walker: Walker, seat) -> Walker:
    return walker.walk((7.2, -1.0), (7.2, 0.5), seat)


def out_of_a(walker: Walker) -> Walker:
    """Out through A's doorway and west along the corridor, away from B's doorway."""
    return walker.walk((4.8, 0.5), (4.8, -1.0), WEST).leave()


def out_of_b(walker: Walker) -> Walker:
    return walker.walk((7.2, 0.5), (7.2, -1.0), EAST).leave()


# MARK: - the sightings on the bus (docs/neighbours.md, "Sighting reports")

def person_hash(person: str) -> bytes:
    k_person = hmac.new(bytes.fromhex(MASTER_KEY), b"BGW-SIGHTING-PERSON-v1", hashlib.sha256).digest()
    return hmac.new(k_person, person.encode(), hashlib.sha256).digest()[:8]


def decode_report(payload: bytes) -> tuple[str, int, list[tuple[bytes, int, bool]]]:
    """(sender, wall ms, [(person hash, rssi, holds)]) of a report (its signature unchecked:
    the doors check it; version 2, flags bit 0 holds, bit 1 a passage confirmed)."""
    assert payload[:4] == b"BGS\x02", payload[:4]
    length = payload[4]
    sender = payload[5:5 + length].decode()
    offset = 5 + length
    wall = int.from_bytes(payload[offset:offset + 8], "big", signed=True)
    count = int.from_bytes(payload[offset + 8:offset + 10], "big")
    offset += 10
    sightings = []
    for _ in range(count):
        person, rssi, flags = payload[offset:offset + 8], payload[offset + 8], payload[offset + 9]
        assert flags & ~0x03 == 0, flags
        sightings.append((person, rssi - 256 if rssi > 127 else rssi, bool(flags & 1)))
        offset += 10
    return sender, wall, sightings


# MARK: - two doors

@dataclasses.dataclass
class Door:
    id: str
    config: pathlib.Path
    server: EventServer
    agent: Agent | None = None

    def events(self) -> list[dict]:
        snapshot = self.server.snapshot()
        return [snapshot["events"][key] for key in snapshot["order"]]


def door_config(directory: pathlib.Path, door: str, transport: str, server: EventServer, broker_url: str,
                persons: list[int], key_file: pathlib.Path) -> pathlib.Path:
    directory.mkdir(parents=True, exist_ok=True)
    token_file = directory / "token"
    token_file.write_text(TOKEN + "\n")
    os.chmod(token_file, 0o600)
    neighbour = next(d for d in DOORS if d != door)
    lines = ["[gateway]", f'id = "{door}"', f'site = "{SITE}"', f'door = "{door}"',
             f'state_dir = "{directory / "state"}"', 'log_level = "info"', "",
             "[bluetooth]", f'transport = "{transport}"', 'scan = "passive"', "tag_interval_ms = 100", "",
             "[presence]", *[f"{k} = {v}" for k, v in PRESENCE.items()], "",
             "[server]", f'url = "{server.url}"', f'token_file = "{token_file}"', "timeout_s = 2",
             "max_backoff_s = 2", "heartbeat_s = 1", "",
             "[security]", f'master_key_file = "{key_file}"', "",
             "[site]", f'neighbours = ["{neighbour}"]', f"margin_db = {MARGIN_DB}", f"handover_s = {HANDOVER_S}", "",
             "[mqtt]", f'url = "{broker_url}"']
    for index in persons:
        lines += ["", "[[person]]", f'id = "{person_id(index)}"', f'name = "Person {index + 1}"',
                  "  [[person.tag]]", f'  id = "{tag_id(index)}"', f'  ibeacon = "{ibeacon(index)}"']
    path = directory / "gateway.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def servers():
    made: list[EventServer] = []

    def make() -> EventServer:
        server = EventServer().start()
        made.append(server)
        return server

    yield make
    for server in made:
        server.stop()


class TwoDoors:
    """The world, the broker and both doors, with the scenario clock: scenario second 0 is
    the `restart-script` once both doors scan and are on the bus."""

    def __init__(self, gateway_bin, world_factory, agents, servers, broker, tmp_path, people: list[Walker],
                 slow_sigma_db: float = 2) -> None:
        self.people = people
        self.world = world_factory(rooms_world(people, slow_sigma_db), seed=0x516E)
        self.broker = broker
        self.binary = gateway_bin
        self.start_agent = agents
        key = tmp_path / "master.key"
        key.write_text(MASTER_KEY + "\n")
        os.chmod(key, 0o600)
        self.doors: dict[str, Door] = {}
        for door in DOORS:
            server = servers()
            config = door_config(tmp_path / door, door, self.world.transport_of(door), server, broker.url,
                                 [p.index for p in people], key)
            self.doors[door] = Door(door, config, server)
        for door in DOORS:
            self.start(door)
        for door in self.doors.values():
            door.agent.wait_log(r"site bus up")
        self.sightings = broker.subscriber(f"{PREFIX}/{SITE}/sightings/#", qos=0)
        self.t0 = self._restart_script()
        self._samples: list[tuple[float, dict]] = []
        self._stop = threading.Event()
        self._sampler = threading.Thread(target=self._sample, daemon=True)
        self._sampler.start()

    def _sample(self) -> None:
        """What each gateway's radio gives each person (mean and slow fading), twice a
        second from the world's status: the timeline of a failure shows the leads."""
        # A control connection of its own (the test's is not shared across threads).
        try:
            with socket.create_connection(self.world.control_address, timeout=10) as channel:
                lines = channel.makefile("rw", encoding="utf-8", newline="\n")
                while not self._stop.wait(0.5):
                    lines.write("status\n")
                    lines.flush()
                    tags = json.loads(lines.readline())["tags"]
                    self._samples.append((self.now(), {
                        tag: {door: (g["meanRssi"], g["slowDb"]) for door, g in value["gateways"].items()}
                        for tag, value in tags.items()}))
        except (OSError, ValueError):
            return  # the world closed (the test ended)

    def reports_at(self, t: float, index: int) -> str:
        """What each door's latest report made before scenario time t said of the person
        (docs/neighbours.md's format): 'A −63 holds' …"""
        person = person_hash(person_id(index))
        latest: dict[str, tuple[float, str]] = {}
        for message in self.sightings.messages:
            sender, made, sightings = decode_report(message.payload)
            made_t = made / 1000 - self.t0
            if made_t > t or (sender in latest and latest[sender][0] > made_t):
                continue
            said = next((f"{rssi}{' holds' if holds else ''}" for h, rssi, holds in sightings if h == person), "-")
            latest[sender] = (made_t, said)
        return " ".join(f"{door[-1].upper()}@{made:.1f} {said}" for door, (made, said) in sorted(latest.items()))

    def radio_at(self, t: float, index: int) -> str:
        """'A −62+1.5 B −71−0.3' (mean and slow fading at each gateway) near scenario time t."""
        if not self._samples:
            return ""
        _, tags = min(self._samples, key=lambda sample: abs(sample[0] - t))
        parts = []
        for door, (mean, slow) in tags[tag_id(index)].items():
            parts.append(f"{door[-1].upper()} {mean if mean is not None else '-'}{'' if slow is None else f'{slow:+.1f}'}")
        return " ".join(parts)

    def start(self, door: str) -> Agent:
        self.doors[door].agent = self.start_agent(self.binary, self.doors[door].config)
        self.doors[door].agent.wait_log(r"controller up")
        return self.doors[door].agent

    def _restart_script(self) -> float:
        self.world.control("restart-script")
        status = self.world.status()
        return time.time() - status["scenarioTime"]

    def now(self) -> float:
        return time.time() - self.t0

    def at(self, timestamp: str) -> float:
        """An event's ISO time in scenario seconds."""
        from test_run import millis
        return millis(timestamp) / 1000 - self.t0

    def wait_scenario(self, t: float, what: str) -> None:
        wait_until(lambda: self.now() >= t, t - self.now() + 10, what, poll=0.1)

    def person(self, user_id: str) -> Walker:
        return next(p for p in self.people if person_id(p.index) == user_id)

    def events(self) -> dict[str, list[dict]]:
        return {door: self.doors[door].events() for door in DOORS}

    def timeline(self) -> str:
        lines = []
        for door in DOORS:
            for event in self.doors[door].events():
                t = self.at(event["decidedAt"])
                walker = self.person(event["userId"])
                extra = f" {event.get('reason')}→{event.get('movedTo')}" if event.get("reason") else ""
                lines.append(f"{t:7.2f} s  {door} {event['type']:8} {event['userId']} (in {walker.region_at(t)},"
                             f" stamped {self.at(event['timestamp']):.2f} s){extra}  [{self.radio_at(t, walker.index)}]"
                             f" reports [{self.reports_at(t, walker.index)}]")
        return "\n".join(sorted(lines))

    def wrong_door_checkins(self, alone: set[str] = frozenset()) -> list[str]:
        """Checkins of a person who was in the other room when the door decided."""
        wrong = []
        for door in DOORS:
            for event in self.doors[door].events():
                if event["type"] != "checkin":
                    continue
                t = self.at(event["decidedAt"])
                where = self.person(event["userId"]).region_at(t)
                if where in ("A", "B") and where != ROOM_OF[door] and door not in alone:
                    wrong.append(f"{door} checked in {event['userId']} in room {where} at {t:.2f} s")
        return wrong

    def checkins_of(self, walker: Walker) -> list[tuple[str, float, str]]:
        """(door, scenario time, where the person was) of each checkin of the person."""
        result = []
        for door in DOORS:
            for event in checkins(self.doors[door].events(), person_id(walker.index)):
                t = self.at(event["decidedAt"])
                result.append((door, t, walker.region_at(t)))
        return result

    def checkin_counts(self) -> dict[str, int]:
        return {door: len([e for e in self.doors[door].events() if e["type"] == "checkin"]) for door in DOORS}

    def corridor_checkins(self) -> list[str]:
        return [f"{door} {person_id(p.index)} at {t:.1f} s" for p in self.people
                for door, t, where in self.checkins_of(p) if where == "corridor"]

    def visits(self, door: str, user: str) -> list[tuple[float, float]]:
        """The person's visits at the door, from the checkin's decision to the checkout's."""
        mine = [e for e in self.doors[door].events() if e["userId"] == user]
        opened, result = None, []
        for event in mine:
            if event["type"] == "checkin":
                opened = self.at(event["decidedAt"])
            elif opened is not None:
                result.append((opened, self.at(event["decidedAt"])))
                opened = None
        if opened is not None:
            result.append((opened, math.inf))
        return result

    def longest_double_visit(self) -> tuple[float, str]:
        """How long both doors held one person open at once, at most (as decided)."""
        longest = (0.0, "")
        for person in self.people:
            user = person_id(person.index)
            for a_in, a_out in self.visits("door-a", user):
                for b_in, b_out in self.visits("door-b", user):
                    overlap = min(a_out, b_out) - max(a_in, b_in)
                    if overlap > longest[0]:
                        longest = (overlap, f"{user} from {max(a_in, b_in):.1f} s")
        return longest

    def stop(self) -> None:
        self._stop.set()
        self._sampler.join(timeout=5)
        for door in self.doors.values():
            if door.agent is not None:
                door.agent.stop()


def checkins(events: list[dict], user: str) -> list[dict]:
    return [e for e in events if e["type"] == "checkin" and e["userId"] == user]


def checkouts(events: list[dict], user: str) -> list[dict]:
    return [e for e in events if e["type"] == "checkout" and e["userId"] == user]


def assert_paired(doors: TwoDoors) -> None:
    """At each door, each person's events alternate checkin, checkout, each visit once,
    every visit closed (nothing lost, nothing doubled)."""
    for door, events in doors.events().items():
        for walker in doors.people:
            user = person_id(walker.index)
            mine = [e for e in events if e["userId"] == user]
            kinds = [e["type"] for e in mine]
            assert kinds == ["checkin", "checkout"] * (len(kinds) // 2), f"{door} {user}: {kinds}\n{doors.timeline()}"
            for checkin, checkout in zip(mine[::2], mine[1::2]):
                assert checkin["visitStart"] == checkout["visitStart"], f"{door} {user}\n{doors.timeline()}"
            keys = [e["idempotencyKey"] for e in mine]
            assert len(set(keys)) == len(keys)


# MARK: - tests

@pytest.mark.waits  # a minute of the world's timeline
def test_two_doors_check_each_stay_in_at_its_own_door_and_hand_a_mover_over(gateway_bin, world_factory, agents,
                                                                            servers, mqtt_broker, tmp_path):
    # By the shared wall in A and in B, a person moving from A's wall to B's, and one
    # walking along the corridor past both doorways.
    wall_a = out_of_a(into_a(Walker(0, 1, WEST), WALL_SEAT_A[0]).sit(28))
    wall_b = out_of_b(into_b(Walker(1, 2, EAST), WALL_SEAT_B[1]).sit(30))
    mover = Walker(2, 3, WEST)
    into_a(mover, WALL_SEAT_A[1]).sit(15)
    mover.walk((4.8, 0.5), (4.8, -1.0), (7.2, -1.0))
    out_of_b(into_b(mover, WALL_SEAT_B[0]).sit(15))
    walker = Walker(3, 6, WEST).walk((14.0, -1.0)).leave()
    people = [wall_a, wall_b, mover, walker]
    doors = TwoDoors(gateway_bin, world_factory, agents, servers, mqtt_broker, tmp_path, people)

    # Every stay closed at its door (the last leaves at about 58 s).
    last = max(p.gone for p in people)
    doors.wait_scenario(last, "the last person gone")
    expected = {"door-a": 2, "door-b": 2}  # wall_a and the mover at A; wall_b and the mover at B
    wait_until(lambda: all(len([e for e in doors.doors[d].events() if e["type"] == "checkout"]) >= n
                           for d, n in expected.items()),
               CHECKOUT_WITHIN_S + 5, f"every checkout\n{doors.timeline()}")
    timeline = doors.timeline()
    print(timeline)
    events = doors.events()

    assert doors.wrong_door_checkins() == [], timeline
    assert_paired(doors)
    # Each stay: checked in at its own door (on the way in, or soon after entering), and
    # once only; out after leaving.
    for person in (wall_a, wall_b, mover):
        user = person_id(person.index)
        for room, entered, left in person.stays():
            door = DOOR_OF[room]
            ins = [e for e in checkins(events[door], user) if doors.at(e["decidedAt"]) <= left]
            assert len(ins) == 1, f"{user} in {room} {entered:.1f}…{left:.1f} s\n{timeline}"
            assert doors.at(ins[0]["decidedAt"]) - entered <= CHECKIN_WITHIN_S, f"{user} late at {door}\n{timeline}"
    for person, door in ((wall_a, "door-a"), (wall_b, "door-b"), (mover, "door-b")):
        out = checkouts(events[door], person_id(person.index))[-1]
        assert "reason" not in out
        assert person.gone <= doors.at(out["decidedAt"]) <= person.gone + CHECKOUT_WITHIN_S, timeline
    # The move: A checks the mover out as moved to B within handover_s + 2 s of entering B.
    entered_b = mover.entered("B", after=20)
    moved = checkouts(events["door-a"], person_id(mover.index))
    assert len(moved) == 1 and moved[0]["reason"] == "moved" and moved[0]["movedTo"] == "door-b", timeline
    latency = doors.at(moved[0]["decidedAt"]) - entered_b
    print(f"moved: decided {latency:.2f} s after entering B")
    assert latency <= HANDOVER_S + 2, timeline
    # Never both doors holding one person for more than handover_s + 2 s (SPEC §17).
    double = doors.longest_double_visit()
    print(f"figures: checkins {doors.checkin_counts()}, wrong door 0, move decided {latency:.2f} s after entering B, "
          f"longest double visit {double[0]:.2f} s ({double[1]}), corridor checkins {doors.corridor_checkins()}")
    assert double[0] <= HANDOVER_S + 2, timeline
    # The walker passes both doorways: checked in nowhere but in the corridor (the rule
    # may take a passer-by it leads for 3 s: docs/neighbours.md, "Status").
    assert all(where == "corridor" for _, _, where in doors.checkins_of(walker)), timeline
    doors.stop()


class WrongDoorCheckin(AssertionError):
    """A door checked in a person seated in the other room while that neighbour counted."""


def events_at(doors: TwoDoors, door: str, kind: str, user: str, **fields) -> list[dict]:
    return [e for e in doors.doors[door].events()
            if e["type"] == kind and e["userId"] == user and all(e.get(k) == v for k, v in fields.items())]


def wait_event(doors: TwoDoors, door: str, kind: str, user: str, timeout: float, **fields) -> dict:
    started = doors.now()
    try:
        found = wait_until(lambda: events_at(doors, door, kind, user, **fields), timeout, f"{kind} of {user} at {door} {fields or ''}")
    except AssertionError as failure:
        # What the doors decided and heard until now (not when the wait began), and, every
        # 2 s of the wait, what each radio gave the person and what the doors' reports said.
        index = int(user.split("_")[1]) - 1
        heard = "\n".join(f"  {t:6.1f} s  radio [{doors.radio_at(t, index)}]  reports [{doors.reports_at(t, index)}]"
                          for t in (started + 2 * k for k in range(int((doors.now() - started) / 2) + 1)))
        raise AssertionError(f"{failure}\n{doors.timeline()}\n{user} during the wait:\n{heard}") from None
    return found[0]


@pytest.mark.waits  # a broker outage of about 20 s and the 10 s of a neighbour's silence
def test_with_the_broker_stopped_both_doors_decide_alone_and_say_so(gateway_bin, world_factory, agents, servers,
                                                                     mqtt_broker, tmp_path):
    from test_fleet import heartbeats
    # Each seated by the shared wall, where the other door hears them above enter_rssi.
    seated_a = into_a(Walker(0, 1, WEST), WALL_SEAT_A[0]).sit(600)
    seated_b = into_b(Walker(1, 2, EAST), WALL_SEAT_B[0]).sit(600)
    doors = TwoDoors(gateway_bin, world_factory, agents, servers, mqtt_broker, tmp_path, [seated_a, seated_b])
    a, b = (person_id(p.index) for p in (seated_a, seated_b))
    wait_event(doors, "door-a", "checkin", a, 30)
    wait_event(doors, "door-b", "checkin", b, 30)
    assert doors.wrong_door_checkins() == [], doors.timeline()

    mqtt_broker.stop()
    stopped = doors.now()
    for door in DOORS:
        doors.doors[door].agent.wait_log(r"site bus down")
    # Ten seconds without a report: each door decides alone for the other, and says so.
    for door, other in (("door-a", "door-b"), ("door-b", "door-a")):
        # (The first such line is the door's start, until its neighbour's first report.)
        line = doors.doors[door].agent.wait_log(r"neighbour silent: deciding alone for it", count=2, timeout=20)[-1]
        assert f"neighbour={other}" in line, line
        # The heartbeat says the bus is down (its neighbours and heard are not filled in
        # yet: HeartbeatBody writes 0 for both).
        server = doors.doors[door].server
        wait_until(lambda: any(h["body"].get("site", {}).get("bus") == "down" for h in heartbeats(server)), 10,
                   f"{door}'s heartbeat with the bus down (the last: "
                   f"{[h['body'].get('site') for h in heartbeats(server)][-3:]})\n{doors.timeline()}")
    # Alone, each door checks in the person by the wall next door (docs/neighbours.md,
    # "Why"): with the bus down that neighbour does not count (SPEC §17). In fact from
    # 3 s on, when its last sightings age out, not from the 10 s of silence the journal
    # reports.
    alone = [wait_event(doors, "door-b", "checkin", a, 15), wait_event(doors, "door-a", "checkin", b, 15)]
    print(f"alone: checked in next door {[round(doors.at(e['decidedAt']) - stopped, 2) for e in alone]} s "
          "after the broker stopped")
    assert all(doors.at(e["decidedAt"]) > stopped for e in alone)

    # The broker back: the doors hear each other again, and the weaker of two holding
    # doors yields each person to the stronger at once.
    mqtt_broker.start()
    # Each door reconnects on its own backoff (docs/site-bus.md): one may be back many
    # seconds before the other, and hears it only once both are.
    for door in DOORS:
        doors.doors[door].agent.wait_log(r"site bus up", count=2, timeout=45)
    for door in DOORS:
        doors.doors[door].agent.wait_log(r"neighbour heard again", count=2, timeout=10)
    back = doors.now()
    moved_a = wait_event(doors, "door-b", "checkout", a, 10, reason="moved", movedTo="door-a")
    moved_b = wait_event(doors, "door-a", "checkout", b, 10, reason="moved", movedTo="door-b")
    timeline = doors.timeline()
    print(timeline)
    for moved in (moved_a, moved_b):
        assert doors.at(moved["decidedAt"]) - back <= 3, timeline
    # Each person's own door kept them throughout: one visit, never checked out.
    assert [e["type"] for e in events_at(doors, "door-a", "checkin", a)] == ["checkin"]
    assert events_at(doors, "door-a", "checkout", a) == [] and events_at(doors, "door-b", "checkout", b) == []
    assert_paired_or_open(doors)
    doors.stop()


@pytest.mark.waits  # a door dead for about 6 s, its restart, the visits' checkouts
def test_a_door_killed_and_restarted_checks_in_nobody_next_door_and_loses_no_event(gateway_bin, world_factory, agents,
                                                                                  servers, mqtt_broker, tmp_path):
    seated_a = into_a(Walker(0, 1, WEST), WALL_SEAT_A[1]).sit(600)
    seated_b = out_of_b(into_b(Walker(1, 2, EAST), WALL_SEAT_B[1]).sit(32))
    # Arrives by A's wall while door B is dead, and is seated there when B starts again: B
    # hears them above enter_rssi at once.
    newcomer = into_a(Walker(2, 24, WEST), WALL_SEAT_A[0]).sit(600)
    # B is killed once both seated people are checked in, at the latest CHECKIN_WITHIN_S
    # after entering (a seat by the wall may wait for the 10 s as the strongest: with the
    # fast fading, a 7 dB lead does not always hold the margin for 3 s), and restarted 1 s
    # after the newcomer enters A, 4 s later.
    restart_at = newcomer.entered("A") + 1
    kill_at = restart_at - 4
    assert max(seated_a.entered("A"), seated_b.entered("B")) + CHECKIN_WITHIN_S <= kill_at
    # Without the slow fading: this test is about the kill and the restart, and needs door
    # B to hold its person by the wall when killed. With it, a draw that has A hear them
    # within 2 dB of B for the whole 20 s (seen under load: A +3.8 dB, B −1.4) leaves that
    # short stay unchecked-in anywhere, as the rule may (docs/neighbours.md, "Status": the
    # day test and scripts/bench-rooms measure those missed stays, with the fading).
    doors = TwoDoors(gateway_bin, world_factory, agents, servers, mqtt_broker, tmp_path, [seated_a, seated_b, newcomer],
                     slow_sigma_db=0)
    a, b, new = (person_id(p.index) for p in (seated_a, seated_b, newcomer))
    # (Decided by kill_at; on the door's server within the 2 s before the last moment B
    # may be killed.)
    wait_event(doors, "door-a", "checkin", a, restart_at - 2.5 - doors.now())
    wait_event(doors, "door-b", "checkin", b, restart_at - 2.5 - doors.now())
    # (A door logs its neighbour silent at its start too, until the first report.)
    silent_before = doors.doors["door-a"].agent.log().count("neighbour silent")
    doors.wait_scenario(kill_at, "the kill")
    killed = doors.doors["door-b"].agent
    killed.kill()
    killed_at = doors.now()
    assert killed_at < restart_at - 2, f"door B was killed late ({killed_at:.1f} s)"
    doors.wait_scenario(restart_at, "the newcomer seated by A's wall")
    again = doors.start("door-b")
    restarted = doors.now()
    # Up and reporting well within the 10 s after which A would find B silent.
    assert restarted - killed_at < 7, f"door B took {restarted - killed_at:.1f} s to come back"
    # A takes the newcomer once B's reports confirm its lead; B, which hears them above
    # enter_rssi from its first second, waits for A's sightings and takes nobody.
    wait_event(doors, "door-a", "checkin", new, 20)
    wait_event(doors, "door-b", "checkout", b, seated_b.gone - doors.now() + CHECKOUT_WITHIN_S + 5)
    timeline = doors.timeline()
    print(timeline)
    # First, as its own kind of failure (what follows depends on it: after a checkin at
    # the wrong door, the restarted door, its window not yet filled, yields its own person
    # to A, which holds them, as moved).
    wrong = doors.wrong_door_checkins()
    if wrong:
        raise WrongDoorCheckin(f"{wrong}; door B killed at {killed_at:.2f} s, back at {restarted:.2f} s\n{timeline}")
    assert events_at(doors, "door-b", "checkin", new) == [], timeline
    assert doors.doors["door-a"].agent.log().count("neighbour silent") == silent_before
    # The killed door's visit: one checkin before the kill, its checkout after the restart.
    assert [e["type"] for e in doors.doors["door-b"].events() if e["userId"] == b] == ["checkin", "checkout"], timeline
    out = events_at(doors, "door-b", "checkout", b)[0]
    assert seated_b.gone <= doors.at(out["decidedAt"]) <= seated_b.gone + CHECKOUT_WITHIN_S, timeline
    assert "controller up" in again.log()
    assert_paired_or_open(doors)
    doors.stop()



def assert_paired_or_open(doors: TwoDoors) -> None:
    """At each door, each person's events alternate checkin, checkout (the last visit may
    be open), each event once: nothing lost, nothing doubled."""
    for door, events in doors.events().items():
        for walker in doors.people:
            user = person_id(walker.index)
            mine = [e for e in events if e["userId"] == user]
            kinds = [e["type"] for e in mine]
            assert kinds == ["checkin", "checkout"] * (len(kinds) // 2) + ["checkin"] * (len(kinds) % 2), \
                f"{door} {user}: {kinds}\n{doors.timeline()}"
            keys = [e["idempotencyKey"] for e in mine]
            assert len(set(keys)) == len(keys)
        snapshot = doors.doors[door].server.snapshot()
        assert snapshot["schemaProblems"] == [] and snapshot["headerProblems"] == []
