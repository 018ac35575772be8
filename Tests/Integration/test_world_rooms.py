"""Self-tests of the world's rooms (Tests/World/README.md, "Rooms"): gateways at 2-D
positions, each on its own H4 port, hearing each tag with the path loss to *its* position,
the walls crossed and its own fading; connections and Read RSSI by the same model."""

from __future__ import annotations

import asyncio
import math
import random
import statistics

import pytest

from bgworld.centralclient import CentralClient
from bgworld.hostclient import HostClient
from bgworld.radio import RadioModel
from bgworld.rooms import Fading, Gateway, PathXY, Rooms, Wall
from bgworld.scenarios import DEMO_UUID
from conftest import WorldProcess

REASON_CONNECTION_TIMEOUT = 0x08
STATUS_SUCCESS = 0x00


def run(coroutine):
    return asyncio.run(coroutine)


def tag(number: int, **placement) -> dict:
    return {"id": f"t{number}", "kind": "ibeacon", "uuid": DEMO_UUID, "major": 9, "minor": number,
            "address": f"C0:00:00:00:09:{number:02X}", "interval_ms": 50, **placement}


# Gateway A at the origin, B 10 m east, a 10 dB wall halfway between them.
TWO_GATEWAYS = [{"id": "door-a", "position": [0, 0]}, {"id": "door-b", "position": [10, 0]}]
WALL = [{"from": [5, -5], "to": [5, 5], "loss_db": 10}]


def rooms_scenario(*tags: dict, walls=WALL, fading=None, radio=None) -> dict:
    scenario = {"name": "rooms", "gateways": TWO_GATEWAYS, "walls": walls, "tags": list(tags)}
    if fading is not None:
        scenario["fading"] = fading
    if radio is not None:
        scenario["radio"] = radio
    return scenario


async def scan_at(world: WorldProcess, gateway: str, predicate, timeout: float = 20.0):
    host, port = world.gateways[gateway]
    client = await HostClient.connect(host, port)
    try:
        await client.start_scanning()
        await client.wait_for_reports(predicate, timeout)
        return client.reports
    finally:
        await client.close()


def per_tag(reports, count: int, statistic) -> dict[str, float]:
    """`statistic` (statistics.median, statistics.mean) of the RSSI per tag number 1…count."""
    return {f"t{number}": statistic(r.rssi for r in reports if r.address == f"C0:00:00:00:09:{number:02X}")
            for number in range(1, count + 1)}


def medians(reports, count: int) -> dict[str, float]:
    """Median RSSI per tag number 1…count."""
    return per_tag(reports, count, statistics.median)


def means(reports, count: int) -> dict[str, float]:
    """Mean RSSI per tag number 1…count: where a test compares the model's mean within a
    bound, the mean of n samples strays σ/√n, the median of rounded samples up to a whole
    dB more (a median of 15–25 samples missed a 1.5–2 dB bound in 0.4–2.4 % of runs)."""
    return per_tag(reports, count, statistics.mean)


def each_heard(count: int, at_least: int):
    def check(reports) -> bool:
        return all(sum(r.address == f"C0:00:00:00:09:{n:02X}" for r in reports) >= at_least
                   for n in range(1, count + 1))
    return check


# -- pure parts -----------------------------------------------------------------------


def test_walls_crossed_add_their_loss_to_the_path_loss_of_each_gateway():
    radio = RadioModel(sigma_db=0.0)
    a = Gateway("a", (0.0, 0.0), 0, 0, random.Random(1))
    b = Gateway("b", (10.0, 0.0), 0, 1, random.Random(2))
    rooms = Rooms([a, b], [Wall((5, -5), (5, 5), 10.0), Wall((0, 3), (10, 3), 4.0)], Fading())
    near_a = (2.0, 0.0)
    assert rooms.mean_rssi(radio, near_a, a) == pytest.approx(-59 - 20 * math.log10(2))
    assert rooms.mean_rssi(radio, near_a, b) == pytest.approx(-59 - 20 * math.log10(8) - 10)
    # Both walls between (2, 4) and B; only the lower one between it and A.
    assert rooms.wall_loss((2.0, 4.0), a) == 4 and rooms.wall_loss((2.0, 4.0), b) == 14
    # Past the wall's end: no loss.
    assert rooms.wall_loss((8.0, -12.0), a) == 0
    assert rooms.mean_rssi(radio, None, a) is None
    assert rooms.mean_rssi(RadioModel(max_range_m=5), (9.0, 0.0), a) is None
    assert rooms.sample(radio, near_a, a, "t", 0.0) == round(-59 - 20 * math.log10(2))
    assert rooms.in_range(RadioModel(min_rssi=-80), (9.0, 0.0), b)
    assert not rooms.in_range(RadioModel(min_rssi=-80), (2.0, 0.0), b)  # -87 dBm through the wall


def test_a_path_of_positions_interpolates_steps_at_null_and_loops():
    path = PathXY([(0, (0.0, 0.0)), (10, (10.0, 0.0)), (20, None), (30, (0.0, 5.0))], loop=True)
    assert path.position_at(5) == pytest.approx((5.0, 0.0))
    assert path.position_at(15) == (10.0, 0.0)  # leaving to "away" steps at the far waypoint
    assert path.position_at(25) is None
    assert path.position_at(35) == pytest.approx((5.0, 0.0))  # period 30: t = 5
    assert PathXY.fixed((1.0, 2.0)).position_at(99) == (1.0, 2.0)


def test_fading_is_the_gateways_own_and_reproducible_from_the_seed():
    radio = RadioModel(sigma_db=3.0)
    fading = Fading(slow_sigma_db=2.0, slow_tau_s=5.0, deep_fade_chance=0.05, loss_chance=0.1)

    def draws(seed: int) -> tuple[list, list]:
        rooms = Rooms.from_scenario({"gateways": TWO_GATEWAYS, "fading": vars(fading)}, seed)
        a, b = rooms.gateways
        at = (5.0, 8.0)  # as far from both, no wall between
        return ([rooms.sample(radio, at, a, "t", 0.1 * i) for i in range(400)],
                [rooms.sample(radio, at, b, "t", 0.1 * i) for i in range(400)])

    a1, b1 = draws(7)
    a2, b2 = draws(7)
    assert (a1, b1) == (a2, b2)
    assert a1 != b1 and draws(8)[0] != a1
    lost = sum(value is None for value in a1)
    assert 15 <= lost <= 70, lost  # loss_chance 0.1 of 400
    heard = [value for value in a1 if value is not None]
    assert statistics.mean(heard) == pytest.approx(-59 - 20 * math.log10(math.hypot(5, 8)) - 0.5, abs=2.5)


def test_a_rooms_scenario_is_checked():
    with pytest.raises(ValueError, match="need gateways"):
        Rooms.from_scenario({"walls": WALL}, 1)
    with pytest.raises(ValueError, match="duplicate gateway"):
        Rooms.from_scenario({"gateways": [TWO_GATEWAYS[0], TWO_GATEWAYS[0]]}, 1)
    with pytest.raises(ValueError, match=r"\[x, y\]"):
        Rooms.from_scenario({"gateways": [{"id": "a", "position": [1]}]}, 1)
    with pytest.raises(ValueError, match="unknown fading keys"):
        Rooms.from_scenario({"gateways": TWO_GATEWAYS, "fading": {"fast": 1}}, 1)


def test_a_world_with_gateways_wants_positions_and_one_without_wants_distances():
    with pytest.raises(RuntimeError, match="a position or path of positions"):
        WorldProcess(rooms_scenario(tag(1, distance=2.0)))
    with pytest.raises(RuntimeError, match="a position or path of positions"):
        WorldProcess({"name": "plain", "tags": [tag(1, position=[1, 1])]})


# -- the world over TCP -----------------------------------------------------------------


def test_each_gateway_hears_the_path_loss_and_walls_to_its_own_position(world_factory):
    world = world_factory(rooms_scenario(tag(1, position=[2, 0]), tag(2, position=[8, 0]),
                                         tag(3, path=[[0, [2, 8]], [1, [2, 8]]])))
    assert set(world.gateways) == {"door-a", "door-b"}
    assert world.gateways["door-a"][1] == world.hci_port != world.gateways["door-b"][1]
    at_a = means(run(scan_at(world, "door-a", each_heard(3, 40))), 3)
    at_b = means(run(scan_at(world, "door-b", each_heard(3, 40))), 3)
    # σ 2 dB per PDU, ≥ 40 PDUs: the mean strays 0.3 dB, within 2 dB of the model at 6σ.
    near, far_through_wall = -59 - 20 * math.log10(2), -59 - 20 * math.log10(8) - 10
    assert at_a["t1"] == pytest.approx(near, abs=2) and at_b["t2"] == pytest.approx(near, abs=2)
    assert at_a["t2"] == pytest.approx(far_through_wall, abs=2) and at_b["t1"] == pytest.approx(far_through_wall, abs=2)
    # (2, 8) to B (10, 0) crosses the wall at y = 5: the end, still the wall.
    assert at_a["t3"] == pytest.approx(-59 - 20 * math.log10(math.hypot(2, 8)), abs=2)
    assert at_b["t3"] == pytest.approx(-59 - 20 * math.log10(math.hypot(8, 8)) - 10, abs=2)
    status = world.status()
    assert status["gateways"]["door-b"]["position"] == [10, 0]
    described = status["tags"]["t1"]["gateways"]
    assert described["door-b"]["wallsDb"] == 10 and described["door-a"]["distance"] == 2
    assert status["tags"]["t1"]["position"] == [2, 0] and status["tags"]["t1"]["distance"] is None
    assert {s["gateway"] for s in status["sessions"]} == {"door-a", "door-b"}


def test_the_gateways_fade_independently(world_factory):
    # Eight tags as far from both gateways, no wall between: the path loss is the same,
    # a long-lived slow fading of each gateway (σ 4 dB) is not.
    tags = [tag(n, position=[5, 6 + n]) for n in range(1, 9)]
    flat = world_factory(rooms_scenario(*tags, walls=[], radio={"sigma_db": 1}))
    faded = world_factory(rooms_scenario(*tags, walls=[], radio={"sigma_db": 1},
                                         fading={"slow_sigma_db": 4, "slow_tau_s": 3600}))

    def differences(world) -> list[float]:
        # σ 1 dB per PDU, ≥ 40 PDUs a gateway: a difference of means strays 0.23 dB.
        at_a = means(run(scan_at(world, "door-a", each_heard(8, 40))), 8)
        at_b = means(run(scan_at(world, "door-b", each_heard(8, 40))), 8)
        return [at_a[t] - at_b[t] for t in at_a]

    same = differences(flat)
    assert all(abs(d) <= 1.5 for d in same), same
    apart = differences(faded)
    assert statistics.pstdev(apart) > 2, apart


def test_set_position_moves_a_tag_and_set_distance_takes_only_off(world_factory):
    world = world_factory(rooms_scenario(tag(1, position=[8, 0])))
    with pytest.raises(AssertionError, match="set-position"):
        world.control("set-distance t1 3")
    world.control("set-position t1 1 0")
    assert world.status()["tags"]["t1"]["position"] == [1, 0]
    at_a = medians(run(scan_at(world, "door-a", each_heard(1, 20))), 1)
    assert at_a["t1"] == pytest.approx(-59, abs=2)
    world.control("set-distance t1 off")
    assert world.status()["tags"]["t1"]["position"] is None
    world.control("clear-position t1")
    assert world.status()["tags"]["t1"]["position"] == [8, 0]


def test_stop_controller_of_one_gateway_leaves_the_other(world_factory):
    world = world_factory(rooms_scenario(tag(1, position=[2, 0])))

    async def body():
        a = await HostClient.connect(*world.gateways["door-a"])
        b = await HostClient.connect(*world.gateways["door-b"])
        await a.start_scanning()
        await b.start_scanning()
        assert world.control("stop-controller 1 door-b").startswith("OK")
        await asyncio.wait_for(b.closed.wait(), 5)
        cut = len(a.reports)
        await a.wait_for_reports(lambda r: len(r) >= cut + 10, 5)
        status = world.status()
        await a.close()
        return status

    status = run(body())
    assert status["gateways"]["door-a"]["accepting"] and not status["gateways"]["door-b"]["accepting"]
    assert [s["closeReason"] for s in status["sessions"]] == ["", "controller stopped"]
    with pytest.raises(AssertionError, match="no gateway"):
        world.control("stop-controller 1 door-z")


def test_read_rssi_and_link_loss_follow_the_connected_gateways_position(world_factory):
    proof_tag = tag(1, position=[2, 0], proof="genuine", master_key="00" * 32)
    world = world_factory(rooms_scenario(proof_tag, radio={"max_range_m": 12}))

    async def connect(gateway: str) -> tuple[CentralClient, int]:
        client = await CentralClient.connect(*world.gateways[gateway])
        await client.bring_up()
        assert await client.create_connection(policy=0, peer=proof_tag["address"], supervision_timeout=100) == STATUS_SUCCESS
        complete = (await client.wait_for_connections(1, 10))[0]
        assert complete.status == STATUS_SUCCESS
        return client, complete.handle

    async def body():
        readings = {}
        for gateway in ("door-a", "door-b"):
            client, handle = await connect(gateway)
            readings[gateway] = [(await client.read_rssi(handle))[1] for _ in range(30)]
            await client.disconnect(handle)
            await client.wait_for_disconnections(1, 5)
            await client.close()
        # B connected; the tag steps 3 m west of A: 13 m from B, beyond the range of 12.
        client, handle = await connect("door-b")
        world.control("set-position t1 -3 0")
        await client.wait_for_disconnections(1, 10)
        await client.close()
        return readings, client.disconnections

    readings, disconnections = run(body())
    assert statistics.median(readings["door-a"]) == pytest.approx(-59 - 20 * math.log10(2), abs=2)
    assert statistics.median(readings["door-b"]) == pytest.approx(-59 - 20 * math.log10(8) - 10, abs=2)
    assert disconnections[0].reason == REASON_CONNECTION_TIMEOUT
