"""`beacon-gateway calibrate TAG` against a virtual tag at a known distance: the
statistics it prints must match the world's path-loss model."""

from __future__ import annotations

import math
import re
import subprocess

from bgworld.scenarios import DEMO_UUID

TX_POWER_AT_1M = -59
PATH_LOSS_EXPONENT = 2.0
SIGMA_DB = 2.0
DISTANCE_M = 3.0
INTERVAL_MS = 100

SCENARIO = {
    "name": "calibration",
    "radio": {"tx_power_at_1m": TX_POWER_AT_1M, "path_loss_exponent": PATH_LOSS_EXPONENT, "sigma_db": SIGMA_DB},
    "tags": [
        {"id": "installer", "kind": "ibeacon", "uuid": DEMO_UUID, "major": 7, "minor": 1, "measured_power": -59,
         "address": "C0:11:22:33:44:70", "address_type": "random", "interval_ms": INTERVAL_MS, "distance": DISTANCE_M},
    ],
}


def write_config(tmp_path, transport: str):
    config = tmp_path / "gateway.toml"
    config.write_text(f"""
[gateway]
id = "door-calibration"
state_dir = "{tmp_path / 'state'}"

[bluetooth]
transport = "{transport}"
tag_interval_ms = {INTERVAL_MS}

[[person]]
id = "u_installer"
  [[person.tag]]
  id = "tag-installer"
  ibeacon = "{DEMO_UUID}:7:1"
""")
    return config


def test_calibrate_reports_the_path_loss_model_and_consistent_suggestions(gateway_bin, world_factory, tmp_path):
    world = world_factory(SCENARIO)
    config = write_config(tmp_path, world.transport)
    result = subprocess.run([str(gateway_bin), "calibrate", "tag-installer", "--config", str(config), "--seconds", "4"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    out = result.stdout

    count = int(re.search(r"(\d+) reports", out).group(1))
    median, iqr = map(int, re.search(r"rssi median (-?\d+) dBm, IQR (\d+) dB", out).groups())
    minimum, maximum = map(int, re.search(r"min (-?\d+), max (-?\d+)", out).groups())
    interval = float(re.search(r"observed advertising interval ([\d.]+) ms", out).group(1))
    enter, exit_ = map(int, re.search(r"enter_rssi = (-?\d+), exit_rssi = (-?\d+)", out).groups())

    expected_mean = TX_POWER_AT_1M - 10 * PATH_LOSS_EXPONENT * math.log10(DISTANCE_M)  # -68.5 dBm
    assert count >= 25, out  # ~10 reports/s for 4 s
    assert abs(median - expected_mean) <= 2.0, f"median {median}, model {expected_mean:.1f}"
    # Gaussian noise of σ = 2 dB: the interquartile range is ≈ 1.35 σ ≈ 2.7 dB.
    assert 1 <= iqr <= 6, out
    assert minimum <= median <= maximum
    # The tag sends every 100 ms plus the 0–10 ms advDelay.
    assert 95 <= interval <= 120, out
    assert exit_ <= enter - 5 and enter < median, out


def test_calibrate_names_an_unknown_tag(gateway_bin, world_factory, tmp_path):
    world = world_factory(SCENARIO)
    config = write_config(tmp_path, world.transport)
    result = subprocess.run([str(gateway_bin), "calibrate", "tag-nobody", "--config", str(config), "--seconds", "1"],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    assert 'no tag "tag-nobody"' in result.stderr and "tag-installer" in result.stderr
