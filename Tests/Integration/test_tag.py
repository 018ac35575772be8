"""`beacon-gateway tag` (SPEC §16) proven by the door across two real binaries: the tag on
one Bumble controller and `beacon-gateway prove` on another, both served as H4 over TCP
on the same virtual link (bgworld/enrolment.py). The tag advertises connectable from the
static random address derived from its id, with the iBeacon frame the door's
configuration names, serves the Presence Proof service and answers the door's challenge
with K_tag derived from the site master key; a tag holding another key is found out.
`beacon-gateway run` on the door's controller checks in a `require_proof` person whose
tag it is only once proven, and suspects a spoof from a tag with another key.

Skipped (with the reason) when the binary is missing: set BEACON_GATEWAY_BIN or build
.build/debug/beacon-gateway."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import tempfile
import time

import pytest

from bumble.hci import Address

from bgworld.enrolment import EnrolmentWorld
from conftest import wait_until
from proofagent import AgentRun, write_config

TAG_ID = "tag-ref-1"
IBEACON = {"uuid": "e2c56db5-dffb-48d2-b060-d0f5a71096e0", "major": 700, "minor": 1}


def static_address(tag_id: str) -> str:
    """docs/proof-protocol.md, "The reference tag": SHA-256("BGW-TAG-ADDRESS-v1" ‖ id),
    its first six bytes, the two top bits set."""
    raw = bytearray(hashlib.sha256(b"BGW-TAG-ADDRESS-v1" + tag_id.encode()).digest()[:6])
    raw[0] |= 0xC0
    return ":".join(f"{byte:02X}" for byte in raw)


class Tag:
    """`beacon-gateway tag` with its standard error in a file, read by polling."""

    def __init__(self, binary, transport: str, *arguments: str) -> None:
        self._stderr = tempfile.TemporaryFile("w+")
        self.process = subprocess.Popen([str(binary), "tag", "--id", TAG_ID, "--transport", transport, *arguments],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._stderr)

    def stderr(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read()

    def advertising(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"tag exited ({self.process.returncode}):\n{self.stderr()}")
        return "advertising from" in self.stderr()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self._stderr.close()


@pytest.fixture
def world():
    two_controllers = EnrolmentWorld()
    yield two_controllers
    two_controllers.close()


def door_config(directory, world):
    tag = {"id": TAG_ID, **IBEACON, "address": static_address(TAG_ID)}
    return write_config(directory, world.transport, [tag], connect_mode="direct")


def prove(binary, config):
    return subprocess.run([str(binary), "prove", TAG_ID, "--config", str(config), "--timeout", "15"],
                          capture_output=True, text=True, timeout=60)


def ibeacon_argument() -> str:
    return f'{IBEACON["uuid"]}:{IBEACON["major"]}:{IBEACON["minor"]}'


def test_the_door_proves_the_reference_tag(gateway_bin, world, tmp_path):
    config = door_config(tmp_path, world)
    tag = Tag(gateway_bin, world.serve_controller("tag", "D0:D1:D2:D3:D4:D5"),
              "--master-key-file", str(tmp_path / "master.key"), "--ibeacon", ibeacon_argument())
    try:
        wait_until(tag.advertising, 30, "the tag to advertise")
        assert f'address = "{static_address(TAG_ID)}"' in tag.stderr()
        result = prove(gateway_bin, config)
        assert result.returncode == 0, result.stdout + result.stderr + tag.stderr()
        assert "proof valid" in result.stdout
        wait_until(lambda: "challenge answered" in tag.stderr(), 10, "the tag to log the challenge")
        # After the door's link ends the tag advertises again, and is proven again.
        wait_until(lambda: "advertising again" in tag.stderr(), 10, "the tag to advertise again")
        again = prove(gateway_bin, config)
        assert again.returncode == 0, again.stdout + again.stderr + tag.stderr()
        assert tag.stderr().count("challenge answered") == 2
        assert (tmp_path / "master.key").read_text().strip() not in tag.stderr().lower(), "never a key"
        tag.process.send_signal(signal.SIGTERM)
        assert tag.process.wait(timeout=15) == 0, tag.stderr()
    finally:
        tag.kill()


def test_an_idle_central_does_not_keep_the_door_from_proving_the_tag(gateway_bin, world, tmp_path):
    config = door_config(tmp_path, world)
    tag = Tag(gateway_bin, world.serve_controller("tag", "D0:D1:D2:D3:D4:D5"),
              "--master-key-file", str(tmp_path / "master.key"), "--ibeacon", ibeacon_argument())
    try:
        wait_until(tag.advertising, 30, "the tag to advertise")
        # A central (the world's phone) connects to the tag and does nothing.
        connected = time.monotonic()
        idle = world.call(world.phone.connect(Address(static_address(TAG_ID), Address.RANDOM_DEVICE_ADDRESS)))
        wait_until(lambda: "advertising again (1 connected)" in tag.stderr(), 10, "the tag to advertise beside it")
        # The door proves the tag while the idle central still holds its link.
        result = prove(gateway_bin, config)
        assert result.returncode == 0, result.stdout + result.stderr + tag.stderr()
        assert idle.handle in world.phone.connections, "the idle central is still connected"
        # The idle central is let go at the tag's idle limit (10 s), not before.
        world.call(world.wait_disconnected(idle, 25), timeout=30)
        assert time.monotonic() - connected >= 9, "let go at the idle limit, not at once"
        assert "wrote no challenge within 10 s: disconnecting it" in tag.stderr(), tag.stderr()
    finally:
        tag.kill()


def test_a_tag_with_another_key_is_not_proven(gateway_bin, world, tmp_path):
    config = door_config(tmp_path, world)
    wrong = tmp_path / "wrong.key"
    wrong.write_text("ab" * 32 + "\n")
    os.chmod(wrong, 0o600)
    tag = Tag(gateway_bin, world.serve_controller("tag", "D0:D1:D2:D3:D4:D6"),
              "--key-file", str(wrong), "--ibeacon", ibeacon_argument(), "--seconds", "60")
    try:
        wait_until(tag.advertising, 30, "the tag to advertise")
        result = prove(gateway_bin, config)
        assert result.returncode == 1, result.stdout + result.stderr + tag.stderr()
        assert "proof FAILED" in result.stdout
        assert "challenge answered" in tag.stderr()
    finally:
        tag.kill()


def test_the_tag_ends_after_its_seconds(gateway_bin, world, tmp_path):
    write_config(tmp_path, world.transport, [])
    tag = Tag(gateway_bin, world.serve_controller("tag", "D0:D1:D2:D3:D4:D7"),
              "--master-key-file", str(tmp_path / "master.key"), "--seconds", "2")
    try:
        assert tag.process.wait(timeout=30) == 0, tag.stderr()
        assert "advertising from" in tag.stderr()
    finally:
        tag.kill()


@pytest.mark.parametrize("arguments", [
    [],
    ["--key-file", "/nonexistent", "--master-key-file", "/nonexistent"],
    ["--master-key-file", "/nonexistent", "--ibeacon", "not-a-uuid:1:2"],
    ["--master-key-file", "/nonexistent", "--interval-ms", "5"],
])
def test_usage_errors_exit_2(gateway_bin, arguments):
    result = subprocess.run([str(gateway_bin), "tag", "--id", TAG_ID, "--transport", "tcp:127.0.0.1:9", *arguments],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 2, result.stdout + result.stderr


@pytest.fixture
def agent(tmp_path, gateway_bin):
    runs = []
    yield lambda config: runs.append(AgentRun(gateway_bin, config)) or runs[-1]
    for run in runs:
        run.stop()


def test_the_door_agent_checks_in_a_person_who_requires_proof_once_the_tag_is_proven(gateway_bin, world, tmp_path, agent):
    config = door_config(tmp_path, world)
    tag = Tag(gateway_bin, world.serve_controller("tag", "D0:D1:D2:D3:D4:D8"),
              "--master-key-file", str(tmp_path / "master.key"), "--ibeacon", ibeacon_argument())
    try:
        wait_until(tag.advertising, 30, "the tag to advertise")
        run = agent(config)
        proof = run.wait_for(rf"proof .*tag={TAG_ID}.*ok=true", 30)[0]
        checkin = run.wait_for(rf"checkin .*person_id=person-{TAG_ID}", 15)[0]
        assert run.lines.index(proof) < run.lines.index(checkin), "checked in only once proven"
        assert "challenge answered" in tag.stderr()
    finally:
        tag.kill()


def test_the_door_agent_suspects_a_spoof_from_a_tag_with_another_key(gateway_bin, world, tmp_path, agent):
    config = door_config(tmp_path, world)
    wrong = tmp_path / "wrong.key"
    wrong.write_text("cd" * 32 + "\n")
    os.chmod(wrong, 0o600)
    tag = Tag(gateway_bin, world.serve_controller("tag", "D0:D1:D2:D3:D4:D9"),
              "--key-file", str(wrong), "--ibeacon", ibeacon_argument())
    try:
        wait_until(tag.advertising, 30, "the tag to advertise")
        run = agent(config)
        run.wait_for(rf"spoof_suspected .*person_id=person-{TAG_ID}", 40)
        assert not run.matching(rf"checkin .*person_id=person-{TAG_ID}")
        assert not run.matching(rf"proof .*tag={TAG_ID}.*ok=true")
    finally:
        tag.kill()
