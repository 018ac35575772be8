"""The gateway's controller as an advertiser, and the link-layer PDUs Bumble lacks.

Bumble 0.0.236's advertisers (see shared/notes/virtual-controllers.md) take the legacy
interval as `interval_min/1000` s, add no advDelay, send only ADV_IND (nothing at all for
ADV_SCAN_IND / ADV_NONCONN_IND) and never answer SCAN_REQ; extended sets send only
ADV_EXT_IND even with legacy PDU properties. `BeaconAdvertisingMixin` (mixed into
`WorldController`) fixes that:

  * the interval in 0.625 ms units plus advDelay (0–10 ms, Core Vol 6 Part B 4.4.2.2),
    on absolute loop times;
  * the PDU the host asked for: ADV_IND, ADV_SCAN_IND or ADV_NONCONN_IND (legacy
    commands, or an extended set with legacy PDU properties);
  * SCAN_REQ addressed to an enabled scannable advertiser is answered with SCAN_RSP
    carrying the scan response data.

Bumble's link has no SCAN_REQ/SCAN_RSP/ADV_SCAN_IND, so they are defined here; Bumble's own
controllers ignore PDU types they do not know.
"""

from __future__ import annotations

import asyncio
import dataclasses

from bumble import hci, ll
from bumble.controller import AdvertisingSet, LegacyAdvertiser

# advDelay: a pseudo-random 0–10 ms added to every advertising event.
ADV_DELAY_MAX_S = 0.010
UNIT_S = 0.000625

LEGACY = hci.HCI_LE_Set_Advertising_Parameters_Command.AdvertisingType
EXT_PROPS = hci.HCI_LE_Set_Extended_Advertising_Parameters_Command.AdvertisingProperties


@dataclasses.dataclass
class AdvScanInd(ll.AdvertisingPdu):
    advertiser_address: hci.Address
    data: bytes


@dataclasses.dataclass
class ScanReq(ll.AdvertisingPdu):
    scanner_address: hci.Address
    advertiser_address: hci.Address


@dataclasses.dataclass
class ScanRsp(ll.AdvertisingPdu):
    advertiser_address: hci.Address
    data: bytes


def legacy_pdu(kind: str, address: hci.Address, data: bytes) -> ll.AdvertisingPdu | None:
    if kind == "ADV_IND":
        return ll.AdvInd(advertiser_address=address, data=data)
    if kind == "ADV_SCAN_IND":
        return AdvScanInd(advertiser_address=address, data=data)
    if kind == "ADV_NONCONN_IND":
        return ll.AdvNonConnInd(advertiser_address=address, data=data)
    return None  # directed advertising is not modelled


class _Paced:
    """Advertising events every interval + advDelay on absolute loop times."""

    timer_handle: asyncio.Handle | None
    controller: "BeaconAdvertisingMixin"

    def _pace_start(self) -> None:
        loop = asyncio.get_running_loop()
        self._next_event = loop.time()
        self.timer_handle = loop.call_soon(self._pace_fire)

    def _pace_fire(self) -> None:
        if not self._pace_active() or not self._on_air():
            # Off the link (its host is gone): the timer ends; a new enable restarts it.
            self.timer_handle = None
            return
        self._advertise_once()
        loop = asyncio.get_running_loop()
        delay = self.controller.rng.uniform(0.0, ADV_DELAY_MAX_S)
        self._next_event = max(self._next_event + self._interval_s() + delay, loop.time())
        self.timer_handle = loop.call_at(self._next_event, self._pace_fire)

    def _on_air(self) -> bool:
        # A controller whose host went away (stop-controller) has left the link.
        controller = self.controller
        return controller.host is not None and controller.link is not None and controller in controller.link.controllers


class WorldLegacyAdvertiser(_Paced, LegacyAdvertiser):
    def start(self) -> None:
        self.stop()
        self.enabled = True
        self._pace_start()

    def _pace_active(self) -> bool:
        return self.enabled

    def _interval_s(self) -> float:
        return self.advertising_interval_min * UNIT_S

    def pdu_kind(self) -> str:
        return LEGACY(self.advertising_type).name if self.advertising_type in list(LEGACY) else "?"

    def _advertise_once(self) -> None:
        if not self._on_air():
            return
        pdu = legacy_pdu(self.pdu_kind(), self.address, bytes(self.advertising_data))
        if pdu is not None:
            self.controller.send_advertising_pdu(pdu)

    def answers_scan_request(self, address: hci.Address) -> bytes | None:
        if self.enabled and self.pdu_kind() in ("ADV_IND", "ADV_SCAN_IND") and self.address == address:
            return bytes(self.scan_response_data)
        return None


class WorldAdvertisingSet(_Paced, AdvertisingSet):
    def start(self) -> None:
        self.stop()
        self.enabled = True
        self._pace_start()

    def _pace_active(self) -> bool:
        return self.enabled

    def _interval_s(self) -> float:
        units = self.parameters.primary_advertising_interval_min if self.parameters else 1600
        return max(units * UNIT_S, 0.020)

    def pdu_kind(self) -> str:
        props = int(self.parameters.advertising_event_properties) if self.parameters else 0
        if not props & EXT_PROPS.USE_LEGACY_ADVERTISING_PDUS:
            return "ADV_EXT_IND"
        if props & EXT_PROPS.DIRECTED_ADVERTISING:
            return "ADV_DIRECT_IND"
        if props & EXT_PROPS.CONNECTABLE_ADVERTISING:
            return "ADV_IND"
        if props & EXT_PROPS.SCANNABLE_ADVERTISING:
            return "ADV_SCAN_IND"
        return "ADV_NONCONN_IND"

    def _advertise_once(self) -> None:
        if not self._on_air() or self.address is None:
            return
        kind = self.pdu_kind()
        if kind == "ADV_EXT_IND":
            self.send_extended_advertising_data()
            return
        pdu = legacy_pdu(kind, self.address, bytes(self.data))
        if pdu is not None:
            self.controller.send_advertising_pdu(pdu)

    def answers_scan_request(self, address: hci.Address) -> bytes | None:
        if self.enabled and self.pdu_kind() in ("ADV_IND", "ADV_SCAN_IND") and self.address == address:
            return bytes(self.scan_response_data)
        return None


class BeaconAdvertisingMixin:
    """Mixed in before Bumble's `Controller`: its advertisers with the right PDUs and
    intervals, and SCAN_RSP on SCAN_REQ."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.le_legacy_advertiser = WorldLegacyAdvertiser(controller=self)
        self.scan_requests_answered = 0

    def on_hci_le_set_extended_advertising_parameters_command(self, command):
        handle = command.advertising_handle
        if handle not in self.advertising_sets:
            self.advertising_sets[handle] = WorldAdvertisingSet(controller=self, handle=handle)
        return super().on_hci_le_set_extended_advertising_parameters_command(command)

    def on_ll_advertising_pdu(self, packet: ll.AdvertisingPdu) -> None:
        if isinstance(packet, ScanReq):
            self._on_scan_request(packet)
            return
        if isinstance(packet, (AdvScanInd, ScanRsp)):
            return  # this controller's scanner models ADV_IND / ADV_NONCONN_IND only
        super().on_ll_advertising_pdu(packet)

    def _on_scan_request(self, request: ScanReq) -> None:
        advertisers = [self.le_legacy_advertiser, *self.advertising_sets.values()]
        for advertiser in advertisers:
            answer = getattr(advertiser, "answers_scan_request", None)
            data = answer(request.advertiser_address) if answer else None
            if data is not None and advertiser._on_air():
                self.scan_requests_answered += 1
                self.send_advertising_pdu(ScanRsp(advertiser_address=request.advertiser_address, data=data))
                return
