"""The door the power-cut test's `run` workload watches (run.py --workload run): the
virtual world on this host, its controller the guest's hci0, with one iBeacon tag per
person, each moved to the door (1 m) and away (out of range) on a random schedule of its
own. Every move is recorded on this host's wall clock: the ground truth the agent's
events are checked against (presence_truth.py).

Stays and absences are drawn so that every kind of cut comes: short visits inside one
boot, visits open through a cut and its outage, persons leaving while the door is dark.
An absence is longer than `lost_after_s + leave_after_s` plus a margin, so a door that
hears every advertisement checks out each stay before the next one begins."""

from __future__ import annotations

import random
import threading
import time

from bgworld.scenarios import DEMO_UUID

GATEWAY_ID = "door-power-cut"
MAJOR = 400
AT_THE_DOOR_M = 1.0

# The agent's presence timings in this test (compressed: a boot lasts tens of seconds).
# Checkpoints come every leave_after_s / 3 = 2 s (docs/presence.md, "Restart rules").
PRESENCE = {"window_s": 2.0, "min_samples": 2, "lost_after_s": 3.0, "leave_after_s": 6.0, "away_after_s": 10.0}


def checkpoint_interval_s() -> float:
    """docs/presence.md: every leave_after_s / 3, at least 1 s and at most 60 s apart."""
    return min(60.0, max(1.0, PRESENCE["leave_after_s"] / 3))


def person_id(index: int) -> str:
    return f"u_{index + 1:02d}"


def tag_id(index: int) -> str:
    return f"tag-{index + 1:02d}"


def scenario(persons: int) -> dict:
    tags = [{"id": tag_id(i), "kind": "ibeacon", "uuid": DEMO_UUID, "major": MAJOR, "minor": i + 1,
             "address": f"C0:44:55:66:77:{i + 1:02X}", "interval_ms": 100, "distance": AT_THE_DOOR_M}
            for i in range(persons)]
    return {"name": "power-cut-door", "tags": tags}


def gateway_config(persons: int, state_dir: str, url: str, ca_file: str) -> str:
    """The gateway.toml of the guest's `run` (hci0, the host's event server over HTTPS)."""
    lines = ["[gateway]", f'id = "{GATEWAY_ID}"', 'site = "S_CUT"', 'door = "cut"', f'state_dir = "{state_dir}"', "",
             "[bluetooth]", 'transport = "hci0"', "tag_interval_ms = 100", "", "[presence]"]
    lines += [f"{name} = {value}" for name, value in PRESENCE.items()]
    lines += ["", "[server]", f'url = "{url}"', f'ca_file = "{ca_file}"', "timeout_s = 30", "max_backoff_s = 1"]
    for i in range(persons):
        lines += ["", "[[person]]", f'id = "{person_id(i)}"', "require_proof = false", "  [[person.tag]]",
                  f'  id = "{tag_id(i)}"', f'  ibeacon = "{DEMO_UUID}:{MAJOR}:{i + 1}"']
    return "\n".join(lines) + "\n"


class Doorway:
    """Moves the world's tags on their schedules; `stretches` is the truth: per person,
    [arrived, left] on this host's wall clock (left None while at the door)."""

    def __init__(self, world, persons: int, rng: random.Random, stay_s=(4.0, 50.0), away_s=(12.0, 40.0)) -> None:
        margin = 3.0
        if away_s[0] < PRESENCE["lost_after_s"] + PRESENCE["leave_after_s"] + margin:
            raise ValueError("absences must outlast lost_after_s + leave_after_s")
        self.world = world
        self.persons = persons
        self.rng = rng
        self.stay_s, self.away_s = stay_s, away_s
        self.stretches: dict[str, list[list[float | None]]] = {person_id(i): [] for i in range(persons)}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._drive, name="doorway", daemon=True)
        for i in range(persons):
            self.world.control(f"set-distance {tag_id(i)} off")

    def start(self) -> "Doorway":
        self._thread.start()
        return self

    def _move(self, index: int, arrive: bool) -> None:
        self.world.control(f"set-distance {tag_id(index)} {AT_THE_DOOR_M if arrive else 'off'}")
        now = time.time()  # after the world took it: the tag advertises (or not) from here on
        if arrive:
            self.stretches[person_id(index)].append([now, None])
        else:
            self.stretches[person_id(index)][-1][1] = now

    def _drive(self) -> None:
        # Each person starts away, for a random part of an absence (so arrivals spread out).
        next_move = {i: time.time() + self.rng.uniform(0, self.away_s[1]) for i in range(self.persons)}
        present = {i: False for i in range(self.persons)}
        while not self._stop.is_set():
            index = min(next_move, key=next_move.get)
            # A scheduler's wait for its next moment (or the stop), not a wait for an outcome.
            if self._stop.wait(max(0.0, next_move[index] - time.time())):
                return
            present[index] = not present[index]
            self._move(index, present[index])
            span = self.stay_s if present[index] else self.away_s
            next_move[index] = time.time() + self.rng.uniform(*span)

    def everyone_leaves(self) -> None:
        """Stop the schedules and take every tag away: the final boot's agent must then
        check out every visit still open."""
        self._stop.set()
        self._thread.join()
        for i in range(self.persons):
            if self.stretches[person_id(i)] and self.stretches[person_id(i)][-1][1] is None:
                self._move(i, False)

    def stays(self) -> int:
        return sum(len(stretches) for stretches in self.stretches.values())
