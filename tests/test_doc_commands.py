"""Every complete `kcheck` command in a code block of README.md and docs/*.md is valid as written:
the command line parses with kcheck's own parser and the model, variant, preset and `--set`
values it names exist. (A synopsis with placeholders, e.g. `kcheck check [CONFIG.toml]`, is
not a command.) Some are also run: docs/liveness.md's and docs/visual.md's all, docs/cli.md's trace example
(tests/test_doc_examples.py), README's two (tests/test_readme.py)."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from checker import plugin
from checker.cli.commands import build_parser
from checker.config import load_config, load_definition
from tests.test_change_doc import files as change_doc_files

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PLACEHOLDER = re.compile(r"[\[<|]|\.\.\.|\b(FILE|TRACE|N|K|NAME|M|V|P|I|DIR|ROW|GATE\.toml|CONFIG\.toml)\b")


def _blocks(text: str) -> list[str]:
    """Lines of fenced code blocks and of 4-space indented blocks, continuation lines joined."""
    lines, out, fenced = text.splitlines(), [], False
    for line in lines:
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced or line.startswith("    "):
            out.append(line.strip())
    joined: list[str] = []
    for line in out:
        if joined and joined[-1].endswith("\\"):
            joined[-1] = joined[-1][:-1] + " " + line
        else:
            joined.append(line)
    return joined


def _commands() -> list[tuple[str, str]]:
    found = []
    for page in PAGES:
        for line in _blocks(page.read_text()):
            for part in re.split(r"&&|;", line):
                part = part.split(" #", 1)[0].strip()
                part = re.sub(r"^([A-Z_]+=\S*\s+)+", "", part)  # environment settings before the command
                part = re.sub(r"^(\S*/)?\.venv/bin/", "", part)
                if not part.startswith("kcheck ") or PLACEHOLDER.search(part):
                    continue
                part = part.split(" > ", 1)[0].split(" | ", 1)[0].strip()
                found.append((page.name, part))
    return found


COMMANDS = _commands()


def test_the_pages_show_commands():
    assert len(COMMANDS) > 20


@pytest.mark.parametrize("page,command", COMMANDS, ids=[f"{p}: {c}" for p, c in COMMANDS])
def test_command_is_valid(page: str, command: str, tmp_path: Path) -> None:
    argv = shlex.split(command)[1:]
    args = build_parser(argv[0]).parse_args(argv)
    if args.command == "new-variant":
        load_definition(args.model)
        return
    # a plugin the page shows (docs/change.md's files), in force for this command's names
    for name, text in change_doc_files().items():
        (tmp_path / name).write_text(text)
    active = plugin.activate([str(tmp_path / f) for f in getattr(args, "plugins", [])])
    if getattr(args, "model", "") is None and len({p.extension.model for p in active}) == 1:
        args.model = active[0].extension.model  # with one plugin, the model it extends (as kcheck does)
    if not hasattr(args, "model") or args.command in ("replay", "render"):
        return  # no configuration of its own (replay and render read it from the trace)
    if args.command == "mutate":  # a model and presets (or the gate's rows)
        for preset in (args.presets or "default").split(","):
            load_config(model=args.model, variant="kafka-4.1", preset=preset)
        return
    if args.command == "conform":  # presets repeatable; the variant defaults to what the jars represent
        default = "no-pre-vote" if args.model == "kraft" else None  # replication: its model's default
        for preset in args.preset or ["default"]:
            load_config(model=args.model, variant=args.variant or default, preset=preset,
                        overrides=args.overrides)
        return
    config = getattr(args, "config_file", None)
    if config is not None and not (ROOT / config).is_file():
        return  # a file the reader writes (my.toml)
    load_config(model=args.model, variant=args.variant, preset=args.preset,
                path=str(ROOT / config) if config else None, overrides=args.overrides)
    plugin.activate([])
