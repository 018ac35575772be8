"""Running `beacon-gateway scan --json` and following its output line by line."""

from __future__ import annotations

import json
import subprocess
import tempfile
import threading
import time


class GatewayRun:
    def __init__(self, binary, args: list[str]) -> None:
        self.args = [str(binary), *args]
        self._stderr = tempfile.TemporaryFile("w+")
        self.process = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=self._stderr, text=True)
        self.lines: list[dict] = []
        self.bad_lines: list[str] = []
        self._changed = threading.Condition()
        self._eof = False
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for raw in self.process.stdout:
            raw = raw.strip()
            if not raw:
                continue
            with self._changed:
                try:
                    value = json.loads(raw)
                    if isinstance(value, dict):
                        self.lines.append(value)
                    else:
                        self.bad_lines.append(raw)
                except json.JSONDecodeError:
                    self.bad_lines.append(raw)
                self._changed.notify_all()
        with self._changed:
            self._eof = True
            self._changed.notify_all()

    def wait_for(self, predicate, timeout: float, what: str):
        """Wait until predicate(lines) is truthy (returns it); fails on timeout or if the
        process ends first."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                value = predicate(self.lines)
                if value:
                    return value
                if self._eof:
                    raise AssertionError(f"beacon-gateway ended before {what}; {self.diagnostics()}")
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}; {self.diagnostics()}")
                self._changed.wait(remaining)

    def wait_exit(self, timeout: float) -> int:
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"beacon-gateway did not exit within {timeout:g} s; {self.diagnostics()}")
        self._reader.join(timeout=5)
        return code

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def stderr(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read()

    def diagnostics(self) -> str:
        tail = self.stderr()[-2000:]
        return f"command {' '.join(self.args)}; {len(self.lines)} JSON lines; stderr tail:\n{tail}"


def final_lines(lines: list[dict]) -> list[dict]:
    return [line for line in lines if line.get("final") is True]


def ibeacon_of(line: dict) -> str | None:
    identity = line.get("identity") or {}
    value = identity.get("ibeacon")
    return value.lower() if isinstance(value, str) else None
