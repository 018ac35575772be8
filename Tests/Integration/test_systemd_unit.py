"""The systemd unit (see docs/logs-and-systemd.md, docs/security.md): `systemd-analyze verify` is clean and
`systemd-analyze security --offline=true` rates the exposure 2.0 or lower, through
scripts/check-unit, which prints both."""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess

import pytest

from conftest import REPO_ROOT

CHECK_UNIT = REPO_ROOT / "scripts" / "check-unit"
UNIT = REPO_ROOT / "systemd" / "beacon-gateway.service"

pytestmark = pytest.mark.skipif(
    shutil.which("systemd-analyze") is None,
    reason="systemd-analyze not installed (Debian package systemd); the unit cannot be checked here",
)


def run_check(gateway_bin, unit) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "BEACON_GATEWAY_BIN": str(gateway_bin)}
    return subprocess.run([str(CHECK_UNIT), str(unit)], capture_output=True, text=True, env=env, timeout=120)


def exposure_of(output: str) -> float:
    match = re.search(r"^exposure: ([0-9.]+)", output, re.MULTILINE)
    assert match, output
    return float(match.group(1))


def test_unit_verifies_clean_and_exposure_is_at_most_2(gateway_bin):
    result = run_check(gateway_bin, UNIT)
    print(result.stdout)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "== systemd-analyze verify" in result.stdout
    assert "\nclean\n" in result.stdout
    assert exposure_of(result.stdout) <= 2.0


def test_unit_has_what_spec_asks():
    text = UNIT.read_text()
    settings: dict[str, list[str]] = {}
    for line in text.splitlines():
        if "=" in line and not line.lstrip().startswith("#") and not line.startswith("["):
            key, value = line.split("=", 1)
            settings.setdefault(key.strip(), []).append(value.strip())
    assert settings["Type"] == ["notify"]
    assert settings["NotifyAccess"] == ["main"]
    assert settings["WatchdogSec"] == ["30"]
    assert settings["Restart"] == ["on-failure"]
    assert settings["User"] == ["beacon-gateway"]
    assert "DynamicUser" not in settings
    assert settings["SupplementaryGroups"] == ["gpio"]
    assert set(settings["AmbientCapabilities"][0].split()) == {"CAP_NET_ADMIN", "CAP_NET_RAW"}
    assert set(settings["CapabilityBoundingSet"][0].split()) == {"CAP_NET_ADMIN", "CAP_NET_RAW"}
    assert settings["StateDirectory"] == ["beacon-gateway"]
    assert settings["ConfigurationDirectory"] == ["beacon-gateway"]
    assert settings["ExecReload"] == ["/bin/kill -HUP $MAINPID"]
    assert "char-gpiochip rw" in settings["DeviceAllow"]
    # Ordered after the time daemon's start, never waiting for synchronisation.
    assert "time-sync.target" in settings["After"]
    for key in ("Wants", "Requires", "BindsTo", "Requisite"):
        assert not any("time-sync.target" in value or "time-wait-sync" in value for value in settings.get(key, [])), key


def test_a_weakened_unit_is_refused(gateway_bin, tmp_path):
    weakened = tmp_path / "beacon-gateway.service"
    text = UNIT.read_text()
    for setting in ("ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes"):
        text = text.replace(setting + "\n", "")
    weakened.write_text(text)
    result = run_check(gateway_bin, weakened)
    assert result.returncode != 0, result.stdout
    assert exposure_of(result.stdout) > 2.0


def test_a_broken_unit_fails_verify(gateway_bin, tmp_path):
    broken = tmp_path / "beacon-gateway.service"
    broken.write_text(UNIT.read_text().replace("ProtectSystem=strict", "ProtectSystem=strikt"))
    result = run_check(gateway_bin, broken)
    assert result.returncode != 0
    assert "strikt" in result.stdout


PR_SET_MDWE = 65
PR_MDWE_REFUSE_EXEC_GAIN = 1


def test_binary_runs_with_memory_deny_write_execute(gateway_bin):
    """The unit sets MemoryDenyWriteExecute=yes: the binary must not need W+X memory. The
    kernel's own MDWE (prctl, Linux ≥ 6.3) applies the same rule to a child process."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_MDWE + 1, 0, 0, 0, 0) < 0:  # PR_GET_MDWE
        pytest.skip("this kernel has no PR_SET_MDWE (Linux < 6.3)")

    def deny_write_execute():
        if libc.prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN, 0, 0, 0) != 0:
            os._exit(99)

    result = subprocess.run(
        [str(gateway_bin), "leds", "test", "--chip", "gpiochip97", "--green", "1", "--amber", "2", "--red", "3"],
        capture_output=True, text=True, timeout=30, preexec_fn=deny_write_execute,
    )
    assert result.returncode == 1, (result.returncode, result.stderr)
    assert "no GPIO chip gpiochip97" in result.stderr
    version = subprocess.run([str(gateway_bin), "--version"], capture_output=True, text=True, timeout=30, preexec_fn=deny_write_execute)
    assert version.returncode == 0, version.stderr
