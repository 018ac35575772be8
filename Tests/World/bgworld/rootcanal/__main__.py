"""python -m bgworld.rootcanal --scenario NAME | --scenario-file PATH [--seed N] [--time-scale X]

The scenario's tags on Google RootCanal 1.13.0 instead of Bumble's controller: RootCanal
is the faithful model of accept-list initiation, cancel, 0x0C rules and link loss. Each
tag is a raw H4 host of its own RootCanal controller (taghost.py) advertising its data
and answering ATT through the same TagPeer as in the Bumble world; the gateway reaches
its own RootCanal controller through an H4 proxy (proxy.py) that rewrites RSSI from the
path-loss model and counts commands. Tags out of range are taken off RootCanal's LE phy
(no advertising; a link is lost with 0x08 after RootCanal's fixed 3 s).

Prints, when ready, and then runs until SIGTERM/SIGINT:
    READY hci=127.0.0.1:PORT control=127.0.0.1:PORT rootcanal-test=PORT
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import pathlib
import signal
import sys

from .. import scenarios
from ..world import World
from .control import RootCanalControl
from .process import LE_PHY, RootCanal, RootCanalError, TestChannel, prepare
from .proxy import GatewayProxy
from .taghost import TagHost

WATCH_PERIOD_S = 0.05
DEVICE_WAIT_S = 10.0


class Runner:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        scenario = scenarios.expand(scenarios.load(args.scenario, args.scenario_file), args.seed, args.noise)
        self.world = World(scenario, seed=args.seed, time_scale=args.time_scale)  # tags, paths, radio; not started
        if self.world.rooms is not None:
            raise ValueError("gateways at positions (a rooms world) are the Bumble world's only")
        self.rootcanal = RootCanal(prepare(pathlib.Path(args.rootcanal_dir) if args.rootcanal_dir else None), args.host)
        self.proxy = GatewayProxy(self.world, self.rootcanal.hci_port, args.host, args.port)
        self.control = RootCanalControl(self, args.host, args.control_port)
        self.channel: TestChannel | None = None
        self.tag_hosts: dict[str, TagHost] = {}
        self._forced_off: set[str] = set()
        self._watch: asyncio.Task | None = None

    async def start(self) -> None:
        await self.rootcanal.start()
        self.channel = await TestChannel.connect(self.args.host, self.rootcanal.ports["test"])
        # RootCanal applies test-channel commands and new HCI clients on its own thread,
        # after replying: the device list is polled until it shows the change.
        for device_id in sorted(await self.channel.device_ids(), reverse=True):
            await self.channel.call("del", str(device_id))  # RootCanal's two built-in beacons
        await self._devices_until(lambda ids: not ids, "the built-in beacons to go")
        for tag in self.world.tags.values():
            known = set(await self.channel.device_ids())
            tag_host = await TagHost.attach(self.args.host, self.rootcanal.hci_port, tag)
            ids = await self._devices_until(lambda ids: len(set(ids) - known) == 1, f"tag {tag.id}'s controller")
            new = sorted(set(ids) - known)
            tag_host.device_id = new[0]
            tag_host.on_phy = True
            self.tag_hosts[tag.id] = tag_host
        await self.proxy.start()
        await self.control.start()
        self.world._t0_loop = self.world.loop.time()
        await self._apply()
        self._watch = asyncio.ensure_future(self._watch_loop())

    async def _devices_until(self, predicate, what: str) -> list[int]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + DEVICE_WAIT_S
        while not predicate(ids := await self.channel.device_ids()):
            if loop.time() > deadline:
                raise RootCanalError(f"RootCanal: timed out waiting for {what} (devices {ids})")
            await asyncio.sleep(WATCH_PERIOD_S / 5)
        return ids

    def cut(self, tag) -> bool:
        tag_host = self.tag_hosts[tag.id]
        if tag_host.handle is None:
            return False
        self._forced_off.add(tag.id)
        return True

    async def _watch_loop(self) -> None:
        while True:
            await asyncio.sleep(WATCH_PERIOD_S)
            try:
                await self._apply()
            except (RootCanalError, asyncio.TimeoutError, RuntimeError) as error:
                logging.getLogger(__name__).warning("watch: %s", error)

    async def _apply(self) -> None:
        now = self.world.scenario_time()
        for tag_id, tag_host in self.tag_hosts.items():
            tag = tag_host.tag
            if tag_id in self._forced_off and tag_host.handle is None and tag_host.on_phy is False:
                self._forced_off.discard(tag_id)  # the link is gone: the tag may come back
            on_phy = self.world.in_range(tag) and tag_id not in self._forced_off
            if on_phy != tag_host.on_phy:
                command = "add_device_to_phy" if on_phy else "del_device_from_phy"
                await self.channel.call(command, str(tag_host.device_id), LE_PHY)
                tag_host.on_phy = on_phy
            wanted = not self.world.muted and (tag.advertising_override if tag.advertising_override is not None
                                               else now >= tag.advertise_after)
            if wanted != tag_host.wanted:
                await tag_host.set_advertising(wanted)

    async def close(self) -> None:
        if self._watch is not None:
            self._watch.cancel()
        await self.control.close()
        await self.proxy.close()
        for tag_host in self.tag_hosts.values():
            await tag_host.close()
        if self.channel is not None:
            self.channel.close()
        self.rootcanal.stop()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bgworld.rootcanal", description="the bgworld tags on RootCanal")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--scenario", default="three-tags", help=f"built-in: {', '.join(sorted(scenarios.BUILTIN))}")
    source.add_argument("--scenario-file", help="scenario as JSON (see bgworld/scenarios.py)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="H4/TCP port of the gateway's controller (0: any free)")
    parser.add_argument("--control-port", type=int, default=0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--time-scale", type=float, default=1.0)
    parser.add_argument("--noise", type=int, default=None)
    parser.add_argument("--rootcanal-dir", default=None, help="where scripts/rootcanal prepared the libraries")
    parser.add_argument("--log-level", default="WARNING")
    return parser.parse_args(argv)


async def serve(args: argparse.Namespace) -> None:
    runner = Runner(args)
    try:
        await runner.start()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        print(f"READY hci={args.host}:{runner.proxy.port} control={args.host}:{runner.control.port} "
              f"rootcanal-test={runner.rootcanal.ports['test']}", flush=True)
        await stop.wait()
    finally:
        await runner.close()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        asyncio.run(serve(args))
    except (ValueError, RootCanalError) as error:
        print(f"bgworld.rootcanal: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
