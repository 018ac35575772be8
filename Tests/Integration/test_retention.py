"""Retention at a door without a server (docs/event-api.md, "Retention"): the real binary
prunes what its SQLite outbox holds past its age, in batches, says so in the log, and
`outbox status` shows it. The old rows are made by `outbox enqueue` and aged in the file
itself (sqlite3), as years at a door would leave them."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import time

from test_run import agents, scenario, world_tag, write_config  # noqa: F401 - fixtures

DAY_MS = 86_400_000


def outbox_status(binary, state_dir) -> dict:
    result = subprocess.run([str(binary), "outbox", "status", "--json", "--state-dir", str(state_dir)],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_a_door_without_a_server_prunes_past_its_retention_and_keeps_the_rest(gateway_bin, world_factory, agents,
                                                                               tmp_path):
    world = world_factory(scenario(world_tag(0, distance=20.0)))
    config = write_config(tmp_path, world.transport, [0])
    state_dir = tmp_path / "state"
    state_dir.mkdir()
    # 1,200 undelivered events (more than two batches) and 300 recent ones.
    for count in (1200, 300):
        result = subprocess.run([str(gateway_bin), "outbox", "enqueue", "--state-dir", str(state_dir), "--count",
                                 str(count)], capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
    now_ms = int(time.time() * 1000)
    with sqlite3.connect(state_dir / "gateway.sqlite") as db:
        db.execute("UPDATE events SET created_ms = ? WHERE sequence <= 1200", (now_ms - 91 * DAY_MS,))
    assert outbox_status(gateway_bin, state_dir)["pending"] == 1500

    agent = agents(gateway_bin, config)
    line = agent.wait_log(r"outbox retention", timeout=30)[0]
    assert "unsent=1200" in line, line
    status = outbox_status(gateway_bin, state_dir)
    assert status["pending"] == 300
    assert status["pruned"] == {"sent": 0, "rejected": 0, "dead": 0, "unsent": 1200}
    assert status["lastPrune"] is not None
    with sqlite3.connect(state_dir / "gateway.sqlite") as db:
        assert db.execute("SELECT min(sequence) FROM events").fetchone()[0] == 1201
    assert agent.stop() == 0
