"""The proof path (docs/proof-protocol.md, docs/persistent-connect.md) on RootCanal, the
faithful controller model: the door agent
(`beacon-gateway run`) proves a genuine tag and locks out a clone exactly as it does on
Bumble's virtual controller (test_proof_agent.py). RootCanal reports a fixed RSSI; the
world's proxy rewrites it from the path-loss model, so presence works."""

from __future__ import annotations

import pathlib
import subprocess

import pytest

from proofagent import AgentRun, outbox_bodies, proof_tag, write_config
from test_world_connections import RootCanalWorld, rootcanal_available

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def rootcanal_ready():
    """Skips, with the reason, only when RootCanal cannot be prepared on this machine."""
    if reason := rootcanal_available():
        pytest.skip(reason)
    prepared = subprocess.run([str(REPO / "scripts" / "rootcanal")], capture_output=True, text=True, timeout=600)
    if prepared.returncode != 0:
        pytest.skip("scripts/rootcanal failed: " + (prepared.stderr.strip().splitlines() or ["(no output)"])[-1])


@pytest.fixture
def rootcanal_agent(tmp_path, gateway_bin, rootcanal_ready):
    worlds, runs = [], []

    def start(tags) -> tuple[RootCanalWorld, AgentRun]:
        world = RootCanalWorld({"name": "proof-rootcanal", "tags": tags})
        worlds.append(world)
        run = AgentRun(gateway_bin, write_config(tmp_path, world.transport, tags))
        run.binary, run.state_dir = gateway_bin, tmp_path / "state"
        runs.append(run)
        return world, run

    yield start
    for run in runs:
        run.stop()
    for world in worlds:
        world.close()


def test_genuine_tag_checks_in_with_a_proof_on_rootcanal(rootcanal_agent):
    tag = proof_tag("genuine-rc", "genuine", 1)
    _, run = rootcanal_agent([tag])
    run.wait_for(r"proof .*tag=genuine-rc.*ok=true", 40)
    run.wait_for(r"checkin .*person_id=person-genuine-rc", 20)
    checkins = [body for body in outbox_bodies(run.binary, run.state_dir) if body.get("type") == "checkin"]
    assert len(checkins) == 1, checkins
    handshake = checkins[0]["handshake"]
    assert handshake["ok"] is True and isinstance(handshake["rt"], int) and handshake["rt"] >= 0, handshake
    assert not run.matching(r"spoof_suspected ")


def test_clone_is_suspected_once_and_never_checks_in_on_rootcanal(rootcanal_agent):
    tag = proof_tag("clone-rc", "clone", 2)
    _, run = rootcanal_agent([tag])
    run.wait_for(r"proof .*tag=clone-rc.*ok=false", 50, count=3)
    run.wait_for(r"spoof_suspected .*person_id=person-clone-rc", 10)
    assert len(run.matching(r"proof .*tag=clone-rc.*ok=false")) == 3
    assert len(run.matching(r"spoof_suspected ")) == 1
    assert not run.matching(r"checkin ")
    bodies = outbox_bodies(run.binary, run.state_dir)
    assert [body["type"] for body in bodies] == ["spoof_suspected"], bodies
    assert bodies[0]["handshake"]["ok"] is False
