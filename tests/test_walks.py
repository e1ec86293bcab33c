"""Random walks (checker.walks.walker), shrinking (checker.walks.shrink) and `kcheck simulate --engine local`
on the toy model: determinism, independence from how walk ids are split, shrinking to the
BFS-shortest length, swarm weights."""
from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import model  # noqa: E402
from checker.search.run import explore  # noqa: E402
from checker.cli.commands import main  # noqa: E402
from checker.walks.shrink import bounded_bfs, shrink, shrink_walk  # noqa: E402
from checker.walks.simulate import run_local  # noqa: E402
from checker.walks.walker import (  # noqa: E402
    HyperLogLog, ModelSpec, Summary, replay, summarize, swarm_weights, walk_ids_of_part, walk_seed, walks,
)
from model.interface import always  # noqa: E402
from tests.toymodel import ToyModel  # noqa: E402


@pytest.fixture(autouse=True)
def toy_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(model.MODELS, "toy", "tests.toymodel")


def toy(k: int = 10, limit: int = 1000) -> ToyModel:
    return model.definition("toy").build({"k": k, "limit": limit}, "kafka-4.1")


class CornerToy(ToyModel):
    """The toy with one invariant: (k, 0) is never reached. Shortest violation: k steps (IncX^k);
    a walk that first raises y must go round (k, k) -> Reset, so walks find longer traces."""

    def __init__(self, k: int) -> None:
        super().__init__({"k": k, "limit": 10**9})
        self.properties = [always("not_corner", lambda s: not (s.x == k and s.y == 0), "(k, 0) unreached")]


class Stuck(ToyModel):
    """The toy whose only action is always a no-op: every walk deadlocks at once."""

    def actions(self, s):
        return [Never()]


class Never(tuple):
    pass


def _key(r):
    return (r.walk_id, r.outcome, r.steps, r.init_index, r.actions, r.invariant, r.action_counts,
            r.sometimes_reached, r.fingerprints, r.weights)


# --- determinism -------------------------------------------------------------------------------


def test_walk_seed_is_pinned() -> None:
    """The per-walk seed is part of the replay contract: it must never change silently."""
    assert walk_seed(0, 0) == 13499722555146247837
    assert walk_seed(42, 7) == 14214591728671236991
    assert walk_seed(0, 1) != walk_seed(1, 0)


def test_same_seed_same_walks() -> None:
    a = walks(toy(), 7, range(40), 60)
    b = walks(toy(), 7, range(40), 60)
    assert [_key(r) for r in a] == [_key(r) for r in b]
    c = walks(toy(), 8, range(40), 60)
    assert [r.actions for r in a] != [r.actions for r in c]


@pytest.mark.parametrize("swarm", [False, True])
def test_walks_do_not_depend_on_how_ids_are_split(swarm: bool) -> None:
    m = toy(4, limit=7)
    whole = {r.walk_id: _key(r) for r in walks(m, 3, range(60), 40, swarm)}
    for parts in (2, 3, 7):
        for p in range(parts):
            ids = list(walk_ids_of_part(60, p, parts))
            for r in walks(toy(4, limit=7), 3, reversed(ids), 40, swarm):  # another model object, other order
                assert _key(r) == whole[r.walk_id]


def test_summary_is_the_same_however_walks_are_split() -> None:
    m = toy(4, limit=7)
    whole = summarize(m, 5, range(100), 40, max_violations=1)
    for parts in (1, 3, 8):
        merged = Summary(max_violations=1)
        for p in reversed(range(parts)):
            merged.merge(summarize(m, 5, walk_ids_of_part(100, p, parts), 40, max_violations=1))
        assert merged == whole
    blocks = Summary(max_violations=1)
    for start in range(0, 100, 30):
        blocks.merge(summarize(m, 5, range(start, min(start + 30, 100)), 40, max_violations=1))
    assert blocks == whole


def test_walk_bookkeeping() -> None:
    m = toy(3)
    for r in walks(m, 1, range(20), 25):
        assert r.outcome == "depth" and r.steps == 25 == len(r.actions) == sum(r.action_counts.values())
        trace = replay(m, r.init_index, r.actions)
        assert len(trace) == 26 and trace[0][0] is None
        assert {s for _, s in trace} <= {(x, y) for x in range(4) for y in range(4)}
        assert len(r.fingerprints) == len({s for _, s in trace})
    r = walks(Stuck({"k": 3, "limit": 10}), 1, [0], 10)[0]
    assert (r.outcome, r.steps, r.actions) == ("deadlock", 0, ())


def test_violating_walk_replays() -> None:
    m = toy(10, limit=9)
    for r in walks(m, 11, range(10), 100):
        assert r.outcome == "violation" and r.invariant == "sum_below_limit" and r.steps == 9
        final = replay(m, r.init_index, r.actions)[-1][1]
        assert final.x + final.y == 9


def test_replay_rejects_a_foreign_walk() -> None:
    with pytest.raises(ValueError, match="out of range"):
        replay(toy(1), 0, [0, 5])


# --- shrinking ---------------------------------------------------------------------------------


def test_violation_shrunk_to_the_bfs_shortest_length() -> None:
    m = CornerToy(3)
    shortest = len(explore(m).violation["trace"]) - 1
    assert shortest == 3
    long = [r for r in walks(m, 0, range(200), 200) if r.outcome == "violation" and r.steps > shortest]
    assert long, "some walk should reach (3, 0) only after a Reset"
    for r in long[:5]:
        stats: dict = {}
        trace = shrink_walk(m, r.init_index, r.actions, "not_corner", stats=stats)
        assert len(trace) - 1 == shortest and stats["minimal"] and stats["original_length"] == r.steps
        assert trace[-1][1] == (3, 0)
        # delta debugging alone already removes the Reset cycles here
        dd = shrink_walk(m, r.init_index, r.actions, "not_corner", bfs_limit=-1)
        assert len(dd) - 1 == shortest


def test_shrink_skips_actions_no_longer_enabled() -> None:
    m = toy(3, limit=4)
    from tests.toymodel import Counters, IncX, IncY, Reset

    padded = [Reset(), IncY(), IncX(), Reset(), IncY(), IncY(), IncX(), IncX(), IncX()]
    stats: dict = {}
    trace = shrink(m, Counters(0, 0), padded, "sum_below_limit", bfs_limit=-1, stats=stats)
    assert len(trace) - 1 == 4 and stats["length"] == 4 and not stats["minimal"]
    with pytest.raises(ValueError, match="does not break"):
        shrink(m, Counters(0, 0), [IncX()], "sum_below_limit")
    with pytest.raises(ValueError, match="not an `always` property"):
        shrink(m, Counters(0, 0), [IncX()], "both_max")


def test_bounded_bfs_reports_an_exhausted_budget() -> None:
    m = CornerToy(6)
    trace, complete = bounded_bfs(m, lambda s: s == (6, 0), 6, max_states=5)
    assert trace is None and not complete
    trace, complete = bounded_bfs(m, lambda s: s == (6, 0), 6, max_states=10_000)
    assert complete and len(trace) == 7


# --- swarm -------------------------------------------------------------------------------------


def test_swarm_weights_differ_per_walk_and_are_reproducible() -> None:
    m = toy(10)
    a = walks(m, 9, range(30), 50, swarm=True)
    b = walks(m, 9, range(30), 50, swarm=True)
    assert [r.weights for r in a] == [r.weights for r in b]
    assert len({tuple(sorted(r.weights.items())) for r in a}) >= 25  # all-off can repeat (1/16)
    assert all(set(r.weights) == set(m.action_kinds) for r in a)
    assert a[4].weights == swarm_weights(m, random.Random(walk_seed(9, 4)))
    assert all(r.weights is None for r in walks(m, 9, range(3), 5))
    # a walk with IncY switched off and IncX on takes IncY only once x is at its bound
    for r in a:
        if r.weights["IncY"] == 0.0 and r.weights["IncX"] > 0.0:
            xs = [s.x for _, s in replay(m, r.init_index, r.actions)[: 11]]
            assert xs == list(range(11))
            break
    else:
        pytest.fail("no walk with IncY off and IncX on among 30")


# --- engines and the command -------------------------------------------------------------------


def test_process_pool_gives_the_single_process_result() -> None:
    spec = ModelSpec.of("toy", {"k": 6, "limit": 11}, "kafka-4.1")
    one, d1 = run_local(spec, 4, 300, 40)
    pool, d2 = run_local(spec, 4, 300, 40, processes=2)
    assert one == pool and d1 == d2


def _simulate(capsys, *argv: str) -> tuple[int, dict, str]:
    code = main(["simulate", "--model", "toy", "--quiet", *argv])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if "--json" in argv and out else {}), err


def test_cli_ok(capsys) -> None:
    code, report, _ = _simulate(capsys, "--set", "k=3", "--walks", "50", "--depth", "30", "--json")
    assert code == 0 and report["result"] == "ok" and report["violations"] == []
    assert report["distinct_states"] == 16 and report["distinct_states_method"] == "exact"
    assert report["walks"] == 50 and report["steps"] == 1500 and report["depth_histogram"] == {"30": 50}
    assert report["unreached"] == [] and report["sometimes_reached"] == ["both_max"]
    for key in ("model", "variant", "config", "engine", "seed", "depth", "action_counts",
                "walks_per_second", "steps_per_second", "seconds"):
        assert key in report


def test_cli_violation_is_shrunk(capsys, tmp_path: Path) -> None:
    out = tmp_path / "trace.json"
    code, report, _ = _simulate(capsys, "--set", "k=10", "--set", "limit=6", "--walks", "20",
                                "--json", "--trace-out", str(out))
    assert code == 1 and report["result"] == "violation"
    (v,) = report["violations"]
    assert v["invariant"] == "sum_below_limit" and v["walk_id"] == 0 and v["length"] == 6
    assert v["shrunk_length"] == 6 and v["shortest"] and len(v["trace"]) == 7
    states = json.loads(out.read_text())["states"]  # an ITF trace: the same steps as the report's
    assert [s["mbt::actionTaken"] for s in states] == ["init"] + [step["action"] for step in v["trace"][1:]]
    assert [{k: x for k, x in s.items() if k not in ("#meta", "mbt::actionTaken")} for s in states] == [
        step["state"] for step in v["trace"]]
    code = main(["simulate", "--model", "toy", "--quiet", "--set", "limit=2"])
    text = capsys.readouterr().out
    assert code == 1 and "counterexample: invariant sum_below_limit" in text


@pytest.mark.parametrize("argv, message", [
    (["--set", "k=99"], "out of range"),
    (["--walks", "-3"], "--walks"),
    (["--processes", "2", "--engine", "spark"], "--processes"),
    (["--partitions", "2"], "--partitions needs --engine spark"),
    (["--master", "spark://127.0.0.1:1"], "cannot reach Spark master spark://127.0.0.1:1"),
    (["--master", "yarn"], "unsupported master"),
    (["--trace-out", "/nonexistent/dir/t.json"], "does not exist"),
])
def test_cli_bad_input(capsys, argv: list[str], message: str) -> None:
    code, _, err = _simulate(capsys, *argv)
    assert code == 2 and message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_cli_java_missing(capsys, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    code, _, err = _simulate(capsys, "--engine", "spark")
    assert code == 2 and f"JAVA_HOME={tmp_path} has no bin/java" in err and len(err.strip().splitlines()) == 1
    monkeypatch.delenv("JAVA_HOME")
    monkeypatch.setenv("PATH", str(tmp_path))
    code, _, err = _simulate(capsys, "--engine", "spark")
    assert code == 2 and "Java not found" in err and "Traceback" not in err


def test_a_failed_spark_job_is_one_line() -> None:
    """An executor's Python error, dug out of the Py4JJavaError text, with what to do about it."""
    from checker.walks.spark import job_failure

    text = ("An error occurred while calling o42.collect.\n: org.apache.spark.SparkException: Job aborted\n"
            "org.apache.spark.api.python.PythonException: Traceback (most recent call last):\n"
            "  File \"worker.py\", line 1, in main\nModuleNotFoundError: No module named 'checker'\n"
            "\tat org.apache.spark.api.python.BasePythonRunner.handlePythonException(PythonRunner.scala:1097)\n")
    line = job_failure(Exception(text))
    assert line.startswith("Spark job failed: ModuleNotFoundError: No module named 'checker'; executors cannot")
    assert "--py-files" in line and "\n" not in line
    assert job_failure(RuntimeError("boom")).startswith("Spark job failed: boom")


# --- distinct states: HyperLogLog ----------------------------------------------------------------


def test_hyperloglog_estimates_within_its_error() -> None:
    for n in (10, 1_000, 50_000):
        sketch = HyperLogLog()
        for i in range(n):
            sketch.add(walk_seed(1, i))  # any 64-bit values
            sketch.add(i)  # small ints too: the fingerprint is mixed before use
        assert abs(sketch.estimate() - 2 * n) <= max(1, 4 * sketch.relative_error * 2 * n), n
    halves = [HyperLogLog(), HyperLogLog()]
    whole = HyperLogLog()
    for i in range(5000):
        halves[i % 2].add(i)
        whole.add(i)
        whole.add(i)  # idempotent
    assert halves[0].merge(halves[1]) == whole
    with pytest.raises(ValueError, match="p=14 and p=10"):
        HyperLogLog().merge(HyperLogLog(10))


def test_hll_summary_is_the_same_however_walks_are_split() -> None:
    m = toy(30)
    whole = summarize(m, 2, range(200), 60, distinct="hll")
    merged = Summary()
    for p in range(3):
        merged.merge(summarize(toy(30), 2, walk_ids_of_part(200, p, 3), 60, distinct="hll"))
    assert merged == whole and not whole.fingerprints
    exact = summarize(m, 2, range(200), 60).distinct_states()[0]
    estimate, method, error = whole.distinct_states()
    assert method == "hyperloglog" and abs(estimate - exact) <= 4 * error * exact
    assert summarize(m, 2, range(5), 5, distinct="none").distinct_states() == (None, "none", 0.0)


def test_cli_distinct_hll(capsys) -> None:
    code, report, _ = _simulate(capsys, "--set", "k=3", "--walks", "50", "--depth", "30", "--json",
                                "--distinct", "hll")
    assert code == 0 and report["distinct_states_method"] == "hyperloglog"
    assert report["distinct_states"] == 16 and report["distinct_states_error"] == 0.008125
    code = main(["simulate", "--model", "toy", "--quiet", "--set", "k=3", "--walks", "20", "--distinct", "hll"])
    assert code == 0 and "(HyperLogLog estimate, relative std. error 0.81%)" in capsys.readouterr().out


# --- the replication model -----------------------------------------------------------------------


def _variant(model_name: str, name: str):
    return next(v for v in model.definition(model_name).variants if v.name == name)


def test_replication_walks_are_reproducible() -> None:
    """On the smallest preset: the same walks from two model objects, and from a process pool."""
    from checker.config import load_config

    rc = load_config(model="replication", preset="smoke")
    a = walks(rc.build(), 1, range(30), 25, swarm=True)
    b = walks(rc.build(), 1, reversed(range(30)), 25, swarm=True)
    assert [_key(r) for r in a] == sorted((_key(r) for r in b), key=lambda k: k[0])
    spec = ModelSpec.of(rc.model, rc.config, rc.variant)
    one, d1 = run_local(spec, 1, 60, 25, swarm=True)
    pool, d2 = run_local(spec, 1, 60, 25, swarm=True, processes=2)
    assert one == pool and d1 == d2 > 1 and one.action_counts


def test_replication_bug_found_by_walks_and_shrunk(capsys) -> None:
    """hw-ignores-min-isr on its catalogue preset: walks find the violation BFS finds, and the
    counterexample is shrunk to at most twice BFS's shortest and still breaks the invariant."""
    from checker.config import load_config

    variant = _variant("replication", "hw-ignores-min-isr")
    rc = load_config(model="replication", variant=variant.name, preset=variant.preset)
    m = rc.build()
    bfs = explore(m)
    assert bfs.violation is not None and bfs.violation["invariant"] == variant.expect
    shortest = len(bfs.violation["trace"]) - 1
    code = main(["simulate", "--model", "replication", "--variant", variant.name, "--preset", variant.preset,
                 "--walks", "100", "--depth", "30", "--seed", "0", "--json", "--quiet"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and report["result"] == "violation"
    v = next(v for v in report["violations"] if v["invariant"] == variant.expect)
    assert v["shrunk_length"] <= v["length"] and v["shrunk_length"] <= 2 * shortest
    assert len(v["trace"]) == v["shrunk_length"] + 1
    # the shrunk trace replays: its actions, re-applied, end in a state breaking the invariant
    (walk,) = walks(m, 0, [v["walk_id"]], 30)
    trace = shrink_walk(m, walk.init_index, walk.actions, variant.expect)
    assert len(trace) - 1 == v["shrunk_length"]
    prop = next(p for p in m.properties if p.name == variant.expect)
    assert not prop.predicate(trace[-1][1]) and all(prop.predicate(s) for _, s in trace[:-1])


def test_a_worker_with_other_code_refuses_to_walk():
    """The driver's code digest travels in the ModelSpec; a worker whose code differs stops with a
    message naming the fix instead of walking a different model."""
    from dataclasses import replace

    from checker.walks.walker import ModelSpec

    spec = ModelSpec.of("replication", {"brokers": 2}, "kafka-4.1")
    assert len(spec.code) == 64
    with pytest.raises(RuntimeError, match="different kcheck code.*install the same kcheck version"):
        replace(spec, code="0" * 64).build()


def test_cli_invariant_selects_what_the_walks_check(capsys) -> None:
    """`--invariant` as in `kcheck check`: R2 on last-replica-standing breaks candidate_completeness
    (within the first 1,500 of these); checking log_matching alone, which BFS proves there, the same
    walks find nothing, also in a process pool (workers rebuild the selection from the ModelSpec)."""
    base = ["simulate", "--preset", "last-replica-standing", "--variant", "truncate-to-hw-diverge",
            "--walks", "1500", "--depth", "30", "--swarm", "--json", "--quiet"]
    code = main(base)
    every = json.loads(capsys.readouterr().out)
    assert code == 1 and [v["invariant"] for v in every["violations"]] == ["candidate_completeness"]
    assert not every["invariants_selected"] and "log_matching" in every["invariants"]
    code = main(base + ["--invariant", "candidate_completeness"])
    one = json.loads(capsys.readouterr().out)
    assert code == 1 and one["invariants"] == ["candidate_completeness"] and one["invariants_selected"]
    assert one["violations"][0]["first_walk_id"] == every["violations"][0]["first_walk_id"]
    for extra in ([], ["--processes", "2"]):
        code = main(base + ["--invariant", "log_matching", *extra])
        report = json.loads(capsys.readouterr().out)
        assert code == 0 and report["result"] == "ok" and report["invariants"] == ["log_matching"]
        assert report["walks"] == 1500 and report["steps"] > every["steps"]  # no walk stopped early
    code = main(base + ["--invariant", "nope"])
    err = capsys.readouterr().err
    assert code == 2 and "unknown invariant nope" in err and len(err.strip().splitlines()) == 1


def test_spec_with_invariants_builds_the_selection() -> None:
    from checker.config import load_config

    rc = load_config(model="replication", preset="smoke")
    spec = ModelSpec.of(rc.model, rc.config, rc.variant, ["log_matching"])
    assert [p.name for p in spec.build().properties if p.kind == "always"] == ["log_matching"]
    assert ModelSpec.of(rc.model, rc.config, rc.variant).invariants == ()
