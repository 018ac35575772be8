"""Power cuts, not just kill -9: the gateway's store on a disk whose volatile write cache is
lost when the power goes.

Each boot of the kernel rig's guest (scripts/qemu/rig) gets /dev/vda, an ext4 disk served
by volatile_disk.py over NBD with a volatile cache of everything written since the last
flush. The guest (guest.sh) mounts it, checks what the last cut left (ext4 mount and
`e2fsck -fn`, the gateway opening its store with `outbox export`, `PRAGMA
integrity_check`), then commits synthetic events (`outbox enqueue`, one transaction per
event as the agent commits) and delivers them to the event server on this host (`outbox
deliver`). At a random moment this host kills QEMU -9 and then cuts the disk: the cache is
dropped ("drop") or a random half of its blocks reaches the image first ("subset"). One
boot = one cut; a last boot checks, drains the outbox to the server and checks again.

Ground truth, kept across boots: every "SEQUENCE KEY" line the guest printed (each only
after its commit returned), every event the server received (sent only after its commit)
and every event a check found in the outbox must be in every later check's outbox (else
lost); no sequence may ever carry two keys, and the server must create each key once
(else duplicated). Exit 1 on any loss, duplicate, store that does not open, integrity or
fsck failure; 77 when this machine cannot run the rig.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import pathlib
import random
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[2]
RIG = REPO / "scripts" / "qemu" / "rig"
sys.path[:0] = [str(HERE), str(REPO / "Tests" / "Integration"), str(REPO / "Tests" / "Kernel"),
                str(REPO / "Tests" / "World")]

import doorway  # noqa: E402

from eventserver import EventServer  # noqa: E402
from eventserver.harness import parse_acks  # noqa: E402
from presence_truth import DURABLE_WRITE_S, READ_DELAY_S, READ_SLACK_S, BootClock, PresenceTruth  # noqa: E402
from volatile_disk import VolatileDisk, VolatileDiskServer  # noqa: E402

SKIP = 77
LOAD_MARKER = "power-cut: load ("
CLOCK_LINE = re.compile(r"^power-cut: clock (\d+\.\d+)\s*$")
SCANNING_LINE = re.compile(r"\bscanning family=")
# The agent's line for a committed event (docs/logs-and-systemd.md), printed after the
# commit returned. A line cut short by the power has no complete visit_start at its end.
COMMIT_LINE = re.compile(r"\b(checkin|checkout) event=\1 person_id=(\S+) .*\bsequence=(\d+)\b.*"
                         r"\bvisit_start=(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)\s*$")


def committed_event(line: str) -> tuple[int, str] | None:
    """(sequence, idempotency key) of an agent's committed-event line; the key as
    docs/event-api.md builds it: SHA-256 of "personId|gatewayId|type|visitStartMillis"."""
    match = COMMIT_LINE.search(line)
    if not match:
        return None
    kind, person, sequence, visit_start = match.groups()
    start = datetime.datetime.fromisoformat(visit_start.replace("Z", "+00:00"))
    millis = (start - datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)) // datetime.timedelta(milliseconds=1)
    key = hashlib.sha256(f"{person}|{doorway.GATEWAY_ID}|{kind}|{millis}".encode()).hexdigest()
    return int(sequence), key


class DoorRig:
    """The `run` workload's door: the virtual world (the guest's hci0), the persons'
    schedules, the guest's hci-attach and the agent's configuration in the share."""

    def __init__(self, args, rng: random.Random, work: pathlib.Path, server_port: int, ca_file: str) -> None:
        import rig_session  # (imports the world's package; only this workload needs it)

        self.attach = str(rig_session.build_hci_attach())
        self.world = rig_session._integration_fixtures().WorldProcess(doorway.scenario(args.persons), seed=args.seed)
        self.hci_tcp = f"{self.world.hci_host}:{self.world.hci_port}"
        share = work / "share"
        share.mkdir(parents=True, exist_ok=True)
        (share / "gateway.toml").write_text(doorway.gateway_config(
            args.persons, "/mnt/disk/state", f"https://{GUEST_SIDE_HOST}:{server_port}", ca_file))
        self.doorway = doorway.Doorway(self.world, args.persons, rng).start()
        self.clocks: list[BootClock] = []

    def record(self, number: int, boot: "Boot", ended: float, cut: bool = True) -> None:
        if boot.clock_offset is not None:
            self.clocks.append(BootClock(number, boot.clock_offset, boot.agent_started, boot.scanning, ended, cut))

    def close(self) -> None:
        self.world.close()


class Ledger:
    """What must survive every cut, and what was found after each."""

    def __init__(self) -> None:
        self.keys_by_sequence: dict[int, set[str]] = {}
        self.must_survive: dict[str, int] = {}  # key -> sequence
        self.acknowledged: set[str] = set()
        self.lost: set[str] = set()
        self.checks = 0
        self.failures = {"mount": 0, "fsck": 0, "open": 0, "integrity": 0, "write_cache": 0, "floor": 0}
        self.floor = 0  # the highest sequence floor a check found
        self.problems: list[str] = []
        self.mount_options: str | None = None

    def note(self, sequence: int, key: str) -> None:
        self.keys_by_sequence.setdefault(sequence, set()).add(key)
        self.must_survive.setdefault(key, sequence)

    def acknowledge(self, acks: list[tuple[int, str]]) -> None:
        for sequence, key in acks:
            self.acknowledged.add(key)
            self.note(sequence, key)

    def received(self, events: dict) -> None:
        for key, body in events.items():
            self.note(int(body["sequence"]), key)

    def check(self, boot: int, results: pathlib.Path) -> bool:
        """The check a boot ran on what the previous cut left; False when it was cut first."""
        def text(name: str) -> str | None:
            path = results / name
            return path.read_text(errors="replace").strip() if path.exists() else None

        if text("mount.rc") not in (None, "0"):
            self.failures["mount"] += 1
            self.problems.append(f"boot {boot}: mount failed: {text('mount.err')}")
            return True
        if text("checked") is None:
            return False
        self.checks += 1
        if text("write-cache") != "write back":
            # A write-through disk gets every write flushed: the cut would test nothing.
            self.failures["write_cache"] += 1
            self.problems.append(f"boot {boot}: the guest sees the disk's cache as {text('write-cache')!r}")
        self.mount_options = text("mount-options")
        if text("fsck.rc") != "0":
            self.failures["fsck"] += 1
            self.problems.append(f"boot {boot}: e2fsck -fn exit {text('fsck.rc')}: {(text('fsck.txt') or '')[-600:]}")
        if text("no-store") is not None:
            outbox: dict[str, int] = {}
        elif text("export.rc") != "0":
            self.failures["open"] += 1
            self.problems.append(f"boot {boot}: outbox export exit {text('export.rc')}: {text('export.err')}")
            return True
        else:
            outbox = {}
            for line in (text("export.jsonl") or "").splitlines():
                row = json.loads(line)
                outbox[row["idempotencyKey"]] = row["sequence"]
            if text("integrity.txt") != "ok":
                self.failures["integrity"] += 1
                self.problems.append(f"boot {boot}: integrity_check: {text('integrity.txt')}")
            self.check_floor(boot, text("floor.txt"), outbox)
        self.compare(boot, outbox)
        return True

    def check_floor(self, boot: int, floor_text: str | None, outbox: dict[str, int]) -> None:
        """The sequence floor (gateway.sqlite-sequence) is written durably before the
        commit that uses a sequence at or above it: whatever a cut left, it must lie above
        every sequence ever committed (in this outbox, acknowledged, received, found by an
        earlier check) and never below what an earlier check found. Else a database moved
        aside after this cut would let a fresh one hand out a sequence again."""
        committed = max([*outbox.values(), *self.keys_by_sequence.keys()], default=0)
        if floor_text is None:
            if committed:
                self.failures["floor"] += 1
                self.problems.append(f"boot {boot}: no sequence floor file, sequences up to {committed} committed")
            return
        try:
            floor = int(floor_text.splitlines()[0])
        except (ValueError, IndexError):
            self.failures["floor"] += 1
            self.problems.append(f"boot {boot}: the sequence floor file holds {floor_text[:40]!r}")
            return
        if floor <= committed or floor < self.floor:
            self.failures["floor"] += 1
            self.problems.append(f"boot {boot}: sequence floor {floor}, but sequence {committed} committed "
                                 f"and an earlier check found {self.floor}")
        self.floor = max(self.floor, floor)

    def compare(self, boot: int, outbox: dict[str, int]) -> None:
        for key, sequence in self.must_survive.items():
            if key not in outbox and key not in self.lost:
                self.lost.add(key)
                self.problems.append(f"boot {boot}: sequence {sequence} ({key[:12]}…) is gone")
        for key, sequence in outbox.items():
            self.note(sequence, key)

    def duplicates(self) -> int:
        return sum(len(keys) - 1 for keys in self.keys_by_sequence.values())


# The host's loopback as the rig's guest sees it (`rig run --net`: $RIG_HOST).
GUEST_SIDE_HOST = "10.0.2.2"


class Boot:
    """One boot of the guest; `cut_at(...)` kills it -9 and cuts the disk's power."""

    def __init__(self, args, work: pathlib.Path, disk_port: int, server_port: int, mode: str, ca_file: str,
                 batch: int = 1, door: "DoorRig | None" = None) -> None:
        self.share = work / "share"
        shutil.rmtree(self.share / "results", ignore_errors=True)
        self.share.mkdir(parents=True, exist_ok=True)
        self.pidfile = work / "qemu.pid"
        self.pidfile.unlink(missing_ok=True)
        self.committing = threading.Event()  # set at the first acknowledged commit
        self.acks: list[tuple[int, str]] = []
        self.console = open(work / "console.log", "a")
        self.started = time.monotonic()
        self.load_started: float | None = None
        self.first_ack: float | None = None
        self.cut_at: float | None = None
        self.door = door
        # The door agent (workload run): its clock line, `scanning`, its committed events.
        self.agent_started: float | None = None
        self.clock_offset: float | None = None
        self.scanning: float | None = None
        rig_options, guest_env = [], []
        if door is not None:
            rig_options = ["--hci-tcp", door.hci_tcp]
            guest_env = ["env", f"HCI_ATTACH_BIN={door.attach}"]
        command = [str(RIG), "run", "--disk", f"nbd://127.0.0.1:{disk_port}", "--pidfile", str(self.pidfile),
                   "--net", "--share", str(self.share), "--timeout", str(args.boot_timeout), *rig_options, "--",
                   *guest_env, "bash", str(HERE / "guest.sh"), str(server_port), args.binary, mode, args.preload,
                   ca_file, str(batch)]
        self.process = subprocess.Popen(command, cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True, errors="replace")
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            seen = time.time()
            self.console.write(line)
            if line.startswith(LOAD_MARKER) and self.load_started is None:
                self.load_started = time.monotonic()
            if self.door is not None:
                acks = self._agent_line(line, seen)
            else:
                acks = parse_acks(line)
            if acks and self.first_ack is None:
                self.first_ack = time.monotonic()
                self.committing.set()
            self.acks.extend(acks)
        self.committing.set()  # the guest ended (or was cut): nobody waits for commits any more

    def _agent_line(self, line: str, seen: float) -> list[tuple[int, str]]:
        """The door agent's console: its clock (the offset of this guest's wall clock from
        this host's, late by the console's latency), `scanning` (the start of what it can
        hear; also the moment cuts are timed from), and its committed events."""
        clock = CLOCK_LINE.match(line)
        if clock and self.clock_offset is None:
            self.agent_started = seen
            self.clock_offset = float(clock.group(1)) - seen
        if self.scanning is None and SCANNING_LINE.search(line):
            self.scanning = seen
            self.load_started = time.monotonic()
            self.committing.set()
        commit = committed_event(line)
        return [commit] if commit else []

    def cut(self, disk: VolatileDisk, mode: str) -> dict:
        """kill -9 QEMU, wait until it is gone, then the disk loses its cache."""
        pid = None
        while pid is None and self.process.poll() is None:
            try:
                pid = int(self.pidfile.read_text())
            except (FileNotFoundError, ValueError):
                time.sleep(0.01)  # QEMU writes its pidfile first thing; nothing else to wait on
        if pid is not None:
            try:
                handle = os.pidfd_open(pid)
                self.cut_at = time.time()
                os.kill(pid, signal.SIGKILL)
                select.select([handle], [], [], 30)
                os.close(handle)
            except ProcessLookupError:
                pass
        outcome = disk.cut(mode)
        self.finish()
        return outcome

    def finish(self, timeout: float | None = None) -> int:
        code = self.process.wait(timeout=timeout)
        self.reader.join()
        self.console.close()
        return code


def first_commit(boot: Boot) -> str:
    if boot.first_ack is None or boot.load_started is None:
        return ""
    return f" (the first at {'scanning' if boot.door else 'load'}+{boot.first_ack - boot.load_started:.1f}s)"


def prepare_rig() -> None:
    result = subprocess.run([str(RIG), "prepare"], cwd=REPO, capture_output=True, text=True)
    if result.returncode == SKIP:
        print(f"power-cut: SKIP: {result.stderr.strip().splitlines()[-1]}")
        sys.exit(SKIP)
    if result.returncode != 0:
        print(f"power-cut: rig prepare failed ({result.returncode}): {result.stderr[-2000:]}")
        sys.exit(1)


def build_no_fsync_shim(work: pathlib.Path) -> str:
    source, library = work / "no-fsync.c", work / "no-fsync.so"
    source.write_text("int fsync(int fd) { (void)fd; return 0; }\n"
                      "int fdatasync(int fd) { (void)fd; return 0; }\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-o", str(library), str(source)], check=True)
    return str(library)


def make_image(path: pathlib.Path, megabytes: int) -> None:
    """ext4 made once on the host; the guest mounts it with the defaults (data=ordered,
    barriers on, journal checksums from metadata_csum)."""
    with open(path, "wb") as image:
        image.truncate(megabytes * 1024 * 1024)
    subprocess.run(["mkfs.ext4", "-q", "-F", "-b", "4096", "-T", "default", "-L", "powercut", str(path)], check=True)


def print_door_figures(stretches: dict, clocks: list[BootClock], presence) -> None:
    interval = doorway.checkpoint_interval_s()
    offsets = [clock.offset_s for clock in clocks]
    stays = sum(len(person_stretches) for person_stretches in stretches.values())
    print(f"door: {stays} stays at the door by {len(stretches)} persons; {presence.checkins} "
          f"checkins, {presence.checkouts} checkouts; {presence.visits_across_cuts} visits open across a cut, "
          f"{presence.visits_held_through_cuts} of them with the person at the door through the cut and its outage")
    print(f"split visits {presence.split_visits + presence.order_problems} (a second checkin within one stay "
          f"{presence.split_visits}, out of order {presence.order_problems}); phantom checkins "
          f"{presence.phantom_checkins}; lost checkouts {presence.lost_checkouts}; events in no boot's run "
          f"{presence.unplaced_events}")
    print(f"checkout stamps vs the truth (lost_after_s {doorway.PRESENCE['lost_after_s']:g} s after the person's last "
          f"sample known checkpointed durably, i.e. up to {2 * interval:g} s before a cut, checkpoints every "
          f"{interval:g} s, less {READ_DELAY_S:g} s of read delay and {DURABLE_WRITE_S:g} s for the durable "
          f"checkpoint's write): worst early {presence.worst_early_s:+.2f} s (allowed -{READ_SLACK_S} s of reading); "
          f"vs the last sample heard at all: worst late {presence.worst_late_s:+.2f} s (allowed +{READ_SLACK_S} s), "
          f"worst early across a cut {presence.worst_early_across_cut_s:+.2f} s; stale {presence.stale_checkouts}, "
          f"late {presence.late_checkouts}")
    if offsets:
        print(f"guest clock minus host clock {min(offsets):+.3f} … {max(offsets):+.3f} s over {len(offsets)} boots")


def check_door(stretches: dict, clocks: list[BootClock], final: list[dict]):
    truth = PresenceTruth(stretches, clocks, doorway.PRESENCE["lost_after_s"], doorway.checkpoint_interval_s())
    return truth.check(final)


def recheck(work: pathlib.Path) -> int:
    """The presence check again on a kept door run (its door-truth.json and final export)."""
    truth = json.loads((work / "door-truth.json").read_text())
    clocks = [BootClock(**clock) for clock in truth["boots"]]
    final_path = work / "share" / "results" / "export-final.jsonl"
    final = [json.loads(line) for line in final_path.read_text().splitlines()]
    presence = check_door(truth["stretches"], clocks, final)
    print_door_figures(truth["stretches"], clocks, presence)
    for problem in presence.problems[:20]:
        print(f"  {problem}")
    print("PASS" if presence.failures() == 0 else "FAIL")
    return 0 if presence.failures() == 0 else 1


def main() -> int:
    parser = argparse.ArgumentParser(prog="scripts/power-cut", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workload", choices=["enqueue", "run"], default="enqueue",
                        help="enqueue: `outbox enqueue` commits synthetic events (the default); run: the door agent "
                             "`beacon-gateway run` on hci0, the virtual world on this host moving --persons tagged "
                             "persons to the door and away, delivering to the event server")
    parser.add_argument("--persons", type=int, default=6, help="persons at the door (workload run)")
    parser.add_argument("--cuts", type=int, default=100)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--cut-mode", choices=["drop", "subset", "both"], default="both",
                        help="at the cut the disk's cache is dropped, a random half of it is written first, "
                             "or either at random per cut (default)")
    parser.add_argument("--binary", default=os.environ.get("BEACON_GATEWAY_BIN", str(REPO / ".build/debug/beacon-gateway")))
    parser.add_argument("--image-mb", type=int, default=256)
    parser.add_argument("--max-load-s", type=float, default=None,
                        help="cut at a random moment up to this long after the first commit (workload run: after "
                             "the agent's `scanning`); default 5 (run: 25)")
    parser.add_argument("--unflushed-share", type=float, default=0.5,
                        help="this share of the cuts waits, after its random moment, for the next write that leaves "
                             "the disk's cache non-empty and cuts there")
    parser.add_argument("--max-batch", type=int, default=4,
                        help="each boot commits transactions of 1 to this many events (picked per boot): the "
                             "agent's committer takes its whole waiting queue in one transaction")
    parser.add_argument("--mutant-no-fsync", action="store_true",
                        help="show that the test can fail: the guest's load runs with fsync and fdatasync made "
                             "no-ops (an LD_PRELOAD shim), so commits return before they are on the disk")
    parser.add_argument("--boot-timeout", type=int, default=300)
    parser.add_argument("--keep", help="work here and keep it (default: a temporary folder, removed on success)")
    parser.add_argument("--recheck", metavar="DIR",
                        help="only run the presence check again on a door run kept with --keep DIR")
    args = parser.parse_args()
    if args.recheck:
        return recheck(pathlib.Path(args.recheck))
    if args.cuts < 1:
        parser.error("--cuts must be positive")
    if args.max_batch < 1:
        parser.error("--max-batch must be positive")
    if not 1 <= args.persons <= 60:
        parser.error("--persons must be within 1…60")
    if args.max_load_s is None:
        args.max_load_s = 25.0 if args.workload == "run" else 5.0
    args.binary = str(pathlib.Path(args.binary).resolve())
    if not os.access(args.binary, os.X_OK):
        parser.error(f"no gateway binary at {args.binary} (build it, or set BEACON_GATEWAY_BIN)")
    prepare_rig()

    rng = random.Random(args.seed)
    work = pathlib.Path(args.keep) if args.keep else pathlib.Path(tempfile.mkdtemp(prefix="power-cut-"))
    work.mkdir(parents=True, exist_ok=True)
    args.preload = build_no_fsync_shim(work) if args.mutant_no_fsync else ""
    image = work / "disk.img"
    make_image(image, args.image_mb)
    disk = VolatileDisk(str(image), rng)
    disk_server = VolatileDiskServer(disk).start()
    # HTTPS: the guest reaches the host's loopback at the rig's address, which is not
    # loopback to the gateway, and plain http goes to loopback only (docs/event-api.md).
    events = EventServer(tls_dir=work / "tls", tls_addresses=("127.0.0.1", GUEST_SIDE_HOST)).start()
    ledger = Ledger()
    door = DoorRig(args, rng, work, events.port, events.ca_file) if args.workload == "run" else None
    mutant = ", MUTANT: no fsync" if args.preload else ""
    workload = f"run, {args.persons} persons, world {door.hci_tcp}" if door else "enqueue"
    print(f"power-cut: seed {args.seed}, {args.cuts} cuts ({args.cut_mode}){mutant}, workload {workload}, "
          f"work {work}, disk nbd port {disk_server.port}, event server {events.url}", flush=True)

    started = time.monotonic()
    modes = {"drop": 0, "subset": 0}
    early_cuts = 0
    frozen_cuts = 0
    batches: dict[int, int] = {}  # events per transaction -> boots
    boot_failures: list[str] = []
    typical_first_commit = 25.0
    try:
        for number in range(1, args.cuts + 1):
            mode = args.cut_mode if args.cut_mode != "both" else rng.choice(["drop", "subset"])
            batch = rng.randint(1, args.max_batch)
            batches[batch] = batches.get(batch, 0) + 1
            boot = Boot(args, work, disk_server.port, events.port, "run" if door else "load", events.ca_file, batch,
                        door)
            if rng.random() < 0.15:
                # A cut anywhere before the commits: the journal replay, the checks, the
                # store's opening, ...
                early_cuts += 1
                time.sleep(rng.uniform(0, typical_first_commit))
            else:
                if not boot.committing.wait(args.boot_timeout):
                    boot_failures.append(f"boot {number} {'scanned' if door else 'committed'} nothing within "
                                         f"{args.boot_timeout} s; see {work / 'console.log'}")
                elif door and boot.load_started is not None:
                    typical_first_commit = boot.load_started - boot.started
                elif boot.first_ack is not None:  # (else the guest ended: reported below)
                    typical_first_commit = boot.first_ack - boot.started
                time.sleep(rng.uniform(0, args.max_load_s))  # the random moment of the cut
                if rng.random() < args.unflushed_share:
                    # ... or the first moment after it when the disk holds unflushed writes.
                    disk.arm()
                    frozen_cuts += disk.frozen.wait(3.0)
            alive = boot.process.poll() is None
            outcome = boot.cut(disk, mode)
            modes[mode] += 1
            if not alive:
                boot_failures.append(f"boot {number} ended before its cut; see {work / 'console.log'}")
            ledger.check(number, work / "share" / "results")
            ledger.acknowledge(boot.acks)
            ledger.received(events.snapshot()["events"])
            if door:
                door.record(number, boot, boot.cut_at or time.time())
            moment = time.monotonic() - (boot.load_started or boot.started)
            load = "scanning+" if door else f"batch {batch} at load+"
            print(f"cut {number:3d} {mode:6s} {load if boot.load_started else 'at boot+'}{moment:5.1f}s: "
                  f"{len(boot.acks):4d} commits acknowledged{first_commit(boot)}, {outcome['unflushed_blocks']:3d} "
                  f"unflushed blocks ({outcome['persisted']} written at the cut); lost so far {len(ledger.lost)}, "
                  f"duplicated {ledger.duplicates()}, floor {ledger.floor} (failures {ledger.failures['floor']})", flush=True)
        cut_seconds = (time.monotonic() - started) / args.cuts

        # The last boot: check the last cut, deliver everything, check again. (The door:
        # everyone leaves first, and the agent runs until every visit is checked out.)
        if door:
            door.doorway.everyone_leaves()
        boot = Boot(args, work, disk_server.port, events.port, "final-run" if door else "final", events.ca_file,
                    door=door)
        code = boot.finish(timeout=args.boot_timeout + 60)
        results = work / "share" / "results"
        if code != 0 or not ledger.check(args.cuts + 1, results):
            boot_failures.append(f"the final boot exited {code}; see {work / 'console.log'}")
        if door:
            # (After its check of the last cut: these were committed after that check.)
            ledger.acknowledge(boot.acks)
            door.record(args.cuts + 1, boot, time.time(), cut=False)
        snapshot = events.snapshot()
        ledger.received(snapshot["events"])
        final_path = results / "export-final.jsonl"
        final = [json.loads(line) for line in final_path.read_text().splitlines()] if final_path.exists() else []
        ledger.compare(args.cuts + 1, {row["idempotencyKey"]: row["sequence"] for row in final})
    finally:
        disk_server.stop()
        events.stop()
        if door:
            door.close()

    created: dict[str, int] = {}
    for entry in snapshot["log"]:
        if entry["status"] == 201:
            created[entry["key"]] = created.get(entry["key"], 0) + 1
    created_twice = sum(count - 1 for count in created.values() if count > 1)
    undelivered = [row["sequence"] for row in final if row["idempotencyKey"] not in snapshot["events"]]
    presence = None
    if door:
        presence = check_door(door.doorway.stretches, door.clocks, final)
        (work / "door-truth.json").write_text(json.dumps(
            {"stretches": door.doorway.stretches, "boots": [vars(clock) for clock in door.clocks]}, indent=1))
    split_visits = presence.split_visits + presence.order_problems if presence else 0
    stale_checkouts = presence.stale_checkouts if presence else 0
    duplicated = ledger.duplicates() + created_twice + split_visits + stale_checkouts
    failures = ledger.failures

    print(f"cuts {args.cuts} (cache dropped {modes['drop']}, random half written {modes['subset']}; "
          f"{early_cuts} anywhere before the {'scan' if door else 'first commit'}, the rest while "
          f"{'deciding' if door else 'committing'}, {frozen_cuts} of them "
          f"at a write left unflushed); {cut_seconds:.1f} s per cut")
    if not door:
        print("boots by events per transaction: " + ", ".join(f"{size}: {count}" for size, count in sorted(batches.items())))
    print(f"events committed {len(final)} in the outbox at the end; {len(ledger.acknowledged)} acknowledged "
          f"on the console; {len(snapshot['events'])} received by the server")
    print(f"delivered {len(final) - len(undelivered)} of them")
    print(f"lost {len(ledger.lost)}")
    print(f"duplicated {duplicated} (a sequence under two keys {ledger.duplicates()}, a key created twice "
          f"{created_twice}" + (f", split visits {split_visits}, checkouts stamped before the checkpointed last "
                                f"sample less the staleness {stale_checkouts}" if presence else "") + ")")
    print(f"database open failures {failures['open']}; integrity failures {failures['integrity']}; "
          f"ext4 mount failures {failures['mount']}; e2fsck errors {failures['fsck']}; "
          f"boots that saw no volatile write cache {failures['write_cache']}")
    print(f"sequence floor failures {failures['floor']} (the highest floor found {ledger.floor}, the highest "
          f"sequence committed {max(ledger.keys_by_sequence, default=0)})")
    print(f"ext4 mounted {ledger.mount_options}")
    print(f"checks {ledger.checks} of {args.cuts + 1} boots (the others were cut before their check); "
          f"undelivered after the drain {len(undelivered)}")
    print(f"disk: {disk.stats['flushes']} flushes, {disk.stats['writes']} writes; at the cuts "
          f"{disk.stats['cut_blocks_dropped']} unflushed blocks dropped, {disk.stats['cut_blocks_persisted']} written")
    if presence:
        print_door_figures(door.doorway.stretches, door.clocks, presence)
    for problem in ledger.problems[:20] + (presence.problems[:20] if presence else []) + boot_failures[:5] \
            + disk_server.errors[:5]:
        print(f"  {problem}")
    ok = (not ledger.lost and duplicated == 0 and not any(failures.values()) and not boot_failures
          and not disk_server.errors and not undelivered and final and ledger.acknowledged
          and (presence is None or presence.failures() == 0))
    print("PASS" if ok else f"FAIL (kept {work})")
    if ok and not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
