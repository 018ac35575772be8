"""`beacon-gateway check-config` as an installer meets it: a valid file is printed with
defaults filled in and secrets masked (exit 0); a broken one gets every problem at once,
each naming file, line and key (exit 2); a TOML syntax error names the line.

Skipped (with the reason) when the binary is missing: set BEACON_GATEWAY_BIN or build.
"""

from __future__ import annotations

import subprocess

VALID = """\
[gateway]
id = "door-check"
site = "S_CHECK"
state_dir = "/var/lib/beacon-gateway"

[bluetooth]
transport = "hci1"
tag_interval_ms = 700

[[person]]
id = "u_check"
name = "Check"
  [[person.tag]]
  id = "tag-check"
  irk = "00112233445566778899aabbccddeeff"
"""


def write_config(config, text: str) -> None:
    """Mode 0600: the file holds an IRK inline, so group or others may not read it."""
    config.write_text(text)
    config.chmod(0o600)


def check_config(binary, config) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), "check-config", "--config", str(config)],
                          capture_output=True, text=True, timeout=60)


def line_of(text: str, start: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), 1) if line.strip().startswith(start))


def test_valid_configuration_prints_the_effective_settings_with_secrets_masked(gateway_bin, tmp_path):
    config = tmp_path / "gateway.toml"
    write_config(config, VALID)
    result = check_config(gateway_bin, config)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "door-check" in result.stdout and "hci1" in result.stdout
    assert "00112233445566778899aabbccddeeff" not in result.stdout, "the IRK must be masked"
    assert "***" in result.stdout


def test_every_problem_is_named_with_file_line_and_key_at_once(gateway_bin, tmp_path):
    broken = (VALID.replace('transport = "hci1"', 'transport = "hci1"\nscan = "sideways"')
                   .replace("tag_interval_ms = 700", "tag_interval_ms = 5")
                   .replace('site = "S_CHECK"', 'site = "S_CHECK"\nnot_a_key = 1'))
    config = tmp_path / "gateway.toml"
    write_config(config, broken)
    result = check_config(gateway_bin, config)
    assert result.returncode == 2, result.stdout + result.stderr
    for start, key in (("not_a_key", "gateway.not_a_key"), ("scan", "bluetooth.scan"),
                       ("tag_interval_ms", "bluetooth.tag_interval_ms")):
        assert f"{config}:{line_of(broken, start)}: {key}: " in result.stderr, result.stderr
    assert "3 problems; nothing was started" in result.stderr, result.stderr


def test_syntax_error_names_the_line(gateway_bin, tmp_path):
    broken = VALID.replace('site = "S_CHECK"', 'site = "S_CHECK')
    config = tmp_path / "gateway.toml"
    write_config(config, broken)
    result = check_config(gateway_bin, config)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"{config}:{line_of(broken, 'site')}: " in result.stderr, result.stderr


def test_missing_file_is_a_configuration_error_naming_it(gateway_bin, tmp_path):
    result = check_config(gateway_bin, tmp_path / "nowhere.toml")
    assert result.returncode == 2, result.stdout + result.stderr
    assert str(tmp_path / "nowhere.toml") in result.stderr
