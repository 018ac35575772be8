"""python -m bgworld --scenario NAME [--port 0] [--control-port 0] [--seed N] [--time-scale X]

Prints one line when ready, then runs until killed (SIGTERM/SIGINT):
    READY hci=127.0.0.1:PORT control=127.0.0.1:PORT
and, for a scenario with gateways (a rooms world), one more field per gateway:
    READY hci=127.0.0.1:PORT control=127.0.0.1:PORT gateway.door-a=127.0.0.1:PORT …
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys

from . import scenarios
from .control import ControlServer
from .server import HciServers
from .world import World


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bgworld", description="virtual BLE world over H4/TCP")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--scenario", default="three-tags", help=f"built-in: {', '.join(sorted(scenarios.BUILTIN))}")
    source.add_argument("--scenario-file", help="scenario as JSON (see bgworld/scenarios.py)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="H4/TCP port (0: any free)")
    parser.add_argument("--control-port", type=int, default=0, help="control channel port (0: any free)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--time-scale", type=float, default=1.0, help="scenario scripts run X times faster")
    parser.add_argument("--noise", type=int, default=None, help="override the number of random noise devices")
    parser.add_argument("--extended", action="store_true", help="offer the LE extended advertising/scanning commands")
    parser.add_argument("--supervision-timeout", type=float, default=None, metavar="S",
                        help="link-loss timeout in seconds for every connection (default: each connection's own)")
    parser.add_argument("--log-level", default="WARNING")
    return parser.parse_args(argv)


async def serve(args: argparse.Namespace) -> None:
    scenario = scenarios.expand(scenarios.load(args.scenario, args.scenario_file), args.seed, args.noise)
    world = World(scenario, seed=args.seed, time_scale=args.time_scale,
                  supervision_timeout_s=args.supervision_timeout)
    hci_server = HciServers.for_world(world, args.host, args.port, extended=args.extended)
    control = ControlServer(world, hci_server, args.host, args.control_port)
    await hci_server.start()
    await control.start()
    world.start()

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    # A rooms world adds `gateway.ID=HOST:PORT` per gateway (the first is also hci=).
    fields = " ".join([f"hci={args.host}:{hci_server.port}", f"control={args.host}:{control.port}",
                       *hci_server.ready_fields()])
    print(f"READY {fields}", flush=True)
    await stop.wait()
    world.stop()
    await control.close()
    await hci_server.close()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        asyncio.run(serve(args))
    except ValueError as error:
        print(f"bgworld: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
