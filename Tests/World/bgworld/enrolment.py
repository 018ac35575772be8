"""A two-controller world for enrolment: a plain Bumble LocalLink with the gateway's
controller served as H4 over TCP and a phone (a Bumble Device on its own controller)
acting as the central that pairs; more controllers served the same way on the same link
carry other binaries (`beacon-gateway tag` beside the door, test_tag.py). The world's own link (links.py) models tags as
peripherals only; a phone connecting to the gateway needs Bumble's plain link, where
LE encryption (LTK request, reply, Encryption Change) works as on a real controller,
with one correction (`ConnectionAddressLink`): ACL carries the address the connection
uses, not always the sender's random one (the gateway advertises from its public address),
and one more (`ResettingController`): HCI Reset stops scanning and advertising, so the
agent can take the controller over after `enroll`.

Runs its asyncio loop in a thread so a test can drive the phone while the gateway's
binary runs as a subprocess."""

from __future__ import annotations

import asyncio
import socket
import threading

from bumble.controller import Controller
from bumble.core import UUID, PhysicalTransport
from bumble.device import AdvertisingType, Device, Peer
from bumble.hci import Address, HCI_LE_Set_Random_Address_Command, OwnAddressType
from bumble.link import LocalLink
from bumble.pairing import PairingConfig, PairingDelegate
from bumble.transport import open_transport

GATEWAY_ADDRESS = "F0:F1:F2:F3:F4:F5"
PHONE_ADDRESS = "C4:55:66:77:88:99"
# Another person's badge at the door while a phone enrols: a static random address.
BADGE_ADDRESS = "C1:22:33:44:55:66"
BADGE_CONTROLLER_ADDRESS = "C6:22:33:44:55:66"
# The phone's identity resolving key, least significant octet first as Bumble keeps it
# (a Device made without a configuration has an all-zero IRK: a phone without one).
PHONE_IRK = bytes.fromhex("0f1e2d3c4b5a69788796a5b4c3d2e1f0")
HEART_RATE = bytes([0x0D, 0x18])
HEART_RATE_SERVICE = UUID.from_16_bits(0x180D)
DEVICE_INFORMATION_SERVICE = UUID.from_16_bits(0x180A)
MANUFACTURER_NAME = UUID.from_16_bits(0x2A29)


class ComparingDelegate(PairingDelegate):
    """A phone with a display and yes/no: it records the value it shows and says yes."""

    def __init__(self, shown: list[int]) -> None:
        super().__init__(io_capability=PairingDelegate.DISPLAY_OUTPUT_AND_YES_NO_INPUT)
        self._shown = shown

    async def compare_numbers(self, number: int, digits: int) -> bool:
        self._shown.append(number)
        return True


class ResettingController(Controller):
    """Bumble's Controller answers HCI Reset without resetting anything: scanning left on
    by one host (enroll exits while scanning) makes the next host's LE Set Scan
    Parameters fail with Command Disallowed. A real controller stops scanning and
    advertising on Reset (Core Vol 4 Part E 7.3.2); so does this one."""

    def on_hci_reset_command(self, command):
        self.le_scan_enable = False
        self.le_legacy_advertiser.stop()
        return super().on_hci_reset_command(command)


class ConnectionAddressLink(LocalLink):
    """Bumble's LocalLink sends LE ACL from the sender's random address, which a
    controller advertising from its public address does not have: the receiver then
    finds no connection and drops the data. Here LE ACL comes from the address the
    sender's connection uses."""

    def send_acl_data(self, sender_controller, destination_address, transport, data):
        if transport == PhysicalTransport.LE:
            connection = sender_controller.le_connections.get(destination_address)
            destination = self.find_le_controller(destination_address)
            if connection is not None and destination is not None:
                source = connection.self_address
                asyncio.get_running_loop().call_soon(
                    lambda: destination.on_link_acl_data(source, transport, data))
                return
        super().send_acl_data(sender_controller, destination_address, transport, data)


async def _advertise_from(device: Device, address: Address) -> None:
    """Non-connectable advertising every 100 ms from `address` (a random one)."""
    device.random_address = address
    await device.send_command(HCI_LE_Set_Random_Address_Command(random_address=address))
    await device.start_advertising(advertising_type=AdvertisingType.UNDIRECTED, own_address_type=OwnAddressType.RANDOM,
                                   advertising_data=bytes([0x02, 0x01, 0x06]),
                                   advertising_interval_min=100, advertising_interval_max=100)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class EnrolmentWorld:
    """With `plain`, the gateway's controller is a plain Bumble `Controller` on a plain
    `LocalLink`, with no public address (Bumble's default, all zeros): what an outside
    check of enrolment starts from. The gateway then pairs from its static random address,
    which is also the address Bumble's link sends its ACL from."""

    def __init__(self, plain: bool = False) -> None:
        self.plain = plain
        self.port = _free_port()
        self.shown_numbers: list[int] = []
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()
        self.call(self._setup())

    @property
    def transport(self) -> str:
        return f"tcp:127.0.0.1:{self.port}"

    def call(self, coroutine, timeout: float = 30):
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    async def _setup(self) -> None:
        self.link = LocalLink() if self.plain else ConnectionAddressLink()
        self._extra_transports = []
        self._transport = await open_transport(f"tcp-server:127.0.0.1:{self.port}")
        if self.plain:
            self.gateway_controller = Controller("gateway", host_source=self._transport.source,
                                                 host_sink=self._transport.sink, link=self.link)
        else:
            self.gateway_controller = ResettingController("gateway", host_source=self._transport.source,
                                                          host_sink=self._transport.sink, link=self.link,
                                                          public_address=GATEWAY_ADDRESS)
        self.phone_controller = Controller("phone", link=self.link, public_address=PHONE_ADDRESS)
        self.phone = Device.with_hci("phone", Address(PHONE_ADDRESS), self.phone_controller, self.phone_controller)
        self.phone.irk = PHONE_IRK
        await self.phone.power_on()
        self.badge_controller = Controller("badge", link=self.link, public_address=BADGE_CONTROLLER_ADDRESS)
        self.badge = Device.with_hci("badge", Address(BADGE_CONTROLLER_ADDRESS), self.badge_controller, self.badge_controller)
        await self.badge.power_on()

    def serve_controller(self, name: str, public_address: str) -> str:
        """One more controller on the same link, served as H4 over TCP for a second
        binary (a `beacon-gateway tag` beside the door); its transport."""
        port = _free_port()

        async def serve() -> None:
            transport = await open_transport(f"tcp-server:127.0.0.1:{port}")
            self._extra_transports.append(transport)
            ResettingController(name, host_source=transport.source, host_sink=transport.sink, link=self.link,
                                public_address=public_address)
        self.call(serve())
        return f"tcp:127.0.0.1:{port}"

    async def find_enrolment(self, name: str, timeout: float) -> Address:
        """Scans until the gateway's enrolment advertisement (its name and the Heart Rate
        service) is heard; its address."""
        found: asyncio.Future = self.loop.create_future()

        def on_advertisement(advertisement) -> None:
            data = bytes(advertisement.data)
            if advertisement.is_connectable and name.encode() in data and HEART_RATE in data and not found.done():
                found.set_result(advertisement.address)

        self.phone.on("advertisement", on_advertisement)
        await self.phone.start_scanning(active=True, filter_duplicates=False)
        try:
            return await asyncio.wait_for(found, timeout)
        finally:
            self.phone.remove_listener("advertisement", on_advertisement)
            await self.phone.stop_scanning()

    async def pair(self, name: str, secure_connections: bool, timeout: float = 30, compares: bool = False):
        """Connects to the enrolment advertisement and pairs (bonding, the phone's
        identity key distributed from a random static identity): Just Works, or with
        `compares` a phone with a display and yes/no that accepts the six digits it
        shows (recorded in `shown_numbers`). Returns the connection; raises what Bumble
        raises when pairing fails."""
        self._configure_pairing(secure_connections, compares)
        connection = await self.connect(name, timeout)
        await asyncio.wait_for(connection.pair(), timeout)
        return connection

    def _configure_pairing(self, secure_connections: bool, compares: bool) -> None:
        delegate = ComparingDelegate(self.shown_numbers) if compares else PairingDelegate()
        self.phone.pairing_config_factory = lambda _connection: PairingConfig(
            sc=secure_connections, mitm=compares, bonding=True, delegate=delegate,
            identity_address_type=PairingConfig.AddressType.RANDOM)

    async def manufacturer_name(self, connection, timeout: float = 10):
        """The phone's GATT client discovering the gateway's services and their
        characteristics as a phone's settings page does; the services found and the
        Device Information Manufacturer Name characteristic."""
        peer = Peer(connection)
        services = await asyncio.wait_for(peer.discover_services(), timeout)
        for service in services:
            await asyncio.wait_for(peer.discover_characteristics(service=service), timeout)
        found = [characteristic for service in services if service.uuid == DEVICE_INFORMATION_SERVICE
                 for characteristic in service.characteristics if characteristic.uuid == MANUFACTURER_NAME]
        assert len(found) == 1, f"one Manufacturer Name in Device Information, found {found}"
        return [service.uuid for service in services], found[0]

    async def read(self, characteristic, timeout: float = 10) -> bytes:
        return await asyncio.wait_for(characteristic.read_value(), timeout)

    async def pair_and_read(self, connection, characteristic, timeout: float = 30) -> bytes:
        """What a phone does when a read is refused with Insufficient Authentication: it
        pairs (LE Secure Connections, Just Works, bonding) and reads again as soon as
        the link is encrypted: the read leaves from the Encryption Change itself, ahead
        of the phone's keys (Bumble sends them only after the gateway's have come back
        through the binary), because the gateway drops the link once the phone's keys
        are in. The value read, once pairing is over too."""
        self._configure_pairing(secure_connections=True, compares=False)
        reads: list[asyncio.Future] = []
        connection.on("connection_encryption_change",
                      lambda *_: reads or reads.append(asyncio.ensure_future(self.read(characteristic, timeout))))
        await asyncio.wait_for(connection.pair(), timeout)
        assert reads, "the link was encrypted"
        return await reads[0]

    async def connect(self, name: str, timeout: float = 30):
        """Connects to the enrolment advertisement, as a phone does when it is tapped."""
        address = await self.find_enrolment(name, timeout)
        return await asyncio.wait_for(self.phone.connect(address), timeout)

    async def connect_from(self, address: Address) -> None:
        """The phone's next connections leave from `address` (a resolvable private address,
        as phones connect); its identity address stays its static one."""
        self.phone.random_address = address
        await self.phone.send_command(HCI_LE_Set_Random_Address_Command(random_address=address))

    async def discover_services(self, connection, timeout: float = 10):
        """The phone's GATT client discovering the gateway's services."""
        return await asyncio.wait_for(Peer(connection).discover_services(), timeout)

    async def disconnect(self, connection, timeout: float = 10) -> None:
        await asyncio.wait_for(connection.disconnect(), timeout)

    async def wait_disconnected(self, connection, timeout: float) -> None:
        gone: asyncio.Future = self.loop.create_future()
        if connection.handle not in self.phone.connections:
            return
        connection.on("disconnection", lambda *_: gone.done() or gone.set_result(True))
        await asyncio.wait_for(gone, timeout)

    async def advertise_from_new_rpa(self) -> Address:
        """The phone as a tag: non-connectable advertising from a fresh resolvable
        private address made with its IRK, as phones rotate them; the address."""
        rpa = Address.generate_private_address(self.phone.irk)
        await self.phone.stop_advertising()
        await _advertise_from(self.phone, rpa)
        return rpa

    async def stop_advertising(self) -> None:
        await self.phone.stop_advertising()

    async def badge_arrives(self) -> None:
        """Another person's badge starts advertising (non-connectable, every 100 ms) from
        its static random address, as a badge carried to the door."""
        await _advertise_from(self.badge, Address(BADGE_ADDRESS))

    async def badge_leaves(self) -> None:
        await self.badge.stop_advertising()

    def close(self) -> None:
        async def shut() -> None:
            for transport in [self._transport, *self._extra_transports]:
                await transport.close()
        try:
            self.call(shut(), timeout=5)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout=5)
