"""README's two commands are the ones that exist and that CI runs, and every relative link in
README.md and docs/ leads to a file, and to a heading of it when it names one: pages moved
out of the README (docs/benchmarks.md, docs/development.md, docs/releases.md, …) must stay
reachable from where they are cited. No binary needed: the files are read as text."""

from __future__ import annotations

import os
import re

from conftest import REPO_ROOT

README = (REPO_ROOT / "README.md").read_text()
PAGES = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").rglob("*.md"))]


def two_commands() -> dict[str, str]:
    """The table under "The two commands": its bold label → the command in its last cell."""
    section = README[README.index("## The two commands"):]
    section = section[:section.index("\n## ", 1)]
    commands = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 2 and (label := re.match(r"\*\*(.+?)\*\*", cells[0])):
            commands[label.group(1)] = cells[1].strip("`")
    return commands


def test_the_two_commands_exist_and_ci_runs_the_test_command():
    commands = two_commands()
    assert commands == {"Demo door": "scripts/demo", "All tests": "scripts/test"}, commands
    for command in commands.values():
        script = REPO_ROOT / command
        assert script.is_file() and os.access(script, os.X_OK), f"{command} is not an executable script"
    ci = (REPO_ROOT / ".ci/run").read_text()
    assert re.search(r"^scripts/test\b", ci, re.MULTILINE), ".ci/run does not run scripts/test"


def heading_anchors(text: str) -> set[str]:
    """The anchors a Markdown renderer gives the headings: lower case, punctuation dropped,
    spaces as hyphens."""
    anchors = set()
    in_code = False
    for line in text.splitlines():
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and (heading := re.match(r"#+ (.*)", line)):
            anchors.add(re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower()).replace(" ", "-"))
    return anchors


def test_every_relative_link_in_readme_and_docs_resolves():
    broken = []
    for page in PAGES:
        text = re.sub(r"```.*?```", "", page.read_text(), flags=re.DOTALL)
        for link in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", link):
                continue
            path, _, anchor = link.partition("#")
            target = (page.parent / path).resolve() if path else page
            where = f"{page.relative_to(REPO_ROOT)}: {link}"
            if not target.exists():
                broken.append(f"{where} (no such file)")
            elif anchor and target.suffix == ".md" and anchor not in heading_anchors(target.read_text()):
                broken.append(f"{where} (no such heading)")
    assert not broken, "\n".join(broken)
