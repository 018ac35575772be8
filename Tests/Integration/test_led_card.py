"""One LED card: every pattern the LED code has (Sources/LEDs/LEDPattern.swift) is in
docs/leds.md's table, in the Pi guide's table (docs/raspberry-pi.md, section 9), in
install.sh's closing text and in the troubleshooting page's table (docs/troubleshooting.md),
for the same LED; and the steady and dark states too. The troubleshooting page names no
pattern the code does not have, in its table or its headings. No binary needed: the code
is read as text, the way an installer reads the docs."""

from __future__ import annotations

import re

from conftest import REPO_ROOT

LED_CODE = (REPO_ROOT / "Sources/LEDs/LEDPattern.swift").read_text()
LEDS_DOC = (REPO_ROOT / "docs/leds.md").read_text()
GUIDE = (REPO_ROOT / "docs/raspberry-pi.md").read_text()
INSTALL = (REPO_ROOT / "scripts/install.sh").read_text()
TROUBLESHOOTING = (REPO_ROOT / "docs/troubleshooting.md").read_text()
COUNTS = {2: "two", 3: "three"}


def code_patterns() -> list[tuple[str, str]]:
    """(LED, how it shows) for each `static let` pattern: its doc comment names the LED,
    its initializer the rhythm."""
    found = []
    for comment, body in re.findall(r"/// (.*)\n\s*static let \w+ = (.*)", LED_CODE):
        led = comment.split()[0].strip(",").lower()
        led = "all" if led == "all" else led
        if blink := re.search(r"blink\(on: \.milliseconds\((\d+)\), off: \.milliseconds\((\d+)\)\)", body):
            hertz = 1000 / (int(blink.group(1)) + int(blink.group(2)))
            found.append((led, f"{hertz:g} Hz"))
        elif flashes := re.search(r"flashes\((\d+),", body):
            found.append((led, COUNTS[int(flashes.group(1))]))
        elif lamp := re.search(r"duration: \.milliseconds\((\d+)\)", body):
            found.append((led, f"{lamp.group(1)} ms"))
        else:
            raise AssertionError(f"a pattern the card test cannot read: {body}")
    return found


def table_rows(text: str, header: str) -> list[str]:
    start = text.index(header)
    rows = []
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        rows.append(line.lower())
    return rows


def test_the_code_has_the_patterns_this_test_reads():
    patterns = code_patterns()
    assert ("green", "1 Hz") in patterns and ("red", "4 Hz") in patterns and ("red", "three") in patterns, patterns
    assert len(patterns) == 7, patterns


def test_every_pattern_and_state_is_on_the_card_the_guide_and_install_sh():
    card = table_rows(LEDS_DOC, "| LED | pattern | meaning |")
    guide = table_rows(GUIDE, "| what you see | meaning | what to do |")
    install = " ".join(INSTALL[INSTALL.index("== next steps"):].lower().split())
    expected = code_patterns() + [("green", "steady"), ("green", "off"), ("amber", "off"), ("amber", "steady"),
                                  ("red", "steady")]
    for led, rhythm in expected:
        key = rhythm.lower()
        on_card = [row for row in card if row.split("|")[1].strip() == led and key in row.split("|")[2]]
        assert on_card, f"docs/leds.md has no row for {led} {rhythm}"
        if led == "all":
            assert any("all three" in row and key in row for row in guide), f"the guide's table lacks the {rhythm} lamp test"
            assert key in install, f"install.sh does not mention the {rhythm} lamp test"
            continue
        guide_key = {"two": "double blink", "three": "three flashes"}.get(key, key)
        assert any(row.split("|")[1].strip().startswith(led) and guide_key in row.split("|")[1] for row in guide), \
            f"the Pi guide's table has no row for {led} {guide_key}"
        install_key = {"two": "double blink", "three": "three flashes"}.get(key, key)
        assert re.search(rf"{led} {re.escape(install_key)}\b", install), f"install.sh does not mention {led} {install_key}"


def shown_pattern(text: str) -> tuple[str, str] | None:
    """(LED, how it shows) in the code's words for a phrase such as "red 4 Hz", "green
    double blink", "red three flashes", "amber steady" or "all three on for 300 ms"."""
    text = text.lower()
    if lamp := re.search(r"\ball three on for (\d+) ms\b", text):
        return ("all", f"{lamp.group(1)} ms")
    found = re.search(r"\b(green|amber|red)\b[^|]*?\b(\d+(?:\.\d+)? hz|double blink|three flashes|steady|off)\b", text)
    if not found:
        return None
    rhythm = {"double blink": "two", "three flashes": "three"}.get(found.group(2), found.group(2).replace(" hz", " Hz"))
    return (found.group(1), rhythm)


def test_the_troubleshooting_page_has_every_pattern_and_no_other():
    expected = set(code_patterns()) | {("green", "steady"), ("green", "off"), ("amber", "off"), ("amber", "steady"),
                                       ("red", "steady")}
    rows = table_rows(TROUBLESHOOTING, "| what you see | meaning | go to |")
    shown = {}
    for row in rows:
        seen = row.split("|")[1].strip()
        if seen == "all dark":
            continue
        pattern = shown_pattern(seen)
        assert pattern in expected, f"docs/troubleshooting.md shows {seen!r}, which the LED code has not for that LED"
        shown[pattern] = seen
    missing = expected - set(shown)
    assert not missing, f"docs/troubleshooting.md's table lacks {sorted(missing)}"


def test_the_troubleshooting_headings_name_patterns_the_code_has():
    expected = set(code_patterns()) | {("red", "steady"), ("amber", "steady")}
    headings = [line.removeprefix("## ") for line in TROUBLESHOOTING.splitlines() if line.startswith("## ")]
    named = [(heading, shown_pattern(heading.replace("blinking fast", "").replace("blinking", ""))) for heading in headings]
    led_headings = [(heading, pattern) for heading, pattern in named if pattern is not None]
    assert len(led_headings) >= 3, headings
    for heading, pattern in led_headings:
        assert pattern in expected, f"the heading {heading!r} names {pattern}, which the LED code has not"
