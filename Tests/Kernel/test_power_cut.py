"""The short power-cut runs for CI (Tests/Kernel/powercut, docs/power-cut.md).

`scripts/power-cut --cuts 10`: ten boots of the rig's guest committing with `outbox
enqueue`, each cut at a random moment with the disk's volatile cache dropped or half
written, and a last boot that checks and drains: no committed event lost, none under a
second key, the store opens and passes integrity_check, ext4 mounts and e2fsck finds
nothing. About 11 boots of 20-40 s under TCG.

`scripts/power-cut --workload run --cuts 5`: the door agent itself (`beacon-gateway run`
on hci0, the virtual world on this host moving six persons to the door and away), cut
while it scans and decides: besides the above, no split visit, no lost checkout, every
checkout stamped within the documented staleness of the truth. About 6 boots of 25-40 s.

The seed is printed; rerun a failure with `scripts/power-cut [--workload run] --cuts N
--seed N --keep DIR`."""

from __future__ import annotations

import os
import re
import subprocess
import time

import pytest

from rig_session import REPO_ROOT, SKIP_STATUS, gateway_binary

CUTS = int(os.environ.get("POWER_CUT_CUTS", "10"))
RUN_CUTS = int(os.environ.get("POWER_CUT_RUN_CUTS", "5"))


def power_cut(*options: str, cuts: int) -> str:
    binary = gateway_binary()
    if binary is None:
        pytest.skip("no beacon-gateway binary (build it or set BEACON_GATEWAY_BIN)")
    seed = int(os.environ.get("POWER_CUT_SEED", time.time_ns() % 1_000_000))
    result = subprocess.run([str(REPO_ROOT / "scripts" / "power-cut"), *options, "--cuts", str(cuts), "--seed", str(seed)],
                            cwd=REPO_ROOT, capture_output=True, text=True, timeout=90 * cuts + 600,
                            env={**os.environ, "BEACON_GATEWAY_BIN": str(binary)})
    if result.returncode == SKIP_STATUS:
        pytest.skip(f"kernel rig: {result.stdout.strip().splitlines()[-1]}")
    report = result.stdout[-5000:] + result.stderr[-2000:]
    assert result.returncode == 0, report
    figures = {name: int(value) for name, value in re.findall(r"^(cuts|lost|duplicated) (\d+)", result.stdout, re.M)}
    assert figures == {"cuts": cuts, "lost": 0, "duplicated": 0}, report
    assert "database open failures 0; integrity failures 0; ext4 mount failures 0; e2fsck errors 0" in result.stdout, report
    assert re.search(r"^sequence floor failures 0 ", result.stdout, re.M), report
    committed = re.search(r"^events committed (\d+) in the outbox at the end; (\d+) acknowledged", result.stdout, re.M)
    assert committed and int(committed.group(2)) > 0, report
    return result.stdout


def test_no_committed_event_is_lost_or_duplicated_across_power_cuts():
    power_cut(cuts=CUTS)


def test_the_door_agent_cut_while_it_decides_loses_splits_and_misstamps_nothing():
    # Cuts within 15 s of `scanning` (the full run: 25 s), to keep CI's share small.
    output = power_cut("--workload", "run", "--max-load-s", "15", cuts=RUN_CUTS)
    report = output[-5000:]
    assert re.search(r"^split visits 0 \(", output, re.M), report
    assert "phantom checkins 0; lost checkouts 0; events in no boot's run 0" in output, report
    assert re.search(r"; stale 0, late 0$", output, re.M), report
    door = re.search(r"^door: \d+ stays at the door by \d+ persons; (\d+) checkins, (\d+) checkouts", output, re.M)
    assert door and int(door.group(1)) > 0 and int(door.group(2)) > 0, report
