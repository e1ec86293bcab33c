"""`kcheck mutate` (checker/mutation): the operators, in-memory imports, the fates of fixed
mutants of the toy model and of both real models, judgements, the baseline check, bad input."""
from __future__ import annotations

import hashlib
import json
import sys
import textwrap
from pathlib import Path

import pytest

import model
from checker.cli.commands import main
from checker.gate.mutation.operators import OPERATORS, Probe, mutants, transform

ROOT = Path(__file__).resolve().parents[1]

SOURCE = textwrap.dedent('''
    def f(s, xs, k):
        if s.a < k and not s.b:
            return None
        if s.c == 1 or s.d:
            pass
        top = min(xs[:k], default=0)
        return s._replace(a=s.a + 1, b=True), top
''')


def test_each_operator_makes_its_mistake() -> None:
    found = {(m.operator, m.before, m.after) for m in mutants("mod", SOURCE)}
    assert ("compare", "s.a < k", "s.a <= k") in found
    assert ("compare", "s.c == 1", "s.c != 1") in found
    assert ("drop-conjunct", "s.a < k and (not s.b)", "not s.b") in found
    assert ("drop-disjunct", "s.c == 1 or s.d", "s.d") in found
    assert ("drop-guard", "s.a < k and (not s.b)", "False") in found
    assert ("drop-not", "not s.b", "s.b") in found
    assert ("off-by-one", "s.a + 1", "s.a") in found
    assert ("off-by-one", "xs[:k]", "xs[:k + 1]") in found
    assert ("min-max", "min(xs[:k], default=0)", "max(xs[:k], default=0)") in found
    assert ("drop-field", "s._replace(a=s.a + 1, b=True)", "s._replace(b=True)") in found
    assert ("flip-bool", "True", "False") in found
    # the `if s.c == 1 or s.d: pass` body does not leave: no drop-guard there
    assert not any(m.operator == "drop-guard" and "s.c" in m.before for m in mutants("mod", SOURCE))
    assert {m.operator for m in mutants("mod", SOURCE)} == set(OPERATORS)


def test_ids_are_stable_and_unique() -> None:
    first, second = mutants("mod", SOURCE), mutants("mod", SOURCE)
    assert [m.id for m in first] == [m.id for m in second]
    assert len({m.id for m in first}) == len(first)
    assert all(m.id.startswith("mod:f:") for m in first)


def _run(tree, **names):
    namespace = dict(names)
    exec(compile(tree, "mod.py", "exec"), namespace)
    return namespace["f"]


def test_a_mutant_changes_only_its_expression() -> None:
    from collections import namedtuple

    S = namedtuple("S", "a b c d")
    original = _run(transform("mod", SOURCE)[0])
    assert original(S(1, False, 0, 0), [5, 1, 7], 2) is None  # the guard: 1 < 2 and not False
    assert original(S(3, False, 0, 0), [5, 1, 7], 2) == (S(4, True, 0, 0), 1)
    bumped = next(m for m in mutants("mod", SOURCE) if (m.operator, m.after) == ("off-by-one", "s.a"))
    mutant = _run(transform("mod", SOURCE, apply=bumped.id)[0])
    assert mutant(S(3, False, 0, 0), [5, 1, 7], 2) == (S(3, True, 0, 0), 1)  # the epoch is not bumped


def test_probe_marks_a_mutant_only_where_its_value_differs() -> None:
    chosen = {m.id for m in mutants("mod", SOURCE) if m.before == "s.a < k"}
    assert len(chosen) == 1
    tree, sites = transform("mod", SOURCE, probe=chosen)
    probe = Probe()
    f = _run(tree, **probe.names(sites))
    from collections import namedtuple

    S = namedtuple("S", "a b c d")
    f(S(5, False, 0, 0), [1], 2)
    assert probe.executed == chosen and not probe.infected  # 5 < 2 and 5 <= 2 agree
    f(S(2, False, 0, 0), [1], 2)
    assert probe.infected == chosen  # 2 < 2 and 2 <= 2 differ


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(model.MODELS, "toy", "tests.toymodel")


def _mutate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["mutate", *args])
    out, err = capsys.readouterr()
    return code, out, err


def _fates(report: dict) -> dict[str, dict]:
    return {m["id"].split(":", 1)[1]: m for m in report["mutants"]}


def test_toy_kill_matrix(toy: None, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _mutate(capsys, "--model", "toy", "--presets", "tight", "--jobs", "1", "--json",
                           "--judgements", str(ROOT / "spec" / "mutants.toml"))
    report = json.loads(out)
    fates = _fates(report)
    killed = fates["ToyModel.actions:compare:0"]  # x < k becomes x <= k: x reaches 3 and 3 + 2 == limit 5
    assert killed["status"] == "killed"
    assert killed["killed_by"]["row"] == "toy-kafka-4.1-tight"
    assert killed["killed_by"]["property"] == "sum_below_limit" and killed["killed_by"]["steps"] == 5
    # x no longer moves: no invariant breaks, but (k, k) is never reached, as the gate checks
    stuck = fates["ToyModel.next_state:off-by-one:0"]
    assert stuck["status"] == "killed" and stuck["killed_by"]["outcome"] == "vacuous"
    assert stuck["killed_by"]["property"] == "both_max"
    assert fates["ToyModel.next_state:drop-guard:2"]["killed_by"]["property"] == "Reset"  # never enabled
    assert fates["ToyModel.next_state:off-by-one:1"]["status"] == "survived"  # x jumps by 2: other states, no bad one
    assert fates["ToyModel.__init__:compare:0"]["status"] == "unchanged"  # x + y never reaches the limit
    assert fates["ToyModel.actions:compare:2"]["status"] == "same-states"  # Reset is enabled elsewhere, to (0, 0)
    s = report["summary"]
    assert (s["killed"], s["survived"], s["unexplained"]) == (7, 2, 2)
    assert s["safety_kill_rate"] == round(7 / 9, 4)
    assert code == 1  # unexplained survivors
    rows = {r["name"]: r for r in report["rows"]}
    assert rows["toy-kafka-4.1-tight"]["kafka_states"] == 9


def test_text_report_names_survivors_with_their_source_line(toy: None, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _mutate(capsys, "--model", "toy", "--presets", "tight", "--jobs", "1",
                             "--only", "*next_state:off-by-one:1", "--only", "*actions:compare:0")
    assert code == 1
    assert "kill matrix:" in out and "tight / sum_below_limit" in out
    assert "toymodel.py:60 in ToyModel.next_state (off-by-one): `s.x + 1` -> `s.x + 2`" in out
    assert "return Counters(s.x + 1, s.y)" in out and "UNEXPLAINED" in out
    assert "safety kill rate: 1 of 2 non-equivalent safety mutants (50.0%)" in out
    assert "mutate: " in err  # progress on stderr


def test_judgements_explain_survivors_and_stale_ones_are_reported(toy: None, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    j = tmp_path / "mutants.toml"
    j.write_text(textwrap.dedent('''
        [[judgement]]
        mutant = "tests.toymodel:ToyModel.next_state:off-by-one:1"
        before = "s.x + 1"
        after = "s.x + 2"
        verdict = "gap"
        reason = "no invariant bounds x alone"

        [[judgement]]
        mutant = "tests.toymodel:ToyModel.next_state:off-by-one:0"
        before = "s.x - 1"
        after = "s.x"
        verdict = "equivalent"
        reason = "stale on purpose"
    '''))
    args = ["--model", "toy", "--presets", "tight", "--jobs", "1", "--judgements", str(j), "--no-matrix"]
    code, out, _ = _mutate(capsys, *args, "--only", "*next_state:off-by-one:1")
    assert code == 0, out  # its one survivor is judged (a known gap)
    assert "judged gap: no invariant bounds x alone" in out
    assert "warning: stale judgement: tests.toymodel:ToyModel.next_state:off-by-one:0" in out
    code, out, _ = _mutate(capsys, *args, "--json", "--only", "*next_state:off-by-one:3", "--only",
                           "*next_state:off-by-one:1")
    report = json.loads(out)
    assert code == 1 and report["summary"]["judged_gap"] == 1 and report["summary"]["unexplained"] == 1
    assert report["stale_judgements"]


@pytest.mark.parametrize("verdict, denominator", [("safe", 1), ("gap", 2)])
def test_a_survivor_judged_safe_leaves_the_denominator_and_a_gap_stays(
        toy: None, tmp_path: Path, capsys: pytest.CaptureFixture[str], verdict: str, denominator: int) -> None:
    j = tmp_path / "mutants.toml"
    j.write_text(textwrap.dedent(f'''
        [[judgement]]
        mutant = "tests.toymodel:ToyModel.next_state:off-by-one:1"
        before = "s.x + 1"
        after = "s.x + 2"
        verdict = "{verdict}"
        reason = "x jumps by two; the test's argument"
    '''))
    code, out, _ = _mutate(capsys, "--model", "toy", "--presets", "tight", "--jobs", "1", "--judgements", str(j),
                           "--no-matrix", "--json", "--only", "*next_state:off-by-one:1", "--only", "*actions:compare:0")
    s = json.loads(out)["summary"]
    assert code == 0 and s["killed"] == 1 and s["non_equivalent_safety"] == denominator
    assert (s["judged_safe"], s["judged_gap"]) == ((1, 0) if verdict == "safe" else (0, 1))


def test_baseline_check_fails_when_a_killed_mutant_survives(toy: None, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _mutate(capsys, "--model", "toy", "--presets", "tight", "--jobs", "1", "--json")
    baseline = tmp_path / "toy.json"
    baseline.write_text(out)
    args = ["--model", "toy", "--presets", "tight", "--jobs", "1", "--baseline", str(baseline)]
    code, out, _ = _mutate(capsys, *args)
    assert code == 0, out
    assert "7 of 7 mutant(s) the baseline kills are still killed" in out
    from checker.provenance import model_source
    assert out.splitlines()[0] == f"model source: {model_source().text()}"
    # a baseline that claims a survivor was killed: the check must notice
    report = json.loads(baseline.read_text())
    for m in report["mutants"]:
        if m["id"].endswith("next_state:off-by-one:1"):
            m["status"] = "killed"
            m["killed_by"] = {"row": "toy-kafka-4.1-tight", "outcome": "violation", "kind": "safety",
                              "property": "sum_below_limit", "steps": 3, "seconds": 0.0, "reason": ""}
    baseline.write_text(json.dumps(report))
    code, out, _ = _mutate(capsys, *args)
    assert code == 1
    assert "NOT KILLED: toymodel.py:60 tests.toymodel:ToyModel.next_state:off-by-one:1" in out


@pytest.mark.parametrize("args, message", [
    (["--only", "nothing-matches"], "no mutant of model toy matches"),
    (["--presets", "no-such"], "unknown preset 'no-such'"),
    (["--baseline", "/no/such.json"], "--baseline /no/such.json: cannot read"),
    (["--judgements", "/no/such.toml"], "--judgements /no/such.toml: no such file"),
    (["--markdown", "/"], "--markdown /: is a directory"),
    (["--model", "nosuch"], "unknown model 'nosuch'"),
])
def test_bad_input_is_one_line_and_exit_2(toy: None, capsys: pytest.CaptureFixture[str], args: list[str],
                                          message: str) -> None:
    base = ["--model", "toy", "--presets", "tight", "--jobs", "1"]
    code, out, err = _mutate(capsys, *base, *args)
    assert code == 2
    assert message in err and "Traceback" not in err and err.count("\n") == 1


def test_bad_baseline_and_judgements_are_bad_input(toy: None, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"model": "kraft", "mutants": [], "rows": []}))
    code, _, err = _mutate(capsys, "--model", "toy", "--presets", "tight", "--baseline", str(other))
    assert code == 2 and "a report on model 'kraft', not 'toy'" in err
    bad = tmp_path / "j.toml"
    bad.write_text('[[judgement]]\nmutant = "x"\nbefore = "a"\nafter = "b"\nverdict = "fine"\nreason = "r"\n')
    code, _, err = _mutate(capsys, "--model", "toy", "--presets", "tight", "--judgements", str(bad))
    assert code == 2 and "verdict 'fine' is not one of equivalent, availability, safe, gap" in err


def test_the_model_files_and_modules_are_left_as_they_were(toy: None, capsys: pytest.CaptureFixture[str]) -> None:
    path = ROOT / "tests" / "toymodel.py"
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    _mutate(capsys, "--model", "toy", "--presets", "tight", "--jobs", "1", "--only", "*actions:compare:0")
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    import importlib

    toy_module = importlib.import_module("tests.toymodel")
    m = toy_module.DEFINITION.build({"k": 2, "limit": 5}, "kafka-4.1")
    assert len(m.actions(toy_module.Counters(1, 2))) == 1  # x < k as written: IncX only


def test_markdown_report(toy: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    md = tmp_path / "mutate.md"
    _mutate(capsys, "--model", "toy", "--presets", "tight", "--jobs", "2", "--markdown", str(md), "--quiet")
    text = md.read_text()
    assert text.startswith("# kcheck mutate: toy")
    assert "## Survivors" in text and "**unexplained**" in text and "## Kill matrix" in text


def test_pool_and_one_process_agree(toy: None, capsys: pytest.CaptureFixture[str]) -> None:
    runs = []
    for jobs in ("1", "2"):
        _, out, _ = _mutate(capsys, "--model", "toy", "--presets", "tight,smoke", "--jobs", jobs, "--json")
        runs.append({k: (m["status"], m["killed_by"] and m["killed_by"]["property"])
                     for k, m in _fates(json.loads(out)).items()})
    assert runs[0] == runs[1]


# Fixed mutants of the real models on their smoke preset: killed ones, a survivor, one never run.
KRAFT = {
    "model.kraft.rules:is_vote_granted:off-by-one:0": ("killed", "election_safety"),  # a majority of n//2 votes
    "model.kraft.rules:follower_high_watermark:min-max:0": ("survived", None),  # follower_hw is off on smoke
    "model.kraft.rules:truncation_offset:min-max:0": ("not-executed", None),  # no divergence on smoke
}
REPLICATION = {
    "model.replication.partition:leader_hw:compare:0": ("killed", None),  # min(min_isr, None): TypeError
    "model.replication.fault_actions:lossy_crash:drop-field:1": ("killed", "log_matching"),
    # the AlterPartition sender's broker epoch no longer checked: the leader-epoch check covers it
    # (judged equivalent in spec/mutants.toml), so smoke never tells
    "model.replication.controller:validate_alter_partition:drop-guard:0": ("survived", None),
    # the leader check inverted: every expansion rejected, no invariant broken, the witness lost
    "model.replication.controller:validate_alter_partition:compare:5": ("killed", "isr_expanded"),
}


@pytest.mark.parametrize("name, expected", [("kraft", KRAFT), ("replication", REPLICATION)])
def test_fixed_mutants_of_the_real_models(name: str, expected: dict, capsys: pytest.CaptureFixture[str]) -> None:
    only = [a for mid in expected for a in ("--only", mid)]
    code, out, err = _mutate(capsys, "--model", name, "--presets", "smoke", "--jobs", "2", "--json",
                             "--no-liveness", *only)
    fates = {m["id"]: m for m in json.loads(out)["mutants"]}
    for mid, (status, prop) in expected.items():
        assert fates[mid]["status"] == status, (mid, fates[mid])
        if prop is not None:
            assert fates[mid]["killed_by"]["property"] == prop


def test_spark_engine_gives_the_same_fates(toy: None, spark, capsys: pytest.CaptureFixture[str]) -> None:
    runs = []
    for engine in ("local", "spark"):
        _, out, _ = _mutate(capsys, "--model", "toy", "--presets", "tight", "--jobs", "1", "--engine", engine, "--json")
        runs.append({k: (m["status"], m["killed_by"] and m["killed_by"]["steps"]) for k, m in _fates(json.loads(out)).items()})
    assert runs[0] == runs[1]


def test_the_documented_examples_run(capsys: pytest.CaptureFixture[str]) -> None:
    """README's and docs/mutate.md's short examples, as written (the full runs that write the
    baselines take hours and are only parsed, by tests/test_doc_commands.py)."""
    import shlex

    readme = (ROOT / "README.md").read_text()
    example = readme.split("survives, e.g. `", 1)[1].split("`", 1)[0]
    page = (ROOT / "docs" / "mutate.md").read_text()
    first = next(line.strip() for line in page.splitlines() if line.startswith("    kcheck mutate"))
    for command in (example, first):
        code, out, _ = _mutate(capsys, *shlex.split(command)[2:], "--quiet")
        assert code in (0, 1) and "safety kill rate:" in out, command
    assert "is_vote_granted:off-by-one:0" in out and "election_safety" in out
    baseline = next(line.strip() for line in page.splitlines() if "--baseline spec/kills" in line)
    import os

    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        code, out, _ = _mutate(capsys, *shlex.split(baseline)[2:], "--quiet")
    finally:
        os.chdir(cwd)
    assert code == 0 and "5 of 5 mutant(s) the baseline kills are still killed" in out


def test_ci_replays_a_sample_of_both_baselines() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    for name in ("replication", "kraft"):
        assert f"kcheck mutate --model {name} --baseline spec/kills/{name}.json --sample" in ci
        report = json.loads((ROOT / "spec" / "kills" / f"{name}.json").read_text())
        assert report["model"] == name
        assert sum(m["status"] == "killed" for m in report["mutants"]) >= 20


def test_the_model_modules_imported_before_are_the_same_objects_after(capsys: pytest.CaptureFixture[str]) -> None:
    import model.kraft.state as before

    _mutate(capsys, "--model", "kraft", "--presets", "smoke", "--jobs", "1", "--no-liveness", "--quiet",
            "--only", "model.kraft.rules:majority:*")
    import model.kraft.state as after

    assert after is before and sys.modules["model.kraft.state"] is before
    from checker.config import load_config

    built = load_config(model="kraft", preset="smoke").build()
    assert type(built.init_states()[0]) is before.KraftState


def test_a_row_kafka_4_1_fails_is_bad_input_not_a_kill_of_every_mutant(toy: None, tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """On a row where Kafka 4.1 itself breaks an invariant, every mutant would look killed: one
    line, exit 2, no verdict."""
    (tmp_path / "gate.toml").write_text('[[row]]\nname = "toy-kafka-4.1-low"\nmodel = "toy"\nvariant = "kafka-4.1"\n'
                                        'preset = "tight"\nset = {limit = 3}\nexpect = "holds"\n')
    code, out, err = _mutate(capsys, "--model", "toy", "--gate", str(tmp_path / "gate.toml"), "--jobs", "1",
                             "--judgements", str(ROOT / "spec" / "mutants.toml"), "--quiet")
    assert code == 2 and out == ""
    assert err.strip().count("\n") == 0 and "toy-kafka-4.1-low" in err and "sum_below_limit" in err
    assert "cannot judge a mutant" in err


def test_a_search_that_outgrows_the_row_is_undecided_not_killed(toy: None, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """The gate has no state cap: a mutant whose search outgrows BLOWUP x Kafka 4.1's states is not
    a mistake the gate notices, only one it takes longer over. It ends as "budget" (undecided)."""
    from checker.gate.mutation import analysis

    monkeypatch.setattr(analysis, "BLOWUP", 1)
    monkeypatch.setattr(analysis, "SLACK", -4)  # a cap of 5 states on the 9 of toy's tight preset
    code, out, _ = _mutate(capsys, "--model", "toy", "--presets", "tight", "--jobs", "1", "--json", "--no-liveness",
                           "--only", "*next_state:off-by-one:1")
    m = json.loads(out)["mutants"][0]
    assert m["status"] == "budget" and m["killed_by"] is None
    assert json.loads(out)["summary"]["killed"] == 0


@pytest.mark.slow  # about 2 minutes on one mutant's liveness pass
def test_the_liveness_pass_is_not_held_to_the_safety_cap(capsys: pytest.CaptureFixture[str]) -> None:
    """One more fault in kraft's joint budget reaches Kafka 4.1's states on five-voters; its
    liveness pass (a graph without reduction, larger than 4x the safety states) must not make it
    look undecided."""
    code, out, _ = _mutate(capsys, "--model", "kraft", "--presets", "five-voters", "--jobs", "1", "--json",
                           "--quiet", "--only", "*KraftModel.actions:compare:15")
    m = json.loads(out)["mutants"][0]
    assert (m["before"], m["after"]) == ("s.faults < p.faults", "s.faults <= p.faults") and "restarts" in m["source_line"], m
    assert m["status"] == "same-states", m


@pytest.mark.parametrize("model", ["replication", "kraft"])
def test_every_shipped_judgement_names_a_current_mutant(model: str) -> None:
    """A judgement whose mutant is gone or changed is not applied: the shipped file has none."""
    from checker.gate.mutation import judgements as J
    from checker.gate.mutation.analysis import all_mutants, target_of
    from checker.gate.mutation.imports import package_of

    mutants = {m.id: m for m in all_mutants(target_of(model))}
    applied, stale = J.match(J.load(ROOT / "spec" / "mutants.toml"), mutants, package_of(model))
    assert stale == [] and len(applied) >= 10


@pytest.mark.parametrize("model", ["replication", "kraft"])
def test_every_recorded_kill_names_the_mutant_it_killed(model: str) -> None:
    """A recorded kill whose id now names another mutant (the same change on another line after
    the code moved) would make the CI replay judge the wrong mutant: each killed entry of the
    baseline names a current mutant with its change and source line, or one that no longer
    exists as recorded (then the replay skips it as changed)."""
    from checker.gate.mutation.analysis import all_mutants, target_of

    mutants = {m.id: m for m in all_mutants(target_of(model))}
    report = json.loads((ROOT / "spec" / "kills" / f"{model}.json").read_text())
    killed = [e for e in report["mutants"] if e["status"] == "killed"]
    same = [e for e in killed if e["id"] in mutants
            and (mutants[e["id"]].before, mutants[e["id"]].after) == (e["before"], e["after"])]
    wrong = [e["id"] for e in same if mutants[e["id"]].source_line != e["source_line"]]
    assert wrong == []
    assert len(same) >= 0.9 * len(killed)


def _tally(model: str) -> tuple[int, int]:
    """The sample's fates with every recorded follow-up run over it (spec/kills/followup), judgements
    applied: (killed, denominator). Runs cover different rows, so a mutant's fate is the strongest
    any run gives it (a kill on one row is a kill; "unchanged" only if no run told it apart; a run
    stopped early counts for the rows it ran)."""
    from checker.gate.mutation import judgements as J

    strength = ("not-executed", "unchanged", "same-states", "budget", "survived", "availability", "killed")
    from checker.gate.mutation.analysis import all_mutants, target_of

    now = {m.id: (m.before, m.after, m.source_line) for m in all_mutants(target_of(model))}
    fates: dict[str, str] = {}
    reports = [ROOT / "spec" / "kills" / f"{model}.json"] + sorted((ROOT / "spec" / "kills" / "followup").glob(f"{model}-*.json"))
    for path in reports:
        report = json.loads(path.read_text())
        for m in report["mutants"]:
            if now.get(m["id"]) != (m["before"], m["after"], m["source_line"]):
                continue  # code rewritten since the run: its fate names no mutant of the code any more
            killed_by = m["killed_by"] or {}
            outgrown = m["status"] == "killed" and killed_by.get("outcome") == "incomplete"  # recorded before it was undecided
            fate = "budget" if outgrown else m["status"]
            if strength.index(fate) > strength.index(fates.get(m["id"], "not-executed")):
                fates[m["id"]] = fate
    judged = {j.mutant: j.verdict for j in J.load(ROOT / "spec" / "mutants.toml")}
    killed = sum(1 for f in fates.values() if f == "killed")
    counted = [i for i, f in fates.items() if f in ("survived", "budget")
               and judged.get(i) not in J.EXCUSED]
    assert all(i in judged for i in counted), "a survivor the docs count has no judgement"
    return killed, killed + len(counted)


def test_the_documented_kill_rates_follow_from_the_recorded_runs() -> None:
    """docs/mutate.md's safety kill rates are what the recorded reports and judgements give."""
    row = next(line for line in (ROOT / "docs" / "mutate.md").read_text().splitlines()
               if line.startswith("| **safety kill rate** |"))
    for model, cell in zip(("kraft", "replication"), row.split("|")[2:4]):
        killed, denominator = _tally(model)
        assert f"{killed} of {denominator} ({100 * killed / denominator:.1f}%)" in cell, (model, cell)


def test_the_report_names_the_model_source_it_mutated(toy: None, capsys: pytest.CaptureFixture[str],
                                                      tmp_path: Path) -> None:
    """As every other run's, mutate's header, --json and Markdown report name the model source."""
    from checker.provenance import model_source

    source = model_source()
    md = tmp_path / "m.md"
    _, out, _ = _mutate(capsys, "--model", "toy", "--presets", "tight", "--jobs", "1", "--json", "--markdown", str(md),
                        "--only", "*actions:compare:0")
    assert json.loads(out)["model_source"] == source.as_json()
    assert f"`{source.path}` (sha256 `{source.sha256}`)" in md.read_text()
    _, out, _ = _mutate(capsys, "--model", "toy", "--presets", "tight", "--jobs", "1", "--only", "*actions:compare:0")
    assert out.splitlines()[1] == f"model source: {source.text()}"
