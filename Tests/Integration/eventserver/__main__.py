"""`python -m eventserver --port 0 [--tls-dir DIR]`: runs until SIGTERM/SIGINT."""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from .server import EventServer


def main() -> int:
    parser = argparse.ArgumentParser(prog="eventserver", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--tls-dir", help="serve HTTPS with a self-signed CA made in this directory (ca.pem)")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args()
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
