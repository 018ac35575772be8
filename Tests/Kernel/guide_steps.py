"""The installer's guide (docs/raspberry-pi.md) as the steps its test runs, in the guide's
order, taken from the guide itself so that the guide cannot drift from what is tested.

Every fenced block of the guide is preceded by a comment that says what the test does with
it (a block without one is an error):

    <!-- guide-test: run -->                    every line is a command the installer types
    <!-- guide-test: run; skip "scp", "ssh": WHY -->   ... but for the lines starting so
    <!-- guide-test: run; exit 1 "systemctl is-enabled" -->   ... that line exits 1
    <!-- guide-test: run; stop after 5 s "journalctl -u beacon-gateway -f" -->
                                                ... that line runs until stopped (Ctrl-C),
                                                5 s after it first printed something
    <!-- guide-test: skip: WHY -->              not run (it needs a real Pi, ...)
    <!-- guide-test: output: WHAT -->           a sample of what a program prints
    <!-- guide-test: config -->                 TOML the test's gateway.toml takes as it is
    <!-- guide-test: config, not used: WHY -->  TOML the test's system has no use for

and one comment stands alone, where the installer edits the configuration (the test
writes it there):  <!-- guide-test: setup edit-config: WHAT -->

A command runs as the guide's user (`pi`, the account Raspberry Pi Imager creates) exactly
as written: `sudo` makes it root, `sudo -u beacon-gateway` the service's user.
`<version>` and `<new-version>` stand for the package's versions.

scripts/install.sh's closing text marks the commands it shows with "$ "; each must be one
the guide runs (closing_commands)."""

from __future__ import annotations

import pathlib
import re
import shlex
from dataclasses import dataclass, field

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
GUIDE = REPO_ROOT / "docs" / "raspberry-pi.md"
INSTALL_SH = REPO_ROOT / "scripts" / "install.sh"
GUIDE_USER = "pi"
STOPPED_STATUS = 124

MARKER = re.compile(r"^<!--\s*guide-test:\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(```|~~~)")
QUOTED = re.compile(r'"([^"]+)"')


class GuideError(ValueError):
    """The guide's markup is wrong: the message names the line."""


@dataclass
class Step:
    """One command of the guide (kind "run"), or the test's own action at that point
    (kind "setup"), with where the guide has it."""

    kind: str
    text: str
    line: int
    section: str
    expect_exit: int = 0
    stop_after_s: int | None = None

    def user(self) -> str:
        """Who the command acts as: the guide's user, root through sudo, or the user sudo -u names."""
        if self.kind == "setup":
            return "root"  # the test's own hands
        words = shlex.split(self.text, comments=True)
        if words[:1] != ["sudo"]:
            return GUIDE_USER
        if len(words) > 2 and words[1] == "-u":
            return words[2]
        return "root"


@dataclass
class Block:
    """A fenced block and what its marker says of it."""

    kind: str  # run, skip, output, config
    lines: list[str]
    line: int  # the first line inside the fence
    section: str
    reason: str = ""
    options: dict = field(default_factory=dict)


@dataclass
class Guide:
    blocks: list[Block]
    steps: list[Step]
    # (line, command, reason) of the lines of "run" blocks that are skipped.
    skipped_lines: list[tuple[int, str, str]]


def _parse_marker(text: str, line: int) -> tuple[str, str, dict]:
    """(kind, reason, options) of one marker's text."""
    # Only "run" takes options; the other kinds' reasons are free text.
    head, *options = [part.strip() for part in text.split(";")] if text.startswith("run") else [text]
    kind, _, reason = head.partition(":")
    kind, reason = kind.strip(), reason.strip()
    parsed: dict = {"skip": {}, "exit": {}, "stop": {}}
    if kind == "config, not used":
        kind = "config-unused"
    if kind not in ("run", "skip", "output", "config", "config-unused") and not kind.startswith("setup "):
        raise GuideError(f"line {line}: unknown guide-test marker {text!r}")
    if kind in ("skip", "output", "config-unused") and not reason:
        raise GuideError(f"line {line}: a {kind} marker says why: {text!r}")
    for option in options:
        prefixes = QUOTED.findall(option)
        if not prefixes:
            raise GuideError(f"line {line}: option {option!r} names no line (\"PREFIX\")")
        if option.startswith("skip "):
            why = option.rpartition(":")[2].strip()
            if not why or why == option:
                raise GuideError(f"line {line}: skipped lines need a reason: {option!r}")
            parsed["skip"].update({prefix: why for prefix in prefixes})
        elif match := re.match(r"exit (\d+) ", option):
            parsed["exit"].update({prefix: int(match.group(1)) for prefix in prefixes})
        elif match := re.match(r"stop after (\d+) s ", option):
            parsed["stop"].update({prefix: int(match.group(1)) for prefix in prefixes})
        else:
            raise GuideError(f"line {line}: unknown option {option!r}")
    return kind, reason, parsed


def parse(text: str) -> Guide:
    lines = text.splitlines()
    blocks: list[Block] = []
    steps: list[Step] = []
    skipped: list[tuple[int, str, str]] = []
    section = ""
    pending: tuple[str, str, dict, int] | None = None
    index = 0
    while index < len(lines):
        raw = lines[index]
        number = index + 1
        if raw.startswith("## "):
            section = raw[3:].strip()
        if match := MARKER.match(raw):
            kind, reason, options = _parse_marker(match.group(1), number)
            if kind.startswith("setup "):
                steps.append(Step("setup", kind.removeprefix("setup ").strip(), number, section))
            else:
                if pending is not None:
                    raise GuideError(f"line {pending[3]}: marker without a fenced block after it")
                pending = (kind, reason, options, number)
        elif FENCE.match(raw):
            if pending is None:
                raise GuideError(f"line {number}: fenced block without a <!-- guide-test: ... --> marker before it")
            fence = FENCE.match(raw).group(1)
            end = index + 1
            while end < len(lines) and not lines[end].startswith(fence):
                end += 1
            if end == len(lines):
                raise GuideError(f"line {number}: fenced block never closed")
            kind, reason, options, _ = pending
            pending = None
            body = lines[index + 1:end]
            block = Block(kind, body, number + 1, section, reason, options)
            blocks.append(block)
            if kind == "run":
                steps.extend(_run_steps(block, skipped))
            index = end
        elif raw.strip() and pending is not None:
            raise GuideError(f"line {pending[3]}: the marker must come right before its fenced block")
        index += 1
    if pending is not None:
        raise GuideError(f"line {pending[3]}: marker without a fenced block after it")
    return Guide(blocks, steps, skipped)


def _run_steps(block: Block, skipped: list[tuple[int, str, str]]) -> list[Step]:
    steps = []
    used = set()
    for offset, command in enumerate(block.lines):
        if not command.strip():
            continue
        number = block.line + offset
        matching = lambda table: [p for p in table if command.startswith(p)]  # noqa: E731
        if reason := [block.options["skip"][p] for p in matching(block.options["skip"])]:
            used.update(matching(block.options["skip"]))
            skipped.append((number, command, reason[0]))
            continue
        step = Step("run", command, number, block.section)
        for prefix in matching(block.options["exit"]):
            step.expect_exit = block.options["exit"][prefix]
            used.add(prefix)
        for prefix in matching(block.options["stop"]):
            # Still running when stopped: timeout(1)'s status.
            step.stop_after_s, step.expect_exit = block.options["stop"][prefix], STOPPED_STATUS
            used.add(prefix)
        steps.append(step)
    named = set(block.options["skip"]) | set(block.options["exit"]) | set(block.options["stop"])
    if unused := named - used:
        raise GuideError(f"line {block.line - 1}: the marker names lines the block does not have: {sorted(unused)}")
    return steps


def load() -> Guide:
    return parse(GUIDE.read_text())


def substitute(command: str, versions: dict[str, str]) -> str:
    """The command with the guide's placeholders (<version>, <new-version>) filled in."""
    for name, value in versions.items():
        command = command.replace(f"<{name}>", value)
    return command


def without_comment(command: str) -> str:
    """The command without its trailing `# ...` comment (as the shell reads it)."""
    return re.sub(r"\s+#\s.*$", "", command).strip()


def closing_commands(script: str | None = None) -> list[str]:
    """The commands scripts/install.sh's closing text shows: the text after each "$ " up to
    the end of the line or two spaces."""
    text = script if script is not None else INSTALL_SH.read_text()
    heredoc = re.search(r"^cat <<'EOF'\n(.*?)^EOF$", text, re.MULTILINE | re.DOTALL)
    if heredoc is None:
        raise GuideError("scripts/install.sh: no closing text (cat <<'EOF' ... EOF)")
    commands = []
    for line in heredoc.group(1).splitlines():
        for match in re.finditer(r"\$ (.+?)(?:\s{2,}|\)?$)", line):
            commands.append(match.group(1).strip())
    return commands


def plan(guide: Guide, versions: dict[str, str]) -> str:
    """The steps as the guest's runner reads them: one a line, tab-separated
    KIND  LINE  USER  EXPECTED-EXIT  STOP-AFTER-S (0: none)  COMMAND."""
    rows = []
    for step in guide.steps:
        text = substitute(step.text, versions)
        if "\t" in text or "\n" in text:
            raise GuideError(f"line {step.line}: a command with a tab")
        rows.append("\t".join([step.kind, str(step.line), step.user(), str(step.expect_exit),
                               str(step.stop_after_s or 0), text]))
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    guide = load()
    for step in guide.steps:
        print(f"{step.line:4d} {step.kind:5s} [{step.user()}] {step.text}")
    for number, command, reason in guide.skipped_lines:
        print(f"{number:4d} skip  {command}  ({reason})")
    for block in guide.blocks:
        if block.kind != "run":
            print(f"{block.line:4d} {block.kind}: {block.reason or block.lines[0]}")
    print("install.sh:", closing_commands())
