"""`beacon-gateway enroll` standalone (SPEC §15) against a virtual phone: the real binary
on a Bumble controller over H4-over-TCP, a Bumble Device as the phone pairing with LE
Secure Connections (Just Works, bonding, its IRK and identity address distributed).
The printed IRK is the phone's and resolves the phone's resolvable private addresses; a
legacy-only phone is refused with reason 0x03; a window with nobody ends with exit 1; on a
terminal the installer compares the phone's six digits and confirms or refuses them.

Skipped (with the reason) when the binary is missing: set BEACON_GATEWAY_BIN or build
.build/debug/beacon-gateway."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import pty
import re
import select
import signal
import subprocess
import tempfile
import time

import pytest

from bumble import att, crypto
from bumble.core import ProtocolError
from bumble.hci import Address

from agentprocess import AgentProcess
from bgworld.enrolment import DEVICE_INFORMATION_SERVICE, HEART_RATE_SERVICE, EnrolmentWorld
from conftest import wait_until

GATEWAY_ID = "door-enrol"


def config_text(transport: str, state_dir: str) -> str:
    return f"""
[gateway]
id = "{GATEWAY_ID}"
site = "S_TEST"
door = "test"
state_dir = "{state_dir}"
log_level = "info"

[bluetooth]
transport = "{transport}"

[presence]
enter_rssi = -70
exit_rssi = -75
window_s = 1.0
min_samples = 2
lost_after_s = 1.5
leave_after_s = 2
away_after_s = 3
"""


def default_interrupt() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Enrolment:
    """`beacon-gateway enroll` with its standard error in a file, read by polling."""

    def __init__(self, binary, config, *arguments: str, prefix: tuple[str, ...] = ()) -> None:
        """`prefix`: a command it runs through (e.g. setpriv, to run it as another user)."""
        self._stderr = tempfile.TemporaryFile("w+")
        # Ctrl-C's default action, whatever the test runner inherited (a shell without job
        # control starts background jobs with SIGINT ignored, and exec keeps that).
        self.process = subprocess.Popen([*prefix, str(binary), "enroll", "--config", str(config), *arguments],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self._stderr, text=True,
                                        preexec_fn=default_interrupt)

    def stderr(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read()

    def is_open(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"enroll exited ({self.process.returncode}):\n{self.stderr()}")
        return "open for" in self.stderr()

    def finish(self, timeout: float = 30) -> tuple[int, str]:
        stdout, _ = self.process.communicate(timeout=timeout)
        return self.process.returncode, stdout

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self._stderr.close()


class TerminalEnrolment:
    """`beacon-gateway enroll` on a terminal (standard input and error on a pty), as an
    installer runs it: it shows the six digits and reads the answer."""

    def __init__(self, binary, config, *arguments: str) -> None:
        self._master, slave = pty.openpty()
        self.process = subprocess.Popen([str(binary), "enroll", "--config", str(config), *arguments],
                                        stdin=slave, stdout=subprocess.PIPE, stderr=slave, text=True)
        os.close(slave)
        self.screen = ""

    def read_screen(self) -> str:
        while select.select([self._master], [], [], 0)[0]:
            try:
                chunk = os.read(self._master, 4096)
            except OSError:  # the process closed the terminal
                break
            if not chunk:
                break
            self.screen += chunk.decode(errors="replace")
        return self.screen

    def shows(self, text: str):
        def check() -> bool:
            if self.process.poll() is not None and text not in self.read_screen():
                raise AssertionError(f"enroll exited ({self.process.returncode}):\n{self.screen}")
            return text in self.read_screen()
        return check

    def answer(self, line: str) -> None:
        os.write(self._master, (line + "\n").encode())

    def finish(self, timeout: float = 30) -> tuple[int, str]:
        stdout, _ = self.process.communicate(timeout=timeout)
        self.read_screen()
        return self.process.returncode, stdout

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        os.close(self._master)


@pytest.fixture
def world():
    enrolment_world = EnrolmentWorld()
    yield enrolment_world
    enrolment_world.close()


@pytest.fixture
def config(world, tmp_path):
    path = tmp_path / "gateway.toml"
    path.write_text(config_text(world.transport, str(tmp_path / "state")))
    return path


def test_a_secure_connections_phone_is_enrolled_with_its_irk(gateway_bin, world, config):
    enroll = Enrolment(gateway_bin, config, "--person", "u_1009", "--yes", "--json", "--seconds", "60")
    try:
        wait_until(enroll.is_open, 30, "the enrolment window to open")
        # Standalone, the gateway does not scan during the window (docs/cli.md).
        wait_until(lambda: not world.gateway_controller.le_scan_enable, 10, "scanning off for the window")
        connection = world.call(world.pair(GATEWAY_ID, secure_connections=True), timeout=60)
        # The gateway ends the window at the pairing's end and drops the link itself:
        # the phone keeps it up until then, so every key reaches the gateway.
        world.call(world.wait_disconnected(connection, 30), timeout=40)
        code, stdout = enroll.finish()
        assert code == 0, enroll.stderr()
        result = json.loads(stdout)
        phone_irk = world.phone.irk  # least significant octet first, as SMP carries it
        assert result["person"] == {"id": "u_1009", "tags": [{"id": "phone-u_1009", "irk": phone_irk[::-1].hex()}]}
        assert result["pairing"] == "just-works"
        assert result["identityAddressType"] == "random"
        assert Address(result["identityAddress"]) == world.phone.random_address
        # The printed key (most significant octet first) resolves the phone's RPAs.
        key = bytes.fromhex(result["person"]["tags"][0]["irk"])[::-1]
        for _ in range(5):
            rpa = Address.generate_private_address(phone_irk)
            assert crypto.ah(key, rpa.address_bytes[3:6]) == rpa.address_bytes[0:3]
        assert phone_irk.hex() not in enroll.stderr() and phone_irk[::-1].hex() not in enroll.stderr(), \
            "the IRK goes to standard output only"
    finally:
        enroll.kill()


def connect_and_be_refused(world):
    """A phone connects to the window, its GATT client finds the enrolment services and
    reads Device Information's Manufacturer Name unencrypted: Insufficient
    Authentication (0x05), what makes a phone pair (docs/gatt-server.md). The connection
    and the characteristic."""
    connection = world.call(world.connect(GATEWAY_ID))
    services, manufacturer = world.call(world.manufacturer_name(connection))
    assert HEART_RATE_SERVICE in services and DEVICE_INFORMATION_SERVICE in services
    with pytest.raises(att.ATT_Error) as refused:
        world.call(world.read(manufacturer))
    assert refused.value.error_code == att.ATT_INSUFFICIENT_AUTHENTICATION_ERROR == 0x05
    return connection, manufacturer


def test_a_refused_read_makes_the_phone_pair_and_the_read_succeeds_encrypted(gateway_bin, world, config):
    enroll = Enrolment(gateway_bin, config, "--person", "u_1014", "--yes", "--json", "--seconds", "60")
    try:
        wait_until(enroll.is_open, 30, "the enrolment window to open")
        connection, manufacturer = connect_and_be_refused(world)
        # Encrypted by the pairing it started: the same read gives the value.
        value = world.call(world.pair_and_read(connection, manufacturer), timeout=60)
        assert value == b"beacon-gateway"
        world.call(world.wait_disconnected(connection, 30), timeout=40)
        code, stdout = enroll.finish()
        assert code == 0, enroll.stderr()
        result = json.loads(stdout)
        assert result["person"]["tags"] == [{"id": "phone-u_1014", "irk": world.phone.irk[::-1].hex()}]
    finally:
        enroll.kill()


def enrol_the_phone(world, enroll) -> dict:
    """The phone pairs with the open window (Just Works) and keeps its link until the
    gateway drops it, so every key arrives; the command exits 0. Its JSON line."""
    connection = world.call(world.pair(GATEWAY_ID, secure_connections=True), timeout=60)
    world.call(world.wait_disconnected(connection, 30), timeout=40)
    code, stdout = enroll.finish()
    assert code == 0, enroll.stderr()
    return json.loads(stdout)


def test_a_phone_that_leaves_before_pairing_frees_the_window(gateway_bin, world, config):
    enroll = Enrolment(gateway_bin, config, "--person", "u_1013", "--yes", "--json", "--seconds", "60")
    try:
        wait_until(enroll.is_open, 30, "the enrolment window to open")
        # It leaves without pairing.
        connection, _ = connect_and_be_refused(world)
        world.call(world.disconnect(connection))
        # The window is free again: the gateway advertises, and the next phone enrols.
        assert enrol_the_phone(world, enroll)["person"]["id"] == "u_1013"
    finally:
        enroll.kill()


def test_a_legacy_only_phone_is_refused_and_the_window_goes_on(gateway_bin, world, config):
    enroll = Enrolment(gateway_bin, config, "--person", "u_1010", "--yes", "--json", "--seconds", "60")
    try:
        wait_until(enroll.is_open, 30, "the enrolment window to open")
        with pytest.raises(ProtocolError) as refused:
            world.call(world.pair(GATEWAY_ID, secure_connections=False), timeout=60)
        # SMP Pairing Failed, reason 0x03 Authentication Requirements.
        assert refused.value.error_namespace == "smp" and refused.value.error_code == 0x03, refused.value
        wait_until(lambda: "too old" in enroll.stderr() and "the window stays open" in enroll.stderr(), 10,
                   "the installer told why, and that the window stays open")
        # A refused request does not end the window: the next phone enrols in it.
        tags = enrol_the_phone(world, enroll)["person"]["tags"]
        assert tags == [{"id": "phone-u_1010", "irk": world.phone.irk[::-1].hex()}]
    finally:
        enroll.kill()


# Another key than the phone's (least significant octet first, as Bumble keeps it).
OTHER_IRK = bytes.fromhex("00112233445566778899aabbccddeeff")


def test_an_irk_that_does_not_resolve_the_connecting_address_is_refused(gateway_bin, world, config):
    enroll = Enrolment(gateway_bin, config, "--person", "u_1020", "--yes", "--json", "--seconds", "60")
    try:
        wait_until(enroll.is_open, 30, "the enrolment window to open")
        # The phone connects from a resolvable private address another key made, and
        # hands over its own key: the key it gave is not the one the link shows.
        foreign = Address.generate_private_address(OTHER_IRK)
        world.call(world.connect_from(foreign))
        connection = world.call(world.pair(GATEWAY_ID, secure_connections=True), timeout=60)
        world.call(world.wait_disconnected(connection, 30), timeout=40)
        wait_until(lambda: "refused (irk-does-not-resolve-the-link)" in enroll.stderr()
                   and "the window stays open" in enroll.stderr(), 10, "the installer told why, and that the window stays open")
        assert str(foreign).split("/")[0] in enroll.stderr(), enroll.stderr()
        # From an address its own key makes, as phones connect, it is enrolled in the same window.
        world.call(world.connect_from(Address.generate_private_address(world.phone.irk)))
        result = enrol_the_phone(world, enroll)
        assert result["person"]["tags"] == [{"id": "phone-u_1020", "irk": world.phone.irk[::-1].hex()}]
        assert Address(result["identityAddress"]) == world.phone.static_address
    finally:
        enroll.kill()


def test_an_identity_configured_for_another_person_in_the_file_is_refused(gateway_bin, world, config):
    # The file already has the phone's key under another person.
    config.write_text(config.read_text() + "\n[[person]]\nid = \"u_owner\"\n[[person.tag]]\nid = \"phone-owner\"\n"
                      f"irk = \"{world.phone.irk[::-1].hex()}\"\n")
    config.chmod(0o600)
    enroll = Enrolment(gateway_bin, config, "--person", "u_1021", "--yes", "--json", "--seconds", "20")
    try:
        wait_until(enroll.is_open, 30, "the enrolment window to open")
        connection = world.call(world.pair(GATEWAY_ID, secure_connections=True), timeout=60)
        world.call(world.wait_disconnected(connection, 30), timeout=40)
        code, stdout = enroll.finish(timeout=60)
        assert code == 1 and stdout == "", enroll.stderr()
        words = enroll.stderr()
        assert "refused (irk-of-another-person)" in words and "u_owner" in words, words
        outcome = json.loads(words.strip().splitlines()[-1])
        assert outcome["enrolled"] is False and "irk-of-another-person" in outcome["reason"], outcome
    finally:
        enroll.kill()


def test_an_idle_central_is_let_go_and_a_phone_pairs_in_the_same_window(gateway_bin, world, config):
    enroll = Enrolment(gateway_bin, config, "--person", "u_1017", "--yes", "--json", "--seconds", "60")
    try:
        wait_until(enroll.is_open, 30, "the enrolment window to open")
        # A central that connects and never starts pairing (Bumble ignores the Security Request).
        connected = time.monotonic()
        idle = world.call(world.connect(GATEWAY_ID))
        world.call(world.wait_disconnected(idle, 20), timeout=25)
        assert time.monotonic() - connected >= 9, "let go after the pairing-start time (10 s), not at once"
        wait_until(lambda: "did not start pairing within 10 s" in enroll.stderr(), 10, "the installer told")
        assert enrol_the_phone(world, enroll)["person"]["id"] == "u_1017"
    finally:
        enroll.kill()


def test_a_window_with_nobody_ends_with_exit_1(gateway_bin, world, config):
    enroll = Enrolment(gateway_bin, config, "--person", "u_1011", "--yes", "--seconds", "2")
    try:
        wait_until(enroll.is_open, 30, "the enrolment window to open")
        code, stdout = enroll.finish()
        assert code == 1
        assert stdout == ""
        assert "window ended" in enroll.stderr()
    finally:
        enroll.kill()


def compare_six_digits(world, enroll: TerminalEnrolment, confirmed: bool) -> None:
    """A phone with a display pairs with the open window; the installer, on the terminal,
    sees the six digits the phone shows and answers yes or no. Checks the outcome either
    way: the phone's IRK printed as a Numeric Comparison, or the pairing failed with 0x0C
    and exit 1."""
    wait_until(enroll.shows("compare the six digits"), 30, "the enrolment window to open")
    pairing = asyncio.run_coroutine_threadsafe(world.pair(GATEWAY_ID, secure_connections=True, compares=True), world.loop)
    wait_until(enroll.shows("? [y/N]"), 30, "the six digits on the installer's screen")
    # The phone works out its value once the gateway's random has reached it, which may
    # be after the gateway showed its own.
    wait_until(lambda: len(world.shown_numbers) == 1, 30, "the six digits on the phone")
    assert f"does the phone show {world.shown_numbers[0]:06d}?" in enroll.read_screen()
    enroll.answer("y" if confirmed else "n")
    if confirmed:
        connection = pairing.result(60)
        world.call(world.wait_disconnected(connection, 30), timeout=40)
        code, stdout = enroll.finish()
        assert code == 0, enroll.screen
        result = json.loads(stdout)
        assert result["pairing"] == "numeric-comparison"
        assert result["person"]["tags"][0]["irk"] == world.phone.irk[::-1].hex()
    else:
        with pytest.raises(ProtocolError) as refused:
            pairing.result(60)
        # SMP Pairing Failed, reason 0x0C Numeric Comparison Failed.
        assert refused.value.error_namespace == "smp" and refused.value.error_code == 0x0C, refused.value
        code, stdout = enroll.finish()
        assert code == 1
        assert stdout == ""
        assert "not confirmed" in enroll.screen


def refuse_a_phone_that_cannot_compare(world, enroll: TerminalEnrolment) -> None:
    """A phone with no display and no input (NoInputNoOutput) tries to pair with a window
    opened for the six digits: refused with SMP reason 0x03, never paired by Just Works;
    the command says why and what to do, and at the window's end exits 1 having printed
    nothing on standard output."""
    wait_until(enroll.shows("compare the six digits"), 30, "the enrolment window to open")
    with pytest.raises(ProtocolError) as refused:
        world.call(world.pair(GATEWAY_ID, secure_connections=True, compares=False), timeout=60)
    # SMP Pairing Failed, reason 0x03 Authentication Requirements.
    assert refused.value.error_namespace == "smp" and refused.value.error_code == 0x03, refused.value
    code, stdout = enroll.finish()
    assert code == 1, enroll.screen
    assert stdout == ""
    assert "window ended without a phone pairing; the last one: refused: the phone cannot compare six digits" in enroll.screen
    assert "--yes" in enroll.screen, enroll.screen
    assert world.shown_numbers == [], "no digits were ever shown on the phone"


def test_a_phone_that_cannot_compare_is_refused_in_a_digits_window(gateway_bin, world, config):
    enroll = TerminalEnrolment(gateway_bin, config, "--person", "u_1015", "--json", "--seconds", "15")
    try:
        refuse_a_phone_that_cannot_compare(world, enroll)
    finally:
        enroll.kill()


def test_without_a_terminal_and_without_yes_the_command_refuses(gateway_bin, world, config):
    enroll = Enrolment(gateway_bin, config, "--person", "u_1016", "--json", "--seconds", "60")
    try:
        code, stdout = enroll.finish()
        assert code == 2, enroll.stderr()
        assert stdout == ""
        words = enroll.stderr()
        assert "no terminal to compare the six digits" in words and "--yes" in words, words
        assert "open for" not in words, "no window opened"
        assert not world.gateway_controller.le_legacy_advertiser.enabled, "nothing advertised"
    finally:
        enroll.kill()


@pytest.mark.parametrize("confirmed", [True, False], ids=["confirmed", "refused"])
def test_numeric_comparison_on_a_terminal(gateway_bin, world, config, confirmed):
    enroll = TerminalEnrolment(gateway_bin, config, "--person", "u_1012", "--json", "--seconds", "60")
    try:
        compare_six_digits(world, enroll, confirmed)
    finally:
        enroll.kill()


def test_the_printed_person_is_checked_in_from_the_phones_rotating_addresses(gateway_bin, world, config):
    enroll = Enrolment(gateway_bin, config, "--person", "u_1009", "--yes", "--seconds", "60")
    try:
        wait_until(enroll.is_open, 30, "the enrolment window to open")
        connection = world.call(world.pair(GATEWAY_ID, secure_connections=True), timeout=60)
        world.call(world.wait_disconnected(connection, 30), timeout=40)
        code, block = enroll.finish()
        assert code == 0, enroll.stderr()
    finally:
        enroll.kill()
    assert f'irk = "{world.phone.irk[::-1].hex()}"' in block

    # The door runs without the person; the printed block is pasted in and SIGHUP reloads.
    agent = AgentProcess(gateway_bin, config)
    try:
        agent.wait_log(r"controller up", "the agent's controller")
        config.write_text(config.read_text() + "\n" + block)
        config.chmod(0o600)  # an IRK is a secret: the agent refuses a file others can read
        agent.process.send_signal(signal.SIGHUP)
        agent.wait_log(r"configuration reloaded persons=1 ", "the reload with the phone's person")

        # The phone advertises from a resolvable private address and leaves, then comes
        # back from another one (phones change theirs every few minutes): two visits.
        checkin = r" checkin .*\bperson(?:_id)?=u_1009\b"
        checkout = r" checkout .*\bperson(?:_id)?=u_1009\b"
        addresses = []
        for visit in (1, 2):
            addresses.append(world.call(world.advertise_from_new_rpa()))
            agent.wait_log(checkin, f"u_1009 checked in from the phone's RPA {addresses[-1]} (visit {visit})", count=visit)
            world.call(world.stop_advertising())
            agent.wait_log(checkout, f"u_1009 checked out once the phone is gone (visit {visit})", count=visit)
        assert addresses[0] != addresses[1]
        assert all(address.is_resolvable for address in addresses)
    finally:
        agent.stop()


@pytest.fixture
def plain_world():
    enrolment_world = EnrolmentWorld(plain=True)
    yield enrolment_world
    enrolment_world.close()


def gateway_static_address(site: str, gateway_id: str) -> Address:
    """The static random address docs/pairing.md describes for a gateway without a public
    address: SHA-256 of the label, the site, a zero byte and the id; its first six bytes
    with the two top bits set."""
    digest = hashlib.sha256(b"BGW-ENROLMENT-ADDRESS-v1" + site.encode() + b"\0" + gateway_id.encode()).digest()
    raw = bytearray(digest[:6])
    raw[0] |= 0xC0
    return Address(":".join(f"{byte:02X}" for byte in raw), Address.RANDOM_DEVICE_ADDRESS)


def test_a_controller_without_a_public_address_pairs_from_its_static_random_address(gateway_bin, plain_world, tmp_path):
    world = plain_world
    assert world.gateway_controller.public_address == Address("00:00:00:00:00:00")
    config = tmp_path / "gateway.toml"
    config.write_text(config_text(world.transport, str(tmp_path / "state")))
    expected = gateway_static_address("S_TEST", GATEWAY_ID)
    for window in (1, 2):
        enroll = Enrolment(gateway_bin, config, "--person", "u_1018", "--yes", "--json", "--seconds", "60")
        try:
            wait_until(enroll.is_open, 30, f"the enrolment window to open (window {window})")
            # The window advertises from the gateway's static random address, the same each time.
            assert world.call(world.find_enrolment(GATEWAY_ID, 30)) == expected
            assert world.gateway_controller.random_address == expected
            result = enrol_the_phone(world, enroll)
        finally:
            enroll.kill()
        assert result["person"]["tags"] == [{"id": "phone-u_1018", "irk": world.phone.irk[::-1].hex()}]
        assert result["pairing"] == "just-works"

    # The enrolled phone is that person's tag: the agent, on the same controller, checks it in.
    config.write_text(config.read_text() + f'\n[[person]]\nid = "u_1018"\n[[person.tag]]\nid = "phone-u_1018"\n'
                      f'irk = "{world.phone.irk[::-1].hex()}"\n')
    config.chmod(0o600)
    agent = AgentProcess(gateway_bin, config)
    try:
        agent.wait_log(r"controller up", "the agent's controller")
        world.call(world.advertise_from_new_rpa())
        agent.wait_log(r" checkin .*\bperson(?:_id)?=u_1018\b", "u_1018 checked in from the phone's RPA")
    finally:
        agent.stop()
