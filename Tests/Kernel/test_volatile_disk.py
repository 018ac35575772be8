"""The power-cut test's disk (Tests/Kernel/powercut/volatile_disk.py) on its own, without
QEMU: what a flush, a FUA write and a cut do to the durable image, spoken to over NBD the
way QEMU's client does (fixed newstyle, NBD_OPT_GO, simple replies)."""

from __future__ import annotations

import pathlib
import random
import socket
import struct
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "powercut"))

import volatile_disk as nbd  # noqa: E402

SIZE = 64 * nbd.BLOCK


class Client:
    def __init__(self, port: int) -> None:
        self.socket = socket.create_connection(("127.0.0.1", port), timeout=10)
        magic, option_magic, flags = struct.unpack(">QQH", self._read(18))
        assert (magic, option_magic) == (nbd.NBDMAGIC, nbd.IHAVEOPT)
        assert flags & nbd.FLAG_FIXED_NEWSTYLE
        self.socket.sendall(struct.pack(">I", nbd.FLAG_FIXED_NEWSTYLE | nbd.FLAG_NO_ZEROES))
        # Like QEMU: ask for structured replies first (refused), then GO.
        self.socket.sendall(struct.pack(">QII", nbd.IHAVEOPT, 8, 0))
        assert self._option_reply()[1] == nbd.REP_ERR_UNSUP
        name = b""
        self.socket.sendall(struct.pack(">QII", nbd.IHAVEOPT, nbd.OPT_GO, 4 + len(name) + 2)
                            + struct.pack(">I", len(name)) + name + struct.pack(">H", 0))
        self.size = self.flags = None
        while True:
            option, reply, data = self._option_reply()
            assert option == nbd.OPT_GO
            if reply == nbd.REP_ACK:
                break
            assert reply == nbd.REP_INFO
            if struct.unpack(">H", data[:2])[0] == nbd.INFO_EXPORT:
                _, self.size, self.flags = struct.unpack(">HQH", data)
        self.handle = 0

    def _read(self, size: int) -> bytes:
        return nbd._read_exactly(self.socket, size)

    def _option_reply(self) -> tuple[int, int, bytes]:
        magic, option, reply, length = struct.unpack(">QIII", self._read(20))
        assert magic == nbd.OPTION_REPLY_MAGIC
        return option, reply, self._read(length)

    def request(self, command: int, offset: int = 0, length: int = 0, data: bytes = b"", flags: int = 0) -> tuple[int, bytes]:
        self.handle += 1
        self.socket.sendall(struct.pack(">IHHQQI", nbd.REQUEST_MAGIC, flags, command, self.handle, offset,
                                        len(data) or length) + data)
        magic, error, handle = struct.unpack(">IIQ", self._read(16))
        assert (magic, handle) == (nbd.SIMPLE_REPLY_MAGIC, self.handle)
        payload = self._read(length) if command == nbd.CMD_READ and not error else b""
        return error, payload

    def write(self, offset: int, data: bytes, fua: bool = False) -> None:
        assert self.request(nbd.CMD_WRITE, offset, data=data, flags=nbd.CMD_FLAG_FUA if fua else 0)[0] == 0

    def read(self, offset: int, length: int) -> bytes:
        error, data = self.request(nbd.CMD_READ, offset, length)
        assert error == 0
        return data

    def flush(self) -> None:
        assert self.request(nbd.CMD_FLUSH)[0] == 0


@pytest.fixture
def disk(tmp_path):
    image = tmp_path / "disk.img"
    image.write_bytes(b"\0" * SIZE)
    volatile = nbd.VolatileDisk(str(image), random.Random(7))
    server = nbd.VolatileDiskServer(volatile).start()
    yield volatile, server, image
    server.stop()


def test_the_export_offers_flush_and_fua_and_reads_see_unflushed_writes(disk):
    volatile, server, image = disk
    client = Client(server.port)
    assert client.size == SIZE
    assert client.flags & (1 << 2) and client.flags & (1 << 3)  # SEND_FLUSH, SEND_FUA
    client.write(100, b"unaligned")  # inside block 0: merged with what is there
    assert client.read(96, 16) == b"\0" * 4 + b"unaligned" + b"\0" * 3
    assert image.read_bytes()[100:109] == b"\0" * 9  # not on the medium before a flush
    client.flush()
    assert image.read_bytes()[100:109] == b"unaligned"


def test_a_cut_drops_what_was_not_flushed_and_keeps_flushed_and_fua_writes(disk):
    volatile, server, image = disk
    client = Client(server.port)
    client.write(0, b"A" * nbd.BLOCK)
    client.flush()
    client.write(nbd.BLOCK, b"B" * nbd.BLOCK, fua=True)
    client.write(2 * nbd.BLOCK, b"C" * nbd.BLOCK)
    client.write(0, b"D" * nbd.BLOCK)
    assert volatile.cut("drop") == {"unflushed_blocks": 2, "persisted": 0}
    on_medium = image.read_bytes()
    assert on_medium[:nbd.BLOCK] == b"A" * nbd.BLOCK
    assert on_medium[nbd.BLOCK:2 * nbd.BLOCK] == b"B" * nbd.BLOCK
    assert on_medium[2 * nbd.BLOCK:3 * nbd.BLOCK] == b"\0" * nbd.BLOCK
    # The cut client's next request is void: its connection is dropped unanswered.
    with pytest.raises((ConnectionError, OSError)):
        client.write(3 * nbd.BLOCK, b"E" * nbd.BLOCK)
    assert image.read_bytes()[3 * nbd.BLOCK:4 * nbd.BLOCK] == b"\0" * nbd.BLOCK
    # The next boot's client sees the medium.
    assert Client(server.port).read(0, nbd.BLOCK) == b"A" * nbd.BLOCK


def test_a_subset_cut_writes_some_unflushed_blocks_whole_and_drops_the_rest(disk):
    volatile, server, image = disk
    client = Client(server.port)
    for index in range(32):
        client.write(index * nbd.BLOCK, bytes([index + 1]) * nbd.BLOCK)
    outcome = volatile.cut("subset")
    on_medium = image.read_bytes()
    written = [index for index in range(32) if on_medium[index * nbd.BLOCK] != 0]
    assert outcome == {"unflushed_blocks": 32, "persisted": len(written)}
    assert 0 < len(written) < 32  # seed 7: some, not all
    for index in range(32):
        block = on_medium[index * nbd.BLOCK:(index + 1) * nbd.BLOCK]
        assert block in (bytes([index + 1]) * nbd.BLOCK, b"\0" * nbd.BLOCK)  # whole or not at all


def test_an_armed_disk_freezes_at_the_first_write_left_unflushed(disk):
    volatile, server, image = disk
    client = Client(server.port)
    volatile.arm()
    client.write(0, b"F" * nbd.BLOCK, fua=True)  # on the medium at once: nothing unflushed
    assert not volatile.frozen.is_set()
    client.flush()
    client.socket.sendall(struct.pack(">IHHQQI", nbd.REQUEST_MAGIC, 0, nbd.CMD_WRITE, 99, nbd.BLOCK, nbd.BLOCK)
                          + b"G" * nbd.BLOCK)
    assert volatile.frozen.wait(10)
    client.socket.settimeout(0.2)
    with pytest.raises(socket.timeout):
        client.socket.recv(1)  # no answer while frozen, and the connection stays open
    assert volatile.cut("drop") == {"unflushed_blocks": 1, "persisted": 0}
    assert client.socket.recv(1) == b""  # closed once the power is gone
    assert image.read_bytes()[:2 * nbd.BLOCK] == b"F" * nbd.BLOCK + b"\0" * nbd.BLOCK
