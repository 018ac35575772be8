"""`beacon-gateway run` as a test runs it: its log (stderr) in a file, read by polling."""

from __future__ import annotations

import os
import re
import subprocess
import tempfile

from conftest import wait_until


class AgentProcess:
    def __init__(self, binary, config_path, env: dict[str, str] | None = None, prefix: tuple[str, ...] = ()) -> None:
        """`prefix`: a command the agent runs through (e.g. setpriv, to run it as another user)."""
        self._log = tempfile.TemporaryFile("w+")
        self.process = subprocess.Popen([*prefix, str(binary), "run", "--config", str(config_path)],
                                        stdout=subprocess.DEVNULL, stderr=self._log, text=True,
                                        env=None if env is None else {**os.environ, **env})

    def log(self) -> str:
        self._log.seek(0)
        return self._log.read()

    def count(self, needle: str) -> int:
        return self.log().count(needle)

    def wait_log(self, pattern: str, what: str, count: int = 1, timeout: float = 30) -> None:
        """Waits until `pattern` (a regular expression) matched `count` log lines; fails
        with the log's tail if the agent exits first or the time runs out."""
        def check() -> bool:
            if self.process.poll() is not None:
                raise AssertionError(f"beacon-gateway run exited ({self.process.returncode}):\n{self.log()[-3000:]}")
            return len(re.findall(pattern, self.log())) >= count
        try:
            wait_until(check, timeout, what)
        except AssertionError as error:
            raise AssertionError(f"{error}; agent log:\n{self.log()[-3000:]}") from None

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()
