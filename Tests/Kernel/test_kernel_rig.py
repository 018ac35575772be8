"""The Pi path on a real Linux kernel: `beacon-gateway` on hci0 through HCI_CHANNEL_USER
and a gpio-sim chip driven with libgpiod 2, in a QEMU guest booted by scripts/qemu/rig.

One boot for the whole module (Tests/Kernel/guest-tests.sh records every step); each test
checks one promise. Skipped with the rig's reason when this machine cannot run QEMU, or
when the binary is not built. Run from the repository root:

    .venv/bin/python -m pytest -q -rs Tests/Kernel

and for the Raspberry Pi's architecture (Debian's arm64 kernel, the aarch64 binary):

    RIG_ARCH=aarch64 BEACON_GATEWAY_BIN_AARCH64=out/beacon-gateway-aarch64 .venv/bin/python -m pytest -q -rs Tests/Kernel
"""

from __future__ import annotations

import datetime
import json
import re
import statistics
import subprocess

import pytest

from rig_session import (  # first: puts Tests/World on sys.path
    ARCH, CACHE, REPO_ROOT, GuestRun, boot_guest, gateway_binary, missing_binary_reason, runs_on_this_host,
)

from bgworld import btsnoop  # noqa: E402
from bgworld.scenarios import DEMO_UUID, THREE_TAGS  # noqa: E402

TAGS = {f"{DEMO_UUID}:{tag['major']}:{tag['minor']}": tag for tag in THREE_TAGS["tags"]}


@pytest.fixture(scope="module")
def boot() -> GuestRun | str:
    """The one boot, or why it could not happen (reported once, by test_the_guest_ran)."""
    gateway = gateway_binary()
    if gateway is None:
        pytest.skip(missing_binary_reason())
    try:
        run = boot_guest(gateway)
    except Exception as error:  # noqa: BLE001 - reported by test_the_guest_ran
        return f"{type(error).__name__}: {error}"
    if run.skip_reason is not None:
        pytest.skip(f"kernel rig: {run.skip_reason}")
    if run.status != 0:
        return f"the guest script failed (exit {run.status}):\n{run.console_tail()}"
    return run


@pytest.fixture
def guest(boot) -> GuestRun:
    if isinstance(boot, str):
        pytest.fail("no guest run (see test_the_guest_ran)", pytrace=False)
    return boot


def test_the_guest_ran(boot):
    assert not isinstance(boot, str), boot
    print(f"kernel rig: the {ARCH} guest ran {boot.seconds:.0f} s")


def test_the_guest_script_runs_only_programs_the_guest_can_execute(guest):
    # The aarch64 guest sees this host's programs too (its root is shared): a step that
    # reaches one of them instead of the guest's own fails with ENOEXEC, which no other
    # test may depend on noticing.
    texts = [guest.console] + [path.read_text(errors="replace") for path in guest.results.glob("*.err")]
    unrunnable = [line for text in texts for line in text.splitlines() if "Exec format error" in line]
    assert not unrunnable, unrunnable[:10]


def json_lines(text: str) -> list[dict]:
    lines = []
    for raw in text.splitlines():
        raw = raw.strip()
        if raw:
            lines.append(json.loads(raw))
    return lines


def last_message(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    return lines[-1] if lines else ""


# --- the kernel and hci0 -------------------------------------------------------------------


def test_guest_runs_the_pinned_kernel(guest):
    assert guest.text("kernel").strip() == (CACHE / "kernel.abi").read_text().strip()
    assert guest.text("machine").strip() == ARCH


def test_the_world_answers_the_kernels_own_init_of_hci0(guest):
    # hci_uart registers hci0 and the kernel powers it on with its own init before any
    # user channel: every command of it must get its answer from the world's controller.
    attach = guest.text("attach.out")
    assert "hci0 up" in attach, f"{attach}\n{guest.text('attach.err')}\n{guest.console_tail()}"
    assert ", 0 failed" in attach, attach
    # One virtio console, one H4 session at the world, for the kernel and every scan (up
    # to the controller outage of `run`, after which QEMU connects again).
    status = guest.world_status_before_outage or guest.world_status
    assert len(status.get("sessions", [])) == 1, status


# --- beacon-gateway scan on hci0 (HCI_CHANNEL_USER) --------------------------------------


def test_absent_adapter_is_named_with_exit_code_1(guest):
    assert guest.exit_code("hci9") == 1, guest.explain("hci9")
    assert "no adapter hci9" in last_message(guest.text("hci9.err")), guest.explain("hci9")


def test_scan_over_the_user_channel_sees_the_three_tags_ordered_by_distance(guest):
    assert guest.exit_code("scan") == 0, guest.explain("scan")
    finals = {}
    for line in json_lines(guest.text("scan.out")):
        identity = (line.get("identity") or {}).get("ibeacon")
        if line.get("final") and identity in TAGS:
            finals[identity] = line
    assert set(finals) == set(TAGS), guest.explain("scan")

    by_distance = sorted(TAGS, key=lambda identity: TAGS[identity]["distance"])
    medians = [finals[identity]["rssi"]["median"] for identity in by_distance]
    assert medians[0] > medians[1] > medians[2], medians
    for identity, tag in TAGS.items():
        line = finals[identity]
        assert line["address"].upper() == tag["address"]
        assert line["addressType"] == "random"
        # The guest is slow, the controller is not: rates stay those of the tags (±25 %).
        expected = 1000.0 / tag["interval_ms"]
        assert abs(line["reportsPerSecond"] - expected) / expected <= 0.25, (tag["id"], line["reportsPerSecond"])


def test_a_second_user_channel_on_hci0_is_refused_naming_the_holder(guest):
    assert guest.exit_code("busy") == 1, guest.explain("busy")
    message = last_message(guest.text("busy.err"))
    assert "another program holds the user channel of hci0" in message, guest.explain("busy")


def test_closing_the_user_channel_hands_hci0_back_to_the_kernel(guest):
    assert "hci0" in guest.text("adapters-after-scan").split(), guest.text("adapters-after-scan")


# --- gpio-sim with libgpiod 2 (the v1 uAPI is gone from these kernels) --------------------


def gpio_facts(guest) -> dict[str, str]:
    facts = {}
    for line in guest.text("gpio.txt").splitlines():
        key, _, value = line.partition(" ")
        facts[key] = value.strip()
    return facts


def test_gpio_sim_chip_has_three_named_lines(guest):
    info = guest.text("gpioinfo.out")
    assert gpio_facts(guest).get("chip", "none") != "none", guest.console_tail()
    for offset, name in enumerate(["green", "amber", "red"]):
        assert f'line   {offset}:\t"{name}"' in info, info


def test_an_output_set_with_libgpiod_2_shows_on_the_simulated_pad(guest):
    facts = gpio_facts(guest)
    assert facts.get("green-held-high") == "1", facts
    # active low: logical on drives the (pulled-up) pad low.
    assert facts.get("amber-active-low-on") == "0", facts


def test_an_input_reads_the_simulated_pull(guest):
    facts = gpio_facts(guest)
    assert (facts.get("amber-pull-up"), facts.get("amber-pull-down")) == ("1", "0"), facts


def test_a_line_in_use_is_refused_as_busy(guest):
    assert guest.exit_code("gpio-busy") not in (0, None), guest.explain("gpio-busy")
    assert "busy" in guest.text("gpio-busy.err").lower(), guest.explain("gpio-busy")


# --- LEDs (docs/leds.md) and run on the real kernel: active once those land in the binary ---------


def pad_samples(guest, name: str) -> list[tuple[float, int, int, int]]:
    samples = []
    for line in guest.text(name).splitlines():
        fields = line.split()
        if len(fields) == 4 and all(field.lstrip("-").replace(".", "", 1).isdigit() for field in fields):
            samples.append((float(fields[0]), int(fields[1]), int(fields[2]), int(fields[3])))
    return samples


def skip_unless(guest, what: str) -> None:
    reason = guest.text(f"{what}.skip").strip()
    if reason:
        pytest.skip(reason)


def test_the_run_configuration_of_the_guest_is_valid(tmp_path):
    # Checked here, without a guest, so a config change never costs a boot to find.
    gateway = gateway_binary()
    if gateway is None:
        pytest.skip(missing_binary_reason())
    if not runs_on_this_host():
        pytest.skip(f"the {ARCH} binary does not run on this host (the guest's check-config covers it)")
    config = tmp_path / "gateway.toml"
    script = REPO_ROOT / "Tests" / "Kernel" / "run-config.sh"
    config.write_text(subprocess.run(["bash", str(script), str(tmp_path / "state"), "gpiochip0"],
                                     check=True, capture_output=True, text=True).stdout)
    checked = subprocess.run([str(gateway), "check-config", "--config", str(config)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr + checked.stdout


def test_check_config_accepts_the_run_configuration_in_the_guest(guest):
    skip_unless(guest, "run")
    assert guest.exit_code("check-config") == 0, guest.explain("check-config")


def states_in_order(samples) -> list[tuple[int, int, int]]:
    """The pads' (green, amber, red) states with repeats folded: what a person would see."""
    states: list[tuple[int, int, int]] = []
    for sample in samples:
        if not states or states[-1] != sample[1:]:
            states.append(sample[1:])
    return states


def test_leds_test_lights_green_amber_red_all_then_none_on_gpio_sim(guest):
    skip_unless(guest, "leds")
    assert guest.exit_code("leds-test") == 0, guest.explain("leds-test")
    seen = states_in_order(pad_samples(guest, "leds-test.samples"))
    expected = [(1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 1), (0, 0, 0)]
    remaining = iter(seen)
    assert all(state in remaining for state in expected), f"pad states {seen}, expected in order {expected}"


def test_a_busy_led_line_gives_the_promised_message(guest):
    skip_unless(guest, "leds")
    assert guest.exit_code("leds-busy") == 1, guest.explain("leds-busy")
    message = last_message(guest.text("leds-busy.err"))
    chip = guest.text("gpiochip").strip()
    assert f'{chip} line 2: busy (used by "gpioset")' in message, guest.explain("leds-busy")


def test_run_on_hci0_checks_the_walker_in_and_out(guest):
    skip_unless(guest, "run")
    assert guest.exit_code("run") == 0, guest.explain("run")
    decided = guest.text("run.out") + guest.text("run.err") + guest.text("outbox.out")
    assert "u_walk" in decided and "checkin" in decided and "checkout" in decided, guest.explain("run")


def advertiser(h4: bytes) -> str | None:
    """The advertiser's address of an LE (Extended) Advertising Report event of one report."""
    if len(h4) < 14 or h4[0] != 0x04 or h4[1] != 0x3E or h4[4] != 1:
        return None
    start = {0x02: 7, 0x0D: 8}.get(h4[3])
    if start is None or len(h4) < start + 6:
        return None
    return ":".join(f"{byte:02X}" for byte in reversed(h4[start:start + 6]))


def test_run_on_hci0_counts_each_report_from_its_kernel_stamp(guest):
    """At this quiet door `run` lets reports gather in the kernel for about a second
    between reads; its capture records each report at the time presence counts it
    (docs/presence.md, "The signal"). Counted from the kernel's stamps, a tag's
    consecutive reports stay about its advertising interval apart; counted from the read,
    most of them would share their read's time (a median gap of 0)."""
    skip_unless(guest, "run")
    path = guest.results / "run.btsnoop"
    assert path.exists(), guest.explain("run")
    addresses = {tag["address"]: tag for tag in THREE_TAGS["tags"]}
    times: dict[str, list[int]] = {address: [] for address in addresses}
    with path.open("rb") as capture:
        for record in btsnoop.read(capture):
            address = advertiser(record.data) if record.from_controller else None
            if address in times:
                times[address].append(record.timestamp_us)
    for address, stamps in times.items():
        gaps = sorted(later - earlier for earlier, later in zip(stamps, stamps[1:]))
        interval_us = addresses[address]["interval_ms"] * 1000
        assert len(gaps) >= 20, (address, len(gaps))
        median = statistics.median(gaps)
        assert median >= interval_us / 2, f"{address}: median gap {median / 1000:.1f} ms, interval {interval_us / 1000:g} ms"


def outage_times(guest) -> dict[str, float]:
    """guest-tests.sh's controller-outage.txt: guest clock times of "stopped" (asked the
    host to stop the controller), "red" (red LED first seen lit), "restarted" (asked for
    it back), "recovered" (steady green again); a line missing when that did not happen."""
    return guest_times(guest, "controller-outage.txt")


def guest_times(guest, name: str) -> dict[str, float]:
    """A guest-tests.sh file of "what seconds" lines: the guest clock time of each."""
    times = {}
    for line in guest.text(name).splitlines():
        key, _, value = line.partition(" ")
        try:
            times[key] = float(value)
        except ValueError:
            pass
    return times


def outage_window(guest) -> tuple[float, float] | None:
    """From the outage's start to a second after steady green came back (to the end of
    the run when it did not): the samples that the healthy patterns of docs/leds.md do not cover."""
    times = outage_times(guest)
    if "stopped" not in times:
        return None
    return times["stopped"], times.get("recovered", float("inf")) + 1.0


def log_seconds(line: str) -> float | None:
    """The UTC time at the start of a terminal log line (2026-11-22T06:10:23.456Z ...)."""
    stamp = line.split(" ", 1)[0]
    try:
        parsed = datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ")
    except ValueError:
        return None
    return parsed.replace(tzinfo=datetime.timezone.utc).timestamp()


def decision_lines(guest) -> list[str]:
    return [line for line in guest.text("run.err").splitlines() if "event=checkin" in line or "event=checkout" in line]


def test_run_leds_follow_section_9(guest):
    skip_unless(guest, "run")
    skip_unless(guest, "leds")
    samples = pad_samples(guest, "run.samples")
    assert len(samples) > 100, guest.explain("run")
    # All on at start (lamp test, 300 ms).
    assert any(sample[1:] == (1, 1, 1) for sample in samples[: len(samples) // 4]), samples[:40]
    # Then, from a second after the lamp test: green steady while scanning, amber off (no
    # server is configured), red off (the controller is healthy) ... (outside the
    # controller outage, which test_run_red_blinks_4_hz_while_the_controller_is_gone checks).
    lamp_test_end = max(sample[0] for sample in samples if sample[1:] == (1, 1, 1))
    window = outage_window(guest)
    healthy = lambda seconds: window is None or not window[0] <= seconds <= window[1]  # noqa: E731
    steady = [sample for sample in samples if sample[0] - lamp_test_end > 1.0 and healthy(sample[0])]
    assert sum(sample[1] for sample in steady) >= 0.8 * len(steady), states_in_order(steady)[:40]
    assert not any(sample[2] or sample[3] for sample in steady), states_in_order(steady)[:40]
    # ... and two short green blinks at each checkin and checkout: at least one dark
    # interval of green per decision (a busy CI host may miss the second of a pair).
    decided_at = [log_seconds(line) for line in decision_lines(guest)]
    assert len(decided_at) >= 2, guest.explain("run")
    decisions = sum(1 for seconds in decided_at if seconds is None or healthy(seconds))
    dips = sum(1 for before, after in zip(steady, steady[1:]) if before[1] == 1 and after[1] == 0)
    assert dips >= decisions, f"{dips} green blinks for {decisions} decisions: {states_in_order(steady)[:60]}"


def transitions(samples, pad: int) -> list[float]:
    """Times at which one pad (1 green, 2 amber, 3 red) changed value."""
    return [after[0] for before, after in zip(samples, samples[1:]) if before[pad] != after[pad]]


def test_run_red_blinks_4_hz_while_the_controller_is_gone_then_green_again(guest):
    skip_unless(guest, "run")
    skip_unless(guest, "leds")
    times = outage_times(guest)
    context = f"outage {times}, host replies {guest.outage_replies}\n{guest.explain('run')}"
    assert {"stopped", "red", "restarted"} <= set(times), context
    assert guest.outage_replies and guest.outage_replies[0].startswith("OK controller stopped"), context
    samples = pad_samples(guest, "run.samples")
    # While the controller is gone (from the red LED's first light to the host's restart):
    # red blinks at 4 Hz, i.e. 125 ms on, 125 ms off, 8 changes a second. Judged by the
    # count (a TCG guest's timers and the sampler both jitter), within a third.
    down = [sample for sample in samples if times["red"] <= sample[0] <= times["restarted"]]
    span = down[-1][0] - down[0][0] if len(down) > 1 else 0.0
    assert span >= 2.0, f"only {span:.2f} s of samples while down: {context}"
    changes = transitions(down, 3)
    rate = len(changes) / span
    assert 8 * 2 / 3 <= rate <= 8 * 4 / 3, f"red changed {len(changes)} times in {span:.2f} s: {states_in_order(down)[:40]}"
    lit = [after - before for before, after in zip(changes, changes[1:])]
    lit.sort()
    median = lit[len(lit) // 2]
    assert 0.08 <= median <= 0.2, f"median red phase {median * 1000:.0f} ms (125 expected): {lit}"
    # Not scanning: green off the whole time, but for the two blinks of a decision (the
    # walker, unheard, may be checked out meanwhile).
    decided_at = [seconds for seconds in map(log_seconds, decision_lines(guest)) if seconds is not None]
    unexplained = [sample for sample in down
                   if sample[1] and not any(0 <= sample[0] - seconds <= 0.6 for seconds in decided_at)]
    assert not unexplained, f"green lit while down at {[sample[0] for sample in unexplained][:20]}: {states_in_order(down)[:40]}"

    # The controller back: steady green, red off, from a second after recovery to the end.
    assert "recovered" in times, context
    after = [sample for sample in samples if sample[0] > times["recovered"] + 1.0]
    assert len(after) > 50, f"{len(after)} samples after recovery: {context}"
    assert sum(sample[1] for sample in after) >= 0.8 * len(after), states_in_order(after)[:40]
    assert not any(sample[3] for sample in after), states_in_order(after)[:40]
    # QEMU connected again: a new session at the world (a fresh controller, which the
    # agent reset and set scanning again: it delivered reports).
    sessions = guest.world_status.get("sessions", [])
    assert len(sessions) >= 2 and sessions[0]["closeReason"] == "controller stopped", guest.world_status
    assert sessions[-1]["reports"] > 0, guest.world_status



def reopen_times(guest) -> list[float]:
    """When the agent gave up on resets and reopened hci0: the times of its "controller
    down, recovering ... reopen=yes" lines. The host closes the transport before it logs
    them, so the close itself comes just before each (up to the kernel's ~2 s)."""
    lines = [line for line in guest.text("run.err").splitlines() if "reopen=yes" in line]
    return [seconds for seconds in map(log_seconds, lines) if seconds is not None]


# Red's phase is 125 ms; a gap this long means the loop stood still (closing the user
# channel of a dead controller blocks ~2 s in the kernel). Generous for a TCG guest.
LONGEST_RED_PHASE_S = 0.6


def test_run_red_keeps_blinking_while_the_agent_closes_and_reopens_hci0(guest):
    skip_unless(guest, "run")
    skip_unless(guest, "leds")
    times = outage_times(guest)
    context = f"outage {times}, host replies {guest.outage_replies}\n{guest.explain('run')}"
    assert {"red", "reopening", "restarted"} <= set(times), context
    # The whole time the controller was gone, which the guest stretched past the agent's
    # close and reopen of hci0.
    closes = [seconds for seconds in reopen_times(guest) if times["red"] <= seconds <= times["restarted"]]
    assert closes, f"no reopen=yes line while the controller was gone: {context}"
    samples = [sample for sample in pad_samples(guest, "run.samples") if times["red"] <= sample[0] <= times["restarted"]]
    assert len(samples) > 20 and samples[-1][0] - closes[0] >= 2.0, f"{len(samples)} samples while down: {context}"
    sampler_gap = max(after[0] - before[0] for before, after in zip(samples, samples[1:]))
    changes = [samples[0][0]] + transitions(samples, 3) + [samples[-1][0]]
    gaps = [after - before for before, after in zip(changes, changes[1:])]
    longest = max(gaps)
    at = changes[gaps.index(longest)] - closes[0]
    print(f"kernel rig: longest red phase while down {longest * 1000:.0f} ms, from {at:+.2f} s "
          f"of the reopen=yes line (sampler's longest gap {sampler_gap * 1000:.0f} ms)")
    # A stall of the sampler's can only lengthen a phase as measured, never shorten one (a
    # change it missed merges two phases): a pass holds whatever the sampler did, and a
    # phase too long while the sampler stalled says nothing about the agent.
    assert longest <= LONGEST_RED_PHASE_S or sampler_gap < LONGEST_RED_PHASE_S / 2, (
        f"the sampler stalled {sampler_gap * 1000:.0f} ms (red's longest phase as measured: "
        f"{longest * 1000:.0f} ms): {context}")
    assert longest <= LONGEST_RED_PHASE_S, (
        f"red stood still {longest * 1000:.0f} ms from {at:+.2f} s of the reopen=yes line "
        f"(the event loop blocked in closing hci0?): {states_in_order(samples)[:40]}")


def assert_amber_blinks_4_hz(samples, start: float, end: float, what: str, context: str) -> None:
    """Amber at 4 Hz (8 changes a second, judged by the count within a third, as red's
    blink) between the two guest clock times, whatever else is lit."""
    window = [sample for sample in samples if start <= sample[0] <= end]
    span = window[-1][0] - window[0][0] if len(window) > 1 else 0.0
    assert span >= 2.0, f"only {span:.2f} s of samples {what}: {context}"
    rate = len(transitions(window, 2)) / span
    assert 8 * 2 / 3 <= rate <= 8 * 4 / 3, f"amber changed at {rate:.1f}/s {what}: {states_in_order(window)[:40]}"


def disk_trouble_times(guest) -> dict[str, float]:
    """guest-tests.sh's disk-trouble.txt: guest clock times of "full" (the agent's line
    seen), "freed" (the filler removed), "recovered" (its line seen)."""
    return guest_times(guest, "disk-trouble.txt")


def test_run_on_a_full_disk_blinks_amber_4_hz_and_scans_until_space_is_freed(guest):
    skip_unless(guest, "disk")
    times = disk_trouble_times(guest)
    context = f"times {times}\n{guest.explain('disk')}"
    assert guest.exit_code("disk") == 0, context
    assert {"full", "freed", "recovered"} <= set(times), context
    log = guest.text("disk.err")
    trouble = [line for line in log.splitlines() if "events cannot be stored" in line]
    assert len(trouble) == 1 and 'cause="disk full"' in trouble[0], context
    assert len([line for line in log.splitlines() if "events are stored again" in line]) == 1, context
    assert "controller up" in log, f"the door did not scan: {context}"
    samples = pad_samples(guest, "disk.samples")
    assert_amber_blinks_4_hz(samples, times["full"] + 0.5, times["freed"], "while full", context)
    # Space back: amber dark (no server configured), from a second after recovery.
    after = [sample for sample in samples if sample[0] > times["recovered"] + 1.0]
    assert len(after) > 20, f"{len(after)} samples after recovery: {context}"
    assert not any(sample[2] for sample in after), states_in_order(after)[:40]


def test_run_on_ext4_gone_read_only_holds_its_decisions_blinks_amber_and_loses_nothing_stored(guest):
    """guest-tests.sh's readonly_run: an ext4 error (errors=remount-ro) under the running
    agent. Every decision is accounted for: stored before the error (and found, in order,
    after e2fsck), or held and counted at the stop (on 7.x kernels the file system stays
    read-only until unmounted, which the agent's open database prevents while it runs)."""
    skip_unless(guest, "readonly")
    times = guest_times(guest, "readonly.txt")
    context = f"times {times}\nmounts {guest.text('readonly-mounts.txt')}\n{guest.explain('readonly')}"
    assert {"stored", "error", "trouble", "stopping"} <= set(times), context
    assert guest.exit_code("readonly") == 0, context
    log = guest.text("readonly.err").splitlines()
    # The first failed write is a plain I/O error to SQLite (statvfs does not say read-only
    # either); the reopened connection is read-only: at most one more line, then no more.
    trouble = [line for line in log if "events cannot be stored" in line]
    assert 1 <= len(trouble) <= 2 and "cause=read-only" in trouble[-1], context
    assert not [line for line in log if "events are stored again" in line], context
    assert any("controller up" in line for line in log), f"the door did not scan: {context}"
    # Decisions are logged once stored: all before the error.
    decisions = [line for line in log if "event=checkin" in line or "event=checkout" in line]
    assert decisions and all((log_seconds(line) or 0) < times["error"] for line in decisions), context
    samples = pad_samples(guest, "readonly.samples")
    assert_amber_blinks_4_hz(samples, times["trouble"] + 0.5, times["stopping"], "while read-only", context)
    # Accounted for: the held ones counted at the stop, the others stored.
    lost = [line for line in log if "events not stored at shutdown" in line]
    assert len(lost) == 1, context
    held = int(re.search(r"\bcount=(\d+)", lost[0]).group(1))
    assert held >= 1, f"the door decided nothing while read-only: {context}"
    assert guest.exit_code("readonly-umount") == 0 and guest.exit_code("readonly-mount") == 0, context
    assert guest.exit_code("readonly-fsck") in (0, 1), guest.text("readonly-fsck.txt")
    assert guest.exit_code("readonly-outbox") == 0, guest.explain("readonly-outbox")
    rows = json_lines(guest.text("readonly-outbox.out"))
    assert [row["type"] for row in rows] == [line_type(line) for line in decisions], context
    assert [row["sequence"] for row in rows] == list(range(1, len(rows) + 1)), rows


def line_type(line: str) -> str:
    return "checkin" if "event=checkin" in line else "checkout"
