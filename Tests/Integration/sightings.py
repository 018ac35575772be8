"""Sighting reports as a neighbouring door makes them (docs/neighbours.md, "On the bus"),
for tests that play a neighbour on a real mosquitto: the keys derived from the site's
master key, the signed binary report, and a paho-mqtt client that publishes them on
`P/S/sightings/G` about once a second (or as fast as it is told, for a flood)."""

from __future__ import annotations

import hashlib
import hmac
import struct
import threading
import time

PERSON_LABEL = b"BGW-SIGHTING-PERSON-v1"
SIGN_LABEL = b"BGW-SIGHTING-SIGN-v1"


class Keys:
    """K_person and K_sign of a site, from its 32-byte master key."""

    def __init__(self, master_key: bytes) -> None:
        self.person = hmac.new(master_key, PERSON_LABEL, hashlib.sha256).digest()
        self.sign = hmac.new(master_key, SIGN_LABEL, hashlib.sha256).digest()

    def person_hash(self, person_id: str) -> bytes:
        return hmac.new(self.person, person_id.encode(), hashlib.sha256).digest()[:8]


def report(keys: Keys, sender: str, sightings: list[tuple[str, int, bool]] = (), *,
           wall_ms: int | None = None, sign_with: bytes | None = None) -> bytes:
    """A signed report of `sender` made at `wall_ms` (now), with (person id, RSSI, holds)
    per sighting, of version 2 with no passage confirmed (docs/neighbours.md); `sign_with`
    signs with another key (a forgery)."""
    wall = int(time.time() * 1000) if wall_ms is None else wall_ms
    body = b"BGS" + bytes([2, len(sender.encode())]) + sender.encode() + struct.pack(">qH", wall, len(sightings))
    for person, rssi, holds in sightings:
        body += keys.person_hash(person) + struct.pack(">bB", rssi, 1 if holds else 0)
    return body + hmac.new(sign_with or keys.sign, body, hashlib.sha256).digest()


class FakeNeighbour:
    """A door on the bus that is only a publisher of sighting reports: `start()` sends a
    report every `period` s (what `sightings()` returns then) until `stop()`."""

    def __init__(self, broker, keys: Keys, gateway_id: str, *, site: str = "S_TEST",
                 prefix: str = "beacon-gateway") -> None:
        import paho.mqtt.client as mqtt
        self.keys = keys
        self.gateway_id = gateway_id
        self.topic = f"{prefix}/{site}/sightings/{gateway_id}"
        self.sightings: list[tuple[str, int, bool]] = []
        self.sent = 0
        # The reports sent, newest last (a few: for a replay of one).
        self.reports: list[bytes] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"fake-{gateway_id}",
                                  protocol=mqtt.MQTTv5)
        self.client.max_queued_messages_set(0)
        connected = threading.Event()
        self.client.on_connect = lambda *args: connected.set()
        self.client.connect(broker.host, broker.port)
        self.client.loop_start()
        if not connected.wait(10):
            raise AssertionError(f"the fake neighbour {gateway_id} did not connect")

    def publish(self, payload: bytes, topic: str | None = None) -> None:
        self.client.publish(topic or self.topic, payload, qos=0).wait_for_publish(10)

    def start(self, period: float = 0.5) -> "FakeNeighbour":
        def run() -> None:
            while not self._stop.is_set():
                payload = report(self.keys, self.gateway_id, self.sightings)
                self.client.publish(self.topic, payload, qos=0)
                self.reports = self.reports[-3:] + [payload]
                self.sent += 1
                self._stop.wait(period)
        self._stop.clear()
        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """No more reports (the neighbour falls silent)."""
        self._stop.set()
        if self._thread:
            self._thread.join(10)
            self._thread = None

    def flood(self, payloads, rate: float, seconds: float) -> int:
        """`payloads(i)` published at `rate` a second for `seconds`, paced in bursts of 10 ms;
        returns how many were handed to the broker's connection."""
        sent = 0
        started = time.monotonic()
        total = int(rate * seconds)
        while sent < total:
            due = min(total, int((time.monotonic() - started) * rate) + int(rate / 100))
            while sent < due:
                self.client.publish(self.topic, payloads(sent), qos=0)
                sent += 1
            time.sleep(0.01)
        return sent

    def close(self) -> None:
        self.stop()
        self.client.loop_stop()
        self.client.disconnect()
