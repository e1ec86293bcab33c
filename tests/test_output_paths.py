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


# --- an output that is an input, or another output, of the same run ------------------------------

TRACE = Path(__file__).resolve().parents[1] / "traces" / "kraft" / "commit-by-count.itf.json"


def _digests(folder: Path) -> dict[str, str]:
    import hashlib

    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and not p.is_symlink()}


# Each command with one output path naming an input or another output: T a trace, C a config
# file, G a gate file (each an input), X a new path.
COLLISIONS = {
    "render T --html T": "render T --html T",
    "replay T --html T": "replay T --html T",
    "check C --trace-out C": "check C --max-states 50 --trace-out C",
    "check C --html C": "check C --max-states 50 --html C",
    "check --trace-out X --html X": "check --preset smoke --max-states 50 --trace-out X --html X",
    "simulate C --trace-out C": "simulate C --walks 1 --depth 2 --trace-out C",
    "simulate --trace-out X --html X": "simulate --walks 1 --depth 2 --trace-out X --html X",
    "prove C --trace-out C": "prove C --size 3 --bmc 1 --trace-out C",
    "graph C --out C": "graph C --out C",
    "gate G --junit G": "gate G --junit G",
    "gate G --markdown G": "gate G --markdown G",
    "gate --junit X --markdown X": "gate G --junit X --markdown X",
    "gate --junit X --html-dir X": "gate G --junit X --html-dir X",
    "mutate --gate G --markdown G": "mutate --model kraft --gate G --markdown G",
}


def _argv(tmp_path: Path, template: str) -> list[str]:
    trace = tmp_path / "t.itf.json"
    trace.write_bytes(TRACE.read_bytes())
    config = tmp_path / "c.toml"
    config.write_text('model = "kraft"\nvoters = 3\n')
    gate = tmp_path / "gate.toml"
    gate.write_text(TINY_GATE)
    paths = {"T": str(trace), "C": str(config), "G": str(gate), "X": str(tmp_path / "out")}
    return [paths.get(word, word) for word in template.split()]


@pytest.mark.parametrize("which", COLLISIONS)
def test_an_output_that_is_an_input_or_another_output_is_bad_input(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], which: str) -> None:
    argv = _argv(tmp_path, COLLISIONS[which])
    before = _digests(tmp_path)
    start = time.perf_counter()
    code = cli.main(argv)
    captured = capsys.readouterr()
    assert code == 2, captured
    assert captured.err.count("\n") == 1 and captured.err.startswith("kcheck: error: "), captured.err
    assert "overwrite" in captured.err, captured.err
    assert captured.out == ""
    assert _digests(tmp_path) == before  # nothing written, nothing replaced
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.toml", "gate.toml", "t.itf.json"]
    assert time.perf_counter() - start < 5


@pytest.mark.parametrize("form", ["dot-slash", "dot-dot", "symlink", "hard link", "symlinked folder"])
def test_the_same_file_under_another_name_is_the_same_file(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch, form: str) -> None:
    trace = tmp_path / "t.itf.json"
    trace.write_bytes(TRACE.read_bytes())
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path)
    if form == "dot-slash":
        other = "./t.itf.json"
    elif form == "dot-dot":
        other = "sub/../t.itf.json"
    elif form == "symlink":
        os.symlink("t.itf.json", "link.json")
        other = "link.json"
    elif form == "hard link":
        os.link("t.itf.json", "hard.json")
        other = "hard.json"
    else:
        os.symlink(str(tmp_path), "folder")
        other = "folder/t.itf.json"
    digest = _digests(tmp_path)
    code = cli.main(["render", "t.itf.json", "--html", other])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "is the trace (t.itf.json)" in err, err
    assert _digests(tmp_path) == digest


def test_distinct_outputs_are_still_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "t.itf.json"
    trace.write_bytes(TRACE.read_bytes())
    assert cli.main(["render", str(trace), "--html", str(tmp_path / "t.html"), "--quiet"]) == 0
    assert (tmp_path / "t.html").stat().st_size > 0


# The same with a plugin file P (an input too: writing over it loses the user's change); PG is a
# gate file whose row names P.
PLUGIN_COLLISIONS = {
    "check --plugin P --trace-out P": "check --plugin P --variant mine --preset smoke --max-states 50 --trace-out P",
    "check --plugin P --html P": "check --plugin P --variant mine --preset smoke --max-states 50 --html P",
    "simulate --plugin P --trace-out P": "simulate --plugin P --variant mine --walks 1 --depth 2 --trace-out P",
    "replay T --plugin P --html P": "replay T --plugin P --html P",
    "graph --plugin P --out P": "graph --plugin P --variant mine --preset smoke --out P",
    "gate PG --junit P": "gate PG --junit P",
    "gate PG --markdown P": "gate PG --markdown P",
    "mutate --gate PG --markdown P": "mutate --model kraft --gate PG --markdown P",
}


@pytest.mark.parametrize("which", PLUGIN_COLLISIONS)
def test_an_output_that_is_a_plugin_file_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      which: str) -> None:
    argv = _argv(tmp_path, PLUGIN_COLLISIONS[which])
    plugin = tmp_path / "p.py"
    from checker import plugin as plugins
    plugins.activate([])  # an earlier test's plugin, still in force in this process, would hold the name
    assert cli.main(["new-variant", "mine", "--model", "kraft", "--out", str(plugin)]) == 0
    gate = tmp_path / "pgate.toml"
    gate.write_text('[[row]]\nname = "tiny"\nmodel = "kraft"\nvariant = "kafka-4.1"\nexpect = "holds"\n'
                    'max_states = 20\nplugin = "p.py"\n')
    argv = [{"P": str(plugin), "PG": str(gate)}.get(word, word) for word in argv]
    capsys.readouterr()
    before = _digests(tmp_path)
    code = cli.main(argv)
    captured = capsys.readouterr()
    assert code == 2, captured
    assert captured.err.count("\n") == 1 and "overwrite" in captured.err and "p.py" in captured.err, captured.err
    assert _digests(tmp_path) == before  # the plugin is as it was


@pytest.mark.parametrize("which", ["--trace-out T", "--trace-out D", "--trace-out X --simulate-out X"])
def test_conform_checks_its_outputs_before_it_starts(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     which: str) -> None:
    """kcheck conform's --trace-out: not over a trace it drives, not a directory, not its
    --simulate-out; one line, exit 2, before any Kafka class path is looked for."""
    argv = _argv(tmp_path, "conform --model kraft --walks 0 --traces T " + which.replace(" D", " " + str(tmp_path)))
    before = _digests(tmp_path)
    code = cli.main(argv + ["--kafka-classpath", str(tmp_path / "no-such-kafka")])
    captured = capsys.readouterr()
    assert code == 2 and captured.err.count("\n") == 1, captured
    assert "--trace-out" in captured.err and "class path" not in captured.err and "jar" not in captured.err, captured.err
    assert _digests(tmp_path) == before
