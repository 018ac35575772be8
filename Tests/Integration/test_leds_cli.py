"""`beacon-gateway leds test` (see docs/leds.md, docs/cli.md): its errors name the chip and the line and
exit 1; a configuration without [leds] is a configuration error (exit 2). Real lines are
driven by the LEDsTests XCTests on a kernel with gpio-sim."""

from __future__ import annotations

import subprocess


def leds_test(gateway_bin, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(gateway_bin), "leds", "test", *args], capture_output=True, text=True, timeout=30)


def test_missing_chip_names_the_chip(gateway_bin):
    result = leds_test(gateway_bin, "--chip", "gpiochip97", "--green", "17", "--amber", "27", "--red", "22")
    assert result.returncode == 1, result.stderr
    assert "no GPIO chip gpiochip97 (ls /dev/gpiochip*" in result.stderr


def test_not_a_chip(gateway_bin):
    result = leds_test(gateway_bin, "--chip", "/dev/null", "--green", "1", "--amber", "2", "--red", "3")
    assert result.returncode == 1
    assert "/dev/null is not a GPIO character device" in result.stderr


def test_same_line_twice(gateway_bin):
    result = leds_test(gateway_bin, "--chip", "gpiochip0", "--green", "4", "--amber", "5", "--red", "4")
    assert result.returncode == 1
    assert "gpiochip0 line 4 is given for both green and red" in result.stderr


def test_wiring_from_the_configuration(gateway_bin, tmp_path):
    config = tmp_path / "gateway.toml"
    config.write_text(
        f'[gateway]\nid = "door-test"\nstate_dir = "{tmp_path}"\n\n'
        '[leds]\nchip = "gpiochip96"\ngreen = 17\namber = 27\nred = 22\n'
    )
    result = leds_test(gateway_bin, "--config", str(config))
    assert result.returncode == 1, result.stderr
    assert "no GPIO chip gpiochip96" in result.stderr


def test_configuration_without_leds_is_a_configuration_error(gateway_bin, tmp_path):
    config = tmp_path / "gateway.toml"
    config.write_text(f'[gateway]\nid = "door-test"\nstate_dir = "{tmp_path}"\n')
    result = leds_test(gateway_bin, "--config", str(config))
    assert result.returncode == 2
    assert "has no [leds] section" in result.stderr
