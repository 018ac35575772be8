"""The installer's guide, docs/raspberry-pi.md, followed on the Raspberry Pi's architecture:
one boot of scripts/qemu/pi-image's system (Debian trixie arm64 with systemd, bluetoothd,
sudo and the user pi) on Debian's arm64 kernel, with hci0 from the virtual world and a
simulated gpiochip0. The guest (Tests/Kernel/guide-runner.sh) installs the arm64 .deb and
runs the guide's commands in the guide's order, as pi, exactly as written (the steps come
from the guide itself: Tests/Kernel/guide_steps.py); each test here checks what the guide
says of one of them. Run by scripts/test-kernel-arm64; from the repository root:

    RIG_ARCH=aarch64 .venv/bin/python -m pytest -q -rs Tests/Kernel/test_guide.py

Skipped on the x86_64 rig (the guide is for the Pi), and with the reason when there is no
arm64 .deb in out/ or this machine cannot build the system or run QEMU."""

from __future__ import annotations

import json
import pathlib
import re
import shutil
import subprocess
import time
from dataclasses import dataclass

import pytest

import guide_steps
from rig_session import ARCH, CACHE, REPO_ROOT, SKIP_STATUS, _integration_fixtures, build_hci_attach, kernel_scenario, rig

PI_IMAGE = REPO_ROOT / "scripts" / "qemu" / "pi-image"
RUNNER = REPO_ROOT / "Tests" / "Kernel" / "guide-runner.sh"
EXAMPLE_CONFIG = REPO_ROOT / "config" / "gateway.example.toml"
# The boot, the install and the guide's own waits (scans and calibration: 80 s) under TCG.
GUEST_TIMEOUT_S = 1200
NEXT_VERSION_SUFFIX = "+guide1"


@dataclass
class StepResult:
    number: int
    line: int
    user: str
    expect: int
    command: str
    rc: int | None
    out: str
    err: str
    start: float
    end: float

    def explain(self) -> str:
        return (f"\nguide line {self.line}, as {self.user}: $ {self.command}\nexit {self.rc} (expected {self.expect})"
                f"\n--- stdout:\n{self.out[-3000:]}\n--- stderr:\n{self.err[-3000:]}")


@dataclass
class GuideRun:
    status: int
    console: str
    seconds: float
    results: pathlib.Path
    steps: list[StepResult]

    def text(self, name: str) -> str:
        path = self.results / name
        return path.read_text(errors="replace") if path.exists() else ""

    def step(self, command: str) -> StepResult:
        """The one step of this command (as the guide writes it, without its comment;
        placeholders filled in), or the one that starts so when COMMAND ends in "*"."""
        if command.endswith("*"):
            found = [step for step in self.steps if step.command.startswith(command[:-1])]
        else:
            found = [step for step in self.steps if guide_steps.without_comment(step.command) == command]
        assert len(found) == 1, f"{len(found)} steps are {command!r}: the guide changed? {[s.command for s in self.steps]}"
        return found[0]

    def pads(self) -> list[tuple[float, int, int, int]]:
        """(time, green, amber, red) at each change of the LEDs' pads."""
        samples = []
        for raw in self.text("pads.txt").splitlines():
            fields = raw.split()
            if len(fields) == 4:
                samples.append((float(fields[0]), int(fields[1]), int(fields[2]), int(fields[3])))
        return samples


def newest_deb() -> pathlib.Path | None:
    debs = sorted(REPO_ROOT.glob("out/beacon-gateway_*_arm64.deb"), key=lambda path: path.stat().st_mtime)
    return debs[-1] if debs else None


def deb_version(deb: pathlib.Path) -> str:
    return subprocess.run(["dpkg-deb", "-f", str(deb), "Version"], capture_output=True, text=True, check=True).stdout.strip()


def next_version_of(deb: pathlib.Path, folder: pathlib.Path) -> pathlib.Path:
    """The same package as a later version (section 10's upgrade exercises the maintainer
    scripts and dpkg's handling of the files, which are the same)."""
    tree = folder / "next-tree"
    subprocess.run(["dpkg-deb", "-R", str(deb), str(tree)], check=True)
    control = tree / "DEBIAN" / "control"
    version = deb_version(deb) + NEXT_VERSION_SUFFIX
    control.write_text(re.sub(r"^Version: .*$", f"Version: {version}", control.read_text(), flags=re.MULTILINE))
    # gzip, fast: unpacked under TCG in the guest.
    next_deb = folder / f"beacon-gateway_{version}_arm64.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zgzip", "-z1", "--build", str(tree), str(next_deb)],
                   check=True, capture_output=True)
    shutil.rmtree(tree)
    return next_deb


def toml_tables(text: str) -> list[tuple[str, str]]:
    """(header, text) of each table of a TOML file, the text before the first as header ""."""
    tables: list[tuple[str, list[str]]] = [("", [])]
    for line in text.splitlines(keepends=True):
        if re.match(r"^\[", line):
            tables.append((line.strip(), []))
        tables[-1][1].append(line)
    return [(header, "".join(lines)) for header, lines in tables]


def guide_configuration(guide: guide_steps.Guide) -> str:
    """What the test writes where the guide says to edit gateway.toml: the package's
    example without [server] (the test's system has no site server), the guide's own
    `config` blocks in place of the example's tables of the same name."""
    replacements = {}
    for block in guide.blocks:
        if block.kind == "config":
            header = next(line.strip() for line in block.lines if line.startswith("["))
            replacements[header] = "\n".join(block.lines) + "\n\n"
    parts = []
    for header, text in toml_tables(EXAMPLE_CONFIG.read_text()):
        if header == "[server]":
            continue
        parts.append(replacements.pop(header, text))
    assert not replacements, f"the guide's config blocks {list(replacements)} are not tables of the example"
    return "".join(parts)


def boot_guide() -> GuideRun | str:
    if ARCH != "aarch64":
        pytest.skip("the guide's test runs on the aarch64 rig (scripts/test-kernel-arm64)")
    deb = newest_deb()
    if deb is None:
        pytest.skip("no out/beacon-gateway_*_arm64.deb (scripts/build-release --arch aarch64 makes it)")
    if shutil.which("dpkg-deb") is None:
        pytest.skip("dpkg-deb is not installed")
    built = subprocess.run([str(PI_IMAGE)], cwd=REPO_ROOT, capture_output=True, text=True, timeout=3600)
    if built.returncode == SKIP_STATUS:
        pytest.skip(f"kernel rig: {built.stderr.strip().splitlines()[-1]}")
    if built.returncode != 0:
        return f"scripts/qemu/pi-image failed (exit {built.returncode}):\n{built.stderr[-3000:]}"
    image = pathlib.Path(built.stdout.strip().splitlines()[-1])

    guide = guide_steps.load()
    version = deb_version(deb)
    share = CACHE / "share-guide"
    shutil.rmtree(share, ignore_errors=True)
    files = share / "files"
    files.mkdir(parents=True)
    shutil.copy(deb, files / f"beacon-gateway_{version}_arm64.deb")
    next_deb = next_version_of(deb, files)
    shutil.copy(REPO_ROOT / "scripts" / "install.sh", files / "install.sh")
    # The token the site's server gave the installer (no server here: any line).
    (files / "token").write_text("guide-test-token\n")
    shutil.copy(build_hci_attach(), share / "hci-attach")
    shutil.copy(RUNNER, share / "guide-runner.sh")
    (share / "gateway.toml").write_text(guide_configuration(guide))
    versions = {"version": version, "new-version": deb_version(next_deb)}
    (share / "guide-plan.tsv").write_text(guide_steps.plan(guide, versions))

    log = CACHE / "guide-console.log"
    world = _integration_fixtures().WorldProcess(kernel_scenario())
    try:
        command = [*rig("run"), "--root", str(image), "--systemd", "--hci-tcp", f"{world.hci_host}:{world.hci_port}",
                   # The virt machine's own GPIO controller (PL061) would be gpiochip0; on
                   # the Pi that is the header, which the simulated chip stands for.
                   "--kernel-arg", "initcall_blacklist=pl061_gpio_driver_init",
                   "--timeout", str(GUEST_TIMEOUT_S), "--share", str(share), "--", "bash", "/run/rig/guide-runner.sh"]
        started = time.monotonic()
        with open(log, "w") as console:
            status = subprocess.run(command, cwd=REPO_ROOT, stdout=console, stderr=subprocess.STDOUT,
                                    timeout=GUEST_TIMEOUT_S + 120).returncode
        seconds = time.monotonic() - started
    finally:
        world.close()
    output = log.read_text(errors="replace")
    if status == SKIP_STATUS:
        pytest.skip(f"kernel rig: {output.strip().splitlines()[-1]}")
    results = share / "results"
    steps = []
    for row in (results / "steps.tsv").read_text().splitlines() if (results / "steps.tsv").exists() else []:
        number, line, user, expect, command = row.split("\t", 4)
        read = lambda suffix: (results / f"step-{number}.{suffix}").read_text(errors="replace") if (results / f"step-{number}.{suffix}").exists() else ""  # noqa: E731
        rc = read("rc").strip()
        steps.append(StepResult(int(number), int(line), user, int(expect), command,
                                int(rc) if rc.lstrip("-").isdigit() else None, read("out"), read("err"),
                                float(read("start") or 0), float(read("end") or 0)))
    if status != 0:
        return f"the guide's guest failed (exit {status}):\n" + "\n".join(output.splitlines()[-60:])
    return GuideRun(status, output, seconds, results, steps)


@pytest.fixture(scope="module")
def boot() -> GuideRun | str:
    try:
        return boot_guide()
    except (OSError, subprocess.SubprocessError, RuntimeError) as error:
        return f"{type(error).__name__}: {error}"


@pytest.fixture
def run(boot) -> GuideRun:
    if isinstance(boot, str):
        pytest.fail("no guest run (see test_the_guide_ran)", pytrace=False)
    return boot


# --- the markup itself (no guest needed) ---------------------------------------------------


def test_every_block_of_the_guide_is_marked_and_the_skipped_ones_say_why():
    guide = guide_steps.load()
    assert [step for step in guide.steps if step.kind == "run"], "the guide has no command the test runs"
    for number, command, reason in guide.skipped_lines:
        assert reason, (number, command)
    for block in guide.blocks:
        assert block.kind == "run" or block.kind == "config" or block.reason, block


def test_a_block_without_a_marker_is_refused():
    with pytest.raises(guide_steps.GuideError, match="line 3: fenced block without"):
        guide_steps.parse("# guide\n\n```\nrm -rf /\n```\n")
    with pytest.raises(guide_steps.GuideError, match="names lines the block does not have"):
        guide_steps.parse('<!-- guide-test: run; exit 1 "true" -->\n```\nfalse\n```\n')


def test_install_sh_shows_only_commands_the_guide_runs():
    """Every "$ " command of install.sh's closing text is one of the guide's commands that
    the guest runs, word for word (so it ran as shown, at the guide's point)."""
    guide = guide_steps.load()
    ran = {guide_steps.without_comment(step.text) for step in guide.steps if step.kind == "run"}
    shown = guide_steps.closing_commands()
    assert len(shown) >= 6, shown
    assert [command for command in shown if command not in ran] == []


# --- the guest ----------------------------------------------------------------------------


def test_the_guide_ran(boot):
    assert not isinstance(boot, str), boot
    print(f"guide: {len(boot.steps)} steps in {boot.seconds:.0f} s (guest console: {CACHE / 'guide-console.log'})")


def test_every_command_exits_as_the_guide_says(run):
    guide = guide_steps.load()
    assert len(run.steps) == len(guide.steps), f"the guest ran {len(run.steps)} of {len(guide.steps)} steps"
    wrong = [step.explain() for step in run.steps if step.rc != step.expect]
    assert not wrong, "\n".join(wrong)


def test_install_sh_installs_the_package_and_leaves_bluetoothd_to_section_4(run):
    step = run.step("sudo sh install.sh*")
    assert "adapters: hci0" in step.out, step.explain()
    assert "bluetooth.service left running" in step.out, step.explain()
    assert "== next steps" in step.out, step.explain()


def test_uname_says_aarch64_and_the_version_is_the_packages(run):
    assert run.step("uname -m").out.strip() == "aarch64"
    version = deb_version(newest_deb())
    assert version in run.step("beacon-gateway --version").out, run.step("beacon-gateway --version").explain()


def test_the_adapter_is_listed_and_not_blocked(run):
    assert "hci0" in run.step("ls /sys/class/bluetooth").out.split()
    rfkill = run.step("sudo rfkill list bluetooth")
    assert "Soft blocked: no" in rfkill.out and "Hard blocked: no" in rfkill.out, rfkill.explain()


def test_bluetoothd_is_disabled(run):
    assert run.step("systemctl is-enabled bluetooth").out.strip() == "disabled"


def test_leds_test_lights_green_amber_red_then_all_three(run):
    step = run.step("sudo -u beacon-gateway beacon-gateway leds test*")
    lit = [sample[1:] for sample in run.pads() if step.start <= sample[0] <= step.end and any(sample[1:])]
    order = [state for index, state in enumerate(lit) if index == 0 or lit[index - 1] != state]
    assert order == [(1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 1)], f"{order}\n{step.explain()}"


def test_check_config_passes(run):
    step = run.step("sudo beacon-gateway check-config")
    assert step.rc == 0, step.explain()


def test_the_first_scan_shows_the_person_of_the_tag_in_range(run):
    step = run.step("sudo beacon-gateway scan --seconds 10")
    # tag-1001 of the example is the world's tag at 1 m (iBeacon 100:1): person u_1001, Aiko.
    assert "Aiko" in step.out or "u_1001" in step.out, step.explain()
    lines = [json.loads(line) for line in run.step("sudo beacon-gateway scan --seconds 10 --json").out.splitlines() if line.strip()]
    assert lines and any("u_1001" in json.dumps(line) for line in lines), lines[:5]


def test_the_capture_is_a_btsnoop_file(run):
    data = (run.results / "door.btsnoop").read_bytes() if (run.results / "door.btsnoop").exists() else b""
    assert data[:8] == b"btsnoop\0" and len(data) > 1000, len(data)


def test_calibrate_suggests_thresholds(run):
    step = run.step("sudo beacon-gateway calibrate tag-1001*")
    assert "enter_rssi" in step.out and "exit_rssi" in step.out, step.explain()


def test_the_service_runs_and_says_so(run):
    step = run.step("systemctl status beacon-gateway")
    assert "Active: active (running)" in step.out, step.explain()
    assert re.search(r'Status: "scanning · \d+ present · outbox \d+', step.out), step.explain()


def test_the_leds_say_scanning_while_the_service_runs(run):
    """Section 9's table: green steady while scanning, amber off (no server configured),
    red off; from a second after `systemctl status` to the upgrade."""
    status, upgrade = run.step("systemctl status beacon-gateway"), run.step("sudo apt install ./beacon-gateway_*")
    before = [sample for sample in run.pads() if sample[0] <= status.end + 1.0]
    window = [sample for sample in run.pads() if status.end + 1.0 < sample[0] < upgrade.start]
    # The state at the window's start is the last change before it.
    states = before[-1:] + window
    assert states and all(sample[3] == 0 and sample[2] == 0 for sample in states), states[:20]
    # Steady green, but for the double blinks of decisions.
    dark = sum(1 for sample in states if sample[1] == 0)
    assert states[-1][1] == 1 and dark <= len(states) // 2, states[:40]


def test_the_journal_shows_the_persons_check_in(run):
    follow = run.step("journalctl -u beacon-gateway -f")
    assert "event=checkin" in follow.out or "controller up" in follow.out, follow.explain()
    person = run.step("journalctl -u beacon-gateway PERSON_ID=u_1001")
    assert "event=checkin" in person.out and "u_1001" in person.out, person.explain()
    assert "u_1002" not in person.out


def test_the_outbox_commands_work_while_the_service_runs(run):
    status = run.step("sudo -u beacon-gateway beacon-gateway outbox status")
    assert "pending" in status.out, status.explain()


def test_the_upgrade_keeps_the_outbox_and_restarts_the_service(run):
    upgrade = run.step("sudo apt install ./beacon-gateway_*")
    assert NEXT_VERSION_SUFFIX in upgrade.out, upgrade.explain()
    assert run.text("after-active.txt").strip() == "active", run.text("after-active.txt") + run.text("after-show.txt")
    events = [json.loads(line) for line in run.text("after-outbox.jsonl").splitlines() if line.strip()]
    checkins = [event for event in events if event.get("type") == "checkin"]
    assert checkins, run.text("after-outbox.err")
    # What section 9's `outbox status` counted before the upgrade is all still there.
    before = run.step("sudo -u beacon-gateway beacon-gateway outbox status").out
    last_before = int(re.search(r"last sequence: (\d+)", before).group(1))
    assert last_before >= 1 and len(events) >= last_before, f"{before}\n{events}"
    # Each stored once: one check-in of u_1001 across the upgrade (it stayed at the door).
    assert [event["sequence"] for event in events] == list(range(1, len(events) + 1)), events
