"""The fleet's view of a running agent (see docs/fleet.md): heartbeats to the loopback
server, /metrics and the textfile parsed with prometheus_client's own parser, and
`beacon-gateway status` over the status socket; a hostile /metrics client next to all
of it. Every wait polls the server's record, a log line or the socket with a timeout.

Skipped (with the reason) when the binary is missing: set BEACON_GATEWAY_BIN or build
.build/debug/beacon-gateway."""

from __future__ import annotations

import datetime
import json
import os
import pathlib
import shutil
import signal
import socket
import stat
import statistics
import subprocess
import time
import urllib.error
import urllib.request

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from conftest import wait_until
from test_run import (GATEWAY_ID, TOKEN, agents, event_server, scenario, tag_id,  # noqa: F401 - fixtures
                      world_tag, write_config)

FAMILIES = {
    "beacon_gateway_build_info": "gauge", "beacon_gateway_reports": "counter",
    "beacon_gateway_persons_present": "gauge", "beacon_gateway_events": "counter",
    "beacon_gateway_outbox_events": "gauge", "beacon_gateway_outbox_oldest_pending_seconds": "gauge",
    "beacon_gateway_deliveries": "counter", "beacon_gateway_delivery_latency_seconds": "histogram",
    "beacon_gateway_controller_up": "gauge", "beacon_gateway_controller_resets": "counter",
    "beacon_gateway_proofs": "counter", "beacon_gateway_clock_synced": "gauge", "beacon_gateway_paused": "gauge",
    "beacon_gateway_disk_trouble": "gauge", "beacon_gateway_corrupt_databases": "counter",
    "beacon_gateway_salvaged": "counter", "beacon_gateway_salvage_unreadable": "counter",
    "process_cpu_seconds": "counter", "process_resident_memory_bytes": "gauge", "process_start_time_seconds": "gauge",
}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def fleet_config(tmp_path: pathlib.Path, world, server, *, heartbeat_s: float = 1, port: int | None = None,
                 textfile: pathlib.Path | None = None) -> pathlib.Path:
    config = write_config(tmp_path, world.transport, [0], server=server)
    text = config.read_text()
    if server is not None:
        text = text.replace("max_backoff_s = 2", f"max_backoff_s = 2\nheartbeat_s = {heartbeat_s}")
    if port is not None or textfile is not None:
        text += "\n[metrics]\n"
        text += f'listen = "127.0.0.1:{port}"\n' if port is not None else ""
        text += f'textfile = "{textfile}"\n' if textfile is not None else ""
    config.write_text(text)
    return config


def parse_metrics(text: str) -> dict:
    """{family name: {(sample name, frozenset(labels)): value}} by prometheus_client's parser,
    checking each family's type on the way."""
    families = {}
    for family in text_string_to_metric_families(text):
        families[family.name] = {(s.name, frozenset(s.labels.items())): s.value for s in family.samples}
        if family.name in FAMILIES:
            assert family.type == FAMILIES[family.name], (family.name, family.type)
    missing = set(FAMILIES) - set(families)
    assert not missing, f"families missing: {missing}"
    return families


def value(families: dict, family: str, sample: str | None = None, **labels) -> float:
    return families[family][(sample or family, frozenset(labels.items()))]


def scrape(port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as answer:
        assert answer.status == 200
        assert answer.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
        return parse_metrics(answer.read().decode())


def delivered(server, kind: str) -> int:
    return sum(1 for event in server.snapshot()["events"].values() if event.get("type") == kind)


def status(binary, runtime: pathlib.Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), "status", *args], capture_output=True, text=True, timeout=15,
                          env=dict(os.environ, RUNTIME_DIRECTORY=str(runtime)))


def heartbeats(server) -> list[dict]:
    return server.snapshot()["heartbeats"]


# sentAt and startedAt are whole milliseconds of the wall clock, which NTP may slew by up
# to 0.5 ms a second against the monotonic clock the agent's timers run on.
WALL_CLOCK_SLACK_MS = 2


def timestamp_millis(text: str) -> int:
    """Milliseconds since the epoch of the agent's ISO 8601 UTC timestamps (…T…:…:….mmmZ)."""
    moment = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return round(moment.timestamp() * 1000)


def sent_millis(body: dict) -> int:
    return timestamp_millis(body["sentAt"])


# MARK: - metrics

def test_metrics_parse_and_agree_with_the_server_and_the_outbox(gateway_bin, world_factory, agents, event_server,
                                                                tmp_path):
    world = world_factory(scenario(world_tag(0, distance=1.0)))
    port = free_port()
    textfile = tmp_path / "beacon_gateway.prom"
    config = fleet_config(tmp_path, world, event_server, heartbeat_s=60, port=port, textfile=textfile)
    agent = agents(gateway_bin, config)
    wait_until(lambda: delivered(event_server, "checkin") == 1, 20, "the checkin at the server")
    world.control(f"set-distance {tag_id(0)} off")
    wait_until(lambda: delivered(event_server, "checkout") == 1, 20, "the checkout at the server")

    families = wait_until(lambda: (lambda f: f if value(f, "beacon_gateway_deliveries", "beacon_gateway_deliveries_total",
                                                        result="stored") == 2 else None)(scrape(port)),
                          10, "both deliveries counted")
    assert value(families, "beacon_gateway_build_info", version="0.1.0") == 1
    assert value(families, "beacon_gateway_events", "beacon_gateway_events_total", type="checkin") == 1
    assert value(families, "beacon_gateway_events", "beacon_gateway_events_total", type="checkout") == 1
    assert value(families, "beacon_gateway_events", "beacon_gateway_events_total", type="spoof_suspected") == 0
    assert value(families, "beacon_gateway_deliveries", "beacon_gateway_deliveries_total", result="duplicate") == 0
    assert value(families, "beacon_gateway_deliveries", "beacon_gateway_deliveries_total", result="retry") == 0
    statuses = [entry["status"] for entry in event_server.snapshot()["log"]]
    assert statuses == [201, 201], statuses
    assert value(families, "beacon_gateway_outbox_events", state="pending") == 0
    assert value(families, "beacon_gateway_outbox_events", state="dead") == 0
    assert value(families, "beacon_gateway_outbox_oldest_pending_seconds") == 0
    assert value(families, "beacon_gateway_persons_present") == 0
    assert value(families, "beacon_gateway_delivery_latency_seconds", "beacon_gateway_delivery_latency_seconds_count") == 2
    assert value(families, "beacon_gateway_delivery_latency_seconds", "beacon_gateway_delivery_latency_seconds_bucket",
                 le="+Inf") == 2
    assert value(families, "beacon_gateway_controller_up") == 1
    tag_reports = value(families, "beacon_gateway_reports", "beacon_gateway_reports_total", kind="tag")
    assert tag_reports >= 2, tag_reports
    assert value(families, "process_resident_memory_bytes") > 1_000_000
    assert abs(value(families, "process_start_time_seconds") - time.time()) < 120

    # The textfile: complete (written whole, then renamed) and parseable from the start.
    text = wait_until(lambda: textfile.exists() and textfile.read_text(), 10, "the metrics textfile")
    parse_metrics(text)
    assert not (tmp_path / "beacon_gateway.prom.tmp").exists()
    assert agent.stop() == 0


def test_metrics_answers_only_get_metrics(gateway_bin, world_factory, agents, tmp_path):
    world = world_factory(scenario(world_tag(0, distance=1.0)))
    port = free_port()
    agent = agents(gateway_bin, fleet_config(tmp_path, world, None, port=port))
    agent.wait_log(r"serving metrics")

    def ask(request: bytes) -> bytes:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
            client.sendall(request)
            answer = b""
            while chunk := client.recv(65536):
                answer += chunk
            return answer

    assert ask(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n").startswith(b"HTTP/1.1 200 OK\r\n")
    assert ask(b"POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n").startswith(b"HTTP/1.1 405 ")
    assert ask(b"GET /admin HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 404 ")
    assert ask(b"GARBAGE\r\n\r\n").startswith(b"HTTP/1.1 400 ")
    assert ask(b"GET /metrics HTTP/1.1\r\nX: " + b"a" * 20000 + b"\r\n\r\n").startswith(b"HTTP/1.1 431 ")
    assert agent.stop() == 0


def test_a_client_scraping_in_a_loop_gets_at_most_one_new_body_a_second(gateway_bin, world_factory, agents, tmp_path):
    world = world_factory(scenario(world_tag(0, distance=1.0)))
    port = free_port()
    agent = agents(gateway_bin, fleet_config(tmp_path, world, None, port=port))
    agent.wait_log(r"serving metrics")
    bodies = []
    started = time.monotonic()
    for _ in range(200):
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as answer:
            bodies.append(answer.read())
    elapsed = time.monotonic() - started
    # The tag's reports change the body all the time; a second's requests share one.
    distinct = len(set(bodies))
    assert distinct <= int(elapsed) + 2, (distinct, elapsed)
    assert agent.stop() == 0


def test_sighup_moves_metrics_to_a_new_address(gateway_bin, world_factory, agents, tmp_path):
    """A reload that changes `[metrics] listen` serves on the new address and no longer
    on the old one (the comparison must be with the configuration in force before)."""
    world = world_factory(scenario(world_tag(0, distance=1.0)))
    old_port, new_port = free_port(), free_port()
    config = fleet_config(tmp_path, world, None, port=old_port)
    agent = agents(gateway_bin, config)
    agent.wait_log(r"serving metrics")
    scrape(old_port)
    config.write_text(config.read_text().replace(f"127.0.0.1:{old_port}", f"127.0.0.1:{new_port}"))
    agent.signal(signal.SIGHUP)
    agent.wait_log(r"configuration reloaded")
    agent.wait_log(rf"serving metrics.*127\.0\.0\.1:{new_port}")
    scrape(new_port)
    with pytest.raises(OSError):
        scrape(old_port)
    assert agent.stop() == 0


# MARK: - heartbeat

def test_heartbeats_at_the_interval_with_their_fields_through_a_controller_outage(gateway_bin, world_factory, agents,
                                                                                 event_server, tmp_path):
    world = world_factory(scenario(world_tag(0, distance=1.0)))
    config = fleet_config(tmp_path, world, event_server, heartbeat_s=1)
    agent = agents(gateway_bin, config)
    # The agent's own clocks say when it sent it: the first comes the interval (1 s, being
    # shorter than 2 s) after the start, always within 5 s (docs/fleet.md). The wait is a
    # deadline for the harness, not the contract (a loaded machine starts the binary late).
    first = wait_until(lambda: heartbeats(event_server), 30, "the first heartbeat")[0]
    since_start_ms = sent_millis(first["body"]) - timestamp_millis(first["body"]["startedAt"])
    assert 1000 - WALL_CLOCK_SLACK_MS <= since_start_ms <= 5000, first["body"]
    assert 1 <= first["body"]["uptimeS"] < 5, first["body"]
    assert first["gateway"] == GATEWAY_ID
    headers = first["headers"]
    assert headers["authorization"] == f"Bearer {TOKEN}"
    assert headers["x-device-id"] == GATEWAY_ID
    assert headers["x-app-version"] == "0.1.0"
    assert headers["content-type"].startswith("application/json")
    assert "idempotency-key" not in headers

    def up_and_present(beat):
        body = beat["body"]
        return body["controller"]["state"] == "up" and body["present"] == 1 and body["lastEventAt"] is not None

    beat = wait_until(lambda: next((b for b in heartbeats(event_server) if up_and_present(b)), None), 20,
                      "a heartbeat with the controller up and the person present")["body"]
    assert set(beat) == {"gatewayId", "siteId", "doorId", "version", "startedAt", "sentAt", "uptimeS", "clockSynced",
                         "mode", "controller", "scanning", "present", "reportsPerSecond", "outbox", "roster",
                         "lastEventAt", "sinks"}
    assert (beat["gatewayId"], beat["siteId"], beat["doorId"], beat["version"]) == (GATEWAY_ID, "S_TEST", "run-test", "0.1.0")
    assert beat["mode"] == "active" and beat["scanning"] is True
    assert beat["roster"] == {"source": "file", "revision": None, "persons": 1, "error": None}
    assert beat["controller"]["family"] in ("legacy", "extended")
    assert len(beat["controller"]["address"]) == 17
    assert isinstance(beat["clockSynced"], bool)
    assert beat["reportsPerSecond"] > 0
    assert set(beat["outbox"]) == {"pending", "dead", "oldestPendingS"}
    # Each outbox sink's own figures (docs/fleet.md): the server's, the only sink here.
    assert list(beat["sinks"]) == ["server"]
    assert set(beat["sinks"]["server"]) == {"pending", "dead", "rejected", "oldestPendingS", "lastSuccessAt",
                                            "lastErrorAt", "lastErrorClass", "lastError"}
    assert beat["startedAt"] < beat["sentAt"]

    # At the interval, by the agent's own record (sentAt, uptimeS), not by when the server
    # happened to receive them: each heartbeat is scheduled one interval after the last was
    # sent (docs/fleet.md), so no gap is shorter than the interval, and a gap is longer
    # only by the time the event loop took to run the timer. The median gap must stay
    # below one and a half intervals: halfway to a multiple of it (a heartbeat skipped, or
    # the interval doubled), which a late timer now and then does not reach.
    count = len(heartbeats(event_server))
    wait_until(lambda: len(heartbeats(event_server)) >= count + 4, 20, "four more heartbeats")
    bodies = [b["body"] for b in heartbeats(event_server)]
    sent = [sent_millis(body) for body in bodies]
    gaps = [later - earlier for earlier, later in zip(sent, sent[1:])]
    assert all(gap >= 1000 - WALL_CLOCK_SLACK_MS for gap in gaps), gaps
    uptimes = [body["uptimeS"] for body in bodies]
    assert all(later >= earlier + 1 for earlier, later in zip(uptimes, uptimes[1:])), uptimes
    assert statistics.median(gaps) < 1500, gaps

    # The controller stops: heartbeats go on and say so; then it is back, one reset counted.
    world.control("stop-controller 3")
    down = wait_until(lambda: next((b["body"] for b in heartbeats(event_server)
                                    if b["body"]["controller"]["state"] == "recovering"), None), 10,
                      "a heartbeat with the controller recovering")
    assert down["scanning"] is False
    assert down["controller"]["address"] == beat["controller"]["address"]
    mark = len(heartbeats(event_server))
    back = wait_until(lambda: next((b["body"] for b in heartbeats(event_server)[mark:]
                                    if b["body"]["controller"]["state"] == "up"), None), 25,
                      "a heartbeat with the controller up again")
    assert back["controller"]["resets"] >= 1 and back["scanning"] is True
    assert agent.stop() == 0


def test_heartbeat_failures_are_logged_once_and_never_hold_events_back(gateway_bin, world_factory, agents,
                                                                      event_server, tmp_path):
    world = world_factory(scenario(world_tag(0, distance=1.0)))
    event_server.control(heartbeat_status=503)
    config = fleet_config(tmp_path, world, event_server, heartbeat_s=1)
    # The agent waits for a heartbeat's answer longer than the server holds one below, so
    # the held heartbeat stays in flight until the server lets it go.
    config.write_text(config.read_text().replace("timeout_s = 2", "timeout_s = 120"))
    agent = agents(gateway_bin, config)
    wait_until(lambda: len(heartbeats(event_server)) >= 3, 10, "three refused heartbeats")
    assert len(agent.lines(r"heartbeat failing")) == 1, agent.log()[-2000:]
    wait_until(lambda: delivered(event_server, "checkin") == 1, 20, "the checkin despite the failing heartbeats")
    # Hanging: the server holds every heartbeat unanswered (until released below; the
    # agent skips the ones that fall due meanwhile). The checkout decided while one hangs
    # must reach the server while it still hangs: events never wait for a heartbeat. An
    # order of events on the server, not a time limit a loaded machine could overrun.
    event_server.control(heartbeat_status=None, heartbeat_delay_ms=100_000)
    hanging = wait_until(lambda: event_server.snapshot()["heartbeatsHeld"], 20, "a heartbeat held by the server")
    world.control(f"set-distance {tag_id(0)} off")
    wait_until(lambda: delivered(event_server, "checkout") == 1, 60, "the checkout while a heartbeat hangs")
    snapshot = event_server.snapshot()
    checkout = next(key for key, event in snapshot["events"].items() if event.get("type") == "checkout")
    arrival = next(entry for entry in snapshot["log"] if entry["key"] == checkout)
    assert hanging[0] in arrival["heartbeatsHeld"], (hanging, arrival)
    assert len(agent.lines(r"heartbeat failing")) == 1, "still one line for one failing state"
    event_server.control(heartbeat_delay_ms=0)
    agent.wait_log(r"heartbeat delivered", timeout=10)
    assert agent.stop() == 0


# MARK: - status

def test_status_shows_present_persons_over_a_private_socket(gateway_bin, world_factory, agents, tmp_path):
    world = world_factory(scenario(world_tag(0, distance=1.0)))
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o750)
    agent = agents(gateway_bin, fleet_config(tmp_path, world, None), env={"RUNTIME_DIRECTORY": str(runtime)})
    agent.wait_log(r" checkin ")
    socket_path = runtime / "status.sock"
    assert stat.S_ISSOCK(socket_path.stat().st_mode)
    assert stat.S_IMODE(socket_path.stat().st_mode) == 0o660

    result = status(gateway_bin, runtime, "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["gatewayId"] == GATEWAY_ID and report["mode"] == "active"
    assert report["controller"]["state"] == "up" and report["scanning"] is True
    assert report["present"] == 1
    person = report["persons"][0]
    assert (person["id"], person["state"], person["tag"], person["proven"]) == ("u_01", "PRESENT", tag_id(0), False)
    assert -80 < person["rssi"] < -40
    assert person["since"].endswith("Z")
    assert [(e["type"], e["userId"]) for e in report["lastEvents"]] == [("checkin", "u_01")]
    assert report["outbox"]["pending"] == 1, "no [server]: the event stays pending"
    assert report["roster"]["source"] == "file"

    text = status(gateway_bin, runtime)
    assert text.returncode == 0 and "u_01  PRESENT" in text.stdout, text.stdout

    # Anything but the one request changes nothing and gets a refusal.
    with socket.socket(socket.AF_UNIX) as client:
        client.settimeout(10)
        client.connect(str(socket_path))
        client.sendall(b"stop\n")
        assert client.recv(1000).startswith(b"error: unknown request")
    assert agent.process.poll() is None

    assert agent.stop() == 0
    assert not socket_path.exists()
    gone = status(gateway_bin, runtime, "--json")
    assert gone.returncode == 1 and "no running agent" in gone.stderr, gone


# MARK: - hostile clients

def test_hostile_metrics_clients_stall_neither_delivery_nor_heartbeats(gateway_bin, world_factory, agents,
                                                                       event_server, tmp_path):
    world = world_factory(scenario(world_tag(0, distance=1.0)))
    world.control(f"set-distance {tag_id(0)} off")
    port = free_port()
    agent = agents(gateway_bin, fleet_config(tmp_path, world, event_server, heartbeat_s=1, port=port))
    agent.wait_log(r"serving metrics")
    wait_until(lambda: heartbeats(event_server), 30, "the first heartbeat")

    # A slow loris, one huge request, and then more connections that never send a byte
    # than the agent serves at once (the surplus is closed at once).
    loris = socket.create_connection(("127.0.0.1", port), timeout=10)
    huge = socket.create_connection(("127.0.0.1", port), timeout=10)
    idle = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(30)]
    try:
        attack_started = time.monotonic()
        beats_before = len(heartbeats(event_server))
        huge.sendall(b"GET /metrics HTTP/1.1\r\nX: " + b"a" * 1_000_000)
        assert huge.recv(65536).startswith(b"HTTP/1.1 431 ")
        world.control(f"set-distance {tag_id(0)} 1")
        for _ in range(6):
            loris.sendall(b"G")
            time.sleep(0.5)  # the attacker's pace, not a wait for the agent
        wait_until(lambda: delivered(event_server, "checkin") == 1, 10, "the checkin during the attack")
        assert len(heartbeats(event_server)) >= beats_before + 2, "heartbeats went on during the attack"
        # Every attacking connection is cut off within the time limit (5 s) of its accept.
        for client in [*idle, loris]:
            client.settimeout(max(0.1, attack_started + 10 - time.monotonic()))
            try:
                assert client.recv(65536) == b""
            except ConnectionResetError:
                pass
    finally:
        for client in [*idle, loris, huge]:
            client.close()
    families = wait_until(lambda: scrape(port), 10, "an honest scrape after the attack")
    assert value(families, "beacon_gateway_events", "beacon_gateway_events_total", type="checkin") == 1
    assert agent.process.poll() is None
    assert agent.stop() == 0


# MARK: - a real Prometheus

DASHBOARD = pathlib.Path(__file__).resolve().parents[2] / "docs" / "monitoring" / "dashboard.json"
ALERTS = DASHBOARD.with_name("alerts.yml")


def dashboard_expressions() -> list[tuple[str, str]]:
    """(panel title, PromQL) of every query in the fleet dashboard, its variables given
    the values a site's Grafana would: this job, every door, a rate window of ten scrapes."""
    dashboard = json.loads(DASHBOARD.read_text())
    expressions = []
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            expression = (target["expr"].replace("$job", "beacon-gateway").replace("$instance", ".*")
                          .replace("$__rate_interval", "10s"))
            assert "$" not in expression, f"{panel['title']}: a variable the test does not know: {expression}"
            expressions.append((panel["title"], expression))
    return expressions


def test_a_real_prometheus_scrapes_the_agent(gateway_bin, world_factory, agents, tmp_path):
    """The scrape, and every query of docs/monitoring/dashboard.json and every alert of
    docs/monitoring/alerts.yml evaluated by that Prometheus over the agent's series."""
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.skip("Debian's prometheus package is not installed (apt-get install prometheus)")
    world = world_factory(scenario(world_tag(0, distance=1.0)))
    port = free_port()
    agent = agents(gateway_bin, fleet_config(tmp_path, world, None, port=port))
    agent.wait_log(r" checkin ")
    prometheus_port = free_port()
    (tmp_path / "prometheus.yml").write_text(
        "global:\n  scrape_interval: 1s\n"
        f"scrape_configs:\n  - job_name: beacon-gateway\n    static_configs:\n      - targets: ['127.0.0.1:{port}']\n")
    server = subprocess.Popen([binary, f"--config.file={tmp_path / 'prometheus.yml'}",
                               f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                               f"--web.listen-address=127.0.0.1:{prometheus_port}"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        def evaluate(expression: str) -> dict:
            """Prometheus's whole answer: {"status": "success", "data": …} or the error."""
            url = f"http://127.0.0.1:{prometheus_port}/api/v1/query?query={urllib.request.quote(expression)}"
            try:
                with urllib.request.urlopen(url, timeout=5) as answer:
                    return json.load(answer)
            except urllib.error.HTTPError as error:
                # 503 "Service Unavailable" (plain text) until its storage is ready: not an
                # answer yet, so the wait goes on (HTTPError is an OSError).
                if error.code == 503:
                    raise
                return json.load(error)

        def query(expression: str):
            try:
                answer = evaluate(expression)
            except OSError:
                return None
            return answer["data"]["result"] or None if answer["status"] == "success" else None

        up = wait_until(lambda: query('up{job="beacon-gateway"} == 1'), 30, "Prometheus scraping the agent")
        assert up[0]["metric"]["instance"] == f"127.0.0.1:{port}"
        checkins = wait_until(lambda: query('beacon_gateway_events_total{type="checkin"}'), 15, "the checkin counter")
        assert checkins[0]["value"][1] == "1"
        samples = query('scrape_samples_scraped{job="beacon-gateway"}')
        assert samples and int(samples[0]["value"][1]) > 40, "every family was ingested"

        # Every dashboard query parses and has series to show (rates once two scrapes are
        # in their window); "Doors down" selects failing scrapes, none here.
        for title, expression in dashboard_expressions():
            answer = evaluate(expression)
            assert answer["status"] == "success", f"{title}: {expression}: {answer}"
            if "== 0" not in expression or "or vector(0)" in expression:
                wait_until(lambda: query(expression), 15, f"a result for {title}: {expression}")
        # Every alert's expression evaluates, and a healthy door fires none of them (but
        # the clock's: this machine's synchronisation is not the test's to choose).
        for rule in yaml.safe_load(ALERTS.read_text())["groups"][0]["rules"]:
            answer = evaluate(rule["expr"])
            assert answer["status"] == "success", f"{rule['alert']}: {answer}"
            if rule["alert"] != "BeaconGatewayClockUnsynchronised":
                assert answer["data"]["result"] == [], f"{rule['alert']} fires on a healthy door: {answer}"
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert agent.stop() == 0
