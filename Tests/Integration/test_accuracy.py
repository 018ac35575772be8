"""Presence accuracy at a door: ten passers-by at 5 m are never checked in, three people
standing at 1 m through fades and dropouts are checked in once and out once, with the
checkout stamped when they left (docs/presence.md, "The signal").

Reports count from when they arrived: on the user channel by the kernel's stamps, on the
H4-over-TCP transport these tests use by the read, which lets reports gather for up to a
second; a presence deadline first reads what waits. The same test runs on the aarch64
binary under qemu-user (scripts/test-arm64), where the agent is about as slow as on a Pi 3
and reads are bunched the most. `BEACON_GATEWAY_ACCURACY_SEED` picks the world's radio
noise (scripts/accuracy-repeat runs it under several seeds)."""

from __future__ import annotations

import os
import time

from test_run import (agents, count, events_of, millis, person_id, scenario, wait_rows,  # noqa: F401 - fixtures
                      world_tag, write_config)

RESIDENTS = 3
PASSERS_BY = 10
# The door's defaults but for the timers, shortened so that a test takes under a minute.
PRESENCE = {
    "enter_rssi": -70, "exit_rssi": -75, "window_s": 3.0, "min_samples": 2,
    "lost_after_s": 2, "leave_after_s": 3, "away_after_s": 5,
}
LEAVE_AT_S = 38.0  # scenario time the residents walk away (out of range at once)


def resident_path(index: int) -> list:
    """At 1 m (about -59 dBm), fading to 2.5 m (-67: still above enter_rssi) for a second
    and gone for 0.8 s (under lost_after_s) in turns, each resident at another phase."""
    path = [[0, 1.0]]
    t = 3.0 + index
    while t + 6 < LEAVE_AT_S:
        path += [[t, 1.0], [t + 0.01, 2.5], [t + 1.0, 2.5], [t + 1.01, 1.0],
                 [t + 3.0, 1.0], [t + 3.01, None], [t + 3.8, None], [t + 3.81, 1.0]]
        t += 6.0
    path += [[LEAVE_AT_S, 1.0], [LEAVE_AT_S + 0.01, None], [LEAVE_AT_S + 100, None]]
    return path


# The passers' nearest point: 5 m, where the world's mean is -73.0 dBm, 3 dB under
# enter_rssi; one PDU in 25 still comes above it (σ 2 dB), so a door that took single
# reports would check every passer in. Nearer, the median of a window of those samples
# goes above enter_rssi now and then, and the rule then rightly checks that passer in. The
# rule and this world modelled (10 passers a run): at 4 m (-71.0) 31 of 3,000 runs with
# reads spread out and 125 of 3,000 with reads a second apart; at 4.5 m (-72.1) 1 of
# 50,000 with reads a second apart; at 5 m none of 70,000.
PASSER_NEAREST_M = 5.0


def passer_path(index: int) -> list:
    """Walks past: from 12 m to PASSER_NEAREST_M (under enter_rssi) in 3 s, 3 s there, and
    away, one every 3 s."""
    start = 2.0 + 3.0 * index
    return [[0, None], [start, None], [start + 0.01, 12.0], [start + 3, PASSER_NEAREST_M],
            [start + 6, PASSER_NEAREST_M], [start + 9, 12.0], [start + 9.01, None], [LEAVE_AT_S + 100, None]]


def test_passers_by_stay_out_and_residents_keep_one_visit_stamped_when_they_left(gateway_bin, world_factory, agents,
                                                                                 tmp_path):
    seed = int(os.environ.get("BEACON_GATEWAY_ACCURACY_SEED", "7"))
    tags = [world_tag(i, path=resident_path(i)) for i in range(RESIDENTS)]
    tags += [world_tag(RESIDENTS + i, path=passer_path(i)) for i in range(PASSERS_BY)]
    world = world_factory(scenario(*tags), seed=seed)
    world.control("mute")  # nobody is heard before the script starts
    config = write_config(tmp_path, world.transport, list(range(RESIDENTS + PASSERS_BY)), presence=PRESENCE)
    agent = agents(gateway_bin, config)
    agent.wait_log(r"controller up", timeout=60)
    started = time.time()
    world.control("restart-script")
    world.control("unmute")

    residents = [person_id(i) for i in range(RESIDENTS)]
    rows = wait_rows(gateway_bin, config, lambda rows: count(rows, "checkout") >= RESIDENTS, LEAVE_AT_S + 40,
                     "the residents' checkouts", agent)
    checked_in = sorted(row["personId"] for row in rows if row["type"] == "checkin")
    assert checked_in == residents, f"seed {seed}: {events_of(rows)}"
    for person in residents:
        assert [row["type"] for row in rows if row["personId"] == person] == ["checkin", "checkout"], events_of(rows)

    # Stamped when they left: last heard at LEAVE_AT_S, lost lost_after_s later. A report
    # may count up to a read later on this transport (a second at most while reports
    # gather), and the last one was sent up to an interval (100 ms) before they left.
    expected_ms = (started + LEAVE_AT_S + PRESENCE["lost_after_s"]) * 1000
    errors = {row["personId"]: millis(row["event"]["timestamp"]) - expected_ms
              for row in rows if row["type"] == "checkout"}
    print(f"seed {seed}: checkout timestamp minus when they left plus lost_after_s (ms): "
          + ", ".join(f"{person} {error:+.0f}" for person, error in sorted(errors.items())))
    for person, error in errors.items():
        assert -300 <= error <= 1300, f"{person}: checkout stamped {error:+.0f} ms from when they left"
    assert agent.stop() == 0
