"""The power-cut door workload's presence check (Tests/Kernel/powercut/presence_truth.py)
on made-up histories, on this host: a sound history passes, and each kind of fault it
must find — a split visit, a checkout stamped too early, a lost checkout, a phantom
checkin — is found."""

from __future__ import annotations

import datetime
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "powercut"))

from presence_truth import BootClock, PresenceTruth  # noqa: E402

LOST_AFTER_S = 3.0
CHECKPOINT_S = 2.0
# u_01 at the door 100-130 s and 160-170 s. Boot 1's agent scans from 92 s and is cut at
# 120 s (the person at the door); boot 2 scans from 142 s (the person gone meanwhile).
STRETCHES = {"u_01": [[100.0, 130.0], [160.0, 170.0]]}
BOOTS = [BootClock(1, 0.0, 90.0, 92.0, 120.0), BootClock(2, 0.0, 140.0, 142.0, 200.0, cut=False)]


def iso(seconds: float) -> str:
    moment = datetime.datetime.fromtimestamp(seconds, tz=datetime.timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def event(sequence: int, kind: str, stamped: float, decided: float, visit_start: float) -> dict:
    body = {"timestamp": iso(stamped), "decidedAt": iso(decided), "visitStart": iso(visit_start)}
    return {"sequence": sequence, "type": kind, "personId": "u_01", "body": json.dumps(body)}


def sound_history() -> list[dict]:
    return [
        event(1, "checkin", 100.5, 100.5, 100.5),
        # Restored open after the cut, checked out when the hold ended: stamped from the
        # last checkpointed sample (4 s before the cut: two checkpoint intervals).
        event(2, "checkout", 119.0, 145.0, 100.5),
        event(3, "checkin", 160.3, 160.3, 160.3),
        event(4, "checkout", 173.5, 179.6, 160.3),
    ]


def check(rows: list[dict]):
    return PresenceTruth(STRETCHES, BOOTS, LOST_AFTER_S, CHECKPOINT_S).check(rows)


def test_a_sound_history_passes():
    figures = check(sound_history())
    assert figures.failures() == 0, figures.problems
    assert (figures.checkins, figures.checkouts, figures.visits_across_cuts) == (2, 2, 1)
    assert figures.worst_early_across_cut_s == -4.0
    assert figures.worst_early_s == 0.0


def test_a_boot_cut_within_the_staleness_may_have_kept_none_of_its_samples():
    # A third boot scans 2 s (121.0-123.0, with the person back at the door) before its
    # cut: what it heard may all be lost, so the checkout may still be stamped from boot 1.
    boots = [BOOTS[0], BootClock(2, 0.0, 120.5, 121.0, 123.0), BootClock(3, 0.0, 140.0, 142.0, 200.0, cut=False)]
    figures = PresenceTruth(STRETCHES, boots, LOST_AFTER_S, CHECKPOINT_S).check(sound_history())
    assert figures.failures() == 0, figures.problems


def test_a_boot_cut_within_the_staleness_and_its_margins_may_have_kept_none_of_its_samples():
    # A second boot scans 4.3 s (121.0-125.3) with the person at the door before its cut:
    # 0.3 s more than the two checkpoint intervals, but a sample heard then is read up to
    # a second later and is durable only once the durable checkpoint's commit returns, so
    # the cut may have taken all of them; the checkout may still be stamped from boot 1.
    boots = [BOOTS[0], BootClock(2, 0.0, 120.5, 121.0, 125.3), BootClock(3, 0.0, 140.0, 142.0, 200.0, cut=False)]
    figures = PresenceTruth(STRETCHES, boots, LOST_AFTER_S, CHECKPOINT_S).check(sound_history())
    assert figures.failures() == 0, figures.problems


def test_a_boot_that_scanned_beyond_the_staleness_and_its_margins_must_have_kept_its_samples():
    # The second boot scans 121.0-135.0 and hears the person until 130.0, 5 s before its
    # cut: what it heard up to 129.0 (two intervals, the read delay and the durable write
    # before the cut) is on the disk, so a checkout stamped from boot 1's samples is stale.
    boots = [BOOTS[0], BootClock(2, 0.0, 120.5, 121.0, 135.0), BootClock(3, 0.0, 140.0, 142.0, 200.0, cut=False)]
    figures = PresenceTruth(STRETCHES, boots, LOST_AFTER_S, CHECKPOINT_S).check(sound_history())
    assert figures.stale_checkouts == 1, figures.problems
    assert figures.worst_early_s == -13.0


def test_a_checkout_stamped_before_the_documented_staleness_is_found():
    rows = sound_history()
    rows[1] = event(2, "checkout", 110.0, 145.0, 100.5)
    figures = check(rows)
    assert figures.stale_checkouts == 1, figures.problems


def test_a_second_checkin_within_one_stay_is_a_split_visit():
    rows = sound_history()[:3] + [event(4, "checkout", 163.0, 169.0, 160.3), event(5, "checkin", 169.5, 169.5, 169.5),
                                  event(6, "checkout", 173.5, 179.6, 169.5)]
    figures = check(rows)
    assert figures.split_visits == 1, figures.problems


def test_a_checkin_while_the_visit_is_open_is_out_of_order():
    rows = sound_history()
    rows[1] = event(2, "checkin", 119.0, 119.0, 119.0)
    figures = check(rows)
    assert figures.order_problems >= 1, figures.problems


def test_a_visit_never_checked_out_is_a_lost_checkout():
    figures = check(sound_history()[:3])
    assert figures.lost_checkouts == 1, figures.problems


def test_a_checkin_with_nobody_at_the_door_is_a_phantom():
    rows = sound_history()
    rows[2] = event(3, "checkin", 150.0, 150.0, 160.3)
    figures = check(rows)
    assert figures.phantom_checkins == 1, figures.problems
