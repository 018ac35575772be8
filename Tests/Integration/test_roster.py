"""The roster from the server and its pause switch (see docs/fleet.md), with the real
binary against the Bumble world and the loopback event server serving the roster
(ETag = a hash of the document, 304 on If-None-Match, scripted faults). Every wait polls
the server's record, the outbox, a log line or the status socket with a timeout.

Skipped (with the reason) when the binary is missing: set BEACON_GATEWAY_BIN or build
.build/debug/beacon-gateway."""

from __future__ import annotations

import json
import os
import pathlib
import re
import signal
import socket
import stat
import time

import pytest

from conftest import wait_until
from test_fleet import free_port, heartbeats, scrape, status, value
from test_run import (CHECKIN_LINE, GATEWAY_ID, NotifySocket, agents, event_server, ibeacon, outbox,  # noqa: F401
                      person_id, scenario, tag_id, world_tag, write_config)


def roster_person(index: int, **fields) -> dict:
    return {"id": person_id(index), "name": f"Server person {index + 1}",
            "tags": [{"id": tag_id(index), "ibeacon": ibeacon(index)}], **fields}


def roster(revision: str, *persons: dict, mode: str | None = None) -> dict:
    document = {"revision": revision, "persons": list(persons)}
    if mode is not None:
        document["mode"] = mode
    return document


def roster_config(tmp_path: pathlib.Path, world, server, file_persons: list[int], *, url: str | None = None,
                  port: int | None = None, heartbeat_s: float = 1) -> pathlib.Path:
    config = write_config(tmp_path, world.transport, file_persons, server=server)
    text = config.read_text().replace(
        "max_backoff_s = 2", f"max_backoff_s = 2\nheartbeat_s = {heartbeat_s}\nroster = true\nroster_poll_s = 1")
    if url is not None:
        text = text.replace(f'url = "{server.url}"', f'url = "{url}"')
    if port is not None:
        text += f'\n[metrics]\nlisten = "127.0.0.1:{port}"\n'
    config.write_text(text)
    return config


def delivered(server, kind: str, person: str) -> int:
    return sum(1 for event in server.snapshot()["events"].values()
               if event.get("type") == kind and event.get("userId") == person)


def roster_requests(server) -> list[dict]:
    return server.snapshot()["rosterRequests"]


def last_beat(server, predicate, timeout: float, what: str) -> dict:
    """The first heartbeat body (from the newest back) that satisfies predicate."""
    return wait_until(lambda: next((beat["body"] for beat in reversed(heartbeats(server)) if predicate(beat["body"])), None),
                      timeout, what)


def test_persons_added_to_the_server_roster_are_checked_in_and_removed_ones_checked_out_without_a_restart(
        gateway_bin, world_factory, agents, event_server, tmp_path):
    # u_01 is in the file, u_02 only ever in the server's roster; both tags are at the door.
    world = world_factory(scenario(world_tag(0, distance=1.0), world_tag(1, distance=1.0)))
    event_server.control(roster=roster("r-1"))
    agent = agents(gateway_bin, roster_config(tmp_path, world, event_server, [0]))
    wait_until(lambda: delivered(event_server, "checkin", "u_01") == 1, 20, "the file person's checkin")
    agent.wait_log(r"server roster in force .*revision=r-1")
    first = roster_requests(event_server)[0]
    assert first["gateway"] == GATEWAY_ID
    assert first["headers"]["authorization"].startswith("Bearer ")
    assert first["headers"]["x-device-id"] == GATEWAY_ID
    assert "if-none-match" not in first["headers"], "nothing persisted yet: no ETag to send"
    # The next polls name the ETag and are answered 304.
    wait_until(lambda: any(r["status"] == 304 for r in roster_requests(event_server)), 10, "a 304 to If-None-Match")
    assert delivered(event_server, "checkin", "u_02") == 0, "not on any roster: never checked in"

    event_server.control(roster=roster("r-2", roster_person(1)))
    wait_until(lambda: delivered(event_server, "checkin", "u_02") == 1, 20, "u_02 checked in once the roster has them")
    beat = last_beat(event_server, lambda b: b["roster"]["revision"] == "r-2", 10, "a heartbeat with r-2")
    assert beat["roster"] == {"source": "server", "revision": "r-2", "persons": 1, "error": None}
    assert agent.process.poll() is None and len(agent.lines(r"^.*starting")) == 1, "no restart"

    # Removed from the server's roster while present: checked out at once (not by the leave debounce).
    event_server.control(roster=roster("r-3"))
    wait_until(lambda: delivered(event_server, "checkout", "u_02") == 1, 10, "u_02 checked out by the roster")
    assert delivered(event_server, "checkout", "u_01") == 0, "the file person stays"
    beat = last_beat(event_server, lambda b: b["roster"]["revision"] == "r-3", 10, "a heartbeat with r-3")
    assert beat["present"] == 1
    # Every roster (200 and 304), heartbeat and event request and answer as docs/api/openapi.yaml says.
    assert event_server.snapshot()["schemaProblems"] == []
    assert agent.stop() == 0


def test_an_invalid_roster_is_refused_the_old_one_keeps_working_and_the_heartbeat_names_the_error(
        gateway_bin, world_factory, agents, event_server, tmp_path):
    world = world_factory(scenario(world_tag(0, distance=1.0), world_tag(1, path=[[0, None]])))
    event_server.control(roster=roster("r-1", roster_person(1)))
    port = free_port()
    agent = agents(gateway_bin, roster_config(tmp_path, world, event_server, [0], port=port))
    agent.wait_log(r"server roster in force .*revision=r-1")

    bad = roster_person(1)
    bad["tags"][0]["ibeacon"] = "not-a-beacon"
    event_server.control(roster=roster("r-2", bad))
    refused = agent.wait_log(r"server roster refused")
    assert "r-2: persons[0].tags[0].ibeacon: must be" in refused[0], refused
    beat = last_beat(event_server, lambda b: b["roster"]["error"] is not None, 10, "a heartbeat with the error")
    assert beat["roster"]["revision"] == "r-1" and beat["roster"]["source"] == "server"
    assert beat["roster"]["error"].startswith("r-2: persons[0].tags[0].ibeacon: must be"), beat["roster"]
    # The old roster still works: u_02 arrives and is checked in.
    world.control(f"set-distance {tag_id(1)} 1")
    wait_until(lambda: delivered(event_server, "checkin", "u_02") == 1, 20, "u_02 checked in under r-1")
    # Polled again (304 to the invalid roster's ETag): reported in every heartbeat, logged once.
    mark = len(heartbeats(event_server))
    wait_until(lambda: len(heartbeats(event_server)) >= mark + 2, 10, "two more heartbeats")
    assert all(b["body"]["roster"]["error"] for b in heartbeats(event_server)[mark:])
    assert len(agent.lines(r"server roster refused")) == 1

    # An id both in the file and on the server makes the roster invalid too.
    event_server.control(roster=roster("r-3", roster_person(0)))
    agent.wait_log(r"r-3: persons\[0\]\.id: duplicate person id .*u_01.* of the configuration file")
    families = scrape(port)
    assert value(families, "beacon_gateway_roster_fetches", "beacon_gateway_roster_fetches_total", result="refused") == 2

    # A valid one ends the error.
    event_server.control(roster=roster("r-4", roster_person(1)))
    beat = last_beat(event_server, lambda b: b["roster"]["revision"] == "r-4", 10, "a heartbeat with r-4")
    assert beat["roster"]["error"] is None
    assert delivered(event_server, "checkout", "u_02") == 0, "kept across the valid rosters: still present"
    assert agent.stop() == 0


def test_roster_fetch_failures_are_logged_once_retried_and_never_hold_events_back(
        gateway_bin, world_factory, agents, event_server, tmp_path):
    world = world_factory(scenario(world_tag(0, path=[[0, None]])))
    event_server.control(roster=roster("r-1"), roster_status=503)
    agent = agents(gateway_bin, roster_config(tmp_path, world, event_server, [0]))
    agent.wait_log(r"roster fetch failing .*HTTP 503")
    wait_until(lambda: len(roster_requests(event_server)) >= 3, 10, "retried at each poll")
    # Slow: 3 s per answer, beyond timeout_s = 2; an arrival's checkin still goes out at once.
    event_server.control(roster_status=None, roster_delay_ms=3000)
    world.control(f"set-distance {tag_id(0)} 1")
    agent.wait_log(CHECKIN_LINE)
    wait_until(lambda: delivered(event_server, "checkin", "u_01") == 1, 3, "the checkin while the roster hangs")
    assert len(agent.lines(r"roster fetch failing")) == 1, "one line for one failing state"
    event_server.control(roster_delay_ms=0)
    agent.wait_log(r"roster fetch works again", timeout=10)
    agent.wait_log(r"server roster in force .*revision=r-1")
    assert agent.stop() == 0


def test_a_restart_with_the_server_down_starts_with_the_last_good_roster(gateway_bin, world_factory, agents,
                                                                         event_server, tmp_path):
    world = world_factory(scenario(world_tag(1, distance=1.0)))
    event_server.control(roster=roster("r-7", roster_person(1)))
    config = roster_config(tmp_path, world, event_server, [0], heartbeat_s=30)
    started = time.monotonic()
    agent = agents(gateway_bin, config)
    # Putting the first roster in force does not push the first heartbeat back.
    assert wait_until(lambda: heartbeats(event_server), 5, "the first heartbeat")[0]["t"] - started <= 5
    wait_until(lambda: delivered(event_server, "checkin", "u_02") == 1, 20, "u_02's checkin under the server roster")
    kept = tmp_path / "state" / "roster.json"
    wait_until(kept.exists, 10, "the roster kept in state_dir")
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert b'"r-7"' in kept.read_bytes()
    assert not (tmp_path / "state" / "roster.json.tmp").exists()
    assert agent.stop() == 0

    # Nothing listens at the server's address now: the roster from disk is in force at once.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    config = roster_config(tmp_path, world, event_server, [0], url=dead)
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o750)
    again = agents(gateway_bin, config, env={"RUNTIME_DIRECTORY": str(runtime)})
    again.wait_log(r"server roster in force .*revision=r-7.*from=disk")
    again.wait_log(r"roster fetch failing")
    report = wait_until(lambda: (lambda r: r if r["scanning"] else None)(json.loads(status(gateway_bin, runtime, "--json").stdout)),
                        20, "the restarted agent scanning")
    assert report["roster"] == {"source": "server", "revision": "r-7", "persons": 1, "error": None}
    # u_02 was present at the stop: still known, so the visit goes on (no checkout, no second checkin).
    rows = outbox(gateway_bin, config)
    assert [(row["type"], row["personId"]) for row in rows] == [("checkin", "u_02")], rows
    assert not again.lines(r"persisted presence ignored")
    assert again.stop() == 0


def test_paused_is_shown_in_the_heartbeat_status_metrics_and_status_line_and_resumed(
        gateway_bin, world_factory, agents, event_server, tmp_path):
    world = world_factory(scenario(world_tag(0, path=[[0, None]])))
    event_server.control(roster=roster("r-1", mode="paused"))
    port = free_port()
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o750)
    notify = NotifySocket()
    try:
        agent = agents(gateway_bin, roster_config(tmp_path, world, event_server, [0], port=port),
                       env={"RUNTIME_DIRECTORY": str(runtime), "NOTIFY_SOCKET": notify.path})
        agent.wait_log(r"check-ins paused by the server")
        last_beat(event_server, lambda b: b["mode"] == "paused", 10, "a heartbeat saying paused")
        wait_until(lambda: json.loads(status(gateway_bin, runtime, "--json").stdout or "{}").get("mode") == "paused",
                   10, "status saying paused")
        assert "mode        paused" in status(gateway_bin, runtime).stdout
        assert value(scrape(port), "beacon_gateway_paused") == 1
        wait_until(lambda: any(line.startswith("STATUS=scanning · paused · ") for line in notify.assignments()), 20,
                   "STATUS= saying paused")

        event_server.control(roster=roster("r-2"))
        agent.wait_log(r"check-ins resumed by the server")
        last_beat(event_server, lambda b: b["mode"] == "active", 10, "a heartbeat saying active")
        # The metrics body is made at most once a second (docs/fleet.md, "Metrics"): one made
        # just before the resume still says paused.
        wait_until(lambda: value(scrape(port), "beacon_gateway_paused") == 0, 5, "the metrics saying resumed")
        assert event_server.snapshot()["schemaProblems"] == []
        wait_until(lambda: any(line.startswith("STATUS=") for line in notify.assignments())
                   and not notify.assignments()[-1].startswith("STATUS=scanning · paused"), 20, "STATUS= without paused")
        assert agent.stop() == 0
    finally:
        notify.close()


def test_nobody_new_is_checked_in_while_paused_and_arrivals_count_once_resumed(
        gateway_bin, world_factory, agents, event_server, tmp_path):
    world = world_factory(scenario(world_tag(0, path=[[0, None]])))
    event_server.control(roster=roster("r-1", mode="paused"))
    port = free_port()
    agent = agents(gateway_bin, roster_config(tmp_path, world, event_server, [0], port=port))
    agent.wait_log(r"check-ins paused by the server")
    world.control(f"set-distance {tag_id(0)} 1")
    # 40 of the tag's reports (100 ms apart: 4 s at the door, well past window_s and
    # min_samples) are heard while paused: no checkin.
    wait_until(lambda: value(scrape(port), "beacon_gateway_reports", "beacon_gateway_reports_total", kind="tag") >= 40,
               20, "40 reports of the tag heard")
    assert not agent.lines(CHECKIN_LINE), agent.log()[-2000:]
    assert delivered(event_server, "checkin", "u_01") == 0
    event_server.control(roster=roster("r-2"))
    wait_until(lambda: delivered(event_server, "checkin", "u_01") == 1, 20, "the checkin once resumed")
    assert agent.stop() == 0


def test_sighup_merges_the_server_persons_again_and_withdraws_them_when_the_file_takes_their_id(
        gateway_bin, world_factory, agents, event_server, tmp_path):
    world = world_factory(scenario(world_tag(0, distance=1.0), world_tag(1, distance=1.0)))
    event_server.control(roster=roster("r-1", roster_person(1)))
    config = roster_config(tmp_path, world, event_server, [0])
    agent = agents(gateway_bin, config)
    wait_until(lambda: delivered(event_server, "checkin", "u_02") == 1, 20, "u_02 checked in from the roster")
    wait_until(lambda: delivered(event_server, "checkin", "u_01") == 1, 20, "u_01 checked in from the file")

    # A reload of the unchanged file keeps the server's persons, and their visits.
    agent.signal(signal.SIGHUP)
    agent.wait_log(r"configuration reloaded persons=2 ", count=2)
    last_beat(event_server, lambda b: b["roster"]["source"] == "server" and b["present"] == 2, 10,
              "a heartbeat after the reload with both present")
    assert delivered(event_server, "checkout", "u_02") == 0

    # The file now holds u_02 itself: the server's roster no longer fits and is withdrawn
    # (the file's u_02 is the same person: the visit goes on); the roster error says why.
    config = roster_config(tmp_path, world, event_server, [0, 1])
    agent.signal(signal.SIGHUP)
    agent.wait_log(r"server roster withdrawn: .*r-1: persons\[0\]\.id: duplicate person id")
    beat = last_beat(event_server, lambda b: b["roster"]["source"] == "file", 10, "a heartbeat with the file's roster")
    assert beat["roster"]["persons"] == 2 and beat["roster"]["error"].startswith("r-1: persons[0].id:")
    assert beat["present"] == 2 and delivered(event_server, "checkout", "u_02") == 0
    # Asked again in full (no If-None-Match), and refused again while the file holds u_02.
    wait_until(lambda: any("if-none-match" not in r["headers"] for r in roster_requests(event_server)[2:]), 10,
               "a request without If-None-Match after the withdrawal")
    assert agent.stop() == 0


def peak_rss_kib(pid: int) -> int:
    """The process's peak resident set (VmHWM), in KiB."""
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM in /proc/PID/status")


def empty_persons_body(revision: str) -> str:
    """A roster of as many `{}` persons as 4 MiB holds (about 1.4 million)."""
    head, tail = f'{{"revision": "{revision}", "persons": [', "]}"
    count = (4 * 1024 * 1024 - len(head) - len(tail) + 1) // 3
    return head + ",".join(["{}"] * count) + tail


# The agent's peak resident memory (VmHWM) once it has refused 4 MiB of empty persons and
# had them again at three polls: about 49 MiB in a debug build on x86_64, against about
# 37 MiB before the document arrived (the difference is mostly the 4 MiB answer as it is
# received and handed on). Before the roster was bounded while read, it reached 281 MiB.
PEAK_RSS_BOUND_KIB = 64 * 1024


def test_a_4_mib_roster_of_empty_persons_is_refused_at_its_first_excess_in_bounded_memory_and_not_read_again(
        gateway_bin, world_factory, agents, event_server, tmp_path):
    world = world_factory(scenario(world_tag(1, path=[[0, None]])))
    # A server that ignores If-None-Match: a 200 with the whole document at every poll.
    event_server.control(roster=roster("r-1", roster_person(1)), roster_ignore_if_none_match=True)
    port = free_port()
    agent = agents(gateway_bin, roster_config(tmp_path, world, event_server, [0], port=port))
    agent.wait_log(r"server roster in force .*revision=r-1")
    kept = tmp_path / "state" / "roster.json"
    wait_until(kept.exists, 10, "roster.json")
    written = kept.stat()
    # The same valid roster at every poll is neither read nor written again.
    wait_until(lambda: value(scrape(port), "beacon_gateway_roster_fetches", "beacon_gateway_roster_fetches_total",
                             result="unchanged") >= 2, 10, "two polls answered with the roster in force")
    before = peak_rss_kib(agent.process.pid)

    body = empty_persons_body("r-big")
    assert 4 * 1024 * 1024 - 3 < len(body) <= 4 * 1024 * 1024 and body.count("{}") > 1_000_000
    event_server.control(roster_raw=body)
    refused = agent.wait_log(r"server roster refused")
    assert 'error="persons[20000]: a roster holds at most 20,000 persons"' in refused[0], refused
    validate_ms = float(refused[0].split("validate_ms=")[1].split()[0])
    # Every poll brings the 4 MiB again: known by its digest, not read again.
    wait_until(lambda: value(scrape(port), "beacon_gateway_roster_fetches", "beacon_gateway_roster_fetches_total",
                             result="refused_again") >= 3, 15, "three more polls answered with the same document")
    families = scrape(port)
    assert value(families, "beacon_gateway_roster_fetches", "beacon_gateway_roster_fetches_total", result="refused") == 1
    assert len(agent.lines(r"server roster refused")) == 1, "read and logged once"
    beat = last_beat(event_server, lambda b: b["roster"]["error"] is not None, 10, "a heartbeat with the error")
    assert beat["roster"]["error"] == "persons[20000]: a roster holds at most 20,000 persons"
    assert beat["roster"]["revision"] == "r-1", "the previous roster stays in force"
    after = kept.stat()
    assert (after.st_ino, after.st_mtime_ns) == (written.st_ino, written.st_mtime_ns), "roster.json was not rewritten"
    peak = peak_rss_kib(agent.process.pid)
    print(f"\npeak RSS before the 4 MiB roster {before} KiB, after {peak} KiB; refused in {validate_ms} ms")
    assert peak < PEAK_RSS_BOUND_KIB, (before, peak)
    assert agent.stop() == 0


def test_a_roster_asking_to_keep_a_connection_open_is_refused(gateway_bin, world_factory, agents, event_server,
                                                             tmp_path):
    world = world_factory(scenario(world_tag(1, distance=1.0)))
    person = roster_person(1)
    # Whatever advertises C0:…:02 would be connected to and held by every door.
    person["tags"][0].update({"address": "C0:11:22:33:44:02", "track": "connection"})
    event_server.control(roster=roster("r-c", person))
    agent = agents(gateway_bin, roster_config(tmp_path, world, event_server, [0]))
    refused = agent.wait_log(r"server roster refused")
    assert re.search(r'error="r-c: persons\[0\]\.tags\[0\]\.track: must be \\"advertising\\" in a server roster', refused[0]), refused
    beat = last_beat(event_server, lambda b: b["roster"]["error"] is not None, 10, "a heartbeat with the error")
    assert beat["roster"]["source"] == "file" and beat["roster"]["error"].startswith("r-c: persons[0].tags[0].track:")
    # The same person tracked by advertising is taken, and checked in.
    person["tags"][0]["track"] = "advertising"
    event_server.control(roster=roster("r-a", person))
    agent.wait_log(r"server roster in force .*revision=r-a")
    wait_until(lambda: delivered(event_server, "checkin", "u_02") == 1, 20, "u_02 checked in under r-a")
    assert agent.stop() == 0


def test_a_roster_refused_for_a_conflict_with_the_file_is_read_again_after_the_file_is_fixed(
        gateway_bin, world_factory, agents, event_server, tmp_path):
    world = world_factory(scenario(world_tag(1, path=[[0, None]])))
    event_server.control(roster=roster("r-1", roster_person(1)))
    config = roster_config(tmp_path, world, event_server, [0, 1])
    agent = agents(gateway_bin, config)
    agent.wait_log(r"r-1: persons\[0\]\.id: duplicate person id .*u_02.* of the configuration file")
    # Polled again with its ETag: 304, still refused.
    wait_until(lambda: any(r["status"] == 304 for r in roster_requests(event_server)), 10, "a 304 to the refused ETag")
    # The file no longer holds u_02: the next poll asks for the whole roster, which now fits.
    roster_config(tmp_path, world, event_server, [0])
    mark = len(roster_requests(event_server))
    agent.signal(signal.SIGHUP)
    agent.wait_log(r"configuration reloaded persons=1 ")
    agent.wait_log(r"server roster in force .*revision=r-1", timeout=10)
    after = roster_requests(event_server)[mark:]
    assert any(r["status"] == 200 and "if-none-match" not in r["headers"] for r in after), after
    beat = last_beat(event_server, lambda b: b["roster"]["source"] == "server", 10, "a heartbeat with r-1 in force")
    assert beat["roster"] == {"source": "server", "revision": "r-1", "persons": 1, "error": None}
    assert agent.stop() == 0


def test_a_roster_fetcher_that_cannot_start_is_tried_again_at_each_poll(gateway_bin, world_factory, agents,
                                                                       event_server, tmp_path):
    world = world_factory(scenario(world_tag(0, path=[[0, None]])))
    event_server.control(roster=roster("r-1", roster_person(1)))
    ca_file = tmp_path / "ca.pem"
    ca_file.write_text("not a certificate\n")
    port = free_port()
    config = roster_config(tmp_path, world, event_server, [0], port=port)
    config.write_text(config.read_text().replace("roster = true", f'roster = true\nca_file = "{ca_file}"'))
    agent = agents(gateway_bin, config)
    failing = agent.wait_log(r"roster fetch failing")
    assert "cannot start roster requests: server.ca_file" in failing[0] and "holds no PEM certificate" in failing[0], failing
    wait_until(lambda: value(scrape(port), "beacon_gateway_roster_fetches", "beacon_gateway_roster_fetches_total",
                             result="failed") >= 3, 10, "tried again at each poll")
    assert roster_requests(event_server) == []
    assert len(agent.lines(r"roster fetch failing")) == 1, "one line for one failing state"
    # The file is mended (with no reload): the next poll starts the requests.
    ca_file.write_text("-----BEGIN CERTIFICATE-----\n")
    agent.wait_log(r"roster fetch works again", timeout=10)
    agent.wait_log(r"server roster in force .*revision=r-1")
    assert agent.stop() == 0


def test_an_etag_over_256_bytes_is_logged_once_and_its_roster_still_used(gateway_bin, world_factory, agents,
                                                                        event_server, tmp_path):
    world = world_factory(scenario(world_tag(1, distance=1.0)))
    long_etag = '"' + "a" * 298 + '"'
    event_server.control(roster=roster("r-1", roster_person(1)), roster_etag=long_etag)
    port = free_port()
    agent = agents(gateway_bin, roster_config(tmp_path, world, event_server, [0], port=port))
    line = agent.wait_log(r"roster ETag not kept")
    assert "an ETag of 300 bytes (at most 256 are kept)" in line[0], line
    agent.wait_log(r"server roster in force .*revision=r-1")
    wait_until(lambda: delivered(event_server, "checkin", "u_02") == 1, 20, "u_02 checked in under r-1")
    # Each poll asks for the whole roster (nothing to name in If-None-Match), and is said once.
    wait_until(lambda: len(roster_requests(event_server)) >= 4, 10, "four roster requests")
    assert all("if-none-match" not in r["headers"] and r["status"] == 200 for r in roster_requests(event_server))
    assert value(scrape(port), "beacon_gateway_roster_fetches", "beacon_gateway_roster_fetches_total",
                 result="updated") == 1
    assert len(agent.lines(r"roster ETag not kept")) == 1
    # A short one is kept and sent back: 304s.
    event_server.control(roster_etag=True)
    wait_until(lambda: any(r["status"] == 304 for r in roster_requests(event_server)), 10, "a 304 to a kept ETag")
    assert agent.stop() == 0
