"""The site's kit (docs/server-developers.md): the API document is valid OpenAPI 3.1 and
the test server's check against it refuses what leaves it; the alert rules pass
`promtool check rules` and their unit tests."""

from __future__ import annotations

import json
import pathlib
import re
import shutil
import subprocess
import urllib.error
import urllib.request

import pytest
import yaml
from openapi_spec_validator import validate

from eventserver import EventServer
from eventserver.contract import DOCUMENT

REPO = pathlib.Path(__file__).resolve().parents[2]
MONITORING = REPO / "docs" / "monitoring"

# The body of docs/event-api.md ("The body"), as EventBodyTests asserts the agent writes it.
EVENT = {"id": "0f8fad5b-d9cb-469f-a165-70867728950e",
         "idempotencyKey": "3f77ee788f784488840d3ea80bf70b19b209189bbef57ca504c74eddfb33f8f5",
         "sequence": 42, "type": "checkin", "userId": "u_1001", "deviceId": "door-lab-301",
         "siteId": "S_HQ", "doorId": "lab-301", "timestamp": "2026-11-20T06:35:12.345Z",
         "decidedAt": "2026-11-20T06:38:12.345Z", "visitStart": "2026-11-20T06:35:12.345Z",
         "beacon": {"tag": "tag-1001", "address": "C0:11:22:33:44:55",
                    "uuid": "e2c56db5-dffb-48d2-b060-d0f5a71096e0", "major": 10, "minor": 3},
         "rssiSeries": [-75, -71, -68, -66], "txPower": -59, "handshake": {"ok": True, "rt": 180},
         "app": {"version": "1.0.0"}}


def test_the_api_document_is_valid_openapi_3_1():
    document = yaml.safe_load(DOCUMENT.read_text())
    assert document["openapi"].startswith("3.1")
    validate(document)
    assert set(document["paths"]) == {"/v1/attendance/events", "/v1/gateways/{gatewayId}/heartbeat",
                                      "/v1/gateways/{gatewayId}/roster"}


def post_event(server: EventServer, body: dict, **headers: str) -> int:
    data = json.dumps(body).encode()
    sent = {"Content-Type": "application/json", "Idempotency-Key": body.get("idempotencyKey", ""),
            "X-Device-Id": "door-lab-301", "X-App-Version": "0.1.0"} | headers
    request = urllib.request.Request(server.url + "/v1/attendance/events", data=data, method="POST",
                                     headers={name: value for name, value in sent.items() if value is not None})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code


def test_the_server_refuses_a_body_that_leaves_the_schema():
    server = EventServer().start()
    try:
        assert post_event(server, EVENT) == 201
        assert server.snapshot()["schemaProblems"] == []

        wrong = json.loads(json.dumps(EVENT)) | {"sequence": "42", "rssi": -60}
        wrong["beacon"]["major"] = 70000
        wrong["idempotencyKey"] = "a" * 64
        post_event(server, wrong)
        problems = server.snapshot()["schemaProblems"]
        assert len(problems) == 1 and problems[0].startswith("request POST /v1/attendance/events: "), problems
        for field in ("sequence: '42' is not of type 'integer'", "'rssi' was unexpected",
                      "beacon/major: 70000 is greater than the maximum of 65535"):
            assert field in problems[0], problems[0]

        right_body_without_header = json.loads(json.dumps(EVENT)) | {"idempotencyKey": "b" * 64}
        post_event(server, right_body_without_header, **{"X-Device-Id": None})
        problems = server.snapshot()["schemaProblems"]
        assert len(problems) == 2 and "Missing required header parameter: X-Device-Id" in problems[1], problems
    finally:
        server.stop()
        # Refused on purpose: not the agent's requests the suite checks after each test.
        EventServer.made.remove(server)


def promtool() -> str:
    binary = shutil.which("promtool")
    if binary is None:
        pytest.skip("Debian's prometheus package (promtool) is not installed (scripts/setup installs it)")
    return binary


def test_the_alert_rules_are_valid_and_pass_their_unit_tests():
    binary = promtool()
    checked = subprocess.run([binary, "check", "rules", "alerts.yml"], cwd=MONITORING,
                             capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    rules = yaml.safe_load((MONITORING / "alerts.yml").read_text())["groups"][0]["rules"]
    tested = subprocess.run([binary, "test", "rules", "alerts.test.yml"], cwd=MONITORING,
                            capture_output=True, text=True, timeout=120)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    # Every alert has a test that expects it to fire.
    tests = (MONITORING / "alerts.test.yml").read_text()
    firing = set(re.findall(r"alertname: (\w+)\n\s+exp_alerts:\n\s+- exp_labels", tests))
    assert firing == {rule["alert"] for rule in rules}


def test_the_documents_examples_follow_its_schemas():
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    document = yaml.safe_load(DOCUMENT.read_text())
    registry = Registry().with_resource("urn:api", Resource.from_contents(document, default_specification=DRAFT202012))
    paths = document["paths"]
    examples = [
        ("Event", paths["/v1/attendance/events"]["post"]["requestBody"]["content"]["application/json"]["example"]),
        ("Heartbeat", paths["/v1/gateways/{gatewayId}/heartbeat"]["post"]["requestBody"]["content"]["application/json"]["example"]),
        ("Roster", paths["/v1/gateways/{gatewayId}/roster"]["get"]["responses"]["200"]["content"]["application/json"]["example"]),
        ("Event", EVENT),
    ]
    for name, example in examples:
        validator = Draft202012Validator({"$ref": f"urn:api#/components/schemas/{name}"}, registry=registry)
        assert [error.message for error in validator.iter_errors(example)] == [], name


def test_schemathesis_finds_the_reference_server_answering_as_documented(tmp_path):
    """The reference server of scripts/demo, run as the demo runs it, answers requests
    generated from the document as the document says (status, headers, content type and
    body of every answer; no server error)."""
    import sys
    schemathesis = pathlib.Path(sys.executable).with_name("schemathesis")
    (tmp_path / "roster.json").write_text(json.dumps(
        {"revision": "r-1", "persons": [{"id": "u_1", "name": "A", "tags": [
            {"id": "t-1", "ibeacon": "e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2"}]}]}))
    server = subprocess.Popen([sys.executable, "-m", "eventserver", "--port", "0", "--quiet",
                               "--store", str(tmp_path / "events.sqlite"), "--roster-file", str(tmp_path / "roster.json")],
                              cwd=tmp_path, env={**__import__("os").environ, "PYTHONPATH": str(REPO / "Tests" / "Integration")},
                              stdout=subprocess.PIPE, text=True)
    try:
        ready = server.stdout.readline().split()
        assert ready and ready[0] == "READY", ready
        checked = subprocess.run(
            [str(schemathesis), "run", str(DOCUMENT), "--url", ready[1], "--mode", "positive",
             "--checks", "not_a_server_error,status_code_conformance,content_type_conformance,"
                         "response_headers_conformance,response_schema_conformance",
             "--max-examples", "10", "--seed", "1", "--suppress-health-check", "all", "--no-color"],
            cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert checked.returncode == 0, checked.stdout[-4000:] + checked.stderr[-2000:]
        assert re.search(r"Tested: 3\b", checked.stdout) and " failed" not in checked.stdout, checked.stdout[-2000:]
    finally:
        server.terminate()
        server.wait(timeout=10)
