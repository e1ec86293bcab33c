"""Guided simulation (checker.walks.guided, `kcheck simulate --guided`): round 0 is the plain walks,
rounds are the same however walks are split (processes, partitions, local or Spark), the corpus
is a pure function of the merged cells, guided counterexamples replay from an initial state and
shrink, and guided mode reaches a violation that plain walks of the same budget miss."""
from __future__ import annotations

import json
import random
from collections import namedtuple
from typing import NamedTuple
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import model  # noqa: E402
from checker.cli.commands import main  # noqa: E402
from checker.config import load_config  # noqa: E402
from checker.walks.guided import Abstraction, Archive, run_guided  # noqa: E402
from checker.walks.shrink import shrink_walk  # noqa: E402
from checker.walks.simulate import run_local  # noqa: E402
from checker.fingerprint import state_fingerprint  # noqa: E402
from checker.walks.walker import ModelSpec, RoundPlan, Start, Summary, replay, summarize, walk_ids_of_part  # noqa: E402
from model.interface import always  # noqa: E402
from tests.toymodel import ToyModel  # noqa: E402


@pytest.fixture(autouse=True)
def toy_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(model.MODELS, "toy", "tests.toymodel")


SMOKE = load_config(model="replication", preset="smoke")
SMOKE_SPEC = ModelSpec.of(SMOKE.model, SMOKE.config, SMOKE.variant)


def _split_runner(spec: ModelSpec, seed: int, depth: int, parts: int, swarm: bool = True):
    """A round runner that splits the round's walks round-robin into `parts` workers, each with
    its own model object, and merges their summaries in reverse order."""

    def run(plan: RoundPlan, n: int) -> Summary:
        total = Summary()
        for p in reversed(range(parts)):
            total.merge(summarize(spec.build(), seed, walk_ids_of_part(n, p, parts), depth, swarm, plan=plan))
        return total

    return run


# --- the kernel and the archive --------------------------------------------------------------------


def test_round_zero_is_the_plain_walks() -> None:
    m = SMOKE.build()
    plain = summarize(m, 3, range(40), 20, swarm=True)
    guided = summarize(m, 3, range(40), 20, swarm=True, plan=RoundPlan(0, 0))
    assert guided.cells and not plain.cells
    guided.cells = {}
    assert guided == plain


def test_a_walk_from_a_corpus_entry_replays_from_an_initial_state() -> None:
    m = SMOKE.build()
    first = summarize(m, 1, range(30), 12, plan=RoundPlan(0, 0))
    cell, (count, key, init_index, path) = max(first.cells.items(), key=lambda kv: (kv[1][1][0], kv[0]))
    assert key[0] == len(path) > 0 and count >= 1
    entry = Start(init_index, tuple(path))
    plan = RoundPlan(1, 30, (entry,))
    from checker.walks.walker import Walker

    walker = Walker(m)
    for w in range(30, 40):
        r = walker.walk(1, w, 12, False, plan.start(1, w), {})
        assert r.prefix == len(path) and r.actions[: len(path)] == tuple(path)
        trace = replay(m, r.init_index, r.actions)  # prefix + suffix, from an initial state
        assert len(trace) == len(path) + r.steps + 1
        assert trace[len(path)][1] == replay(m, init_index, path)[-1][1]


def test_cells_and_corpus_do_not_depend_on_the_split_or_the_order() -> None:
    """The merged cell tables of a round are the same for any split, and the corpus drawn from
    an archive does not depend on the order in which the cells were merged into it."""
    m = SMOKE.build()
    plan = RoundPlan(0, 0)
    whole = summarize(m, 2, range(60), 15, swarm=True, plan=plan)
    for parts in (2, 5):
        merged = Summary()
        for p in reversed(range(parts)):
            merged.merge(summarize(SMOKE.build(), 2, walk_ids_of_part(60, p, parts), 15, swarm=True, plan=plan))
        assert merged == whole
    items = list(whole.cells.items())
    a, b = Archive(), Archive()
    a.update(dict(items))
    random.Random(0).shuffle(items)
    for chunk in (items[: len(items) // 2], items[len(items) // 2:]):
        b.update(dict(chunk))
    assert a.corpus(2, 1, 16) == b.corpus(2, 1, 16)
    assert a.corpus(2, 2, 16) == b.corpus(2, 2, 16)  # the picked counters moved in step
    assert a.corpus(3, 3, 16) != a.corpus(2, 3, 16) or len(a.cells) <= 16


def test_state_cells_are_the_distinct_states_the_walks_visited() -> None:
    """With state cells the archive is the set of distinct states the walks visited (the toy
    model has no deadlock, so every one is a start point), each kept with a shortest path found,
    which replays to that very state; the rounds do not depend on the split."""
    spec = ModelSpec.of("toy", {"k": 6, "limit": 1000}, "default")
    m = spec.build()
    runner = _split_runner(spec, 3, 5, 1)
    summary, info = run_guided(runner, 3, 4, 30, corpus=30, state_cells=True)
    assert info["cells"] == len(summary.fingerprints) > 30
    assert run_guided(_split_runner(spec, 3, 5, 3), 3, 4, 30, corpus=30, state_cells=True) == (summary, info)
    plan = RoundPlan(0, 0, (), True)
    cells = summarize(m, 3, range(30), 5, plan=plan).cells
    fingerprint = state_fingerprint(m)
    for cell, (_, (length, _), init_index, path) in cells.items():
        state = replay(m, init_index, tuple(path))[-1][1]
        assert fingerprint(state) == cell and len(path) == length


def test_novelty_archives_every_reachable_state_and_paths_replay() -> None:
    """Novelty mode records the new successors a walk does not take (as BFS expands a state), so
    its archive grows to the whole reachable space of the toy model ((k+1)**2 states), each
    entry's path replays to its very state, and the rounds do not depend on the split."""
    spec = ModelSpec.of("toy", {"k": 8, "limit": 1000}, "default")
    m = spec.build()
    runs = [run_guided(_split_runner(spec, 3, 4, parts), 3, 60, 6, corpus=6, state_cells=True, novelty=True)
            for parts in (1, 3)]
    assert runs[0] == runs[1]
    summary, info = runs[0]
    assert info["cells"] == 81 and summary.outcomes["known"] > 0
    plan = RoundPlan(0, 0, (), True, frozenset())
    cells = summarize(m, 3, range(6), 4, plan=plan).cells
    fingerprint = state_fingerprint(m)
    assert len(cells) > 6 * 4 // 2  # the branches not taken are there too
    for cell, (_, (length, _), init_index, path) in cells.items():
        assert fingerprint(replay(m, init_index, tuple(path))[-1][1]) == cell and len(path) == length
    with pytest.raises(ValueError, match="novelty needs state cells"):
        run_guided(_split_runner(spec, 3, 4, 1), 3, 2, 6, novelty=True)


def test_novelty_walk_prefers_new_states() -> None:
    """A novelty walk never steps into a state it was told is known while a new one is enabled,
    and stops ("known") where nothing new is."""
    from checker.walks.walker import Walker

    m = ModelSpec.of("toy", {"k": 3, "limit": 1000}, "default").build()
    fp = state_fingerprint(m)
    known = frozenset(fp(s) for s in (m.init_states()[0]._replace(x=1), m.init_states()[0]._replace(x=2, y=1)))
    w = Walker(m).walk(0, 0, 10, False, cells={}, state_cells=True, known=known)
    trace = replay(m, w.init_index, w.actions)
    assert [s for _, s in trace][1] == m.init_states()[0]._replace(y=1)  # (1, 0) was known: (0, 1) it is
    assert all(fp(s) not in known for _, s in trace)
    everything = frozenset(fp(m.init_states()[0]._replace(x=x, y=y)) for x in range(4) for y in range(4))
    stuck = Walker(m).walk(0, 0, 10, False, cells={}, state_cells=True, known=everything)
    assert stuck.outcome == "known" and stuck.steps == 0

    class NoReset(ToyModel):  # (k, k) has no successor: a deadlock stays a deadlock
        def actions(self, s):
            return [a for a in super().actions(s) if type(a).__name__ != "Reset"]

    dead = NoReset({"k": 1, "limit": 1000})
    w = Walker(dead).walk(0, 0, 10, False, cells={}, state_cells=True, known=frozenset())
    assert w.outcome == "deadlock" and w.steps == 2


def test_guided_state_cells_cli(capsys) -> None:
    argv = ["simulate", "--model", "toy", "--set", "k=6", "--guided", "--rounds", "3", "--walks", "20", "--depth", "5",
            "--json", "--quiet"]
    assert main(argv + ["--cells", "state"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["guided_search"]["cells_mode"] == "state"
    assert report["guided_search"]["cells"] == report["distinct_states"]  # every visited state is a cell here
    assert main(argv + ["--cells", "state"]) == 0
    assert json.loads(capsys.readouterr().out)["guided_search"] == report["guided_search"]
    assert main(argv + ["--cells", "state", "--novelty"]) == 0
    novel = json.loads(capsys.readouterr().out)
    assert novel["guided_search"]["novelty"] and novel["outcomes"]["known"] >= 0
    for bad in (["--novelty"], ["--cells", "abstract", "--novelty"]):
        assert main(argv + bad) == 2
        assert "--novelty needs --guided --cells state" in capsys.readouterr().err


def test_abstraction_is_small_and_stable() -> None:
    """The default cell (a model without `abstraction`): enabled kinds, sometimes-properties, kinds taken."""
    lock = CombinationLock(3)
    abstraction = Abstraction(lock)
    init = lock.init_states()[0]
    cell = abstraction.cell(init, list(lock.actions(init)), 0)
    (enabled, holds), history = cell
    assert enabled > 0 and history == 0 and isinstance(holds, int)
    assert abstraction.after(abstraction.after(0, "Noise"), "Noise") == abstraction.after(0, "Noise") != 0
    assert abstraction.cell(init, list(lock.actions(init)), 0) == cell


def _plain_value(x) -> bool:
    """Made only of ints, bools, strings and tuples: equal values have equal reprs in every process."""
    if isinstance(x, tuple):
        return all(_plain_value(v) for v in x)
    return type(x) in (int, bool, str)


@pytest.mark.parametrize("name, preset", [("replication", "stale-fetch"), ("kraft", "restart")])
def test_model_abstractions_are_pure_plain_and_coarse(name: str, preset: str) -> None:
    """Both models define `abstraction`: a pure function of the state (two model objects agree,
    repeated calls agree), of plain ordered values (a process-stable repr, no sets), and coarser
    than the states (fewer cells than states along random walks). With it a cell drops the kinds-taken history."""
    config = load_config(model=name, preset=preset)
    m, other = config.build(), config.build()
    states, cells = set(), set()
    from checker.walks.walker import walks as run_walks

    for r in run_walks(m, 0, range(60), 25, swarm=True, keep_fingerprints=False):
        for _, state in replay(m, r.init_index, r.actions):
            value = m.abstraction(state)
            assert _plain_value(value), value
            assert value == m.abstraction(state) == other.abstraction(state)
            assert repr(value) == repr(other.abstraction(state))
            states.add(state)
            cells.add(value)
    assert 1 < len(cells) < len(states)
    abstraction = Abstraction(m)
    init = m.init_states()[0]
    assert abstraction.cell(init, list(m.actions(init)), 0) == (m.abstraction(init), 0)
    assert abstraction.after(0, m.action_kinds[0]) == 0


# --- determinism across engines --------------------------------------------------------------------


def _guided(run_round, seed: int = 5, rounds: int = 4, walks: int = 40):
    summary, info = run_guided(run_round, seed, rounds, walks, corpus=8)
    summary.fingerprints = set()  # Spark counts them apart
    return summary, info


def test_guided_rounds_do_not_depend_on_the_split() -> None:
    one = _guided(_split_runner(SMOKE_SPEC, 5, 12, 1))
    for parts in (3, 4):
        assert _guided(_split_runner(SMOKE_SPEC, 5, 12, parts)) == one
    assert one[1]["rounds"] == 4 and one[0].walks == 160
    assert {w // 40 for w in range(160)} == set(range(4))


def test_guided_process_pool_gives_the_single_process_result(capsys) -> None:
    argv = ["simulate", "--model", "replication", "--preset", "smoke", "--guided", "--rounds", "3", "--walks", "60",
            "--depth", "12", "--swarm", "--seed", "4", "--json", "--quiet"]
    assert main(argv) in (0, 1)
    one = json.loads(capsys.readouterr().out)
    assert main(argv + ["--processes", "2"]) in (0, 1)
    two = json.loads(capsys.readouterr().out)
    for key in ("result", "violations", "walks", "steps", "action_counts", "depth_histogram", "distinct_states",
                "sometimes_reached", "outcomes", "guided_search"):
        assert one[key] == two[key], key
    assert one["guided"] is True and one["guided_search"]["walks_per_round"] == 60


def test_guided_on_spark_equals_local(spark) -> None:
    from checker.walks.spark import count_distinct, run_spark

    sc = spark.sparkContext
    results = []
    for parts in (1, 4):
        kept: list = []
        summary, info = _guided(lambda plan, n: run_spark(sc, SMOKE_SPEC, 5, n, 12, swarm=True, partitions=parts,
                                                          plan=plan, fingerprints=kept)[0])
        results.append((summary, info, count_distinct(sc, kept)))
    local, local_info = run_guided(_split_runner(SMOKE_SPEC, 5, 12, 1), 5, 4, 40, corpus=8)
    distinct = len(local.fingerprints)
    local.fingerprints = set()
    assert results[0] == results[1] == (local, local_info, distinct)


def test_guided_state_cells_on_spark_equal_local(spark) -> None:
    """The state-cells flag reaches the executors with the round plan: Spark's rounds are the local ones."""
    from checker.walks.spark import run_spark

    sc = spark.sparkContext
    remote = run_guided(lambda plan, n: run_spark(sc, SMOKE_SPEC, 5, n, 6, swarm=True, partitions=3, plan=plan,
                                                  distinct="none")[0], 5, 3, 40, corpus=40, state_cells=True)
    local = run_guided(lambda plan, n: summarize(SMOKE_SPEC.build(), 5, range(n), 6, True, distinct="none", plan=plan),
                       5, 3, 40, corpus=40, state_cells=True)
    abstract = run_guided(lambda plan, n: summarize(SMOKE_SPEC.build(), 5, range(n), 6, True, distinct="none",
                                                    plan=plan), 5, 3, 40, corpus=40)
    assert remote == local and local[1]["cells"] > abstract[1]["cells"]
    # novelty: the archive's fingerprints reach the executors as a broadcast, with the same result
    remote = run_guided(lambda plan, n: run_spark(sc, SMOKE_SPEC, 5, n, 6, swarm=True, partitions=3, plan=plan,
                                                  distinct="none")[0], 5, 3, 40, corpus=40, state_cells=True,
                        novelty=True)
    novel = run_guided(lambda plan, n: summarize(SMOKE_SPEC.build(), 5, range(n), 6, True, distinct="none", plan=plan),
                       5, 3, 40, corpus=40, state_cells=True, novelty=True)
    assert remote == novel and novel[0].outcomes["known"] > 0 and novel[1]["cells"] > local[1]["cells"]


def test_guided_cli_on_spark_equals_local(spark, capsys) -> None:
    argv = ["simulate", "--model", "replication", "--preset", "smoke", "--guided", "--rounds", "3", "--walks", "40",
            "--depth", "12", "--swarm", "--json", "--quiet"]
    assert main(argv + ["--engine", "spark", "--partitions", "4"]) in (0, 1)
    remote = json.loads(capsys.readouterr().out)
    assert main(argv) in (0, 1)
    local = json.loads(capsys.readouterr().out)
    assert remote["engine"] == "spark" and local["engine"] == "local"
    for key in ("result", "violations", "walks", "steps", "action_counts", "depth_histogram", "distinct_states",
                "guided_search"):
        assert remote[key] == local[key], key


# --- finding what plain walks miss ------------------------------------------------------------------


class Lock(NamedTuple):
    x: int  # tumblers turned
    y: int  # noise


class Slip(NamedTuple):
    pass


class Noise(NamedTuple):
    pass


class Hum(NamedTuple):
    pass


TURNS = [namedtuple(f"Turn{i}", []) for i in range(20)]


class CombinationLock:
    """A lock of `k` tumblers: `Turn<x>` turns the next one, `Slip` undoes them all, `Noise` and
    `Hum` change nothing that matters. Invariant: the lock stays shut (x < k); BFS's shortest
    counterexample is `k` turns. A plain walk at a partly open lock turns, slips, or makes a
    noise with probability 1/4 each, so it opens the lock about once in 4**k steps; each stage enables
    its own action kind, which the default abstraction sees, so guided rounds restart at the
    furthest stage reached and go on from there."""

    name = "lock"
    variant = "default"

    def __init__(self, k: int) -> None:
        self.k = k
        self.config = {"k": k}
        self.action_kinds = tuple(f"Turn{i}" for i in range(k)) + ("Slip", "Noise", "Hum")
        self.properties = [always("shut", lambda s: s.x < k, "the lock stays shut")]

    def init_states(self) -> list[Lock]:
        return [Lock(0, 0)]

    def actions(self, s: Lock) -> list:
        out: list = [TURNS[s.x]()] if s.x < self.k else []
        if s.x > 0:
            out.append(Slip())
        out += [Noise(), Hum()]
        return out

    def next_state(self, s: Lock, a) -> Lock:
        if isinstance(a, Slip):
            return Lock(0, s.y)
        if isinstance(a, (Noise, Hum)):
            return Lock(s.x, 1 - s.y if isinstance(a, Noise) else s.y)
        return Lock(s.x + 1, s.y)

    def fingerprint(self, s: Lock) -> int:
        return s.x * 2 + s.y

    def encode(self, s: Lock) -> bytes:
        return repr(tuple(s)).encode()

    def to_json(self, s: Lock) -> dict:
        return {"x": s.x, "y": s.y}


def test_guided_opens_a_lock_that_plain_walks_of_the_same_budget_do_not() -> None:
    k, rounds, walks, depth = 14, 12, 100, 30
    lock = CombinationLock(k)
    plain = summarize(lock, 0, range(rounds * walks), depth)
    assert not plain.violations, "plain walks opened the lock: the test lost its point"

    def run_round(plan: RoundPlan, n: int) -> Summary:
        return summarize(lock, 0, range(n), depth, plan=plan)

    guided, info = run_guided(run_round, 0, rounds, walks, corpus=8)
    v = guided.violations["shut"]
    assert info["violation_round"] is not None and info["rounds"] == info["violation_round"] + 1 <= rounds
    assert guided.walks == info["rounds"] * walks <= rounds * walks  # within plain's budget
    trace = replay(lock, v.init_index, v.actions)  # prefix + suffix, from the initial state
    assert len(trace) == v.length + 1 and trace[-1][1].x == k and all(s.x < k for _, s in trace[:-1])
    shrunk = shrink_walk(lock, v.init_index, v.actions, "shut")
    assert len(shrunk) - 1 <= 2 * k


def _bfs_shortest(model_name: str, variant: str) -> int:
    text = (ROOT / "traces" / model_name / f"{variant}.txt").read_text()
    return int(re.search(r"violated after (\d+) step", text).group(1))


def test_guided_counterexample_replays_and_is_short(capsys, tmp_path: Path) -> None:
    """A catalogue bug on its smoke preset: the guided counterexample (prefix + suffix, shrunk)
    replays with `kcheck replay` and is at most twice BFS's shortest."""
    variant = "hw-without-maximal-isr"
    shortest = _bfs_shortest("replication", variant)
    out = tmp_path / "cex.itf.json"
    code = main(["simulate", "--model", "replication", "--variant", variant, "--preset", "smoke", "--guided",
                 "--rounds", "5", "--walks", "100", "--depth", "30", "--swarm", "--json", "--quiet",
                 "--trace-out", str(out)])
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and report["guided_search"]["violation_round"] is not None
    v = next(v for v in report["violations"] if v["invariant"] == "candidate_completeness")
    assert v["shrunk_length"] <= min(v["length"], 2 * shortest)
    assert v["round"] == v["walk_id"] // 100 <= report["guided_search"]["violation_round"]
    rc = load_config(model="replication", variant=variant, preset="smoke")
    m = rc.build()
    (walk,) = [r for r in _rerun(m, report, v["walk_id"])]
    trace = replay(m, walk.init_index, walk.actions)
    assert len(trace) - 1 == v["length"]
    assert main(["replay", str(out)]) == 0, capsys.readouterr()


def test_guided_finds_r9_on_smoke_as_short_as_bfs(capsys) -> None:
    """R9 (no-broker-epoch-in-alter-partition), which walks miss on `default` (18 steps), on
    `smoke` where BFS's shortest is 13 steps: guided search finds it within ten rounds of 1,000
    walks (round 5 measured since swarm weights cover AlterPartitionReassignments too) and shrinks
    it to at most twice BFS's shortest there."""
    _guided_finds_as_short_as_bfs(capsys, "no-broker-epoch-in-alter-partition", ["--preset", "smoke"],
                                  ["--rounds", "10", "--depth", "30"])


@pytest.mark.slow
def test_guided_state_cells_find_h2_with_a_fixed_leader(capsys) -> None:
    """H2 (fence-with-stale-fetch-queued) on `stale-fetch` with `max_leader_epoch=0`, where BFS's
    shortest is 20 steps in about 34,000 states and abstract cells miss it: guided search with
    state cells and walks of 4 steps finds it within 300 rounds of 1,000 walks (round 147
    measured, about a minute) and shrinks it to at most twice BFS's shortest."""
    _guided_finds_as_short_as_bfs(capsys, "fence-with-stale-fetch-queued",
                                  ["--preset", "stale-fetch", "--set", "max_leader_epoch=0"],
                                  ["--cells", "state", "--rounds", "300", "--depth", "4"])


def _guided_finds_as_short_as_bfs(capsys, variant: str, config: list[str], search: list[str], *,
                                  model: str = "replication", invariant: str = "candidate_completeness",
                                  walks: int = 1000) -> None:
    """BFS finds the variant's `invariant` violation on `config`; guided search (`walks` walks a
    round, swarm, with `search`'s options) finds it too and shrinks it to at most twice BFS's
    shortest."""
    assert main(["check", "--model", model, "--variant", variant, *config, "--json"]) == 1
    bfs = json.loads(capsys.readouterr().out)["violation"]
    assert bfs["invariant"] == invariant
    shortest = len(bfs["trace"]) - 1  # states, with the initial one
    code = main(["simulate", "--model", model, "--variant", variant, *config, "--guided", *search,
                 "--walks", str(walks), "--swarm", "--distinct", "none", "--json", "--quiet"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and report["guided_search"]["violation_round"] is not None
    v = next(v for v in report["violations"] if v["invariant"] == invariant)
    assert v["shrunk_length"] <= 2 * shortest


NOVELTY = ["--cells", "state", "--novelty", "--corpus", "5000", "--depth", "30"]


@pytest.mark.slow  # about 3 minutes; the gate's BFS row finds R2, test_guided_finds_r9_on_smoke_as_short_as_bfs keeps guided search in the suite
def test_novelty_finds_r2_divergent_logs(capsys) -> None:
    """R2 (truncate-to-hw-diverge) as divergent logs (`log_matching` alone) on `epoch-lookup`,
    where BFS's shortest is 15 steps after about 450,000 states and neither plain walks nor
    abstract or plain state cells found it in 100,000 walks or 300 rounds: novelty search finds
    it within 40 rounds of 5,000 walks (round 8 measured, about 25 s) and shrinks it to at most
    twice BFS's shortest."""
    _guided_finds_as_short_as_bfs(capsys, "truncate-to-hw-diverge",
                                  ["--preset", "epoch-lookup", "--invariant", "log_matching"],
                                  NOVELTY + ["--rounds", "40"], invariant="log_matching", walks=5000)


@pytest.mark.slow
def test_novelty_finds_r4_zombie_leader(capsys) -> None:
    """R4 (no-current-epoch-in-fetch) on `zombie-leader`: BFS's shortest is 20 steps after about
    2 million states; novelty search finds it within 300 rounds of 5,000 walks (round 88
    measured, about 4 minutes, 1.67 million states archived)."""
    _guided_finds_as_short_as_bfs(capsys, "no-current-epoch-in-fetch", ["--preset", "zombie-leader"],
                                  NOVELTY + ["--rounds", "300"], walks=5000)


@pytest.mark.slow
def test_novelty_finds_k1_figure8(capsys) -> None:
    """K1 (commit-by-count) on `figure8`: BFS's shortest is 40 steps after about 1.16 million
    states; novelty search finds it within 300 rounds of 5,000 walks (round 127 measured, about
    4.5 minutes)."""
    _guided_finds_as_short_as_bfs(capsys, "commit-by-count", ["--preset", "figure8"], NOVELTY + ["--rounds", "300"],
                                  model="kraft", invariant="leader_completeness", walks=5000)


def _rerun(m, report: dict, walk_id: int):
    """Re-run the guided search's rounds up to the violating walk's and return that walk."""
    walks = report["guided_search"]["walks_per_round"]
    found = {}

    def run_round(plan: RoundPlan, n: int) -> Summary:
        s = summarize(m, report["seed"], range(n), report["depth"], report["swarm"], plan=plan)
        if plan.first_id <= walk_id < plan.first_id + n:
            from checker.walks.walker import Walker

            found["walk"] = Walker(m).walk(report["seed"], walk_id, report["depth"], report["swarm"],
                                           plan.start(report["seed"], walk_id), {})
        return s

    run_guided(run_round, report["seed"], report["guided_search"]["rounds"], walks,
               corpus=report["guided_search"]["corpus"])
    return [found["walk"]]


# --- the command ---------------------------------------------------------------------------------


def test_guided_cli_reports_rounds(capsys) -> None:
    code = main(["simulate", "--model", "toy", "--set", "k=6", "--guided", "--rounds", "3", "--walks", "20",
                 "--depth", "5", "--json"])
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert code == 0 and report["guided"] is True and report["walks"] == 60
    assert report["guided_search"] == {"rounds": 3, "rounds_requested": 3, "walks_per_round": 20, "corpus": 20,
                                       "cells": report["guided_search"]["cells"], "cells_mode": "abstract",
                                       "novelty": False, "violation_round": None}
    assert report["guided_search"]["cells"] > 1
    lines = [line for line in err.splitlines() if "guided): round" in line]
    assert len(lines) == 3 and lines[0].startswith("kcheck: simulate (local, guided): round 1/3 from initial states")
    assert re.search(r"round 2/3 from corpus \d+: 40 walks, 200 steps, \d+ cells", lines[1]), lines[1]
    code = main(["simulate", "--model", "toy", "--set", "k=6", "--walks", "20", "--json", "--quiet"])
    plain = json.loads(capsys.readouterr().out)
    assert code == 0 and plain["guided"] is False and plain["guided_search"] is None


@pytest.mark.parametrize("argv, message", [
    (["--rounds", "3"], "--rounds needs --guided"),
    (["--corpus", "3"], "--corpus needs --guided"),
    (["--cells", "state"], "--cells needs --guided"),
    (["--guided", "--cells", "phase"], "--cells"),
    (["--guided", "--rounds", "0"], "--rounds: expected a positive integer, got '0'"),
    (["--guided", "--corpus", "-2"], "--corpus: expected a positive integer"),
    (["--guided", "--rounds", "x"], "--rounds"),
])
def test_guided_cli_bad_input(capsys, argv: list[str], message: str) -> None:
    code = main(["simulate", "--model", "toy", "--quiet", *argv])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
