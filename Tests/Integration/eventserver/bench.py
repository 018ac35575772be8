"""scripts/bench-outbox: enqueue latency, drain rate of a 100,000-event backlog to a
loopback server, and the same drain done by a shell loop of one curl process per event."""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from eventserver.harness import write_config  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent


class FastServer:
    def __init__(self) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "eventserver.fast", "--port", "0"], cwd=HERE.parent,
                                        stdout=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        assert line.startswith("READY "), line
        self.url = line.split()[1]

    def count(self) -> dict:
        with urllib.request.urlopen(self.url + "/_count", timeout=10) as answer:
            return json.load(answer)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


def fsync_latency(directory: pathlib.Path, samples: int = 200) -> tuple[float, float]:
    """The disk's own fdatasync p50/p99 (ms): the floor of a durable commit."""
    path = directory / "fsync-probe"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    times = []
    try:
        for _ in range(samples):
            os.write(fd, b"x" * 4096)
            started = time.perf_counter()
            os.fdatasync(fd)
            times.append((time.perf_counter() - started) * 1000)
    finally:
        os.close(fd)
        path.unlink()
    times.sort()
    return times[len(times) // 2], times[int(len(times) * 0.99)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--binary", default=os.environ.get("BEACON_GATEWAY_BIN"))
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--latency-samples", type=int, default=2_000)
    parser.add_argument("--curl-events", type=int, default=2_000)
    parser.add_argument("--persons", type=int, default=200)
    parser.add_argument("--max-in-flight", type=int, default=32)
    args = parser.parse_args()
    binary = args.binary
    if binary is None:
        release = pathlib.Path(".build/release/beacon-gateway")
        binary = str(release if release.exists() else pathlib.Path(".build/debug/beacon-gateway"))
    work = pathlib.Path(tempfile.mkdtemp(prefix="bench-outbox-"))
    print(f"bench-outbox: binary {binary}, state {work}", flush=True)

    # 1. Enqueue latency: one event per transaction (synchronous=FULL), as the agent commits.
    result = subprocess.run([binary, "outbox", "enqueue", "--state-dir", str(work), "--count", str(args.latency_samples),
                             "--persons", str(args.persons), "--quiet", "--latency"],
                            check=True, capture_output=True, text=True)
    match = re.search(r"p50=([\d.]+) p99=([\d.]+)", result.stderr)
    p50, p99 = float(match.group(1)), float(match.group(2))
    disk50, disk99 = fsync_latency(work)

    # 2. The rest of the backlog, committed faster (many events per transaction: same Store API).
    rest = args.events - args.latency_samples
    if rest > 0:
        subprocess.run([binary, "outbox", "enqueue", "--state-dir", str(work), "--count", str(rest),
                        "--persons", str(args.persons), "--quiet", "--batch", "1000"], check=True)

    # 3. Drain through the forwarder.
    server = FastServer()
    try:
        config = write_config(work, server.url, timeout_s=5, max_backoff_s=5)
        started = time.perf_counter()
        out = subprocess.run([binary, "outbox", "deliver", "--config", str(config), "--until-empty",
                              "--max-in-flight", str(args.max_in_flight)], check=True, capture_output=True, text=True).stdout
        elapsed = time.perf_counter() - started
        summary = json.loads(out.strip().splitlines()[-1])
        counts = server.count()
    finally:
        server.stop()
    assert summary["pending"] == 0, summary
    assert counts["stored"] == args.events, counts
    drain_rate = args.events / elapsed

    # 4. The reference: one curl process per event, in a shell loop, to a fresh server.
    export = subprocess.run([binary, "outbox", "export", "--state-dir", str(work), "--state", "sent"],
                            check=True, capture_output=True, text=True).stdout.splitlines()[: args.curl_events]
    bodies = work / "curl"
    bodies.mkdir()
    listing = []
    for index, line in enumerate(export):
        entry = json.loads(line)
        body = bodies / f"{index}.json"
        body.write_text(entry["body"])
        listing.append(f"{entry['idempotencyKey']} {body}")
    (work / "curl-list").write_text("\n".join(listing) + "\n")
    server = FastServer()
    try:
        loop = f"""while read -r key file; do
  curl -sS -o /dev/null -X POST -H 'Content-Type: application/json' -H "Idempotency-Key: $key" \\
    -H 'X-Device-Id: door-test' -H 'X-App-Version: bench' --data-binary "@$file" '{server.url}/v1/attendance/events'
done < '{work / "curl-list"}'"""
        started = time.perf_counter()
        subprocess.run(["bash", "-c", loop], check=True)
        curl_elapsed = time.perf_counter() - started
        curl_counts = server.count()
    finally:
        server.stop()
    assert curl_counts["stored"] == len(export), curl_counts
    curl_rate = len(export) / curl_elapsed

    print(f"enqueue latency (one event per commit, synchronous=FULL, n={args.latency_samples}): p50 {p50:.2f} ms  p99 {p99:.2f} ms   [target p99 <= 5 ms]")
    print(f"  this disk's own fdatasync: p50 {disk50:.2f} ms  p99 {disk99:.2f} ms (the floor of a durable commit)")
    print(f"drain: {args.events} events in {elapsed:.2f} s = {drain_rate:.0f} events/s ({args.max_in_flight} in flight, {args.persons} persons)   [target >= 2000/s]")
    print(f"curl loop: {len(export)} events in {curl_elapsed:.2f} s = {curl_rate:.0f} events/s")
    print(f"ratio: {drain_rate / curl_rate:.1f}x the curl loop   [target >= 20x]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
