"""The control channel of the RootCanal world: the Bumble world's commands where they
make sense (set-distance, clear-distance, mute, unmute, tag-advertise, proof-stats), and
RootCanal's own versions of status, connections, link-loss and tag-disconnect."""

from __future__ import annotations

import asyncio
import json

from ..control import ControlServer

UNSUPPORTED = {"stop-controller", "hardware-error"}


class RootCanalControl(ControlServer):
    def __init__(self, runner, host: str = "127.0.0.1", port: int = 0) -> None:
        super().__init__(runner.world, None, host, port)  # type: ignore[arg-type]
        self.runner = runner

    def handle(self, line: str) -> str:
        words = line.split()
        name, args = (words[0].lower(), words[1:]) if words else ("", [])
        try:
            if name in UNSUPPORTED:
                return f"ERR {name} is not available on RootCanal"
            if name == "link-loss":
                tag = self._tag(args)
                if not self.runner.cut(tag):
                    return f"ERR {tag.id} is not connected"
                return f"OK {tag.id} off the LE phy until its link is lost (RootCanal: 0x08 after 3 s)"
            if name == "tag-disconnect":
                tag = self._tag(args)
                reason = int(args[1], 0) if len(args) > 1 else 0x13
                if not 0 <= reason <= 255:
                    return "ERR REASON must be within 0…255"
                tag_host = self.runner.tag_hosts[tag.id]
                if tag_host.handle is None:
                    return f"ERR {tag.id} is not connected"
                asyncio.ensure_future(tag_host.disconnect(reason))
                return f"OK {tag.id} disconnecting with reason 0x{reason:02x}"
            if name == "connections":
                return json.dumps(self.connections(), separators=(",", ":"))
            if name == "help":
                return ("OK commands: status, set-distance TAG M|off, clear-distance TAG, mute, unmute, "
                        "tag-advertise TAG on|off|script, link-loss TAG, tag-disconnect TAG [REASON], connections, proof-stats")
        except ValueError as error:
            return f"ERR {error}"
        return super().handle(line)

    def connections(self) -> dict:
        sessions = self.runner.proxy.status()
        return {
            "links": [{"tag": tag_id, "handle": host.handle} for tag_id, host in self.runner.tag_hosts.items()
                      if host.handle is not None],
            "controllers": sessions,
            "createConnectionCommands": sum(s["createConnectionCommands"] for s in sessions),
            "pending": None,  # RootCanal does not say; see createConnectionCommands
        }

    def status(self) -> dict:
        result = self.world.status()
        result.update({
            "backend": "rootcanal",
            "accepting": True,
            "clients": sum(1 for s in self.runner.proxy.sessions if s.open),
            "sessions": self.runner.proxy.status(),
            "rootcanalTestPort": self.runner.rootcanal.ports["test"],
        })
        for tag_id, host in self.runner.tag_hosts.items():
            result["tags"][tag_id]["onPhy"] = host.on_phy
            result["tags"][tag_id]["deviceId"] = host.device_id
        return result
