"""Fixtures shared by the world self-tests and the binary's integration tests.

Run from the repository root:  <venv>/bin/python -m pytest Tests/Integration
"""

from __future__ import annotations

import atexit
import json
import os
import pathlib
import selectors
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
WORLD_DIR = REPO_ROOT / "Tests" / "World"
if str(WORLD_DIR) not in sys.path:
    sys.path.insert(0, str(WORLD_DIR))

READY_TIMEOUT_S = 20.0


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: needs a release build (scripts/build-release)")
    # scripts/test runs these in a pytest of their own beside the rest of the suite: minutes
    # of wall-clock time with the agent stopped or idle, next to no CPU (docs/development.md).
    config.addinivalue_line("markers", "waits: spends minutes waiting on the wall clock with the agent stopped or idle")


class WorldProcess:
    """`python -m bgworld` in a child process; talks to its control channel."""

    def __init__(self, scenario: str | dict = "three-tags", seed: int = 7, extra: list[str] | None = None) -> None:
        self._scenario_file = None
        args = [sys.executable, "-m", "bgworld", "--seed", str(seed)]
        if isinstance(scenario, dict):
            self._scenario_file = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
            json.dump(scenario, self._scenario_file)
            self._scenario_file.close()
            args += ["--scenario-file", self._scenario_file.name]
        else:
            args += ["--scenario", scenario]
        args += extra or []
        env = dict(os.environ, PYTHONPATH=str(WORLD_DIR) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        # stderr to a file, not a pipe: a chatty world must never block on a full pipe.
        self._stderr = tempfile.TemporaryFile("w+")
        self.process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self._stderr, text=True, env=env)
        line = _readline(self.process.stdout, READY_TIMEOUT_S)
        if not line.startswith("READY "):
            tail = self.stderr_tail()  # before close() closes the file
            self.close()
            raise RuntimeError(f"world did not start: {line!r}; stderr: {tail}")
        fields = dict(part.split("=", 1) for part in line.split()[1:])
        self.hci_host, hci_port = fields["hci"].rsplit(":", 1)
        self.hci_port = int(hci_port)
        control_host, control_port = fields["control"].rsplit(":", 1)
        # A rooms world (Tests/World/README.md, "Rooms"): each gateway's own H4 port.
        self.gateways: dict[str, tuple[str, int]] = {}
        for key, value in fields.items():
            if key.startswith("gateway."):
                host, port = value.rsplit(":", 1)
                self.gateways[key.removeprefix("gateway.")] = (host, int(port))
        self.control_address = (control_host, int(control_port))
        self._control = socket.create_connection(self.control_address, timeout=10)
        self._control_file = self._control.makefile("rw", encoding="utf-8", newline="\n")

    @property
    def transport(self) -> str:
        return f"tcp:{self.hci_host}:{self.hci_port}"

    def transport_of(self, gateway: str) -> str:
        """The `[bluetooth] transport` of one gateway of a rooms world."""
        host, port = self.gateways[gateway]
        return f"tcp:{host}:{port}"

    def control(self, line: str) -> str:
        self._control_file.write(line + "\n")
        self._control_file.flush()
        reply = self._control_file.readline().strip()
        if reply.startswith("ERR"):
            raise AssertionError(f"control {line!r} failed: {reply}")
        return reply

    def status(self) -> dict:
        return json.loads(self.control("status"))

    def stderr_tail(self, size: int = 2000) -> str:
        self._stderr.seek(0)
        return self._stderr.read()[-size:]

    def close(self) -> None:
        try:
            if getattr(self, "_control", None):
                self._control.close()
        finally:
            if self.process.poll() is None:
                self.process.terminate()
                try:
                    self.process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
            if self._scenario_file is not None:
                os.unlink(self._scenario_file.name)
            self._stderr.close()


def _readline(stream, timeout: float) -> str:
    """One line from a pipe, or "" after `timeout` seconds."""
    selector = selectors.DefaultSelector()
    selector.register(stream, selectors.EVENT_READ)
    try:
        if not selector.select(timeout):
            return ""
        return stream.readline().strip()
    finally:
        selector.close()


@pytest.fixture
def world_factory():
    worlds: list[WorldProcess] = []

    def make(scenario: str | dict = "three-tags", **kwargs) -> WorldProcess:
        world = WorldProcess(scenario, **kwargs)
        worlds.append(world)
        return world

    yield make
    for world in worlds:
        world.close()


@pytest.fixture
def three_tags(world_factory) -> WorldProcess:
    return world_factory("three-tags")


def gateway_binary() -> pathlib.Path | None:
    configured = os.environ.get("BEACON_GATEWAY_BIN")
    path = pathlib.Path(configured) if configured else REPO_ROOT / ".build" / "debug" / "beacon-gateway"
    if not (path.is_file() and os.access(path, os.X_OK)):
        return None
    prefix = os.environ.get("BEACON_GATEWAY_EXEC_PREFIX")
    return _exec_through(shlex.split(prefix), path.resolve()) if prefix else path


def _exec_through(prefix: list[str], binary: pathlib.Path) -> pathlib.Path:
    """A two-line script that execs `prefix binary args...`: how the tests run a binary of
    another architecture (BEACON_GATEWAY_EXEC_PREFIX=qemu-aarch64-static) without changing
    it. Every test calls the script as it would the binary; `exec` keeps the pid, so
    signals and kill -9 reach the emulator, which is the emulated program."""
    wrapper_dir = pathlib.Path(tempfile.gettempdir()) / f"beacon-gateway-exec-{os.getpid()}"
    wrapper = wrapper_dir / "beacon-gateway"
    if not wrapper.exists():
        wrapper_dir.mkdir(exist_ok=True)
        atexit.register(shutil.rmtree, wrapper_dir, True)
        command = " ".join(shlex.quote(word) for word in [*prefix, str(binary)])
        wrapper.write_text(f'#!/bin/sh\nexec {command} "$@"\n')
        wrapper.chmod(0o755)
    return wrapper


@pytest.fixture
def gateway_bin() -> pathlib.Path:
    path = gateway_binary()
    if path is None:
        where = os.environ.get("BEACON_GATEWAY_BIN") or str(REPO_ROOT / ".build/debug/beacon-gateway")
        pytest.skip(f"beacon-gateway binary not found at {where} (build it with `swift build` or set BEACON_GATEWAY_BIN)")
    return path


def wait_until(predicate, timeout: float, what: str, poll: float = 0.05):
    """Poll a condition (world status, a file) until true; fail with `what` after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(poll)


@pytest.fixture(autouse=True)
def requests_follow_the_api_document():
    """Every request a door sent to an event server during the test is one that
    docs/api/openapi.yaml describes (answers are checked where a test asserts
    `schemaProblems`: some tests serve a broken roster on purpose)."""
    from eventserver.server import EventServer
    EventServer.made.clear()
    yield
    problems = [problem for server in EventServer.made for problem in server.snapshot()["schemaProblems"]
                if problem.startswith("request ")]
    EventServer.made.clear()
    assert problems == [], "requests the API document does not describe"


@pytest.fixture(autouse=True)
def deliver_processes_end_with_their_test():
    """A test that failed before stopping its `outbox deliver` leaves none running: one
    left retrying under qemu-user took a core for a quarter of an hour after its test."""
    from eventserver.harness import Deliver
    Deliver.made.clear()
    yield
    for deliver in Deliver.made:
        deliver.kill()
    Deliver.made.clear()


# --- the site bus: a real mosquitto on loopback (broker.py) ---------------------------

# The TLS broker's accounts: the door's, and one for the tests' own subscribers.
MQTT_USERS = {"door-test": "door-test-password", "observer": "observer-password"}


@pytest.fixture(scope="session")
def mqtt_tls_files(tmp_path_factory):
    """One CA, server certificate and unrelated CA for the session's TLS brokers."""
    from broker import TLSFiles
    return TLSFiles.make(tmp_path_factory.mktemp("mqtt-tls"))


@pytest.fixture
def mqtt_broker_factory(request, tmp_path):
    """make(users=…, tls=…, persistence=…, extra_config=…) → a started broker.Broker in the
    test's tmp_path. Each is closed after the test, its subscribers with it; a failing
    test shows each broker's log (printed at teardown: pytest shows it only on failure)."""
    from broker import Broker
    brokers = []

    def make(*, tls: bool = False, **kwargs) -> Broker:
        tls_files = request.getfixturevalue("mqtt_tls_files") if tls else None
        broker = Broker(tmp_path / f"broker-{len(brokers)}", tls=tls, tls_files=tls_files, **kwargs)
        brokers.append(broker)
        return broker.start()

    yield make
    for broker in brokers:
        broker.close()
        print(f"--- mosquitto log ({broker.log_path}) ---\n{broker.log_tail()}")


@pytest.fixture
def mqtt_broker(mqtt_broker_factory):
    """A plain broker: anonymous clients, no TLS, no persistence."""
    return mqtt_broker_factory()


@pytest.fixture
def mqtt_tls_broker(mqtt_broker_factory):
    """A broker that wants a password (MQTT_USERS) on both its plain and its TLS listener."""
    return mqtt_broker_factory(tls=True, users=MQTT_USERS)
