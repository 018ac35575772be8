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


def test_scan_joins_extended_fragments_of_a_replayed_capture(gateway_bin, tmp_path):
    """A controller that splits an extended advertisement into fragments ("more to come",
    then complete, in separate events, another advertiser's whole report between them):
    the advertisement is listed joined, once per advertisement (its iBeacon spans both
    fragments, so a fragment delivered alone would show none); a lone truncated fragment
    of a third advertiser is listed as what arrived."""
    from bgworld import ad, hcibytes
    more_to_come, truncated = 0b01 << 5, 0b10 << 5
    split = bytes.fromhex("C0FFEE000001")[::-1]
    whole = bytes.fromhex("C0FFEE000002")[::-1]
    cut = bytes.fromhex("C0FFEE000003")[::-1]
    data = ad.ibeacon(DEMO_UUID, 7, 1, -59)
    rounds = 5

    def event(event_type, address, payload, rssi):
        report = hcibytes.extended_report(event_type, 1, address, payload, rssi, sid=1)
        return hcibytes.extended_reports_event([report])

    capture = tmp_path / "fragments.btsnoop"
    start_us = 1_700_000_000_000_000
    with capture.open("wb") as file:
        file.write(btsnoop.header())
        packets = []
        for _ in range(rounds):
            packets += [event(more_to_come, split, data[:15], -50), event(0, whole, ad.ibeacon(DEMO_UUID, 7, 2, -59), -60),
                        event(0, split, data[15:], -52)]
        packets.append(event(truncated, cut, data[:15], -70))
        for index, packet in enumerate(packets):
            file.write(btsnoop.record(packet, btsnoop.flags_for(packet), start_us + index * 20_000))

    run = GatewayRun(gateway_bin, ["scan", "--transport", f"btsnoop:{capture}", "--json"])
    assert run.wait_exit(30) == 0, run.diagnostics()
    finals = {line["address"].upper(): line for line in final_lines(run.lines)}
    assert set(finals) == {"C0:FF:EE:00:00:01", "C0:FF:EE:00:00:02", "C0:FF:EE:00:00:03"}, run.diagnostics()
    joined = finals["C0:FF:EE:00:00:01"]
    assert ibeacon_of(joined) == f"{DEMO_UUID}:7:1"
    assert joined["reports"] == rounds, "one report per joined advertisement, no fragment alone"
    assert joined["rssi"]["max"] == -52, "the RSSI of the last fragment"
    assert finals["C0:FF:EE:00:00:02"]["reports"] == rounds
    assert ibeacon_of(finals["C0:FF:EE:00:00:03"]) is None
    assert finals["C0:FF:EE:00:00:03"]["reports"] == 1
