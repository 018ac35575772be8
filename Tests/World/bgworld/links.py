"""Connections between a gateway's controller (central) and a tag's peer (peripheral).

Bumble's LocalLink routes ACL by address alone and broadcasts CONNECT_IND, so two
devices that share an address (a clone and its genuine tag) are ambiguous, and the
source address it reports is the sender's *random* address even when the connection
uses the public one. Here every connection is an explicit `Link` object, and ACL goes
along the link it belongs to. Link loss is modelled too: a link whose tag is out of
range (or is cut by the control channel) carries nothing, and after the supervision
timeout both ends see Disconnection Complete with reason 0x08."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from typing import TYPE_CHECKING

from bumble import core, hci, ll
from bumble.link import LocalLink

if TYPE_CHECKING:
    from .controller import WorldController
    from .tags import Tag
    from .world import World

logger = logging.getLogger(__name__)

# Disconnection reasons (Core Vol 1, Part F).
REASON_CONNECTION_TIMEOUT = 0x08
REASON_REMOTE_USER_TERMINATED = 0x13
REASON_LOCAL_HOST_TERMINATED = 0x16

# How often links are checked against the radio model (range, link-loss timers).
WATCH_PERIOD_S = 0.05
SUPERVISION_UNIT_S = 0.010


@dataclasses.dataclass(eq=False)
class Link:
    id: int
    central: "WorldController"
    handle: int
    central_address: hci.Address
    tag: "Tag"
    interval: int
    latency: int
    supervision_timeout: int  # units of 10 ms, as in the HCI command
    since: float
    # Radio silence: since when nothing gets through (None: the link is fine), and
    # whether the control channel cut it for good (a forced loss never recovers).
    silent_since: float | None = None
    forced_loss: bool = False
    open: bool = True

    def status(self, now: float) -> dict:
        return {
            "id": self.id,
            "tag": self.tag.id,
            "address": str(self.tag.address),
            "gatewayAddress": str(self.central_address),
            "controller": self.central.name,
            "handle": self.handle,
            "since": round(self.since, 3),
            "age": round(now - self.since, 3),
            "supervisionTimeoutMs": self.supervision_timeout * 10,
            "silent": self.silent_since is not None,
        }


class WorldLink(LocalLink):
    """The radio. Advertising PDUs fan out as in Bumble; ACL and LL control PDUs go
    along explicit links (see the module docstring)."""

    def __init__(self, world: "World") -> None:
        super().__init__()
        self.world = world

    def send_acl_data(self, sender_controller, destination_address: hci.Address, transport, data: bytes) -> None:
        if transport != core.PhysicalTransport.LE:
            return
        link = self.world.links.find(sender_controller, destination_address)
        if link is None:
            logger.info("ACL from %s to %s on no link: dropped", sender_controller.name, destination_address)
            return
        self.world.links.central_to_peer(link, data)

    def send_ll_control_pdu(self, sender_address: hci.Address, receiver_address: hci.Address, packet: ll.ControlPdu) -> None:
        # Tags do not take part in LL procedures (connection update, features, encryption):
        # the procedures complete or are answered by the central's controller itself.
        logger.debug("LL control PDU %s from %s to %s ignored", packet, sender_address, receiver_address)


class LinkManager:
    def __init__(self, world: "World", supervision_timeout_s: float | None = None) -> None:
        self.world = world
        self.loop = world.loop
        self.links: list[Link] = []
        self.supervision_timeout_s = supervision_timeout_s
        self.losses = 0
        self._next_id = 1
        self._watch: asyncio.TimerHandle | None = None

    def start(self) -> None:
        self._watch = self.loop.call_later(WATCH_PERIOD_S, self._check)

    def stop(self) -> None:
        if self._watch is not None:
            self._watch.cancel()
            self._watch = None

    # -- establishing ----------------------------------------------------------------

    def connect(self, central: "WorldController", handle: int, central_address: hci.Address, tag: "Tag",
                interval: int, latency: int, supervision_timeout: int) -> Link | None:
        """CONNECT_IND from `central` to `tag`: the tag takes it if it is advertising and
        not connected already. Returns the link, or None when the tag does not answer."""
        if tag.peer is None or tag.link is not None:
            return None
        link = Link(self._next_id, central, handle, central_address, tag, interval, latency, supervision_timeout,
                    self.loop.time())
        self._next_id += 1
        self.links.append(link)
        tag.link = link
        tag.peer.on_connect()
        return link

    def find(self, sender, destination: hci.Address) -> Link | None:
        for link in self.links:
            if link.central is sender and link.tag.address == destination:
                return link
        return None

    def for_tag(self, tag: "Tag") -> Link | None:
        return tag.link if isinstance(tag.link, Link) else None

    # -- data ------------------------------------------------------------------------

    def central_to_peer(self, link: Link, pdu: bytes) -> None:
        if not link.open or link.silent_since is not None or link.tag.peer is None:
            return
        delay = link.tag.peer.answer_delay_s
        for answer in link.tag.peer.on_l2cap(pdu):
            if delay > 0:
                self.loop.call_later(delay, self._peer_to_central, link, answer)
            else:
                self.loop.call_soon(self._peer_to_central, link, answer)

    def _peer_to_central(self, link: Link, pdu: bytes) -> None:
        if link.open and link.silent_since is None:
            link.central.deliver_acl(link.handle, pdu)

    # -- ending ------------------------------------------------------------------------

    def disconnect_by_central(self, link: Link, reason: int) -> None:
        """The gateway's host asked (HCI Disconnect): the tag hears `reason`, the host
        gets 0x16 from its own controller."""
        self._close(link, central_reason=REASON_LOCAL_HOST_TERMINATED, peer_reason=reason)

    def disconnect_by_tag(self, link: Link, reason: int = REASON_REMOTE_USER_TERMINATED) -> None:
        self._close(link, central_reason=reason, peer_reason=REASON_LOCAL_HOST_TERMINATED)

    def drop_silently(self, link: Link) -> None:
        """The central's controller forgot the link (reset, host gone): no event to that
        host; the tag notices by supervision timeout, here at once."""
        self._close(link, central_reason=None, peer_reason=REASON_CONNECTION_TIMEOUT)

    def cut(self, link: Link) -> None:
        """Link loss forced by the control channel: silence now, 0x08 after the timeout."""
        link.forced_loss = True
        if link.silent_since is None:
            link.silent_since = self.loop.time()

    def _close(self, link: Link, central_reason: int | None, peer_reason: int) -> None:
        if not link.open:
            return
        link.open = False
        self.links.remove(link)
        link.tag.link = None
        if link.tag.peer is not None:
            link.tag.peer.on_disconnect(peer_reason)
        if central_reason is not None:
            link.central.on_link_closed(link, central_reason)

    def timeout_s(self, link: Link) -> float:
        if self.supervision_timeout_s is not None:
            return self.supervision_timeout_s
        return link.supervision_timeout * SUPERVISION_UNIT_S

    def _check(self) -> None:
        now = self.loop.time()
        for link in list(self.links):
            in_range = self.world.in_range(link.tag, link.central.gateway)
            if link.silent_since is None:
                if not in_range:
                    link.silent_since = now
            elif in_range and not link.forced_loss:
                link.silent_since = None  # back before the timeout: the link survives
            if link.silent_since is not None and now - link.silent_since >= self.timeout_s(link):
                self.losses += 1
                self._close(link, central_reason=REASON_CONNECTION_TIMEOUT, peer_reason=REASON_CONNECTION_TIMEOUT)
        self._watch = self.loop.call_later(WATCH_PERIOD_S, self._check)

    def status(self) -> list[dict]:
        now = self.loop.time()
        return [link.status(now) for link in self.links]


