"""Rooms: several gateways at 2-D positions, walls between them, tags on 2-D paths.

A scenario with `gateways` is a rooms world (see Tests/World/README.md, "Rooms"): each
gateway is one controller at a position on the floor, served on an H4 port of its own;
a tag has a position over time instead of one distance to "the door". What a gateway
hears of a tag is the log-distance path loss from the tag to *that* gateway, the loss of
every wall the straight line between them crosses, a slow fading of that gateway and
tag (an Ornstein–Uhlenbeck process: people turning, doors opening) and a fast one per
PDU, each gateway's drawn from its own seeded generator, so two doors hear one person
independently.
"""

from __future__ import annotations
import bisect
import dataclasses
import math
import random
import re

from . import hcibytes
from .radio import RadioModel

Point = tuple[float, float]

GATEWAY_ID = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
GATEWAY_KEYS = {"id", "position", "port"}
WALL_KEYS = {"from", "to", "loss_db"}


def point(value, what: str) -> Point:
    if (not isinstance(value, (list, tuple)) or len(value) != 2
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value)):
        raise ValueError(f"{what} must be [x, y] in metres, not {value!r}")
    return float(value[0]), float(value[1])


# The slow fading's step (s): its value holds for a step.
SLOW_STEP_S = 0.1


@dataclasses.dataclass
class Fading:
    """On top of the radio's `sigma_db` per PDU: a slow fading per gateway and tag
    (σ `slow_sigma_db`, correlation time `slow_tau_s`), a deep fade of `deep_fade_db` for
    a share `deep_fade_chance` of PDUs, and a share `loss_chance` of PDUs not received."""

    slow_sigma_db: float = 0.0
    slow_tau_s: float = 30.0
    deep_fade_chance: float = 0.0
    deep_fade_db: float = 10.0
    loss_chance: float = 0.0

    @classmethod
    def from_dict(cls, data: dict | None) -> "Fading":
        data = dict(data or {})
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown fading keys: {sorted(unknown)} (valid: {sorted(known)})")
        fading = cls(**{k: float(v) for k, v in data.items()})
        if fading.slow_sigma_db < 0 or fading.deep_fade_db < 0 or fading.slow_tau_s <= 0:
            raise ValueError("fading: slow_sigma_db and deep_fade_db must be >= 0, slow_tau_s > 0")
        if not (0 <= fading.deep_fade_chance <= 1 and 0 <= fading.loss_chance <= 1):
            raise ValueError("fading: deep_fade_chance and loss_chance are shares within 0…1")
        return fading


@dataclasses.dataclass(eq=False)
class Gateway:
    """One controller's place: its H4 port (0: any free) and its own radio's randomness."""

    id: str
    position: Point
    port: int
    index: int
    rng: random.Random
    # The world's seed: each tag's slow fading here is drawn from its own generator.
    seed: int = 0
    # Per tag id: the slow fading's value (dB), its step, and the generator it is drawn from.
    slow: dict[str, tuple[float, int, random.Random]] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class Wall:
    start: Point
    end: Point
    loss_db: float

    def crosses(self, a: Point, b: Point) -> bool:
        """Whether the segment a–b crosses this wall (touching an end counts: a line
        through a wall's end goes through the wall)."""
        return _segments_intersect(a, b, self.start, self.end)


def _orientation(p: Point, q: Point, r: Point) -> float:
    return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])


def _on_segment(p: Point, q: Point, r: Point) -> bool:
    return min(p[0], r[0]) - 1e-9 <= q[0] <= max(p[0], r[0]) + 1e-9 and min(p[1], r[1]) - 1e-9 <= q[1] <= max(p[1], r[1]) + 1e-9


def _segments_intersect(a: Point, b: Point, c: Point, d: Point) -> bool:
    eps = 1e-12
    o1, o2 = _orientation(a, b, c), _orientation(a, b, d)
    o3, o4 = _orientation(c, d, a), _orientation(c, d, b)
    if ((o1 > eps and o2 < -eps) or (o1 < -eps and o2 > eps)) and ((o3 > eps and o4 < -eps) or (o3 < -eps and o4 > eps)):
        return True
    return ((abs(o1) <= eps and _on_segment(a, c, b)) or (abs(o2) <= eps and _on_segment(a, d, b))
            or (abs(o3) <= eps and _on_segment(c, a, d)) or (abs(o4) <= eps and _on_segment(c, b, d)))


def waypoint_at(times: list[float], waypoints: list, loop: bool, t: float) -> tuple:
    """The waypoints' values on either side of scenario time `t` and how far between them
    (0 ≤ share < 1): the first or last held before or after them (share 0), the script
    repeated with the period of its last waypoint when `loop`."""
    period = waypoints[-1][0]
    if loop and period > 0:
        t = t % period
    i = bisect.bisect_right(times, t)
    if i == 0 or i >= len(waypoints):
        value = waypoints[0 if i == 0 else -1][1]
        return value, value, 0.0
    (t0, v0), (t1, v1) = waypoints[i - 1], waypoints[i]
    return v0, v1, (t - t0) / (t1 - t0)


class PathXY:
    """A tag's position over scenario time: waypoints (t seconds, [x, y] or null), linear
    in between, held before the first and after the last; `loop` repeats the script with
    the period of its last waypoint. null is "not here" (heard by no gateway); arriving
    from or leaving to it steps at the far waypoint, as `tags.Trajectory` does."""

    def __init__(self, waypoints: list[tuple[float, Point | None]], loop: bool = False) -> None:
        if not waypoints:
            raise ValueError("a path needs at least one waypoint")
        self.waypoints = sorted(waypoints, key=lambda w: w[0])
        self.loop = loop
        self._times = [t for t, _ in self.waypoints]

    @classmethod
    def fixed(cls, position: Point | None) -> "PathXY":
        return cls([(0.0, position)])

    def position_at(self, t: float) -> Point | None:
        p0, p1, share = waypoint_at(self._times, self.waypoints, self.loop, t)
        if p0 is None or p1 is None or share == 0.0:
            return p0
        return p0[0] + (p1[0] - p0[0]) * share, p0[1] + (p1[1] - p0[1]) * share


def is_xy_path(path) -> bool:
    """Whether a scenario `path` is of positions ([t, [x, y]]) rather than distances."""
    return any(isinstance(w, (list, tuple)) and len(w) == 2 and isinstance(w[1], (list, tuple)) for w in path)


def path_from_spec(spec: dict, tag_id: str) -> PathXY | None:
    """The tag's 2-D placement (`position`, or a `path` of positions), or None for a tag
    placed by distance."""
    if "position" in spec:
        if "path" in spec or "distance" in spec:
            raise ValueError(f"tag {tag_id!r}: position excludes path and distance")
        position = spec["position"]
        return PathXY.fixed(None if position is None else point(position, f"tag {tag_id!r}: position"))
    path = spec.get("path")
    if path is None or not is_xy_path(path):
        return None
    if "distance" in spec:
        raise ValueError(f"tag {tag_id!r}: a path of positions excludes distance")
    waypoints = []
    for waypoint in path:
        if not isinstance(waypoint, (list, tuple)) or len(waypoint) != 2:
            raise ValueError(f"tag {tag_id!r}: a waypoint is [t, [x, y]] or [t, null], not {waypoint!r}")
        t, where = waypoint
        waypoints.append((float(t), None if where is None else point(where, f"tag {tag_id!r}: waypoint at {t} s")))
    return PathXY(waypoints, loop=bool(spec.get("loop", False)))


class Rooms:
    """The gateways, the walls and the fading of a rooms world."""

    def __init__(self, gateways: list[Gateway], walls: list[Wall], fading: Fading) -> None:
        self.gateways = gateways
        self.walls = walls
        self.fading = fading
        self._by_id = {gateway.id: gateway for gateway in gateways}

    @classmethod
    def from_scenario(cls, scenario: dict, seed: int) -> "Rooms | None":
        specs = scenario.get("gateways")
        if specs is None:
            for key in ("walls", "fading"):
                if key in scenario:
                    raise ValueError(f"{key} need gateways (a rooms world)")
            return None
        if not isinstance(specs, list) or not specs:
            raise ValueError("gateways must be a non-empty list")
        gateways = []
        for index, spec in enumerate(specs):
            unknown = set(spec) - GATEWAY_KEYS
            if unknown:
                raise ValueError(f"gateway {spec.get('id')!r}: unknown keys {sorted(unknown)}")
            gateway_id = str(spec.get("id", ""))
            if not GATEWAY_ID.fullmatch(gateway_id):
                raise ValueError(f"gateway id {gateway_id!r}: 1…64 of letters, digits and _ . : -")
            if any(g.id == gateway_id for g in gateways):
                raise ValueError(f"duplicate gateway id {gateway_id!r}")
            port = int(spec.get("port", 0))
            if not 0 <= port <= 65535:
                raise ValueError(f"gateway {gateway_id!r}: port must be within 0…65535")
            gateways.append(Gateway(gateway_id, point(spec.get("position"), f"gateway {gateway_id!r}: position"), port,
                                    index, random.Random(seed * 7_919 + 104_729 * (index + 1)), seed))
        walls = []
        for spec in scenario.get("walls", []):
            unknown = set(spec) - WALL_KEYS
            if unknown:
                raise ValueError(f"wall: unknown keys {sorted(unknown)}")
            loss = float(spec.get("loss_db", 0))
            if not 0 <= loss <= 100:
                raise ValueError(f"wall: loss_db must be within 0…100, not {loss}")
            walls.append(Wall(point(spec.get("from"), "wall: from"), point(spec.get("to"), "wall: to"), loss))
        return cls(gateways, walls, Fading.from_dict(scenario.get("fading")))

    def gateway(self, gateway_id: str) -> Gateway:
        gateway = self._by_id.get(gateway_id)
        if gateway is None:
            raise ValueError(f"no gateway {gateway_id!r} (gateways: {', '.join(self._by_id)})")
        return gateway

    # -- the model ---------------------------------------------------------------

    def wall_loss(self, position: Point, gateway: Gateway) -> float:
        return sum(wall.loss_db for wall in self.walls if wall.crosses(position, gateway.position))

    @staticmethod
    def distance(position: Point, gateway: Gateway) -> float:
        return math.hypot(position[0] - gateway.position[0], position[1] - gateway.position[1])

    def mean_rssi(self, radio: RadioModel, position: Point | None, gateway: Gateway,
                  tx_power_at_1m: float | None = None) -> float | None:
        """Path loss and walls, no fading; None beyond the radio's range."""
        if position is None:
            return None
        distance = self.distance(position, gateway)
        if distance > radio.max_range_m:
            return None
        return radio.mean_rssi(distance, tx_power_at_1m) - self.wall_loss(position, gateway)

    def in_range(self, radio: RadioModel, position: Point | None, gateway: Gateway,
                 tx_power_at_1m: float | None = None) -> bool:
        mean = self.mean_rssi(radio, position, gateway, tx_power_at_1m)
        return mean is not None and mean >= radio.min_rssi

    def slow_fading(self, gateway: Gateway, tag_id: str, now: float) -> float:
        """The gateway's slow fading of this tag at `now` (seconds since the scenario's
        script started): an Ornstein–Uhlenbeck process on steps of `SLOW_STEP_S`, drawn
        from a generator of its own seeded by the world's seed, the gateway and the tag. It
        is a function of the seed and the time only: a busy machine, which moves when each
        PDU is drawn, does not change what the radio does (a script started again starts
        it again)."""
        sigma = self.fading.slow_sigma_db
        if sigma <= 0:
            return 0.0
        step = max(int(now / SLOW_STEP_S), 0)
        state = gateway.slow.get(tag_id)
        if state is None or step < state[1]:
            rng = random.Random(f"slow fading {gateway.seed} {gateway.index} {tag_id}")
            state = (rng.gauss(0.0, sigma), 0, rng)  # stationary from the start
        value, at, rng = state
        decay = math.exp(-SLOW_STEP_S / self.fading.slow_tau_s)
        spread = sigma * math.sqrt(1 - decay * decay)
        while at < step:
            value = value * decay + spread * rng.gauss(0.0, 1.0)
            at += 1
        gateway.slow[tag_id] = (value, at, rng)
        return value

    def sample(self, radio: RadioModel, position: Point | None, gateway: Gateway, tag_id: str, now: float,
               tx_power_at_1m: float | None = None) -> int | None:
        """The RSSI this gateway receives one PDU of the tag with, or None (not received)."""
        mean = self.mean_rssi(radio, position, gateway, tx_power_at_1m)
        if mean is None:
            return None
        rng = gateway.rng
        slow = self.slow_fading(gateway, tag_id, now)
        if rng.random() < self.fading.loss_chance:
            return None
        rssi = mean + slow + rng.gauss(0.0, radio.sigma_db)
        if rng.random() < self.fading.deep_fade_chance:
            rssi -= self.fading.deep_fade_db
        if rssi < radio.min_rssi:
            return None
        return int(max(hcibytes.RSSI_MIN, min(hcibytes.RSSI_MAX, round(rssi))))

    def describe(self, radio: RadioModel, position: Point | None, tx_power_at_1m: float | None = None) -> dict:
        """Per gateway: distance, walls crossed (dB) and mean RSSI of a tag at `position`."""
        result = {}
        for gateway in self.gateways:
            if position is None:
                result[gateway.id] = {"distance": None, "wallsDb": None, "meanRssi": None}
                continue
            mean = self.mean_rssi(radio, position, gateway, tx_power_at_1m)
            result[gateway.id] = {"distance": round(self.distance(position, gateway), 3),
                                  "wallsDb": round(self.wall_loss(position, gateway), 3),
                                  "meanRssi": None if mean is None else round(mean, 2)}
        return result

    def slow_now(self, tag_id: str) -> dict[str, float | None]:
        """Per gateway, the slow fading of the tag as last drawn (None: not yet heard)."""
        return {g.id: (round(g.slow[tag_id][0], 2) if tag_id in g.slow else None) for g in self.gateways}
