"""docs/cli.md's trace example works as written: the check writes a counterexample, and its
replay under Kafka 4.1 names the step Kafka forbids."""
from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from checker import cli

ROOT = Path(__file__).resolve().parents[1]


def _example(prefix: str) -> list[str]:
    line = next(x for x in (ROOT / "docs" / "cli.md").read_text().splitlines() if x.startswith(prefix))
    return shlex.split(line.split("#", 1)[0])[1:]  # without `kcheck` and the comment


@pytest.mark.slow  # a 9-step counterexample on the default preset: about 10 s
def test_cli_md_trace_example(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    check = _example("kcheck check --variant truncate-to-hw")
    assert cli.main([*check, "--quiet"]) == 1
    assert (tmp_path / "r1.itf.json").is_file()
    assert cli.main([*_example("kcheck replay r1.itf.json"), "--quiet"]) == 1
    assert "result:   invalid: step" in capsys.readouterr().out
