"""Input that used to be accepted silently: empty names, absurd process counts, Unicode digits,
more lossy crashes than crashes, a trace with no variable, an unbounded prove size; and a key
the model clamps (as Kafka does) is shown in the config echo."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from checker import cli


def _one_error(capsys: pytest.CaptureFixture[str], argv: list[str], words: str) -> None:
    code = cli.main(argv)
    out, err = capsys.readouterr()
    assert code == 2 and out == "", (code, out, err)
    assert err.count("\n") == 1 and err.startswith("kcheck: error: ") and words in err, err


CHECK = ["check", "--preset", "smoke", "--max-states", "20", "--quiet"]
REJECTED = {
    "empty model": (["check", "--model", "", "--max-states", "20", "--quiet"], "unknown model ''"),
    "empty preset": (["check", "--preset", "", "--max-states", "20", "--quiet"], "unknown preset ''"),
    "empty variant": ([*CHECK, "--variant", ""], "unknown variant ''"),
    "workers 1000": ([*CHECK, "--workers", "1000"], "--workers: at most 64"),
    "processes 1000": (["simulate", "--walks", "1", "--processes", "1000"], "--processes: at most 64"),
    "jobs 1000": (["gate", "--jobs", "1000"], "--jobs: at most 64"),
    "arabic-indic digit": ([*CHECK, "--set", "brokers=\u0663"], "must be an integer"),
    "fullwidth digit": ([*CHECK, "--set", "brokers=\uff12"], "must be an integer"),
    "underscore digits": ([*CHECK, "--set", "brokers=1_0"], "must be an integer"),
    "unicode max-states": (["check", "--preset", "smoke", "--max-states", "\u0665\u0660"], "--max-states"),
    "lossy over crashes": ([*CHECK, "--set", "crashes=0"], "lossy_crashes = 1 is more than crashes = 0"),
    "lossy over crashes, prove": (["prove", "--model", "replication", "--set", "crashes=0"],
                                  "lossy_crashes = 1 is more than crashes = 0"),
    "prove size 1000": (["prove", "--size", "1000"], "--size: at most 7"),
}


@pytest.mark.parametrize("case", sorted(REJECTED))
def test_rejected(capsys: pytest.CaptureFixture[str], case: str) -> None:
    argv, words = REJECTED[case]
    _one_error(capsys, argv, words)


@pytest.mark.parametrize("option", ["--model", "--variant", "--preset"])
def test_replay_empty_names(capsys: pytest.CaptureFixture[str], tmp_path: Path, option: str) -> None:
    trace = tmp_path / "t.itf.json"
    trace.write_text(json.dumps({"states": [{"history": {"crashes": 0}}]}))
    _one_error(capsys, ["replay", str(trace), option, ""], "''")


@pytest.mark.parametrize("doc", [{"states": [{}]}, {"states": [{}, {}, {"#meta": {"index": 2}}]}])
def test_trace_without_variables(capsys: pytest.CaptureFixture[str], tmp_path: Path, doc: dict) -> None:
    trace = tmp_path / "t.itf.json"
    trace.write_text(json.dumps(doc))
    _one_error(capsys, ["replay", str(trace)], "no state gives any variable")


def test_clamp_is_shown(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main([*CHECK, "--set", "min_insync_replicas=3"])  # smoke: 2 brokers
    out = capsys.readouterr().out
    assert code == 3
    line = next(x for x in out.splitlines() if x.startswith("config:"))
    assert "min_insync_replicas=3" in line and line.endswith("; used: min_insync_replicas=2 "
                                                              "(Kafka caps it at the replication factor, brokers)")
    assert cli.main([*CHECK, "--set", "min_insync_replicas=3", "--json"]) == 3
    report = json.loads(capsys.readouterr().out)
    assert report["clamped"] == {"min_insync_replicas": {"value": 2, "why": "Kafka caps it at the replication "
                                                                              "factor, brokers"}}
    assert cli.main(CHECK) == 3  # min ISR 1 of 2: nothing clamped
    assert "used:" not in capsys.readouterr().out


def test_ascii_values_still_work(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([*CHECK, "--set", "brokers=+2", "--set", "crashes= 1 ", "--workers", "2"]) == 3


def test_bigint_takes_ascii_digits_only() -> None:
    from checker.itf import ItfError, from_itf

    assert from_itf({"#bigint": "-12345678901234567890"}) == -12345678901234567890
    for body in ("\u0663", "1_0", "\uff12"):
        with pytest.raises(ItfError, match="is not a decimal integer"):
            from_itf({"#bigint": body})
