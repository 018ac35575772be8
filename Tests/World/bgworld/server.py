"""H4 over TCP: each client is one host session with its own parser and its own
WorldController on the shared link. A session's controller leaves the link when the
client goes, so the next client always meets a controller in its power-on state.

In a rooms world (rooms.py) each gateway has a port of its own (`HciServer(gateway=…)`),
and every controller made for a client of that port is at that gateway's position;
`HciServers` is the set the control channel drives."""

from __future__ import annotations

import asyncio
import logging
import random
import socket

from .controller import WorldController
from .h4 import H4FramingError, H4Parser
from .rooms import Gateway
from .world import World

logger = logging.getLogger(__name__)

READ_CHUNK = 4096
# Bound on bytes queued to a host that does not read: beyond it the session is dropped
# (a real controller would drop reports; dropping the client is the visible equivalent).
MAX_WRITE_BUFFER = 4 * 1024 * 1024
RESTART_RETRY_S = 0.5


class Session:
    def __init__(self, server: "HciServer", number: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.server = server
        self.number = number
        self.reader = reader
        self.writer = writer
        self.parser = H4Parser()
        self.host_to_controller = 0
        self.controller_to_host = 0
        self.open = True
        self.close_reason = ""
        world = server.world
        self.controller = WorldController(
            f"gateway-{number}",
            world,
            public_address=f"00:B1:E0:00:00:{number % 256:02X}",
            rng=random.Random(world.seed * 1_000_003 + number),
            extended=server.extended,
            gateway=server.gateway,
        )
        self.controller.host = self

    # Controller -> host (the controller's TransportSink).
    def on_packet(self, packet: bytes) -> None:
        if not self.open:
            return
        transport = self.writer.transport
        if transport.is_closing():
            return
        if transport.get_write_buffer_size() > MAX_WRITE_BUFFER:
            self.close("host not reading")
            return
        self.writer.write(packet)
        self.controller_to_host += 1
        self.server.controller_to_host += 1

    async def run(self) -> None:
        try:
            while self.open:
                data = await self.reader.read(READ_CHUNK)
                if not data:
                    self.close_reason = self.close_reason or "host closed"
                    break
                try:
                    packets = self.parser.feed(data)
                except H4FramingError as error:
                    self.close(str(error))
                    break
                for packet in packets:
                    self.host_to_controller += 1
                    self.server.host_to_controller += 1
                    try:
                        self.controller.on_packet(packet)
                    except Exception:  # a world bug must not end the host's session
                        self.controller.errors += 1
                        logger.exception("session %d: controller failed on %s", self.number, packet.hex())
        except (ConnectionError, OSError) as error:
            self.close_reason = self.close_reason or f"connection error: {error}"
        finally:
            self.close(self.close_reason or "ended")

    def close(self, reason: str, abort: bool = False) -> None:
        if not self.open:
            return
        self.open = False
        self.close_reason = reason
        self.controller.host = None
        self.controller.forget_connections()
        self.controller.le_scan_enable = False
        self.controller.le_legacy_advertiser.stop()
        if self.controller in self.server.world.link.controllers:
            self.server.world.link.remove_controller(self.controller)
        if abort:
            self.writer.transport.abort()
        else:
            self.writer.close()
        logger.info("session %d closed: %s", self.number, reason)

    def status(self) -> dict:
        gateway = {"gateway": self.server.gateway.id} if self.server.gateway is not None else {}
        return {
            "id": self.number,
            **gateway,
            "open": self.open,
            "hostToController": self.host_to_controller,
            "controllerToHost": self.controller_to_host,
            "reports": self.controller.reports_sent,
            "errors": self.controller.errors,
            "scanning": self.controller.le_scan_enable,
            "scanFamily": self.controller.scan_family,
            "pendingBytes": self.parser.pending,
            "closeReason": self.close_reason,
        }


class HciServer:
    def __init__(self, world: World, host: str = "127.0.0.1", port: int = 0, extended: bool = False,
                 gateway: Gateway | None = None) -> None:
        self.world = world
        self.host = host
        self.port = port
        self.extended = extended
        self.gateway = gateway
        self.sessions: list[Session] = []
        self.host_to_controller = 0
        self.controller_to_host = 0
        self._server: asyncio.base_events.Server | None = None
        self._resume: asyncio.TimerHandle | None = None

    @property
    def accepting(self) -> bool:
        return self._server is not None

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._on_client, self.host, self.port, reuse_address=True)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _on_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        if sock is not None:
            # One H4 packet per write: without NODELAY every command round trip would
            # wait for Nagle + delayed ACK.
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        session = Session(self, self.world.next_session_number(), reader, writer)
        self.sessions.append(session)
        logger.info("session %d opened", session.number)
        await session.run()

    def stop_controller(self, seconds: float) -> None:
        """The controller vanishes: drop every client, refuse connections for `seconds`."""
        if self._resume is not None:
            self._resume.cancel()
        if self._server is not None:
            self._server.close()
            self._server = None
        for session in self.sessions:
            session.close("controller stopped", abort=True)
        self._resume = self.world.loop.call_later(seconds, lambda: asyncio.ensure_future(self._restart()))

    async def _restart(self) -> None:
        self._resume = None
        if self._server is not None:
            return
        try:
            await self.start()
        except OSError as error:
            # Someone grabbed the port meanwhile (rare on loopback): keep trying, the
            # tests' hosts are reconnecting to this port.
            logger.warning("cannot listen on port %d again (%s); retrying", self.port, error)
            self._resume = self.world.loop.call_later(RESTART_RETRY_S, lambda: asyncio.ensure_future(self._restart()))

    def broadcast_raw(self, packet: bytes) -> int:
        count = 0
        for session in self.sessions:
            if session.open:
                session.controller.send_raw(packet)
                count += 1
        return count

    def status(self) -> dict:
        return {
            "accepting": self.accepting,
            "port": self.port,
            "clients": sum(1 for s in self.sessions if s.open),
            "sessions": [s.status() for s in self.sessions],
            "packets": {"hostToController": self.host_to_controller, "controllerToHost": self.controller_to_host},
        }

    async def close(self) -> None:
        if self._resume is not None:
            self._resume.cancel()
        if self._server is not None:
            self._server.close()
        for session in self.sessions:
            session.close("world shutting down", abort=True)


class HciServers:
    """Every H4 port of the world (one, or one per gateway of a rooms world), as the
    control channel sees them: the first is the `hci=` of READY."""

    def __init__(self, servers: list[HciServer]) -> None:
        self.servers = servers

    @classmethod
    def for_world(cls, world: World, host: str, port: int, extended: bool) -> "HciServers":
        if world.rooms is None:
            return cls([HciServer(world, host, port, extended)])
        # `--port` is the first gateway's, unless the scenario gives it one.
        return cls([HciServer(world, host, gateway.port or (port if gateway.index == 0 else 0), extended, gateway)
                    for gateway in world.rooms.gateways])

    @property
    def port(self) -> int:
        return self.servers[0].port

    @property
    def sessions(self) -> list[Session]:
        return sorted((s for server in self.servers for s in server.sessions), key=lambda s: s.number)

    async def start(self) -> None:
        for server in self.servers:
            await server.start()

    def ready_fields(self) -> list[str]:
        """READY's fields past `hci=`: `gateway.ID=HOST:PORT` per gateway of a rooms world."""
        return [f"gateway.{s.gateway.id}={s.host}:{s.port}" for s in self.servers if s.gateway is not None]

    def stop_controller(self, seconds: float, gateway: str | None = None) -> int:
        """Every port's controller (or one gateway's) vanishes for `seconds`."""
        chosen = [s for s in self.servers if gateway is None or (s.gateway is not None and s.gateway.id == gateway)]
        if not chosen:
            raise ValueError(f"no gateway {gateway!r}")
        for server in chosen:
            server.stop_controller(seconds)
        return len(chosen)

    def broadcast_raw(self, packet: bytes) -> int:
        return sum(server.broadcast_raw(packet) for server in self.servers)

    def status(self) -> dict:
        parts = [server.status() for server in self.servers]
        result = {
            "accepting": all(p["accepting"] for p in parts),
            "port": parts[0]["port"],
            "clients": sum(p["clients"] for p in parts),
            "sessions": [s.status() for s in self.sessions],
            "packets": {"hostToController": sum(p["packets"]["hostToController"] for p in parts),
                        "controllerToHost": sum(p["packets"]["controllerToHost"] for p in parts)},
        }
        gateways = {server.gateway.id: {"position": list(server.gateway.position), "port": part["port"],
                                        "accepting": part["accepting"], "clients": part["clients"]}
                    for server, part in zip(self.servers, parts) if server.gateway is not None}
        if gateways:
            result["gateways"] = gateways
        return result

    async def close(self) -> None:
        for server in self.servers:
            await server.close()
