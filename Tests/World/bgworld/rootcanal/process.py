"""Starting the RootCanal binary and talking to its test channel.

The binary ships with the PyPI package `rootcanal`; on Debian 12 it runs through the
Debian 13 loader and libraries that scripts/rootcanal unpacks, with an LD_PRELOAD shim
that sets TCP_NODELAY on accepted sockets (shared/notes/virtual-controllers.md)."""

from __future__ import annotations

import asyncio
import os
import pathlib
import re
import socket
import struct
import subprocess
import tempfile

READY_TIMEOUT_S = 10.0
MAX_REPLY = 1 << 20
LE_PHY = "1"


class RootCanalError(Exception):
    pass


def repository_root() -> pathlib.Path:
    return pathlib.Path(__file__).resolve().parents[4]


def binary() -> pathlib.Path:
    try:
        import rootcanal.binaries  # the PyPI package, pinned in Tests/requirements.txt
    except ImportError as error:
        raise RootCanalError("the rootcanal package is not installed (pip install -r Tests/requirements.txt)") from error
    return pathlib.Path(rootcanal.binaries.get_package_binary_resource_path("rootcanal"))


def prepare(directory: pathlib.Path | None) -> pathlib.Path:
    """scripts/rootcanal: newer libc beside the binary and the NODELAY shim (idempotent)."""
    script = repository_root() / "scripts" / "rootcanal"
    args = [str(script)] + ([str(directory)] if directory else [])
    result = subprocess.run(args, capture_output=True, text=True)
    if result.returncode != 0:
        raise RootCanalError(f"scripts/rootcanal failed: {result.stderr.strip()[-500:]}")
    return pathlib.Path(result.stdout.strip().splitlines()[-1])


def free_port(host: str) -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


class RootCanal:
    """One RootCanal process on free ports; `hci_port` serves one controller per client."""

    def __init__(self, directory: pathlib.Path, host: str = "127.0.0.1") -> None:
        self.directory = directory
        self.host = host
        self.ports = {name: free_port(host) for name in ("test", "hci", "link", "link_ble")}
        self.log = tempfile.NamedTemporaryFile("w+", prefix="rootcanal-", suffix=".log", delete=False)
        self.process: subprocess.Popen | None = None

    @property
    def hci_port(self) -> int:
        return self.ports["hci"]

    def command_line(self) -> list[str]:
        program = [str(binary())]
        libdir = self.directory / "sysroot" / "usr" / "lib" / "x86_64-linux-gnu"
        shim = self.directory / "nodelay.so"
        flags = [f"-test_port={self.ports['test']}", f"-hci_port={self.ports['hci']}",
                 f"-link_port={self.ports['link']}", f"-link_ble_port={self.ports['link_ble']}"]
        if (libdir / "ld-linux-x86-64.so.2").exists():
            return [str(libdir / "ld-linux-x86-64.so.2"), "--library-path", str(libdir), "--preload", str(shim)] + program + flags
        return program + flags  # a system with a new enough libc: the shim by LD_PRELOAD

    async def start(self) -> None:
        env = dict(os.environ, LD_PRELOAD=str(self.directory / "nodelay.so"))
        self.process = subprocess.Popen(self.command_line(), stdout=self.log, stderr=subprocess.STDOUT, env=env)
        # A bare connect-and-close on the test port aborts RootCanal, and a test-channel
        # client that connects before RootCanal has set the channel up gets its replies
        # garbled: readiness comes from the log line that ends its initialisation.
        pattern = re.compile(r"initialize: Finished")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + READY_TIMEOUT_S
        while loop.time() < deadline:
            if self.process.poll() is not None:
                raise RootCanalError(f"rootcanal exited with {self.process.returncode}: {self.log_tail()}")
            if pattern.search(self.log_text()):
                return
            await asyncio.sleep(0.02)
        raise RootCanalError(f"rootcanal not ready after {READY_TIMEOUT_S:g} s: {self.log_tail()}")

    def log_text(self) -> str:
        with open(self.log.name, encoding="utf-8", errors="replace") as file:
            return file.read()

    def log_tail(self, size: int = 1500) -> str:
        return self.log_text()[-size:]

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        os.environ.get("BGWORLD_KEEP_ROOTCANAL_LOG") or os.unlink(self.log.name)


class TestChannel:
    """`[len]name[nargs]([len]arg)*` requests, u32-LE-length + text replies; RootCanal
    greets a new client with one reply of its own, and takes one client at a time."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self._lock = asyncio.Lock()

    @classmethod
    async def connect(cls, host: str, port: int) -> "TestChannel":
        reader, writer = await asyncio.open_connection(host, port)
        channel = cls(reader, writer)
        await channel._reply()  # "RegisterSendResponse called"
        return channel

    async def _reply(self) -> str:
        (length,) = struct.unpack("<I", await self.reader.readexactly(4))
        if length > MAX_REPLY:
            raise RootCanalError(f"test channel reply of {length} bytes")
        return (await self.reader.readexactly(length)).decode("utf-8", "replace")

    async def call(self, name: str, *args: str) -> str:
        request = bytes((len(name),)) + name.encode() + bytes((len(args),))
        for arg in args:
            request += bytes((len(arg),)) + arg.encode()
        async with self._lock:
            self.writer.write(request)
            await self.writer.drain()
            return await asyncio.wait_for(self._reply(), 5)

    async def device_ids(self) -> list[int]:
        text = await self.call("list")
        devices = text.split("Phys:")[0]
        return [int(match) for match in re.findall(r"^\s*(\d+):", devices, re.MULTILINE)]

    def close(self) -> None:
        self.writer.close()


