"""Self-tests of the world's connections: proof-capable tags and the gateway controller
as a central (accept list, cancel, late advertisers, link loss, Read RSSI), driven by a
raw H4 central (bgworld/centralclient.py) and by Bumble's own host and GATT client."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import platform
import statistics
import struct
import subprocess
import sys
import tempfile

import pytest

from bgworld import att, proof
from bgworld.centralclient import (
    OP_LE_READ_BUFFER_SIZE,
    OP_LE_READ_FILTER_ACCEPT_LIST_SIZE,
    OP_LE_READ_SUPPORTED_STATES,
    CentralClient,
    proof_handshake,
)
from bgworld.hostclient import OP_LE_SET_SCAN_ENABLE, OP_LE_SET_SCAN_PARAMETERS
from bgworld.scenarios import DEMO_UUID
from conftest import READY_TIMEOUT_S, WORLD_DIR, WorldProcess, _readline

MASTER_KEY = bytes(range(32))
STATUS_SUCCESS = 0x00
STATUS_UNKNOWN_CONNECTION_ID = 0x02
STATUS_MEMORY_CAPACITY_EXCEEDED = 0x07
STATUS_COMMAND_DISALLOWED = 0x0C
REASON_CONNECTION_TIMEOUT = 0x08
REASON_REMOTE_USER_TERMINATED = 0x13
REASON_LOCAL_HOST_TERMINATED = 0x16
LE_CONNECTION_COMPLETE = 0x01


def run(coroutine):
    return asyncio.run(coroutine)


class RootCanalWorld(WorldProcess):
    """`python -m bgworld.rootcanal`: the same scenario and control channel, with
    RootCanal 1.13.0 as every controller (see Tests/World/README.md)."""

    def __init__(self, scenario: dict, seed: int = 7, extra: list[str] | None = None) -> None:
        self._scenario_file = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
        json.dump(scenario, self._scenario_file)
        self._scenario_file.close()
        args = [sys.executable, "-m", "bgworld.rootcanal", "--seed", str(seed),
                "--scenario-file", self._scenario_file.name] + (extra or [])
        env = dict(os.environ, PYTHONPATH=str(WORLD_DIR) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        self._stderr = tempfile.TemporaryFile("w+")
        # Fetching Debian 13's libc for RootCanal the first time takes a while.
        self.process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self._stderr, text=True, env=env)
        line = _readline(self.process.stdout, READY_TIMEOUT_S + 60)
        if not line.startswith("READY "):
            self._control = None
            tail = self.stderr_tail()
            self.close()
            raise RuntimeError(f"RootCanal world did not start: {line!r}; stderr: {tail}")
        self._connect(line)

    def _connect(self, line: str) -> None:
        import socket

        fields = dict(part.split("=", 1) for part in line.split()[1:])
        self.hci_host, hci_port = fields["hci"].rsplit(":", 1)
        self.hci_port = int(hci_port)
        control_host, control_port = fields["control"].rsplit(":", 1)
        self._control = socket.create_connection((control_host, int(control_port)), timeout=10)
        self._control_file = self._control.makefile("rw", encoding="utf-8", newline="\n")


def rootcanal_available() -> str | None:
    """Why RootCanal cannot run here, or None."""
    if sys.platform != "linux" or platform.machine() != "x86_64":
        return "the RootCanal world is prepared for Linux x86_64 only"
    try:
        import rootcanal  # noqa: F401
    except ImportError:
        return "PyPI package rootcanal is not installed (scripts/setup installs Tests/requirements.txt)"
    return None


BACKENDS = ["bumble", "rootcanal"]


@pytest.fixture(params=BACKENDS)
def backend_world(request):
    """A factory for a world on either controller model (parametrized)."""
    if request.param == "rootcanal" and (reason := rootcanal_available()):
        pytest.skip(reason)
    worlds = []

    def make(scenario: dict, extra: list[str] | None = None) -> WorldProcess:
        world = (RootCanalWorld if request.param == "rootcanal" else WorldProcess)(scenario, extra=extra)
        world.backend = request.param
        worlds.append(world)
        return world

    yield make
    for world in worlds:
        world.close()


def tag_key(tag_id: str) -> bytes:
    return proof.derive_tag_key(MASTER_KEY, tag_id)


def proof_tag(tag_id: str, variant: str, number: int, **extra) -> dict:
    spec = {
        "id": tag_id, "kind": "ibeacon", "uuid": DEMO_UUID, "major": 7, "minor": number,
        "address": f"C0:00:00:00:07:{number:02X}", "interval_ms": 50, "distance": 1.0,
        "proof": variant, "master_key": MASTER_KEY.hex(),
    }
    spec.update(extra)
    return spec


def address_of(spec: dict) -> str:
    return spec["address"]


async def central(world: WorldProcess) -> CentralClient:
    client = await CentralClient.connect(world.hci_host, world.hci_port)
    await client.bring_up()
    return client


async def connect_to(client: CentralClient, address: str, timeout: float = 10.0, supervision_timeout: int = 100):
    before = len(client.connections)
    assert await client.create_connection(policy=0, peer=address, supervision_timeout=supervision_timeout) == STATUS_SUCCESS
    connections = await client.wait_for_connections(before + 1, timeout)
    complete = connections[before]
    assert complete.status == STATUS_SUCCESS and complete.peer_address == address
    return complete.handle


async def eventually(predicate, timeout: float, what: str):
    """Poll a world condition (its control channel) until true; fail after `timeout`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not (value := predicate()):
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        await asyncio.sleep(0.02)
    return value


# -- pure parts -------------------------------------------------------------------------


def test_spec_test_vector():
    key = proof.derive_tag_key(MASTER_KEY, "tag-1001")
    assert key.hex() == "f1e9df2e41d03c9a3efa343aa41ececa150033c77386570e763f550c45709ee6"
    challenge = proof.challenge(bytes(range(0xA0, 0xB0)))
    assert challenge.hex() == "01a0a1a2a3a4a5a6a7a8a9aaabacadaeaf"
    assert proof.response(key, challenge).hex() == "018bef2bc2e37b2fdfe325a5ada5c2009b"
    assert proof.verify(key, challenge, bytes.fromhex("018bef2bc2e37b2fdfe325a5ada5c2009b"))
    assert not proof.verify(key, challenge, proof.response(proof.clone_key(key), challenge))


def test_att_server_discovery_and_errors():
    from bgworld.peer import TagPeer

    peer = TagPeer("t", "genuine", tag_key("t"))
    peer.on_connect()

    def ask(pdu: bytes) -> bytes:
        (answer,) = peer.on_l2cap(att.l2cap(att.CID_ATT, pdu))
        return answer[4:]

    services = ask(struct.pack("<BHHH", att.READ_BY_GROUP_TYPE_REQ, 1, 0xFFFF, att.PRIMARY_SERVICE))
    assert services[0] == att.READ_BY_GROUP_TYPE_RSP and services[1] == 6  # two 16-bit services fit first
    found = ask(struct.pack("<BHHH", att.FIND_BY_TYPE_VALUE_REQ, 1, 0xFFFF, att.PRIMARY_SERVICE)
                + att.uuid_bytes(proof.SERVICE_UUID))
    assert found == bytes((att.FIND_BY_TYPE_VALUE_RSP,)) + struct.pack("<HH", 5, 9)
    assert ask(struct.pack("<BH", att.READ_REQ, 0)) == att.error_response(att.READ_REQ, 0, att.ERR_INVALID_HANDLE)
    assert ask(struct.pack("<BHHH", att.READ_BY_TYPE_REQ, 9, 5, att.CHARACTERISTIC))[-1] == att.ERR_INVALID_HANDLE
    assert ask(bytes((att.READ_REQ,)))[-1] == att.ERR_INVALID_PDU  # truncated request
    assert ask(bytes((0x1E,)))[-1] == att.ERR_REQUEST_NOT_SUPPORTED
    assert ask(struct.pack("<BH", att.WRITE_REQ, 7) + bytes(5))[-1] == att.ERR_INVALID_ATTRIBUTE_VALUE_LENGTH
    assert peer.on_l2cap(b"\x01") == []  # shorter than an L2CAP header: ignored


# -- the accept list ------------------------------------------------------------------------


THREE = [proof_tag(f"p{i}", "genuine", i, interval_ms=40 + 30 * i) for i in (1, 2, 3)]
BYSTANDER = proof_tag("bystander", "genuine", 9)


def test_accept_list_connects_three_tags_with_one_request_each(backend_world):
    world = backend_world({"name": "three-proof", "tags": THREE + [BYSTANDER]})

    async def body():
        client = await central(world)
        size = await client.ok(OP_LE_READ_FILTER_ACCEPT_LIST_SIZE)
        for spec in THREE:
            assert await client.accept_list_add(address_of(spec)) == STATUS_SUCCESS
        assert await client.accept_list_add(address_of(THREE[0])) == STATUS_SUCCESS  # already there: success
        for count in (1, 2, 3):
            assert await client.create_connection(policy=1) == STATUS_SUCCESS
            await client.wait_for_connections(count, 10)
        connections = world.control("connections")
        await client.close()
        return size, client.connections, connections

    size, connections, report = run(body())
    assert size[1] == 16
    assert all(c.status == STATUS_SUCCESS and c.role == 0 for c in connections)
    assert sorted(c.peer_address for c in connections) == sorted(address_of(s) for s in THREE)
    assert len({c.handle for c in connections}) == 3
    report = json.loads(report)
    assert report["createConnectionCommands"] == 3
    if world.backend == "bumble":
        assert report["pending"] is False


def test_accept_list_is_frozen_while_pending_and_cancel_completes_with_0x02(backend_world):
    silent_one = proof_tag("later", "genuine", 1, advertising=False)
    world = backend_world({"name": "pending", "tags": [silent_one]})

    async def body():
        client = await central(world)
        assert await client.accept_list_add(address_of(silent_one)) == STATUS_SUCCESS
        assert await client.create_connection(policy=1) == STATUS_SUCCESS
        assert await client.create_connection(policy=1) == STATUS_COMMAND_DISALLOWED  # one at a time
        frozen = [
            await client.accept_list_add("C0:00:00:00:07:55"),
            await client.accept_list_remove(address_of(silent_one)),
            (await client.command(0x2010)).status,  # clear
        ]
        mark = len(client.events)
        cancel = await client.cancel_connection()
        await client.wait_for_connections(1, 5)
        after = client.events[mark:]
        second_cancel = await client.cancel_connection()
        thawed = await client.accept_list_add("C0:00:00:00:07:55")
        await client.close()
        return frozen, cancel, after, client.connections, second_cancel, thawed

    frozen, cancel, after, connections, second_cancel, thawed = run(body())
    assert frozen == [STATUS_COMMAND_DISALLOWED] * 3
    assert cancel == STATUS_SUCCESS
    # Command Complete of the cancel first, then LE Connection Complete with status 0x02.
    kinds = [(e[1], e[3]) for e in after]
    assert kinds.index((0x0E, 1)) < kinds.index((0x3E, LE_CONNECTION_COMPLETE))
    assert connections[0].status == STATUS_UNKNOWN_CONNECTION_ID
    assert second_cancel == STATUS_COMMAND_DISALLOWED
    assert thawed == STATUS_SUCCESS


def test_accept_list_holds_sixteen(backend_world):
    world = backend_world({"name": "empty", "tags": []})

    async def body():
        client = await central(world)
        statuses = [await client.accept_list_add(f"C0:00:00:00:01:{i:02X}") for i in range(17)]
        removed = await client.accept_list_remove("C0:00:00:00:01:00")
        again = await client.accept_list_add("C0:00:00:00:01:10")
        await client.close()
        return statuses, removed, again

    statuses, removed, again = run(body())
    assert statuses[:16] == [STATUS_SUCCESS] * 16
    assert statuses[16] == STATUS_MEMORY_CAPACITY_EXCEEDED
    assert removed == STATUS_SUCCESS and again == STATUS_SUCCESS


def test_late_advertiser_is_connected_by_the_same_pending_request(backend_world):
    # Starts advertising 60 s (scenario time) after the world starts; time scale 10.
    late = proof_tag("late", "genuine", 1, advertise_after=60)
    world = backend_world({"name": "late", "tags": [late]}, extra=["--time-scale", "10"])

    async def body():
        client = await central(world)
        assert await client.accept_list_add(address_of(late)) == STATUS_SUCCESS
        assert await client.create_connection(policy=1) == STATUS_SUCCESS
        pending = world.control("connections")
        await client.wait_for_connections(1, 15)
        scenario_time = world.status()["scenarioTime"]
        report = world.control("connections")
        await client.close()
        return pending, client.connections, scenario_time, report

    pending, connections, scenario_time, report = run(body())
    if world.backend == "bumble":
        assert json.loads(pending)["pending"] is True
    assert connections[0].status == STATUS_SUCCESS and connections[0].peer_address == address_of(late)
    assert scenario_time >= 60
    assert json.loads(report)["createConnectionCommands"] == 1


def test_tag_advertise_switches_a_tag_on_for_a_pending_direct_connect(backend_world):
    tag = proof_tag("off", "genuine", 1, advertising=False)
    world = backend_world({"name": "off", "tags": [tag]})

    async def body():
        client = await central(world)
        assert await client.create_connection(policy=0, peer=address_of(tag)) == STATUS_SUCCESS
        status_before = world.status()["tags"]["off"]
        world.control("tag-advertise off on")
        await client.wait_for_connections(1, 10)
        await client.close()
        return status_before, client.connections

    status_before, connections = run(body())
    assert status_before["advertising"] is False and status_before["pdus"] == 0
    assert connections[0].status == STATUS_SUCCESS


def test_scanning_continues_while_initiating(backend_world):
    tag = proof_tag("off", "genuine", 1, advertising=False)
    beacon = {"id": "b", "kind": "ibeacon", "uuid": DEMO_UUID, "major": 1, "minor": 1,
              "address": "C0:00:00:00:00:B1", "interval_ms": 50}
    world = backend_world({"name": "both", "tags": [tag, beacon]})

    async def body():
        client = await central(world)
        states = await client.ok(OP_LE_READ_SUPPORTED_STATES)
        await client.ok(OP_LE_SET_SCAN_PARAMETERS, struct.pack("<BHHBB", 0, 0x10, 0x10, 0, 0))
        await client.ok(OP_LE_SET_SCAN_ENABLE, bytes((1, 0)))
        assert await client.create_connection(policy=0, peer=address_of(tag)) == STATUS_SUCCESS
        mark = len(client.reports)
        await client.wait_for_reports(lambda reports: len(reports) >= mark + 5, 10)
        await client.close()
        return states

    states = run(body())
    supported = int.from_bytes(states[1:9], "little")
    # Bits 22 and 23: passive / active scanning combined with initiating (7.8.27).
    assert supported >> 22 & 1 and supported >> 23 & 1


# -- disconnections and link loss ---------------------------------------------------------


def test_disconnect_both_ways(backend_world):
    tag = proof_tag("t", "genuine", 1)
    world = backend_world({"name": "bye", "tags": [tag]})

    async def body():
        client = await central(world)
        handle = await connect_to(client, address_of(tag))
        unknown = await client.disconnect(handle + 100)
        assert await client.disconnect(handle, 0x13) == STATUS_SUCCESS
        await client.wait_for_disconnections(1, 5)
        stats_after_host = await eventually(
            lambda: (stats := json.loads(world.control("proof-stats"))["t"])["disconnections"] == 1 and stats,
            5, "the tag to see the disconnection")
        handle = await connect_to(client, address_of(tag))
        world.control("tag-disconnect t")
        await client.wait_for_disconnections(2, 5)
        await client.close()
        return unknown, client.disconnections, stats_after_host

    unknown, disconnections, stats = run(body())
    assert unknown == STATUS_UNKNOWN_CONNECTION_ID
    assert disconnections[0].reason == REASON_LOCAL_HOST_TERMINATED
    assert stats["lastDisconnectReason"] == REASON_REMOTE_USER_TERMINATED  # the tag heard the host's 0x13
    assert disconnections[1].reason == REASON_REMOTE_USER_TERMINATED


@pytest.mark.parametrize("how", ["walks-away", "link-loss"])
def test_link_loss_reports_0x08_and_the_tag_reconnects_when_back(backend_world, how):
    tag = proof_tag("t", "genuine", 1)
    world = backend_world({"name": "loss", "tags": [tag]})

    async def body():
        client = await central(world)
        assert await client.accept_list_add(address_of(tag)) == STATUS_SUCCESS
        assert await client.create_connection(policy=1, supervision_timeout=100) == STATUS_SUCCESS  # 1 s
        await client.wait_for_connections(1, 10)
        if how == "walks-away":
            world.control("set-distance t off")
        else:
            world.control("link-loss t")
        await client.wait_for_disconnections(1, 10)
        # Re-armed at once; the tag advertises again when it comes back.
        assert await client.create_connection(policy=1, supervision_timeout=100) == STATUS_SUCCESS
        world.control("clear-distance t")
        await client.wait_for_connections(2, 10)
        report = world.control("connections")
        await client.close()
        return client.disconnections, client.connections, report

    disconnections, connections, report = run(body())
    assert disconnections[0].reason == REASON_CONNECTION_TIMEOUT
    assert connections[1].status == STATUS_SUCCESS and connections[1].peer_address == address_of(tag)
    if world.backend == "bumble":
        assert json.loads(report)["linkLosses"] == 1


def test_supervision_timeout_option_overrides_the_connections(world_factory):
    tag = proof_tag("t", "genuine", 1)
    world = world_factory({"name": "loss", "tags": [tag]}, extra=["--supervision-timeout", "0.2"])

    async def body():
        client = await central(world)
        await connect_to(client, address_of(tag), supervision_timeout=0x0C80)  # 32 s asked for
        reply = world.control("link-loss t")
        await client.wait_for_disconnections(1, 5)
        await client.close()
        return reply, client.disconnections

    reply, disconnections = run(body())
    assert "0.2 s" in reply
    assert disconnections[0].reason == REASON_CONNECTION_TIMEOUT


def test_read_rssi_follows_the_distance(world_factory):
    near = proof_tag("near", "genuine", 1, distance=1.0)
    far = proof_tag("far", "genuine", 2, distance=8.0)
    world = world_factory({"name": "rssi", "tags": [near, far]})

    async def body():
        client = await central(world)
        near_handle = await connect_to(client, address_of(near))
        far_handle = await connect_to(client, address_of(far))
        near_rssi = [(await client.read_rssi(near_handle))[1] for _ in range(40)]
        far_rssi = [(await client.read_rssi(far_handle))[1] for _ in range(40)]
        unknown = await client.read_rssi(0x0EEE)
        await client.close()
        return near_rssi, far_rssi, unknown

    near_rssi, far_rssi, unknown = run(body())
    assert abs(statistics.median(near_rssi) - -59) <= 3
    assert abs(statistics.median(far_rssi) - -77) <= 3
    assert unknown[0] == STATUS_UNKNOWN_CONNECTION_ID


def test_acl_is_cut_to_the_buffer_size_and_completed_packets_are_reported(world_factory):
    tag = proof_tag("big", "malicious-oversized", 1)
    world = world_factory({"name": "acl", "tags": [tag]})

    async def body():
        client = await central(world)
        buffer = await client.ok(OP_LE_READ_BUFFER_SIZE)
        handle = await connect_to(client, address_of(tag))
        result = await proof_handshake(client, handle, tag_key("big"), bytes(16))
        await client.wait_for_events(lambda _e: client.completed_packets >= result.round_trips, 5)
        await client.close()
        return buffer, result, client.acl_fragments, client.completed_packets

    buffer, result, fragments, completed = run(body())
    assert struct.unpack("<HB", buffer[1:4]) == (27, 8)
    assert result.outcome == "malformed" and len(result.response) == 300
    assert all(len(data) <= 27 for _handle, _pb, data in fragments)
    assert any(pb == 0b01 for _handle, pb, _data in fragments)  # continuation fragments were needed
    assert completed >= result.round_trips


# -- proof variants, byte by byte --------------------------------------------------------------


VARIANTS = {
    "genuine": "valid",
    "clone": "invalid",
    "silent": "no-service",
    "malicious-oversized": "malformed",
    "malicious-malformed": "malformed",
    "malicious-version": "malformed",
    "malicious-error": "att-error",
    "malicious-mute": "timeout",
    "malicious-endless": "too-many",
    "malicious-garbled": "malformed",
}
VARIANT_TAGS = [proof_tag(f"v{i}", variant, i + 1) for i, variant in enumerate(VARIANTS)]


@pytest.fixture(scope="module", params=BACKENDS)
def variants_world(request):
    if request.param == "rootcanal" and (reason := rootcanal_available()):
        pytest.skip(reason)
    world = (RootCanalWorld if request.param == "rootcanal" else WorldProcess)({"name": "variants", "tags": VARIANT_TAGS})
    yield world
    world.close()


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_each_variant_answers_the_proof_as_specified(variants_world, variant):
    spec = next(s for s in VARIANT_TAGS if s["proof"] == variant)
    nonce = hashlib.sha256(variant.encode()).digest()[:16]

    async def body():
        client = await central(variants_world)
        handle = await connect_to(client, address_of(spec))
        result = await proof_handshake(client, handle, tag_key(spec["id"]), nonce, timeout=1.0)
        # Whatever the tag did, the link is still usable and ends cleanly.
        assert await client.disconnect(handle, 0x13) == STATUS_SUCCESS
        await client.wait_for_disconnections(1, 5)
        await client.close()
        return result

    result = run(body())
    assert result.outcome == VARIANTS[variant], result
    stats = variants_world.status()  # the world is alive and answering
    assert stats["tags"][spec["id"]]["proof"] == variant
    if variant == "genuine":
        assert result.response == proof.response(tag_key(spec["id"]), proof.challenge(nonce))
    if variant == "malicious-error":
        assert result.detail == "write 0x05"


def test_proof_stats_count_challenges_and_responses(variants_world):
    spec = VARIANT_TAGS[0]  # genuine

    async def body():
        client = await central(variants_world)
        before = json.loads(variants_world.control("proof-stats"))[spec["id"]]
        handle = await connect_to(client, address_of(spec))
        for i in range(3):
            assert (await proof_handshake(client, handle, tag_key(spec["id"]), bytes([i]) * 16)).outcome == "valid"
        await client.close()
        after = json.loads(variants_world.control("proof-stats"))[spec["id"]]
        return before, after

    before, after = run(body())
    assert after["challenges"] - before["challenges"] == 3
    assert after["responses"] - before["responses"] == 3
    assert after["connections"] - before["connections"] == 1


# -- Bumble's own host and GATT client as the gateway ---------------------------------------------


async def bumble_proof(world: WorldProcess, address: str, key: bytes, nonce: bytes) -> bool:
    from bumble.device import Device, Peer
    from bumble.hci import Address
    from bumble.transport import open_transport

    async with await open_transport(f"tcp-client:{world.hci_host}:{world.hci_port}") as transport:
        device = Device.with_hci("gateway", Address("F0:F1:F2:F3:F4:F5"), transport.source, transport.sink)
        await asyncio.wait_for(device.power_on(), 10)
        connection = await asyncio.wait_for(device.connect(Address(address, Address.RANDOM_DEVICE_ADDRESS)), 10)
        peer = Peer(connection)
        services = await asyncio.wait_for(peer.discover_service(proof.SERVICE_UUID), 5)
        assert len(services) == 1
        characteristics = await asyncio.wait_for(peer.discover_characteristics(service=services[0]), 5)
        by_uuid = {str(c.uuid).lower(): c for c in characteristics}
        challenge = proof.challenge(nonce)
        await asyncio.wait_for(peer.write_value(by_uuid[proof.CHALLENGE_UUID.upper().lower()], challenge, with_response=True), 5)
        value = await asyncio.wait_for(peer.read_value(by_uuid[proof.RESPONSE_UUID]), 5)
        await connection.disconnect()
        return proof.verify(key, challenge, bytes(value))


@pytest.mark.parametrize("variant,valid", [("genuine", True), ("clone", False)])
def test_bumble_gatt_client_proves_genuine_and_catches_the_clone(backend_world, variant, valid):
    # The clone replaces the genuine tag: same identity, same address, wrong key.
    spec = proof_tag("tag-1001", variant, 1)
    world = backend_world({"name": variant, "tags": [spec]})
    assert run(bumble_proof(world, address_of(spec), tag_key("tag-1001"), bytes(range(0xA0, 0xB0)))) is valid


# -- untrusted input ------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_peers_survive_random_l2cap_input(variant):
    import random

    from bgworld.peer import TagPeer

    rng = random.Random(variant)
    peer = TagPeer("fuzz", variant, tag_key("fuzz"))
    peer.on_connect()
    for _ in range(3000):
        cid = rng.choice([att.CID_ATT, att.CID_ATT, att.CID_LE_SIGNALING, att.CID_SMP, 0x0040])
        body = bytes((rng.choice([0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C, 0x10, 0x12, 0x52, rng.randrange(256)]),))
        body += rng.randbytes(rng.randrange(0, 40))
        frame = att.l2cap(cid, body) if rng.random() < 0.9 else rng.randbytes(rng.randrange(0, 8))
        for answer in peer.on_l2cap(frame):
            length, answer_cid = struct.unpack_from("<HH", answer)
            assert length == len(answer) - 4 and answer_cid in (att.CID_ATT, att.CID_LE_SIGNALING, att.CID_SMP)


def test_malformed_acl_from_the_host_is_counted_and_the_link_still_works(world_factory):
    tag = proof_tag("t", "genuine", 1)
    world = world_factory({"name": "acl-junk", "tags": [tag]})

    async def body():
        client = await central(world)
        handle = await connect_to(client, address_of(tag))
        junk = [
            bytes((0x02,)) + struct.pack("<HH", handle | 0x1000, 3) + b"abc",  # continuation without a start
            bytes((0x02,)) + struct.pack("<HH", handle, 1) + b"\x05",  # a start too short for its L2CAP header
            bytes((0x02,)) + struct.pack("<HH", 0x0ABC, 4) + bytes(4),  # unknown handle
            # Longer than the 27-byte buffer: counted, still carried (a Write Command, no answer).
            bytes((0x02,)) + struct.pack("<HH", handle, 40) + struct.pack("<HH", 36, 0x0004) + b"\x52" + bytes(35),
        ]
        for packet in junk:
            client.writer.write(packet)
        await client.writer.drain()
        result = await proof_handshake(client, handle, tag_key("t"), bytes(16))
        await client.close()
        return result

    result = run(body())
    assert result.outcome == "valid"
    session = world.status()["sessions"][-1]
    assert session["errors"] >= 3


def test_bumble_host_proves_through_extended_create_connection(world_factory):
    # With --extended the Bumble host uses LE Extended Create Connection and gets the
    # LE Enhanced Connection Complete.
    spec = proof_tag("tag-1001", "genuine", 1)
    world = world_factory({"name": "extended", "tags": [spec]}, extra=["--extended"])
    assert run(bumble_proof(world, address_of(spec), tag_key("tag-1001"), bytes(16))) is True
    assert json.loads(world.control("connections"))["createConnectionCommands"] == 1
