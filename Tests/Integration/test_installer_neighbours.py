"""`scan` and `calibrate` show what the neighbouring doors hear (docs/cli.md, SPEC §17): the
real binary against the virtual world and a real mosquitto, with a fake neighbour
(sightings.py) publishing signed reports of the same person. The commands only read the
bus: their own client id, nothing published; a bus that cannot be reached is said and
the command goes on without the column.

Skipped (with the reason) when the binary is missing: set BEACON_GATEWAY_BIN or build
.build/debug/beacon-gateway."""

from __future__ import annotations

import json
import re
import subprocess

from broker import free_port
from sightings import FakeNeighbour, Keys
from test_run import GATEWAY_ID, person_id, scenario, world_tag
from test_sightings import MASTER_KEY, neighbours_config

NEIGHBOUR_RSSI = -85


def run(gateway_bin, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(gateway_bin), *args], capture_output=True, text=True, timeout=60)


def talking_neighbour(broker) -> FakeNeighbour:
    door_b = FakeNeighbour(broker, Keys(MASTER_KEY), "door-b")
    door_b.sightings = [(person_id(0), NEIGHBOUR_RSSI, False)]
    return door_b.start(period=0.5)


def test_scan_shows_what_each_neighbour_hears_of_a_matched_person_and_publishes_nothing(
        gateway_bin, world_factory, mqtt_broker, tmp_path):
    world = world_factory(scenario(world_tag(0, distance=1.0), world_tag(1, distance=2.0)))
    config = neighbours_config(tmp_path, world, mqtt_broker, ["door-b", "door-c"], persons=(0, 1))
    watcher = mqtt_broker.subscriber("#", qos=0)
    door_b = talking_neighbour(mqtt_broker)

    result = run(gateway_bin, "scan", "--config", str(config), "--seconds", "4", "--json")
    assert result.returncode == 0, result.stderr
    assert "reading the neighbours' sightings from the site bus" in result.stderr
    final = [json.loads(line) for line in result.stdout.splitlines() if json.loads(line)["final"]]
    u01 = next(line for line in final if line["person"] == person_id(0))
    assert [(n["gateway"], n["rssi"], n["holds"]) for n in u01["neighbours"]] == [("door-b", NEIGHBOUR_RSSI, False)], u01
    assert 0 <= u01["neighbours"][0]["ageMs"] <= 3000
    u02 = next(line for line in final if line["person"] == person_id(1))
    assert u02["neighbours"] == [], "door-b does not hear u_02"

    # The table (stdout is not a terminal: the closing table): a column with the lead.
    table = run(gateway_bin, "scan", "--config", str(config), "--seconds", "3")
    assert table.returncode == 0, table.stderr
    header, *rows = table.stdout.splitlines()
    assert "NEIGHBOURS" in header
    row = next(r for r in rows if f"{person_id(0)}/" in r)
    lead = re.search(rf"door-b {NEIGHBOUR_RSSI} \(\+(\d+)\)", row)
    assert lead, row
    # This door hears u_01 at 1 m (about -59 dBm), door-b says -85: a lead of about 26 dB.
    assert 15 <= int(lead.group(1)) <= 35, row

    # Read-only: nothing of this door reached the bus, and never under the door's client id.
    door_b.close()
    published = {m.topic for m in watcher.messages if not m.topic.endswith("/sightings/door-b")}
    assert published == set(), published
    log = mqtt_broker.log_path.read_text()
    assert f"as {GATEWAY_ID}-scan-" in log and f"as {GATEWAY_ID} " not in log, log


def test_calibrate_says_by_how_much_this_door_leads_each_neighbour(gateway_bin, world_factory, mqtt_broker, tmp_path):
    world = world_factory(scenario(world_tag(0, distance=1.0)))
    config = neighbours_config(tmp_path, world, mqtt_broker, ["door-b", "door-c"])
    door_b = talking_neighbour(mqtt_broker)
    result = run(gateway_bin, "calibrate", "tag-01", "--config", str(config), "--seconds", "4")
    door_b.close()
    assert result.returncode == 0, result.stderr
    median = int(re.search(r"rssi median (-?\d+) dBm", result.stdout).group(1))
    line = re.search(r"door-b: median (-?\d+) dBm over (\d+) reports; this door leads by (-?\d+) dB: (.*)", result.stdout)
    assert line, result.stdout
    theirs, reports, lead = int(line.group(1)), int(line.group(2)), int(line.group(3))
    assert theirs == NEIGHBOUR_RSSI and reports >= 4 and lead == median - NEIGHBOUR_RSSI
    assert line.group(4) == "this door takes them here", result.stdout
    assert "margin_db = 6 dB" in result.stdout
    assert "door-c: did not report this person" in result.stdout


def test_a_bus_out_of_reach_is_said_and_scan_and_calibrate_go_on_without_the_column(gateway_bin, world_factory,
                                                                                    mqtt_broker, tmp_path):
    world = world_factory(scenario(world_tag(0, distance=1.0)))
    config = neighbours_config(tmp_path, world, mqtt_broker, ["door-b"])
    config.write_text(config.read_text().replace(mqtt_broker.url, f"mqtt://127.0.0.1:{free_port()}"))
    scan = run(gateway_bin, "scan", "--config", str(config), "--seconds", "3")
    assert scan.returncode == 0, scan.stderr
    assert "scan: the site bus cannot be reached" in scan.stderr and "going on without the neighbours" in scan.stderr
    assert "NEIGHBOURS" not in scan.stdout and f"{person_id(0)}/" in scan.stdout, scan.stdout
    calibrate = run(gateway_bin, "calibrate", "tag-01", "--config", str(config), "--seconds", "3")
    assert calibrate.returncode == 0, calibrate.stderr
    assert "calibrate: the site bus cannot be reached" in calibrate.stderr
    assert "suggested: enter_rssi" in calibrate.stdout
    assert "neighbours: the site bus could not be reached" in calibrate.stdout
