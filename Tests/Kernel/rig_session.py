"""One boot of the real-kernel rig (scripts/qemu/rig) running Tests/Kernel/guest-tests.sh
against the virtual world on this host; the tests in test_kernel_rig.py assert on what the
guest recorded. A module of its own (not a conftest.py) so `pytest Tests` can collect this
folder and Tests/Integration together.

RIG_ARCH selects the guest: x86_64 (the default; the binary is BEACON_GATEWAY_BIN or
.build/debug/beacon-gateway) or aarch64 (Debian's arm64 kernel on QEMU's virt machine;
the binary is BEACON_GATEWAY_BIN_AARCH64 or the newest out/beacon-gateway*-aarch64 that
scripts/test-arm64 builds)."""

from __future__ import annotations

import copy
import importlib.util
import os
import pathlib
import platform
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
WORLD_DIR = REPO_ROOT / "Tests" / "World"
RIG = REPO_ROOT / "scripts" / "qemu" / "rig"
ARCH = os.environ.get("RIG_ARCH", "x86_64")
# Per guest architecture: the rig's cache folder (as scripts/qemu/rig names it), the
# binary's environment variable and default path, the ELF machine of a program the guest
# can run, and the C compiler (with its flags) for the guest's helpers.
ARCHES = {
    "x86_64": {"cache": "qemu", "bin_variable": "BEACON_GATEWAY_BIN", "bin": ".build/debug/beacon-gateway",
               "elf_machine": 0x3E, "cc": ["gcc"]},
    "aarch64": {"cache": "qemu-aarch64", "bin_variable": "BEACON_GATEWAY_BIN_AARCH64",
                "bin": "out/beacon-gateway*-aarch64", "elf_machine": 0xB7,
                # Static: the guest's layer of Debian packages has the C library, but a
                # helper that needs nothing from it cannot break with it.
                "cc": ["aarch64-linux-gnu-gcc", "-static"]},
}
if ARCH not in ARCHES:
    raise RuntimeError(f"RIG_ARCH={ARCH!r}: the rig knows {', '.join(ARCHES)}")
CACHE = pathlib.Path(os.environ.get("RIG_CACHE", REPO_ROOT / ".build" / ARCHES[ARCH]["cache"]))
SKIP_STATUS = 77
# Under TCG the guest is 15-20x slower than the host; the whole guest script takes about
# a minute on 2 idle cores. Generous, but bounded: CI must never hang here.
GUEST_TIMEOUT_S = int(os.environ.get("KERNEL_RIG_TIMEOUT", "600"))
PREPARE_TIMEOUT_S = 900

if str(WORLD_DIR) not in sys.path:
    sys.path.insert(0, str(WORLD_DIR))


def kernel_scenario() -> dict:
    """The world of the guest tests: the three fixed tags `scan` is checked against, and a
    walker (tag-walk, iBeacon 100:9, the person u_walk of run-config.sh) at the door for
    8 s of every 20 s, so a `run` of 40 s sees an arrival and a departure (checked out
    8 s after leaving: lost_after_s 3 + leave_after_s 5) whenever it starts."""
    from bgworld.scenarios import DEMO_UUID, THREE_TAGS

    scenario = copy.deepcopy(THREE_TAGS)
    scenario["name"] = "kernel-rig"
    scenario["tags"].append({
        "id": "tag-walk", "kind": "ibeacon", "uuid": DEMO_UUID, "major": 100, "minor": 9,
        "address": "C0:11:22:33:44:09", "interval_ms": 100,
        "path": [[0, None], [12, None], [12.01, 0.5], [20, 0.5]], "loop": True,
    })
    return scenario


def _integration_fixtures():
    """The WorldProcess of Tests/Integration/conftest.py, loaded under a name of its own."""
    path = REPO_ROOT / "Tests" / "Integration" / "conftest.py"
    spec = importlib.util.spec_from_file_location("integration_world_fixtures", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass
class GuestRun:
    """What one boot left behind: the guest's result files and its console output."""

    status: int
    console: str
    seconds: float
    results: pathlib.Path
    world_status: dict = field(default_factory=dict)
    # The world's status just before the guest asked for the controller outage (empty
    # when it did not ask), and the control channel's replies.
    world_status_before_outage: dict = field(default_factory=dict)
    outage_replies: list[str] = field(default_factory=list)
    skip_reason: str | None = None

    def text(self, name: str) -> str:
        path = self.results / name
        return path.read_text(errors="replace") if path.exists() else ""

    def exit_code(self, name: str) -> int | None:
        text = self.text(f"{name}.rc").strip()
        return int(text) if text.lstrip("-").isdigit() else None

    def console_tail(self, lines: int = 60) -> str:
        return "\n".join(self.console.splitlines()[-lines:])

    def explain(self, name: str) -> str:
        """Diagnostics of one recorded guest step for an assertion message."""
        return (f"\n--- {name}: exit {self.exit_code(name)}\n--- stderr:\n{self.text(name + '.err')[-3000:]}"
                f"\n--- stdout:\n{self.text(name + '.out')[-1500:]}\n--- guest console:\n{self.console_tail(30)}")


def rig(*args: str) -> list[str]:
    """The command line of scripts/qemu/rig for this session's guest architecture."""
    return [str(RIG), "--arch", ARCH, *args]


def elf_machine(path: pathlib.Path) -> int | None:
    """e_machine of an ELF file (little endian), None when it is not one."""
    with open(path, "rb") as file:
        header = file.read(20)
    if len(header) < 20 or header[:4] != b"\x7fELF":
        return None
    return int.from_bytes(header[18:20], "little")


def gateway_binary() -> pathlib.Path | None:
    """The binary the guest runs (None when there is none for this architecture)."""
    arch = ARCHES[ARCH]
    configured = os.environ.get(arch["bin_variable"])
    # (The release's name carries its version: the newest build of any.)
    built = sorted(REPO_ROOT.glob(arch["bin"]), key=lambda path: path.stat().st_mtime)
    path = pathlib.Path(configured) if configured else built[-1] if built else REPO_ROOT / arch["bin"]
    if not (path.is_file() and os.access(path, os.X_OK)):
        return None
    if elf_machine(path) != arch["elf_machine"]:
        raise RuntimeError(f"{path} is not an {ARCH} program")
    return path.resolve()


def missing_binary_reason() -> str:
    arch = ARCHES[ARCH]
    return f"beacon-gateway binary for {ARCH} not found (set {arch['bin_variable']} or build {arch['bin']})"


def runs_on_this_host() -> bool:
    """Whether the guest's programs also run here (the host-side checks need that)."""
    return platform.machine() == ARCH


def build_hci_attach() -> pathlib.Path:
    """The guest's N_HCI helper, compiled here for the guest's architecture (the guest sees
    this root). BlueZ's headers define only constants and structures: the host's copy
    serves a cross compiler too, from a folder of its own so that no other header of the
    host's comes with it."""
    source = REPO_ROOT / "Tests" / "Kernel" / "hci-attach.c"
    binary = CACHE / "bin" / "hci-attach"
    if not binary.exists() or binary.stat().st_mtime < source.stat().st_mtime:
        binary.parent.mkdir(parents=True, exist_ok=True)
        include = CACHE / "include"
        include.mkdir(exist_ok=True)
        if not (include / "bluetooth").exists():
            (include / "bluetooth").symlink_to("/usr/include/bluetooth")
        subprocess.run([*ARCHES[ARCH]["cc"], "-O2", "-Wall", "-Wextra", "-Werror", f"-I{include}",
                        "-o", str(binary), str(source)], check=True)
    return binary


def skip_reason(output: str) -> str:
    for line in output.splitlines():
        if "SKIP:" in line:
            return line.split("SKIP:", 1)[1].strip()
    return "the rig cannot run QEMU on this machine"


class OutageOperator:
    """The host's half of guest-tests.sh's controller outage: the guest writes
    results/controller-stop.request (resp. -start.request) into the share, this stops the
    world's controller (resp. lets it listen again) and answers with -stop.done."""

    # Stopped "for good": the guest says when it has seen enough of the outage, and
    # `stop-controller 0` then restarts the server at once.
    HOLD_S = 120

    def __init__(self, world, results: pathlib.Path) -> None:
        self.world = world
        self.results = results
        self.status_before: dict = {}
        self.replies: list[str] = []
        self._done: set[str] = set()

    def poll(self) -> None:
        for what, command in (("stop", f"stop-controller {self.HOLD_S}"), ("start", "stop-controller 0")):
            if what in self._done or not (self.results / f"controller-{what}.request").exists():
                continue
            self._done.add(what)
            if what == "stop":
                self.status_before = self.world.status()
            self.replies.append(self.world.control(command))
            (self.results / f"controller-{what}.done").write_text(self.replies[-1] + "\n")


def boot_guest(gateway: pathlib.Path) -> GuestRun:
    CACHE.mkdir(parents=True, exist_ok=True)
    log = CACHE / "guest-console.log"
    log.unlink(missing_ok=True)
    prepared = subprocess.run(rig("prepare"), cwd=REPO_ROOT, capture_output=True, text=True,
                              timeout=PREPARE_TIMEOUT_S)
    if prepared.returncode == SKIP_STATUS:
        return GuestRun(SKIP_STATUS, prepared.stderr, 0, CACHE, skip_reason=skip_reason(prepared.stderr))
    if prepared.returncode != 0:
        raise RuntimeError(f"rig prepare failed (exit {prepared.returncode}):\n{prepared.stderr[-3000:]}")
    attach = build_hci_attach()

    share = CACHE / "share-kernel-tests"
    shutil.rmtree(share, ignore_errors=True)
    share.mkdir(parents=True)
    world = _integration_fixtures().WorldProcess(kernel_scenario())
    try:
        command = [*rig("run"), "--hci-tcp", f"{world.hci_host}:{world.hci_port}",
                   "--timeout", str(GUEST_TIMEOUT_S), "--share", str(share), "--",
                   "env", f"BEACON_GATEWAY_BIN={gateway}", f"HCI_ATTACH_BIN={attach}",
                   "bash", "Tests/Kernel/guest-tests.sh"]
        started = time.monotonic()
        operator = OutageOperator(world, share / "results")
        # The console goes to a file as it comes (CI keeps it as the guest's log).
        with open(log, "w") as console:
            guest = subprocess.Popen(command, cwd=REPO_ROOT, stdout=console, stderr=subprocess.STDOUT)
            try:
                while guest.poll() is None:
                    operator.poll()
                    if time.monotonic() - started > GUEST_TIMEOUT_S + 60:
                        raise subprocess.TimeoutExpired(command, GUEST_TIMEOUT_S + 60)
                    time.sleep(0.05)  # polling the share, not waiting for an outcome
            finally:
                if guest.poll() is None:
                    guest.kill()
                    guest.wait()
        status = guest.returncode
        seconds = time.monotonic() - started
        output = log.read_text(errors="replace")
        world_status = world.status()
    finally:
        world.close()
    if status == SKIP_STATUS:
        return GuestRun(status, output, seconds, share / "results", skip_reason=skip_reason(output))
    return GuestRun(status, output, seconds, share / "results", world_status=world_status,
                    world_status_before_outage=operator.status_before, outage_replies=operator.replies)
