"""A virtual phone: an active scanner on the world's link, as a phone app looking for the
door's iBeacon region or service UUID would run one.

It is a Bumble `Controller` on the shared link without a host: it records every
advertising PDU it receives (type, data, loop timestamps) and, scanning actively, sends
SCAN_REQ to scannable advertisers (ADV_IND, ADV_SCAN_IND) and records their SCAN_RSP.
It hears everything on the link (no path loss: a phone held at the door).

Control channel (bgworld/control.py):
  phone-start            start (or restart) scanning, forgetting what was seen
  phone-report           JSON: {"scanning", "seconds", "advertisers": {ADDRESS: {"types",
                         "data", "scanResponse", "times", "scanResponses"}}}
  phone-stop             stop scanning (the report stays readable)
"""

from __future__ import annotations

import asyncio
import json

from bumble import hci, ll
from bumble.controller import Controller

from . import beacon

PHONE_ADDRESS = "7A:11:22:33:44:55"
# Per advertiser: at most this many timestamps (a scan of minutes at 20 ms stays bounded).
MAX_TIMES = 20_000
MAX_ADVERTISERS = 1024


class PhoneScanner(Controller):
    def __init__(self, world) -> None:
        super().__init__("phone", link=world.link, public_address=PHONE_ADDRESS)
        self.world = world
        self.scanning = False
        self.started = 0.0
        self.seen: dict[str, dict] = {}

    def start_scan(self) -> None:
        self.seen = {}
        self.started = asyncio.get_running_loop().time()
        self.scanning = True

    def stop_scan(self) -> None:
        self.scanning = False

    def on_ll_advertising_pdu(self, packet: ll.AdvertisingPdu) -> None:
        if not self.scanning:
            return
        now = asyncio.get_running_loop().time() - self.started
        match packet:
            case ll.AdvInd():
                self._record(packet.advertiser_address, "ADV_IND", packet.data, now)
                self._scan_request(packet.advertiser_address)
            case beacon.AdvScanInd():
                self._record(packet.advertiser_address, "ADV_SCAN_IND", packet.data, now)
                self._scan_request(packet.advertiser_address)
            case ll.AdvNonConnInd():
                self._record(packet.advertiser_address, "ADV_NONCONN_IND", packet.data, now)
            case ll.AdvExtInd():
                self._record(packet.advertiser_address, "ADV_EXT_IND", packet.data, now)
            case beacon.ScanRsp():
                entry = self.seen.get(str(packet.advertiser_address))
                if entry is not None:
                    entry["scanResponse"] = bytes(packet.data).hex()
                    if len(entry["scanResponses"]) < MAX_TIMES:
                        entry["scanResponses"].append(round(now, 4))
            case _:
                pass

    def _scan_request(self, address: hci.Address) -> None:
        self.send_advertising_pdu(beacon.ScanReq(scanner_address=self.public_address, advertiser_address=address))

    def _record(self, address: hci.Address, kind: str, data: bytes, now: float) -> None:
        key = str(address)
        entry = self.seen.get(key)
        if entry is None:
            if len(self.seen) >= MAX_ADVERTISERS:
                return
            entry = {"types": [], "data": "", "scanResponse": None, "times": [], "scanResponses": []}
            self.seen[key] = entry
        if kind not in entry["types"]:
            entry["types"].append(kind)
        entry["data"] = bytes(data).hex()
        if len(entry["times"]) < MAX_TIMES:
            entry["times"].append(round(now, 4))

    def report(self) -> dict:
        seconds = asyncio.get_running_loop().time() - self.started if self.started else 0.0
        return {"scanning": self.scanning, "seconds": round(seconds, 3), "advertisers": self.seen}


def phone_of(world) -> PhoneScanner:
    phone = getattr(world, "phone", None)
    if phone is None:
        phone = PhoneScanner(world)
        world.phone = phone
    return phone


def handle_control(world, name: str, _args: list[str]) -> str:
    phone = phone_of(world)
    if name == "phone-start":
        phone.start_scan()
        return "OK phone scanning"
    if name == "phone-stop":
        phone.stop_scan()
        return "OK phone stopped"
    if name == "phone-report":
        return json.dumps(phone.report(), separators=(",", ":"))
    return f"ERR unknown command {name!r} (phone-start, phone-report, phone-stop)"
