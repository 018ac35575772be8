"""The month replay's short form (scripts/month-replay --days 8; docs/reliability.md, "A
month at a busy door"): the real `beacon-gateway run` over a generated capture of eight
days at a busy door, on its recorded clock, against a local event server that goes away
for a day, with the state directory's disk full for six hours (a tmpfs: as root; the
script says when it cannot) and the server's roster changing. The script exits 0 only
when every limit holds: peak RSS flat over ordinary days, database and WAL within their
sizes, log lines per day within their count, and every visit's check-in and checkout at
the server exactly once."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_eight_days_at_a_busy_door_replayed_keep_every_limit(gateway_bin, tmp_path):
    result = subprocess.run([sys.executable, str(REPO_ROOT / "scripts" / "month-replay"), "--days", "8", "--seed", "3",
                             "--binary", str(gateway_bin), "--out", str(tmp_path / "month")],
                            capture_output=True, text=True, timeout=600, env=dict(os.environ))
    print(result.stdout)
    assert result.returncode == 0, f"exit {result.returncode}:\n{result.stdout}\n{result.stderr[-3000:]}"
    assert "OVER" not in result.stdout and "PROBLEM" not in result.stdout, result.stdout
    if os.geteuid() == 0:
        assert "disk full: not represented" not in result.stdout, result.stdout
