"""`kcheck gate`: pass/fail logic, reports (text, JSON, Markdown, JUnit), --jobs, bad gate files,
the traces check, and the repo's gate file covering every variant.

The gate files here are tiny: the replication smoke preset with one crash, no other fault and one
message in flight (kafka-4.1 holds on 1,609 states, truncate-to-hw and hw-ignores-min-isr break
candidate_completeness within a few hundred) and the kraft smoke preset (hundreds of states).
"""
from __future__ import annotations

import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from checker import cli
from checker.gate import gate  # noqa: E402
from checker.config import load_definition  # noqa: E402

SMALL = ('preset = "smoke"\n'
         'set = {min_insync_replicas = 2, losses = 0, fences = 0, lossy_crashes = 0, max_in_flight = 1}\n')


def row(name: str, model: str, variant: str, expect: str, extra: str = "") -> str:
    body = SMALL if model == "replication" else 'preset = "smoke"\n'
    return (f'[[row]]\nname = "{name}"\nmodel = "{model}"\nvariant = "{variant}"\n'
            f'expect = "{expect}"\n{body}{extra}\n')


# What these small configurations never reach or enable (a holds row must say so: may_miss)
REPLICATION_MISSES = 'may_miss = ["leaderless", "lossy_crash", "isr_expansion_proposed", "isr_expanded"]\n'
# (kraft smoke has no fault budget: its fault actions are off by configuration, not missed)
KRAFT_MISSES = 'may_miss = ["HandleBeginQuorumEpochResponse"]\n'
HOLDS_ROWS = (row("replication-holds", "replication", "kafka-4.1", "holds", REPLICATION_MISSES)
              + row("kraft-holds", "kraft", "kafka-4.1", "holds", KRAFT_MISSES))
GOOD = (HOLDS_ROWS + row("R12", "replication", "hw-ignores-min-isr", "candidate_completeness")
        + row("R1", "replication", "truncate-to-hw", "candidate_completeness"))
# Each of the last three rows fails for a different reason.
MIXED = (HOLDS_ROWS
         + row("R1-said-to-hold", "replication", "truncate-to-hw", "holds")
         + row("R12-wrong-invariant", "replication", "hw-ignores-min-isr", "log_matching")
         + row("K3-blind", "kraft", "vote-not-persisted", "election_safety"))


def write(tmp_path: Path, text: str, name: str = "gate.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(["gate", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code, out, _ = run(capsys, *argv, "--json", "--quiet")
    return code, json.loads(out)


def without_timing(report: dict[str, Any]) -> dict[str, Any]:
    rows = [{k: v for k, v in r.items() if k not in ("seconds", "cpu_seconds")} for r in report["rows"]]
    return {**{k: v for k, v in report.items() if k not in ("seconds", "schedule")}, "rows": rows}


def test_a_finished_run_reports_its_critical_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The longest row bounds the wall time whatever the jobs; the rows' seconds over the jobs too."""
    path = str(write(tmp_path, MIXED))
    code, out, err = run(capsys, path, "--jobs", "2", "--json")
    report = json.loads(out)
    s, rows = report["schedule"], report["rows"]
    longest = max(rows, key=lambda r: r["seconds"])
    total = sum(r["seconds"] for r in rows)
    assert (s["jobs"], s["longest_row"]) == (2, longest["name"])
    assert s["longest_seconds"] == pytest.approx(longest["seconds"], abs=1e-3)
    assert s["rows_seconds"] == pytest.approx(total, abs=1e-2)
    assert s["least_wall_seconds"] == pytest.approx(max(longest["seconds"], total / 2), abs=1e-2)
    assert s["wall_seconds"] == pytest.approx(report["seconds"], abs=1e-3)
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"gate: critical path: {longest['name']} (") and "2 job(s) need at least" in last, err


# --- pass / fail -----------------------------------------------------------------------------------


def test_every_row_as_expected_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, str(write(tmp_path, GOOD)))
    assert code == 0, out + err
    assert re.search(r"^gate: 4 row\(s\) in \d+ s: every row passes$", out, re.M), out
    assert "[3/4] R12: started" in err and re.search(r"\[3/4\] R12: violation candidate_completeness, .* pass", err)


def test_a_row_off_its_expectation_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, report = run_json(capsys, str(write(tmp_path, MIXED)))
    assert code == 1
    by_name = {r["name"]: r for r in report["rows"]}
    assert [r["name"] for r in report["rows"]] == ["replication-holds", "kraft-holds", "R1-said-to-hold",
                                                   "R12-wrong-invariant", "K3-blind"]
    assert by_name["replication-holds"]["passed"] and by_name["kraft-holds"]["passed"]
    said = by_name["R1-said-to-hold"]
    assert not said["passed"] and said["outcome"] == "violation"
    assert "expected to hold, but invariant candidate_completeness is violated" in said["reason"]
    wrong = by_name["R12-wrong-invariant"]
    assert not wrong["passed"] and wrong["invariant"] == "candidate_completeness"
    assert "expected a violation of log_matching, but candidate_completeness is violated first" in wrong["reason"]
    blind = by_name["K3-blind"]
    assert not blind["passed"] and blind["outcome"] == "ok" and "went blind" in blind["reason"]
    assert (report["passed"], report["failed"]) == (2, 3)


def test_max_states_reached_is_a_failure_never_a_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = HOLDS_ROWS.replace('name = "kraft-holds"', 'name = "kraft-holds"\nmax_states = 50')
    code, report = run_json(capsys, str(write(tmp_path, text)))
    assert code == 1
    limited = report["rows"][1]
    assert limited["outcome"] == "incomplete" and not limited["passed"]
    assert "max_states 50" in limited["reason"] and limited["distinct_states"] == 50


def test_holds_row_reports_its_vacuity_gaps(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, str(write(tmp_path, HOLDS_ROWS)), "--quiet", "--only", "kraft-holds")
    assert code == 0
    assert "note kraft-holds: action HandleBeginQuorumEpochResponse never enabled (may_miss)" in out


def test_a_holds_row_that_misses_more_than_its_may_miss_fails(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    text = HOLDS_ROWS.replace('may_miss = ["HandleBeginQuorumEpochResponse"]', "")
    code, report = run_json(capsys, str(write(tmp_path, text)), "--only", "kraft-holds")
    assert code == 1
    r = report["rows"][0]
    assert not r["passed"] and r["outcome"] == "ok"
    assert r["reason"] == "vacuous: action HandleBeginQuorumEpochResponse never enabled (not in the row's may_miss)"
    code, _, err = run(capsys, str(write(tmp_path, HOLDS_ROWS.replace('"HandleBeginQuorumEpochResponse"', '"NoSuchThing"'))))
    assert code == 2 and "may_miss: 'NoSuchThing' is neither a sometimes-property, a temporal property nor an action" in err


# --- reports ---------------------------------------------------------------------------------------


def test_junit_parses_with_the_right_counts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    junit = tmp_path / "junit.xml"
    code, _, _ = run(capsys, str(write(tmp_path, MIXED)), "--quiet", "--junit", str(junit))
    assert code == 1
    suite = ET.parse(junit).getroot()
    assert suite.tag == "testsuite"
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("5", "3", "0")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["replication-holds", "kraft-holds", "R1-said-to-hold",
                                             "R12-wrong-invariant", "K3-blind"]
    failed = [c.get("name") for c in cases if c.find("failure") is not None]
    assert failed == ["R1-said-to-hold", "R12-wrong-invariant", "K3-blind"]
    assert "went blind" in cases[4].find("failure").get("message")
    assert all(float(c.get("time")) >= 0 for c in cases)


def test_junit_escapes_what_xml_cannot_hold_raw(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = HOLDS_ROWS.replace('"kraft-holds"', '"kraft <holds> & \\"quoted\\""')
    junit = tmp_path / "junit.xml"
    code, _, _ = run(capsys, str(write(tmp_path, text)), "--quiet", "--junit", str(junit),
                     "--only", 'kraft <holds> & "quoted"')
    assert code == 0
    assert ET.parse(junit).getroot().find("testcase").get("name") == 'kraft <holds> & "quoted"'


def test_markdown_has_one_line_per_row(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    md = tmp_path / "gate.md"
    code, _, _ = run(capsys, str(write(tmp_path, MIXED)), "--quiet", "--markdown", str(md))
    assert code == 1
    lines = md.read_text().splitlines()
    table = [line for line in lines if line.startswith("|")]
    assert table[0].startswith("| row | bug id | model | variant | preset | expected | outcome | result |")
    body = table[2:]
    assert [line.split(" | ")[0].lstrip("| ") for line in body] == [
        "replication-holds", "kraft-holds", "R1-said-to-hold", "R12-wrong-invariant", "K3-blind"]
    assert [line.split(" | ")[7] for line in body] == ["pass", "pass", "FAIL", "FAIL", "FAIL"]
    assert body[3].split(" | ")[1] == "R12" and body[0].split(" | ")[1] == "-"
    assert "smoke + min_insync_replicas=2" in body[0]
    assert lines[-1] == "gate: 5 row(s): 3 row(s) FAIL"


def test_jobs_2_gives_the_same_report_as_jobs_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(write(tmp_path, MIXED))
    code1, one = run_json(capsys, path, "--jobs", "1")
    code2, two = run_json(capsys, path, "--jobs", "2")
    assert code1 == code2 == 1
    assert without_timing(one) == without_timing(two)
    md1, md2 = tmp_path / "1.md", tmp_path / "2.md"
    run(capsys, path, "--quiet", "--markdown", str(md1))
    run(capsys, path, "--quiet", "--jobs", "2", "--markdown", str(md2))

    def cells(p: Path) -> list[list[str]]:  # every column but seconds
        return [[c for i, c in enumerate(line.split(" | ")) if i != 9] for line in p.read_text().splitlines()]

    assert cells(md1) == cells(md2)

    _, _, err = run(capsys, path, "--jobs", "2", "--json")  # two rows really start before one finishes
    assert [line.endswith(": started") for line in err.splitlines()[:2]] == [True, True], err


def test_only_runs_the_named_rows_in_file_order(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, report = run_json(capsys, str(write(tmp_path, GOOD)), "--only", "R1", "--only", "R12")
    assert code == 0
    assert [r["name"] for r in report["rows"]] == ["R12", "R1"]


# --- bad input -------------------------------------------------------------------------------------

BAD = {
    "unknown row key": (GOOD + row("x", "kraft", "kafka-4.1", "holds", "colour = 1\n"),
                        "row 5 (x): unknown key 'colour'"),
    "missing key": (GOOD.replace('expect = "holds"\n', "", 1), "row 1 (replication-holds): missing key 'expect'"),
    "unknown model": (GOOD.replace('model = "kraft"', 'model = "zookeeper"'), "unknown model 'zookeeper'"),
    "unknown variant": (GOOD.replace('"truncate-to-hw"', '"truncate-to-lso"'), "unknown variant 'truncate-to-lso'"),
    "unknown preset": (HOLDS_ROWS.replace('preset = "smoke"', 'preset = "huge"'), "unknown preset 'huge'"),
    "unknown config key": (HOLDS_ROWS.replace("losses = 0", "loses = 0"), "unknown key 'loses'"),
    "config value out of range": (HOLDS_ROWS.replace("min_insync_replicas = 2", "min_insync_replicas = 9"),
                                  "out of range"),
    "expect not an invariant": (GOOD.replace('expect = "candidate_completeness"', 'expect = "durability"', 1),
                                "expect 'durability' is not an invariant of model replication"),
    "duplicate name": (GOOD.replace('name = "R1"', 'name = "R12"'), "duplicate row name 'R12'"),
    "same run twice": (GOOD + row("R1-again", "replication", "truncate-to-hw", "candidate_completeness"),
                       "rows 'R1' and 'R1-again' check the same model, variant and configuration"),
    "no holds row on the bug row's configuration": (
        row("kraft-holds", "kraft", "kafka-4.1", "holds") + row("R12", "replication", "hw-ignores-min-isr",
                                                                "candidate_completeness"),
        "bug row 'R12' has no kafka-4.1 \"holds\" row of model replication"),
    "bad max_states": (HOLDS_ROWS.replace('name = "kraft-holds"', 'name = "kraft-holds"\nmax_states = 0'),
                       "'max_states' must be a positive integer"),
    "set is not a table": (row("k", "kraft", "kafka-4.1", "holds", "set = 3\n"), "'set' must be a table"),
    "no rows": ("", "no rows"),
    "top-level key": ('title = "x"\n' + GOOD, "unknown top-level key 'title'"),
    "malformed TOML": ("[[row]\n", "malformed TOML"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_gate_file_is_one_line_and_exit_2(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text, message = BAD[case]
    code, out, err = run(capsys, str(write(tmp_path, text)))
    assert code == 2, (out, err)
    assert out == "" and err.count("\n") == 1 and err.startswith("kcheck: error: "), err
    assert message in err, err
    assert "started" not in err  # validated before anything runs


@pytest.mark.parametrize("argv, message", [
    (["missing.toml"], "config file missing.toml: no such file"),
    (["GATE", "--only", "R7"], "--only R7: no such row"),
    (["GATE", "--jobs", "0"], "expected a positive integer"),
    (["GATE", "--junit", "/nonexistent/dir/j.xml"], "--junit /nonexistent/dir/j.xml: directory"),
    (["GATE", "--traces", "a", "--write-traces", "b"], "not allowed with argument"),
    (["GATE", "--traces", "/nonexistent/traces"], "--traces /nonexistent/traces: no such directory"),
])
def test_bad_arguments_are_one_line_and_exit_2(argv: list[str], message: str, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = str(write(tmp_path, GOOD))
    code, out, err = run(capsys, *[path if a == "GATE" else a for a in argv])
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err, err


def test_config_file_is_relative_to_the_gate_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "tiny.toml").write_text("voters = 2\nmax_epoch = 1\nmax_log = 2\nmax_in_flight = 1\n"
                                                   "faults = 0\n")
    text = ('[[row]]\nname = "tiny"\nmodel = "kraft"\nvariant = "kafka-4.1"\nconfig = "configs/tiny.toml"\n'
            'expect = "holds"\n' + KRAFT_MISSES)
    code, report = run_json(capsys, str(write(tmp_path, text)))
    assert code == 0 and report["rows"][0]["configuration"] == "default + tiny.toml"
    assert report["rows"][0]["config_file"] == str(tmp_path / "configs" / "tiny.toml")
    bad = text.replace("tiny.toml", "absent.toml")
    code, _, err = run(capsys, str(write(tmp_path, bad, "bad.toml")))
    assert code == 2 and "absent.toml: no such file" in err


def test_missing_default_gate_file_names_the_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(gate, "default_gate_file", lambda: tmp_path / "spec" / "gate.toml")
    code, _, err = run(capsys)
    assert code == 2 and f"the default gate file {tmp_path / 'spec' / 'gate.toml'} does not exist" in err


# --- traces ----------------------------------------------------------------------------------------


def test_write_traces_then_traces_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("checker.traces.itf")
    path = str(write(tmp_path, GOOD))
    traces = tmp_path / "traces"
    code, _, err = run(capsys, path, "--write-traces", str(traces))
    assert code == 0, err
    written = sorted(str(p.relative_to(traces)) for p in traces.rglob("*"))
    assert written == ["replication", "replication/hw-ignores-min-isr.itf.json", "replication/hw-ignores-min-isr.txt",
                       "replication/truncate-to-hw.itf.json", "replication/truncate-to-hw.txt"]
    doc = json.loads((traces / "replication" / "truncate-to-hw.itf.json").read_text())
    assert doc["#meta"]["invariant"] == "candidate_completeness" and doc["#meta"]["bug_id"] == "R1"
    text = (traces / "replication" / "truncate-to-hw.txt").read_text()
    assert text.startswith("R1 replication truncate-to-hw (preset smoke):")
    assert "invariant candidate_completeness is violated" in text

    code, report = run_json(capsys, path, "--traces", str(traces))
    assert code == 0 and report["failed"] == 0

    # A different counterexample (here: one action edited) fails the row, naming the file and the step.
    r1 = traces / "replication" / "truncate-to-hw.itf.json"
    original = r1.read_text()
    steps = len(doc["states"]) - 1
    doc["states"][3]["mbt::actionTaken"] = "Fetch(follower=9)"
    r1.write_text(json.dumps(doc))
    code, report = run_json(capsys, path, "--traces", str(traces))
    assert code == 1
    reason = {r["name"]: r["reason"] for r in report["rows"] if not r["passed"]}
    assert list(reason) == ["R1"]
    assert str(r1) in reason["R1"] and "first difference at step 3" in reason["R1"]
    assert "checked in: Fetch(follower=9)" in reason["R1"]

    def r1_reason(text: str) -> str:
        r1.write_text(text)
        code, report = run_json(capsys, path, "--traces", str(traces), "--only", "R1")
        assert code == 1
        return str(report["rows"][0]["reason"])

    shorter = json.loads(original)
    shorter["states"] = shorter["states"][:-1]
    assert (f"the checked-in trace has {steps - 1} step(s), the regenerated one {steps}; first difference at "
            f"step {steps}") in r1_reason(json.dumps(shorter))
    assert "the states agree; the header (vars or #meta) or the formatting differs" in r1_reason(
        json.dumps(json.loads(original)))  # the same document on one line: not byte for byte
    assert "not valid JSON" in r1_reason(original[:-10])
    r1.write_text(original)
    assert run_json(capsys, path, "--traces", str(traces))[0] == 0

    # A missing trace.
    (traces / "replication" / "hw-ignores-min-isr.itf.json").unlink()
    code, report = run_json(capsys, path, "--traces", str(traces), "--only", "R12")
    assert code == 1 and "hw-ignores-min-isr.itf.json is missing" in report["rows"][0]["reason"]


def test_two_bug_rows_of_one_variant_cannot_share_a_trace_file(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("checker.traces.itf")
    other = ('[[row]]\nname = "R12-smoke-3"\nmodel = "replication"\nvariant = "hw-ignores-min-isr"\n'
             'expect = "candidate_completeness"\npreset = "smoke"\n'
             'set = {min_insync_replicas = 2, losses = 0, fences = 0, lossy_crashes = 0, max_in_flight = 1, brokers = 3}\n')
    holds = other.replace('"R12-smoke-3"', '"holds-3"').replace('"hw-ignores-min-isr"', '"kafka-4.1"').replace(
        '"candidate_completeness"', '"holds"')
    code, _, err = run(capsys, str(write(tmp_path, GOOD + other + holds)), "--write-traces", str(tmp_path / "t"))
    assert code == 2 and "would share the trace file replication/hw-ignores-min-isr.itf.json" in err


# --- the repo's gate file --------------------------------------------------------------------------


def _suggested_row(model: str, v: Any) -> str:
    """The TOML row spec/gate.toml needs for variant `v`, ready to paste."""
    name = f"{v.bug_id}-{v.name}" if v.bug_id else f"{model}-{v.name}"
    return (f'\n# {v.reference}\n[[row]]\nname = "{name}"\nmodel = "{model}"\nvariant = "{v.name}"\n'
            f'preset = "{v.preset}"\nexpect = "{v.expect}"')


def test_gate_file_covers_every_variant() -> None:
    """Every variant of both models has a row with its declared expectation on its declared preset.
    On failure the message lists each missing row, ready to paste into spec/gate.toml."""
    rows = gate.load_gate(gate.default_gate_file())  # also validates the whole file
    have = {(r.model, r.variant, r.preset, r.expect) for r in rows if r.config_file is None and not r.overrides}
    missing = []
    for model in ("replication", "kraft"):
        for v in load_definition(model).variants:
            if v.name != gate.REFERENCE_VARIANT and (model, v.name, v.preset, v.expect) not in have:
                stale = [r.name for r in rows if (r.model, r.variant) == (model, v.name)]
                note = f"\n# replaces row {', '.join(stale)} (the variant's preset or expect changed)" if stale else ""
                missing.append(note + _suggested_row(model, v))
        assert any(r.model == model and r.variant == gate.REFERENCE_VARIANT and r.preset == "default"
                   for r in rows), f"no {model} kafka-4.1 row on the default preset"
    assert not missing, ("spec/gate.toml lacks these rows (a new preset also needs its kafka-4.1 \"holds\" "
                         "row):\n" + "\n".join(missing))


def test_gate_file_row_names_follow_the_bug_ids() -> None:
    for r in gate.load_gate(gate.default_gate_file()):
        expected = f"{r.bug_id}-{r.variant}" if r.bug_id else f"{r.model}-{r.variant}-{r.preset}"
        assert r.name == expected, (r.name, expected)


def test_ci_runs_the_gate_as_documented() -> None:
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    line = next(line for line in ci if " gate " in line and not line.startswith("#"))
    assert line == ".venv/bin/kcheck gate --jobs 2 --traces traces --junit .ci/gate-junit.xml --markdown .ci/gate.md"
    assert ci.index(line) > next(i for i, text in enumerate(ci) if "pytest" in text), "the gate runs after the tests"
    assert line.replace(".venv/bin/", "") in (ROOT / "docs" / "gate.md").read_text()


def test_a_row_whose_model_raises_fails_alone(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    import checker.search.run

    real = checker.search.run.explore

    def explore(model: Any, **kwargs: Any) -> Any:
        if model.name == "kraft":
            raise RuntimeError("model bug\nsecond line")
        return real(model, **kwargs)

    monkeypatch.setattr(checker.search.run, "explore", explore)
    code, report = run_json(capsys, str(write(tmp_path, HOLDS_ROWS)))
    assert code == 1
    assert [(r["outcome"], r["passed"]) for r in report["rows"]] == [("ok", True), ("error", False)]
    assert report["rows"][1]["reason"].startswith("error: RuntimeError: model bug second line (test_gate.py:")


def test_interrupted_is_exit_3_without_a_report_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    import checker.search.run

    def explore(model: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(checker.search.run, "explore", explore)
    md = tmp_path / "gate.md"
    code, out, err = run(capsys, str(write(tmp_path, HOLDS_ROWS)), "--markdown", str(md))
    assert code == 3 and out == "" and not md.exists()  # the row cut short is not reported as a result
    assert "[2/2]" not in err
    assert "gate interrupted: a partial result, 0 of 2 row(s) finished (not finished: replication-holds, kraft-holds);" in err


def dying_run_row(row: Any, workers: int, want_traces: bool) -> Any:
    """A worker that dies the way an OOM-killed one does (module level, so a worker can unpickle it)."""
    import os

    if row.name == "kraft-holds":
        os._exit(9)
    return REAL_RUN_ROW(row, workers, want_traces)


REAL_RUN_ROW = gate.run_row


def test_a_dead_worker_fails_rows_never_passes_them(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(gate, "run_row", dying_run_row)
    code, report = run_json(capsys, str(write(tmp_path, GOOD)), "--jobs", "2")
    assert code == 1
    outcome = {r["name"]: (r["outcome"], r["passed"]) for r in report["rows"]}
    assert outcome["kraft-holds"] == ("error", False)
    assert "worker process" in report["rows"][1]["reason"]
    assert all(passed or result == "error" for result, passed in outcome.values())


def test_invariants_restrict_the_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    only = row("R1-structural-only", "replication", "truncate-to-hw", "structural", 'invariants = ["structural"]\n')
    code, report = run_json(capsys, str(write(tmp_path, HOLDS_ROWS + only)), "--only", "R1-structural-only")
    assert code == 1  # R1 breaks candidate_completeness, which this row does not check
    assert report["rows"][0]["outcome"] == "ok" and report["rows"][0]["invariants"] == ["structural"]
    bad = HOLDS_ROWS + only.replace('"structural"]', '"durability"]')
    code, _, err = run(capsys, str(write(tmp_path, bad, "bad.toml")))
    assert code == 2 and "'durability' is not an invariant" in err
    bad = HOLDS_ROWS + only.replace('expect = "structural"', 'expect = "log_matching"')
    code, _, err = run(capsys, str(write(tmp_path, bad, "bad2.toml")))
    assert code == 2 and "expect 'log_matching' is not among the invariants checked (structural)" in err


def test_variant_invariants_are_the_default() -> None:
    """A variant that declares the invariants its story is checked with (R2: log_matching) gets them."""
    for r in gate.load_gate(gate.default_gate_file()):
        declared = next(v for v in load_definition(r.model).variants if v.name == r.variant)
        assert r.invariants == tuple(getattr(declared, "invariants", ())), r.name


def test_a_variant_row_that_expects_holds_is_judged_for_vacuity(capsys: pytest.CaptureFixture[str],
                                                                 tmp_path: Path) -> None:
    """A variant row expecting "holds" is judged for vacuity like a Kafka 4.1 row: with the smoke
    preset's misses named it passes; without them it fails on the action it never enables."""
    ok = row("K8-on-smoke", "kraft", "no-check-quorum", "holds", KRAFT_MISSES.replace('["', '["CheckQuorumTimeout", "'))
    code, report = run_json(capsys, str(write(tmp_path, ok)))
    assert code == 0, [(r["name"], r["reason"]) for r in report["rows"]]
    assert report["rows"][0]["liveness"] == "ok"
    blind = row("K8-on-smoke", "kraft", "no-check-quorum", "holds", KRAFT_MISSES)
    code, report = run_json(capsys, str(write(tmp_path, blind, "blind.toml")))
    assert code == 1 and "action CheckQuorumTimeout never enabled" in report["rows"][0]["reason"]


def test_may_miss_may_name_a_temporal_property_whose_antecedent_is_never_reached(tmp_path: Path) -> None:
    """A holds row whose liveness pass never reaches a temporal property's antecedent (or a timely
    invariant's guard) fails as vacuous, unless its may_miss names that property."""
    def verdict(extra: str) -> Any:
        path = write(tmp_path, row("kraft-holds", "kraft", "kafka-4.1", "holds", extra))
        r = gate.load_gate(path)[0]
        out = gate.Outcome(r.name, "ok", 542, 1000, 17, liveness="unreached",
                           unreached_antecedents=["leader_not_disrupted"])
        return gate.judge(r, out)

    blind = verdict("")
    assert not blind.passed and "antecedent of leader_not_disrupted" in blind.reason
    excused = verdict('may_miss = ["leader_not_disrupted"]\n')
    assert excused.passed and any("leader_not_disrupted" in n for n in excused.notes)


def test_html_dir_draws_each_passing_bug_row(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    pages = tmp_path / "pages"
    code, report = run_json(capsys, str(write(tmp_path, GOOD)), "--html-dir", str(pages))
    assert code == 0
    drawn = sorted(str(p.relative_to(pages)) for p in pages.rglob("*.html"))
    assert drawn == ["replication/hw-ignores-min-isr.html", "replication/truncate-to-hw.html"]
    text = (pages / "replication" / "truncate-to-hw.html").read_text()
    assert "candidate_completeness" in text and "<script src" not in text


# --- schedule rows (checker/search/schedule.py) -------------------------------------------------------

# K5 as a schedule (four voters, 31 steps): leader 0 of epoch 1 removes 3 before its HW, leader 2
# of epoch 2 (votes of 1, 3) removes 0 and commits that with 3, and 0 wins epoch 3 with 1's vote.
K5_STORY = [
    "ElectionTimeout(node=0)", "HandleVoteRequest(src=0, dst=1)", "HandleVoteRequest(src=0, dst=2)",
    "HandleVoteResponse(src=1, dst=0)", "HandleVoteResponse(src=2, dst=0)", "HandleVoteRequest(src=0, dst=1)",
    "HandleVoteRequest(src=0, dst=2)", "HandleVoteResponse(src=1, dst=0)", "HandleVoteResponse(src=2, dst=0)",
    "RemoveVoter(leader=0, node=3)", "ElectionTimeout(node=2)", "HandleVoteRequest(src=2, dst=1)",
    "HandleVoteRequest(src=2, dst=3)", "HandleVoteResponse(src=1, dst=2)", "HandleVoteResponse(src=3, dst=2)",
    "HandleVoteRequest(src=2, dst=1)", "HandleVoteRequest(src=2, dst=3)", "HandleVoteResponse(src=1, dst=2)",
    "HandleVoteResponse(src=3, dst=2)", "RemoveVoter(leader=2, node=0)", "HandleBeginQuorumEpochRequest(src=2, dst=3)",
    "HandleFetchRequest(src=3, dst=2)", "HandleFetchResponse(src=2, dst=3)", "HandleFetchRequest(src=3, dst=2)",
    "CheckQuorumTimeout(node=0)", "ElectionTimeout(node=0)", "ElectionTimeout(node=0)",
    "HandleVoteRequest(src=0, dst=1)", "HandleVoteResponse(src=1, dst=0)", "HandleVoteRequest(src=0, dst=1)",
    "HandleVoteResponse(src=1, dst=0)",
]


def _k5_schedule() -> list[str]:
    return list(K5_STORY)


def schedule_row(name: str, variant: str, expect: str, schedule: Any, extra: str = "") -> str:
    steps = json.dumps(schedule) if isinstance(schedule, list) else f'"{schedule}"'
    return (f'[[row]]\nname = "{name}"\nmodel = "kraft"\nvariant = "{variant}"\npreset = "voter-race"\n'
            f'expect = "{expect}"\nschedule = {steps}\n{extra}\n')


def test_schedule_rows_replay_a_story_the_search_cannot_reach(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """K5 follows its schedule to the loss of a committed entry; Kafka 4.1 refuses the first
    RemoveVoter (no HW yet); the trace header says the schedule was replayed."""
    k5 = _k5_schedule()
    text = (schedule_row("K5", "voter-change-before-hw", "leader_completeness", k5)
            + schedule_row("kraft-4.1-race", "kafka-4.1", "holds", "K5", "refused_at = 10\n"))
    code, report = run_json(capsys, str(write(tmp_path, text)), "--write-traces", str(tmp_path / "t"))
    assert code == 0, [r["reason"] for r in report["rows"]]
    bug, kafka = report["rows"]
    assert (bug["outcome"], bug["invariant"], bug["trace_length"]) == ("violation", "leader_completeness", len(k5))
    assert kafka["refused_at"] == 10 and kafka["refused"] == "RemoveVoter(leader=0, node=3)"
    assert "refused" in kafka["reason"] and kafka["distinct_states"] == 10
    header = (tmp_path / "t" / "kraft" / "voter-change-before-hw.txt").read_text().splitlines()[2]
    assert "replayed, not found by a search" in header


def test_a_schedule_row_off_its_expectation_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The variant under a "holds" schedule row fails on the violation; a bug row whose schedule
    stops short of the violation, or whose variant refuses a step (without pre-vote the second
    round of Vote requests is not there), fails too."""
    k5 = _k5_schedule()
    text = (schedule_row("holds-on-bug", "voter-change-before-hw", "holds", k5)
            + schedule_row("short", "voter-change-before-hw", "leader_completeness", k5[:20])
            + schedule_row("kraft-short", "kafka-4.1", "holds", "short")
            + schedule_row("refused", "no-pre-vote", "leader_completeness", k5)
            + schedule_row("kraft-race", "kafka-4.1", "holds", k5))
    code, report = run_json(capsys, str(write(tmp_path, text)))
    reasons = {r["name"]: (r["passed"], r["reason"]) for r in report["rows"]}
    assert code == 1
    assert reasons["holds-on-bug"] == (False, ("expected to hold, but invariant leader_completeness is violated "
                                               "after 31 step(s) of the schedule"))
    assert reasons["short"] == (False, ("expected the schedule to violate leader_completeness, but it ran to its "
                                        "end with every invariant holding"))
    assert reasons["refused"][0] is False and "step 6 of 31, HandleVoteRequest(src=0, dst=1)" in reasons["refused"][1]
    assert reasons["kraft-short"][0] and reasons["kraft-race"][0]


def test_a_holds_schedule_row_checks_which_step_is_refused(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """With refused_at, Kafka 4.1 must refuse exactly that step: refusing another one (here the
    variant without pre-vote refuses step 6), or none, fails the row."""
    k5 = _k5_schedule()
    text = (schedule_row("kraft-race", "kafka-4.1", "holds", k5, "refused_at = 10\n")
            + schedule_row("no-pre-vote-race", "no-pre-vote", "holds", k5, "refused_at = 10\n")
            + schedule_row("kraft-short", "kafka-4.1", "holds", k5[:9], "refused_at = 9\n"))
    code, report = run_json(capsys, str(write(tmp_path, text)))
    reasons = {r["name"]: (r["passed"], r["reason"]) for r in report["rows"]}
    assert code == 1 and reasons["kraft-race"][0]
    assert reasons["no-pre-vote-race"] == (False, "expected step 10 of the schedule to be refused, but step 6 is refused")
    assert reasons["kraft-short"] == (False, "expected step 9 of the schedule to be refused, but no step is refused")


@pytest.mark.parametrize("extra,message", [
    ('schedule = ["Elect(node=0)"]\n', "schedule: 'Elect(node=0)' is not an action of model kraft"),
    ('schedule = ["ElectionTimeout(node=0)"]\nmax_states = 5\n', "'max_states' does not apply to a schedule row"),
    ('schedule = []\n', "'schedule' must be a non-empty list of actions"),
    ('schedule = "nowhere"\n', "schedule = 'nowhere' names no row with a list of actions"),
    ('schedule = ["ElectionTimeout(node=0)"]\nrefused_at = 2\n', "'refused_at' applies to a \"holds\" schedule row"),
    ('refused_at = 1\n', "'refused_at' applies to a \"holds\" schedule row"),
])
def test_bad_schedule_rows_are_one_line(extra: str, message: str, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    text = HOLDS_ROWS + row("kraft-s", "kraft", "kafka-4.1", "holds", extra)
    code, _, err = run(capsys, str(write(tmp_path, text)))
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err


def test_a_bug_schedule_row_needs_kafka_4_1_on_the_same_schedule(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    k5 = _k5_schedule()
    text = (schedule_row("K5", "voter-change-before-hw", "leader_completeness", k5)
            + schedule_row("kraft-other", "kafka-4.1", "holds", k5[:10]))
    code, _, err = run(capsys, str(write(tmp_path, text)))
    assert code == 2 and "has no kafka-4.1 \"holds\" row" in err and "and the same schedule" in err


# --- round rows (checker/search/rounds.py) ---------------------------------------------------------------

def round_row(name: str, variant: str, expect: str, rounds: int, extra: str = "") -> str:
    return (f'[[row]]\nname = "{name}"\nmodel = "kraft"\nvariant = "{variant}"\npreset = "disk-loss"\n'
            f'expect = "{expect}"\nrounds = {rounds}\n{extra}\n')


DISK_LOSS_ROUND_MISSES = 'may_miss = ["prevote_lost", "ClientAppend", "SendFetch", "HandleBeginQuorumEpochResponse"]\n'


def test_round_rows_search_by_rounds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """K4 is found by a search by rounds (its trace in single steps, the header saying how it was
    found); Kafka 4.1 holds within the same bound, and says so."""
    text = (round_row("K4", "same-identity-after-disk-loss", "election_safety", 4)
            + round_row("kraft-4.1-disk", "kafka-4.1", "holds", 4, DISK_LOSS_ROUND_MISSES))
    code, report = run_json(capsys, str(write(tmp_path, text)), "--write-traces", str(tmp_path / "t"))
    assert code == 0, [r["reason"] for r in report["rows"]]
    bug, kafka = report["rows"]
    assert bug["outcome"] == "violation" and bug["depth"] <= 4 < bug["trace_length"] and bug["rounds"] == 4
    header = (tmp_path / "t" / "kraft" / "same-identity-after-disk-loss.txt").read_text().splitlines()[2]
    assert "found by the round search" in header and f"after {bug['trace_length']} step(s)" in header
    assert kafka["reason"].startswith("every invariant holds") and "rounds" in kafka["reason"]
    assert kafka["liveness"] is None and kafka["distinct_states"] > 10


def test_a_round_row_that_misses_something_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Vacuity applies to round rows too: what the rounds never reach must be in may_miss."""
    text = (round_row("K4", "same-identity-after-disk-loss", "election_safety", 4)
            + round_row("kraft-4.1-disk", "kafka-4.1", "holds", 4))
    code, report = run_json(capsys, str(write(tmp_path, text)))
    kafka = report["rows"][1]
    assert code == 1 and not kafka["passed"] and "never enabled" in kafka["reason"]


@pytest.mark.parametrize("extra,message", [
    ('rounds = 3\nschedule = ["ElectionTimeout(node=0)"]\n', "a row has a 'schedule' or 'rounds', not both"),
    ('rounds = 3\nworkers = 2\n', "'workers' does not apply to a round row"),
    ('rounds = 0\n', "'rounds' must be a positive integer"),
    ('rounds = "many"\n', "'rounds' must be a positive integer"),
])
def test_bad_round_rows_are_one_line(extra: str, message: str, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    text = HOLDS_ROWS + row("kraft-r", "kraft", "kafka-4.1", "holds", extra)
    code, _, err = run(capsys, str(write(tmp_path, text)))
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err


def test_rounds_need_a_model_with_rounds_and_a_matching_kafka_row(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, str(write(tmp_path, HOLDS_ROWS + row("r", "replication", "kafka-4.1", "holds",
                                                                    "rounds = 2\n"))))
    assert code == 2 and "model replication defines no rounds" in err
    text = (round_row("K4", "same-identity-after-disk-loss", "election_safety", 4)
            + round_row("kraft-4.1-disk", "kafka-4.1", "holds", 3, DISK_LOSS_ROUND_MISSES))
    code, _, err = run(capsys, str(write(tmp_path, text)))
    assert code == 2 and "has no kafka-4.1 \"holds\" row" in err and "and rounds = 4" in err
