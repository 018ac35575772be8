"""kill -9 the gateway at random moments while events are committed and delivered to a
flaky server; then check the server holds every committed event exactly once.

Modes:
  outbox (default)  `outbox enqueue --count 0` commits events; `outbox deliver` forwards
                    them and is killed -9 (the enqueuer too, now and then).
  run               `beacon-gateway run --config CFG` (events from the virtual world or a
                    btsnoop replay named in CFG, which must point [server] at --port's server)
                    is killed -9.

Ground truth is the gateway's own store: every event it ever committed (its sequence
numbers) must be on the server, once, under its one key.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from eventserver import EventServer  # noqa: E402
from eventserver.harness import parse_acks, write_config  # noqa: E402


def chaos(server: EventServer, rng: random.Random, stop: threading.Event) -> None:
    """A flaky server: 503 spells, dropped connections, slow answers."""
    while not stop.wait(rng.uniform(0.3, 1.2)):
        choice = rng.random()
        if choice < 0.3:
            server.control(fail_status=503, for_seconds=rng.uniform(0.3, 2.0), retry_after=None)
        elif choice < 0.5:
            server.control(drop_connections=rng.randint(1, 3))
        elif choice < 0.6:
            server.control(malformed=1)
        elif choice < 0.8:
            server.control(delay_ms=rng.choice([0, 50, 200, 800]))
        else:
            server.control(delay_ms=0)


def store_events(state_dir: pathlib.Path, binary: str) -> dict[int, str]:
    out = subprocess.run([binary, "outbox", "export", "--state-dir", str(state_dir)], check=True,
                         capture_output=True, text=True).stdout
    events = {}
    for line in out.splitlines():
        entry = json.loads(line)
        events[entry["sequence"]] = entry["idempotencyKey"]
    return events


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.environ.get("BEACON_GATEWAY_BIN", ".build/debug/beacon-gateway"))
    parser.add_argument("--kills", type=int, default=50)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--mode", choices=["outbox", "run"], default="outbox")
    parser.add_argument("--run-config", help="run mode: the gateway.toml to run (its state_dir is checked)")
    parser.add_argument("--port", type=int, default=0, help="the server's port (run mode: the one CFG names)")
    parser.add_argument("--persons", type=int, default=12)
    parser.add_argument("--state-dir")
    args = parser.parse_args()

    rng = random.Random(args.seed)
    # Not checked against the API document (the suite's servers are): at about 9 ms of
    # this interpreter per event the check held delivery near 100 events a second,
    # far under what `enqueue` commits, and the drain at the end ran out of time with
    # most events still to send, counted as lost (2026-12-08: 14,404 of 89,191
    # delivered, FAIL; unchecked, 67,042 of 67,042 in a run of 64 s, PASS).
    server = EventServer(port=args.port, check_api=False).start()
    stop = threading.Event()
    threading.Thread(target=chaos, args=(server, rng, stop), daemon=True).start()
    state_dir = pathlib.Path(args.state_dir or tempfile.mkdtemp(prefix="crash-test-"))
    if args.mode == "run":
        if not args.run_config:
            parser.error("--mode run needs --run-config")
        config = pathlib.Path(args.run_config)
        state_dir = pathlib.Path(args.state_dir) if args.state_dir else None
        if state_dir is None:
            parser.error("--mode run needs --state-dir (the configuration's gateway.state_dir)")
    else:
        config = write_config(state_dir, server.url, timeout_s=2, max_backoff_s=2)
    print(f"crash-test: seed {args.seed}, state {state_dir}, server {server.url}, mode {args.mode}", flush=True)

    acks: list[tuple[int, str]] = []
    enqueuer: subprocess.Popen | None = None
    ack_lock = threading.Lock()

    def start_enqueuer() -> subprocess.Popen:
        process = subprocess.Popen([args.binary, "outbox", "enqueue", "--state-dir", str(state_dir), "--count", "0",
                                    "--persons", str(args.persons)], stdout=subprocess.PIPE, text=True)

        def read() -> None:
            for line in process.stdout:
                with ack_lock:
                    acks.extend(parse_acks(line))
        threading.Thread(target=read, daemon=True).start()
        return process

    def start_gateway() -> subprocess.Popen:
        command = [args.binary, "run", "--config", str(config)] if args.mode == "run" else \
            [args.binary, "outbox", "deliver", "--config", str(config)]
        return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    kills = 0
    try:
        if args.mode == "outbox":
            enqueuer = start_enqueuer()
        gateway = start_gateway()
        while kills < args.kills:
            # Slow the enqueuer down between kills so the backlog stays deliverable.
            time.sleep(rng.uniform(0.1, 1.0))
            gateway.kill()
            gateway.wait()
            kills += 1
            if enqueuer is not None and rng.random() < 0.3:
                enqueuer.kill()  # a power cut of the committing side, too
                enqueuer.wait()
                enqueuer = start_enqueuer()
            if enqueuer is not None and rng.random() < 0.5:
                os.kill(enqueuer.pid, signal.SIGSTOP)  # pause commits for a while: let delivery catch up
                time.sleep(rng.uniform(0.1, 0.5))
                os.kill(enqueuer.pid, signal.SIGCONT)
            gateway = start_gateway()
        if enqueuer is not None:
            enqueuer.kill()
            enqueuer.wait()
        gateway.kill()
        gateway.wait()
        stop.set()
        server.control(reset=True)
        # Drain what is left with a healthy server.
        drain_command = [args.binary, "outbox", "deliver", "--config", str(config), "--until-empty", "--seconds", "120"]
        if args.mode == "run":
            drain_command += ["--state-dir", str(state_dir)]
        subprocess.run(drain_command, check=False, capture_output=True, timeout=180)
    finally:
        stop.set()
        if enqueuer is not None and enqueuer.poll() is None:
            enqueuer.kill()

    committed = store_events(state_dir, args.binary)
    snapshot = server.snapshot()
    stored = snapshot["events"]
    keys = set(committed.values())
    lost = sorted(sequence for sequence, key in committed.items() if key not in stored)
    foreign = [key for key in stored if key not in keys]  # an event under a second key
    by_sequence: dict[int, int] = {}
    for event in stored.values():
        by_sequence[event.get("sequence")] = by_sequence.get(event.get("sequence"), 0) + 1
    duplicates = len(foreign) + sum(count - 1 for count in by_sequence.values() if count > 1)
    unacked_missing = [seq for seq, key in acks if committed.get(seq) != key]
    gaps = sorted(set(range(1, max(committed, default=0) + 1)) - set(committed))
    repeats = sum(count - 1 for count in snapshot["requests"].values() if count > 1)
    server.stop()
    print(f"kills {kills}")
    print(f"events {len(committed)} (committed; {len(acks)} acknowledged on stdout)")
    print(f"delivered {sum(1 for key in keys if key in stored)}")
    print(f"lost {len(lost)}" + (f" (sequences {lost[:20]})" if lost else ""))
    print(f"duplicates {duplicates}")
    print(f"acknowledged but missing from the store {len(unacked_missing)}; sequence gaps {len(gaps)}")
    print(f"requests repeated (same key again, answered 200) {repeats}")
    ok = not lost and duplicates == 0 and not unacked_missing and not gaps and kills == args.kills
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
