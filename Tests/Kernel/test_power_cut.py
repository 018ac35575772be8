"""The short power-cut run for CI: `scripts/power-cut --cuts 10` (Tests/Kernel/powercut).
Ten boots of the rig's guest, each cut at a random moment with the disk's volatile cache
dropped or half written, and a last boot that checks and drains: no committed event lost,
none under a second key, the store opens and passes integrity_check, ext4 mounts and
e2fsck finds nothing. About 11 boots of 20-40 s under TCG. The seed is printed; rerun a
failure with `scripts/power-cut --cuts 10 --seed N --keep DIR`."""

from __future__ import annotations

import os
import re
import subprocess
import time

import pytest

from rig_session import REPO_ROOT, SKIP_STATUS, gateway_binary

CUTS = int(os.environ.get("POWER_CUT_CUTS", "10"))


def test_no_committed_event_is_lost_or_duplicated_across_power_cuts():
    binary = gateway_binary()
    if binary is None:
        pytest.skip("no beacon-gateway binary (build it or set BEACON_GATEWAY_BIN)")
    seed = int(os.environ.get("POWER_CUT_SEED", time.time_ns() % 1_000_000))
    result = subprocess.run([str(REPO_ROOT / "scripts" / "power-cut"), "--cuts", str(CUTS), "--seed", str(seed)],
                            cwd=REPO_ROOT, capture_output=True, text=True, timeout=60 * CUTS + 600,
                            env={**os.environ, "BEACON_GATEWAY_BIN": str(binary)})
    if result.returncode == SKIP_STATUS:
        pytest.skip(f"kernel rig: {result.stdout.strip().splitlines()[-1]}")
    report = result.stdout[-5000:] + result.stderr[-2000:]
    assert result.returncode == 0, report
    figures = {name: int(value) for name, value in re.findall(r"^(cuts|lost|duplicated) (\d+)", result.stdout, re.M)}
    assert figures == {"cuts": CUTS, "lost": 0, "duplicated": 0}, report
    assert "database open failures 0; integrity failures 0; ext4 mount failures 0; e2fsck errors 0" in result.stdout, report
    assert re.search(r"^sequence floor failures 0 ", result.stdout, re.M), report
    committed = re.search(r"^events committed (\d+) in the outbox at the end; (\d+) acknowledged", result.stdout, re.M)
    assert committed and int(committed.group(2)) > 0, report
