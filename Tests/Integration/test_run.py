"""`beacon-gateway run` end to end against the virtual world (see docs/presence.md,
docs/event-api.md, docs/logs-and-systemd.md, docs/configuration.md).

People walk in and out (scenario paths, or tags pinned with `set-distance`); the agent
decides checkins and checkouts with a time-compressed [presence] section, commits them to
its outbox (read back with `outbox export`) and, with [server], forwards them to the
loopback event server. Every wait polls a log line, an outbox row, a server record or a
notification with a timeout; nothing sleeps in their place.

Skipped (with the reason) when the binary is missing: set BEACON_GATEWAY_BIN or build
.build/debug/beacon-gateway."""

from __future__ import annotations

import calendar
import hashlib
import json
import os
import pathlib
import re
import signal
import socket
import subprocess
import tempfile
import threading
import time

import pytest

from bgworld import btsnoop
from bgworld.scenarios import DEMO_UUID
from conftest import REPO_ROOT, wait_until
from eventserver import EventServer

GATEWAY_ID = "door-run-test"
TOKEN = "run-test-token-0123456789"

# Time-compressed presence: a checkout is decided 1.5 s (lost) + 2 s (leave) after a
# person's last report; tags advertise every 100 ms at 1 m (about -59 dBm) when present.
FAST_PRESENCE = {
    "enter_rssi": -70, "exit_rssi": -75, "window_s": 1.0, "min_samples": 2,
    "lost_after_s": 1.5, "leave_after_s": 2, "away_after_s": 3,
}


# The agent's log lines for committed events (`checkin … person_id=u_01 … sequence=1`).
CHECKIN_LINE = r" checkin .*\bperson(?:_id)?=u_"
CHECKOUT_LINE = r" checkout .*\bperson(?:_id)?=u_"


# MARK: - the world and the configuration

def person_id(index: int) -> str:
    return f"u_{index + 1:02d}"


def tag_id(index: int) -> str:
    return f"tag-{index + 1:02d}"


def ibeacon(index: int) -> str:
    return f"{DEMO_UUID}:200:{index + 1}"


def world_tag(index: int, **placement) -> dict:
    """One person's iBeacon in the world: `distance=` (fixed) or `path=` waypoints."""
    return {"id": tag_id(index), "kind": "ibeacon", "uuid": DEMO_UUID, "major": 200, "minor": index + 1,
            "address": f"C0:22:33:44:55:{index + 1:02X}", "interval_ms": 100, **placement}


def scenario(*tags: dict) -> dict:
    return {"name": "run-test", "tags": list(tags)}


def write_config(directory: pathlib.Path, transport: str, persons: list[int], *, server: EventServer | None = None,
                 presence: dict | None = None, log_level: str = "info", name: str = "gateway.toml") -> pathlib.Path:
    lines = ["[gateway]", f'id = "{GATEWAY_ID}"', 'site = "S_TEST"', 'door = "run-test"',
             f'state_dir = "{directory / "state"}"', f'log_level = "{log_level}"', "",
             "[bluetooth]", f'transport = "{transport}"', 'scan = "passive"', "tag_interval_ms = 100", "",
             "[presence]"]
    lines += [f"{key} = {value}" for key, value in (presence or FAST_PRESENCE).items()]
    if server is not None:
        token_file = directory / "token"
        token_file.write_text(TOKEN + "\n")
        os.chmod(token_file, 0o600)
        lines += ["", "[server]", f'url = "{server.url}"', f'token_file = "{token_file}"',
                  "timeout_s = 2", "max_backoff_s = 2"]
    for index in persons:
        lines += ["", "[[person]]", f'id = "{person_id(index)}"', f'name = "Person {index + 1}"',
                  "  [[person.tag]]", f'  id = "{tag_id(index)}"', f'  ibeacon = "{ibeacon(index)}"']
    path = directory / name
    path.write_text("\n".join(lines) + "\n")
    return path


# MARK: - the agent

class Agent:
    """`beacon-gateway run --config CFG` in the background, its stderr in a file."""

    def __init__(self, binary, config: pathlib.Path, env: dict | None = None, extra: list[str] | None = None) -> None:
        self.binary = str(binary)
        self.args = [self.binary, "run", "--config", str(config), *(extra or [])]
        self._stderr = tempfile.TemporaryFile("w+")
        self.process = subprocess.Popen(self.args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=self._stderr, env=dict(os.environ, **(env or {})))

    def log(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read()

    def lines(self, pattern: str) -> list[str]:
        return [line for line in self.log().splitlines() if re.search(pattern, line)]

    def wait_log(self, pattern: str, timeout: float = 20, count: int = 1) -> list[str]:
        """Waits for `count` log lines matching `pattern`; fails early if the agent exits."""
        def found():
            matches = self.lines(pattern)
            if len(matches) >= count:
                return matches
            if self.process.poll() is not None:
                raise AssertionError(f"the agent exited ({self.process.returncode}) before {count}× /{pattern}/;"
                                     f" log:\n{self.log()[-3000:]}")
            return None
        try:
            return wait_until(found, timeout, f"{count}× /{pattern}/ in the agent's log")
        except AssertionError as error:
            raise AssertionError(f"{error}; log:\n{self.log()[-3000:]}") from None

    def signal(self, number: int) -> None:
        assert self.process.poll() is None, f"the agent is not running; log:\n{self.log()[-3000:]}"
        self.process.send_signal(number)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()

    def stop(self, timeout: float = 10) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"the agent did not stop within {timeout:g} s; log:\n{self.log()[-3000:]}")


@pytest.fixture
def agents():
    started: list[Agent] = []

    def start(binary, config: pathlib.Path, env: dict | None = None, extra: list[str] | None = None) -> Agent:
        agent = Agent(binary, config, env, extra)
        started.append(agent)
        return agent

    yield start
    for agent in started:
        agent.kill()


@pytest.fixture
def event_server():
    """The event server of docs/event-api.md, also keeping each event request's headers (`server.headers`)."""
    server = EventServer()
    server.headers = []
    lock = threading.Lock()

    class Recording(server.httpd.RequestHandlerClass):
        def _event(self, body: bytes) -> None:
            with lock:
                server.headers.append({name.lower(): value for name, value in self.headers.items()})
            super()._event(body)

    server.httpd.RequestHandlerClass = Recording
    server.start()
    yield server
    server.stop()


def outbox(binary, config: pathlib.Path) -> list[dict]:
    """The outbox as `outbox export` prints it (every state), in sequence order, with each
    row's body parsed; empty until the agent has created its store."""
    state_dir = next((line.split('"')[1] for line in config.read_text().splitlines() if line.startswith("state_dir")), None)
    if state_dir is None or not (pathlib.Path(state_dir) / "gateway.sqlite").exists():
        return []
    result = subprocess.run([str(binary), "outbox", "export", "--state-dir", state_dir],
                            capture_output=True, text=True, timeout=30)
    if result.returncode == 1 and "there is no outbox yet" in result.stderr:
        return []  # the file exists, but the agent has not yet created its tables
    assert result.returncode == 0, f"outbox export failed: {result.stderr}"
    rows = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    for row in rows:
        row["event"] = json.loads(row["body"])
    return sorted(rows, key=lambda row: row["sequence"])


def events_of(rows: list[dict]) -> list[tuple[str, str]]:
    return [(row["type"], row["personId"]) for row in rows]


def wait_rows(binary, config: pathlib.Path, predicate, timeout: float, what: str, agent: Agent | None = None) -> list[dict]:
    def check():
        rows = outbox(binary, config)
        if predicate(rows):
            return rows
        if agent is not None and agent.process.poll() is not None:
            raise AssertionError(f"the agent exited ({agent.process.returncode}) before {what}; outbox "
                                 f"{events_of(rows)}; log:\n{agent.log()[-3000:]}")
        return None
    try:
        return wait_until(check, timeout, what, poll=0.2)
    except AssertionError as error:
        if agent is None or "timed out" not in str(error):
            raise
        raise AssertionError(f"{error}; outbox {events_of(outbox(binary, config))}; log:\n{agent.log()[-3000:]}") from None


def count(rows: list[dict], kind: str, person: str | None = None) -> int:
    return sum(1 for row in rows if row["type"] == kind and (person is None or row["personId"] == person))


def millis(timestamp: str) -> int:
    """`2026-11-20T06:35:12.345Z` → milliseconds since the epoch."""
    match = re.fullmatch(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)\.(\d{3})Z", timestamp)
    assert match, f"not an event timestamp (docs/event-api.md): {timestamp!r}"
    y, mo, d, h, mi, s, ms = (int(part) for part in match.groups())
    return calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0)) * 1000 + ms


def expected_key(event: dict) -> str:
    text = f"{event['userId']}|{GATEWAY_ID}|{event['type']}|{millis(event['visitStart'])}"
    return hashlib.sha256(text.encode()).hexdigest()


def assert_visits(rows: list[dict], persons: list[str]) -> None:
    """Each person: exactly one checkin, then one checkout of the same visit (same
    visitStart), with bodies (docs/event-api.md) whose key is the documented hash."""
    for person in persons:
        mine = [row for row in rows if row["personId"] == person]
        assert [row["type"] for row in mine] == ["checkin", "checkout"], f"{person}: {events_of(mine)}"
        checkin, checkout = (row["event"] for row in mine)
        assert checkin["visitStart"] == checkout["visitStart"] == checkin["timestamp"]
        assert millis(checkout["decidedAt"]) - millis(checkout["timestamp"]) >= 2000 - 1  # leave_after_s
        for row in mine:
            event = row["event"]
            assert event["type"] == row["type"] and event["userId"] == person
            assert event["sequence"] == row["sequence"]
            assert event["idempotencyKey"] == row["idempotencyKey"] == expected_key(event)
            assert event["deviceId"] == GATEWAY_ID and event["siteId"] == "S_TEST" and event["doorId"] == "run-test"
            assert_body_shape(event, person)


UUID4 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")


def assert_body_shape(event: dict, person: str) -> None:
    """The event body's fields (docs/event-api.md) for a person of `write_config` (tag
    advertised by `world_tag`)."""
    index = int(person[2:]) - 1
    assert UUID4.fullmatch(event["id"]), event["id"]
    assert event["beacon"] == {"tag": tag_id(index), "address": f"C0:22:33:44:55:{index + 1:02X}",
                               "uuid": DEMO_UUID, "major": 200, "minor": index + 1}, event["beacon"]
    # A checkout's series holds the samples since UNCONFIRMED began: none when the tag
    # went silent.
    assert event["rssiSeries"] or event["type"] == "checkout"
    assert all(isinstance(rssi, int) and -127 <= rssi <= 20 for rssi in event["rssiSeries"])
    assert event["txPower"] == -59  # the iBeacon's measured power
    assert event["handshake"] is None  # no proof required
    assert isinstance(event["app"]["version"], str) and event["app"]["version"]
    for field in ("timestamp", "decidedAt", "visitStart"):
        millis(event[field])
    assert millis(event["timestamp"]) <= millis(event["decidedAt"])


# MARK: - sd_notify

class NotifySocket:
    """A datagram socket standing in for systemd's NOTIFY_SOCKET; records every datagram
    with the world's scanning state at the moment it arrived."""

    def __init__(self, on_message=None) -> None:
        self._directory = tempfile.mkdtemp(prefix="bgw-notify-")
        self.path = os.path.join(self._directory, "notify")
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.socket.bind(self.path)
        self.socket.settimeout(0.1)
        self.messages: list[tuple[list[str], object]] = []
        self._on_message = on_message
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._receive, daemon=True)
        self._thread.start()

    def _receive(self) -> None:
        while not self._stop.is_set():
            try:
                data = self.socket.recv(4096)
            except socket.timeout:
                continue
            except OSError:
                return
            lines = data.decode("utf-8", "replace").splitlines()
            context = self._on_message(lines) if self._on_message else None
            with self._lock:
                self.messages.append((lines, context))

    def assignments(self) -> list[str]:
        with self._lock:
            return [line for lines, _ in self.messages for line in lines]

    def index_of(self, line: str, after: int = -1) -> int | None:
        for index, value in enumerate(self.assignments()):
            if index > after and value == line:
                return index
        return None

    def wait_for(self, line: str, after: int = -1, timeout: float = 10) -> int:
        """The index (among all assignments) of `line` once it arrives after index `after`."""
        found = wait_until(lambda: (self.index_of(line, after),) if self.index_of(line, after) is not None else None,
                           timeout, f"{line} from the agent (after {self.assignments()[:after + 1][-3:]})")
        return found[0]

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.socket.close()
        os.unlink(self.path)
        os.rmdir(self._directory)


# MARK: - tests

def test_five_people_walk_in_and_out_and_every_event_reaches_the_server_once(gateway_bin, world_factory, agents,
                                                                             event_server, tmp_path):
    # Person i arrives at 2 + 2i s, stays 3 s at 1 m, and goes (null: out of range), in
    # scenario time started when the agent reports it is scanning: its start-up (seconds
    # under emulation on a busy machine) does not eat into the first visit.
    tags = [world_tag(i, path=[[0, None], [2 + 2 * i, None], [2 + 2 * i + 0.01, 1.0], [5 + 2 * i, 1.0],
                               [5 + 2 * i + 0.01, None]]) for i in range(5)]
    world = world_factory(scenario(*tags))
    world.control("mute")  # nobody is heard before the scripts start
    event_server.control(require_token=TOKEN)
    config = write_config(tmp_path, world.transport, list(range(5)), server=event_server)
    agent = agents(gateway_bin, config)
    agent.wait_log(r"controller up")
    world.control("restart-script")
    world.control("unmute")

    rows = wait_rows(gateway_bin, config, lambda rows: count(rows, "checkout") >= 5, 40, "five checkouts", agent)
    persons = [person_id(i) for i in range(5)]
    assert len(rows) == 10, events_of(rows)
    assert_visits(rows, persons)
    # They came and went in order, two seconds apart.
    assert [row["personId"] for row in rows if row["type"] == "checkin"] == persons
    assert [row["personId"] for row in rows if row["type"] == "checkout"] == persons
    assert [row["sequence"] for row in rows] == list(range(1, 11))
    assert len(agent.lines(CHECKIN_LINE)) == 5 and len(agent.lines(CHECKOUT_LINE)) == 5

    # All ten at the server, once each, under the outbox's keys, with the headers of docs/event-api.md
    # (the server answers 400 for a missing or inconsistent one, 401 for a wrong token).
    keys = {row["idempotencyKey"]: row for row in rows}
    wait_until(lambda: set(event_server.snapshot()["events"]) == set(keys), 20, "the ten events at the server")
    snapshot = event_server.snapshot()
    assert snapshot["headerProblems"] == [] and snapshot["schemaProblems"] == []
    assert all(snapshot["requests"][key] == 1 for key in keys), snapshot["requests"]
    assert all(entry["status"] == 201 for entry in snapshot["log"]), snapshot["log"]
    for key, body in snapshot["events"].items():
        assert body == keys[key]["event"], f"the server got another body for {key}"
    version = subprocess.run([str(gateway_bin), "--version"], capture_output=True, text=True).stdout.strip()
    assert len(event_server.headers) == 10
    for headers in event_server.headers:
        assert headers["idempotency-key"] in keys
        assert headers["x-device-id"] == GATEWAY_ID
        assert headers["x-app-version"] == version == keys[headers["idempotency-key"]]["event"]["app"]["version"]
        assert headers["authorization"] == f"Bearer {TOKEN}"
        assert headers["content-type"].startswith("application/json")
    # Per person in order of sequence: each checkin reached the server before its checkout.
    order = snapshot["order"]
    for person in persons:
        mine = [key for key in order if keys[key]["personId"] == person]
        assert [keys[key]["type"] for key in mine] == ["checkin", "checkout"]
    wait_rows(gateway_bin, config, lambda rows: all(row["state"] == "sent" for row in rows), 10, "all rows sent", agent)
    assert agent.stop() == 0
    assert TOKEN not in agent.log()


def test_kill_9_during_a_visit_and_restart_gives_no_second_checkin_and_the_checkout_still_arrives(
        gateway_bin, world_factory, agents, tmp_path):
    world = world_factory(scenario(world_tag(0, distance=1.0)))
    config = write_config(tmp_path, world.transport, [0], log_level="debug")
    first = agents(gateway_bin, config)
    wait_rows(gateway_bin, config, lambda rows: count(rows, "checkin") == 1, 20, "the checkin", first)
    first.kill()  # SIGKILL while the person stands at the door

    # The open visit comes back open and waits for the scan (docs/presence.md, "Restart
    # rules"): hearing the person again is the same visit, however slow the start-up.
    second = agents(gateway_bin, config)
    second.wait_log(r"presence restored person(?:_id)?=u_01 state=PRESENT")
    second.wait_log(r"restored visits decided by the scan again")
    world.control(f"set-distance {tag_id(0)} off")
    rows = wait_rows(gateway_bin, config, lambda rows: count(rows, "checkout") == 1, 20, "the checkout", second)
    assert events_of(rows) == [("checkin", "u_01"), ("checkout", "u_01")]
    assert_visits(rows, ["u_01"])
    assert second.lines(CHECKIN_LINE) == []
    assert second.stop() == 0


def test_kill_9_during_the_leave_debounce_and_restart_still_gives_the_checkout(gateway_bin, world_factory, agents,
                                                                               tmp_path):
    world = world_factory(scenario(world_tag(0, distance=1.0)))
    config = write_config(tmp_path, world.transport, [0], log_level="debug")
    first = agents(gateway_bin, config)
    wait_rows(gateway_bin, config, lambda rows: count(rows, "checkin") == 1, 20, "the checkin", first)
    world.control(f"set-distance {tag_id(0)} off")
    first.wait_log(r"presence person(?:_id)?=u_01 from=PRESENT to=UNCONFIRMED", timeout=10)
    first.kill()  # the person has gone; the checkout is not decided yet
    assert count(outbox(gateway_bin, config), "checkout") == 0

    second = agents(gateway_bin, config)
    rows = wait_rows(gateway_bin, config, lambda rows: count(rows, "checkout") == 1, 20, "the checkout", second)
    assert events_of(rows) == [("checkin", "u_01"), ("checkout", "u_01")]
    checkin, checkout = (row["event"] for row in rows)
    assert checkout["visitStart"] == checkin["visitStart"]
    assert checkout["idempotencyKey"] == expected_key(checkout)
    assert_body_shape(checkout, "u_01")
    assert second.stop() == 0


def test_events_left_undelivered_by_a_killed_agent_are_delivered_after_the_restart(gateway_bin, world_factory, agents,
                                                                                   event_server, tmp_path):
    world = world_factory(scenario(world_tag(0, distance=1.0)))
    event_server.control(fail_status=503)  # until further notice
    config = write_config(tmp_path, world.transport, [0], server=event_server)
    first = agents(gateway_bin, config)
    rows = wait_rows(gateway_bin, config, lambda rows: count(rows, "checkin") == 1, 20, "the checkin", first)
    key = rows[0]["idempotencyKey"]
    wait_until(lambda: event_server.snapshot()["requests"].get(key, 0) >= 1, 20, "a first (refused) attempt")
    first.kill()
    assert outbox(gateway_bin, config)[0]["state"] == "pending"

    event_server.control(reset=True)
    world.control(f"set-distance {tag_id(0)} off")
    second = agents(gateway_bin, config)
    rows = wait_rows(gateway_bin, config, lambda rows: count(rows, "checkout") == 1, 20, "the checkout", second)
    wait_until(lambda: set(event_server.snapshot()["events"]) == {row["idempotencyKey"] for row in rows}, 20,
               "the checkin and the checkout at the server")
    snapshot = event_server.snapshot()
    assert [snapshot["events"][key]["type"] for key in snapshot["order"]] == ["checkin", "checkout"]
    assert snapshot["headerProblems"] == [] and snapshot["schemaProblems"] == []
    wait_rows(gateway_bin, config, lambda rows: all(row["state"] == "sent" for row in rows), 10, "both sent", second)
    assert second.stop() == 0


def test_capture_of_a_run_replays_through_run_to_the_same_checkin(gateway_bin, world_factory, agents, tmp_path):
    world = world_factory(scenario(world_tag(0, distance=1.0)))
    capture = tmp_path / "door.btsnoop"
    live = tmp_path / "live"
    live.mkdir()
    config = write_config(live, world.transport, [0])
    agent = agents(gateway_bin, config, extra=["--capture", str(capture)])
    wait_rows(gateway_bin, config, lambda rows: count(rows, "checkin") == 1, 20, "the checkin", agent)
    world.control("mute")

    # Reports wait in the kernel up to a second between reads (ReadGathering), and a stop
    # does not read what waits: the agent stops once its capture, flushed every second,
    # holds every packet the muted world sent.
    def captured_everything():
        session, = world.status()["sessions"]
        try:
            with capture.open("rb") as file:
                records = list(btsnoop.read(file))
        except Exception:  # a record half-written at this instant: look again
            return None
        return sum(1 for r in records if r.from_controller) == session["controllerToHost"]
    wait_until(captured_everything, 20, "every packet of the muted world in the capture")
    assert agent.stop() == 0
    session, = world.status()["sessions"]
    with capture.open("rb") as file:
        records = list(btsnoop.read(file))
    assert sum(1 for r in records if not r.from_controller) == session["hostToController"]
    assert sum(1 for r in records if r.from_controller) == session["controllerToHost"]

    # The capture as the controller: the agent replays it, decides the same checkin and
    # ends by itself.
    replay_dir = tmp_path / "replay"
    replay_dir.mkdir()
    replay_config = write_config(replay_dir, f"btsnoop:{capture}", [0])
    replay = agents(gateway_bin, replay_config)
    assert replay.process.wait(timeout=30) == 0, replay.log()[-3000:]
    assert replay.lines(r"replay finished")
    assert events_of(outbox(gateway_bin, replay_config)) == [("checkin", "u_01")]


def test_replay_decides_on_the_recorded_clock(gateway_bin, agents, tmp_path):
    """A capture of one visit — at the door for 5 s, then 8 s farther away — replayed in
    well under a second of wall time gives its checkin and its checkout, stamped with
    the times it was recorded (leave_after_s = 2 runs in recorded seconds)."""
    from bgworld import ad, hcibytes
    recorded_start_us = calendar.timegm((2025, 3, 1, 8, 0, 0)) * 1_000_000
    address = bytes.fromhex("C0FFEE112233")[::-1]
    data = ad.ibeacon(DEMO_UUID, 200, 1, -59)
    capture = tmp_path / "visit.btsnoop"
    with capture.open("wb") as file:
        file.write(btsnoop.header())
        for step in range(130):  # every 100 ms for 13 s
            rssi = -55 if step < 50 else -90
            packet = hcibytes.legacy_reports_event([hcibytes.legacy_report(hcibytes.ADV_NONCONN_IND, 1, address, data, rssi)])
            file.write(btsnoop.record(packet, btsnoop.flags_for(packet), recorded_start_us + step * 100_000))
    config = write_config(tmp_path, f"btsnoop:{capture}", [0])
    replay = agents(gateway_bin, config)
    assert replay.process.wait(timeout=30) == 0, replay.log()[-3000:]
    rows = outbox(gateway_bin, config)
    assert events_of(rows) == [("checkin", "u_01"), ("checkout", "u_01")], replay.log()[-3000:]
    checkin, checkout = (row["event"] for row in rows)
    # Checkin at the second strong sample (min_samples = 2); the checkout's timestamp is
    # when UNCONFIRMED began: the first window of weak samples (window_s = 1), 5.x s in;
    # decided 2 s (leave_after_s) later, all on 2025-03-01.
    assert checkin["timestamp"] == "2025-03-01T08:00:00.100Z", checkin
    assert checkin["visitStart"] == checkin["timestamp"]
    assert "2025-03-01T08:00:05.000Z" <= checkout["timestamp"] <= "2025-03-01T08:00:06.000Z", checkout
    assert checkout["visitStart"] == checkin["timestamp"]
    assert checkout["decidedAt"] == iso_after(checkout["timestamp"], 2.0), checkout


def iso_after(timestamp: str, seconds: float) -> str:
    """`2025-03-01T08:00:05.300Z` plus `seconds`, in the same form."""
    whole, millis = timestamp.rstrip("Z").split(".")
    base = calendar.timegm(time.strptime(whole, "%Y-%m-%dT%H:%M:%S")) * 1000 + int(millis) + round(seconds * 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(base // 1000)) + f".{base % 1000:03d}Z"


def resident_kib(pid: int) -> int:
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


def test_sighup_reloads_of_a_large_configuration_do_not_pile_up_memory(gateway_bin, world_factory, agents, tmp_path):
    """Each SIGHUP parses the file again: 20 reloads of a 2,000-person file must not grow
    the agent. (TOMLKit's own types kept every parsed tree: ~4 MiB per reload.)"""
    world = world_factory(scenario(world_tag(0, distance=1.0)))
    config = write_config(tmp_path, world.transport, list(range(2_000)))
    agent = agents(gateway_bin, config)
    wait_rows(gateway_bin, config, lambda rows: count(rows, "checkin") == 1, 30, "the checkin", agent)
    agent.signal(signal.SIGHUP)
    agent.wait_log(r"configuration reloaded persons=2000", count=1, timeout=30)
    before = resident_kib(agent.process.pid)
    for reload in range(2, 22):
        agent.signal(signal.SIGHUP)
        agent.wait_log(r"configuration reloaded persons=2000", count=reload, timeout=30)
    growth = resident_kib(agent.process.pid) - before
    assert growth < 16 * 1024, f"resident memory grew by {growth} KiB over 20 reloads"
    assert agent.stop() == 0


def test_sighup_during_visits_keeps_them(gateway_bin, world_factory, agents, tmp_path):
    world = world_factory(scenario(world_tag(0, distance=1.0), world_tag(1, distance=1.0)))
    config = write_config(tmp_path, world.transport, [0, 1])
    agent = agents(gateway_bin, config)
    wait_rows(gateway_bin, config, lambda rows: count(rows, "checkin") == 2, 20, "two checkins", agent)

    agent.signal(signal.SIGHUP)
    agent.wait_log(r"configuration reloaded persons=2 open_visits=2")
    # Both still inside: one leaves, then the other; any checkin the reload caused would
    # be committed (within a filter window) long before the first checkout.
    world.control(f"set-distance {tag_id(0)} off")
    wait_rows(gateway_bin, config, lambda rows: count(rows, "checkout") == 1, 20, "the first checkout", agent)
    agent.signal(signal.SIGHUP)
    agent.wait_log(r"configuration reloaded persons=2 open_visits=1", count=1)
    world.control(f"set-distance {tag_id(1)} off")
    rows = wait_rows(gateway_bin, config, lambda rows: count(rows, "checkout") == 2, 20, "the second checkout", agent)
    assert events_of(rows) == [("checkin", "u_01"), ("checkin", "u_02"), ("checkout", "u_01"), ("checkout", "u_02")] \
        or events_of(rows) == [("checkin", "u_02"), ("checkin", "u_01"), ("checkout", "u_01"), ("checkout", "u_02")]
    assert_visits(rows, ["u_01", "u_02"])
    assert agent.stop() == 0


def test_sighup_that_removes_a_person_during_their_visit_commits_their_checkout(gateway_bin, world_factory, agents,
                                                                                 tmp_path):
    world = world_factory(scenario(world_tag(0, distance=1.0), world_tag(1, distance=1.0)))
    config = write_config(tmp_path, world.transport, [0, 1])
    agent = agents(gateway_bin, config)
    wait_rows(gateway_bin, config, lambda rows: count(rows, "checkin") == 2, 20, "two checkins", agent)

    write_config(tmp_path, world.transport, [0])  # u_02 is no longer configured
    agent.signal(signal.SIGHUP)
    agent.wait_log(r"configuration reloaded persons=1 open_visits=1")
    rows = wait_rows(gateway_bin, config, lambda rows: count(rows, "checkout", "u_02") == 1, 10, "u_02's checkout", agent)
    # u_01 stays: still at the door, so no checkout for them.
    assert count(rows, "checkout", "u_01") == 0 and count(rows, "checkin") == 2
    checkin = next(row["event"] for row in rows if row["type"] == "checkin" and row["personId"] == "u_02")
    checkout = next(row["event"] for row in rows if row["type"] == "checkout")
    assert checkout["visitStart"] == checkin["visitStart"]
    assert checkout["idempotencyKey"] == expected_key(checkout)
    # The removed person's tag is someone else's now: no event for it any more.
    world.control(f"set-distance {tag_id(0)} off")
    rows = wait_rows(gateway_bin, config, lambda rows: count(rows, "checkout", "u_01") == 1, 20, "u_01's checkout", agent)
    assert len(rows) == 4, events_of(rows)
    assert_visits(rows, ["u_01"])
    assert agent.stop() == 0


def test_restart_with_a_person_removed_during_their_visit_commits_their_checkout(gateway_bin, world_factory, agents,
                                                                                  tmp_path):
    world = world_factory(scenario(world_tag(0, distance=1.0), world_tag(1, distance=1.0)))
    config = write_config(tmp_path, world.transport, [0, 1])
    first = agents(gateway_bin, config)
    wait_rows(gateway_bin, config, lambda rows: count(rows, "checkin") == 2, 20, "two checkins", first)
    first.kill()

    write_config(tmp_path, world.transport, [0])  # u_02 removed while the agent was down
    second = agents(gateway_bin, config)
    rows = wait_rows(gateway_bin, config, lambda rows: count(rows, "checkout", "u_02") == 1, 20, "u_02's checkout", second)
    checkin = next(row["event"] for row in rows if row["type"] == "checkin" and row["personId"] == "u_02")
    checkout = next(row["event"] for row in rows if row["type"] == "checkout")
    assert checkout["visitStart"] == checkin["visitStart"]
    assert checkout["idempotencyKey"] == expected_key(checkout)
    assert checkout["beacon"]["tag"] == tag_id(1) and checkout["deviceId"] == GATEWAY_ID
    # u_01's visit goes on (no second checkin) and ends when they leave.
    world.control(f"set-distance {tag_id(0)} off")
    rows = wait_rows(gateway_bin, config, lambda rows: count(rows, "checkout", "u_01") == 1, 20, "u_01's checkout", second)
    assert sorted(events_of(rows)) == [("checkin", "u_01"), ("checkin", "u_02"), ("checkout", "u_01"), ("checkout", "u_02")]
    assert second.stop() == 0
    # Its record is gone: a third start has nothing more to say about u_02.
    third = agents(gateway_bin, config)
    third.wait_log(r"controller up")
    assert third.stop() == 0
    assert len(outbox(gateway_bin, config)) == 4


def test_sighup_that_adds_a_server_delivers_what_was_stored_alone(gateway_bin, world_factory, agents, event_server,
                                                                   tmp_path):
    world = world_factory(scenario(world_tag(0, distance=1.0)))
    config = write_config(tmp_path, world.transport, [0])
    agent = agents(gateway_bin, config)
    rows = wait_rows(gateway_bin, config, lambda rows: count(rows, "checkin") == 1, 20, "the checkin", agent)
    assert rows[0]["state"] == "pending"

    event_server.control(require_token=TOKEN)
    write_config(tmp_path, world.transport, [0], server=event_server)
    agent.signal(signal.SIGHUP)
    agent.wait_log(r"configuration reloaded")
    wait_until(lambda: rows[0]["idempotencyKey"] in event_server.snapshot()["events"], 20, "the checkin at the server")
    world.control(f"set-distance {tag_id(0)} off")
    rows = wait_rows(gateway_bin, config, lambda rows: count(rows, "checkout") == 1, 20, "the checkout", agent)
    wait_until(lambda: set(event_server.snapshot()["events"]) == {row["idempotencyKey"] for row in rows}, 20,
               "the checkout at the server")
    assert event_server.snapshot()["headerProblems"] == [] and event_server.snapshot()["schemaProblems"] == []
    assert agent.stop() == 0


def refused_reload_keeps_the_running_configuration(gateway_bin, world_factory, agents, tmp_path, edit, refusal: str):
    """SIGHUP with the file changed by `edit` (old text -> new text): the reload is refused
    with a line matching `refusal` (a function of the original file's line count), and the
    agent keeps running on the old configuration."""
    world = world_factory(scenario(world_tag(0, distance=1.0), world_tag(1, path=[[0, None], [600, None]])))
    config = write_config(tmp_path, world.transport, [0, 1])
    agent = agents(gateway_bin, config)
    wait_rows(gateway_bin, config, lambda rows: count(rows, "checkin") == 1, 20, "the checkin", agent)

    good = config.read_text()
    config.write_text(edit(good))
    agent.signal(signal.SIGHUP)
    agent.wait_log(r"configuration not reloaded")
    assert agent.lines(refusal(good.count("\n"))), agent.log()[-2000:]
    # Still running with the old configuration: the second person arrives and is checked in.
    world.control(f"set-distance {tag_id(1)} 1")
    rows = wait_rows(gateway_bin, config, lambda rows: count(rows, "checkin", "u_02") == 1, 20, "u_02's checkin", agent)
    assert events_of(rows) == [("checkin", "u_01"), ("checkin", "u_02")]
    config.write_text(good)
    assert agent.stop() == 0


def test_sighup_with_a_broken_configuration_keeps_the_running_one(gateway_bin, world_factory, agents, tmp_path):
    refused_reload_keeps_the_running_configuration(
        gateway_bin, world_factory, agents, tmp_path,
        lambda good: good.replace("enter_rssi = -70", "enter_rssi = -80"),  # below exit_rssi: an error
        lambda _: r"gateway\.toml:\d+: presence\.(enter|exit)_rssi: must be")


HOSTILE_CONFIGURATIONS = {
    "dotted-key": (".".join(["a"] * 50_000) + " = 1", r"a(\.a){15}…: key has more than 16 dotted parts"),
    "header": ("[" + ".".join(["t"] * 40_000) + "]", r"t(\.t){15}…: key has more than 16 dotted parts"),
    "nesting": ("x = " + "[" * 100_000, r"x: arrays and inline tables are nested more than 16 deep"),
}


@pytest.mark.parametrize("hostile", sorted(HOSTILE_CONFIGURATIONS))
def test_sighup_with_a_hostile_configuration_keeps_the_agent_and_its_configuration(gateway_bin, world_factory, agents,
                                                                                  tmp_path, hostile):
    """A file crafted to crash or stall the TOML parser (it once did: SIGSEGV) is refused
    on SIGHUP with file, line and key; the agent keeps running on the old one."""
    payload, message = HOSTILE_CONFIGURATIONS[hostile]
    # The payload goes after a blank line following the file's last line.
    refused_reload_keeps_the_running_configuration(
        gateway_bin, world_factory, agents, tmp_path, lambda good: good + "\n" + payload + "\n",
        lambda lines: rf"gateway\.toml:{lines + 2}: {message}")


ADJTIMEX_SHIM = """
#include <sys/timex.h>
/* The kernel's answer about the clock, chosen by the test: %s. */
int adjtimex(struct timex *t) { t->status = %s; return %s; }
"""


def clock_shim(tmp_path: pathlib.Path, synchronised: bool) -> dict:
    """An LD_PRELOAD library whose adjtimex(2) says the clock is (not) synchronised."""
    source = tmp_path / "adjtimex.c"
    source.write_text(ADJTIMEX_SHIM % (("synchronised", "0", "TIME_OK") if synchronised
                                       else ("unsynchronised", "STA_UNSYNC", "TIME_ERROR")))
    library = tmp_path / "adjtimex.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(library), str(source)], check=True, timeout=60)
    return {"LD_PRELOAD": str(library)}


@pytest.mark.parametrize("synchronised", [False, True])
def test_events_decided_on_an_unsynchronised_clock_say_so_at_the_server(gateway_bin, world_factory, agents,
                                                                       event_server, tmp_path, synchronised):
    if "statically linked" in subprocess.run(["file", str(gateway_bin)], capture_output=True, text=True).stdout:
        pytest.skip("a static binary cannot be given another adjtimex")
    world = world_factory(scenario(world_tag(0, distance=1.0)))
    config = write_config(tmp_path, world.transport, [0], server=event_server)
    notify = NotifySocket()
    try:
        agent = agents(gateway_bin, config, env=dict(clock_shim(tmp_path, synchronised), NOTIFY_SOCKET=notify.path))
        rows = wait_rows(gateway_bin, config, lambda rows: count(rows, "checkin") == 1, 20, "the checkin", agent)
        key = rows[0]["idempotencyKey"]
        wait_until(lambda: key in event_server.snapshot()["events"], 20, "the checkin at the server")
        body = event_server.snapshot()["events"][key]
        wait_until(lambda: any(m.startswith("STATUS=scanning") for m in notify.assignments()), 20, "a STATUS line")
        statuses = [m for m in notify.assignments() if m.startswith("STATUS=")]
    finally:
        notify.close()
    if synchronised:
        assert "clockSynced" not in body, body
        assert not agent.lines("clock not synchronised")
        assert not any("clock unsynchronised" in m for m in statuses)
    else:
        assert body["clockSynced"] is False, body
        assert len(agent.lines("system clock not synchronised")) == 1, "logged once, not per reading"
        assert all("clock unsynchronised" in m for m in statuses if m.startswith("STATUS=scanning")), statuses
    assert agent.stop() == 0


def test_controller_stopped_during_a_visit_recovers_without_a_second_checkin(gateway_bin, world_factory, agents,
                                                                             tmp_path):
    world = world_factory(scenario(world_tag(0, distance=1.0)))
    # A leave debounce longer than the outage: the person stands at the door throughout.
    presence = dict(FAST_PRESENCE, leave_after_s=10, away_after_s=12)
    config = write_config(tmp_path, world.transport, [0], presence=presence, log_level="debug")
    notify = NotifySocket()
    try:
        agent = agents(gateway_bin, config, env={"NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "1000000"})
        wait_rows(gateway_bin, config, lambda rows: count(rows, "checkin") == 1, 20, "the checkin", agent)
        agent.wait_log(r"controller up")

        world.control("stop-controller 3")
        agent.wait_log(r"controller down", timeout=10)
        agent.wait_log(r"controller up", timeout=20, count=2)
        # Lost while the controller was away (UNCONFIRMED after 1.5 s), heard again afterwards.
        agent.wait_log(r"presence person(?:_id)?=u_01 from=UNCONFIRMED to=PRESENT", timeout=10)
        world.control(f"set-distance {tag_id(0)} off")
        rows = wait_rows(gateway_bin, config, lambda rows: count(rows, "checkout") == 1, 25, "the checkout", agent)
        assert events_of(rows) == [("checkin", "u_01"), ("checkout", "u_01")]
        assert agent.stop() == 0
    finally:
        notify.close()
    # The watchdog is fed only while the controller answers (see docs/logs-and-systemd.md): none
    # before the first "scanning" status (a slow start, e.g. under emulation, reports "controller
    # unavailable" first), then fed, none from the outage's "controller unavailable" status until
    # scanning is reported again, and fed again after it.
    lines = notify.assignments()
    first_up = next((i for i, line in enumerate(lines) if line.startswith("STATUS=scanning")), None)
    assert first_up is not None, f"no STATUS= for scanning: {lines}"
    down = next((i for i, line in enumerate(lines)
                 if i > first_up and line.startswith("STATUS=controller unavailable")), None)
    assert down is not None, f"no STATUS= for the outage: {lines}"
    up = next((i for i, line in enumerate(lines) if i > down and line.startswith("STATUS=scanning")), None)
    assert up is not None, f"no STATUS= after the recovery: {lines}"
    assert "WATCHDOG=1" not in lines[:first_up], lines[:first_up]
    assert "WATCHDOG=1" not in lines[down:up], lines[down:up]
    assert "WATCHDOG=1" in lines[first_up:down], lines[first_up:down]
    assert "WATCHDOG=1" in lines[up:], lines[up:]


def test_sd_notify_ready_status_reloading_stopping(gateway_bin, world_factory, agents, tmp_path):
    world = world_factory(scenario(world_tag(0, distance=1.0)))

    def scanning(lines):
        # Asked the moment READY=1 arrives: the controller must already be scanning.
        if "READY=1" not in lines:
            return None
        return any(session.get("scanning") for session in world.status()["sessions"])

    notify = NotifySocket(on_message=scanning)
    try:
        config = write_config(tmp_path, world.transport, [0])
        agent = agents(gateway_bin, config, env={"NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "1000000"})
        ready = notify.wait_for("READY=1", timeout=20)
        assert [context for lines, context in notify.messages if "READY=1" in lines][0] is True, \
            "READY=1 came before the controller was scanning"
        wait_until(lambda: any(line.startswith("STATUS=") and "1 present" in line for line in notify.assignments()),
                   20, "STATUS= with the person present")
        wait_until(lambda: "WATCHDOG=1" in notify.assignments(), 10, "WATCHDOG=1")
        status = [line for line in notify.assignments() if line.startswith("STATUS=")]
        # "· clock unsynchronised" ends the line while the kernel says so (this machine may).
        assert all(re.fullmatch(r"STATUS=\S.* · \d+ present · outbox \d+( · clock unsynchronised)?", line)
                   for line in status), status

        agent.signal(signal.SIGHUP)
        reloading = notify.wait_for("RELOADING=1", after=ready)
        assert any(line.startswith("MONOTONIC_USEC=") for line in notify.assignments()[reloading:])
        notify.wait_for("READY=1", after=reloading)

        agent.signal(signal.SIGTERM)
        started = time.monotonic()
        code = agent.process.wait(timeout=10)
        assert code == 0, agent.log()[-3000:]
        assert time.monotonic() - started < 5, "a clean stop takes less than 5 s (docs/logs-and-systemd.md)"
        assert notify.index_of("STOPPING=1", after=reloading) is not None
        # Presence survived the reload: the visit is still open at the stop.
        assert agent.lines(r"stopped checkins=1 checkouts=0 open_visits=1")
    finally:
        notify.close()


def test_sighup_before_the_controller_is_up_does_not_announce_ready(gateway_bin, world_factory, agents, tmp_path):
    world = world_factory(scenario(world_tag(0, distance=1.0)))
    world.control("stop-controller 4")  # the agent starts while nothing answers

    def scanning(lines):
        if "READY=1" not in lines:
            return None
        return any(session.get("scanning") for session in world.status()["sessions"])

    notify = NotifySocket(on_message=scanning)
    try:
        config = write_config(tmp_path, world.transport, [0])
        agent = agents(gateway_bin, config, env={"NOTIFY_SOCKET": notify.path})
        agent.wait_log(r"controller down")
        agent.signal(signal.SIGHUP)
        agent.wait_log(r"configuration reloaded")
        assert "READY=1" not in notify.assignments(), "READY=1 before scanning"
        notify.wait_for("READY=1", timeout=20)
        assert all(context is True for lines, context in notify.messages if "READY=1" in lines), \
            "READY=1 came before the controller was scanning"
        assert agent.stop() == 0
    finally:
        notify.close()


def test_the_demo_configuration_checks_the_demo_people_in_and_out(gateway_bin, world_factory, agents, tmp_path):
    """config/demo.toml against the world's demo scenario, as scripts/demo runs them (here
    at 4× the walking pace instead of 2×): Aiko arrives, is checked in, leaves, is checked
    out."""
    world = world_factory("demo", extra=["--time-scale", "4"])
    demo = (REPO_ROOT / "config" / "demo.toml").read_text()
    demo = re.sub(r'(?m)^transport = .*$', f'transport = "{world.transport}"', demo)
    demo = re.sub(r'(?m)^state_dir = .*$', f'state_dir = "{tmp_path / "state"}"', demo)
    config = tmp_path / "demo.toml"
    config.write_text(demo)
    agent = agents(gateway_bin, config)
    rows = wait_rows(gateway_bin, config, lambda rows: count(rows, "checkout", "u_aiko") >= 1, 30, "Aiko's checkout", agent)
    aiko = [row["type"] for row in rows if row["personId"] == "u_aiko"]
    assert aiko[:2] == ["checkin", "checkout"], events_of(rows)
    assert agent.lines(r" checkin .*\bperson(?:_id)?=u_aiko") and agent.lines(r" checkout .*\bperson(?:_id)?=u_aiko")
    assert agent.stop() == 0


def test_configuration_error_exits_2_naming_file_and_line(gateway_bin, tmp_path):
    config = write_config(tmp_path, "tcp:127.0.0.1:9", [0], presence=dict(FAST_PRESENCE, exit_rssi=-60))
    line = next(number for number, text in enumerate(config.read_text().splitlines(), 1) if text.startswith("exit_rssi"))
    result = subprocess.run([str(gateway_bin), "run", "--config", str(config)], capture_output=True, text=True, timeout=30)
    assert result.returncode == 2, result.stderr
    assert f"{config}:{line}: presence.exit_rssi: must be lower than enter_rssi" in result.stderr
    assert not (tmp_path / "state").exists(), "nothing is started with a bad configuration"


def test_a_transport_error_no_retry_can_fix_at_the_first_open_exits_1_at_once(gateway_bin, tmp_path):
    """A missing replay file (like a kernel without Bluetooth, or no permission for the
    adapter) cannot be fixed by trying again: run says why and exits 1 instead of
    waiting for a signal (under systemd: a start timeout, then a restart into the same
    state)."""
    missing = tmp_path / "no-such-capture.btsnoop"
    config = write_config(tmp_path, f"btsnoop:{missing}", [0])
    result = subprocess.run([str(gateway_bin), "run", "--config", str(config)], capture_output=True, text=True,
                            timeout=30)
    assert result.returncode == 1, result.stderr
    assert f"cannot read the capture {missing}: No such file or directory" in result.stderr, result.stderr


def test_under_the_journal_the_reasons_run_stops_are_logged_as_errors(gateway_bin, tmp_path):
    """With stderr connected to the journal (JOURNAL_STREAM names it, as systemd sets it),
    a configuration error's lines carry the error priority prefix `<3>`: journald keeps
    them at priority err, so `journalctl -p warning` shows why the service stopped."""
    config = write_config(tmp_path, "tcp:127.0.0.1:9", [0], presence=dict(FAST_PRESENCE, exit_rssi=-60))
    stream = tmp_path / "stderr"
    with stream.open("w") as stderr:
        status = os.fstat(stderr.fileno())
        env = dict(os.environ, JOURNAL_STREAM=f"{status.st_dev}:{status.st_ino}")
        result = subprocess.run([str(gateway_bin), "run", "--config", str(config)], stderr=stderr, env=env, timeout=30)
    assert result.returncode == 2
    lines = stream.read_text().splitlines()
    problems = [line for line in lines if "presence.exit_rssi" in line or "the agent did not start" in line]
    assert len(problems) == 2 and all(line.startswith("<3>") for line in problems), lines


def test_a_server_that_never_answers_does_not_hold_up_decisions(gateway_bin, world_factory, agents, event_server,
                                                                tmp_path):
    """A slow server must not block scanning or presence decisions (delivery runs inside
    the event loop: docs/architecture.md). The server
    takes 60 s per request and the agent waits up to 30 s for one; were a request to
    hold the event loop, nothing would be decided while it hangs. So: once the first
    request has reached the server, further people must still be checked in and out
    while that request (and every other) is unanswered."""
    tags = [world_tag(i, path=[[0, None], [2 + 2 * i, None], [2 + 2 * i + 0.01, 1.0], [5 + 2 * i, 1.0],
                               [5 + 2 * i + 0.01, None]]) for i in range(5)]
    world = world_factory(scenario(*tags))
    event_server.control(delay_ms=60_000)
    config = write_config(tmp_path, world.transport, list(range(5)), server=event_server)
    config.write_text(config.read_text().replace("timeout_s = 2", "timeout_s = 30"))
    agent = agents(gateway_bin, config)

    wait_until(lambda: sum(event_server.snapshot()["requests"].values()) >= 1, 20, "the first request at the server")
    committed_at_first_request = len(outbox(gateway_bin, config))
    rows = wait_rows(gateway_bin, config, lambda rows: len(rows) >= committed_at_first_request + 4, 20,
                     "four more events decided while the first request hangs", agent)
    assert event_server.snapshot()["events"] == {}, "the server answered although it was told to take 60 s"
    for person in {row["personId"] for row in rows}:
        kinds = [row["type"] for row in rows if row["personId"] == person]
        assert kinds in (["checkin"], ["checkin", "checkout"]), f"{person}: {kinds}"
    assert agent.stop() == 0, agent.log()[-2000:]
