"""The site-bus tests' broker (broker.py, the mqtt_* fixtures of conftest.py) does what
those tests rely on: a real mosquitto that keeps retained messages, loses them across a
restart unless persistence is on, refuses a wrong password, and whose TLS listener a client
trusting another CA cannot reach. Seconds in all."""

from __future__ import annotations

import ssl

import pytest

from broker import ConnectRefused, Subscriber
from conftest import MQTT_USERS


def test_retained_and_live_messages_reach_the_subscriber(mqtt_broker):
    mqtt_broker.publish("site/S/door/status", "online", retain=True)
    with mqtt_broker.subscriber("site/#") as bus:
        retained = bus.wait_message("site/S/door/status")
        assert (retained.payload, retained.retain, retained.qos) == (b"online", True, 1)
        mqtt_broker.publish("site/S/door/events", '{"sequence": 1}')
        live = bus.wait_message("site/S/door/events")
        assert (live.text, live.retain, live.qos) == ('{"sequence": 1}', False, 1)
        # QoS 0 publishes arrive at QoS 0 whatever the subscription's QoS.
        mqtt_broker.publish("site/S/sightings/door", "s", qos=0)
        assert bus.wait_message("site/S/sightings/door").qos == 0
        # An empty retained message deletes the retained one: a new subscriber gets nothing.
        mqtt_broker.publish("site/S/door/status", None, retain=True)
    with mqtt_broker.subscriber("site/#") as later:
        mqtt_broker.publish("site/marker", "after")
        later.wait_message("site/marker")
        assert later.on("site/S/door/status") == []


@pytest.mark.parametrize("persistence", [True, False], ids=["persistence", "no-persistence"])
def test_a_restart_keeps_retained_messages_only_with_persistence(mqtt_broker_factory, persistence):
    broker = mqtt_broker_factory(persistence=persistence)
    port = broker.port
    broker.publish("site/S/door/presence/u_1", '{"state": "present"}', retain=True)
    with broker.subscriber("site/#") as watcher:
        broker.stop()
        broker.start()
        assert broker.port == port
        # The subscriber reconnects by itself once the broker is back.
        watcher.wait_connected(2)
    with broker.subscriber("site/#") as bus:
        # Retained messages are sent with the SUBACK, before anything published after it:
        # once the marker is in, a retained message that was kept would be in too.
        broker.publish("site/marker", "after the restart")
        bus.wait_message("site/marker")
        kept = bus.on("site/S/door/presence/u_1")
        if persistence:
            assert [(m.text, m.retain) for m in kept] == [('{"state": "present"}', True)]
        else:
            assert kept == []


def test_a_killed_broker_starts_again_on_its_port(mqtt_broker):
    with mqtt_broker.subscriber("site/#") as bus:
        mqtt_broker.kill()
        assert not mqtt_broker.running
        with pytest.raises(ConnectionRefusedError):
            Subscriber(mqtt_broker.host, mqtt_broker.port, "site/#")
        mqtt_broker.start()
        bus.wait_connected(2)
        mqtt_broker.publish("site/after", "back")
        bus.wait_message("site/after", payload="back", retain=False)


def test_tls_listener_with_the_right_ca_and_password(mqtt_tls_broker):
    assert mqtt_tls_broker.tls_url.startswith("mqtts://127.0.0.1:")
    with mqtt_tls_broker.subscriber("site/#", tls=True, username="observer", password=MQTT_USERS["observer"]) as bus:
        mqtt_tls_broker.publish("site/tls", "over TLS", tls=True, username="door-test")
        assert bus.wait_message("site/tls").text == "over TLS"


def test_tls_with_another_ca_does_not_connect(mqtt_tls_broker):
    with pytest.raises(ssl.SSLCertVerificationError):
        mqtt_tls_broker.subscriber("site/#", tls=True, ca_file=mqtt_tls_broker.wrong_ca_file)
    wrong = mqtt_tls_broker.publish("site/tls", "x", tls=True, ca_file=mqtt_tls_broker.wrong_ca_file, check=False)
    assert wrong.returncode != 0, wrong.stdout + wrong.stderr
    # The broker's own CA works: the refusals above are the CA's doing.
    assert mqtt_tls_broker.publish("site/tls", "x", tls=True, check=False).returncode == 0


@pytest.mark.parametrize("tls", [False, True], ids=["plain", "tls"])
def test_a_wrong_password_or_none_is_refused(mqtt_tls_broker, tls):
    with pytest.raises(ConnectRefused) as refused:
        mqtt_tls_broker.subscriber("site/#", tls=tls, username="door-test", password="not the password")
    assert refused.value.reason.getName() in ("Bad user name or password", "Not authorized"), refused.value
    with pytest.raises(ConnectRefused):
        mqtt_tls_broker.subscriber("site/#", tls=tls, username="nobody", password="")
    # No login at all (Subscriber itself: the broker's helpers log in by default).
    port, ca_file = (mqtt_tls_broker.tls_port, mqtt_tls_broker.ca_file) if tls else (mqtt_tls_broker.port, None)
    with pytest.raises(ConnectRefused):
        Subscriber(mqtt_tls_broker.host, port, "site/#", ca_file=ca_file)
    result = mqtt_tls_broker.publish("site/x", "x", tls=tls, username="door-test", password="wrong", check=False)
    assert result.returncode != 0
    # The right password on the same listener works.
    with mqtt_tls_broker.subscriber("site/#", tls=tls, username="door-test", password=MQTT_USERS["door-test"]):
        pass
