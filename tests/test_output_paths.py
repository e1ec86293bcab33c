"""Every output path is checked before the run starts: a directory, or a file that cannot be
written, is one error line and exit 2 before any search (no progress line, no lost work)."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from checker import cli

UNWRITABLE = "/proc/version"  # exists, and cannot be opened for writing, even by root

TINY_GATE = ('[[row]]\nname = "tiny"\nmodel = "kraft"\nvariant = "kafka-4.1"\nexpect = "holds"\n'
             'max_states = 20\n')


def _commands(tmp_path: Path, bad: str) -> dict[str, list[str]]:
    gate = tmp_path / "gate.toml"
    gate.write_text(TINY_GATE)
    return {
        "check": ["check", "--preset", "smoke", "--max-states", "200", "--trace-out", bad],
        "simulate": ["simulate", "--walks", "2", "--depth", "3", "--trace-out", bad],
        "prove": ["prove", "--model", "kraft", "--size", "3", "--bmc", "1", "--trace-out", bad],
        "gate --junit": ["gate", str(gate), "--junit", bad],
        "gate --markdown": ["gate", str(gate), "--markdown", bad],
    }


@pytest.mark.parametrize("which", ["check", "simulate", "prove", "gate --junit", "gate --markdown"])
@pytest.mark.parametrize("kind", ["directory", "unwritable"])
def test_bad_output_path_is_rejected_before_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   which: str, kind: str) -> None:
    if kind == "unwritable" and not os.path.exists(UNWRITABLE):
        pytest.skip("needs /proc")
    bad = str(tmp_path) if kind == "directory" else UNWRITABLE
    start = time.perf_counter()
    code = cli.main(_commands(tmp_path, bad)[which])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("kcheck: error: ") and bad in err, err
    assert time.perf_counter() - start < 5


def test_write_traces_must_be_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gate = tmp_path / "gate.toml"
    gate.write_text(TINY_GATE)
    code = cli.main(["gate", str(gate), "--write-traces", str(gate)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "not a directory" in err, err


def test_a_good_trace_out_path_is_left_absent_when_nothing_is_written(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "t.itf.json"
    assert cli.main(["check", "--preset", "smoke", "--max-states", "50", "--quiet", "--trace-out", str(out)]) == 3
    assert not out.exists()
