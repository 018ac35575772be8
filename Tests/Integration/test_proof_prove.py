"""`beacon-gateway prove TAG` against the virtual world (see docs/cli.md)."""

from __future__ import annotations

import json
import subprocess

from proofagent import proof_tag, write_config


def prove(binary, config, tag, *extra, timeout=60):
    return subprocess.run([str(binary), "prove", tag, "--config", str(config), "--timeout", "15", *extra],
                          capture_output=True, text=True, timeout=timeout)


def test_prove_genuine_prints_the_timing_breakdown(world_factory, gateway_bin, tmp_path):
    tag = proof_tag("prove-1", "genuine", 1)
    world = world_factory({"name": "prove", "tags": [tag]})
    config = write_config(tmp_path, world.transport, [tag])
    result = prove(gateway_bin, config, "prove-1")
    assert result.returncode == 0, result.stdout + result.stderr
    for label in ("proof valid", "wait for advertising", "connect", "discovery", "write", "read", "verify", "total",
                  "ATT round trips"):
        assert label in result.stdout, result.stdout


def test_prove_clone_fails_with_exit_1(world_factory, gateway_bin, tmp_path):
    tag = proof_tag("prove-2", "clone", 2)
    world = world_factory({"name": "prove", "tags": [tag]})
    config = write_config(tmp_path, world.transport, [tag])
    result = prove(gateway_bin, config, "prove-2")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "proof FAILED" in result.stdout


def test_prove_repeats_with_cached_handles_in_two_round_trips(world_factory, gateway_bin, tmp_path):
    tag = proof_tag("prove-3", "genuine", 3)
    world = world_factory({"name": "prove", "tags": [tag]})
    config = write_config(tmp_path, world.transport, [tag])
    result = prove(gateway_bin, config, "prove-3", "--count", "3", "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["ok"] for line in lines] == [True, True, True]
    assert not lines[0]["cached"] and lines[0]["att_round_trips"] > 2
    assert all(line["cached"] and line["att_round_trips"] == 2 for line in lines[1:])


def test_prove_unknown_tag_is_a_configuration_error(world_factory, gateway_bin, tmp_path):
    tag = proof_tag("prove-4", "genuine", 4)
    config = write_config(tmp_path, "tcp:127.0.0.1:9", [tag])
    result = prove(gateway_bin, config, "nobody")
    assert result.returncode == 2


def test_prove_in_direct_mode(world_factory, gateway_bin, tmp_path):
    tag = proof_tag("prove-5", "genuine", 5)
    world = world_factory({"name": "prove", "tags": [tag]})
    config = write_config(tmp_path, world.transport, [tag], connect_mode="direct")
    result = prove(gateway_bin, config, "prove-5")
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(world.control("connections"))["createConnectionCommands"] == 1


def test_a_valid_proof_slower_than_the_bound_fails_as_too_slow(world_factory, gateway_bin, tmp_path):
    # The genuine tag behind a relay that adds 150 ms to each answer: its valid response
    # comes 300 ms after the challenge, beyond a bound of 0.2 s (docs/security.md,
    # "Relayed proofs"). Its discovery answers are slow too, but only the challenge's
    # write and the response's read count.
    tag = proof_tag("prove-6", "genuine", 6, answer_delay_ms=150)
    world = world_factory({"name": "prove", "tags": [tag]})
    config = write_config(tmp_path, world.transport, [tag], presence="proof_response_s = 0.2")
    result = prove(gateway_bin, config, "prove-6", "--json")
    assert result.returncode == 1, result.stdout + result.stderr
    line = json.loads(result.stdout.splitlines()[0])
    assert line["ok"] is False and line["failure"] == "too_slow", line
    assert line["write_ms"] + line["read_ms"] >= 300, line
    text = prove(gateway_bin, config, "prove-6")
    assert text.returncode == 1 and "proof FAILED: too_slow (challenge to response took" in text.stdout, text.stdout
    assert "more than the 200 ms" in text.stdout, text.stdout
    # The same relayed tag within the default bound (600 ms): valid.
    relaxed = write_config(tmp_path, world.transport, [tag])
    assert prove(gateway_bin, relaxed, "prove-6").returncode == 0
