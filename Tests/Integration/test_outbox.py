"""The outbox and the forwarder through the real binary (`outbox enqueue` / `outbox
deliver`) against the event server (see docs/event-api.md)."""

from __future__ import annotations

import email.utils
import json
import os
import pathlib
import signal
import sqlite3
import subprocess
import time

import pytest

from eventserver import EventServer
from eventserver.harness import Deliver, check_exactly_once, enqueue, outbox, parse_acks, status, wait_for, write_config


@pytest.fixture
def server():
    s = EventServer().start()
    yield s
    s.stop()


@pytest.fixture
def state_dir(tmp_path) -> pathlib.Path:
    return tmp_path


def per_person_in_order(snapshot: dict) -> bool:
    """The first successful answers per person come in sequence order."""
    last: dict[str, int] = {}
    for entry in snapshot["log"]:
        if entry["status"] != 201:
            continue
        person, sequence = entry["userId"], entry["sequence"]
        if person in last and sequence < last[person]:
            return False
        last[person] = sequence
    return True


def test_outage_of_503s_then_recovery_delivers_everything_once(gateway_bin, server, state_dir):
    config = write_config(state_dir, server.url, max_backoff_s=4)
    acks = enqueue(gateway_bin, state_dir, 150, persons=15)
    server.control(fail_status=503, for_seconds=30)
    started = time.monotonic()
    deliver = Deliver(gateway_bin, config, "--until-empty")
    # Events committed during the outage by another process are picked up too.
    time.sleep(2)
    acks += enqueue(gateway_bin, state_dir, 50, persons=15)
    summary = deliver.wait(timeout=90)
    assert time.monotonic() - started >= 30
    snapshot = server.snapshot()
    result = check_exactly_once(snapshot, acks)
    assert result == {"lost": [], "extra": [], "duplicates": {}}
    assert len(snapshot["events"]) == 200
    assert summary["pending"] == 0 and summary["sent"] == 200
    # Each person's first event (acks[:15], one per person) met the outage and was retried;
    # the persons' later events waited behind it (order per person), so retries may repeat
    # a key and get 200, but nothing is stored twice.
    assert all(snapshot["requests"][key] >= 2 for _, key in acks[:15])
    assert 503 in {entry["status"] for entry in snapshot["log"]}
    assert per_person_in_order(snapshot)
    assert snapshot["headerProblems"] == [] and snapshot["schemaProblems"] == []
    assert "delivery failing" in deliver.stderr() and "delivery recovered" in deliver.stderr()


def test_conflict_is_rejected_and_not_retried(gateway_bin, server, state_dir):
    config = write_config(state_dir, server.url)
    acks = enqueue(gateway_bin, state_dir, 3, persons=1)
    server.control(reject_keys=[acks[1][1]], status=409)
    Deliver(gateway_bin, config, "--until-empty").wait(timeout=30)
    snapshot = server.snapshot()
    assert snapshot["requests"][acks[1][1]] == 1
    assert set(snapshot["events"]) == {acks[0][1], acks[2][1]}
    rejected = outbox(gateway_bin, state_dir, "list", "--state", "rejected", "--json").stdout.splitlines()
    assert len(rejected) == 1 and acks[1][1] in rejected[0]
    # Still not retried by a later run.
    Deliver(gateway_bin, config, "--seconds", "1").wait(timeout=30)
    assert server.snapshot()["requests"][acks[1][1]] == 1


def test_client_error_is_a_dead_letter_until_retry_dead(gateway_bin, server, state_dir):
    config = write_config(state_dir, server.url)
    (sequence, key), = enqueue(gateway_bin, state_dir, 1)
    server.control(status_for_next=400)
    Deliver(gateway_bin, config, "--until-empty").wait(timeout=30)
    assert key not in server.snapshot()["events"]
    current = status(gateway_bin, state_dir)
    assert current["dead"] == 1 and current["pending"] == 0 and current["amber"] == "steady"
    retried = outbox(gateway_bin, state_dir, "retry-dead")
    assert retried.stdout.startswith("1 dead letter")
    Deliver(gateway_bin, config, "--until-empty").wait(timeout=30)
    snapshot = server.snapshot()
    assert key in snapshot["events"] and snapshot["requests"][key] == 2
    assert status(gateway_bin, state_dir)["dead"] == 0


def test_retry_dead_reaches_a_running_forwarder(gateway_bin, server, state_dir):
    config = write_config(state_dir, server.url)
    (sequence, key), = enqueue(gateway_bin, state_dir, 1)
    server.control(status_for_next=422)
    deliver = Deliver(gateway_bin, config)
    try:
        wait_for(lambda: status(gateway_bin, state_dir)["dead"] == 1, 20, "the dead letter")
        outbox(gateway_bin, state_dir, "retry-dead")
        wait_for(lambda: key in server.snapshot()["events"], 20, "the re-sent event")
    finally:
        deliver.terminate()
        deliver.wait(timeout=10)


def test_unauthorised_is_kept_with_long_backoff_and_status_says_auth(gateway_bin, server, state_dir):
    config = write_config(state_dir, server.url, token="wrong-token", max_backoff_s=3)
    (sequence, key), = enqueue(gateway_bin, state_dir, 1)
    server.control(require_token="right-token")
    deliver = Deliver(gateway_bin, config)
    try:
        wait_for(lambda: server.snapshot()["requests"].get(key, 0) >= 1, 20, "the first attempt")
        wait_for(lambda: status(gateway_bin, state_dir)["lastErrorClass"] == "auth", 10, "status auth")
        current = status(gateway_bin, state_dir)
        assert current["pending"] == 1 and current["amber"] == "steady"
        assert "auth" in outbox(gateway_bin, state_dir, "status").stdout
        # Long backoff: about max_backoff_s (3 s, jitter only downwards to 2.4 s), not 0.1 s.
        wait_for(lambda: server.snapshot()["requests"].get(key, 0) >= 2, 10, "the second attempt")
        times = [entry["t"] for entry in server.snapshot()["log"] if entry["key"] == key]
        assert times[1] - times[0] >= 2.3
        # The operator fixes the token: SIGHUP re-reads it; the next attempt succeeds.
        (state_dir / "token").write_text("right-token\n")
        deliver.signal(signal.SIGHUP)
        wait_for(lambda: key in server.snapshot()["events"], 15, "delivery with the new token")
    finally:
        deliver.terminate()
        deliver.wait(timeout=10)
    assert "Bearer" not in deliver.stderr() and "right-token" not in deliver.stderr()


@pytest.mark.parametrize("form", ["seconds", "http-date"])
def test_retry_after_is_honoured(gateway_bin, server, state_dir, form):
    config = write_config(state_dir, server.url, max_backoff_s=10)
    (sequence, key), = enqueue(gateway_bin, state_dir, 1)
    value = "3" if form == "seconds" else email.utils.formatdate(time.time() + 4, usegmt=True)
    server.control(fail_status=503, for_requests=1, retry_after=value)
    Deliver(gateway_bin, config, "--until-empty").wait(timeout=30)
    times = [entry["t"] for entry in server.snapshot()["log"] if entry["key"] == key]
    assert len(times) == 2
    # Without Retry-After the first retry comes after about 0.1 s.
    assert times[1] - times[0] >= 2.5


def test_dropped_connections_and_malformed_answers_are_retried(gateway_bin, server, state_dir):
    config = write_config(state_dir, server.url)
    acks = enqueue(gateway_bin, state_dir, 30, persons=5)
    server.control(drop_connections=4, malformed=3)
    Deliver(gateway_bin, config, "--until-empty").wait(timeout=60)
    snapshot = server.snapshot()
    assert check_exactly_once(snapshot, acks) == {"lost": [], "extra": [], "duplicates": {}}
    statuses = [entry["status"] for entry in snapshot["log"]]
    assert statuses.count("dropped") == 4 and statuses.count("malformed") == 3
    assert per_person_in_order(snapshot)


# The [server] timeout_s of the HTTPS test: 2 s natively. scripts/test-arm64 sets 60, since
# OpenSSL's handshake in the emulated binary (qemu-user, two busy cores) took 10-20 s and
# then timed out as "timeout" instead of succeeding or failing on the certificate. A
# configuration value, not an assertion: the test expects the same outcomes either way.
TLS_TIMEOUT_S = float(os.environ.get("BEACON_GATEWAY_TEST_TLS_TIMEOUT_S", "2"))


def test_https_with_ca_file_works_and_without_it_fails_clearly(gateway_bin, state_dir, tmp_path_factory):
    tls = EventServer(tls_dir=tmp_path_factory.mktemp("tls")).start()
    try:
        without = write_config(state_dir, tls.url, timeout_s=TLS_TIMEOUT_S)
        (sequence, key), = enqueue(gateway_bin, state_dir, 1)
        # Until its first attempt has failed, however long the handshake takes here.
        deliver = Deliver(gateway_bin, without)
        wait_for(lambda: "certificate" in deliver.stderr().lower(), 30 + TLS_TIMEOUT_S, "the certificate error")
        deliver.terminate()
        deliver.wait(timeout=30)
        assert key not in tls.snapshot()["events"]
        assert status(gateway_bin, state_dir)["lastErrorClass"] == "tls"

        with_ca = write_config(state_dir, tls.url, ca_file=tls.ca_file, timeout_s=TLS_TIMEOUT_S)
        Deliver(gateway_bin, with_ca, "--until-empty").wait(timeout=30 + TLS_TIMEOUT_S)
        assert key in tls.snapshot()["events"]
    finally:
        tls.stop()


def test_a_slow_server_does_not_block_the_loop(gateway_bin, server, state_dir):
    config = write_config(state_dir, server.url, timeout_s=60)
    enqueue(gateway_bin, state_dir, 4, persons=4)
    server.control(delay_ms=30000)
    deliver = Deliver(gateway_bin, config)
    wait_for(lambda: len(server.snapshot()["requests"]) == 4, 20, "four requests in flight at once")
    # Every request now waits 30 s for its answer: the loop still handles a signal, so the
    # process ends while none of them has been answered.
    deliver.terminate()
    summary = deliver.wait(timeout=20)
    assert server.snapshot()["log"] == [], "deliver waited for an answer"
    assert summary["pending"] == 4  # abandoned requests stay pending, to be sent again


def test_without_server_events_stay_stored(gateway_bin, state_dir):
    config = write_config(state_dir, None)
    enqueue(gateway_bin, state_dir, 2)
    result = subprocess.run([str(gateway_bin), "outbox", "deliver", "--config", str(config), "--seconds", "1"],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 2 and "no [server]" in result.stderr
    assert status(gateway_bin, state_dir)["pending"] == 2


def test_export_writes_json_lines_of_chosen_states(gateway_bin, server, state_dir):
    config = write_config(state_dir, server.url)
    acks = enqueue(gateway_bin, state_dir, 5, persons=5)
    server.control(reject_keys=[acks[0][1]])
    Deliver(gateway_bin, config, "--until-empty").wait(timeout=30)
    sent = [json.loads(line) for line in outbox(gateway_bin, state_dir, "export", "--state", "sent").stdout.splitlines()]
    assert [entry["sequence"] for entry in sent] == [2, 3, 4, 5]
    assert all(json.loads(entry["body"])["sequence"] == entry["sequence"] for entry in sent)
    everything = outbox(gateway_bin, state_dir, "export").stdout.splitlines()
    assert len(everything) == 5
    assert outbox(gateway_bin, state_dir, "export", "--state", "bogus", check=False).returncode != 0


def test_kill_9_while_enqueueing_keeps_the_store_sound(gateway_bin, state_dir):
    """Power-cut approximation: kill -9 a tight enqueue loop at random moments."""
    import random
    rng = random.Random(4)
    acks: list[tuple[int, str]] = []
    for _ in range(8):
        process = subprocess.Popen([str(gateway_bin), "outbox", "enqueue", "--state-dir", str(state_dir),
                                    "--count", "0", "--persons", "7"], stdout=subprocess.PIPE, text=True)
        # The random moment counts from the first committed event, not from the start:
        # start-up takes longer on a Pi or under emulation (the aarch64 run in qemu-user).
        first = process.stdout.readline()
        time.sleep(rng.uniform(0.2, 0.6))
        process.kill()
        out, _ = process.communicate()
        acks += parse_acks(first + out)
    assert len(acks) > 8
    db = sqlite3.connect(state_dir / "gateway.sqlite")
    try:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = dict(db.execute("SELECT idempotency_key, sequence FROM events").fetchall())
        sequences = sorted(rows.values())
    finally:
        db.close()
    missing = [(s, k) for s, k in acks if rows.get(k) != s]
    assert missing == []
    # Gap-free: every sequence from 1 to the highest is there, each once.
    assert sequences == list(range(1, len(sequences) + 1))
    # The next run continues after the highest sequence, never reusing one.
    (next_sequence, _), = enqueue(gateway_bin, state_dir, 1)
    assert next_sequence == len(sequences) + 1


def test_backup_while_events_are_committed_is_a_sound_prefix_that_restores_and_delivers(gateway_bin, server, state_dir,
                                                                                        tmp_path):
    """docs/runbooks.md, "Backing up the outbox": `outbox backup` while another process
    commits holds every event acknowledged before it began, in a sound standalone file
    with the sequence bound beside it; restored into a fresh state directory it is
    delivered, and new events continue above the old sequences."""
    before = enqueue(gateway_bin, state_dir, 200, persons=20)
    writer = subprocess.Popen([str(gateway_bin), "outbox", "enqueue", "--state-dir", str(state_dir), "--count", "3000",
                               "--persons", "20"], stdout=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: status(gateway_bin, state_dir)["lastSequence"] >= 400, 60, "the writer under way")
        copy = tmp_path / "backup.sqlite"
        result = outbox(gateway_bin, state_dir, "backup", str(copy))
        assert result.stdout.startswith(f"backed up {state_dir / 'gateway.sqlite'} to {copy}: last sequence ")
        assert outbox(gateway_bin, state_dir, "backup", str(copy), check=False).returncode == 1, "never replaces a file"
    finally:
        during = parse_acks(writer.communicate(timeout=300)[0])
    assert writer.returncode == 0

    with sqlite3.connect(f"file:{copy}?mode=ro", uri=True) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert not pathlib.Path(str(copy) + "-wal").exists(), "standalone: no log beside it"
    restored = tmp_path / "restored"
    restored.mkdir()
    copy.rename(restored / "gateway.sqlite")
    pathlib.Path(str(copy) + "-sequence").rename(restored / "gateway.sqlite-sequence")
    rows = [json.loads(line) for line in outbox(gateway_bin, restored, "export").stdout.splitlines()]
    sequences = [row["sequence"] for row in rows]
    held = len(sequences)
    # A prefix: everything before the backup began, nothing skipped, up to what the writer
    # had committed then.
    assert sequences == list(range(1, held + 1)) and held >= 400 and held <= len(before) + len(during)
    keys = dict(before + during)
    assert all(row["idempotencyKey"] == keys[row["sequence"]] for row in rows)

    # Restored and delivered; the next event continues above every sequence handed out
    # before the backup (the bound went with it).
    config = write_config(restored, server.url)
    Deliver(gateway_bin, config, "--until-empty").wait(timeout=60)
    assert set(server.snapshot()["events"]) == {row["idempotencyKey"] for row in rows}
    (sequence, _), = enqueue(gateway_bin, restored, 1)
    assert sequence > held
