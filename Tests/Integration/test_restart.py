"""Restarts that never split a visit (docs/presence.md, "Restart rules"), with the real
binary against the virtual world: `kill -9` in the middle of visits with compressed
timings, and a power cut at default timings.

A restart used to count a restored visit's leave timer from a "last heard" up to two
minutes stale, before the controller had been given a chance to hear the person: a
person standing at the door was checked out at the restart, stamped tens of seconds
early, and checked in again a moment later. Now a restored visit stays open until the
scan has run for `lost_after_s`, and what is stored of "last heard" is at most a third of
`leave_after_s` old after a crash (docs/presence.md).

Every wait polls the agent's log or its outbox; the waits on the wall clock are the
scenario itself (how long a person stands at the door, how long the door is dark)."""

from __future__ import annotations

import time

import pytest

from conftest import wait_until
from test_run import (CHECKIN_LINE, agents, count, events_of, millis, outbox, scenario, tag_id,  # noqa: F401 - fixtures
                      wait_rows, world_tag, write_config)

# lost 2 s, leave 4 s: at every restart the old rule checked the person out at once.
COMPRESSED = {
    "enter_rssi": -70, "exit_rssi": -75, "window_s": 1.0, "min_samples": 2,
    "lost_after_s": 2, "leave_after_s": 4, "away_after_s": 5,
}
# The defaults of docs/presence.md, written out (an empty [presence] would do the same).
DEFAULTS = {
    "enter_rssi": -70, "exit_rssi": -75, "window_s": 3.0, "min_samples": 2,
    "lost_after_s": 10, "leave_after_s": 180, "away_after_s": 60,
}
# Any state: on the old rule the visit came back UNCONFIRMED, and what a test shows is
# what then happened to it.
RESTORED = r"presence restored person(?:_id)?=u_01 state="
RESTORED_OPEN = r"presence restored person(?:_id)?=u_01 state=PRESENT"
HOLD_OVER = r"restored visits decided by the scan again"


def wait_for_hold_or_events(binary, config, agent, events_before: int):
    """Until the restored visit stops being held, or an event is stored (what the old rule
    did at once): the outbox then."""
    def check():
        rows = outbox(binary, config)
        if len(rows) > events_before or agent.lines(HOLD_OVER):
            return rows or [None]
        if agent.process.poll() is not None:
            raise AssertionError(f"the agent exited ({agent.process.returncode}); log:\n{agent.log()[-3000:]}")
        return None
    wait_until(check, 30, "the restored visit decided by the scan, or an event")
    return outbox(binary, config)


def stand(seconds: float) -> None:
    """The person stands at the door this long (the scenario, not a synchronisation)."""
    time.sleep(seconds)


def test_kill_9_twice_mid_visit_with_compressed_timings_keeps_one_visit_stamped_right(gateway_bin, world_factory,
                                                                                      agents, tmp_path):
    world = world_factory(scenario(world_tag(0, distance=1.0)))
    config = write_config(tmp_path, world.transport, [0], presence=COMPRESSED, log_level="debug")
    agent = agents(gateway_bin, config)
    wait_rows(gateway_bin, config, lambda rows: count(rows, "checkin") == 1, 20, "the checkin", agent)
    for restart in range(2):
        # Longer than lost_after_s + leave_after_s: a stale "last heard" ran out the timers.
        stand(8)
        agent.kill()  # SIGKILL with the person at the door
        agent = agents(gateway_bin, config)
        agent.wait_log(RESTORED)
        rows = wait_for_hold_or_events(gateway_bin, config, agent, 1)
        assert events_of(rows) == [("checkin", "u_01")], f"restart {restart + 1}: the visit was split: {events_of(rows)}"
        assert agent.lines(RESTORED_OPEN)
        # Heard throughout: a whole lost + leave more without an event.
        stand(COMPRESSED["lost_after_s"] + COMPRESSED["leave_after_s"] + 1)
        assert events_of(outbox(gateway_bin, config)) == [("checkin", "u_01")], agent.log()[-3000:]
    assert agent.lines(CHECKIN_LINE) == []
    left_at = time.time()
    world.control(f"set-distance {tag_id(0)} off")
    rows = wait_rows(gateway_bin, config, lambda rows: count(rows, "checkout") == 1, 20, "the checkout", agent)
    assert events_of(rows) == [("checkin", "u_01"), ("checkout", "u_01")]
    checkin, checkout = (row["event"] for row in rows)
    assert checkout["visitStart"] == checkin["visitStart"]
    # UNCONFIRMED at the last sample (read within a second of leaving) + lost_after_s.
    stamped = millis(checkout["timestamp"]) / 1000
    assert left_at + 2 - 0.5 <= stamped <= left_at + 2 + 1.5, (stamped - left_at, checkout)
    assert agent.stop() == 0


def test_kill_9_then_gone_before_the_restart_stamps_the_checkout_at_the_last_sample(gateway_bin, world_factory,
                                                                                      agents, tmp_path):
    world = world_factory(scenario(world_tag(0, distance=1.0)))
    config = write_config(tmp_path, world.transport, [0], presence=COMPRESSED, log_level="debug")
    first = agents(gateway_bin, config)
    wait_rows(gateway_bin, config, lambda rows: count(rows, "checkin") == 1, 20, "the checkin", first)
    stand(8)
    left_at = time.time()
    world.control(f"set-distance {tag_id(0)} off")
    first.kill()  # at the same moment: the store's "last heard" is all there is
    second = agents(gateway_bin, config)
    second.wait_log(RESTORED)
    rows = wait_rows(gateway_bin, config, lambda rows: count(rows, "checkout") == 1, 30, "the checkout", second)
    assert events_of(rows) == [("checkin", "u_01"), ("checkout", "u_01")]
    # Last heard as checkpointed: at most leave_after_s / 3 (1.33 s) before leaving.
    stamped = millis(rows[1]["event"]["timestamp"]) / 1000
    assert left_at + 2 - 1.34 - 0.5 <= stamped <= left_at + 2 + 0.5, (stamped - left_at, rows[1]["event"])
    assert second.lines(HOLD_OVER), "decided once the scan had its chance"
    assert second.stop() == 0


@pytest.mark.waits  # 205 s dark at default timings: run beside the suite by scripts/test
def test_power_cut_with_a_90_s_outage_at_default_timings_keeps_the_visit(gateway_bin, world_factory, agents, tmp_path):
    world = world_factory(scenario(world_tag(0, distance=1.0)))
    config = write_config(tmp_path, world.transport, [0], presence=DEFAULTS, log_level="debug")
    first = agents(gateway_bin, config)
    rows = wait_rows(gateway_bin, config, lambda rows: count(rows, "checkin") == 1, 30, "the checkin", first)
    checked_in = millis(rows[0]["event"]["timestamp"]) / 1000
    # What a power cut 115 s after the checkin leaves on the disk: the checkin's commit
    # (durable) and nothing of the relaxed checkpoint at one minute. Killed now, before
    # that checkpoint, the store holds exactly that.
    first.kill()
    assert time.time() - checked_in < 55, "killed before the first checkpoint"
    # Dark until 115 s (the cut) + 90 s (the outage, the Pi's boot included) after the checkin.
    stand(max(0.0, checked_in + 115 + 90 - time.time()))
    second = agents(gateway_bin, config)
    second.wait_log(RESTORED)
    rows = wait_for_hold_or_events(gateway_bin, config, second, 1)
    assert events_of(rows) == [("checkin", "u_01")], f"the visit was split: {events_of(rows)}"
    assert second.lines(RESTORED_OPEN)
    stand(3)
    assert events_of(outbox(gateway_bin, config)) == [("checkin", "u_01")]
    assert second.lines(CHECKIN_LINE) == []
    assert second.stop() == 0
