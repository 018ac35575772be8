"""The gateway as the door's own beacon (`[advertise]`): a virtual phone on the world's
link sees its iBeacon and service UUID at `interval_ms` while the gateway scans and
checks a tag in, in both command families, and again after a controller restart.

Skipped (with the reason) when the binary is missing: set BEACON_GATEWAY_BIN or build
.build/debug/beacon-gateway."""

from __future__ import annotations

import json
import statistics
import time
import uuid as uuidlib

import pytest

from agentprocess import AgentProcess
from bgworld.scenarios import DEMO_UUID
from conftest import wait_until

INTERVAL_MS = 200
DOOR_UUID = "f7826da6-4fa2-4e98-8024-bc5b71e0893e"
DOOR_MAJOR, DOOR_MINOR = 10, 3
MEASURED_POWER = -61
SERVICE_UUID = "27adc9ca-35eb-465a-9154-b8ff9076f3e8"
# Enough reports for a median interval that one late or early event cannot move.
WANTED_REPORTS = 25


def config_text(transport: str, state_dir: str) -> str:
    return f"""
[gateway]
id = "door-test"
site = "S_TEST"
door = "test"
state_dir = "{state_dir}"
log_level = "info"

[bluetooth]
transport = "{transport}"

[advertise]
interval_ms = {INTERVAL_MS}
ibeacon = "{DOOR_UUID}:{DOOR_MAJOR}:{DOOR_MINOR}"
service_uuid = "{SERVICE_UUID}"
measured_power = {MEASURED_POWER}

[[person]]
id = "u_1001"
name = "Aiko"
  [[person.tag]]
  id = "tag-1001"
  ibeacon = "{DEMO_UUID}:100:1"
"""


def expected_ibeacon_data() -> str:
    power = MEASURED_POWER & 0xFF
    return ("0201061aff4c000215" + uuidlib.UUID(DOOR_UUID).bytes.hex()
            + f"{DOOR_MAJOR:04x}{DOOR_MINOR:04x}{power:02x}")


def expected_scan_response() -> str:
    return "1107" + uuidlib.UUID(SERVICE_UUID).bytes[::-1].hex()


def door_beacon_seen(world) -> dict | None:
    """The phone's record of the advertiser sending the door's iBeacon (its address
    changes with every controller session), once it has enough reports."""
    report = json.loads(world.control("phone-report"))
    for address, entry in report["advertisers"].items():
        if entry["data"] == expected_ibeacon_data() and len(entry["times"]) >= WANTED_REPORTS \
                and entry["scanResponse"] is not None:
            return dict(entry, address=address)
    return None


def world_reports(world) -> int:
    """Advertising reports the world has delivered to the gateway's open session."""
    return sum(session["reports"] for session in world.status()["sessions"] if session["open"])


def assert_door_beacon(entry: dict) -> None:
    assert entry["types"] == ["ADV_SCAN_IND"], entry["types"]
    assert entry["data"] == expected_ibeacon_data()
    assert entry["scanResponse"] == expected_scan_response(), "service UUID in the scan response, LSB first"
    gaps = [1000 * (b - a) for a, b in zip(entry["times"], entry["times"][1:])]
    median = statistics.median(gaps)
    assert abs(median - INTERVAL_MS) <= 0.2 * INTERVAL_MS, f"median interval {median:.1f} ms, want {INTERVAL_MS} ±20 %"


@pytest.mark.parametrize("family", ["legacy", "extended"])
def test_phone_sees_the_door_beacon_while_the_gateway_scans_and_again_after_a_controller_restart(
        gateway_bin, world_factory, tmp_path, family):
    world = world_factory("three-tags", extra=["--extended"] if family == "extended" else [])
    config = tmp_path / "gateway.toml"
    config.write_text(config_text(world.transport, str(tmp_path / "state")))
    agent = AgentProcess(gateway_bin, config)
    try:
        def log_has(needle: str, times: int = 1):
            def check():
                if agent.process.poll() is not None:
                    raise AssertionError(f"beacon-gateway exited ({agent.process.returncode}); log:\n{agent.log()[-3000:]}")
                return agent.count(needle) >= times
            return check

        wait_until(log_has("advertising as the door beacon"), 30, "the door beacon to start")
        assert f"family={family}" in agent.log() or f'family="{family}"' in agent.log(), agent.log()[-2000:]
        reports_before = world_reports(world)
        world.control("phone-start")
        entry = wait_until(lambda: door_beacon_seen(world), 30, "the phone to see the door beacon")
        assert_door_beacon(entry)
        # While it advertised, the gateway's controller kept delivering tag reports.
        assert world_reports(world) > reports_before
        # Scanning goes on beside advertising: the 1 m tag is checked in.
        wait_until(log_has("person_id=u_1001"), 30, "a check-in of u_1001")
        assert "checkin" in agent.log()

        # The controller vanishes for 2 s; after the agent's recovery the beacon is back.
        world.control("stop-controller 2")
        world.control("phone-start")
        stopped_at = time.monotonic()
        wait_until(log_has("advertising as the door beacon", 2), 60, "the door beacon after recovery")
        entry = wait_until(lambda: door_beacon_seen(world), 30, "the phone to see the door beacon again")
        assert entry["times"][0] >= 1.5, f"beacon heard {entry['times'][0]} s after the controller stopped"
        assert time.monotonic() - stopped_at >= 2.0
        assert_door_beacon(entry)
        assert agent.process.poll() is None, agent.log()[-2000:]
    finally:
        agent.stop()
