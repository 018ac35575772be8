"""A fast H4 controller for the live-path benchmarks (scripts/bench-door).

It listens on 127.0.0.1, takes one host connection (`beacon-gateway run` with
`transport = "tcp:127.0.0.1:PORT"`), answers its commands like a controller, and while
the host has scanning enabled streams LE Advertising Report events at a fixed rate, in
bursts of pre-built bytes every --burst-ms (10 ms: a controller's reports as a busy host
reads them, several per read). The Python world cannot reach thousands of reports per
second; this writes what a plan file prepared and does nothing else per report.

Commands (as `ReplayController` answers a replay's host, with a connectable controller's
values where the connect path looks at them):
- Command Complete, success, zero-filled return parameters of the right length, except
  Read Local Supported Commands (all), LE Read Supported States (all states: the host may scan while initiating, so it never
  pauses scanning for a connection) and LE Read Filter Accept List Size (16).
- LE Create Connection / LE Extended Create Connection: Command Status success, and no
  connection ever completes: the tags' proofs stay pending, the agent keeps its connect
  request armed, as at a door whose tags do not answer (require-proof persons stay NEARBY).
- LE Create Connection Cancel: Command Complete success, then LE Connection Complete with
  status 0x02 (Unknown Connection Identifier), as a controller reports a cancelled request;
  the agent then updates its accept list and re-arms.

Plan (JSON): {"sources": [{"events": [hex, ...], "start_s": float}, ...]}: each source's
pre-built events (one per RSSI variant), sent in turn, from `start_s` after streaming began.
Every event sent is also written to --capture as btsnoop (the same reports for the replay
floor). Prints `port N`, `streaming`, `sent REPORTS` on stdout.

  door_feeder.py --plan PLAN --rate REPORTS_PER_S --seconds S [--capture FILE] [--burst-ms MS]
"""

from __future__ import annotations

import argparse
import json
import socket
import struct
import sys
import threading
import time

BTSNOOP_EPOCH_OFFSET_US = 0x00DCDDB30F2F8000
BTSNOOP_FLAGS_EVENT_RECEIVED = 0x03

RETURN_LENGTHS = {
    0x0C03: 1, 0x1001: 9, 0x1002: 65, 0x1003: 9, 0x1009: 7, 0x1005: 8,
    0x2002: 4, 0x2060: 7, 0x2003: 9, 0x201C: 9, 0x200F: 2,
}
READ_LOCAL_SUPPORTED_COMMANDS = 0x1002
LE_READ_SUPPORTED_STATES = 0x201C
LE_READ_FILTER_ACCEPT_LIST_SIZE = 0x200F
LE_SET_SCAN_ENABLE = 0x200C
LE_SET_EXTENDED_SCAN_ENABLE = 0x2042
LE_CREATE_CONNECTION = 0x200D
LE_EXTENDED_CREATE_CONNECTION = 0x2043
LE_CREATE_CONNECTION_CANCEL = 0x200E


class Controller:
    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.lock = threading.Lock()
        self.scanning = threading.Event()
        self.closed = threading.Event()

    def send(self, data: bytes) -> None:
        with self.lock:
            self.sock.sendall(data)

    def answer(self, opcode: int, parameters: bytes) -> None:
        if opcode in (LE_SET_SCAN_ENABLE, LE_SET_EXTENDED_SCAN_ENABLE) and parameters:
            if parameters[0] == 1:
                self.scanning.set()
            else:
                self.scanning.clear()
        if opcode in (LE_CREATE_CONNECTION, LE_EXTENDED_CREATE_CONNECTION):
            self.send(bytes((0x04, 0x0F, 4, 0x00, 1)) + struct.pack("<H", opcode))
            return
        length = RETURN_LENGTHS.get(opcode, 1)
        values = bytearray(length - 1)
        if opcode == READ_LOCAL_SUPPORTED_COMMANDS:
            values = bytearray(b"\xff" * 64)  # else the host skips the optional reads below
        elif opcode == LE_READ_SUPPORTED_STATES:
            values = bytearray(b"\xff" * 8)
        elif opcode == LE_READ_FILTER_ACCEPT_LIST_SIZE:
            values = bytearray((16,))
        body = bytes((1,)) + struct.pack("<H", opcode) + b"\x00" + bytes(values)
        self.send(bytes((0x04, 0x0E, len(body))) + body)
        if opcode == LE_CREATE_CONNECTION_CANCEL:
            complete = struct.pack("<BBHBB", 0x01, 0x02, 0, 0, 0) + bytes(6) + struct.pack("<HHHB", 0, 0, 0, 0)
            self.send(bytes((0x04, 0x3E, len(complete))) + complete)

    def read_commands(self) -> None:
        buffer = b""
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    break
                buffer += chunk
                while buffer:
                    kind = buffer[0]
                    if kind == 0x01:
                        if len(buffer) < 4 or len(buffer) < 4 + buffer[3]:
                            break
                        opcode = buffer[1] | buffer[2] << 8
                        parameters = buffer[4:4 + buffer[3]]
                        buffer = buffer[4 + buffer[3]:]
                        self.answer(opcode, parameters)
                    elif kind == 0x02:
                        if len(buffer) < 5:
                            break
                        size = buffer[3] | buffer[4] << 8
                        if len(buffer) < 5 + size:
                            break
                        buffer = buffer[5 + size:]
                    else:
                        raise ValueError(f"unexpected H4 packet type {kind:#04x} from the host")
        except OSError:
            pass
        self.closed.set()


def stream(controller: Controller, sources: list[dict], rate: float, seconds: float, capture, slot_s: float) -> int:
    events = [[bytes.fromhex(e) for e in source["events"]] for source in sources]
    order = sorted(range(len(sources)), key=lambda n: sources[n]["start_s"])
    per_slot = rate * slot_s
    active: list[int] = []
    pending = 0
    position = 0
    credit = 0.0
    sent = 0
    record = struct.Struct(">IIIIq")
    started = time.monotonic()
    wall_us = int(time.time() * 1e6) + BTSNOOP_EPOCH_OFFSET_US
    slot = 0
    print("streaming", flush=True)
    while not controller.closed.is_set():
        due = started + slot * slot_s
        elapsed = due - started
        if elapsed >= seconds:
            break
        delay = due - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        while pending < len(order) and sources[order[pending]]["start_s"] <= elapsed:
            active.append(order[pending])
            pending += 1
        credit += per_slot
        count = int(credit)
        credit -= count
        if not active or not controller.scanning.is_set():
            slot += 1
            continue
        parts = []
        stamp = wall_us + int(elapsed * 1e6)
        for _ in range(count):
            source = active[position % len(active)]
            variants = events[source]
            packet = variants[(position // len(active)) % len(variants)]
            position += 1
            parts.append(packet)
            if capture is not None:
                # Datalink 1002: the record holds the H4 packet, type byte included.
                capture.write(record.pack(len(packet), len(packet), BTSNOOP_FLAGS_EVENT_RECEIVED, 0, stamp))
                capture.write(packet)
        try:
            controller.send(b"".join(parts))
        except OSError:
            break
        sent += count
        slot += 1
    return sent


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--plan", required=True)
    parser.add_argument("--rate", type=float, required=True)
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--capture")
    parser.add_argument("--burst-ms", type=float, default=10)
    parser.add_argument("--connect-timeout", type=float, default=60)
    args = parser.parse_args()
    with open(args.plan) as file:
        sources = json.load(file)["sources"]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(args.connect_timeout)
    print(f"port {listener.getsockname()[1]}", flush=True)
    sock, _ = listener.accept()
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    controller = Controller(sock)
    threading.Thread(target=controller.read_commands, daemon=True).start()
    if not controller.scanning.wait(args.connect_timeout):
        print("the host never enabled scanning", file=sys.stderr)
        return 1
    capture = None
    if args.capture:
        capture = open(args.capture, "wb")
        capture.write(b"btsnoop\0" + struct.pack(">II", 1, 1002))
    try:
        sent = stream(controller, sources, args.rate, args.seconds, capture, args.burst_ms / 1000)
    finally:
        if capture is not None:
            capture.close()
    print(f"sent {sent}", flush=True)
    # Keep the link open until the host goes: a closed link would be a controller loss.
    controller.closed.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
