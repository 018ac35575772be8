"""A month at a busy door as a btsnoop capture, and what the door must decide from it
(scripts/month-replay; docs/reliability.md, "A month at a busy door").

Each day: 500 visits of enrolled persons (phones with resolvable private addresses
that rotate every 15 minutes, resolved through the persons' IRKs), 300 passers-by (half
of them enrolled persons walking past at a weak signal, half phones nobody enrolled),
and four fixed devices that advertise day and night. The door is busy from 07:00 to
19:00 UTC; the night keeps the capture's clock moving, so every visit of the day is
checked out before midnight.

A visit, on the default presence settings (docs/presence.md): the phone is first heard
at the arrival A at about −60 dBm, again at A + 1 s (two samples in the window: the
check-in, its visit starting at A + 1 s exactly), then every 7–8.5 s (under
`lost_after_s`) until its last report L; the checkout comes `lost_after_s` + `leave_after_s`
later, stamped L + `lost_after_s`. A passer-by of the roster is heard once a second for
10–25 s at −84…−78 dBm (never above `enter_rssi`): no event.

Every record time is a multiple of 20 ms, so the reports of one replayed read
(`BTSnoopReplayTransport`: up to 10 ms apart) all carry exactly their recorded time, and
the expected check-in and checkout times are exact.

The roster: 300 persons in the configuration file; the server's roster holds 100 more
(revision r-1) who visit from day 2 on (the first roster fetch races the replay's first
night), and on the roster day becomes revision r-2: 30 removed (they no longer come from
that day on) and 40 added (they come from the second day after it)."""

from __future__ import annotations

import bisect
import calendar
import hashlib
import json
import pathlib
import random
import sys
from dataclasses import dataclass, field

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "Tests" / "World"))

from bgworld import ad, btsnoop, hcibytes  # noqa: E402

DAY_MS = 86_400_000
GRID_MS = 20
ORIGIN_MS = calendar.timegm((2026, 10, 5, 0, 0, 0)) * 1000
VISITS_PER_DAY = 500
PASSERS_BY_PER_DAY = 300
FILE_PERSONS = 300
SERVER_PERSONS = 100
REMOVED = 30
ADDED = 40
FIXED_DEVICES = 4
FIXED_INTERVAL_MS = 60_000
RPA_ROTATION_MS = 900_000
OPEN_MS = 7 * 3_600_000
LAST_ARRIVAL_MS = 18 * 3_600_000 + 1_800_000
STAY_MS = (60_000, 1_200_000)
# A person's visits and walks-by keep this far apart (their checkout must have come).
PERSON_GAP_MS = 600_000
LOST_AFTER_MS = 10_000
LEAVE_AFTER_MS = 180_000
GATEWAY_ID = "door-month"


@dataclass
class Person:
    id: str
    irk: bytes
    rotation_offset_ms: int
    payload: bytes
    source: str  # "file" or "server"
    first_day: int = 1
    last_day: int = 10**9
    busy: list[tuple[int, int]] = field(default_factory=list)

    def free(self, start: int, end: int) -> bool:
        return all(end + PERSON_GAP_MS <= b or start >= e + PERSON_GAP_MS for b, e in self.busy)


def rpa(irk: bytes, prand: int) -> int:
    """A resolvable private address of this IRK (Core Vol 3 Part H 2.2.2: ah(k, r))."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    prand = (prand & 0x3F_FFFF) | 0x40_0000
    encryptor = Cipher(algorithms.AES(irk), modes.ECB()).encryptor()
    block = encryptor.update(bytes(13) + prand.to_bytes(3, "big")) + encryptor.finalize()
    return prand << 24 | int.from_bytes(block[13:16], "big")


def report(address: int, address_type: int, data: bytes, rssi: int) -> bytes:
    entry = hcibytes.legacy_report(hcibytes.ADV_IND, address_type, address.to_bytes(6, "little"), data, rssi)
    return hcibytes.legacy_reports_event([entry])


def idempotency_key(person: str, kind: str, visit_start_ms: int) -> str:
    """docs/event-api.md: SHA-256 of personId|gatewayId|type|visitStartMillis."""
    return hashlib.sha256(f"{person}|{GATEWAY_ID}|{kind}|{visit_start_ms}".encode()).hexdigest()


class Schedule:
    """Which days the faults fall on, for a month of `days` days (at least 5)."""

    MINIMUM_DAYS = 8

    def __init__(self, days: int) -> None:
        if days < self.MINIMUM_DAYS:
            raise ValueError(f"a month replay needs at least {self.MINIMUM_DAYS} days")
        self.days = days
        self.server_away = max(2, round(days / 3))
        self.roster_change = max(self.server_away + 1, round(days / 2))
        self.disk_full = max(self.roster_change + 1, round(2 * days / 3))
        # The disk is full from noon to 18:00 of its day: the agent retries the disk on
        # its own (real-time) backoff, which in a replay running faster than real time
        # can take recorded hours more; six hours keep the check-ins held meanwhile
        # under the 1,000 the door holds before it holds check-ins (docs/reliability.md).
        self.disk_hours = (12, 18)
        # The day after the full disk takes the held events; two ordinary days follow.
        assert self.disk_full <= days - 3 and self.disk_full >= self.roster_change + 1


class Month:
    def __init__(self, days: int, seed: int) -> None:
        self.days = days
        self.seed = seed
        self.schedule = Schedule(days)
        self.rng = random.Random(seed)
        rng = self.rng
        self.persons: list[Person] = []
        for n in range(FILE_PERSONS):
            self.persons.append(self._person(f"u_{n:03d}", "file"))
        for n in range(SERVER_PERSONS + ADDED):
            person = self._person(f"s_{n:03d}", "server")
            person.first_day = 2
            if n < REMOVED:
                person.last_day = self.schedule.roster_change - 1
            if n >= SERVER_PERSONS:
                # A day's margin: the new roster is in force after the agent's next poll
                # (a second of real time), which a fast replay may take into the next day.
                person.first_day = self.schedule.roster_change + 2
            self.persons.append(person)
        self.fixed = [(rng.getrandbits(48) | 0xC000_0000_0000, ad.named(f"Fixed {k}")) for k in range(FIXED_DEVICES)]
        self._rpa_cache: dict[tuple[str, int], int] = {}

    def _person(self, person_id: str, source: str) -> Person:
        rng = self.rng
        return Person(person_id, rng.randbytes(16), rng.randrange(RPA_ROTATION_MS), ad.flags() + ad.manufacturer(0x004C, rng.randbytes(8)), source)

    # MARK: Rosters

    def server_roster(self, revision: int) -> dict:
        """The server's roster document (docs/fleet.md): r-1 before the roster day, r-2 from it."""
        members = [p for p in self.persons if p.source == "server"
                   and (p.first_day <= self.schedule.roster_change if revision == 1 else p.last_day >= self.schedule.roster_change)]
        return {"revision": f"r-{revision}", "mode": "active",
                "persons": [{"id": p.id, "tags": [{"id": f"phone-{p.id}", "irk": p.irk.hex()}]} for p in members]}

    def file_persons_toml(self) -> str:
        lines = []
        for p in self.persons:
            if p.source == "file":
                lines += ["[[person]]", f'id = "{p.id}"', "  [[person.tag]]", f'  id = "phone-{p.id}"', f'  irk = "{p.irk.hex()}"', ""]
        return "\n".join(lines)

    # MARK: The capture

    def address(self, person: Person, t_ms: int) -> int:
        epoch = (t_ms + person.rotation_offset_ms) // RPA_ROTATION_MS
        key = (person.id, epoch)
        address = self._rpa_cache.get(key)
        if address is None:
            prand = int.from_bytes(hashlib.sha256(f"{self.seed}|{person.id}|{epoch}".encode()).digest()[:3], "big")
            address = self._rpa_cache[key] = rpa(person.irk, prand)
        return address

    def day_records(self, day: int) -> tuple[list[tuple[int, bytes]], list[dict]]:
        """The day's reports (time, H4 event), in no particular order, and its visits."""
        rng = random.Random(f"{self.seed}/{day}")
        start = ORIGIN_MS + (day - 1) * DAY_MS
        records: list[tuple[int, bytes]] = []
        active = [p for p in self.persons if p.first_day <= day <= p.last_day]

        def grid(t: float) -> int:
            return int(t) // GRID_MS * GRID_MS

        visits = []
        for _ in range(VISITS_PER_DAY):
            for _attempt in range(1000):
                arrival = grid(start + rng.uniform(OPEN_MS, LAST_ARRIVAL_MS))
                stay = rng.uniform(*STAY_MS)
                person = rng.choice(active)
                if person.free(arrival, arrival + stay + LOST_AFTER_MS + LEAVE_AFTER_MS):
                    break
            else:
                raise RuntimeError("no free person for a visit: the roster is too small for the day")
            times = [arrival, arrival + 1000]
            while times[-1] + 8_500 <= arrival + stay:
                times.append(grid(times[-1] + rng.uniform(7_000, 8_500)))
            last = times[-1]
            person.busy.append((arrival, last + LOST_AFTER_MS + LEAVE_AFTER_MS))
            base = rng.randrange(-63, -57)
            for t in times:
                records.append((t, report(self.address(person, t), 1, person.payload, base + rng.randrange(-2, 3))))
            visits.append({"person": person.id, "day": day, "arrival_ms": arrival, "last_ms": last,
                           "checkin_ms": arrival + 1000, "checkout_ms": last + LOST_AFTER_MS})
        for k in range(PASSERS_BY_PER_DAY):
            t0 = grid(start + rng.uniform(OPEN_MS - 1_800_000, LAST_ARRIVAL_MS + 1_800_000))
            length = rng.randrange(10, 26)
            if k % 2 == 0:
                for _attempt in range(1000):
                    person = rng.choice(active)
                    if person.free(t0, t0 + length * 1000):
                        break
                else:
                    raise RuntimeError("no free person for a walk-by")
                person.busy.append((t0, t0 + length * 1000))
                base = rng.randrange(-83, -79)
                for i in range(length):
                    t = t0 + i * 1000
                    records.append((t, report(self.address(person, t), 1, person.payload, base + rng.randrange(-1, 2))))
            else:
                address = (rng.getrandbits(46) & 0x3FFF_FFFF_FFFF) | 0x4000_0000_0000  # an RPA nobody resolves
                payload = ad.flags() + ad.manufacturer(0x004C, rng.randbytes(8))
                rssi = rng.randrange(-90, -60)
                for i in range(length):
                    records.append((t0 + i * 1000, report(address, 1, payload, rssi + rng.randrange(-2, 3))))
        for index, (address, payload) in enumerate(self.fixed):
            t = start + index * 7_000
            while t < start + DAY_MS:
                records.append((t, report(address, 1, payload, -86 + index)))
                t += FIXED_INTERVAL_MS
        return records, visits

    def write(self, capture: pathlib.Path) -> dict:
        """Writes the capture day by day (streaming: one day in memory at a time) and
        returns what the replay must show: the byte offset of each hour (day by day, 24
        each) and the expected visits."""
        offsets = []
        visits = []
        reports = 0
        with capture.open("wb") as out:
            out.write(btsnoop.header())
            flags = btsnoop.FLAG_RECEIVED | btsnoop.FLAG_COMMAND_OR_EVENT
            for day in range(1, self.days + 1):
                records, day_visits = self.day_records(day)
                records.sort(key=lambda record: record[0])
                times = [t for t, _ in records]
                start = ORIGIN_MS + (day - 1) * DAY_MS
                for hour in range(24):
                    offsets.append(out.tell())
                    lower = bisect.bisect_left(times, start + hour * 3_600_000)
                    upper = bisect.bisect_left(times, start + (hour + 1) * 3_600_000)
                    out.write(b"".join(btsnoop.record(packet, flags, t * 1000) for t, packet in records[lower:upper]))
                reports += len(records)
                visits += day_visits
            end = out.tell()
        return {"days": self.days, "seed": self.seed, "hour_offsets": offsets, "end_offset": end, "reports": reports,
                "origin_ms": ORIGIN_MS, "visits": visits,
                "schedule": {"server_away": self.schedule.server_away, "roster_change": self.schedule.roster_change,
                             "disk_full": self.schedule.disk_full}}


if __name__ == "__main__":
    import time
    started = time.monotonic()
    month = Month(int(sys.argv[2]) if len(sys.argv) > 2 else 5, 1)
    facts = month.write(pathlib.Path(sys.argv[1]))
    print(json.dumps({k: v for k, v in facts.items() if k != "visits"}), f"{time.monotonic() - started:.1f} s")
