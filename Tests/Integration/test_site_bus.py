"""The site bus (docs/site-bus.md) end to end: the real binary against a real mosquitto on
loopback (broker.py) and the virtual world. A paho-mqtt subscriber watches the door's
topics; every wait is on a message, a log line or an outbox row, with a timeout.

Skipped (with the reason) when the binary is missing: set BEACON_GATEWAY_BIN or build
.build/debug/beacon-gateway."""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess

import pytest

from conftest import MQTT_USERS, wait_until
from test_run import (GATEWAY_ID, agents, event_server, person_id, scenario, world_tag,  # noqa: F401 - fixtures
                      write_config)

SITE = "S_TEST"
PREFIX = "beacon-gateway"
BASE = f"{PREFIX}/{SITE}/{GATEWAY_ID}"
STATUS = f"{BASE}/status"


def presence_topic(index: int) -> str:
    return f"{BASE}/presence/{person_id(index)}"


def discovery_topic(index: int) -> str:
    return f"homeassistant/binary_sensor/{GATEWAY_ID}/{person_id(index)}/config"


def bus_config(tmp_path: pathlib.Path, world, persons: list[int], url: str, *, user: str | None = None,
               ca_file: pathlib.Path | None = None, extra: str = "", **kwargs) -> pathlib.Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    config = write_config(tmp_path, world.transport, persons, **kwargs)
    lines = ["", "[mqtt]", f'url = "{url}"']
    if user is not None:
        password_file = tmp_path / "mqtt-password"
        password_file.write_text(MQTT_USERS[user] + "\n")
        os.chmod(password_file, 0o600)
        lines += [f'username = "{user}"', f'password_file = "{password_file}"']
    if ca_file is not None:
        lines += [f'ca_file = "{ca_file}"']
    config.write_text(config.read_text() + "\n".join(lines) + "\n" + extra)
    return config


def last_json(bus, topic: str) -> dict | None:
    messages = bus.on(topic)
    if not messages or not messages[-1].payload:
        return None
    return json.loads(messages[-1].payload)


def pinned_world(world_factory, count: int):
    """Tags pinned out of range: a test brings each in with set-distance."""
    return world_factory(scenario(*[world_tag(i, path=[[0, None]]) for i in range(count)]))


def test_status_discovery_and_presence_follow_a_visit_and_the_stop_says_offline(gateway_bin, world_factory, agents,
                                                                              mqtt_broker, tmp_path):
    world = world_factory(scenario(world_tag(0, path=[[0, None], [1, None], [1.01, 1.0], [4, 1.0], [4.01, None]]),
                                   world_tag(1, path=[[0, None]])))
    world.control("mute")
    bus = mqtt_broker.subscriber([f"{PREFIX}/#", "homeassistant/#"])
    agent = agents(gateway_bin, bus_config(tmp_path, world, [0, 1], mqtt_broker.url))
    agent.wait_log(r"controller up")
    agent.wait_log(r"site bus up")

    bus.wait_message(STATUS, payload="online", retain=False)
    for index in (0, 1):
        config = json.loads(bus.wait_message(discovery_topic(index)).payload)
        # What Home Assistant reads (its MQTT binary_sensor and device fields).
        assert config["device_class"] == "presence"
        assert config["state_topic"] == presence_topic(index)
        assert config["value_template"] == "{{ value_json.state }}"
        assert config["payload_on"] == "present" and config["payload_off"] == "away"
        assert config["availability_topic"] == STATUS
        assert config["unique_id"] == f"beacon-gateway_{GATEWAY_ID}_{person_id(index)}"
        assert config["name"] == f"Person {index + 1}"
        assert config["device"]["identifiers"] == [GATEWAY_ID]
        assert config["device"]["model"] == "beacon-gateway" and config["device"]["sw_version"]
        away = json.loads(bus.wait_message(presence_topic(index)).payload)
        assert away["state"] == "away" and away["rssi"] is None and away["since"].endswith("Z")

    world.control("restart-script")
    world.control("unmute")
    bus.wait_for(lambda messages: (last_json(bus, presence_topic(0)) or {}).get("state") == "present", 20,
                 "person 0 present")
    present = last_json(bus, presence_topic(0))
    assert -80 < present["rssi"] < -40, present
    bus.wait_for(lambda messages: (last_json(bus, presence_topic(0)) or {}).get("state") == "away", 20,
                 "person 0 away again")
    # Person 1 never came: their presence was published once, away.
    assert [json.loads(m.payload)["state"] for m in bus.on(presence_topic(1))] == ["away"]

    # A new subscriber gets the retained state.
    late = mqtt_broker.subscriber([f"{PREFIX}/#", "homeassistant/#"])
    late.wait_message(STATUS, payload="online", retain=True)
    assert json.loads(late.wait_message(presence_topic(0), retain=True).payload)["state"] == "away"
    late.wait_message(discovery_topic(1), retain=True)

    assert agent.stop() == 0
    bus.wait_message(STATUS, payload="offline")
    assert mqtt_broker.subscriber(STATUS).wait_message(STATUS, retain=True).payload == b"offline"


def test_kill_9_leaves_the_will_offline_and_a_restart_says_online_again(gateway_bin, world_factory, agents,
                                                                      mqtt_broker_factory, tmp_path):
    # The will is sent when the broker notices the door gone: at once for a closed socket.
    broker = mqtt_broker_factory()
    world = pinned_world(world_factory, 1)
    config = bus_config(tmp_path, world, [0], broker.url)
    bus = broker.subscriber(STATUS)
    agent = agents(gateway_bin, config)
    bus.wait_message(STATUS, payload="online")
    agent.process.send_signal(signal.SIGKILL)
    agent.process.wait()
    bus.wait_message(STATUS, payload="offline")
    bus.clear()
    again = agents(gateway_bin, config)
    bus.wait_message(STATUS, payload="online")
    # The broker kept the door's session (clean start off, an hour's expiry).
    assert "session_present=yes" in again.wait_log(r"site bus up")[0]


def test_a_broker_restarted_without_persistence_gets_the_retained_state_again(gateway_bin, world_factory, agents,
                                                                             mqtt_broker, tmp_path):
    world = pinned_world(world_factory, 2)
    agent = agents(gateway_bin, bus_config(tmp_path, world, [0, 1], mqtt_broker.url))
    agent.wait_log(r"site bus up")
    first = mqtt_broker.subscriber([f"{PREFIX}/#", "homeassistant/#"])
    first.wait_for(lambda m: all(first.on(t) for t in (STATUS, presence_topic(1), discovery_topic(1))), 10,
                   "the retained state")

    mqtt_broker.stop()
    agent.wait_log(r"site bus down")
    mqtt_broker.start()
    agent.wait_log(r"site bus up", count=2, timeout=30)
    # Nothing survived in the broker: the door publishes its retained state again. A
    # subscriber already listening may get those publications live, and the broker clears
    # the retain flag on a live delivery; one that subscribes after them gets them retained.
    topics = (STATUS, presence_topic(0), presence_topic(1), discovery_topic(0), discovery_topic(1))
    listening = mqtt_broker.subscriber([f"{PREFIX}/#", "homeassistant/#"])
    listening.wait_for(lambda m: all(listening.on(t) for t in topics), 10, "every retained topic published again")
    again = mqtt_broker.subscriber([f"{PREFIX}/#", "homeassistant/#"])
    again.wait_for(lambda m: all(any(x.retain for x in again.on(t)) for t in topics), 10, "every retained topic back")
    # The loss was logged once per fault, not per retry: the session ended, and, if the
    # first retry came before the broker listened again, the broker unreachable.
    kinds = [line.split("kind=")[1].split()[0] for line in agent.lines(r"site bus down")]
    assert kinds in (["lost"], ["lost", "unreachable"]), agent.lines(r"site bus")


def test_home_assistant_restarting_gets_discovery_and_presence_again(gateway_bin, world_factory, agents,
                                                                     mqtt_broker, tmp_path):
    world = pinned_world(world_factory, 1)
    agent = agents(gateway_bin, bus_config(tmp_path, world, [0], mqtt_broker.url))
    agent.wait_log(r"site bus up")
    bus = mqtt_broker.subscriber([f"{PREFIX}/#", "homeassistant/binary_sensor/#"])
    bus.wait_message(discovery_topic(0))
    bus.clear()
    mqtt_broker.publish("homeassistant/status", "online")
    bus.wait_message(discovery_topic(0))
    bus.wait_message(presence_topic(0))
    # A flood of births republishes at most once per 5 s.
    bus.clear()
    for _ in range(20):
        mqtt_broker.publish("homeassistant/status", "online")
    bus.wait_message(discovery_topic(0))
    births = len(bus.on(discovery_topic(0)))
    assert births <= 2, births


def test_a_person_removed_by_sighup_has_their_retained_topics_cleared(gateway_bin, world_factory, agents,
                                                                       mqtt_broker, tmp_path):
    world = pinned_world(world_factory, 2)
    config = bus_config(tmp_path, world, [0, 1], mqtt_broker.url)
    agent = agents(gateway_bin, config)
    agent.wait_log(r"site bus up")
    bus = mqtt_broker.subscriber([f"{PREFIX}/#", "homeassistant/#"])
    bus.wait_message(discovery_topic(1))
    config.write_text(bus_config(tmp_path, world, [0], mqtt_broker.url).read_text())
    agent.signal(signal.SIGHUP)
    bus.wait_message(discovery_topic(1), payload=b"")
    bus.wait_message(presence_topic(1), payload=b"")
    later = mqtt_broker.subscriber([f"{PREFIX}/#", "homeassistant/#"])
    later.wait_message(discovery_topic(0), retain=True)
    assert later.on(discovery_topic(1)) == [] and later.on(presence_topic(1)) == []


def test_tls_with_a_password_connects_and_a_wrong_ca_or_password_is_named(gateway_bin, world_factory, agents,
                                                                         mqtt_tls_broker, tmp_path):
    # OpenSSL's handshake under qemu-user takes 10-20 s on two busy cores (scripts/test-arm64).
    tls_wait = float(os.environ.get("BEACON_GATEWAY_TEST_TLS_TIMEOUT_S", "20"))
    world = pinned_world(world_factory, 1)
    good = agents(gateway_bin, bus_config(tmp_path / "good", world, [0], mqtt_tls_broker.tls_url, user="door-test",
                                          ca_file=mqtt_tls_broker.ca_file))
    good.wait_log(r"site bus up", timeout=tls_wait)
    bus = mqtt_tls_broker.subscriber(STATUS, tls=True)
    bus.wait_message(STATUS, payload="online")
    assert MQTT_USERS["door-test"] not in good.log()
    assert good.stop() == 0

    wrong_ca = agents(gateway_bin, bus_config(tmp_path / "ca", world, [0], mqtt_tls_broker.tls_url, user="door-test",
                                              ca_file=mqtt_tls_broker.wrong_ca_file))
    line = wrong_ca.wait_log(r"site bus down", timeout=tls_wait)[0]
    assert "TLS handshake failed" in line and "certificate" in line, line
    # The door goes on deciding: the controller came up and it scans.
    wrong_ca.wait_log(r"controller up")
    assert wrong_ca.stop() == 0

    wrong_password = bus_config(tmp_path / "password", world, [0], mqtt_tls_broker.tls_url, user="door-test",
                                ca_file=mqtt_tls_broker.ca_file)
    (tmp_path / "password" / "mqtt-password").write_text("not-the-password\n")
    refused = agents(gateway_bin, wrong_password)
    line = refused.wait_log(r"site bus down", timeout=tls_wait)[0]
    assert "user name or password" in line, line
    assert refused.stop() == 0


def test_the_heartbeat_metrics_and_status_show_the_bus_up_and_down(gateway_bin, world_factory, agents, event_server,
                                                                   mqtt_broker, tmp_path):
    from test_fleet import free_port, heartbeats, scrape, status, value
    world = pinned_world(world_factory, 1)
    port = free_port()
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o750)
    config = bus_config(tmp_path, world, [0], mqtt_broker.url, server=event_server,
                        extra=f'\n[metrics]\nlisten = "127.0.0.1:{port}"\n')
    config.write_text(config.read_text().replace("max_backoff_s = 2", "max_backoff_s = 2\nheartbeat_s = 1"))
    agent = agents(gateway_bin, config, env={"RUNTIME_DIRECTORY": str(runtime)})
    agent.wait_log(r"site bus up")
    # The event server validates every heartbeat against docs/api/openapi.yaml.
    wait_until(lambda: any(b["body"].get("site") == {"bus": "up", "neighbours": 0, "heard": 0}
                           for b in heartbeats(event_server)), 20, "a heartbeat with the bus up")
    families = wait_until(lambda: (lambda f: f if value(f, "beacon_gateway_bus_up") == 1 else None)(scrape(port)), 10,
                          "bus_up 1")
    assert value(families, "beacon_gateway_bus_published", "beacon_gateway_bus_published_total",
                 topic_kind="discovery", result="accepted") >= 1
    report = json.loads(status(gateway_bin, runtime, "--json").stdout)
    assert report["bus"]["state"] == "up" and report["bus"]["error"] is None
    assert "site bus    up" in status(gateway_bin, runtime).stdout

    mqtt_broker.stop()
    agent.wait_log(r"site bus down")
    count = len(heartbeats(event_server))
    wait_until(lambda: any(b["body"].get("site", {}).get("bus") == "down" for b in heartbeats(event_server)[count:]), 20,
               "a heartbeat with the bus down")
    # /metrics serves one body for a second (docs/fleet.md): the next one says it.
    wait_until(lambda: value(scrape(port), "beacon_gateway_bus_up") == 0, 10, "bus_up 0")
    report = json.loads(status(gateway_bin, runtime, "--json").stdout)
    # The fault in force: the session's end, or the first retry's refused connection.
    assert report["bus"]["state"] == "down", report["bus"]
    assert any(text in report["bus"]["error"] for text in ("the session with the broker ended", "cannot reach the broker")), \
        report["bus"]
    snapshot = event_server.snapshot()
    assert snapshot["schemaProblems"] == [], snapshot["schemaProblems"]



def test_what_the_broker_side_floods_the_door_with_is_refused_counted_and_bounded(gateway_bin, world_factory, agents,
                                                                                  mqtt_broker, tmp_path):
    from test_fleet import free_port, scrape, value
    world = world_factory(scenario(world_tag(0, path=[[0, None], [1, None], [1.01, 1.0], [60, 1.0]])))
    world.control("mute")
    port = free_port()
    agent = agents(gateway_bin, bus_config(tmp_path, world, [0], mqtt_broker.url,
                                           extra=f'\n[metrics]\nlisten = "127.0.0.1:{port}"\n'))
    agent.wait_log(r"site bus up")
    bus = mqtt_broker.subscriber([f"{PREFIX}/#"])
    bus.wait_message(presence_topic(0))
    # Home Assistant's status topic is the only one the door reads: 2 KiB there is refused
    # (counted, logged once), 100 KiB never reaches it (MQTT 5's maximum packet size: the
    # broker drops it for this client).
    for _ in range(3):
        mqtt_broker.publish("homeassistant/status", "x" * 2048)
    mqtt_broker.publish("homeassistant/status", "y" * 100_000)
    mqtt_broker.publish("homeassistant/status", "z" * 2048)

    def oversized() -> float:
        return value(scrape(port), "beacon_gateway_bus_refused", "beacon_gateway_bus_refused_total", reason="oversized")

    # In order: the 100 KiB one, had it come, would be counted before the last 2 KiB one.
    wait_until(lambda: oversized() >= 4, 10, "four oversized messages counted")
    assert len(agent.lines(r"site bus: refused .*reason=oversized")) == 1, agent.lines("site bus")
    # A retained flood on the discovery prefix (another integration's entities) never reaches
    # the door: it does not subscribe there.
    for index in range(200):
        mqtt_broker.publish(f"homeassistant/binary_sensor/other/e{index}/config", "{}", retain=True)
    assert value(scrape(port), "beacon_gateway_bus_refused", "beacon_gateway_bus_refused_total",
                 reason="unexpected_topic") == 0
    # The door went on deciding and publishing.
    world.control("restart-script")
    world.control("unmute")
    bus.wait_for(lambda messages: (last_json(bus, presence_topic(0)) or {}).get("state") == "present", 20,
                 "person 0 present after the flood")
    assert agent.process.poll() is None
    assert oversized() == 4, "the 100 KiB message reached the door"


# MARK: - events from the outbox (the sink `mqtt`)

EVENTS = f"{BASE}/events"


def walkers(count: int, start: float = 1.0, gap: float = 1.5, stay: float = 2.5) -> list[dict]:
    """Person i arrives at start + gap·i s, stays `stay` s at 1 m, and goes."""
    return [world_tag(i, path=[[0, None], [start + gap * i, None], [start + gap * i + 0.01, 1.0],
                               [start + gap * i + stay, 1.0], [start + gap * i + stay + 0.01, None]])
            for i in range(count)]


def bus_keys(subscriber) -> list[str]:
    """The events' idempotency keys in the order the bus delivered them (repeats kept)."""
    return [json.loads(message.payload)["idempotencyKey"] for message in subscriber.on(EVENTS)]


def first_occurrences(keys: list[str]) -> list[str]:
    seen: dict[str, None] = {}
    for key in keys:
        seen.setdefault(key, None)
    return list(seen)


def test_every_event_reaches_the_bus_in_sequence_order_with_its_key_and_body(gateway_bin, world_factory, agents,
                                                                              mqtt_broker, tmp_path):
    from test_run import count, outbox, wait_rows
    world = world_factory(scenario(*walkers(3)))
    world.control("mute")
    bus = mqtt_broker.subscriber(EVENTS)
    config = bus_config(tmp_path, world, [0, 1, 2], mqtt_broker.url)
    agent = agents(gateway_bin, config)
    agent.wait_log(r"controller up")
    world.control("restart-script")
    world.control("unmute")
    rows = wait_rows(gateway_bin, config, lambda rows: count(rows, "checkout") >= 3, 40, "three checkouts", agent)
    keys = [row["idempotencyKey"] for row in rows]
    bus.wait_for(lambda messages: set(bus_keys(bus)) >= set(keys), 20, "every event on the bus")
    assert first_occurrences(bus_keys(bus)) == keys
    # Each as the server would get it: §7's body, key included.
    bodies = {json.loads(m.payload)["idempotencyKey"]: json.loads(m.payload) for m in bus.on(EVENTS)}
    for row in rows:
        assert bodies[row["idempotencyKey"]] == row["event"]
    assert all(not m.retain and m.qos == 1 for m in bus.on(EVENTS))
    assert agent.stop() == 0
    # Nothing is left pending for the bus.
    assert all(row["idempotencyKey"] in bodies for row in outbox(gateway_bin, config))


@pytest.mark.parametrize("persistence", [False, True], ids=["persistence-off", "persistence-on"])
def test_events_decided_while_the_broker_is_down_are_published_in_order_after_it_returns(
        gateway_bin, world_factory, agents, mqtt_broker_factory, tmp_path, persistence):
    from test_run import count, wait_rows
    broker = mqtt_broker_factory(persistence=persistence)
    world = world_factory(scenario(*walkers(4, start=1.0, gap=2.0)))
    world.control("mute")
    config = bus_config(tmp_path, world, [0, 1, 2, 3], broker.url)
    bus = broker.subscriber(EVENTS)
    agent = agents(gateway_bin, config)
    agent.wait_log(r"site bus up")
    agent.wait_log(r"controller up")
    world.control("restart-script")
    world.control("unmute")
    first = wait_rows(gateway_bin, config, lambda rows: count(rows, "checkin") >= 1, 30, "the first checkin", agent)
    bus.wait_for(lambda m: first[0]["idempotencyKey"] in bus_keys(bus), 10, "the first event on the bus")

    broker.stop()
    agent.wait_log(r"site bus down")
    # The rest of the visits are decided with the broker away; the door goes on.
    rows = wait_rows(gateway_bin, config, lambda rows: count(rows, "checkout") >= 4, 60, "four checkouts", agent)
    keys = [row["idempotencyKey"] for row in rows]
    # The agent is held (SIGSTOP) while the broker comes back and a new subscriber is on,
    # so what it publishes at its reconnection has someone to reach: an order, not a wait.
    agent.signal(signal.SIGSTOP)
    try:
        broker.start()
        again = broker.subscriber(EVENTS)
    finally:
        agent.signal(signal.SIGCONT)
    agent.wait_log(r"site bus up", count=2, timeout=90)
    # Every event reaches the bus: before the stop (the first checkin at least, and any the
    # broker acknowledged before it went) or after the return.
    before = set(bus_keys(bus))
    again.wait_for(lambda messages: before | set(bus_keys(again)) >= set(keys), 30, "every later event after the return")
    # In sequence order after the restart: the events the broker had not acknowledged go
    # again from the first of them, and nothing is re-keyed.
    delivered_after = first_occurrences(bus_keys(again))
    assert delivered_after == [key for key in keys if key in delivered_after], (delivered_after, keys)
    assert set(delivered_after) <= set(keys)


def test_kill_9_with_events_unpublished_loses_none_and_rekeys_none(gateway_bin, world_factory, agents,
                                                                    mqtt_broker, tmp_path):
    from test_run import count, wait_rows
    world = world_factory(scenario(*walkers(2)))
    world.control("mute")
    config = bus_config(tmp_path, world, [0, 1], mqtt_broker.url)
    agent = agents(gateway_bin, config)
    agent.wait_log(r"site bus up")
    agent.wait_log(r"controller up")
    mqtt_broker.stop()
    agent.wait_log(r"site bus down")
    world.control("restart-script")
    world.control("unmute")
    rows = wait_rows(gateway_bin, config, lambda rows: count(rows, "checkout") >= 2, 40, "two checkouts", agent)
    keys = [row["idempotencyKey"] for row in rows]
    agent.process.send_signal(signal.SIGKILL)
    agent.process.wait()
    mqtt_broker.start()
    bus = mqtt_broker.subscriber(EVENTS)
    agents(gateway_bin, config)
    bus.wait_for(lambda messages: set(bus_keys(bus)) >= set(keys), 30, "every event after the restart")
    assert first_occurrences(bus_keys(bus)) == keys


def test_one_sink_down_never_holds_the_other_back(gateway_bin, world_factory, agents, event_server, mqtt_broker,
                                                  tmp_path):
    from test_run import count, wait_rows
    world = world_factory(scenario(*walkers(2, start=1.0, gap=6.0)))
    world.control("mute")
    config = bus_config(tmp_path, world, [0, 1], mqtt_broker.url, server=event_server)
    bus = mqtt_broker.subscriber(EVENTS)
    agent = agents(gateway_bin, config)
    agent.wait_log(r"site bus up")
    agent.wait_log(r"controller up")
    # The server refuses everything for now: the bus gets person 0's visit all the same.
    event_server.control(fail_status=503)
    world.control("restart-script")
    world.control("unmute")
    rows = wait_rows(gateway_bin, config, lambda rows: count(rows, "checkout", person_id(0)) >= 1, 40,
                     "person 0's checkout", agent)
    first_visit = [row["idempotencyKey"] for row in rows]
    bus.wait_for(lambda m: set(bus_keys(bus)) >= set(first_visit), 20, "person 0's visit on the bus")
    assert not event_server.snapshot()["events"], "the server refused them"
    # Now the broker goes and the server comes back: person 1's visit reaches the server,
    # and person 0's too, while the bus is down.
    mqtt_broker.stop()
    agent.wait_log(r"site bus down")
    event_server.control(fail_status=None)
    rows = wait_rows(gateway_bin, config, lambda rows: count(rows, "checkout") >= 2, 40, "two checkouts", agent)
    wait_until(lambda: set(event_server.snapshot()["events"]) == {row["idempotencyKey"] for row in rows}, 30,
               "every event at the server while the broker is away")


def test_events_the_broker_refuses_are_counted_kept_and_published_once_it_allows_them(gateway_bin, world_factory,
                                                                                       agents, mqtt_broker_factory,
                                                                                       tmp_path):
    from test_fleet import free_port, scrape, value
    from test_run import count, wait_rows
    acl = tmp_path / "acl"
    # The door may publish its status, presence and discovery, not its events (an ACL
    # mistake on the site's broker): MQTT 5 answers each such PUBLISH with PUBACK 0x87.
    rules = ["topic read #", "topic write beacon-gateway/+/+/status", "topic write beacon-gateway/+/+/presence/#",
             "topic readwrite homeassistant/#"]
    acl.write_text("\n".join(rules) + "\n")
    broker = mqtt_broker_factory(extra_config=f"acl_file {acl}\n")
    world = world_factory(scenario(*walkers(1)))
    world.control("mute")
    port = free_port()
    config = bus_config(tmp_path, world, [0], broker.url, extra=f'\n[metrics]\nlisten = "127.0.0.1:{port}"\n')
    bus = broker.subscriber([EVENTS, f"{BASE}/presence/#"])
    agent = agents(gateway_bin, config)
    agent.wait_log(r"site bus up")
    agent.wait_log(r"controller up")
    world.control("restart-script")
    world.control("unmute")
    rows = wait_rows(gateway_bin, config, lambda rows: count(rows, "checkout") >= 1, 40, "the visit", agent)

    def refused() -> float:
        return value(scrape(port), "beacon_gateway_bus_published", "beacon_gateway_bus_published_total",
                     topic_kind="events", result="refused")

    wait_until(lambda: refused() >= 2, 30, "the refused events counted")
    assert bus.on(EVENTS) == []
    # Presence went on: it is allowed.
    bus.wait_for(lambda m: (last_json(bus, presence_topic(0)) or {}).get("state") == "away", 10, "presence away")
    assert len(agent.lines(r"site bus: refused .*reason=publish_refused")) == 1, agent.lines("site bus")
    # The site fixes its ACL (mosquitto reads it again at SIGHUP): the events kept in the
    # outbox go out, in order, at the next try.
    acl.write_text("\n".join(rules + ["topic write beacon-gateway/+/+/events"]) + "\n")
    broker.process.send_signal(signal.SIGHUP)
    keys = [row["idempotencyKey"] for row in rows]
    bus.wait_for(lambda m: set(bus_keys(bus)) >= set(keys), 90, "the events once allowed")
    assert first_occurrences(bus_keys(bus)) == keys


def test_events_larger_than_the_broker_takes_are_the_bus_s_dead_letters_and_nothing_else_waits(
        gateway_bin, world_factory, agents, mqtt_broker_factory, event_server, tmp_path):
    from test_fleet import free_port, scrape, value
    from test_run import count, wait_rows
    # The broker takes packets of at most 400 bytes (its CONNACK says so): an event is
    # larger, status and presence are not.
    broker = mqtt_broker_factory(extra_config="max_packet_size 400\n")
    world = world_factory(scenario(*walkers(2)))
    world.control("mute")
    port = free_port()
    config = bus_config(tmp_path, world, [0, 1], broker.url, server=event_server,
                        extra=f'\n[metrics]\nlisten = "127.0.0.1:{port}"\n')
    config.write_text(config.read_text().replace("[mqtt]\n", "[mqtt]\nhomeassistant = false\n"))
    bus = broker.subscriber([f"{BASE}/#"])
    agent = agents(gateway_bin, config)
    agent.wait_log(r"site bus up")
    agent.wait_log(r"controller up")
    world.control("restart-script")
    world.control("unmute")
    rows = wait_rows(gateway_bin, config, lambda rows: count(rows, "checkout") >= 2, 40, "two checkouts", agent)
    keys = {row["idempotencyKey"] for row in rows}
    # The server has every event: the bus's trouble holds nothing back.
    wait_until(lambda: set(event_server.snapshot()["events"]) == keys, 30, "every event at the server")
    # Each event is a dead letter of the bus, kept for `outbox retry-dead`; none waits.
    def bus_dead() -> set:
        result = subprocess.run([str(gateway_bin), "outbox", "export", "--config", str(config), "--sink", "mqtt",
                                 "--state", "dead"], capture_output=True, text=True, timeout=30)
        assert result.returncode == 0, result.stderr
        return {json.loads(line)["idempotencyKey"] for line in result.stdout.splitlines() if line.strip()}
    wait_until(lambda: bus_dead() == keys, 20, "every event a dead letter of the bus")
    assert value(scrape(port), "beacon_gateway_bus_refused", "beacon_gateway_bus_refused_total", reason="too_large") == 4
    assert len(agent.lines(r"site bus: refused .*reason=too_large")) == 1, agent.lines(r"site bus")
    bus.wait_for(lambda m: (last_json(bus, presence_topic(1)) or {}).get("state") == "away", 30, "presence published")
    assert bus.on(EVENTS) == [] and len(agent.lines(r"site bus (up|down)")) == 1


# MARK: - neighbouring doors' sightings (SPEC §17) on the bus

def test_a_door_with_neighbours_publishes_its_sightings_and_checks_those_it_reads(gateway_bin, world_factory, agents,
                                                                                    mqtt_broker, tmp_path):
    world = world_factory(scenario(world_tag(0, distance=1.0)))
    key = tmp_path / "master.key"
    key.write_text("5a" * 32 + "\n")
    os.chmod(key, 0o600)
    config = bus_config(tmp_path, world, [0], mqtt_broker.url,
                        extra=f'\n[security]\nmaster_key_file = "{key}"\n\n[site]\nneighbours = ["door-b"]\n')
    own = f"{PREFIX}/{SITE}/sightings/{GATEWAY_ID}"
    bus = mqtt_broker.subscriber(f"{PREFIX}/{SITE}/sightings/#", qos=0)
    agent = agents(gateway_bin, config)
    agent.wait_log(r"site bus up")
    # About once a second, signed reports in the documented format (docs/neighbours.md).
    bus.wait_for(lambda messages: len(bus.on(own)) >= 3, 15, "three sighting reports")
    assert all(m.payload.startswith(b"BGS") and not m.retain and m.qos == 0 for m in bus.on(own))
    # A report that is not a neighbour's signed one is refused (logged once, counted).
    mqtt_broker.publish(f"{PREFIX}/{SITE}/sightings/door-b", "BGS not a report", qos=0)
    line = agent.wait_log(r"sighting refused")[0]
    assert "reason=" in line, line
    # door-b never reports: after 10 s the door decides alone for it, and says so.
    agent.wait_log(r"neighbour silent", timeout=30)
    agent.wait_log(r" checkin ", timeout=30)
