"""A minimal raw H4 host for tests: sends commands, waits for their answers, and records
every advertising report with its arrival time. Deliberately independent of Bumble's
host so that tests see exactly the packets the world sent."""

from __future__ import annotations

import asyncio
import dataclasses
import struct
import time

from . import hcibytes
from .h4 import H4Parser

OP_RESET = 0x0C03
OP_SET_EVENT_MASK = 0x0C01
OP_READ_LOCAL_VERSION = 0x1001
OP_READ_BD_ADDR = 0x1009
OP_LE_SET_EVENT_MASK = 0x2001
OP_LE_READ_SUPPORTED_STATES = 0x201C
OP_LE_SET_SCAN_PARAMETERS = 0x200B
OP_LE_SET_SCAN_ENABLE = 0x200C

ALL_EVENTS_MASK = 0x3DBFF807FFFBFFFF
LE_ALL_EVENTS_MASK = 0x00000000000FFFFF


@dataclasses.dataclass
class Report:
    time: float
    event_type: int
    address: str  # "AA:BB:…", most significant first
    address_type: int
    data: bytes
    rssi: int


@dataclasses.dataclass
class Answer:
    event_code: int
    status: int
    return_parameters: bytes


def _address_text(address_le: bytes) -> str:
    return ":".join(f"{b:02X}" for b in reversed(address_le))


def parse_legacy_reports(parameters: bytes, now: float) -> list[Report]:
    """LE Advertising Report parameters after the subevent code; raises ValueError
    (IndexError/struct.error wrapped) on malformed input."""
    try:
        count = parameters[0]
        offset = 1
        reports = []
        for _ in range(count):
            event_type, address_type = parameters[offset], parameters[offset + 1]
            address = parameters[offset + 2 : offset + 8]
            length = parameters[offset + 8]
            data = parameters[offset + 9 : offset + 9 + length]
            (rssi,) = struct.unpack_from("<b", parameters, offset + 9 + length)
            if len(data) != length or len(address) != 6:
                raise ValueError("truncated report")
            reports.append(Report(now, event_type, _address_text(address), address_type, bytes(data), rssi))
            offset += 10 + length
        return reports
    except (IndexError, struct.error) as error:
        raise ValueError(f"malformed advertising report: {error}") from error


class HostClient:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.parser = H4Parser()
        self.reports: list[Report] = []
        self.events: list[bytes] = []
        self.closed = asyncio.Event()
        self._answers: asyncio.Queue[tuple[int, Answer]] = asyncio.Queue()
        self._new_report = asyncio.Event()
        self._new_event = asyncio.Event()
        self._task = asyncio.ensure_future(self._read())

    @classmethod
    async def connect(cls, host: str, port: int) -> "HostClient":
        reader, writer = await asyncio.open_connection(host, port)
        return cls(reader, writer)

    async def _read(self) -> None:
        try:
            while True:
                data = await self.reader.read(4096)
                if not data:
                    break
                for packet in self.parser.feed(data):
                    self._on_packet(packet)
        except (ConnectionError, OSError):
            pass
        finally:
            self.closed.set()

    def _on_packet(self, packet: bytes) -> None:
        if packet[0] == hcibytes.H4_ACL:
            self.on_acl(packet)
            return
        if packet[0] != hcibytes.H4_EVENT or len(packet) < 3:
            return
        self.events.append(packet)
        self._new_event.set()
        code, parameters = packet[1], packet[3:]
        if code == hcibytes.EVT_COMMAND_COMPLETE and len(parameters) >= 4:
            opcode = parameters[1] | parameters[2] << 8
            self._answers.put_nowait((opcode, Answer(code, parameters[3], parameters[3:])))
        elif code == hcibytes.EVT_COMMAND_STATUS and len(parameters) >= 4:
            opcode = parameters[2] | parameters[3] << 8
            self._answers.put_nowait((opcode, Answer(code, parameters[0], b"")))
        elif code == hcibytes.EVT_LE_META and parameters and parameters[0] == hcibytes.LE_ADVERTISING_REPORT:
            self.reports.extend(parse_legacy_reports(parameters[1:], time.monotonic()))
            self._new_report.set()

    def on_acl(self, packet: bytes) -> None:
        """ACL data from the controller; subclasses (centralclient.py) reassemble it."""

    async def command(self, opcode: int, parameters: bytes = b"", timeout: float = 5.0) -> Answer:
        self.writer.write(hcibytes.command(opcode, parameters))
        await self.writer.drain()

        async def wait() -> Answer:
            while True:
                answered, answer = await self._answers.get()
                if answered == opcode:
                    return answer

        return await asyncio.wait_for(wait(), timeout)

    async def start_scanning(self, active: bool = False, filter_duplicates: bool = False) -> None:
        for opcode, parameters in (
            (OP_RESET, b""),
            (OP_SET_EVENT_MASK, struct.pack("<Q", ALL_EVENTS_MASK)),
            (OP_LE_SET_EVENT_MASK, struct.pack("<Q", LE_ALL_EVENTS_MASK)),
            # 0x0010 units of 0.625 ms: window == interval, i.e. scanning all the time.
            (OP_LE_SET_SCAN_PARAMETERS, struct.pack("<BHHBB", int(active), 0x10, 0x10, 0, 0)),
            (OP_LE_SET_SCAN_ENABLE, bytes((1, int(filter_duplicates)))),
        ):
            answer = await self.command(opcode, parameters)
            if answer.status != hcibytes.STATUS_SUCCESS:
                raise RuntimeError(f"command 0x{opcode:04x} failed with status 0x{answer.status:02x}")

    async def wait_for_reports(self, predicate, timeout: float) -> None:
        async def wait() -> None:
            while not predicate(self.reports):
                self._new_report.clear()
                await self._new_report.wait()

        await asyncio.wait_for(wait(), timeout)

    async def wait_for_events(self, predicate, timeout: float) -> None:
        async def wait() -> None:
            while not predicate(self.events):
                self._new_event.clear()
                await self._new_event.wait()

        await asyncio.wait_for(wait(), timeout)

    async def close(self) -> None:
        self.writer.close()
        self._task.cancel()
