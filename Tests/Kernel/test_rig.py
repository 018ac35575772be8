"""The rig's own contract (scripts/qemu/rig run): the guest command's output and exit status
come back, the guest writes without touching the host, and a guest that overruns its
timeout is stopped with 124. Two short boots (~10-20 s each under TCG)."""

from __future__ import annotations

import subprocess

import pytest

from rig_session import CACHE, REPO_ROOT, SKIP_STATUS, rig, skip_reason


def rig_run(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    result = subprocess.run(rig("run", *args), cwd=REPO_ROOT, capture_output=True, text=True, timeout=timeout)
    if result.returncode == SKIP_STATUS:
        pytest.skip(f"kernel rig: {skip_reason(result.stderr)}")
    return result


def test_the_guest_commands_output_and_exit_status_come_back(tmp_path):
    marker = CACHE / "rig-test-host-file"
    marker.unlink(missing_ok=True)
    script = (
        'echo "kernel=$(uname -r) guest=$RIG_GUEST"; '
        f'echo written-in-guest > {marker}; test -f {marker} && echo "guest sees its write"; '
        'exit 7'
    )
    result = rig_run("--timeout", "240", "--share", str(tmp_path), "--", "bash", "-c", script)
    kernel = (CACHE / "kernel.abi").read_text().strip()
    assert result.returncode == 7, result.stdout[-2000:] + result.stderr[-2000:]
    assert f"kernel={kernel} guest=1" in result.stdout, result.stdout[-2000:]
    assert "guest sees its write" in result.stdout, result.stdout[-2000:]
    # The host's root is read-only under a tmpfs overlay: the guest's write stays there.
    assert not marker.exists()
    assert (tmp_path / "status").read_text().strip() == "7"


def test_a_guest_that_overruns_its_timeout_is_stopped_with_124(tmp_path):
    result = rig_run("--timeout", "20", "--share", str(tmp_path), "--", "sleep", "600", timeout=120)
    assert result.returncode == 124, result.stdout[-2000:] + result.stderr[-2000:]
    assert "did not finish within 20s" in result.stderr
