"""The reference server a site can read to wire its own (docs/server-developers.md,
docs/event-api.md, docs/fleet.md): the test server's answers, plus

- events stored in SQLite by Idempotency-Key (201 the first time, 200 for a key it
  already holds, across restarts of the server too);
- the roster served from a JSON file that can be edited while it runs: re-read when
  its modification time or size changes, ETag = a hash of its bytes, 304 on
  If-None-Match (a file that is not JSON is served as it is: the gateway refuses it and
  says why in its heartbeats);
- one line on stdout per event stored and per heartbeat.

    python -m eventserver --store events.sqlite --roster-file roster.json [--port N]
"""

from __future__ import annotations

import json
import os
import pathlib
import sqlite3
import sys
import threading
import time

from .server import EventServer


class ReferenceServer(EventServer):
    def __init__(self, store: str | os.PathLike, roster_file: str | os.PathLike | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.database = sqlite3.connect(str(store), check_same_thread=False)
        self.database.execute("PRAGMA journal_mode=WAL")
        self.database.execute("CREATE TABLE IF NOT EXISTS events (idempotency_key TEXT PRIMARY KEY, received_at TEXT NOT NULL,"
                              " gateway TEXT, type TEXT, user_id TEXT, sequence INTEGER, body TEXT NOT NULL)")
        self.database.commit()
        self.database_lock = threading.Lock()
        # Keys stored before this start answer 200 too.
        for key, body in self.database.execute("SELECT idempotency_key, body FROM events"):
            self.state.events[key] = json.loads(body)
        self.roster_path = pathlib.Path(roster_file) if roster_file is not None else None
        self._roster_seen: tuple[float, int] | None = None
        reference = self
        base = self.httpd.RequestHandlerClass

        class ReferenceHandler(base):
            def roster_document(self) -> bytes | None:
                return reference.current_roster()

            def _decide(self, key: str, event) -> tuple[int, dict]:
                status, headers = super()._decide(key, event)
                if status == 201:
                    reference.store(key, event, self.headers.get("X-Device-Id"))
                return status, headers

            def _heartbeat(self, gateway: str, body: bytes) -> None:
                super()._heartbeat(gateway, body)
                reference.show_heartbeat(gateway, body)

        self.httpd.RequestHandlerClass = ReferenceHandler

    def current_roster(self) -> bytes | None:
        """The roster file's bytes, re-read when it changed (edits show at the next poll)."""
        if self.roster_path is None:
            return None
        try:
            info = self.roster_path.stat()
        except FileNotFoundError:
            return None
        seen = (info.st_mtime, info.st_size)
        with self.state.lock:
            if seen == self._roster_seen and self.state.roster is not None:
                return self.state.roster
        body = self.roster_path.read_bytes()
        with self.state.lock:
            changed = self.state.roster != body
            self.state.roster = body
            self._roster_seen = seen
        if changed:
            try:
                revision = json.loads(body).get("revision")
            except (ValueError, AttributeError):
                revision = "(not JSON)"
            print(f"roster   {self.roster_path} loaded: revision {revision}", flush=True)
        return body

    def store(self, key: str, event: dict, gateway: str | None) -> None:
        with self.database_lock:
            self.database.execute(
                "INSERT OR IGNORE INTO events VALUES (?, ?, ?, ?, ?, ?, ?)",
                (key, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), gateway, event.get("type"),
                 event.get("userId"), event.get("sequence"), json.dumps(event)))
            self.database.commit()
        print(f"event    {gateway} #{event.get('sequence')} {event.get('type')} {event.get('userId')}"
              f" at {event.get('timestamp')} (stored, key {key[:12]}…)", flush=True)

    def show_heartbeat(self, gateway: str, body: bytes) -> None:
        try:
            beat = json.loads(body)
            roster = beat.get("roster") or {}
            error = f", roster error: {roster['error']}" if roster.get("error") else ""
            print(f"heartbeat {gateway}: {beat.get('mode')}, controller {beat.get('controller', {}).get('state')},"
                  f" {beat.get('present')} present, outbox {beat.get('outbox', {}).get('pending')} pending,"
                  f" roster {roster.get('source')} {roster.get('revision')} ({roster.get('persons')} persons){error}",
                  flush=True)
        except (ValueError, AttributeError):
            print(f"heartbeat {gateway}: not JSON", file=sys.stderr, flush=True)

    def stop(self) -> None:
        super().stop()
        with self.database_lock:
            self.database.close()
