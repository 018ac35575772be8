"""The world's virtual controller: Bumble's Controller with the gaps tests rely on filled.

What differs from `bumble.controller.Controller` (see shared/notes/virtual-controllers.md):
  * RSSI of each advertising report comes from the world's path-loss model (distance of
    the sending tag at that moment; in a rooms world, from the tag to this controller's
    gateway, through the walls between), not a fixed -50 dBm; PDUs out of range are not
    received at all.
  * One report per received advertising PDU, with the PDU's real type (ADV_IND or
    ADV_NONCONN_IND); a SCAN_RSP report follows only when scanning is active and the
    advertiser is scannable. Bumble sends ADV_IND + SCAN_RSP for every PDU.
  * Every command gets an answer: no handler, a malformed packet, or a handler failure
    produce Command Complete (or Command Status for commands answered that way) with an
    error status, so a host never waits forever.
  * `supported_commands` lists only commands this controller handles, and the LE
    extended-advertising feature bit is cleared unless `extended=True`, so features and
    commands agree and a host picks the legacy family.
  * Duplicate filtering is applied when the host asks for it.
  * Event masks are applied to advertising reports (LE Meta must be enabled, like on
    real controllers, whose reset default has it off), and HCI Reset clears scan state
    and masks.
  * Connections (initiator.py): a Filter Accept List that is kept, LE Create Connection
    from it or to one peer, cancel with its LE Connection Complete 0x02, Disconnect, link
    loss, Read RSSI from the path-loss model, ACL cut to the LE buffer size (27 × 8).
"""

from __future__ import annotations

import logging
import random
from typing import TYPE_CHECKING

from bumble import hci, ll
from bumble.controller import Controller

from . import hcibytes
from .beacon import BeaconAdvertisingMixin
from .initiator import InitiatorMixin

if TYPE_CHECKING:
    from .rooms import Gateway
    from .world import World

logger = logging.getLogger(__name__)


# Entries in the duplicate-filter table (real controllers keep a few dozen to hundreds).
DUPLICATE_FILTER_SIZE = 1024


def _is_extended_family(name: str) -> bool:
    # Core Vol 4, Part E, 3.1.1: a host uses either the legacy or the extended
    # advertising/scanning/connection commands; a legacy-only controller lacks these.
    return any(word in name for word in ("_EXTENDED_ADVERTISING", "_EXTENDED_SCAN", "_EXTENDED_CREATE_CONNECTION",
                                         "_PERIODIC_ADVERTISING", "_ADVERTISING_SET", "_MAXIMUM_ADVERTISING_DATA_LENGTH",
                                         "_NUMBER_OF_SUPPORTED_ADVERTISING_SETS"))


class WorldController(BeaconAdvertisingMixin, InitiatorMixin, Controller):
    def __init__(
        self,
        name: str,
        world: "World",
        public_address: str,
        rng: random.Random,
        extended: bool = False,
        gateway: "Gateway | None" = None,
    ) -> None:
        super().__init__(name, link=world.link, public_address=public_address)
        self.world = world
        self.rng = rng
        # In a rooms world, where this controller is (rooms.py): what it hears depends on it.
        self.gateway = gateway
        self.extended = extended
        if not extended:
            self.le_features = self.le_features & ~hci.LeFeatureMask.LE_EXTENDED_ADVERTISING
        self._init_connections()
        # An instance copy: the class attribute is shared by every Bumble controller.
        self.supported_commands = self._handled_commands(extended)
        self._reset_state()
        self.errors = 0
        self.reports_sent = 0

    # -- capability tables ----------------------------------------------------------

    def _handled_commands(self, extended: bool) -> set[int]:
        """Every command with a handler, minus the extended-advertising family unless
        enabled: what the controller answers is exactly what it claims to support."""
        handled = set()
        for opcode, name in hci.HCI_Command.command_names.items():
            if not callable(getattr(self, f"on_{name.lower()}", None)):
                continue
            if not extended and _is_extended_family(name):
                continue
            handled.add(opcode)
        return handled

    def _reset_state(self) -> None:
        self.event_mask = hcibytes.DEFAULT_EVENT_MASK
        self.le_event_mask = hcibytes.DEFAULT_LE_EVENT_MASK
        self.le_scan_enable = False
        self.le_scan_type = 0
        self.filter_duplicates = False
        self.scan_family = "legacy"
        self.ext_scan_active = False
        self.reported: set[tuple[bytes, int, bool, bytes]] = set()

    # -- host -> controller ---------------------------------------------------------

    def on_packet(self, packet: bytes) -> None:
        try:
            parsed = hci.HCI_Packet.from_bytes(packet)
        except Exception as error:  # Bumble raises many kinds on malformed input.
            self.errors += 1
            logger.info("[%s] malformed packet %s: %s", self.name, packet.hex(), error)
            if len(packet) >= 3 and packet[0] == hcibytes.H4_COMMAND:
                opcode = packet[1] | packet[2] << 8
                self.send_raw(hcibytes.command_complete(opcode, bytes((hcibytes.STATUS_INVALID_PARAMETERS,))))
            return
        self.on_hci_packet(parsed)

    def on_hci_command_packet(self, command: hci.HCI_Command) -> None:
        opcode = command.op_code
        handler = getattr(self, f"on_{command.name.lower()}", None)
        if handler is None or opcode not in self.supported_commands:
            self._answer_error(command, hcibytes.STATUS_UNKNOWN_HCI_COMMAND)
            return
        try:
            result = handler(command)
        except Exception as error:
            self.errors += 1
            logger.warning("[%s] handler for %s failed: %r", self.name, command.name, error)
            self._answer_error(command, hcibytes.STATUS_UNSPECIFIED_ERROR)
            return
        if isinstance(command, hci.HCI_SyncCommand):
            if result is None:
                self._answer_error(command, hcibytes.STATUS_UNSPECIFIED_ERROR)
                return
            self.send_hci_packet(
                hci.HCI_Command_Complete_Event(
                    num_hci_command_packets=1, command_opcode=opcode, return_parameters=result
                )
            )

    def _answer_error(self, command: hci.HCI_Command, status: int) -> None:
        if isinstance(command, hci.HCI_AsyncCommand):
            self.send_raw(hcibytes.command_status(status, command.op_code))
        else:
            self.send_raw(hcibytes.command_complete(command.op_code, bytes((status,))))

    # -- controller -> host ---------------------------------------------------------

    def send_raw(self, packet: bytes) -> None:
        """Send H4 bytes to the host, in order with Bumble's own `send_hci_packet`."""
        sink = self.host
        if sink is not None:
            self.world.loop.call_soon(sink.on_packet, packet)

    # -- command handlers added or corrected ----------------------------------------

    def on_hci_reset_command(self, _command: hci.HCI_Reset_Command) -> hci.HCI_StatusReturnParameters:
        self.le_legacy_advertiser.stop()
        for advertising_set in self.advertising_sets.values():
            advertising_set.stop()
        self.advertising_sets.clear()
        self.pending_le_connection = None
        self.forget_connections()
        self._reset_state()
        return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.SUCCESS)

    def on_hci_le_set_scan_enable_command(self, command):
        result = super().on_hci_le_set_scan_enable_command(command)
        self.scan_family = "legacy"
        self.reported.clear()  # duplicate filtering starts afresh with each enable
        return result

    def on_hci_le_set_extended_scan_parameters_command(self, command):
        scan_types = getattr(command, "scan_types", None) or [0]
        self.ext_scan_active = any(t == 1 for t in scan_types)
        return super().on_hci_le_set_extended_scan_parameters_command(command)

    def on_hci_le_set_extended_scan_enable_command(self, command):
        result = super().on_hci_le_set_extended_scan_enable_command(command)
        self.scan_family = "extended"
        self.reported.clear()
        return result

    # -- link -> controller ---------------------------------------------------------

    def on_ll_advertising_pdu(self, packet: ll.AdvertisingPdu) -> None:
        match packet:
            case ll.AdvInd() | ll.AdvNonConnInd():
                self._on_legacy_pdu(packet)
            case _:
                super().on_ll_advertising_pdu(packet)

    def _reports_wanted(self) -> bool:
        if not self.le_scan_enable:
            return False
        if not (self.event_mask >> hcibytes.EVENT_MASK_LE_META_BIT) & 1:
            return False
        bit = (
            hcibytes.LE_EVENT_MASK_EXTENDED_ADVERTISING_REPORT_BIT
            if self.scan_family == "extended"
            else hcibytes.LE_EVENT_MASK_ADVERTISING_REPORT_BIT
        )
        return bool((self.le_event_mask >> bit) & 1)

    def _on_legacy_pdu(self, pdu: ll.AdvInd | ll.AdvNonConnInd) -> None:
        address = pdu.advertiser_address
        connectable = isinstance(pdu, ll.AdvInd)
        initiating = connectable and self.initiation is not None
        reporting = self._reports_wanted()
        if not (reporting or initiating):
            return
        tag = self.world.tag_for(address)
        rssi = self.world.rssi_for(tag, self.rng, self.gateway)
        if rssi is None:
            return  # not received at all: neither reported nor connected to
        if reporting:
            report = True
            if self.filter_duplicates:
                # Duplicate filtering (7.8.11): one report per advertiser and data.
                key = (bytes(address.address_bytes), int(address.address_type), connectable, bytes(pdu.data))
                if key in self.reported:
                    report = False
                else:
                    if len(self.reported) >= DUPLICATE_FILTER_SIZE:
                        self.reported.clear()  # a full table forgets, as controllers' do
                    self.reported.add(key)
            if report:
                active = self.ext_scan_active if self.scan_family == "extended" else self.le_scan_type == 1
                scan_response = None
                if active and connectable:
                    scan_response = tag.scan_response_data if tag is not None else b""
                self._report(address, connectable, pdu.data, rssi, scan_response, tag)
        if initiating:
            self.consider_connecting(address, tag)

    def _report(self, address: hci.Address, connectable: bool, data: bytes, rssi: int, scan_response: bytes | None, tag) -> None:
        address_le = bytes(address.address_bytes)
        address_type = int(address.address_type)
        if self.scan_family == "extended":
            event_type = hcibytes.EXT_LEGACY_ADV_IND if connectable else hcibytes.EXT_LEGACY_ADV_NONCONN_IND
            packets = [hcibytes.extended_reports_event([hcibytes.extended_report(event_type, address_type, address_le, data, rssi)])]
            if scan_response is not None:
                packets.append(hcibytes.extended_reports_event([hcibytes.extended_report(
                    hcibytes.EXT_LEGACY_SCAN_RSP_TO_ADV_IND, address_type, address_le, scan_response, rssi)]))
        else:
            event_type = hcibytes.ADV_IND if connectable else hcibytes.ADV_NONCONN_IND
            packets = [hcibytes.legacy_reports_event([hcibytes.legacy_report(event_type, address_type, address_le, data, rssi)])]
            if scan_response is not None:
                packets.append(hcibytes.legacy_reports_event([hcibytes.legacy_report(
                    hcibytes.SCAN_RSP, address_type, address_le, scan_response, rssi)]))
        for packet in packets:
            self.send_raw(packet)
        self.reports_sent += len(packets)
        self.world.count_reports(tag, address, len(packets))
