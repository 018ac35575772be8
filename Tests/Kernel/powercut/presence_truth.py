"""The agent's visits against the door's truth (run.py --workload run).

The truth is doorway.py's record of when each person was at the door, on this host's
wall clock, and when the agent was scanning: from its `scanning` log line, seen on the
guest's console, to the cut. Events carry the guest's wall clock; each boot's offset from
this host's is measured when its agent starts (the guest prints its clock on the serial
console; the line reaches this host within milliseconds).

Per the restart rules of docs/presence.md:
- a *split visit*: a second checkin within one stay at the door (the first visit closed
  and a new one opened while the person never left), or a checkin while the person's
  visit was open (per person the outbox must alternate checkin, checkout of that visit);
- a *stale checkout*: one stamped earlier than the person's last sample known to be
  checkpointed durably, plus `lost_after_s`, less the slack of reading (reports gather up
  to a second between reads, more in a slow guest). Known durable: whatever the agent
  could have heard (at the door while it scanned, up to the slack before the checkout
  was decided) in the deciding boot, and in a boot that was cut, what it heard up to the
  documented staleness of a power cut before its cut — two checkpoint intervals (the
  non-durable checkpoint and the one being written may be lost) — and two named margins
  more, because the two intervals count on the agent's side, from a sample it has read
  to the durable checkpoint that holds it:
  - `READ_DELAY_S`: a sample reaches the engine only when its report is read, up to a
    second after it arrived (the transport gathers reports for a second at most); a
    sample heard just before a durable checkpoint but read after it waits for the next;
  - `DURABLE_WRITE_S`: the durable checkpoint holds its samples only once its commit
    (the WAL write and its fdatasync) has returned; a cut during it loses them.
  So a boot cut less than two intervals plus these margins after the person came into
  its scan may have kept none of that person's samples (the earlier boot's count);
- a *late checkout*: one stamped later than the last sample the agent could have heard
  at all, plus `lost_after_s` and the slack;
- a *lost checkout*: a visit still open after everyone left and the final boot's agent
  had time to decide;
- a *phantom checkin*: one while the person was not at the door.
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass, field

READ_SLACK_S = 2.5
# The margins on a cut boot's documented staleness (see the module's docstring): the
# transport's longest gathering of reports before they are read, and the time allowed a
# durable checkpoint's commit to reach the disk. An allowance, not a measurement: a guest
# held up longer than these (its reports read seconds late) is flagged, not excused.
READ_DELAY_S = 1.0
DURABLE_WRITE_S = 1.0


@dataclass
class BootClock:
    """One boot's agent, on this host's wall clock."""

    number: int
    offset_s: float  # guest wall clock minus this host's
    agent_started: float
    scanning: float | None
    ended: float  # the cut (or the final boot's end)
    cut: bool = True


@dataclass
class Figures:
    checkins: int = 0
    checkouts: int = 0
    split_visits: int = 0
    order_problems: int = 0
    stale_checkouts: int = 0
    late_checkouts: int = 0
    lost_checkouts: int = 0
    phantom_checkins: int = 0
    unplaced_events: int = 0
    visits_across_cuts: int = 0
    visits_held_through_cuts: int = 0
    # Checkout errors: stamped minus (the last moment known durable + lost_after_s), the
    # most negative; stamped minus (the last moment heard at all + lost_after_s), the
    # most positive, and the most negative of those across a cut (what the cuts cost).
    worst_early_s: float = 0.0
    worst_late_s: float = 0.0
    worst_early_across_cut_s: float = 0.0
    problems: list[str] = field(default_factory=list)

    def failures(self) -> int:
        return (self.split_visits + self.order_problems + self.stale_checkouts + self.late_checkouts
                + self.lost_checkouts + self.phantom_checkins + self.unplaced_events)


def _seconds(iso: str) -> float:
    return datetime.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


class PresenceTruth:
    def __init__(self, stretches: dict[str, list[list[float | None]]], boots: list[BootClock],
                 lost_after_s: float, checkpoint_interval_s: float) -> None:
        self.stretches = stretches
        self.boots = [boot for boot in boots if boot.agent_started is not None]
        self.lost_after_s = lost_after_s
        self.staleness_s = 2 * checkpoint_interval_s
        # What a cut may take of "last heard": the documented staleness and the margins.
        self.cut_loss_s = self.staleness_s + READ_DELAY_S + DURABLE_WRITE_S
        self.cuts = [boot.ended for boot in self.boots if boot.cut]

    def _boot_deciding(self, guest_seconds: float) -> BootClock | None:
        for boot in self.boots:
            moment = guest_seconds - boot.offset_s
            if boot.agent_started - READ_SLACK_S <= moment <= boot.ended + READ_SLACK_S:
                return boot
        return None

    def _host_time(self, guest_seconds: float, decided_by: BootClock) -> float:
        """A moment the agent stamped, on this host's clock: through the offset of the
        boot that lived then (a restored sample may come from an earlier boot)."""
        for boot in reversed(self.boots):
            if boot.number > decided_by.number:
                continue
            moment = guest_seconds - boot.offset_s
            if boot.agent_started - READ_SLACK_S <= moment <= boot.ended + READ_SLACK_S:
                return moment
        return guest_seconds - decided_by.offset_s

    def _last_heard(self, person: str, until: float, durable: bool = False) -> float | None:
        """The last moment up to `until` at which the person was at the door while the
        agent was scanning. `durable`: only what is known to be checkpointed durably by
        then: in a boot that was cut, what was heard up to the staleness and the margins
        before its cut (a boot cut sooner than that after scanning may have kept none of
        its samples)."""
        best = None
        for arrived, left in self.stretches.get(person, []):
            for boot in self.boots:
                if boot.scanning is None:
                    continue
                start = max(arrived, boot.scanning)
                cut_before = boot.cut and boot.ended < until
                kept_until = boot.ended - self.cut_loss_s if durable and cut_before else boot.ended
                end = min(left if left is not None else until, kept_until, until)
                if start <= end and (best is None or end > best):
                    best = end
        return best

    def _stretch_of(self, person: str, moment: float) -> int | None:
        for index, (arrived, left) in enumerate(self.stretches.get(person, [])):
            if arrived - READ_SLACK_S <= moment <= (left if left is not None else float("inf")) + READ_SLACK_S:
                return index
        return None

    def check(self, rows: list[dict]) -> Figures:
        figures = Figures()
        open_visit: dict[str, tuple[str, float]] = {}  # person -> (visitStart, checkin host time)
        stretch_checkins: dict[tuple[str, int], int] = {}
        for row in sorted(rows, key=lambda row: row["sequence"]):
            body = json.loads(row["body"])
            person, kind = row["personId"], row["type"]
            decided = self._boot_deciding(_seconds(body["decidedAt"]))
            if decided is None:
                figures.unplaced_events += 1
                figures.problems.append(f"sequence {row['sequence']}: decided at {body['decidedAt']}, in no boot's run")
                continue
            stamped = self._host_time(_seconds(body["timestamp"]), decided)
            if kind == "checkin":
                figures.checkins += 1
                if person in open_visit:
                    figures.order_problems += 1
                    figures.problems.append(f"sequence {row['sequence']}: second checkin for {person}'s open visit")
                open_visit[person] = (body["visitStart"], stamped)
                stretch = self._stretch_of(person, stamped)
                if stretch is None:
                    figures.phantom_checkins += 1
                    figures.problems.append(f"sequence {row['sequence']}: checkin of {person}, not at the door")
                else:
                    count = stretch_checkins.get((person, stretch), 0) + 1
                    stretch_checkins[(person, stretch)] = count
                    if count > 1:
                        figures.split_visits += 1
                        figures.problems.append(f"sequence {row['sequence']}: split visit, checkin {count} of "
                                                f"{person} within one stay at the door")
            elif kind == "checkout":
                figures.checkouts += 1
                opened = open_visit.pop(person, None)
                if opened is None or opened[0] != body["visitStart"]:
                    figures.order_problems += 1
                    figures.problems.append(f"sequence {row['sequence']}: checkout of {person} without its checkin")
                decided_at = _seconds(body["decidedAt"]) - decided.offset_s
                # (A sample read with the checkout, in the same read, may open the next
                # visit: timers due by a read fire before its samples are taken.)
                heard = self._last_heard(person, decided_at - READ_SLACK_S)
                if heard is None:
                    figures.unplaced_events += 1
                    figures.problems.append(f"sequence {row['sequence']}: checkout of {person}, never heard")
                    continue
                error = stamped - (heard + self.lost_after_s)
                across_cut = any(heard <= cut < decided_at for cut in self.cuts)
                kept = self._last_heard(person, decided_at - READ_SLACK_S, durable=True)
                durable_error = stamped - (kept + self.lost_after_s) if kept is not None else 0.0
                if opened is not None and any(opened[1] < cut < decided_at for cut in self.cuts):
                    figures.visits_across_cuts += 1
                    if any(self._present_through(person, cut) for cut in self.cuts if opened[1] < cut < decided_at):
                        figures.visits_held_through_cuts += 1
                figures.worst_early_s = min(figures.worst_early_s, durable_error)
                figures.worst_late_s = max(figures.worst_late_s, error)
                if across_cut:
                    figures.worst_early_across_cut_s = min(figures.worst_early_across_cut_s, error)
                if durable_error < -READ_SLACK_S:
                    figures.stale_checkouts += 1
                    figures.problems.append(f"sequence {row['sequence']}: checkout of {person} stamped "
                                            f"{-durable_error:.1f} s before its last sample known to be checkpointed "
                                            f"durably + lost_after_s "
                                            f"({'a cut between' if across_cut else 'no cut between'})")
                elif error > READ_SLACK_S:
                    figures.late_checkouts += 1
                    figures.problems.append(f"sequence {row['sequence']}: checkout of {person} stamped {error:.1f} s late")
        for person, (start, _) in open_visit.items():
            figures.lost_checkouts += 1
            figures.problems.append(f"{person}'s visit from {start} never checked out")
        return figures

    def _present_through(self, person: str, cut: float) -> bool:
        """At the door at the cut and still, without leaving, when the next boot scanned."""
        later = [boot.scanning for boot in self.boots if boot.scanning is not None and boot.scanning > cut]
        if not later:
            return False
        return any(arrived <= cut and (left is None or left >= min(later))
                   for arrived, left in self.stretches.get(person, []))
