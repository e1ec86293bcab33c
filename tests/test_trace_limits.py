"""Over-deep or over-large traces are one line and exit 2 (no RecursionError traceback), found
without recursion; a trace at the limit is still read."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from checker import cli, limits

ROOT = Path(__file__).resolve().parents[1]


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


DEEP = {
    "100,000 levels": '{"states":[' + _nested(100_000) + "]}",
    "5,000 levels": '{"states":[' + _nested(5_000) + "]}",
    "900 levels in one variable": '{"states":[{"history":' + _nested(900) + "}]}",
    "deep objects": '{"states":[' + '{"a":' * 3_000 + "1" + "}" * 3_000 + "]}",
}


@pytest.mark.parametrize("case", sorted(DEEP))
def test_deep_trace_is_bad_input(capsys: pytest.CaptureFixture[str], tmp_path: Path, case: str) -> None:
    path = tmp_path / "deep.itf.json"
    path.write_text(DEEP[case])
    code = cli.main(["replay", str(path), "--quiet"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1, (code, err[-300:])
    assert f"nested more than {limits.MAX_DEPTH} levels deep" in err


def test_large_trace_is_bad_input(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    trace = ROOT / "traces" / "replication" / "unclean-election.itf.json"
    monkeypatch.setattr(limits, "MAX_TRACE_BYTES", trace.stat().st_size - 1)
    code = cli.main(["replay", str(trace), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "larger than" in err, err
    monkeypatch.setattr(limits, "MAX_TRACE_BYTES", trace.stat().st_size)
    assert cli.main(["replay", str(trace), "--quiet"]) == 0


@pytest.mark.parametrize("depth", [1, 10, limits.MAX_DEPTH - 1, limits.MAX_DEPTH])
def test_depth_at_the_limit_is_read(depth: int) -> None:
    assert not limits.nesting_exceeds(_nested(depth).encode())
    assert limits.nesting_exceeds(_nested(limits.MAX_DEPTH + 1).encode())


def test_depth_counts_objects_and_arrays_and_skips_strings() -> None:
    doc = {"a": [{"b": [1, "]]]][[[[{{{\\\"", {"c": []}]}], "d": "[" * 500}
    text = json.dumps(doc).encode()
    assert not limits.nesting_exceeds(text, 6)  # {a:[{b:[{c:[]}]}]}: six levels; the strings count for nothing
    assert limits.nesting_exceeds(text, 5)
    assert limits.nesting_exceeds(json.dumps([doc]).encode(), 6)


@pytest.mark.parametrize("text", ["a = " + _nested(5_000) + "\n", "a = " + "{b = " * 2_000 + "1" + "}" * 2_000 + "\n"])
def test_deep_config_file_is_bad_input(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str) -> None:
    path = tmp_path / "deep.toml"
    path.write_text(text)
    assert cli.main(["check", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nested more than" in err, err[-300:]


def test_brackets_in_toml_strings_and_comments_do_not_count(capsys: pytest.CaptureFixture[str],
                                                             tmp_path: Path) -> None:
    path = tmp_path / "ok.toml"
    path.write_text('preset = "smoke" # ' + "[" * 300 + "\nvariant = 'kafka-4.1'\n")
    assert cli.main(["check", str(path), "--max-states", "10", "--quiet"]) == 3
