"""A real HTTP(S) server implementing the server side of docs/event-api.md, with scripted faults.

Used by the integration tests, scripts/crash-test and scripts/bench-outbox:

    python -m eventserver --port 0 [--tls-dir DIR]     # prints "READY http://127.0.0.1:PORT"

or in-process: ``EventServer(tls_dir=None).start()``.
"""

from .server import EventServer, make_tls_files

__all__ = ["EventServer", "make_tls_files"]
