"""The edges through the real binary: what `check-config` refuses and never prints, what
the read-only outbox commands leave alone, how Retry-After and dead letters behave against
the event server (docs/event-api.md, docs/configuration.md, docs/security.md)."""

from __future__ import annotations

import email.utils
import json
import os
import pathlib
import subprocess
import time

import pytest

from eventserver import EventServer
from eventserver.harness import Deliver, enqueue, outbox, write_config

TAG_KEY = "f1e9df2e41d03c9a3efa343aa41ececa150033c77386570e763f550c45709ee6"
IRK = "0123456789abcdef0123456789abcdef"


@pytest.fixture
def server():
    s = EventServer().start()
    yield s
    s.stop()


def check_config(binary, config: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), "check-config", "--config", str(config)], capture_output=True, text=True, timeout=30)


def line_of(config: pathlib.Path, prefix: str) -> int:
    return next(number for number, text in enumerate(config.read_text().splitlines(), 1) if text.startswith(prefix))


def test_plain_http_to_a_remote_host_is_refused(gateway_bin, tmp_path):
    config = write_config(tmp_path, "http://10.0.0.5:8080", token="t0k3n")
    os.chmod(config, 0o600)
    result = check_config(gateway_bin, config)
    assert result.returncode == 2, result.stdout
    assert (f"{config}:{line_of(config, 'url')}: server.url: plain http:// is allowed only to a loopback host "
            f"(127.0.0.0/8, ::1, localhost); use https://") in result.stderr


@pytest.mark.parametrize("url", ["http://127.0.0.1:8080", "http://localhost:8080", "http://[::1]:8080", "https://10.0.0.5:8443"])
def test_plain_http_to_loopback_and_https_anywhere_are_accepted(gateway_bin, tmp_path, url):
    config = write_config(tmp_path, url, token="t0k3n")
    result = check_config(gateway_bin, config)
    assert result.returncode == 0, result.stderr


def test_url_user_info_is_never_printed(gateway_bin, tmp_path):
    config = write_config(tmp_path, "https://gw:hunter2@attendance.example.org/base")
    os.chmod(config, 0o600)
    result = check_config(gateway_bin, config)
    assert result.returncode == 0, result.stderr
    assert 'url = "https://attendance.example.org/base"' in result.stdout
    assert "hunter2" not in result.stdout + result.stderr
    # Nor when the URL is refused.
    config.write_text(config.read_text().replace("https://gw:hunter2@attendance", "http://gw:hunter2@attendance"))
    result = check_config(gateway_bin, config)
    assert result.returncode == 2 and "server.url" in result.stderr
    assert "hunter2" not in result.stdout + result.stderr


def test_inline_secrets_in_a_readable_configuration_are_refused(gateway_bin, tmp_path):
    config = tmp_path / "gateway.toml"
    config.write_text("\n".join([
        "[gateway]", 'id = "door-1"', f'state_dir = "{tmp_path}"', "",
        "[[person]]", 'id = "u_1"', "[[person.tag]]", 'id = "t1"', f'irk = "{IRK}"', f'key = "{TAG_KEY}"', "",
    ]))
    os.chmod(config, 0o644)
    result = check_config(gateway_bin, config)
    assert result.returncode == 2, result.stdout
    exposed = f"{config} must not be accessible to group or others (mode 0644); run `chown beacon-gateway: {config} && chmod 600 {config}` (the service reads it as the user beacon-gateway)"
    assert f"{config}:{line_of(config, 'irk')}: person[1].tag[1].irk: holds a secret, and {exposed}" in result.stderr
    assert f"{config}:{line_of(config, 'key')}: person[1].tag[1].key: holds a secret, and {exposed}" in result.stderr
    assert TAG_KEY not in result.stderr and IRK not in result.stderr
    os.chmod(config, 0o600)
    assert check_config(gateway_bin, config).returncode == 0


@pytest.mark.parametrize("command", [["status"], ["status", "--json"], ["list"], ["export"], ["retry-dead"]])
def test_outbox_commands_never_create_the_outbox(gateway_bin, tmp_path, command):
    result = outbox(gateway_bin, tmp_path, *command, check=False)
    assert result.returncode == 1, result.stdout
    assert f"there is no outbox yet at {tmp_path / 'gateway.sqlite'}" in result.stderr
    assert list(tmp_path.iterdir()) == [], "nothing was created"
    if "--json" in command:
        # A site's script still gets one JSON object, saying so.
        assert json.loads(result.stdout) == {"outbox": str(tmp_path / "gateway.sqlite"), "exists": False,
                                             "error": result.stderr.strip().removeprefix("outbox: ")}


@pytest.mark.parametrize("value", ["0", "past-date"])
def test_retry_after_never_shortens_the_backoff(gateway_bin, server, tmp_path, value):
    config = write_config(tmp_path, server.url, max_backoff_s=10)
    (sequence, key), = enqueue(gateway_bin, tmp_path, 1)
    header = "0" if value == "0" else email.utils.formatdate(time.time() - 3600, usegmt=True)
    server.control(fail_status=503, for_requests=3, retry_after=header)
    Deliver(gateway_bin, config, "--until-empty").wait(timeout=30)
    times = [entry["t"] for entry in server.snapshot()["log"] if entry["key"] == key]
    assert len(times) == 4
    # The backoff floor: about 0.1, 0.5 and 2 s (jitter at most 20 % down), not three
    # retries in a burst.
    gaps = [later - earlier for earlier, later in zip(times, times[1:])]
    assert gaps[1] >= 0.4 and gaps[2] >= 1.6, gaps


def test_dead_letters_are_logged_with_their_idempotency_key(gateway_bin, server, tmp_path):
    config = write_config(tmp_path, server.url)
    (sequence, key), = enqueue(gateway_bin, tmp_path, 1)
    server.control(status_for_next=422)
    deliver = Deliver(gateway_bin, config, "--until-empty")
    deliver.wait(timeout=30)
    dead = [line for line in deliver.stderr().splitlines() if "dead letter" in line]
    assert dead and key in dead[0], deliver.stderr()[-2000:]
