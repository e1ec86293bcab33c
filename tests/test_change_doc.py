"""docs/change.md runs as written: its files (a `File \\`NAME\\`:` line, then a code block) are
written and its commands run in order, in a temporary directory outside the repo, with a
non-editable install (tests/conftest.py's `installed`); each command ends with the exit code its
`# exit N` comment gives (0 without one), and every line of the `text` block after it appears in
what it printed (`...` stands for lines left out; timings and the plugin's path may differ)."""
from __future__ import annotations

import hashlib
import re
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "change.md"
# not run here: minutes of searches; test_change_md_mutate_commands_print_what_the_page_shows runs them (slow tier)
NOT_RUN = ("kcheck mutate",)


@dataclass
class Step:
    kind: str  # "file" | "commands"
    name: str = ""
    text: str = ""
    commands: list[str] = field(default_factory=list)
    expected: list[str] = field(default_factory=list)  # the text block after the commands


def steps(page: Path = PAGE) -> list[Step]:
    """The page's files and command blocks, in order."""
    out: list[Step] = []
    lines = page.read_text().splitlines()
    i, pending_file, last_fence = 0, None, ""
    while i < len(lines):
        line = lines[i]
        m = re.fullmatch(r"File `([^`]+)`:", line.strip())
        if m:
            pending_file = m.group(1)
        if line.startswith("```"):
            lang = line[3:].strip()
            j = i + 1
            while not lines[j].startswith("```"):
                j += 1
            body = lines[i + 1:j]
            if pending_file is not None:
                out.append(Step("file", pending_file, "\n".join(body) + "\n"))
                pending_file = None
            elif lang == "sh":
                out.append(Step("commands", commands=body))
            elif lang == "text" and last_fence == "sh":
                out[-1].expected = body
            last_fence = lang
            i = j
        i += 1
    return out


def files(page: Path = PAGE) -> dict[str, str]:
    return {s.name: s.text for s in steps(page) if s.kind == "file"}


def _normal(line: str) -> str:
    """A line with its timings and spacing made comparable."""
    line = re.sub(r"\d[\d,]*\.\d+", "#", line.rstrip())
    line = re.sub(r"\b\d+ s\b", "# s", line)
    return " ".join(line.split())


def test_the_page_has_its_steps():
    found = steps()
    assert set(files()) == {"hw_quorum.py", "gate.toml", "epoch_only_vote.py", "all_voters_hw.py"}
    commands = [c for s in found if s.kind == "commands" for c in s.commands]
    assert any(c.startswith("kcheck check --plugin hw_quorum.py") for c in commands)
    assert any(c.startswith("kcheck gate gate.toml") for c in commands)


def test_change_md_runs_as_written(installed: Path, tmp_path: Path) -> None:
    cwd = tmp_path
    plugin_lines = []
    for step in steps():
        if step.kind == "file":
            (cwd / step.name).write_text(step.text)
            continue
        output, ran = "", False
        for command in step.commands:
            line, _, comment = command.partition("  #")
            argv = shlex.split(line)
            if argv[0] == "mkdir":
                (cwd / argv[1]).mkdir()
                continue
            if argv[0] == "cd":
                cwd = cwd / argv[1]
                continue
            assert argv[0] == "kcheck", command
            if line.startswith(NOT_RUN):
                continue
            m = re.search(r"exit (\d)", comment)
            done = subprocess.run([str(installed), "-m", "checker.cli", *argv[1:]], cwd=cwd, capture_output=True,
                                  text=True, timeout=900)
            assert done.returncode == (int(m.group(1)) if m else 0), (command, done.stderr[-2000:])
            output, ran = done.stdout + done.stderr, True
        if not ran:
            continue  # the output shown is that of a command not run here
        printed = {_normal(x) for x in output.splitlines()}
        for expected in step.expected:
            if expected.strip() == "..." or expected.startswith("#"):
                continue
            if expected.startswith("plugin:"):
                plugin_lines.append(expected)
                continue
            assert _normal(expected) in printed, (step.commands, expected)
    assert not Path(cwd).is_relative_to(ROOT)
    # the digest the page shows is the digest of the file it shows
    assert {re.search(r"/([\w.]+) \(sha256", x).group(1) for x in plugin_lines} == {"hw_quorum.py", "all_voters_hw.py"}
    for x in plugin_lines:
        name = re.search(r"/([\w.]+) \(sha256", x).group(1)
        digest = hashlib.sha256((cwd / name).read_bytes()).hexdigest()
        assert f"(sha256 {digest[:16]})" in x, x
    assert (cwd / "traces" / "replication" / "hw-quorum.itf.json").is_file()
    assert (cwd / "hw-quorum.html").is_file()


@pytest.mark.slow  # a search of smoke for each of the page's eleven mutants: minutes
def test_change_md_mutate_commands_print_what_the_page_shows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """The page's `kcheck mutate` commands, which test_change_md_runs_as_written leaves out, run here
    (in-process, beside the page's files): the exit code and every line the page shows."""
    from checker import cli

    for name, text in files().items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    ran = 0
    for step in steps():
        if step.kind != "commands" or not step.commands[0].startswith(NOT_RUN):
            continue
        assert len(step.commands) == 1, step.commands
        line, _, comment = step.commands[0].partition("  #")
        m = re.search(r"exit (\d)", comment)
        code = cli.main(shlex.split(line)[1:])
        out, err = capsys.readouterr()
        assert code == (int(m.group(1)) if m else 0), (line, err[-2000:])
        printed = {_normal(x) for x in (out + err).splitlines()}
        for expected in step.expected:
            if expected.strip() != "..." and not expected.startswith("#"):
                assert _normal(expected) in printed, (line, expected)
        ran += 1
    assert ran == 2
