"""A real mosquitto on loopback for the site-bus tests (SPEC §18), and a subscriber.

    broker = Broker(tmp_path / "broker", users={"door": "secret"}, tls=True).start()
    with broker.subscriber("beacon-gateway/#") as bus:
        broker.publish("beacon-gateway/S/G/status", "online", retain=True)
        bus.wait_message("beacon-gateway/S/G/status", payload=b"online", retain=True)
    broker.stop(); broker.start()      # an outage: the same ports, the same persistence file
    broker.close()

The broker is Debian's `mosquitto` (scripts/setup installs it), started from a config the
Broker writes into its own directory, with everything else there too: the password file
(`mosquitto_passwd -b`), the persistence file, and its log (`log_dest stderr`, appended to
`mosquitto.log` across restarts) which every failure message quotes. Readiness is the log
line mosquitto writes once its listeners are open, never a sleep. The subscriber is a
paho-mqtt 2.2 client (MQTT 5) on its own network thread; what it receives is collected under
a Condition, and tests wait on that Condition for what they expect.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import re
import signal
import socket
import subprocess
import threading
import time
from typing import Callable

import paho.mqtt.client as mqtt
from paho.mqtt.reasoncodes import ReasonCode

from conftest import wait_until
from eventserver import make_tls_files

HOST = "127.0.0.1"
READY_TIMEOUT_S = 10.0
WAIT_TIMEOUT_S = 10.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


@dataclasses.dataclass(frozen=True)
class TLSFiles:
    """A private CA and a server certificate it signed (for 127.0.0.1 and localhost), and
    a second CA that has nothing to do with them: a client trusting only `wrong_ca`
    must refuse the broker."""
    ca: pathlib.Path
    cert: pathlib.Path
    key: pathlib.Path
    wrong_ca: pathlib.Path

    @classmethod
    def make(cls, directory: pathlib.Path) -> "TLSFiles":
        """Made with the openssl command; reused when already in `directory` (a session's
        brokers can share one set: key generation is most of a TLS broker's start)."""
        ca, cert, key = make_tls_files(directory / "broker")
        wrong_ca, _, _ = make_tls_files(directory / "unrelated")
        return cls(ca, cert, key, wrong_ca)


class ConnectRefused(Exception):
    """The broker answered CONNECT with a failure (e.g. a wrong password)."""

    def __init__(self, reason: ReasonCode) -> None:
        super().__init__(f"broker refused the connection: {reason} ({reason.value:#04x})")
        self.reason = reason


class Broker:
    """One mosquitto process on loopback; `start()` again after `stop()` or `kill()` reuses
    the ports, the config and the persistence file.

    - `users`: {name: password} → `allow_anonymous false` and a password file; otherwise
      anonymous clients are allowed.
    - `tls`: a TLS listener (`tls_port`) besides the plain one (`port`), with the server
      certificate of `tls_files` (made in `directory/tls` when not given); the plain
      listener stays (loopback only, as SPEC §18 allows mqtt:// there).
    - `persistence`: retained messages, sessions and queued QoS 1 messages are written to
      `directory/persistence/` when the broker stops (not when it is killed) and read at
      start.
    - `extra_config`: more lines for mosquitto.conf (global options, e.g. `max_packet_size`).
    """

    def __init__(self, directory: pathlib.Path, *, users: dict[str, str] | None = None, tls: bool = False,
                 tls_files: TLSFiles | None = None, persistence: bool = False, extra_config: str = "") -> None:
        self.directory = pathlib.Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.users = dict(users or {})
        self.persistence = persistence
        self.tls_files = (tls_files or TLSFiles.make(self.directory / "tls")) if tls else None
        self.extra_config = extra_config
        self.config_path = self.directory / "mosquitto.conf"
        self.log_path = self.directory / "mosquitto.log"
        self.persistence_dir = self.directory / "persistence"
        self.port = free_port()
        self.tls_port = free_port() if tls else None
        self.process: subprocess.Popen | None = None
        self._subscribers: list[Subscriber] = []
        if self.users:
            self._write_password_file()

    # --- what a test connects to ------------------------------------------------------

    @property
    def host(self) -> str:
        return HOST

    @property
    def url(self) -> str:
        """The plain listener, as `[mqtt] url` takes it."""
        return f"mqtt://{HOST}:{self.port}"

    @property
    def tls_url(self) -> str:
        if self.tls_port is None:
            raise AssertionError("this broker has no TLS listener (Broker(tls=True))")
        return f"mqtts://{HOST}:{self.tls_port}"

    @property
    def ca_file(self) -> pathlib.Path:
        """The CA that signed the TLS listener's certificate (`[mqtt] ca_file`)."""
        if self.tls_files is None:
            raise AssertionError("this broker has no TLS listener (Broker(tls=True))")
        return self.tls_files.ca

    @property
    def wrong_ca_file(self) -> pathlib.Path:
        """A CA that did not sign the broker's certificate."""
        if self.tls_files is None:
            raise AssertionError("this broker has no TLS listener (Broker(tls=True))")
        return self.tls_files.wrong_ca

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def log_tail(self, size: int = 3000) -> str:
        return self.log()[-size:]

    # --- life cycle -------------------------------------------------------------------

    def start(self) -> "Broker":
        """Starts mosquitto and returns once its listeners accept connections. A port taken
        in the meantime by someone else (free_port's race) gets a new one, but only on the
        first start: a restart must keep its ports, so there it fails instead."""
        if self.running:
            raise AssertionError("the broker is already running")
        first = not self.log_path.exists()
        for attempt in range(3):
            self._write_config()
            offset = self.log_path.stat().st_size if self.log_path.exists() else 0
            with open(self.log_path, "a") as log:
                self.process = subprocess.Popen(["mosquitto", "-c", str(self.config_path)], stdin=subprocess.DEVNULL,
                                                stdout=log, stderr=log)
            try:
                wait_until(lambda: self._ready_since(offset), READY_TIMEOUT_S, "mosquitto to open its listeners")
                return self
            except AssertionError as error:
                failure = f"{error}; mosquitto log:\n{self.log()[offset:][-3000:]}"
                self._end(signal.SIGKILL)
                if first and attempt < 2 and "Address already in use" in self.log()[offset:]:
                    self.port = free_port()
                    self.tls_port = free_port() if self.tls_port is not None else None
                    continue
                raise AssertionError(failure) from None
        raise AssertionError("unreachable")

    def stop(self) -> None:
        """SIGTERM: mosquitto ends cleanly and, with persistence on, writes its persistence
        file."""
        self._end(signal.SIGTERM)

    def kill(self) -> None:
        """SIGKILL: gone at once, nothing written."""
        self._end(signal.SIGKILL)

    def close(self) -> None:
        """The subscribers made through `subscriber()`, then the broker."""
        for subscriber in self._subscribers:
            subscriber.close()
        self._subscribers.clear()
        self.kill()

    def _end(self, how: signal.Signals) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(how)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def _ready_since(self, offset: int) -> bool:
        if self.process is None or self.process.poll() is not None:
            raise AssertionError(f"mosquitto exited ({None if self.process is None else self.process.returncode})")
        # mosquitto logs "mosquitto version 2.0.11 running" once every listener is open.
        return re.search(r"mosquitto version \S+ running", self.log()[offset:]) is not None

    def _write_password_file(self) -> None:
        password_file = self.directory / "passwords"
        password_file.unlink(missing_ok=True)
        for index, (name, password) in enumerate(self.users.items()):
            create = ["-c"] if index == 0 else []
            subprocess.run(["mosquitto_passwd", *create, "-b", str(password_file), name, password],
                           check=True, capture_output=True, text=True)
        password_file.chmod(0o600)

    def _write_config(self) -> None:
        lines = [
            # As root mosquitto would drop to the user `mosquitto` before reading the password
            # file and the persistence directory (shared notes, "mqtt"): stay root then.
            *(["user root"] if os.geteuid() == 0 else []),
            "log_dest stderr",
            "log_type error", "log_type warning", "log_type notice", "log_type information",
            "log_timestamp_format %H:%M:%S",
            "connection_messages true",
            f"persistence {'true' if self.persistence else 'false'}",
        ]
        if self.persistence:
            self.persistence_dir.mkdir(exist_ok=True)
            lines += [f"persistence_location {self.persistence_dir}/", "persistence_file mosquitto.db"]
        if self.users:
            lines += ["allow_anonymous false", f"password_file {self.directory / 'passwords'}"]
        else:
            lines += ["allow_anonymous true"]
        if self.extra_config:
            lines += [self.extra_config.strip()]
        lines += ["", f"listener {self.port} {HOST}"]
        if self.tls_files is not None:
            lines += [f"listener {self.tls_port} {HOST}", f"cafile {self.tls_files.ca}",
                      f"certfile {self.tls_files.cert}", f"keyfile {self.tls_files.key}"]
        self.config_path.write_text("\n".join(lines) + "\n")

    # --- clients ----------------------------------------------------------------------

    def credentials(self, username: str | None = None, password: str | None = None) -> tuple[str | None, str | None]:
        """What a client logs in with: the given password, else `username`'s own, else the
        broker's first user; (None, None) for an anonymous broker asked for nothing."""
        if password is not None:
            return username, password
        if username is None:
            return next(iter(self.users.items()), (None, None))
        return username, self.users.get(username)

    def subscriber(self, topics: str | list[str] = "#", *, tls: bool = False, ca_file: pathlib.Path | None = None,
                   username: str | None = None, password: str | None = None, **kwargs) -> "Subscriber":
        """A connected, subscribed Subscriber on this broker (closed with it). Credentials
        as `credentials()` gives them; `tls` connects to the TLS listener trusting
        `ca_file` (default: the broker's CA)."""
        username, password = self.credentials(username, password)
        subscriber = Subscriber(HOST, self.tls_port if tls else self.port, topics, username=username,
                                password=password, ca_file=(ca_file or self.ca_file) if tls else None,
                                context=self.log_tail, **kwargs)
        self._subscribers.append(subscriber)
        return subscriber

    def publish(self, topic: str, payload: str | bytes | None, *, retain: bool = False, qos: int = 1,
                tls: bool = False, ca_file: pathlib.Path | None = None, username: str | None = None,
                password: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
        """`mosquitto_pub` (MQTT 5); it returns once the broker has the message (QoS 1:
        after its PUBACK). `payload=None` sends an empty message (with `retain`: deletes
        the retained one). Credentials as `credentials()` gives them; `tls` trusts
        `ca_file` (default: the broker's CA). `check=False` returns a failure instead of
        raising it."""
        username, password = self.credentials(username, password)
        command = ["mosquitto_pub", "-V", "mqttv5", "-h", HOST, "-p", str(self.tls_port if tls else self.port),
                   "-t", topic, "-q", str(qos)]
        if payload is None:
            command += ["-n"]
        else:
            command += ["-m", payload.decode() if isinstance(payload, bytes) else payload]
        if retain:
            command += ["-r"]
        if username is not None:
            command += ["-u", username, "-P", password or ""]
        if tls:
            command += ["--cafile", str(ca_file or self.ca_file)]
        result = subprocess.run(command, capture_output=True, text=True, timeout=30)
        if check and result.returncode != 0:
            raise AssertionError(f"{' '.join(command[:8])}… failed ({result.returncode}): {result.stderr.strip()}; "
                                 f"mosquitto log:\n{self.log_tail()}")
        return result


@dataclasses.dataclass(frozen=True)
class Message:
    topic: str
    payload: bytes
    retain: bool
    qos: int

    @property
    def text(self) -> str:
        return self.payload.decode("utf-8")


class Subscriber:
    """A paho-mqtt client (MQTT 5) subscribed to `topics` at `qos`. The constructor returns
    once the broker acknowledged the subscriptions, so everything published afterwards, and
    the retained messages of those topics, reach `messages`. A refused CONNECT raises
    ConnectRefused, a certificate the CA does not vouch for ssl.SSLError.

    After a lost connection (a broker outage) paho reconnects by itself and the subscriber
    subscribes again; `connections` counts the accepted CONNACKs (`wait_connected`)."""

    def __init__(self, host: str, port: int, topics: str | list[str] = "#", *, qos: int = 1,
                 username: str | None = None, password: str | None = None, ca_file: pathlib.Path | None = None,
                 client_id: str = "", context: Callable[[], str] | None = None,
                 timeout: float = WAIT_TIMEOUT_S) -> None:
        self.topics = [topics] if isinstance(topics, str) else list(topics)
        self.qos = qos
        self._context = context
        self._condition = threading.Condition()
        self._messages: list[Message] = []
        self._refused: ReasonCode | None = None
        self._subscribed = 0
        self.connections = 0
        self._closed = False
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5)
        self.client.on_connect = self._on_connect
        self.client.on_subscribe = self._on_subscribe
        self.client.on_message = self._on_message
        self.client.reconnect_delay_set(min_delay=0.1, max_delay=1)
        if username is not None:
            self.client.username_pw_set(username, password)
        if ca_file is not None:
            self.client.tls_set(ca_certs=str(ca_file))
        # TCP and the TLS handshake happen here, in this thread: a wrong CA raises now.
        self.client.connect(host, port, keepalive=30)
        self.client.loop_start()
        try:
            self.wait_for(lambda _: self._refused is not None or self._subscribed >= 1, timeout,
                          "CONNACK and SUBACK")
            if self._refused is not None:
                raise ConnectRefused(self._refused)
        except BaseException:
            self.close()
            raise

    # paho's network thread calls these.
    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        with self._condition:
            if reason_code.is_failure:
                self._refused = reason_code
                client.disconnect()  # no reconnecting with credentials the broker refuses
            else:
                self.connections += 1
                client.subscribe([(topic, self.qos) for topic in self.topics])
            self._condition.notify_all()

    def _on_subscribe(self, client, userdata, mid, reason_codes, properties) -> None:
        with self._condition:
            failed = [code for code in reason_codes if code.is_failure]
            if failed:
                self._refused = failed[0]
            else:
                self._subscribed += 1
            self._condition.notify_all()

    def _on_message(self, client, userdata, message) -> None:
        with self._condition:
            self._messages.append(Message(message.topic, bytes(message.payload), bool(message.retain), message.qos))
            self._condition.notify_all()

    # --- what the tests read ----------------------------------------------------------

    @property
    def messages(self) -> list[Message]:
        """Everything received so far, in order (a copy)."""
        with self._condition:
            return list(self._messages)

    def on(self, topic: str) -> list[Message]:
        """The messages received on exactly `topic`, in order."""
        return [message for message in self.messages if message.topic == topic]

    def clear(self) -> None:
        with self._condition:
            self._messages.clear()

    def wait_for(self, predicate: Callable[[list[Message]], object], timeout: float = WAIT_TIMEOUT_S,
                 what: str = "the expected messages"):
        """Blocks until `predicate(messages)` is truthy, woken by every message (and
        connection change); returns its value. Fails after `timeout` seconds with what was
        received and the broker's log."""
        deadline = time.monotonic() + timeout
        with self._condition:
            while True:
                value = predicate(list(self._messages))
                if value:
                    return value
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    received = "\n".join(f"  {m.topic} {m.payload[:200]!r} retain={m.retain} qos={m.qos}"
                                         for m in self._messages[-20:]) or "  (nothing)"
                    context = f"\nbroker log:\n{self._context()}" if self._context else ""
                    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}; "
                                         f"received (last 20):\n{received}{context}")
                self._condition.wait(remaining)

    def wait_message(self, topic: str, *, payload: bytes | str | None = None, retain: bool | None = None,
                     qos: int | None = None, timeout: float = WAIT_TIMEOUT_S) -> Message:
        """The first message on `topic` that matches the given payload, retain flag and QoS."""
        if isinstance(payload, str):
            payload = payload.encode()

        def matches(message: Message) -> bool:
            return (message.topic == topic and (payload is None or message.payload == payload)
                    and (retain is None or message.retain == retain) and (qos is None or message.qos == qos))

        wanted = " ".join(f"{name}={value!r}" for name, value in
                          (("payload", payload), ("retain", retain), ("qos", qos)) if value is not None)
        return self.wait_for(lambda messages: next((m for m in messages if matches(m)), None), timeout,
                             f"a message on {topic} {wanted}".rstrip())

    def wait_connected(self, count: int, timeout: float = WAIT_TIMEOUT_S) -> None:
        """Until the broker has accepted `count` connections of this client in all (2 =
        reconnected once) and the subscriptions of the last one are acknowledged."""
        self.wait_for(lambda _: self.connections >= count and self._subscribed >= count, timeout,
                      f"connection {count} of the subscriber")

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.client.disconnect()
        self.client.loop_stop()

    def __enter__(self) -> "Subscriber":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
