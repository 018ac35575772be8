"""Control channel: line-based text over loopback TCP (any number of clients).

Each request is one line; each reply is one line, `OK …`, `ERR …`, or a JSON object
for `status`. Commands:

  status                      JSON: clients, sessions (packets both ways), tags, uptime
                              (a rooms world: gateways, and each tag's position and
                              distance, walls and mean RSSI per gateway)
  stop-controller SECONDS [GATEWAY]   drop every HCI client (of every port, or of one
                              gateway's) and refuse connections for SECONDS
  hardware-error [CODE]       send HCI Hardware Error (default code 0) to every client
  set-distance TAG METERS     pin a tag at a distance (overrides its script);
                              METERS may be "off" (out of range)
  set-position TAG X Y        a rooms world: pin a tag at (X, Y) metres (overrides its path)
  clear-distance TAG          return the tag to its script (also clear-position)
  mute | unmute               stop / resume all tag advertising
  restart-script              scenario time (and uptime) starts again at 0
  tag-advertise TAG on|off|script   switch a tag's advertising (script: its advertise_after)
  rotate-address TAG                a new resolvable private address (address_type rpa)
  link-loss TAG               the tag's link goes silent; 0x08 after the supervision timeout
  tag-disconnect TAG [REASON] the tag ends its link (default 0x13, remote user terminated)
  connections                 JSON: links, per controller accept list, pending create
                              connection and command counts
  proof-stats                 JSON: per connectable tag, its variant and what it was asked
  phone-start | phone-report | phone-stop   the virtual phone (bgworld/phone.py)
  help
"""

from __future__ import annotations

import asyncio
import json
import math

from . import hcibytes, phone
from .server import HciServers
from .world import World

MAX_LINE = 1024


class ControlServer:
    def __init__(self, world: World, hci_server: HciServers, host: str = "127.0.0.1", port: int = 0) -> None:
        self.world = world
        self.hci = hci_server
        self.host = host
        self.port = port
        self._server: asyncio.base_events.Server | None = None

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._on_client, self.host, self.port, limit=MAX_LINE * 4)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()

    async def _on_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                try:
                    line = await reader.readline()
                except (asyncio.LimitOverrunError, ValueError):
                    writer.write(b"ERR line too long\n")
                    break
                if not line:
                    break
                reply = self.handle(line.decode("utf-8", "replace").strip())
                writer.write(reply.encode() + b"\n")
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

    def handle(self, line: str) -> str:
        words = line.split()
        if not words:
            return "ERR empty command"
        name, args = words[0].lower(), words[1:]
        try:
            if name == "status":
                return json.dumps(self.status(), separators=(",", ":"))
            if name == "stop-controller":
                seconds = _number(args, 0, "SECONDS")
                if not 0 <= seconds <= 3600:
                    return "ERR SECONDS must be within 0…3600"
                gateway = args[1] if len(args) > 1 else None
                self.hci.stop_controller(seconds, gateway)
                return f"OK controller stopped for {seconds:g} s" + (f" ({gateway})" if gateway else "")
            if name == "hardware-error":
                code = int(args[0], 0) if args else 0
                if not 0 <= code <= 255:
                    return "ERR CODE must be within 0…255"
                sent = self.hci.broadcast_raw(hcibytes.hardware_error(code))
                return f"OK hardware error 0x{code:02x} sent to {sent} client(s)"
            if name == "set-distance":
                tag = self._tag(args)
                if len(args) < 2:
                    return "ERR usage: set-distance TAG METERS"
                meters = math.inf if args[1].lower() == "off" else float(args[1])
                if not meters >= 0:
                    return "ERR METERS must be >= 0 or off"
                if self.world.rooms is not None and meters != math.inf:
                    return "ERR a world with gateways places tags by position: set-position TAG X Y (or set-distance TAG off)"
                tag.distance_override = meters
                return f"OK {tag.id} at {args[1]}"
            if name == "set-position":
                tag = self._tag(args)
                if self.world.rooms is None:
                    return "ERR set-position needs a world with gateways (rooms); use set-distance"
                x, y = _number(args, 1, "X"), _number(args, 2, "Y")
                tag.distance_override = None
                tag.position_override = (x, y)
                return f"OK {tag.id} at ({x:g}, {y:g})"
            if name in ("clear-distance", "clear-position"):
                tag = self._tag(args)
                tag.distance_override = None
                tag.position_override = None
                return f"OK {tag.id} follows its script"
            if name == "restart-script":
                self.world.restart_script()
                return "OK scenario time restarted"
            if name == "mute":
                self.world.muted = True
                return "OK muted"
            if name == "unmute":
                self.world.muted = False
                return "OK unmuted"
            if name == "tag-advertise":
                tag = self._tag(args)
                mode = args[1].lower() if len(args) > 1 else ""
                if mode not in ("on", "off", "script"):
                    return "ERR usage: tag-advertise TAG on|off|script"
                tag.advertising_override = None if mode == "script" else mode == "on"
                return f"OK {tag.id} advertising {mode}"
            if name == "rotate-address":
                tag = self._tag(args)
                if tag.address.address_bytes[5] & 0xC0 != 0x40:
                    return f"ERR {tag.id} has no resolvable private address (address_type rpa)"
                self.world.rotate_address(tag)
                return f"OK {tag.id} address {tag.address}"
            if name == "link-loss":
                tag = self._tag(args)
                link = self.world.links.for_tag(tag)
                if link is None:
                    return f"ERR {tag.id} is not connected"
                self.world.links.cut(link)
                return f"OK {tag.id} link silent, lost after {self.world.links.timeout_s(link):g} s"
            if name == "tag-disconnect":
                tag = self._tag(args)
                reason = int(args[1], 0) if len(args) > 1 else 0x13
                if not 0 <= reason <= 255:
                    return "ERR REASON must be within 0…255"
                link = self.world.links.for_tag(tag)
                if link is None:
                    return f"ERR {tag.id} is not connected"
                self.world.links.disconnect_by_tag(link, reason)
                return f"OK {tag.id} disconnected with reason 0x{reason:02x}"
            if name == "connections":
                return json.dumps(self.connections(), separators=(",", ":"))
            if name == "proof-stats":
                return json.dumps(self.world.proof_stats(), separators=(",", ":"))
            if name.startswith("phone-"):
                return phone.handle_control(self.world, name, args)
            if name == "help":
                return ("OK commands: status, stop-controller S [GATEWAY], hardware-error [CODE], set-distance TAG M|off, "
                        "set-position TAG X Y, clear-distance TAG, mute, unmute, restart-script, tag-advertise TAG on|off|script, rotate-address TAG, "
                        "link-loss TAG, "
                        "tag-disconnect TAG [REASON], connections, proof-stats")
            return f"ERR unknown command {name!r} (try help)"
        except ValueError as error:
            return f"ERR {error}"

    def _tag(self, args: list[str]):
        if not args:
            raise ValueError("missing TAG")
        tag = self.world.tags.get(args[0])
        if tag is None:
            raise ValueError(f"no tag {args[0]!r} (tags: {', '.join(sorted(self.world.tags))})")
        return tag

    def connections(self) -> dict:
        controllers = [session.controller.connections_status() for session in self.hci.sessions if session.open]
        return {
            "links": self.world.links.status(),
            "linkLosses": self.world.links.losses,
            "controllers": controllers,
            "createConnectionCommands": sum(c.controller.create_connection_commands for c in self.hci.sessions),
            "pending": any(c["pending"] is not None for c in controllers),
        }

    def status(self) -> dict:
        result = self.world.status()
        result.update(self.hci.status())
        return result


def _number(args: list[str], index: int, what: str) -> float:
    if len(args) <= index:
        raise ValueError(f"missing {what}")
    value = float(args[index])
    if not math.isfinite(value):
        raise ValueError(f"{what} must be finite")
    return value
