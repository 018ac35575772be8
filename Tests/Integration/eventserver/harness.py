"""Running the gateway's outbox commands against the event server, for the tests and the
scripts (crash test, benchmark)."""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import tempfile
import time


def write_config(directory: pathlib.Path, url: str | None, *, token: str | None = None, ca_file: str | None = None,
                 timeout_s: float = 2, max_backoff_s: float = 5, gateway_id: str = "door-test") -> pathlib.Path:
    """A gateway.toml with [gateway] (state_dir = directory) and, with a URL, [server]."""
    lines = ["[gateway]", f'id = "{gateway_id}"', f'state_dir = "{directory}"', ""]
    if url is not None:
        lines += ["[server]", f'url = "{url}"', f"timeout_s = {timeout_s}", f"max_backoff_s = {max_backoff_s}"]
        if token is not None:
            token_file = directory / "token"
            token_file.write_text(token + "\n")
            os.chmod(token_file, 0o600)
            lines.append(f'token_file = "{token_file}"')
        if ca_file is not None:
            lines.append(f'ca_file = "{ca_file}"')
    path = directory / "gateway.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def enqueue(binary, state_dir: pathlib.Path, count: int, persons: int = 1, extra: list[str] | None = None) -> list[tuple[int, str]]:
    """Commits `count` synthetic events; returns (sequence, key) per committed event."""
    out = subprocess.run([str(binary), "outbox", "enqueue", "--state-dir", str(state_dir), "--count", str(count),
                          "--persons", str(persons), *(extra or [])],
                         check=True, capture_output=True, text=True, timeout=600).stdout
    return parse_acks(out)


def parse_acks(text: str) -> list[tuple[int, str]]:
    acks = []
    for line in text.splitlines():
        parts = line.split()
        # A line cut by kill -9 is not an acknowledgement.
        if len(parts) == 2 and parts[0].isdigit() and len(parts[1]) == 64:
            acks.append((int(parts[0]), parts[1]))
    return acks


def outbox(binary, state_dir: pathlib.Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), "outbox", *args, "--state-dir", str(state_dir)],
                          check=check, capture_output=True, text=True, timeout=120)


def status(binary, state_dir: pathlib.Path) -> dict:
    return json.loads(outbox(binary, state_dir, "status", "--json").stdout)


class Deliver:
    """`beacon-gateway outbox deliver` in the background."""

    # Every one started, so that a test that fails half-way leaves none running after it
    # (conftest.py kills them at the test's end).
    made: list["Deliver"] = []

    def __init__(self, binary, config: pathlib.Path, *args: str) -> None:
        self.args = [str(binary), "outbox", "deliver", "--config", str(config), *args]
        self._stderr = tempfile.TemporaryFile("w+")
        self.process = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=self._stderr, text=True)
        Deliver.made.append(self)

    def wait(self, timeout: float) -> dict:
        try:
            out, _ = self.process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"deliver did not finish within {timeout:g} s; stderr: {self.stderr()[-2000:]}")
        lines = [line for line in out.splitlines() if line.startswith("{")]
        assert lines, f"deliver printed no summary (exit {self.process.returncode}); stderr: {self.stderr()[-2000:]}"
        return json.loads(lines[-1])

    def signal(self, number: int) -> None:
        if self.process.poll() is None:
            self.process.send_signal(number)

    def terminate(self) -> None:
        self.signal(signal.SIGTERM)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def stderr(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read()


def wait_for(predicate, timeout: float, what: str, poll: float = 0.05):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(poll)


def check_exactly_once(snapshot: dict, acks: list[tuple[int, str]]) -> dict:
    """Lost (acknowledged, not stored), extra (stored, never acknowledged), and
    duplicates (stored under a second key: the same sequence twice)."""
    stored = snapshot["events"]
    acked = {key: sequence for sequence, key in acks}
    lost = sorted(acked[key] for key in acked if key not in stored)
    extra = [key for key in stored if key not in acked]
    by_sequence: dict[int, list[str]] = {}
    for key, event in stored.items():
        by_sequence.setdefault(event.get("sequence"), []).append(key)
    duplicates = {sequence: keys for sequence, keys in by_sequence.items() if len(keys) > 1}
    return {"lost": lost, "extra": extra, "duplicates": duplicates}
