"""A disk with a volatile write cache, served over NBD: what the power-cut test gives the
rig's guest as its virtio-blk disk (QEMU is the NBD client).

Writes land in a cache of 4 KiB blocks; NBD_CMD_FLUSH moves the cache to the durable
image, a write with NBD_CMD_FLAG_FUA goes to the image at once. `cut()` is the power cut:
the connection is dead from then on and the cache is dropped (mode "drop"), or a random
subset of its blocks reaches the image first, as a real disk may have written some of
them, in any order (mode "subset"). Most moments find the cache empty (a commit's writes
are flushed within milliseconds), so `arm()` lets the caller cut at the next moment it is
not: the first write after `arm()` that leaves blocks unflushed gets no answer (the disk
is frozen from then on, `frozen` is set) until the cut. A block is written whole or not at all: the test
assumes 4 KiB atomic writes (ext4's block size), not torn sectors.

Protocol: newstyle fixed handshake, NBD_OPT_GO / NBD_OPT_EXPORT_NAME (any export name),
simple replies only; commands READ, WRITE, FLUSH, DISC; the export advertises SEND_FLUSH
and SEND_FUA and nothing else (no TRIM, no WRITE_ZEROES: QEMU then writes zeroes itself).
"""

from __future__ import annotations

import os
import random
import socket
import struct
import threading

BLOCK = 4096

NBDMAGIC = 0x4E42444D41474943
IHAVEOPT = 0x49484156454F5054
OPTION_REPLY_MAGIC = 0x3E889045565A9
REQUEST_MAGIC = 0x25609513
SIMPLE_REPLY_MAGIC = 0x67446698

FLAG_FIXED_NEWSTYLE, FLAG_NO_ZEROES = 1, 2
OPT_EXPORT_NAME, OPT_ABORT, OPT_GO = 1, 2, 7
REP_ACK, REP_INFO = 1, 3
REP_ERR_UNSUP = (1 << 31) + 1
INFO_EXPORT, INFO_BLOCK_SIZE = 0, 3
TRANSMISSION_FLAGS = (1 << 0) | (1 << 2) | (1 << 3)  # HAS_FLAGS, SEND_FLUSH, SEND_FUA
CMD_READ, CMD_WRITE, CMD_DISC, CMD_FLUSH = 0, 1, 2, 3
CMD_FLAG_FUA = 1
EINVAL, ENOTSUP = 22, 95


def _read_exactly(connection: socket.socket, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = connection.recv(size - len(data))
        if not chunk:
            raise ConnectionError("peer closed")
        data += chunk
    return bytes(data)


class VolatileDisk:
    """The durable image (a host file) plus the cache of unflushed blocks."""

    def __init__(self, image: str, rng: random.Random) -> None:
        self.fd = os.open(image, os.O_RDWR)
        self.size = os.fstat(self.fd).st_size
        if self.size % BLOCK:
            raise ValueError(f"{image}: size {self.size} is not a multiple of {BLOCK}")
        self.rng = rng
        self.cache: dict[int, bytes] = {}
        self.lock = threading.Lock()
        self.cut_done = threading.Condition(self.lock)
        self.generation = 0  # bumped by cut(): requests of an older connection are refused
        self.armed = False
        self.frozen = threading.Event()
        self.stats = {"writes": 0, "flushes": 0, "fua_writes": 0, "cuts": 0,
                      "cut_blocks_dropped": 0, "cut_blocks_persisted": 0}

    def _block(self, index: int) -> bytes:
        cached = self.cache.get(index)
        if cached is not None:
            return cached
        return os.pread(self.fd, BLOCK, index * BLOCK).ljust(BLOCK, b"\0")

    def read(self, offset: int, length: int) -> bytes:
        first, last = offset // BLOCK, (offset + length - 1) // BLOCK
        data = b"".join(self._block(index) for index in range(first, last + 1))
        start = offset - first * BLOCK
        return data[start:start + length]

    def write(self, offset: int, data: bytes, fua: bool) -> None:
        first, last = offset // BLOCK, (offset + len(data) - 1) // BLOCK
        for index in range(first, last + 1):
            block_start = index * BLOCK
            lo, hi = max(offset, block_start), min(offset + len(data), block_start + BLOCK)
            if lo == block_start and hi == block_start + BLOCK:
                block = data[lo - offset:hi - offset]
            else:
                merged = bytearray(self._block(index))
                merged[lo - block_start:hi - block_start] = data[lo - offset:hi - offset]
                block = bytes(merged)
            if fua:
                # Forced unit access: this block is on the medium when the reply goes out.
                os.pwrite(self.fd, block, block_start)
                self.cache.pop(index, None)
            else:
                self.cache[index] = block
        self.stats["writes"] += 1
        self.stats["fua_writes"] += fua

    def flush(self) -> None:
        for index, block in self.cache.items():
            os.pwrite(self.fd, block, index * BLOCK)
        self.cache.clear()
        self.stats["flushes"] += 1

    def arm(self) -> None:
        """Freeze at the next write that leaves unflushed blocks (see `frozen`)."""
        with self.lock:
            self.armed = True

    def cut(self, mode: str) -> dict:
        """The power cut. Call it once the client is dead (no request is in flight)."""
        with self.lock:
            self.generation += 1
            self.armed = False
            self.frozen.clear()
            blocks = list(self.cache)
            persisted = []
            if mode == "subset":
                persisted = [index for index in blocks if self.rng.random() < 0.5]
                self.rng.shuffle(persisted)  # the order is irrelevant to the image, but say so
                for index in persisted:
                    os.pwrite(self.fd, self.cache[index], index * BLOCK)
            elif mode != "drop":
                raise ValueError(f"unknown cut mode {mode}")
            self.cache.clear()
            self.stats["cuts"] += 1
            self.stats["cut_blocks_persisted"] += len(persisted)
            self.stats["cut_blocks_dropped"] += len(blocks) - len(persisted)
            self.cut_done.notify_all()
            return {"unflushed_blocks": len(blocks), "persisted": len(persisted)}


class VolatileDiskServer:
    """An NBD server for one VolatileDisk; one client at a time (one QEMU per boot)."""

    def __init__(self, disk: VolatileDisk, host: str = "127.0.0.1", port: int = 0) -> None:
        self.disk = disk
        self.listener = socket.create_server((host, port))
        self.port = self.listener.getsockname()[1]
        self.errors: list[str] = []
        self._stopping = False
        self._thread = threading.Thread(target=self._serve, name="nbd", daemon=True)

    def start(self) -> "VolatileDiskServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping = True
        self.listener.close()

    def _serve(self) -> None:
        while not self._stopping:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            with connection:
                connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                try:
                    self._handle(connection)
                except (ConnectionError, OSError):
                    pass  # the client went away: QEMU killed (the cut) or powered off
                except Exception as error:  # noqa: BLE001 - kept for the report
                    self.errors.append(repr(error))

    def _handle(self, connection: socket.socket) -> None:
        with self.disk.lock:
            generation = self.disk.generation
        connection.sendall(struct.pack(">QQH", NBDMAGIC, IHAVEOPT, FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES))
        (client_flags,) = struct.unpack(">I", _read_exactly(connection, 4))
        if not client_flags & FLAG_FIXED_NEWSTYLE:
            raise ConnectionError("client does not speak the fixed newstyle handshake")
        if not self._negotiate(connection, no_zeroes=bool(client_flags & FLAG_NO_ZEROES)):
            return
        self._transmit(connection, generation)

    def _option_reply(self, connection: socket.socket, option: int, reply: int, data: bytes = b"") -> None:
        connection.sendall(struct.pack(">QIII", OPTION_REPLY_MAGIC, option, reply, len(data)) + data)

    def _negotiate(self, connection: socket.socket, no_zeroes: bool) -> bool:
        while True:
            magic, option, length = struct.unpack(">QII", _read_exactly(connection, 16))
            if magic != IHAVEOPT:
                raise ConnectionError(f"bad option magic {magic:#x}")
            _read_exactly(connection, length)  # the export name and info requests: one export
            if option == OPT_EXPORT_NAME:
                reply = struct.pack(">QH", self.disk.size, TRANSMISSION_FLAGS)
                connection.sendall(reply + (b"" if no_zeroes else b"\0" * 124))
                return True
            if option == OPT_GO:
                self._option_reply(connection, option, REP_INFO,
                                   struct.pack(">HQH", INFO_EXPORT, self.disk.size, TRANSMISSION_FLAGS))
                self._option_reply(connection, option, REP_INFO,
                                   struct.pack(">HIII", INFO_BLOCK_SIZE, 1, BLOCK, 32 * 1024 * 1024))
                self._option_reply(connection, option, REP_ACK)
                return True
            if option == OPT_ABORT:
                self._option_reply(connection, option, REP_ACK)
                return False
            # STRUCTURED_REPLY, SET_META_CONTEXT, EXTENDED_HEADERS, LIST, ...: not offered.
            self._option_reply(connection, option, REP_ERR_UNSUP)

    def _transmit(self, connection: socket.socket, generation: int) -> None:
        while True:
            magic, flags, command, handle, offset, length = struct.unpack(">IHHQQI", _read_exactly(connection, 28))
            if magic != REQUEST_MAGIC:
                raise ConnectionError(f"bad request magic {magic:#x}")
            payload = _read_exactly(connection, length) if command == CMD_WRITE else b""
            if command == CMD_DISC:
                return
            error, data, frozen = 0, b"", False
            with self.disk.lock:
                if self.disk.generation != generation:
                    return  # cut: whatever this dead client still had in the socket is void
                if offset + length > self.disk.size and command in (CMD_READ, CMD_WRITE):
                    error = EINVAL
                elif command == CMD_READ:
                    data = self.disk.read(offset, length) if length else b""
                elif command == CMD_WRITE:
                    if length:
                        self.disk.write(offset, payload, fua=bool(flags & CMD_FLAG_FUA))
                    if self.disk.armed and self.disk.cache:
                        self.disk.frozen.set()
                        frozen = True
                elif command == CMD_FLUSH:
                    self.disk.flush()
                else:
                    error = ENOTSUP
            if frozen:
                # No answer and nothing more taken, the connection held open (a closed one
                # would show the guest I/O errors) until the power is gone.
                with self.disk.lock:
                    while self.disk.generation == generation:
                        self.disk.cut_done.wait()
                return
            connection.sendall(struct.pack(">IIQ", SIMPLE_REPLY_MAGIC, error, handle) + (data if not error else b""))
