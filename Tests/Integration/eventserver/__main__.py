"""`python -m eventserver --port 0 [--tls-dir DIR] [--store FILE --roster-file FILE]`: runs until
SIGTERM/SIGINT. With --store it is the reference server (eventserver/reference.py): events kept
in SQLite, the roster served from an editable file, one line per event and heartbeat."""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from .reference import ReferenceServer
from .server import EventServer


def main() -> int:
    parser = argparse.ArgumentParser(prog="eventserver", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--tls-dir", help="serve HTTPS with a self-signed CA made in this directory (ca.pem)")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--store", help="keep events in this SQLite file (the reference server)")
    parser.add_argument("--roster-file", help="serve this JSON file as every gateway's roster (re-read when it changes)")
    args = parser.parse_args()
    if args.store:
        server = ReferenceServer(args.store, args.roster_file, host=args.host, port=args.port, tls_dir=args.tls_dir)
    else:
        server = EventServer(host=args.host, port=args.port, tls_dir=args.tls_dir)
    server.start()
    extra = f" ca={server.ca_file}" if server.ca_file else ""
    print(f"READY {server.url}{extra}", flush=True)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    done.wait()
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
