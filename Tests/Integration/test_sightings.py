"""Neighbouring doors' sightings as the site sees them (SPEC §17, docs/neighbours.md): the
real binary against a real mosquitto and the virtual world, with a fake neighbour that
publishes signed reports from Python (sightings.py, the keys derived from the same master
key). What the door says of its neighbours (heartbeat, status, metrics) while one talks,
after it falls silent and while the bus is down; and the hostile reports (forged,
replayed, stale, from a door not configured, oversized, malformed, a flood of 10,000 a
second), each refused and counted, none checking anyone in or out.

Every wait is on a heartbeat, a scrape, a log line or the status socket, with a timeout.
Skipped (with the reason) when the binary is missing: set BEACON_GATEWAY_BIN or build
.build/debug/beacon-gateway."""

from __future__ import annotations

import json
import os
import pathlib
import time

from conftest import wait_until
from sightings import FakeNeighbour, Keys, report
from test_fleet import free_port, heartbeats, scrape, status, value
from test_run import agents, event_server, person_id, scenario, world_tag, write_config  # noqa: F401 - fixtures

MASTER_KEY = bytes([0x5A] * 32)
PREFIX = "beacon-gateway"
SITE = "S_TEST"


def neighbours_config(tmp_path: pathlib.Path, world, broker, neighbours: list[str], *, persons=(0,), server=None,
                      port: int | None = None) -> pathlib.Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    config = write_config(tmp_path, world.transport, list(persons), server=server)
    key = tmp_path / "master.key"
    key.write_text(MASTER_KEY.hex() + "\n")
    os.chmod(key, 0o600)
    text = config.read_text()
    if server is not None:
        text = text.replace("max_backoff_s = 2", "max_backoff_s = 2\nheartbeat_s = 1")
    text += f'\n[mqtt]\nurl = "{broker.url}"\nhomeassistant = false\n'
    text += f'\n[security]\nmaster_key_file = "{key}"\n'
    text += "\n[site]\nneighbours = [" + ", ".join(f'"{n}"' for n in neighbours) + "]\n"
    if port is not None:
        text += f'\n[metrics]\nlisten = "127.0.0.1:{port}"\n'
    config.write_text(text)
    return config


def sightings(families: dict, direction: str, result: str) -> float:
    return value(families, "beacon_gateway_sightings", "beacon_gateway_sightings_total", direction=direction,
                 result=result)


def latest_site(server) -> dict | None:
    beats = heartbeats(server)
    return beats[-1]["body"].get("site") if beats else None


def status_json(binary, runtime: pathlib.Path) -> dict:
    result = status(binary, runtime, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def door(report_: dict, gateway_id: str) -> dict:
    return next(d for d in report_["neighbours"]["doors"] if d["id"] == gateway_id)


def test_heartbeat_status_and_metrics_say_which_neighbour_is_heard_and_when_it_falls_silent(
        gateway_bin, world_factory, agents, mqtt_broker, event_server, tmp_path):
    world = world_factory(scenario(world_tag(0, distance=1.0)))
    port = free_port()
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o750)
    config = neighbours_config(tmp_path, world, mqtt_broker, ["door-b", "door-c"], server=event_server, port=port)
    door_b = FakeNeighbour(mqtt_broker, Keys(MASTER_KEY), "door-b").start(period=0.5)
    agent = agents(gateway_bin, config, env={"RUNTIME_DIRECTORY": str(runtime)})
    agent.wait_log(r"site bus up")

    # door-b talks, door-c never does: two neighbours, one heard.
    wait_until(lambda: latest_site(event_server) == {"bus": "up", "neighbours": 2, "heard": 1}, 20,
               "a heartbeat with door-b heard")
    families = wait_until(lambda: (f := scrape(port)) and sightings(f, "out", "published") >= 2 and f, 20,
                          "this door's reports published")
    assert value(families, "beacon_gateway_neighbours") == 2
    assert value(families, "beacon_gateway_neighbours_heard") == 1
    assert sightings(families, "in", "accepted") >= 1
    # (Reports made at the start, before the session was up, are not sent; none after:
    # checked below, once the bus has been up a while.)
    not_sent = sightings(families, "out", "not_sent")
    assert sightings(families, "in", "forged") == 0
    report_ = status_json(gateway_bin, runtime)
    assert report_["neighbours"]["configured"] == 2 and report_["neighbours"]["heard"] == 1, report_["neighbours"]
    assert door(report_, "door-b")["heard"] is True and door(report_, "door-b")["lastHeardS"] < 2
    assert door(report_, "door-c") == {"id": "door-c", "heard": False, "lastHeardS": None}
    text = status(gateway_bin, runtime).stdout
    assert "neighbours  1 of 2 heard\n" in text, text
    assert "  door-b  heard, last heard " in text and "  door-c  SILENT, deciding alone for it (never heard)" in text, text

    # door-b falls silent: after 10 s the door decides alone for it, and says so everywhere.
    # (The journal said so of both at the start, before anything was heard.)
    agent.wait_log(r"neighbour heard again.*neighbour=door-b")
    door_b.stop()
    stopped = time.monotonic()
    agent.wait_log(r"neighbour silent.*neighbour=door-b", timeout=20, count=2)
    assert time.monotonic() - stopped >= 9, "silent only after 10 s without a report"
    wait_until(lambda: latest_site(event_server) == {"bus": "up", "neighbours": 2, "heard": 0}, 10,
               "a heartbeat with nobody heard")
    assert value(scrape(port), "beacon_gateway_neighbours_heard") == 0
    silent = door(status_json(gateway_bin, runtime), "door-b")
    assert silent["heard"] is False and silent["lastHeardS"] >= 10, silent
    assert "  door-b  SILENT, deciding alone for it (last heard " in status(gateway_bin, runtime).stdout

    # It talks again: heard again, once in the journal.
    door_b.start(period=0.5)
    agent.wait_log(r"neighbour heard again.*neighbour=door-b", count=2)
    wait_until(lambda: latest_site(event_server) == {"bus": "up", "neighbours": 2, "heard": 1}, 10,
               "a heartbeat with door-b heard again")
    door_b.close()
    assert sightings(scrape(port), "out", "not_sent") == not_sent

    # The bus down: nothing is heard, this door's reports are not sent (never stored).
    mqtt_broker.stop()
    wait_until(lambda: (latest_site(event_server) or {}).get("bus") == "down", 20, "a heartbeat with the bus down")
    wait_until(lambda: sightings(scrape(port), "out", "not_sent") >= 2, 10, "reports not sent while the bus is down")
    wait_until(lambda: latest_site(event_server) == {"bus": "down", "neighbours": 2, "heard": 0}, 20,
               "a heartbeat with nobody heard while the bus is down")
    agent.wait_log(r"neighbour silent.*neighbour=door-b", count=3)
    assert len(agent.lines(r"neighbour silent.*neighbour=door-c")) == 1


def test_hostile_reports_are_refused_and_counted_and_check_nobody_in_or_out(gateway_bin, world_factory, agents,
                                                                            mqtt_broker, tmp_path):
    # u_01 stands at this door; u_02 is configured but nowhere near.
    world = world_factory(scenario(world_tag(0, distance=1.0)))
    port = free_port()
    config = neighbours_config(tmp_path, world, mqtt_broker, ["door-b"], persons=(0, 1), port=port)
    keys = Keys(MASTER_KEY)
    door_b = FakeNeighbour(mqtt_broker, keys, "door-b").start(period=0.5)
    agent = agents(gateway_bin, config)
    agent.wait_log(r" checkin .*u_01", timeout=30)
    wait_until(lambda: sightings(scrape(port), "in", "accepted") >= 2, 10, "door-b's reports taken")

    # Each says door-b holds both persons and hears them far better than this door: taken,
    # it would move u_01 there at once (a checkout "moved") .
    claim = [(person_id(0), -20, True), (person_id(1), -20, True)]
    hostile = FakeNeighbour(mqtt_broker, keys, "mallory")
    # A replay is one of door-b's own reports sent again: the one before its newest, made
    # half a second to a second ago, so newer ones of door-b reach the door first or the
    # replay is the door's first copy and door-b's own comes after it.
    replay = door_b.reports[-2]
    now = int(time.time() * 1000)
    hostile.publish(report(keys, "door-b", claim, sign_with=bytes(32)), door_b.topic)              # forged
    hostile.publish(replay, door_b.topic)                                                          # replayed
    hostile.publish(report(keys, "door-b", claim, wall_ms=now - 60_000), door_b.topic)             # stale
    hostile.publish(report(keys, "door-b", claim, wall_ms=now + 60_000), door_b.topic)             # ahead
    hostile.publish(report(keys, "door-z", claim), f"{PREFIX}/{SITE}/sightings/door-z")            # not configured
    hostile.publish(b"BGS\x01" + bytes(9_000), door_b.topic)                                       # oversized
    hostile.publish(b"BGS\x01" + bytes(6_000), door_b.topic)                                       # malformed
    expected = {"forged": 1, "replayed": 1, "stale": 1, "ahead": 1, "not_neighbour": 1, "oversized": 1, "malformed": 1}
    wait_until(lambda: all(sightings(scrape(port), "in", r) == n for r, n in expected.items()), 10,
               f"each refused and counted: {expected}")
    for reason in expected:
        assert len(agent.lines(rf"sighting refused.*reason={reason}\b")) <= 1, reason
    assert agent.lines(r"sighting refused.*reason=forged"), agent.lines(r"sighting refused")

    # A flood: 10,000 forged reports a second for 2 s, each made now and different.
    families = scrape(port)
    accepted_before = sightings(families, "in", "accepted")
    forged_before = sightings(families, "in", "forged")
    refused_before = forged_before + sightings(families, "in", "stale")
    genuine_before = door_b.sent
    flooded = hostile.flood(lambda i: report(keys, "door-b", claim, wall_ms=int(time.time() * 1000) + i % 7,
                                             sign_with=i.to_bytes(32, "big")), rate=10_000, seconds=2)
    # Each is refused and counted: forged, or stale if it waited more than 3 s in the
    # queues of a busy machine (the age is checked first, and costs no HMAC).
    def settled():
        families = scrape(port)
        counted = sightings(families, "in", "forged") + sightings(families, "in", "stale") - refused_before
        return counted if counted >= flooded else None
    counted = wait_until(settled, 60, f"the {flooded} forged reports of the flood counted")
    # Beside them only door-b's own reports of those seconds, stale if they waited as long
    # in the same queues; none of door-b's is forged.
    families = scrape(port)
    assert sightings(families, "in", "forged") - forged_before <= flooded
    assert counted <= flooded + door_b.sent - genuine_before
    # The genuine neighbour went on being heard through it, and nobody moved.
    families = wait_until(lambda: (f := scrape(port)) and sightings(f, "in", "accepted") > accepted_before and f, 10,
                          "door-b's reports taken after the flood")
    assert value(families, "beacon_gateway_neighbours_heard") == 1
    assert agent.lines(r" checkout ") == [], agent.lines(r" checkout ")
    assert len(agent.lines(r" checkin ")) == 1 and not agent.lines(r" checkin .*u_02")
    assert len(agent.lines(r"sighting refused.*reason=forged")) == 1
    assert agent.process.poll() is None
    hostile.close()
    door_b.close()
