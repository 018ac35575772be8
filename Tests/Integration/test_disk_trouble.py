"""Disk trouble with the real `beacon-gateway run` against the virtual world (see
docs/reliability.md, "Disk trouble"): a corrupt database, a lock held by another
process, a read-only and a full file system. The door keeps scanning and deciding; the
decisions are held in memory and committed, in order, once the disk takes them; the
cause is logged once per change and shown in STATUS; a corrupt database is moved aside
and a fresh one continues above every sequence the old one handed out.

The read-only and full file systems are tmpfs mounts: skipped (with the reason) when
the tests do not run as root."""

from __future__ import annotations

import errno
import os
import pathlib
import random
import re
import sqlite3
import subprocess
import time
import urllib.request

import pytest

from conftest import wait_until
from test_fleet import free_port, scrape, value
from test_run import (CHECKIN_LINE, GATEWAY_ID, NotifySocket, agents, count, event_server,  # noqa: F401 - fixtures
                      events_of, expected_key, millis, outbox, scenario, tag_id, wait_rows, world_tag, write_config)

TROUBLE_LINE = r"events cannot be stored"
RECOVERED_LINE = r"events are stored again"
MOVED_LINE = r"corrupt database moved aside"


def away_world(world_factory):
    """A world with u_01's tag out of range until a test walks them in."""
    world = world_factory(scenario(world_tag(0, distance=1.0)))
    world.control(f"set-distance {tag_id(0)} off")
    return world


def state_dir(tmp_path: pathlib.Path) -> pathlib.Path:
    return tmp_path / "state"


def database(tmp_path: pathlib.Path) -> pathlib.Path:
    return state_dir(tmp_path) / "gateway.sqlite"


def walk_in_and_out(world, gateway_bin, config, agent, visits: int) -> list[dict]:
    """u_01 walks in and out; returns the outbox once the visit's two events are stored."""
    world.control(f"set-distance {tag_id(0)} 1.0")
    wait_rows(gateway_bin, config, lambda rows: count(rows, "checkin") == visits, 20, "the checkin", agent)
    world.control(f"set-distance {tag_id(0)} off")
    return wait_rows(gateway_bin, config, lambda rows: count(rows, "checkout") == visits, 20, "the checkout", agent)


def status_lines(notify: NotifySocket) -> list[str]:
    return [line for line in notify.assignments() if line.startswith("STATUS=")]


# MARK: - a corrupt database

def random_bytes(path: pathlib.Path) -> None:
    path.write_bytes(random.Random(11).randbytes(64 * 1024))


def text_file(path: pathlib.Path) -> None:
    path.write_text("[gateway]\nid = \"this is a configuration, not a database\"\n")


def truncated(path: pathlib.Path) -> None:
    os.truncate(path, path.stat().st_size // 2)


@pytest.mark.parametrize("damage", [random_bytes, text_file, truncated], ids=["random-bytes", "text", "truncated"])
def test_a_corrupt_database_is_moved_aside_and_a_fresh_one_continues_above_the_old_sequences(
        gateway_bin, world_factory, agents, tmp_path, damage):
    world = away_world(world_factory)
    config = write_config(tmp_path, world.transport, [0])
    first = agents(gateway_bin, config)
    first.wait_log(r"controller up")
    old = walk_in_and_out(world, gateway_bin, config, first, visits=1)
    assert first.stop() == 0
    old_highest = max(row["sequence"] for row in old)
    assert not pathlib.Path(str(database(tmp_path)) + "-wal").exists(), "a clean stop leaves no log to replay"

    damage(database(tmp_path))
    damaged = database(tmp_path).read_bytes()
    second = agents(gateway_bin, config)
    moved = second.wait_log(MOVED_LINE)
    assert len(moved) == 1, moved
    target = re.search(r"moved_to=(\S+)", moved[0]).group(1)
    assert re.fullmatch(re.escape(str(database(tmp_path))) + r"\.corrupt-\d{8}T\d{6}Z", target), target
    assert pathlib.Path(target).read_bytes() == damaged, "the damaged file is kept as it was"
    second.wait_log(r"controller up")

    new = walk_in_and_out(world, gateway_bin, config, second, visits=1)
    assert events_of(new) == [("checkin", "u_01"), ("checkout", "u_01")]
    assert min(row["sequence"] for row in new) > old_highest, (old_highest, [row["sequence"] for row in new])
    assert [row["sequence"] for row in new] == sorted(row["sequence"] for row in new)
    assert second.lines(TROUBLE_LINE) == [], "moved aside at start: the fresh store never failed"
    assert second.stop() == 0
    assert len(second.lines(MOVED_LINE)) == 1


def damage_events_table_under_a_running_agent(path: pathlib.Path) -> None:
    """From another process, while the agent holds the file open: the write-ahead log
    copied into the database, then the events table's root page overwritten with random
    bytes in the file itself, then one small write of this process's own (a table of its
    own) so that the agent's connection sees a changed log and drops its page cache: its
    next read of the events table finds the page damaged."""
    connection = sqlite3.connect(str(path), isolation_level=None, timeout=10)
    try:
        busy, _, _ = connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        assert busy == 0, "the checkpoint could not finish"
        page_size = connection.execute("PRAGMA page_size").fetchone()[0]
        root = connection.execute("SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = 'events'").fetchone()[0]
    finally:
        connection.close()
    with open(path, "r+b") as file:
        file.seek((root - 1) * page_size)
        file.write(random.Random(7).randbytes(page_size))
        file.flush()
        os.fsync(file.fileno())
    connection = sqlite3.connect(str(path), isolation_level=None, timeout=10)
    try:
        connection.execute("CREATE TABLE poke (x)")
    finally:
        connection.close()


def test_a_database_found_corrupt_at_a_later_commit_is_moved_aside_and_the_door_goes_on(
        gateway_bin, world_factory, agents, tmp_path):
    world = away_world(world_factory)
    config = write_config(tmp_path, world.transport, [0], log_level="debug")
    agent = agents(gateway_bin, config)
    agent.wait_log(r"controller up")
    old = walk_in_and_out(world, gateway_bin, config, agent, visits=1)
    old_highest = max(row["sequence"] for row in old)

    damage_events_table_under_a_running_agent(database(tmp_path))
    world.control(f"set-distance {tag_id(0)} 1.0")
    trouble = agent.wait_log(TROUBLE_LINE)
    assert 'cause="corrupt database"' in trouble[0], trouble
    moved = agent.wait_log(MOVED_LINE)
    assert len(moved) == 1, moved
    target = pathlib.Path(re.search(r"moved_to=(\S+)", moved[0]).group(1))
    assert target.exists() and target.name.startswith("gateway.sqlite.corrupt-"), moved
    first = int(re.search(r"first_sequence=(\d+)", moved[0]).group(1))
    assert first > old_highest, moved

    # The held checkin goes into the fresh database, then the door goes on deciding.
    rows = wait_rows(gateway_bin, config, lambda rows: count(rows, "checkin") == 1, 40, "the held checkin", agent)
    world.control(f"set-distance {tag_id(0)} off")
    rows = wait_rows(gateway_bin, config, lambda rows: count(rows, "checkout") == 1, 40, "the checkout", agent)
    assert events_of(rows) == [("checkin", "u_01"), ("checkout", "u_01")], events_of(rows)
    sequences = [row["sequence"] for row in rows]
    assert sequences == sorted(sequences) and sequences[0] >= first > old_highest, (sequences, first, old_highest)
    agent.wait_log(RECOVERED_LINE)
    # Once per change, not per event or retry, whichever operation met the damage first
    # (retention, a checkpoint, the commit): the database stays corrupt until examined.
    assert len(agent.lines(TROUBLE_LINE)) == 1, "\n".join(agent.lines("stor"))
    assert agent.stop() == 0


def enqueue_pending(gateway_bin, tmp_path: pathlib.Path, count: int, persons: int) -> set[str]:
    """`count` pending events for the test's gateway in a new state directory (`outbox
    enqueue`); their keys."""
    state_dir(tmp_path).mkdir()
    enqueued = subprocess.run([str(gateway_bin), "outbox", "enqueue", "--state-dir", str(state_dir(tmp_path)),
                               "--count", str(count), "--persons", str(persons), "--gateway", GATEWAY_ID],
                              capture_output=True, text=True, timeout=120)
    assert enqueued.returncode == 0, enqueued.stderr
    return {line.split()[1] for line in enqueued.stdout.splitlines() if line.strip()}


def test_a_broken_index_found_by_delivery_is_salvaged_and_every_pending_event_is_delivered_once(
        gateway_bin, world_factory, agents, event_server, tmp_path):
    """One page of an index on the events table overwritten, the table itself intact: the
    forwarder's reads find it, the door examines the file, moves it aside and copies every
    pending event into a fresh one under its own key, and delivery goes on."""
    world = away_world(world_factory)
    config = write_config(tmp_path, world.transport, [0], server=event_server)
    port = free_port()
    config.write_text(config.read_text() + f'\n[metrics]\nlisten = "127.0.0.1:{port}"\n')
    keys = enqueue_pending(gateway_bin, tmp_path, count=100, persons=10)
    assert len(keys) == 100
    with sqlite3.connect(database(tmp_path)) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = connection.execute("PRAGMA page_size").fetchone()[0]
        roots = [row[0] for row in connection.execute(
            "SELECT rootpage FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('events', 'deliveries')"
            " AND name NOT LIKE 'sqlite_autoindex_%'")]
    with open(database(tmp_path), "r+b") as file:
        for root in roots:
            file.seek((root - 1) * page_size)
            file.write(random.Random(root).randbytes(page_size))

    agent = agents(gateway_bin, config)
    moved = agent.wait_log(MOVED_LINE, timeout=30)
    assert "salvaged_events=100" in moved[0], moved
    try:
        wait_until(lambda: set(event_server.snapshot()["events"]) == keys, 60, "the 100 pending events at the server")
    except AssertionError as error:
        raise AssertionError(f"{error}: {len(event_server.snapshot()['events'])} arrived; log:\n{agent.log()[-4000:]}") from None
    snapshot = event_server.snapshot()
    assert sorted(snapshot["events"]) == sorted(keys), "each once"
    wait_rows(gateway_bin, config, lambda rows: len(rows) == 100 and all(row["state"] == "sent" for row in rows), 30,
              "all sent", agent)
    # Shown in the metrics: the database moved aside, what was salvaged, and the trouble over.
    metrics = scrape(port)
    assert value(metrics, "beacon_gateway_corrupt_databases", "beacon_gateway_corrupt_databases_total",
                 result="moved_aside") == 1
    assert value(metrics, "beacon_gateway_corrupt_databases", "beacon_gateway_corrupt_databases_total",
                 result="sound") == 0
    assert value(metrics, "beacon_gateway_salvaged", "beacon_gateway_salvaged_total", kind="events") == 100
    assert value(metrics, "beacon_gateway_salvage_unreadable", "beacon_gateway_salvage_unreadable_total",
                 part="stretch") == 0
    assert value(metrics, "beacon_gateway_disk_trouble") == 0
    assert agent.stop() == 0


def test_a_database_holding_extreme_values_neither_traps_the_agent_nor_the_outbox_commands(
        gateway_bin, world_factory, agents, event_server, tmp_path):
    """Any 64-bit value where a time or a count belongs (a damaged row, a hand edit): the
    agent starts, decides and delivers on every start, and `outbox` answers. Such a row
    once trapped the agent when delivered (its delivery latency overflowed), at every start."""
    world = world_factory(scenario(world_tag(0, distance=1.0)))
    config = write_config(tmp_path, world.transport, [0], server=event_server)
    enqueue_pending(gateway_bin, tmp_path, count=6, persons=6)
    high, low = 2**63 - 1, -2**63
    with sqlite3.connect(database(tmp_path)) as connection:
        # Schema version 2: the event in `events`, the server's delivery of it in `deliveries`.
        update = ("UPDATE deliveries SET attempts = ?, next_attempt_ms = ?, updated_ms = ?"
                  " WHERE sink = 'server' AND sequence = ?")
        connection.execute(update, (high, high, high, 1))
        connection.execute(update, (low, low, low, 2))
        connection.execute("UPDATE events SET created_ms = ? WHERE sequence = 1", (low,))
        connection.execute("UPDATE events SET created_ms = ? WHERE sequence = 2", (high,))
        connection.execute("UPDATE deliveries SET state = 3, updated_ms = ? WHERE sink = 'server' AND sequence = 3", (high,))
        connection.execute("UPDATE deliveries SET last_status = ? WHERE sink = 'server' AND sequence = 4", (high,))
        connection.execute("UPDATE events SET created_ms = ? WHERE sequence = 4", (high,))
        connection.execute("UPDATE sinks SET last_success_ms = ?, last_error_ms = ? WHERE name = 'server'", (high, high))
        for name in ("disk_checked_ms", "last_prune_ms", "pruned_sent"):
            connection.execute("INSERT OR REPLACE INTO meta (name, int_value) VALUES (?, ?)", (name, high))
    for command in (["status"], ["status", "--json"], ["list", "--state", "dead"], ["export"]):
        result = subprocess.run([str(gateway_bin), "outbox", *command, "--state-dir", str(state_dir(tmp_path))],
                                capture_output=True, text=True, timeout=30)
        assert result.returncode == 0, (command, result.returncode, result.stderr[-2000:])
    for start in range(2):
        agent = agents(gateway_bin, config)
        agent.wait_log(r"controller up")
        wait_rows(gateway_bin, config, lambda rows: count(rows, "checkin") >= 1, 20, "the checkin", agent)
        wait_until(lambda: sum(1 for event in event_server.snapshot()["events"].values()
                               if event.get("type") == "checkin" and event.get("userId") == "u_01") == 1, 30,
                   "the checkin at the server")
        assert agent.stop() == 0, f"start {start + 1}"


# MARK: - a lock held by another process

def test_a_lock_held_by_another_process_holds_the_events_in_order_until_it_is_released(
        gateway_bin, world_factory, agents, tmp_path):
    world = away_world(world_factory)
    config = write_config(tmp_path, world.transport, [0], log_level="debug")
    notify = NotifySocket()
    try:
        agent = agents(gateway_bin, config, env={"NOTIFY_SOCKET": notify.path})
        agent.wait_log(r"controller up")
        wait_until(lambda: database(tmp_path).exists(), 10, "the store")

        holder = sqlite3.connect(str(database(tmp_path)), isolation_level=None, timeout=10)
        holder.execute("BEGIN EXCLUSIVE")
        try:
            world.control(f"set-distance {tag_id(0)} 1.0")
            agent.wait_log(r"presence person(?:_id)?=u_01 from=\S+ to=PRESENT")
            trouble = agent.wait_log(TROUBLE_LINE)
            assert "cause=locked" in trouble[0], trouble
            wait_until(lambda: any("disk trouble: locked" in line for line in status_lines(notify)), 10,
                       "STATUS with disk trouble")
            # The door keeps deciding while the lock is held: the checkout follows.
            world.control(f"set-distance {tag_id(0)} off")
            agent.wait_log(r"presence person(?:_id)?=u_01 from=\S+ to=OUTSIDE")
            assert agent.lines(CHECKIN_LINE) == [], "nothing is committed under the lock"
            assert outbox(gateway_bin, config) == []
        finally:
            holder.execute("COMMIT")
            holder.close()

        rows = wait_rows(gateway_bin, config, lambda rows: count(rows, "checkout") == 1, 40,
                         "the held events", agent)
        assert events_of(rows) == [("checkin", "u_01"), ("checkout", "u_01")], \
            f"in the order decided: {events_of(rows)}; log:\n{agent.log()[-4000:]}"
        assert [row["sequence"] for row in rows] == [1, 2]
        agent.wait_log(RECOVERED_LINE)
        assert len(agent.lines(TROUBLE_LINE)) == 1, "once per change, not per event or retry"
        assert len(agent.lines(RECOVERED_LINE)) == 1
        wait_until(lambda: "disk trouble" not in status_lines(notify)[-1], 10, "STATUS without disk trouble")
        assert agent.stop() == 0
    finally:
        notify.close()


# MARK: - read-only and full file systems (tmpfs, as root)

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs for the state directory needs root")


@pytest.fixture
def tmpfs_state(tmp_path):
    """The state directory on its own 1 MiB tmpfs."""
    directory = state_dir(tmp_path)
    directory.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=0750", "tmpfs", str(directory)], check=True)
    yield directory
    subprocess.run(["umount", "-l", str(directory)], check=False)


def remount(directory: pathlib.Path, mode: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{mode}", str(directory)], check=True, capture_output=True)


@needs_root
def test_a_read_only_file_system_at_start_keeps_the_door_running_until_it_is_writable(
        gateway_bin, world_factory, agents, tmp_path, tmpfs_state):
    world = away_world(world_factory)
    config = write_config(tmp_path, world.transport, [0], log_level="debug")
    first = agents(gateway_bin, config)
    first.wait_log(r"controller up")
    walk_in_and_out(world, gateway_bin, config, first, visits=1)
    assert first.stop() == 0

    remount(tmpfs_state, "ro")
    notify = NotifySocket()
    try:
        agent = agents(gateway_bin, config, env={"NOTIFY_SOCKET": notify.path})
        trouble = agent.wait_log(TROUBLE_LINE)
        assert "cause=read-only" in trouble[0], trouble
        agent.wait_log(r"controller up")
        wait_until(lambda: any("disk trouble: read-only" in line for line in status_lines(notify)), 10,
                   "STATUS with disk trouble")
        world.control(f"set-distance {tag_id(0)} 1.0")
        agent.wait_log(r"presence person(?:_id)?=u_01 from=\S+ to=PRESENT")
        remount(tmpfs_state, "rw")
        rows = wait_rows(gateway_bin, config, lambda rows: count(rows, "checkin") == 2, 40, "the held checkin", agent)
        assert events_of(rows) == [("checkin", "u_01"), ("checkout", "u_01"), ("checkin", "u_01")]
        assert [row["sequence"] for row in rows] == [1, 2, 3]
        agent.wait_log(RECOVERED_LINE)
        assert len(agent.lines(TROUBLE_LINE)) == 1
        assert agent.stop() == 0
    finally:
        notify.close()


@needs_root
def test_a_visit_open_at_a_restart_without_a_store_gets_its_checkout_before_a_new_checkin(
        gateway_bin, world_factory, agents, tmp_path, tmpfs_state):
    """The store holds u_01's open visit, but cannot be opened at the restart: when it opens,
    that visit is checked out before anything decided meanwhile (docs/presence.md)."""
    world = away_world(world_factory)
    config = write_config(tmp_path, world.transport, [0], log_level="debug")
    first = agents(gateway_bin, config)
    first.wait_log(r"controller up")
    world.control(f"set-distance {tag_id(0)} 1.0")
    wait_rows(gateway_bin, config, lambda rows: count(rows, "checkin") == 1, 20, "the checkin", first)
    assert first.stop() == 0  # u_01 still at the door: the visit is open in the store

    remount(tmpfs_state, "ro")
    agent = agents(gateway_bin, config)
    agent.wait_log(TROUBLE_LINE)
    agent.wait_log(r"controller up")
    agent.wait_log(r"presence person(?:_id)?=u_01 from=\S+ to=PRESENT")
    remount(tmpfs_state, "rw")
    agent.wait_log(RECOVERED_LINE, timeout=40)
    world.control(f"set-distance {tag_id(0)} off")
    rows = wait_rows(gateway_bin, config,
                     lambda rows: count(rows, "checkout") >= 1 and count(rows, "checkout") == count(rows, "checkin"),
                     40, "a checkout for every checkin", agent)
    kinds = [row["type"] for row in rows]
    assert kinds == ["checkin", "checkout"] * (len(kinds) // 2), f"never a second checkin of an open visit: {events_of(rows)}"
    for checkin, checkout in zip(rows[::2], rows[1::2]):
        assert checkin["event"]["visitStart"] == checkout["event"]["visitStart"], events_of(rows)
    assert agent.stop() == 0


@needs_root
def test_a_full_disk_holds_the_events_until_space_is_freed(gateway_bin, world_factory, agents, tmp_path, tmpfs_state):
    world = away_world(world_factory)
    config = write_config(tmp_path, world.transport, [0], log_level="debug")
    notify = NotifySocket()
    try:
        agent = agents(gateway_bin, config, env={"NOTIFY_SOCKET": notify.path})
        agent.wait_log(r"controller up")
        # A first visit stored: the sequence range is reserved, so what fails below is
        # SQLite's own write-ahead log growing.
        walk_in_and_out(world, gateway_bin, config, agent, visits=1)
        filler = tmpfs_state / "filler"
        descriptor = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while True:
                os.write(descriptor, b"\0" * 4096)
        except OSError as error:
            assert error.errno == errno.ENOSPC, error
        finally:
            os.close(descriptor)
        world.control(f"set-distance {tag_id(0)} 1.0")
        trouble = agent.wait_log(TROUBLE_LINE)
        assert 'cause="disk full"' in trouble[0], trouble
        wait_until(lambda: any("disk trouble: disk full" in line for line in status_lines(notify)), 10,
                   "STATUS with disk trouble")
        # The second visit's checkin decided (the trouble line may come from a presence
        # checkpoint before it), then the person leaves.
        agent.wait_log(r"presence person(?:_id)?=u_01 from=NEARBY to=PRESENT", count=2)
        world.control(f"set-distance {tag_id(0)} off")
        agent.wait_log(r"presence person(?:_id)?=u_01 from=\S+ to=OUTSIDE", count=2)
        assert count(outbox(gateway_bin, config), "checkin") == 1, "the second visit is not stored yet"
        filler.unlink()
        rows = wait_rows(gateway_bin, config, lambda rows: count(rows, "checkout") == 2, 40, "the held events", agent)
        assert events_of(rows) == [("checkin", "u_01"), ("checkout", "u_01")] * 2
        assert [row["sequence"] for row in rows] == [1, 2, 3, 4]
        agent.wait_log(RECOVERED_LINE)
        assert len(agent.lines(TROUBLE_LINE)) == 1, "once per change, not per event or retry"
        assert agent.stop() == 0
    finally:
        notify.close()


# MARK: - decisions held over a restart (docs/reliability.md, "Held over a restart")

HELD_KEPT_LINE = r"events not stored at shutdown: kept for the restart"
HELD_STORED_LINE = r"events held over the restart stored"


def runtime_dir(tmp_path: pathlib.Path) -> pathlib.Path:
    """The agent's runtime directory (systemd's RuntimeDirectory=, a tmpfs on a door)."""
    directory = tmp_path / "run"
    directory.mkdir(exist_ok=True, mode=0o750)
    return directory


def disk_trouble_gauge(port: int) -> float | None:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as answer:
        found = re.search(r"^beacon_gateway_disk_trouble (\S+)$", answer.read().decode(), re.MULTILINE)
    return float(found.group(1)) if found else None


def checkins_at_the_server(event_server, person: str) -> list[dict]:
    return [event for event in event_server.snapshot()["events"].values()
            if event.get("type") == "checkin" and event.get("userId") == person]


def held_over_a_restart(gateway_bin, world_factory, agents, event_server, tmp_path, refuse, allow,
                        refuse_before_start: bool = False) -> None:
    """u_01 checks in while the store refuses every write (`refuse`: under the running
    agent, or before it starts), the agent is stopped with the checkin held, the disk is
    repaired (`allow`) and the agent started again: the checkin reaches the server once,
    as decided before the stop (its key and time), and the visit goes on without a second
    checkin."""
    world = away_world(world_factory)
    config = write_config(tmp_path, world.transport, [0], server=event_server, log_level="debug")
    port = free_port()
    config.write_text(config.read_text() + f'\n[metrics]\nlisten = "127.0.0.1:{port}"\n')
    env = {"RUNTIME_DIRECTORY": str(runtime_dir(tmp_path))}
    held_file = runtime_dir(tmp_path) / "held-events"
    if refuse_before_start:
        creator = agents(gateway_bin, config, env=env)
        creator.wait_log(r"controller up")  # the store is opened before the controller
        assert creator.stop() == 0
        refuse()
    first = agents(gateway_bin, config, env=env)
    first.wait_log(r"controller up")
    if not refuse_before_start:
        wait_until(lambda: database(tmp_path).exists(), 10, "the store")
        refuse()
    world.control(f"set-distance {tag_id(0)} 1.0")
    first.wait_log(r"presence person(?:_id)?=u_01 from=\S+ to=PRESENT")
    first.wait_log(TROUBLE_LINE)
    trouble_gauge = disk_trouble_gauge(port)  # asserted with the rest, after what the server got
    assert first.stop() == 0
    stopped_at_ms = int(time.time() * 1000)
    assert checkins_at_the_server(event_server, "u_01") == [], "nothing was stored, so nothing was sent"

    allow()
    second = agents(gateway_bin, config, env=env)
    wait_until(lambda: checkins_at_the_server(event_server, "u_01"), 20, "the held checkin at the server")
    # The person is still at the door: restored as the held checkin left them, not decided again.
    second.wait_log(r"controller up")
    world.control(f"set-distance {tag_id(0)} off")
    rows = wait_rows(gateway_bin, config, lambda rows: count(rows, "checkout") == 1, 30, "the checkout", second)
    wait_until(lambda: set(event_server.snapshot()["events"]) == {row["idempotencyKey"] for row in rows}, 20,
               "the checkin and the checkout at the server")
    assert events_of(rows) == [("checkin", "u_01"), ("checkout", "u_01")], events_of(rows)
    checkin, checkout = (row["event"] for row in rows)
    assert millis(checkin["decidedAt"]) <= stopped_at_ms, f"decided before the stop, not again after it: {checkin}"
    assert checkin["idempotencyKey"] == expected_key(checkin)
    assert checkout["visitStart"] == checkin["visitStart"], "the held checkin's visit is the one checked out"
    assert len(checkins_at_the_server(event_server, "u_01")) == 1
    assert trouble_gauge == 1, "disk trouble shown in the metrics"
    kept = first.lines(HELD_KEPT_LINE)
    assert len(kept) == 1 and "count=1" in kept[0], f"the held checkin kept at the stop; log:\n{first.log()[-3000:]}"
    assert len(second.lines(HELD_STORED_LINE)) == 1
    assert not held_file.exists(), "removed once stored"
    assert second.stop() == 0


def test_a_checkin_held_by_a_lock_at_a_stop_reaches_the_server_once_after_the_restart(
        gateway_bin, world_factory, agents, event_server, tmp_path):
    holder = {}

    def refuse():
        holder["connection"] = sqlite3.connect(str(database(tmp_path)), isolation_level=None, timeout=10)
        holder["connection"].execute("BEGIN EXCLUSIVE")

    def allow():
        holder["connection"].execute("COMMIT")
        holder["connection"].close()

    try:
        held_over_a_restart(gateway_bin, world_factory, agents, event_server, tmp_path, refuse, allow)
    finally:
        if "connection" in holder:
            try:
                holder["connection"].close()
            except sqlite3.ProgrammingError:
                pass


@needs_root
def test_a_checkin_held_by_a_read_only_state_directory_at_a_stop_reaches_the_server_once_after_the_restart(
        gateway_bin, world_factory, agents, event_server, tmp_path, tmpfs_state):
    # A file system cannot be remounted read-only under the agent's open database: it goes
    # read-only between a first run (which created the store) and the run that decides.
    held_over_a_restart(gateway_bin, world_factory, agents, event_server, tmp_path,
                        lambda: remount(tmpfs_state, "ro"), lambda: remount(tmpfs_state, "rw"), refuse_before_start=True)


def test_a_damaged_held_events_file_is_moved_aside_and_the_door_runs(gateway_bin, world_factory, agents, tmp_path):
    world = away_world(world_factory)
    config = write_config(tmp_path, world.transport, [0], log_level="debug")
    held_file = runtime_dir(tmp_path) / "held-events"
    held_file.write_bytes(b"BGHE\x01" + random.Random(25).randbytes(4000))
    agent = agents(gateway_bin, config, env={"RUNTIME_DIRECTORY": str(runtime_dir(tmp_path))})
    line = agent.wait_log(r"events held over the restart are unreadable; the file is moved aside, not used")[0]
    assert str(held_file) in line and "digest does not match" in line, line
    moved = [path for path in runtime_dir(tmp_path).iterdir() if path.name.startswith("held-events.corrupt-")]
    assert len(moved) == 1 and moved[0].read_bytes().startswith(b"BGHE\x01"), "moved aside, not deleted"
    assert not held_file.exists()
    agent.wait_log(r"controller up")
    world.control(f"set-distance {tag_id(0)} 1.0")
    wait_rows(gateway_bin, config, lambda rows: count(rows, "checkin") == 1, 20, "a checkin", agent)
    assert agent.stop() == 0
