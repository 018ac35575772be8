"""Integration tests of `beacon-gateway scan` against the virtual world.

Skipped (with the reason) when the binary is missing: set BEACON_GATEWAY_BIN or build
.build/debug/beacon-gateway."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from bgworld import btsnoop
from bgworld.scenarios import DEMO_UUID, THREE_TAGS
from conftest import wait_until
from gateway import GatewayRun, final_lines, ibeacon_of

TAGS = {
    f"{DEMO_UUID}:{tag['major']}:{tag['minor']}": tag for tag in THREE_TAGS["tags"]
}
IDENTITY_1M = f"{DEMO_UUID}:100:1"


def test_scan_lists_three_tags_with_rssi_ordered_by_distance_and_their_rates(gateway_bin, three_tags):
    run = GatewayRun(gateway_bin, ["scan", "--transport", three_tags.transport, "--seconds", "5", "--json"])
    code = run.wait_exit(60)
    assert code == 0, run.diagnostics()
    assert not run.bad_lines, f"non-JSON output: {run.bad_lines[:3]}"
    finals = {ibeacon_of(line): line for line in final_lines(run.lines) if ibeacon_of(line) in TAGS}
    assert set(finals) == set(TAGS), f"final lines for {sorted(filter(None, finals))}; {run.diagnostics()}"

    medians = {identity: finals[identity]["rssi"]["median"] for identity in TAGS}
    by_distance = sorted(TAGS, key=lambda identity: TAGS[identity]["distance"])
    ordered = [medians[identity] for identity in by_distance]
    assert ordered[0] > ordered[1] > ordered[2], medians

    for identity, tag in TAGS.items():
        line = finals[identity]
        expected = 1000.0 / tag["interval_ms"]
        rate = line["reportsPerSecond"]
        assert abs(rate - expected) / expected <= 0.20, f"{tag['id']}: {rate}/s, expected {expected:.1f}/s ±20 %"
        assert line["reports"] > 0
        assert line["address"].upper() == tag["address"]
        assert line["addressType"] == "random"
        assert line["rssi"]["min"] <= line["rssi"]["median"] <= line["rssi"]["max"]


def test_scan_survives_the_controller_vanishing_and_coming_back(gateway_bin, three_tags):
    run = GatewayRun(gateway_bin, ["scan", "--transport", three_tags.transport, "--seconds", "20", "--json"])
    try:
        def reports_of_1m(lines):
            counts = [line["reports"] for line in lines if ibeacon_of(line) == IDENTITY_1M and not line.get("final")]
            return counts[-1] if counts else 0

        run.wait_for(reports_of_1m, 10, "a live line for the 1 m tag")
        assert three_tags.status()["clients"] == 1

        three_tags.control("stop-controller 3")
        lines_at_stop = len(run.lines)
        # The binary reconnects by itself once the controller accepts again.
        wait_until(lambda: three_tags.status()["clients"] == 1 and len(three_tags.status()["sessions"]) >= 2,
                   timeout=15, what="the gateway to reconnect to the restarted controller")
        assert run.process.poll() is None, f"the gateway exited when the controller vanished; {run.diagnostics()}"
        reconnected_sessions = len(three_tags.status()["sessions"])
        lines_at_restart = len(run.lines)
        count_at_restart = reports_of_1m(run.lines)

        # New reports arrive after the restart: a later live line shows a larger count.
        run.wait_for(
            lambda lines: reports_of_1m(lines[lines_at_restart:]) > count_at_restart,
            10, "the 1 m tag's report count to grow after the restart",
        )
        assert lines_at_restart >= lines_at_stop

        code = run.wait_exit(40)
        assert code == 0, run.diagnostics()
        assert any(ibeacon_of(line) == IDENTITY_1M for line in final_lines(run.lines))
        # The world saw the reconnection and nothing else unexpected.
        assert len(three_tags.status()["sessions"]) == reconnected_sessions
    finally:
        run.kill()


def test_capture_opens_in_tshark_and_holds_every_packet(gateway_bin, three_tags, tmp_path):
    tshark = shutil.which("tshark")
    if tshark is None:
        pytest.skip("tshark is not installed (apt-get install tshark)")
    capture = tmp_path / "scan.btsnoop"
    run = GatewayRun(gateway_bin, ["scan", "--transport", three_tags.transport, "--seconds", "5", "--json",
                                   "--capture", str(capture)])
    try:
        run.wait_for(lambda lines: any(ibeacon_of(line) == IDENTITY_1M for line in lines), 10, "a line for the 1 m tag")
        # Stop the radio so no report is in flight when the scan ends: then both sides
        # must agree on every packet.
        three_tags.control("mute")
        assert run.wait_exit(30) == 0, run.diagnostics()
    finally:
        run.kill()

    sessions = three_tags.status()["sessions"]
    world_h2c = sum(s["hostToController"] for s in sessions)
    world_c2h = sum(s["controllerToHost"] for s in sessions)

    with capture.open("rb") as file:
        records = list(btsnoop.read(file))
    captured_h2c = sum(1 for r in records if not r.from_controller)
    captured_c2h = sum(1 for r in records if r.from_controller)
    assert (captured_h2c, captured_c2h) == (world_h2c, world_c2h), "capture vs packets the world saw (h2c, c2h)"
    assert all(r.data and r.data[0] in (0x01, 0x02, 0x03, 0x04, 0x05) for r in records), "records must carry the H4 indicator"

    result = subprocess.run([tshark, "-r", str(capture), "-T", "fields", "-e", "frame.number"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    frames = [line for line in result.stdout.splitlines() if line.strip()]
    assert len(frames) == world_h2c + world_c2h
