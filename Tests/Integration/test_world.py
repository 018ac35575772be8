"""Self-tests of the virtual world (no Swift binary needed)."""

from __future__ import annotations

import asyncio
import random
import statistics
import struct
import time

import pytest

from bgworld import hcibytes, hostclient
from bgworld.h4 import H4FramingError, H4Parser
from bgworld.hostclient import HostClient
from bgworld.radio import RadioModel
from bgworld.scenarios import DEMO_UUID, THREE_TAGS
from bgworld.tags import Trajectory
from conftest import wait_until

ADDRESS = {tag["id"]: tag["address"] for tag in THREE_TAGS["tags"]}
INTERVAL_S = {tag["id"]: tag["interval_ms"] / 1000 for tag in THREE_TAGS["tags"]}


def by_tag(reports):
    result = {tag_id: [] for tag_id in ADDRESS}
    for report in reports:
        for tag_id, address in ADDRESS.items():
            if report.address == address:
                result[tag_id].append(report)
    return result


def run(coroutine):
    return asyncio.run(coroutine)


async def scan(world, predicate, timeout=20.0, active=False):
    client = await HostClient.connect(world.hci_host, world.hci_port)
    try:
        await client.start_scanning(active=active)
        await client.wait_for_reports(predicate, timeout)
        return client.reports
    finally:
        await client.close()


# -- pure parts -------------------------------------------------------------------


def test_path_loss_model_without_noise_is_the_formula():
    model = RadioModel(sigma_db=0.0)
    rng = random.Random(1)
    assert model.sample(1.0, rng) == -59
    assert model.sample(10.0, rng) == -79
    assert model.sample(3.0, rng) == round(-59 - 20 * 0.47712125472)
    assert model.sample(31.0, rng) is None  # beyond max range
    assert RadioModel(sigma_db=0.0, path_loss_exponent=4.0).sample(20.0, rng) is None  # below -100 dBm
    assert model.sample(0.0, rng) == -39  # clamped to the minimum distance 0.1 m


def test_trajectory_interpolates_holds_and_loops():
    path = Trajectory([(0, 10), (10, 0), (20, 0), (30, None), (40, None)], loop=True)
    assert path.distance_at(5) == pytest.approx(5)
    assert path.distance_at(15) == 0
    assert path.distance_at(35) == float("inf")
    assert path.distance_at(25) == 0  # leaving to "away" steps at the far waypoint
    assert path.distance_at(47) == pytest.approx(3)  # looped with period 40: t = 7
    assert Trajectory([(5, 3)]).distance_at(0) == 3


def test_h4_parser_same_packets_whole_chunked_and_bytewise():
    rng = random.Random(3)
    packets = [
        hcibytes.command(0x0C03),
        hcibytes.command(0x200B, bytes(7)),
        bytes((hcibytes.H4_ACL, 0x01, 0x20, 0x05, 0x00)) + b"hello",
        hcibytes.legacy_reports_event([hcibytes.legacy_report(3, 1, bytes(6), bytes(30), -60)]),
    ]
    stream = b"".join(packets)
    whole = H4Parser().feed(stream)
    bytewise_parser, bytewise = H4Parser(), []
    for i in range(len(stream)):
        bytewise += bytewise_parser.feed(stream[i : i + 1])
    chunked_parser, chunked, i = H4Parser(), [], 0
    while i < len(stream):
        n = rng.randrange(1, 9)
        chunked += chunked_parser.feed(stream[i : i + n])
        i += n
    assert whole == bytewise == chunked == packets
    with pytest.raises(H4FramingError):
        H4Parser().feed(b"\x09\x00")


# -- the world over TCP -----------------------------------------------------------


def test_reports_arrive_at_each_tags_interval(three_tags):
    reports = run(scan(three_tags, lambda r: min(len(v) for v in by_tag(r).values()) >= 10))
    for tag_id, tag_reports in by_tag(reports).items():
        times = [r.time for r in tag_reports]
        rate = (len(times) - 1) / (times[-1] - times[0])
        expected = 1 / INTERVAL_S[tag_id]
        assert abs(rate - expected) / expected < 0.20, f"{tag_id}: {rate:.2f}/s, expected {expected:.2f}/s"


def test_rssi_medians_ordered_by_distance(three_tags):
    reports = run(scan(three_tags, lambda r: min(len(v) for v in by_tag(r).values()) >= 15))
    medians = {tag_id: statistics.median(r.rssi for r in v) for tag_id, v in by_tag(reports).items()}
    assert medians["tag-1m"] > medians["tag-3m"] > medians["tag-8m"], medians
    # The model's means: -59, -68.5, -77 dBm (σ = 2 dB, ≥ 15 samples).
    assert medians["tag-1m"] == pytest.approx(-59, abs=3)
    assert medians["tag-8m"] == pytest.approx(-77, abs=3)
    assert all(-127 <= r.rssi <= 20 for r in reports)


def test_passive_scan_gives_one_report_per_pdu(three_tags):
    async def body():
        # The tags advertise from the world's start, before the client scans: muted while
        # the scan starts, so every PDU counted from the unmute on finds it scanning.
        three_tags.control("mute")
        client = await HostClient.connect(three_tags.hci_host, three_tags.hci_port)
        await client.start_scanning(active=False)
        before = three_tags.status()["tags"]
        three_tags.control("unmute")
        await client.wait_for_reports(lambda r: len(by_tag(r)["tag-8m"]) >= 4, 10)
        three_tags.control("mute")
        # A PDU emitted just before the mute may still be on its way to the controller (the
        # link hands it over on a later turn of the world's loop): wait until the world has
        # reported every PDU it emitted since the unmute (all three tags are well in range),
        # then until the client has read all of them. A PDU the world lost never settles:
        # the wait fails.
        def emitted(status, t):
            return status["tags"][t]["pdus"] - before[t]["pdus"]

        def reported(status, t):
            return status["tags"][t]["reports"] - before[t]["reports"]

        deadline = time.monotonic() + 5
        while True:
            status = three_tags.status()
            if all(reported(status, t) == emitted(status, t) for t in ADDRESS):
                break
            assert time.monotonic() < deadline, f"PDUs emitted but never reported: {status['tags']}, before {before}"
            await asyncio.sleep(0.02)
        expected = {t: status["tags"][t]["reports"] for t in ADDRESS}
        await client.wait_for_reports(lambda r: {t: len(v) for t, v in by_tag(r).items()} == expected, 5)
        await client.close()
        return client.reports, status, before

    reports, status, before = run(body())
    for tag_id, tag_reports in by_tag(reports).items():
        assert {r.event_type for r in tag_reports} == {hcibytes.ADV_NONCONN_IND}
        assert len(tag_reports) == status["tags"][tag_id]["reports"], tag_id
        assert status["tags"][tag_id]["pdus"] - before[tag_id]["pdus"] >= 4, tag_id


def test_active_scan_adds_scan_response_only_for_scannable_advertisers(world_factory):
    world = world_factory({
        "name": "active",
        "tags": [
            {"id": "beacon", "kind": "ibeacon", "uuid": DEMO_UUID, "major": 1, "minor": 1,
             "address": "C0:00:00:00:00:01", "interval_ms": 100, "distance": 1},
            {"id": "badge", "kind": "named", "name": "Badge", "address": "00:1B:DC:00:00:02",
             "address_type": "public", "interval_ms": 100, "distance": 1, "scan_response_name": "Badge full"},
        ],
    })
    reports = run(scan(world, lambda r: sum(x.event_type == hcibytes.SCAN_RSP for x in r) >= 10, active=True))
    beacon = [r for r in reports if r.address == "C0:00:00:00:00:01"]
    badge = [r for r in reports if r.address == "00:1B:DC:00:00:02"]
    assert beacon and {r.event_type for r in beacon} == {hcibytes.ADV_NONCONN_IND}
    assert {r.address_type for r in badge} == {0}
    adv = [r for r in badge if r.event_type == hcibytes.ADV_IND]
    rsp = [r for r in badge if r.event_type == hcibytes.SCAN_RSP]
    assert len(adv) - len(rsp) in (0, 1)  # each ADV_IND followed by its SCAN_RSP
    assert rsp[0].data.endswith(b"Badge full")


def test_unknown_and_malformed_commands_are_answered(three_tags):
    async def body():
        client = await HostClient.connect(three_tags.hci_host, three_tags.hci_port)
        unknown = await client.command(0xFC55, b"\x01\x02")  # vendor opcode nobody handles
        inquiry = await client.command(0x0401, bytes((0x33, 0x8B, 0x9E, 0x08, 0x00)))  # no Bumble handler
        ext_scan = await client.command(0x2042, bytes(6))  # extended family: not offered by default
        malformed = await client.command(hostclient.OP_LE_SET_SCAN_PARAMETERS, b"\x01")
        version = await client.command(hostclient.OP_READ_LOCAL_VERSION)
        states = await client.command(hostclient.OP_LE_READ_SUPPORTED_STATES)
        await client.close()
        return unknown, inquiry, ext_scan, malformed, version, states

    unknown, inquiry, ext_scan, malformed, version, states = run(body())
    assert (unknown.event_code, unknown.status) == (hcibytes.EVT_COMMAND_COMPLETE, hcibytes.STATUS_UNKNOWN_HCI_COMMAND)
    assert (inquiry.event_code, inquiry.status) == (hcibytes.EVT_COMMAND_STATUS, hcibytes.STATUS_UNKNOWN_HCI_COMMAND)
    assert ext_scan.status == hcibytes.STATUS_UNKNOWN_HCI_COMMAND
    assert malformed.status != hcibytes.STATUS_SUCCESS
    assert version.status == hcibytes.STATUS_SUCCESS
    assert states.status == hcibytes.STATUS_SUCCESS and len(states.return_parameters) == 9


def test_reports_need_the_le_meta_event_mask_and_stop_after_reset(three_tags):
    async def body():
        client = await HostClient.connect(three_tags.hci_host, three_tags.hci_port)
        # Scan without setting the event masks: LE Meta is off after reset.
        await client.command(hostclient.OP_RESET)
        await client.command(hostclient.OP_LE_SET_SCAN_ENABLE, bytes((1, 0)))
        before = three_tags.status()["sessions"][-1]["reports"]
        await client.start_scanning()
        await client.wait_for_reports(lambda r: len(r) >= 5, 10)
        await client.command(hostclient.OP_RESET)
        after_reset = three_tags.status()["sessions"][-1]["reports"]
        # Let the 100 ms tag advertise ~10 more times; nothing may reach this session.
        probe = await HostClient.connect(three_tags.hci_host, three_tags.hci_port)
        await probe.start_scanning()
        await probe.wait_for_reports(lambda r: len(by_tag(r)["tag-1m"]) >= 10, 10)
        final = three_tags.status()["sessions"][0]["reports"]
        await probe.close()
        await client.close()
        return before, after_reset, final

    before, after_reset, final = run(body())
    assert before == 0
    assert after_reset == final


def test_stop_controller_drops_client_refuses_then_accepts(three_tags):
    async def body():
        client = await HostClient.connect(three_tags.hci_host, three_tags.hci_port)
        await client.start_scanning()
        reply = three_tags.control("stop-controller 2")
        assert reply.startswith("OK")
        await asyncio.wait_for(client.closed.wait(), 5)
        with pytest.raises(OSError):
            await HostClient.connect(three_tags.hci_host, three_tags.hci_port)
        assert three_tags.status()["accepting"] is False
        # Reconnect as a host would: retry until the controller is back (bounded).
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 10
        while True:
            try:
                again = await HostClient.connect(three_tags.hci_host, three_tags.hci_port)
                break
            except OSError:
                if loop.time() > deadline:
                    raise
                await asyncio.sleep(0.1)
        await again.start_scanning()
        await again.wait_for_reports(lambda r: len(r) >= 3, 5)
        await again.close()

    run(body())
    sessions = three_tags.status()["sessions"]
    assert sessions[0]["closeReason"] == "controller stopped"


def test_half_packet_from_a_dead_host_does_not_corrupt_the_next_session(three_tags):
    async def body():
        reader, writer = await asyncio.open_connection(three_tags.hci_host, three_tags.hci_port)
        writer.write(hcibytes.command(hostclient.OP_LE_SET_SCAN_PARAMETERS, bytes(7))[:5])
        await writer.drain()
        writer.transport.abort()
        client = await HostClient.connect(three_tags.hci_host, three_tags.hci_port)
        answer = await client.command(hostclient.OP_RESET)
        await client.close()
        return answer

    assert run(body()).status == hcibytes.STATUS_SUCCESS


def test_hardware_error_reaches_the_host(three_tags):
    async def body():
        client = await HostClient.connect(three_tags.hci_host, three_tags.hci_port)
        await client.command(hostclient.OP_RESET)
        assert three_tags.control("hardware-error 0x42").startswith("OK hardware error 0x42 sent to 1")
        await client.wait_for_events(lambda events: any(e[1] == hcibytes.EVT_HARDWARE_ERROR for e in events), 5)
        await client.close()
        return [e for e in client.events if e[1] == hcibytes.EVT_HARDWARE_ERROR]

    assert run(body()) == [bytes((hcibytes.H4_EVENT, hcibytes.EVT_HARDWARE_ERROR, 1, 0x42))]


def test_set_distance_off_stops_a_tags_reports(three_tags):
    async def body():
        client = await HostClient.connect(three_tags.hci_host, three_tags.hci_port)
        await client.start_scanning()
        await client.wait_for_reports(lambda r: len(by_tag(r)["tag-1m"]) >= 3, 10)
        three_tags.control("set-distance tag-1m off")
        cut = len(client.reports)
        await client.wait_for_reports(lambda r: len(by_tag(r[cut:])["tag-3m"]) >= 10, 10)
        late = by_tag(client.reports[cut:])["tag-1m"]
        three_tags.control("set-distance tag-1m 20")
        cut2 = len(client.reports)
        await client.wait_for_reports(lambda r: len(by_tag(r[cut2:])["tag-1m"]) >= 10, 10)
        far = by_tag(client.reports[cut2:])["tag-1m"]
        await client.close()
        return late, far

    late, far = run(body())
    assert len(late) <= 1  # at most one PDU in flight when the command arrived
    assert statistics.median(r.rssi for r in far) == pytest.approx(-59 - 20 * 1.30103, abs=3)


def test_two_gateways_at_once_each_get_all_reports(three_tags):
    async def body():
        a = await HostClient.connect(three_tags.hci_host, three_tags.hci_port)
        b = await HostClient.connect(three_tags.hci_host, three_tags.hci_port)
        await a.start_scanning()
        await b.start_scanning()
        for client in (a, b):
            await client.wait_for_reports(lambda r: len(by_tag(r)["tag-8m"]) >= 3, 10)
        status = three_tags.status()
        await a.close()
        await b.close()
        return status

    status = run(body())
    assert status["clients"] == 2


@pytest.mark.parametrize("extended", [False, True], ids=["legacy", "extended"])
def test_a_bumble_host_brings_up_and_scans(world_factory, extended):
    from bumble.device import Device
    from bumble.hci import Address
    from bumble.transport import open_transport

    three_tags = world_factory("three-tags", extra=["--extended"] if extended else [])

    async def body():
        seen: dict[str, int] = {}
        async with await open_transport(f"tcp-client:{three_tags.hci_host}:{three_tags.hci_port}") as transport:
            device = Device.with_hci("host", Address("F0:F1:F2:F3:F4:F5"), transport.source, transport.sink)
            everything = asyncio.Event()

            def on_advertisement(advertisement):
                key = str(advertisement.address).split("/")[0]
                seen[key] = seen.get(key, 0) + 1
                if all(seen.get(a, 0) >= 2 for a in ADDRESS.values()):
                    everything.set()

            device.on("advertisement", on_advertisement)
            await asyncio.wait_for(device.power_on(), 10)
            await device.start_scanning(active=False, filter_duplicates=False)
            await asyncio.wait_for(everything.wait(), 10)
            session = three_tags.status()["sessions"][-1]
            await device.stop_scanning()
        return seen, session

    seen, session = run(body())
    assert session["scanFamily"] == ("extended" if extended else "legacy")
    assert set(ADDRESS.values()) <= set(seen)


def test_features_and_supported_commands_agree_on_the_legacy_family(three_tags):
    from bumble import hci

    async def body():
        client = await HostClient.connect(three_tags.hci_host, three_tags.hci_port)
        commands = await client.command(0x1002)  # Read Local Supported Commands
        le_features = await client.command(0x2003)  # LE Read Local Supported Features
        await client.close()
        return commands, le_features

    commands, le_features = run(body())
    bitmap = int.from_bytes(commands.return_parameters[1:65], "little")

    def supported(opcode):
        return bool(bitmap & hci.HCI_SUPPORTED_COMMANDS_MASKS[opcode])

    for opcode in (hci.HCI_LE_SET_SCAN_PARAMETERS_COMMAND, hci.HCI_LE_SET_SCAN_ENABLE_COMMAND,
                   hci.HCI_LE_READ_SUPPORTED_STATES_COMMAND, hci.HCI_READ_BD_ADDR_COMMAND,
                   hci.HCI_LE_READ_FILTER_ACCEPT_LIST_SIZE_COMMAND, hci.HCI_RESET_COMMAND):
        assert supported(opcode), hci.HCI_Command.command_name(opcode)
    for opcode in (hci.HCI_LE_SET_EXTENDED_SCAN_PARAMETERS_COMMAND, hci.HCI_LE_SET_EXTENDED_SCAN_ENABLE_COMMAND,
                   hci.HCI_LE_SET_EXTENDED_ADVERTISING_PARAMETERS_COMMAND):
        assert not supported(opcode), hci.HCI_Command.command_name(opcode)
    features = int.from_bytes(le_features.return_parameters[1:9], "little")
    assert not features & hci.LeFeatureMask.LE_EXTENDED_ADVERTISING


def test_demo_script_has_arrivals_and_departures_within_the_first_minute():
    from bgworld.scenarios import DEMO
    from bgworld.tags import tag_from_dict

    rng = random.Random(1)
    tags = [tag_from_dict(spec, rng) for spec in DEMO["tags"]]
    in_range = lambda tag, t: tag.distance_at(t) <= 30  # noqa: E731
    arrivals = departures = 0
    for tag in tags:
        states = [in_range(tag, t / 2) for t in range(0, 121)]  # every 0.5 s for 60 s
        arrivals += sum(1 for a, b in zip(states, states[1:]) if not a and b)
        departures += sum(1 for a, b in zip(states, states[1:]) if a and not b)
    assert arrivals >= 2 and departures >= 1, (arrivals, departures)
    # And someone is close (< 2 m) at the door within 30 s.
    assert any(tag.distance_at(t) < 2 for tag in tags for t in range(0, 31))


@pytest.mark.parametrize("scenario", ["demo", "noise"])
def test_builtin_scenarios_serve_reports(world_factory, scenario):
    world = world_factory(scenario)
    reports = run(scan(world, lambda r: len({x.address for x in r}) >= 3, timeout=15))
    assert len({r.address for r in reports}) >= 3
    assert all(-100 <= r.rssi <= 20 for r in reports)


def test_extended_mode_reports_through_extended_events(world_factory):
    world = world_factory("three-tags", extra=["--extended"])

    async def body():
        client = await HostClient.connect(world.hci_host, world.hci_port)
        await client.command(hostclient.OP_RESET)
        await client.command(hostclient.OP_SET_EVENT_MASK, struct.pack("<Q", hostclient.ALL_EVENTS_MASK))
        await client.command(hostclient.OP_LE_SET_EVENT_MASK, struct.pack("<Q", hostclient.LE_ALL_EVENTS_MASK))
        # LE Set Extended Scan Parameters: own address public, no filter, 1M PHY, passive.
        params = await client.command(0x2041, struct.pack("<BBBBHH", 0, 0, 1, 0, 0x10, 0x10))
        enable = await client.command(0x2042, struct.pack("<BBHH", 1, 0, 0, 0))

        def extended(events=None):
            return [e for e in (events or client.events)
                    if e[1] == hcibytes.EVT_LE_META and e[3] == hcibytes.LE_EXTENDED_ADVERTISING_REPORT]

        await client.wait_for_events(lambda events: len(extended(events)) >= 10, 10)
        await client.close()
        return params, enable, extended(), [e for e in client.events if e[1] == hcibytes.EVT_LE_META and e[3] == hcibytes.LE_ADVERTISING_REPORT]

    params, enable, extended, legacy = run(body())
    assert params.status == enable.status == hcibytes.STATUS_SUCCESS
    assert not legacy
    for event in extended:
        assert event[4] == 1  # one report per event, one event per PDU
        event_type = event[5] | event[6] << 8
        assert event_type == hcibytes.EXT_LEGACY_ADV_NONCONN_IND


def test_control_channel_rejects_bad_requests_with_reasons(three_tags):
    for request, reason in (
        ("launch-rockets", "unknown command"),
        ("set-distance nobody 3", "no tag 'nobody'"),
        ("set-distance tag-1m -2", "METERS must be"),
        ("stop-controller soon", "could not convert"),
        ("hardware-error 300", "CODE must be"),
    ):
        with pytest.raises(AssertionError, match=reason):
            three_tags.control(request)
    # Still serving after all that.
    assert three_tags.status()["accepting"] is True


def test_restart_script_starts_scenario_time_again(world_factory):
    # A person arrives 1 s into the script: restarting it makes them absent again, their
    # arrival 1 s after the restart (how tests start walkers when the gateway is scanning).
    world = world_factory({"name": "restart", "tags": [
        {"id": "walker", "kind": "ibeacon", "uuid": DEMO_UUID, "major": 1, "minor": 1,
         "address": "C0:22:33:44:55:66", "interval_ms": 100, "path": [[0, None], [1, None], [1.01, 1.0]]}]})
    wait_until(lambda: world.status()["tags"]["walker"]["distance"] is not None, 10, "the walker's arrival")
    before = world.status()["scenarioTime"]
    assert world.control("restart-script").startswith("OK")
    after = world.status()
    assert after["scenarioTime"] < before and after["scenarioTime"] < 1
    assert after["tags"]["walker"]["distance"] is None


def test_duplicate_filtering_reports_each_advertiser_once(three_tags):
    async def body():
        filtered = await HostClient.connect(three_tags.hci_host, three_tags.hci_port)
        await filtered.start_scanning(filter_duplicates=True)
        probe = await HostClient.connect(three_tags.hci_host, three_tags.hci_port)
        await probe.start_scanning()
        # Wait until every tag has advertised several times since both scans began.
        await probe.wait_for_reports(lambda r: min(len(v) for v in by_tag(r).values()) >= 3, 10)
        await filtered.wait_for_reports(lambda r: len(r) >= 3, 5)
        await filtered.close()
        await probe.close()
        return filtered.reports

    counts = {tag_id: len(v) for tag_id, v in by_tag(run(body())).items()}
    assert counts == {tag_id: 1 for tag_id in ADDRESS}
