"""`python -m eventserver.fast --port 0`: a lean asyncio HTTP/1.1 server for the
benchmark. Same contract as the event server's happy path (store by Idempotency-Key,
201 first, 200 duplicate, keep-alive) without the fault machinery, so that the server is
not what the benchmark measures. `GET /_count` answers {"stored": n, "requests": m}."""

from __future__ import annotations

import argparse
import asyncio
import json
import signal

CREATED = b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
DUPLICATE = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
BAD = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


class Store:
    def __init__(self) -> None:
        self.keys: set[bytes] = set()
        self.requests = 0


async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, store: Store) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.split(b"\r\n")
            method = lines[0].split(b" ", 1)[0]
            length, key = 0, b""
            for line in lines[1:]:
                name, _, value = line.partition(b":")
                lowered = name.strip().lower()
                if lowered == b"content-length":
                    length = int(value.strip() or b"0")
                elif lowered == b"idempotency-key":
                    key = value.strip()
            if length < 0 or length > 65536:
                writer.write(BAD)
                break
            if length:
                await reader.readexactly(length)
            if method == b"GET":
                payload = json.dumps({"stored": len(store.keys), "requests": store.requests}).encode()
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                             + str(len(payload)).encode() + b"\r\n\r\n" + payload)
            elif not key:
                writer.write(BAD)
                break
            else:
                store.requests += 1
                if key in store.keys:
                    writer.write(DUPLICATE)
                else:
                    store.keys.add(key)
                    writer.write(CREATED)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError, ValueError, asyncio.LimitOverrunError):
        pass
    finally:
        writer.close()


async def main(port: int) -> None:
    store = Store()
    server = await asyncio.start_server(lambda r, w: serve(r, w, store), "127.0.0.1", port)
    actual = server.sockets[0].getsockname()[1]
    print(f"READY http://127.0.0.1:{actual}", flush=True)
    done = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, done.set)
    async with server:
        await done.wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    asyncio.run(main(parser.parse_args().port))
