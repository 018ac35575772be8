"""The event server: stores events by Idempotency-Key (201 first, 200 duplicate), checks
the headers and body of docs/event-api.md, records heartbeats, serves a gateway's roster
(docs/fleet.md: ETag = content hash, 304 on If-None-Match), and misbehaves on request
through ``POST /_control``. Every request to the site's API and every answer to one is
validated against docs/api/openapi.yaml; mismatches are kept as ``schemaProblems``."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import pathlib
import ssl
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from . import contract

EVENTS_PATH = "/v1/attendance/events"
HEARTBEAT_PREFIX = "/v1/gateways/"
HEARTBEAT_SUFFIX = "/heartbeat"
ROSTER_SUFFIX = "/roster"
MAX_BODY = 64 * 1024


class Faults:
    """What the server does wrong next; changed through POST /_control."""

    def __init__(self) -> None:
        self.fail_status: int | None = None
        self.fail_until = 0.0
        self.fail_requests = 0
        self.retry_after: str | None = None
        self.key_status: dict[str, int] = {}
        self.next_statuses: list[int] = []
        self.require_token: str | None = None
        self.delay_ms = 0
        self.drop_connections = 0
        self.malformed = 0
        # Heartbeats only: the status to answer (None: 204) and a delay before answering
        # (lowering it releases the heartbeats held at once).
        self.heartbeat_status: int | None = None
        self.heartbeat_delay_ms = 0
        # Roster requests only: a status to answer instead (None: the roster), a delay,
        # whether the answer carries an ETag (True: the hash, a string: that one), and
        # whether If-None-Match is ignored (a 200 every time, as some servers do).
        self.roster_status: int | None = None
        self.roster_delay_ms = 0
        self.roster_etag: bool | str = True
        self.roster_ignore_if_none_match = False


def roster_etag(body: bytes) -> str:
    """The ETag of a roster document: a hash of its bytes, so an edit changes it."""
    return '"' + hashlib.sha256(body).hexdigest()[:20] + '"'


class State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.faults = Faults()
        self.events: dict[str, dict] = {}  # key -> body, in arrival order
        self.requests: dict[str, int] = {}  # key -> POSTs seen (any answer)
        self.log: list[dict] = []  # every POST: key, status, t, userId, sequence
        self.header_problems: list[str] = []
        # Requests and answers of the site's API that docs/api/openapi.yaml does not
        # describe (a scripted answer that breaks it on purpose lands here too).
        self.schema_problems: list[str] = []
        # Every heartbeat once answered: number (in arrival order, from 1), received and t
        # (monotonic, arrival and answer), gateway (from the path), headers, body, status.
        self.heartbeats: list[dict] = []
        # The roster document served to every gateway (bytes as sent; None: 404), and
        # every roster request: t, gateway, headers, status.
        self.roster: bytes | None = None
        self.roster_requests: list[dict] = []
        self.heartbeats_received = 0
        # The numbers of the heartbeats held unanswered right now (each event's log entry
        # says which were held when it arrived), and their release.
        self.heartbeats_held: set[int] = set()
        self.heartbeat_released = threading.Condition(self.lock)

    def control(self, command: dict) -> dict:
        f = self.faults
        with self.lock:
            if command.get("reset"):
                self.faults = f = Faults()
            if "clear" in command and command["clear"]:
                self.events.clear()
                self.requests.clear()
                self.log.clear()
            if "mode" in command or "fail_status" in command:
                status = command.get("fail_status", command.get("mode"))
                f.fail_status = int(status) if status not in (None, "ok", "off") else None
                f.fail_until = time.monotonic() + float(command["for_seconds"]) if "for_seconds" in command else 0.0
                f.fail_requests = int(command.get("for_requests", 0))
                if "for_seconds" not in command and "for_requests" not in command:
                    f.fail_until = float("inf")
            if "retry_after" in command:
                f.retry_after = None if command["retry_after"] is None else str(command["retry_after"])
            if "reject_keys" in command:
                for key in command["reject_keys"]:
                    f.key_status[key] = int(command.get("status", 409))
            if "status_for_next" in command:
                f.next_statuses += [int(command["status_for_next"])] * int(command.get("count", 1))
            if "require_token" in command:
                f.require_token = command["require_token"]
            if "delay_ms" in command:
                f.delay_ms = int(command["delay_ms"])
            if "drop_connections" in command:
                f.drop_connections = int(command["drop_connections"])
            if "malformed" in command:
                f.malformed = int(command["malformed"])
            if "heartbeat_status" in command:
                f.heartbeat_status = None if command["heartbeat_status"] is None else int(command["heartbeat_status"])
            if "heartbeat_delay_ms" in command:
                f.heartbeat_delay_ms = int(command["heartbeat_delay_ms"])
            if "roster" in command:
                roster = command["roster"]
                self.roster = None if roster is None else json.dumps(roster).encode()
            if "roster_raw" in command:
                self.roster = command["roster_raw"].encode()
            if "roster_status" in command:
                f.roster_status = None if command["roster_status"] is None else int(command["roster_status"])
            if "roster_delay_ms" in command:
                f.roster_delay_ms = int(command["roster_delay_ms"])
            if "roster_etag" in command:
                etag = command["roster_etag"]
                f.roster_etag = etag if isinstance(etag, str) else bool(etag)
            if "roster_ignore_if_none_match" in command:
                f.roster_ignore_if_none_match = bool(command["roster_ignore_if_none_match"])
            self.heartbeat_released.notify_all()
        return {"ok": True}

    def snapshot(self) -> dict:
        with self.lock:
            return {
                "events": dict(self.events),
                "order": list(self.events.keys()),
                "requests": dict(self.requests),
                "log": list(self.log),
                "headerProblems": list(self.header_problems),
                "schemaProblems": list(self.schema_problems),
                "heartbeats": list(self.heartbeats),
                "rosterRequests": list(self.roster_requests),
                "heartbeatsHeld": sorted(self.heartbeats_held),
            }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "eventserver/1"
    state: State  # set on the subclass per server
    check_api = True  # set on the subclass per server

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - quiet by default
        pass

    def setup(self) -> None:
        super().setup()
        # Answers go out in one segment without waiting for the client's delayed ACK.
        try:
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass

    def send_response(self, code: int, message: str | None = None) -> None:
        # What is answered, kept for the check against the API document.
        self.answered = (code, {})
        super().send_response(code, message)

    def send_header(self, keyword: str, value: str) -> None:
        if getattr(self, "answered", None) is not None:
            self.answered[1][keyword] = value
        super().send_header(keyword, value)

    def _checked(self, body: bytes, handle) -> None:
        """Runs `handle` for a request of the site's API, the request checked against the
        API document first and its answer (if one is given: a dropped connection or
        garbage is none) as it is written: before the client can read it, so a snapshot
        taken after the answer holds their problems. A large answer (a roster of
        thousands) is checked once sent instead, so the check (about a second for 5,000
        persons) does not eat the door's timeout."""
        if not self.check_api:
            handle()
            return
        headers = {name: value for name, value in self.headers.items()}
        path = self.path.split("?", 1)[0]
        self._record(contract.request_problems(self.command, path, headers, body))
        self.api_request = (self.command, path, headers, body)
        self.answered = None
        self.answered_body = b""
        try:
            handle()
        finally:
            self._check_answer()

    def flush_headers(self) -> None:
        if len(getattr(self, "answered_body", b"")) <= MAX_BODY:
            self._check_answer()
        super().flush_headers()

    def _check_answer(self) -> None:
        if getattr(self, "api_request", None) is not None and self.answered is not None:
            status, answer_headers = self.answered
            self._record(contract.answer_problems(*self.api_request, status, answer_headers, self.answered_body))
            self.api_request = None

    def _record(self, problems: list[str]) -> None:
        if problems:
            with self.state.lock:
                self.state.schema_problems += problems

    def _answer(self, status: int, body: dict | None = None, headers: dict | None = None) -> None:
        payload = json.dumps(body if body is not None else {}).encode()
        self.answered_body = payload
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        # Headers and body in one write (end_headers would flush the headers alone).
        self._headers_buffer.append(b"\r\n")
        self._headers_buffer.append(payload)
        self.flush_headers()

    def _read_body(self) -> bytes | None:
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            return None
        if length < 0 or length > MAX_BODY:
            return None
        return self.rfile.read(length)

    def do_GET(self) -> None:  # noqa: N802
        if self.path == "/_events":
            self._answer(200, self.state.snapshot())
        elif self.path == "/_health":
            self._answer(200, {"ok": True})
        elif self.path.startswith(HEARTBEAT_PREFIX) and self.path.endswith(ROSTER_SUFFIX):
            self._checked(b"", lambda: self._roster(self.path[len(HEARTBEAT_PREFIX):-len(ROSTER_SUFFIX)]))
        else:
            self._answer(404, {"error": "not found"})

    def do_POST(self) -> None:  # noqa: N802
        body = self._read_body()
        if body is None:
            self._answer(413, {"error": "bad length"})
            self.close_connection = True
            return
        if self.path == "/_control":
            try:
                command = json.loads(body or b"{}")
            except json.JSONDecodeError:
                self._answer(400, {"error": "control body must be JSON"})
                return
            self._answer(200, self.state.control(command))
            return
        if self.path.startswith(HEARTBEAT_PREFIX) and self.path.endswith(HEARTBEAT_SUFFIX):
            self._checked(body, lambda: self._heartbeat(self.path[len(HEARTBEAT_PREFIX):-len(HEARTBEAT_SUFFIX)], body))
            return
        if self.path != EVENTS_PATH:
            self._answer(404, {"error": "not found"})
            return
        self._checked(body, lambda: self._event(body))

    def _heartbeat(self, gateway: str, body: bytes) -> None:
        """Records the heartbeat as received (body parsed, or None when not JSON) and
        answers 204, or the scripted status after the scripted delay."""
        try:
            parsed = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError):
            parsed = None
        state = self.state
        with state.lock:
            status = state.faults.heartbeat_status or 204
            state.heartbeats_received += 1
            number = state.heartbeats_received
            received = time.monotonic()
            state.heartbeats_held.add(number)
            # Held for the delay as it stands now: a control command wakes it to look again.
            while (remaining := received + state.faults.heartbeat_delay_ms / 1000.0 - time.monotonic()) > 0:
                state.heartbeat_released.wait(remaining)
            state.heartbeats_held.discard(number)
            state.heartbeats.append({
                "number": number, "received": received, "t": time.monotonic(), "gateway": gateway,
                "status": status, "body": parsed,
                "headers": {name.lower(): value for name, value in self.headers.items()},
            })
        if status == 204:
            self.send_response(204)
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self._answer(status, {"status": status})

    def roster_document(self) -> bytes | None:
        """The roster to serve (a subclass may read it from a file)."""
        with self.state.lock:
            return self.state.roster

    def _roster(self, gateway: str) -> None:
        """The roster with its ETag, 304 when If-None-Match names it, or the scripted
        status after the scripted delay; every request recorded."""
        with self.state.lock:
            f = self.state.faults
            status, delay, with_etag = f.roster_status, f.roster_delay_ms / 1000.0, f.roster_etag
            ignore_if_none_match = f.roster_ignore_if_none_match
        if delay > 0:
            time.sleep(delay)
        body = self.roster_document()
        etag = None if body is None else with_etag if isinstance(with_etag, str) else roster_etag(body)
        if status is None:
            if body is None:
                status = 404
            elif with_etag and not ignore_if_none_match and self.headers.get("If-None-Match") == etag:
                status = 304
            else:
                status = 200
        with self.state.lock:
            self.state.roster_requests.append({
                "t": time.monotonic(), "gateway": gateway, "status": status,
                "headers": {name.lower(): value for name, value in self.headers.items()},
            })
        if status == 200:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            if with_etag:
                self.send_header("ETag", etag)
            self.answered_body = body
            self._headers_buffer.append(b"\r\n")
            self._headers_buffer.append(body)
            self.flush_headers()
        elif status == 304:
            self.send_response(304)
            self.send_header("ETag", etag)
            self.end_headers()
        else:
            self._answer(status, {"status": status})

    def _event(self, body: bytes) -> None:
        state = self.state
        key = self.headers.get("Idempotency-Key", "")
        try:
            event = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError):
            event = None
        entry = {
            "key": key,
            "t": time.monotonic(),
            "userId": event.get("userId") if isinstance(event, dict) else None,
            "sequence": event.get("sequence") if isinstance(event, dict) else None,
        }
        with state.lock:
            f = state.faults
            entry["heartbeatsHeld"] = sorted(state.heartbeats_held)
            state.requests[key] = state.requests.get(key, 0) + 1
            action = None
            if f.drop_connections > 0:
                f.drop_connections -= 1
                action = "drop"
            elif f.malformed > 0:
                f.malformed -= 1
                action = "malformed"
            delay = f.delay_ms / 1000.0
        if action == "drop":
            entry["status"] = "dropped"
            self._log(entry)
            self.close_connection = True
            return
        if action == "malformed":
            entry["status"] = "malformed"
            self._log(entry)
            self.wfile.write(b"NOT-HTTP garbage \x00\xff\r\n\r\n")
            self.close_connection = True
            return
        if delay > 0:
            time.sleep(delay)
        status, headers = self._decide(key, event)
        entry["status"] = status
        self._log(entry)
        self._answer(status, {"status": status}, headers)

    def _decide(self, key: str, event) -> tuple[int, dict]:
        state = self.state
        with state.lock:
            f = state.faults
            retry = {"Retry-After": f.retry_after} if f.retry_after is not None else {}
            if f.require_token is not None and self.headers.get("Authorization") != f"Bearer {f.require_token}":
                return 401, {}
            if key in f.key_status:
                return f.key_status[key], {}
            if f.next_statuses:
                return f.next_statuses.pop(0), retry
            if f.fail_status is not None:
                active = time.monotonic() < f.fail_until or f.fail_requests > 0
                if f.fail_requests > 0:
                    f.fail_requests -= 1
                if active:
                    return f.fail_status, retry
                f.fail_status = None
            problems = self._check(key, event)
            if problems:
                state.header_problems.append(f"{key}: {'; '.join(problems)}")
                return 400, {}
            if key in state.events:
                return 200, {}
            state.events[key] = event
            return 201, {}

    def _check(self, key: str, event) -> list[str]:
        problems = []
        if not key:
            problems.append("no Idempotency-Key")
        if not self.headers.get("X-Device-Id"):
            problems.append("no X-Device-Id")
        if not self.headers.get("X-App-Version"):
            problems.append("no X-App-Version")
        if not (self.headers.get("Content-Type") or "").startswith("application/json"):
            problems.append("Content-Type is not application/json")
        if not isinstance(event, dict):
            problems.append("body is not a JSON object")
            return problems
        if event.get("idempotencyKey") != key:
            problems.append("body idempotencyKey differs from the header")
        if not isinstance(event.get("sequence"), int):
            problems.append("no integer sequence")
        if event.get("deviceId") != self.headers.get("X-Device-Id"):
            problems.append("deviceId differs from X-Device-Id")
        for field in ("id", "type", "userId", "timestamp"):
            if field not in event:
                problems.append(f"no {field}")
        return problems

    def _log(self, entry: dict) -> None:
        with self.state.lock:
            self.state.log.append(entry)


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        # Clients that hang up (a gateway killed -9) or fail TLS are part of the tests.
        import sys
        error = sys.exc_info()[1]
        if isinstance(error, (ConnectionError, ssl.SSLError, TimeoutError, OSError)):
            return
        super().handle_error(request, client_address)


class EventServer:
    """The server in a background thread; ``url`` once started."""

    # Every server made in this process, so the suite can check after each test that the
    # agent sent nothing the API document does not describe (Tests/Integration/conftest.py).
    made: list["EventServer"] = []

    def __init__(self, host: str = "127.0.0.1", port: int = 0, tls_dir: str | os.PathLike | None = None,
                 tls_addresses: tuple[str, ...] = ("127.0.0.1",), check_api: bool = True) -> None:
        """`check_api=False` leaves out the check against the API document, for a benchmark
        whose server must not spend the CPU it measures (a roster of thousands takes a
        second to check)."""
        self.state = State()
        EventServer.made.append(self)
        if check_api:
            # Read the API document now (under a second), not in the first request, whose
            # answer a door with a short timeout_s would otherwise give up on.
            contract.contract()
        handler = type("BoundHandler", (Handler,), {"state": self.state, "check_api": check_api})
        self.httpd = QuietServer((host, port), handler)
        self.ca_file: str | None = None
        scheme = "http"
        if tls_dir is not None:
            ca, cert, key = make_tls_files(pathlib.Path(tls_dir), tls_addresses)
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(cert, key)
            context.set_alpn_protocols(["http/1.1"])
            self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
            self.ca_file = str(ca)
            scheme = "https"
        self.port = self.httpd.server_address[1]
        self.url = f"{scheme}://{host}:{self.port}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def start(self) -> "EventServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def control(self, **command) -> None:
        self.state.control(command)

    def snapshot(self) -> dict:
        return self.state.snapshot()


def make_tls_files(directory: pathlib.Path, addresses: tuple[str, ...] = ("127.0.0.1",)
                   ) -> tuple[pathlib.Path, pathlib.Path, pathlib.Path]:
    """A private CA and a server certificate for ADDRESSES and localhost, made with the
    openssl command (Debian's); reused when already there."""
    directory.mkdir(parents=True, exist_ok=True)
    ca, ca_key = directory / "ca.pem", directory / "ca.key"
    cert, key = directory / "server.pem", directory / "server.key"
    if cert.exists() and key.exists() and ca.exists():
        return ca, cert, key

    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True)

    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=beacon-gateway test CA",
        "-keyout", str(ca_key), "-out", str(ca),
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    csr = directory / "server.csr"
    run("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(csr))
    ext = directory / "server.ext"
    names = ",".join([f"IP:{address}" for address in addresses] + ["DNS:localhost"])
    ext.write_text(f"subjectAltName={names}\nbasicConstraints=CA:FALSE\n"
                   "keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n")
    run("x509", "-req", "-in", str(csr), "-CA", str(ca), "-CAkey", str(ca_key), "-CAcreateserial",
        "-days", "2", "-out", str(cert), "-extfile", str(ext))
    return ca, cert, key
