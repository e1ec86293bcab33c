"""README.md opens with the two commands of a fresh machine, and `.ci/run` runs the second one."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _commands() -> list[str]:
    return [line.strip() for line in (ROOT / "README.md").read_text().splitlines() if line.startswith("    python3 -m venv")]


def test_readme_opens_with_install_and_check_then_install_and_test():
    first, second = _commands()[:2]
    assert first.endswith("kcheck check"), first
    assert "pytest" in second, second
    text = (ROOT / "README.md").read_text()
    assert text.index(first) < text.index("## "), "the two commands come before the first section"


def test_ci_runs_the_readme_test_command_verbatim():
    second = _commands()[1]
    assert second in (ROOT / ".ci" / "run").read_text().splitlines()
