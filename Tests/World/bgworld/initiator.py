"""The gateway controller as a central: Filter Accept List, LE Create Connection (to one
peer or from the accept list), its cancel, Disconnect, Read RSSI and ACL data.

Bumble 0.0.236 stores nothing in the accept list, ignores the initiator filter policy,
never answers a cancel with the LE Connection Complete (0x02) the Core spec requires and
has no link loss (shared/notes/virtual-controllers.md). The semantics here follow the
Core spec (Vol 4, Part E, 7.8.12–7.8.17, 7.1.6) and what RootCanal 1.13.0 was seen to do:
accept list of 16; modifying it while an accept-list connection is pending → 0x0C; a
pending create connection never times out; cancel → Command Complete 0x00 then LE
Connection Complete 0x02; a second cancel → 0x0C; scanning while initiating allowed."""

from __future__ import annotations

import dataclasses
import logging
import struct
from typing import TYPE_CHECKING

from bumble import hci
from bumble.controller import Connection
from bumble.core import PhysicalTransport

from . import hcibytes

if TYPE_CHECKING:
    from .links import Link

logger = logging.getLogger(__name__)

ACCEPT_LIST_SIZE = 16
LE_ACL_DATA_PACKET_LENGTH = 27
TOTAL_NUM_LE_ACL_DATA_PACKETS = 8
# Every LE state and state combination of Core Vol 4, Part E, 7.8.27 (bits 0…41),
# among them scanning + initiating.
ALL_LE_STATES = ((1 << 42) - 1).to_bytes(8, "little")

FILTER_POLICY_PEER = 0x00
FILTER_POLICY_ACCEPT_LIST = 0x01
ANONYMOUS_ADDRESS_TYPE = 0xFF
OWN_ADDRESS_PUBLIC = (0x00, 0x02)
# Reasons a host may give in HCI Disconnect (7.1.6).
DISCONNECT_REASONS = {0x05, 0x13, 0x14, 0x15, 0x1A, 0x29, 0x3B}
SUPERVISION_TIMEOUT_RANGE = (0x000A, 0x0C80)
CONNECTION_INTERVAL_RANGE = (0x0006, 0x0C80)
MAX_LATENCY = 0x01F3


@dataclasses.dataclass
class Initiation:
    """The one pending LE (Extended) Create Connection."""

    policy: int
    peer: tuple[bytes, int]
    own_address_type: int
    interval: int
    latency: int
    supervision_timeout: int
    extended: bool
    since: float

    def status(self, now: float) -> dict:
        address, address_type = self.peer
        return {
            "policy": "acceptList" if self.policy == FILTER_POLICY_ACCEPT_LIST else "peer",
            "peer": _address_text(address) if self.policy == FILTER_POLICY_PEER else None,
            "peerType": address_type if self.policy == FILTER_POLICY_PEER else None,
            "extended": self.extended,
            "age": round(now - self.since, 3),
        }


def _address_text(address_le: bytes) -> str:
    return ":".join(f"{b:02X}" for b in reversed(address_le))


def _key(address: hci.Address) -> tuple[bytes, int]:
    return bytes(address.address_bytes), int(address.address_type)


class InitiatorMixin:
    """Mixed into WorldController (controller.py) ahead of Bumble's Controller."""

    def _init_connections(self) -> None:
        self.le_acl_data_packet_length = LE_ACL_DATA_PACKET_LENGTH
        self.total_num_le_acl_data_packets = TOTAL_NUM_LE_ACL_DATA_PACKETS
        self.filter_accept_list_size = ACCEPT_LIST_SIZE
        self.le_states = ALL_LE_STATES
        self.accept_list: list[tuple[bytes, int]] = []
        self.initiation: Initiation | None = None
        self.links_by_handle: dict[int, "Link"] = {}
        self.create_connection_commands = 0
        self.cancel_commands = 0
        self.connections_made = 0
        self.disconnections = 0

    def forget_connections(self) -> None:
        """HCI Reset or the host going away: links end without events to this host, the
        accept list and any pending connection are gone."""
        for link in list(self.links_by_handle.values()):
            self.world.links.drop_silently(link)
        self.links_by_handle.clear()
        self.le_connections.clear()
        self.accept_list.clear()
        self.initiation = None

    # -- masks ------------------------------------------------------------------------

    def _event_enabled(self, bit: int) -> bool:
        return bool((self.event_mask >> bit) & 1)

    def _le_event_enabled(self, bit: int) -> bool:
        return self._event_enabled(hcibytes.EVENT_MASK_LE_META_BIT) and bool((self.le_event_mask >> bit) & 1)

    def _send_connection_complete(self, status: int, handle: int, peer: tuple[bytes, int], interval: int,
                                  latency: int, timeout: int, extended: bool) -> None:
        address, address_type = peer
        enhanced = self._le_event_enabled(hcibytes.LE_EVENT_MASK_ENHANCED_CONNECTION_COMPLETE_BIT)
        if extended or enhanced:
            if enhanced:
                self.send_raw(hcibytes.le_enhanced_connection_complete(
                    status, handle, hcibytes.ROLE_CENTRAL, address_type, address, interval, latency, timeout))
        elif self._le_event_enabled(hcibytes.LE_EVENT_MASK_CONNECTION_COMPLETE_BIT):
            self.send_raw(hcibytes.le_connection_complete(
                status, handle, hcibytes.ROLE_CENTRAL, address_type, address, interval, latency, timeout))

    # -- Filter Accept List (7.8.14–7.8.17) --------------------------------------------

    def _accept_list_in_use(self) -> bool:
        if self.initiation is not None and self.initiation.policy == FILTER_POLICY_ACCEPT_LIST:
            return True
        # Scanning with an accept-list scanning filter policy (1 or 3) uses it too.
        return bool(self.le_scan_enable and self.le_scanning_filter_policy in (1, 3))

    def on_hci_le_clear_filter_accept_list_command(self, _command):
        if self._accept_list_in_use():
            return hci.HCI_StatusReturnParameters(hcibytes.STATUS_COMMAND_DISALLOWED)
        self.accept_list.clear()
        return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.SUCCESS)

    def on_hci_le_add_device_to_filter_accept_list_command(self, command):
        if command.address_type not in (0, 1, ANONYMOUS_ADDRESS_TYPE):
            return hci.HCI_StatusReturnParameters(hcibytes.STATUS_INVALID_PARAMETERS)
        if self._accept_list_in_use():
            return hci.HCI_StatusReturnParameters(hcibytes.STATUS_COMMAND_DISALLOWED)
        key = (bytes(command.address.address_bytes), int(command.address_type))
        if key not in self.accept_list:
            if len(self.accept_list) >= ACCEPT_LIST_SIZE:
                return hci.HCI_StatusReturnParameters(hcibytes.STATUS_MEMORY_CAPACITY_EXCEEDED)
            self.accept_list.append(key)
        return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.SUCCESS)

    def on_hci_le_remove_device_from_filter_accept_list_command(self, command):
        if command.address_type not in (0, 1, ANONYMOUS_ADDRESS_TYPE):
            return hci.HCI_StatusReturnParameters(hcibytes.STATUS_INVALID_PARAMETERS)
        if self._accept_list_in_use():
            return hci.HCI_StatusReturnParameters(hcibytes.STATUS_COMMAND_DISALLOWED)
        key = (bytes(command.address.address_bytes), int(command.address_type))
        if key in self.accept_list:
            self.accept_list.remove(key)
        return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.SUCCESS)

    # -- LE (Extended) Create Connection and its cancel (7.8.12, 7.8.13, 7.8.66) -------

    def on_hci_le_create_connection_command(self, command) -> None:
        self._create_connection(
            command.op_code, command.initiator_filter_policy, command.peer_address, command.peer_address_type,
            command.own_address_type, command.connection_interval_min, command.connection_interval_max,
            command.max_latency, command.supervision_timeout, extended=False)

    def on_hci_le_extended_create_connection_command(self, command) -> None:
        if not command.supervision_timeouts:
            self.send_raw(hcibytes.command_status(hcibytes.STATUS_INVALID_PARAMETERS, command.op_code))
            return
        self._create_connection(
            command.op_code, command.initiator_filter_policy, command.peer_address, command.peer_address_type,
            command.own_address_type, command.connection_interval_mins[0], command.connection_interval_maxs[0],
            command.max_latencies[0], command.supervision_timeouts[0], extended=True)

    def _create_connection(self, opcode: int, policy: int, peer_address: hci.Address, peer_address_type: int,
                           own_address_type: int, interval_min: int, interval_max: int, latency: int,
                           timeout: int, extended: bool) -> None:
        self.create_connection_commands += 1
        status = self._check_create_connection(policy, peer_address_type, own_address_type, interval_min,
                                               interval_max, latency, timeout)
        if status == hci.HCI_ErrorCode.SUCCESS and self.initiation is not None:
            status = hcibytes.STATUS_COMMAND_DISALLOWED
        self.send_raw(hcibytes.command_status(status, opcode))
        if status != hci.HCI_ErrorCode.SUCCESS:
            return
        self.initiation = Initiation(
            policy=policy,
            peer=(bytes(peer_address.address_bytes), int(peer_address_type) & 0x01),
            own_address_type=own_address_type,
            interval=interval_max,
            latency=latency,
            supervision_timeout=timeout,
            extended=extended,
            since=self.world.loop.time(),
        )

    def _check_create_connection(self, policy: int, peer_address_type: int, own_address_type: int,
                                 interval_min: int, interval_max: int, latency: int, timeout: int) -> int:
        invalid = hcibytes.STATUS_INVALID_PARAMETERS
        if policy not in (FILTER_POLICY_PEER, FILTER_POLICY_ACCEPT_LIST) or own_address_type > 3:
            return invalid
        if policy == FILTER_POLICY_PEER and peer_address_type > 3:
            return invalid
        low, high = CONNECTION_INTERVAL_RANGE
        if not low <= interval_min <= interval_max <= high or latency > MAX_LATENCY:
            return invalid
        low, high = SUPERVISION_TIMEOUT_RANGE
        # The timeout (10 ms units) must exceed (1 + latency) · interval (1.25 ms) · 2.
        if not low <= timeout <= high or timeout * 8 <= (1 + latency) * interval_max * 2:
            return invalid
        if own_address_type in (0x01, 0x03) and bytes(self.random_address.address_bytes) == bytes(6):
            return invalid  # the host never set a random address
        return hci.HCI_ErrorCode.SUCCESS

    def on_hci_le_create_connection_cancel_command(self, _command):
        self.cancel_commands += 1
        initiation = self.initiation
        if initiation is None:
            return hci.HCI_StatusReturnParameters(hcibytes.STATUS_COMMAND_DISALLOWED)
        self.initiation = None
        # Command Complete first (sent by the caller after this returns), then the LE
        # Connection Complete with Unknown Connection Identifier: two hops on the loop
        # keep that order.
        loop = self.world.loop
        # All other fields zero, peer address included (what RootCanal 1.13.0 sends).
        loop.call_soon(lambda: self._send_connection_complete(
            hcibytes.STATUS_UNKNOWN_CONNECTION_ID, 0, (bytes(6), 0), 0, 0, 0, initiation.extended))
        return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.SUCCESS)

    def consider_connecting(self, pdu_address: hci.Address, tag) -> None:
        """A connectable advertising PDU was received: connect if it is what the pending
        create connection waits for."""
        initiation = self.initiation
        if initiation is None or tag is None:
            return
        key = _key(pdu_address)
        if initiation.policy == FILTER_POLICY_ACCEPT_LIST:
            if key not in self.accept_list:
                return
        elif key != initiation.peer:
            return
        own_address = self.public_address if initiation.own_address_type in OWN_ADDRESS_PUBLIC else self.random_address
        handle = self.allocate_connection_handle()
        link = self.world.links.connect(self, handle, own_address, tag, initiation.interval, initiation.latency,
                                        initiation.supervision_timeout)
        if link is None:
            return  # nobody answers the CONNECT_IND: stay pending
        self.initiation = None
        self.connections_made += 1
        self.links_by_handle[handle] = link
        self.le_connections[tag.address] = Connection(
            controller=self,
            handle=handle,
            role=hci.Role.CENTRAL,
            self_address=own_address,
            peer_address=tag.address,
            link=self.link,
            transport=PhysicalTransport.LE,
            link_type=hci.HCI_Connection_Complete_Event.LinkType.ACL,
        )
        self._send_connection_complete(hci.HCI_ErrorCode.SUCCESS, handle, key, initiation.interval,
                                       initiation.latency, initiation.supervision_timeout, initiation.extended)

    # -- established connections ----------------------------------------------------------

    def on_link_closed(self, link: "Link", reason: int) -> None:
        """The link ended (by the tag, by link loss, or by our Disconnect)."""
        self.links_by_handle.pop(link.handle, None)
        connection = self.le_connections.get(link.tag.address)
        if connection is not None and connection.handle == link.handle:
            del self.le_connections[link.tag.address]
        self.disconnections += 1
        if self._event_enabled(hcibytes.EVENT_MASK_DISCONNECTION_COMPLETE_BIT):
            self.send_raw(hcibytes.disconnection_complete(hci.HCI_ErrorCode.SUCCESS, link.handle, reason))

    def on_hci_disconnect_command(self, command) -> None:
        link = self.links_by_handle.get(command.connection_handle)
        if link is None:
            self.send_raw(hcibytes.command_status(hcibytes.STATUS_UNKNOWN_CONNECTION_ID, command.op_code))
            return
        if command.reason not in DISCONNECT_REASONS:
            self.send_raw(hcibytes.command_status(hcibytes.STATUS_INVALID_PARAMETERS, command.op_code))
            return
        self.send_raw(hcibytes.command_status(hci.HCI_ErrorCode.SUCCESS, command.op_code))
        self.world.links.disconnect_by_central(link, command.reason)

    def on_hci_read_rssi_command(self, command):
        link = self.links_by_handle.get(command.handle)
        if link is None:
            return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.UNKNOWN_CONNECTION_IDENTIFIER_ERROR)
        return hci.HCI_Read_RSSI_ReturnParameters(
            status=hci.HCI_ErrorCode.SUCCESS, handle=command.handle, rssi=self.world.connection_rssi(link.tag, self.rng, self.gateway))

    def on_hci_le_read_remote_features_command(self, command) -> None:
        link = self.links_by_handle.get(command.connection_handle)
        if link is None:
            self.send_raw(hcibytes.command_status(hcibytes.STATUS_UNKNOWN_CONNECTION_ID, command.op_code))
            return
        self.send_raw(hcibytes.command_status(hci.HCI_ErrorCode.SUCCESS, command.op_code))
        if self._le_event_enabled(hcibytes.LE_EVENT_MASK_READ_REMOTE_FEATURES_COMPLETE_BIT):
            # Tags are simple LE peripherals: no optional link-layer features.
            self.send_raw(hcibytes.le_read_remote_features_complete(hci.HCI_ErrorCode.SUCCESS, link.handle, bytes(8)))

    def on_hci_acl_data_packet(self, packet) -> None:
        if packet.connection_handle not in self.links_by_handle:
            self.errors += 1
            return
        if len(packet.data) > LE_ACL_DATA_PACKET_LENGTH:
            self.errors += 1  # beyond the advertised buffer size: a host bug, counted, still carried
        try:
            super().on_hci_acl_data_packet(packet)  # reassembly + Number Of Completed Packets
        except (AssertionError, struct.error, IndexError, ValueError) as error:
            # Bumble's assembler trips on some malformed sequences: the packet is lost,
            # the session goes on.
            self.errors += 1
            logger.info("[%s] malformed ACL data on 0x%04x: %r", self.name, packet.connection_handle, error)

    def deliver_acl(self, handle: int, pdu: bytes) -> None:
        """An L2CAP PDU from the peer, cut into ACL packets of the LE buffer size."""
        if handle not in self.links_by_handle:
            return
        for packet in hcibytes.acl_fragments(handle, pdu, self.le_acl_data_packet_length):
            self.send_raw(packet)

    def connections_status(self) -> dict:
        now = self.world.loop.time()
        gateway = {"gateway": self.gateway.id} if self.gateway is not None else {}
        return {
            "controller": self.name,
            **gateway,
            "acceptList": [{"address": _address_text(a), "type": t} for a, t in self.accept_list],
            "pending": self.initiation.status(now) if self.initiation is not None else None,
            "createConnectionCommands": self.create_connection_commands,
            "cancelCommands": self.cancel_commands,
            "connectionsMade": self.connections_made,
            "disconnections": self.disconnections,
            "handles": sorted(self.links_by_handle),
        }
