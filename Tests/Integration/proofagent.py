"""`beacon-gateway run` against the world with proof-capable tags: config, log following."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import tempfile
import threading
import time

MASTER_KEY = bytes(range(32))
DEMO_UUID = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"


def proof_tag(tag_id: str, variant: str, number: int, **extra) -> dict:
    spec = {
        "id": tag_id, "kind": "ibeacon", "uuid": DEMO_UUID, "major": 7, "minor": number,
        "address": f"C0:00:00:00:07:{number:02X}", "interval_ms": 50, "distance": 1.0,
        "proof": variant, "master_key": MASTER_KEY.hex(),
    }
    spec.update(extra)
    return spec


def write_config(directory: pathlib.Path, transport: str, tags: list[dict], *, require_proof: bool = True,
                 track: str = "advertising", proof_ttl_s: int = 600, connect_mode: str = "accept-list",
                 max_connections: int = 3, presence: str = "") -> pathlib.Path:
    key_file = directory / "master.key"
    key_file.write_text(MASTER_KEY.hex() + "\n")
    os.chmod(key_file, 0o600)
    state = directory / "state"
    state.mkdir(exist_ok=True)
    lines = [
        "[gateway]", 'id = "door-test"', f'state_dir = "{state}"', 'log_level = "debug"',
        "[bluetooth]", f'transport = "{transport}"', 'scan = "passive"', "tag_interval_ms = 100",
        f'connect_mode = "{connect_mode}"', f"max_connections = {max_connections}",
        "[presence]", "enter_rssi = -80", "exit_rssi = -90", "window_s = 2.0", "min_samples = 2",
        "lost_after_s = 5", "leave_after_s = 30", "away_after_s = 20", f"proof_ttl_s = {proof_ttl_s}", presence,
        "[server]", 'url = "http://127.0.0.1:9"',
        "[security]", f'master_key_file = "{key_file}"',
    ]
    for spec in tags:
        lines += ["[[person]]", f'id = "person-{spec["id"]}"', f"require_proof = {'true' if require_proof else 'false'}",
                  "  [[person.tag]]", f'  id = "{spec["id"]}"',
                  f'  ibeacon = "{spec["uuid"]}:{spec["major"]}:{spec["minor"]}"',
                  f'  address = "{spec["address"]}"', f'  track = "{track}"']
    path = directory / "gateway.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


class AgentRun:
    """`beacon-gateway run --config PATH`, its stderr log followed line by line."""

    def __init__(self, binary, config: pathlib.Path) -> None:
        self.args = [str(binary), "run", "--config", str(config)]
        self.process = subprocess.Popen(self.args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self._eof = False
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for raw in self.process.stderr:
            with self._changed:
                self.lines.append(raw.rstrip("\n"))
                self._changed.notify_all()
        with self._changed:
            self._eof = True
            self._changed.notify_all()

    def matching(self, pattern: str) -> list[str]:
        expression = re.compile(pattern)
        with self._changed:
            return [line for line in self.lines if expression.search(line)]

    def wait_for(self, pattern: str, timeout: float, count: int = 1) -> list[str]:
        expression = re.compile(pattern)
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                found = [line for line in self.lines if expression.search(line)]
                if len(found) >= count:
                    return found
                if self._eof:
                    raise AssertionError(f"beacon-gateway ended before {pattern!r}; {self.tail()}")
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"timed out after {timeout:g} s waiting for {pattern!r} x{count}; {self.tail()}")
                self._changed.wait(remaining)

    def tail(self, count: int = 40) -> str:
        return "log tail:\n" + "\n".join(self.lines[-count:])

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


def outbox_bodies(binary, state_dir: pathlib.Path) -> list[dict]:
    """The event bodies in the agent's outbox (every state), oldest first."""
    import json
    result = subprocess.run([str(binary), "outbox", "list", "--state-dir", str(state_dir), "--state", "all", "--json"],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return [json.loads(json.loads(line)["body"]) for line in result.stdout.splitlines() if line.strip()]
