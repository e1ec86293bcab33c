"""The liveness engine: fair cycles on hand-made graphs (weak vs strong fairness, stuttering,
bounds), its SCC code against networkx, its fair-cycle search against brute force, lassos, and
the kraft availability variants through the CLI."""
from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path
from typing import Any, NamedTuple

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from checker.cli.commands import main  # noqa: E402
from checker.search.liveness import (  # noqa: E402
    OK, UNREACHED, VIOLATION, build_graph, check_liveness, components, unfair_in_cycle,
)
from model.interface import (  # noqa: E402
    always_eventually, eventually, leads_to, strong_fairness, timely_invariant, weak_fairness,
)


class Weak(NamedTuple):
    dst: int


class Strong(NamedTuple):
    dst: int


class Unfair(NamedTuple):
    dst: int


KINDS = {"weak": Weak, "strong": Strong, "unfair": Unfair}


class GraphModel:
    """A model over an explicit graph: states 0..n-1, state 0 initial, edges (src, kind, dst).
    Weak is weakly fair, Strong strongly fair, Unfair not fair. `blocked` maps a state to the
    actions a pretend bound keeps disabled there."""

    name = "graph"
    variant = "test"
    config: dict[str, Any] = {}
    action_kinds = ("Weak", "Strong", "Unfair")

    def __init__(self, edges: list[tuple[int, str, int]], properties: list[Any],
                 blocked: dict[int, list[Any]] | None = None) -> None:
        self.edges = edges
        self.properties = properties
        self.fairness = (weak_fairness("Weak", "test"), strong_fairness("Strong", "test"))
        self.blocked = blocked or {}

    def init_states(self) -> list[int]:
        return [0]

    def actions(self, s: int) -> list[Any]:
        return [KINDS[kind](dst) for src, kind, dst in self.edges if src == s]

    def next_state(self, s: int, a: Any) -> int | None:
        return a.dst

    def encode(self, s: int) -> bytes:
        return str(s).encode()

    def to_json(self, s: int) -> dict[str, Any]:
        return {"s": s}

    def bound_blocked(self, s: int) -> list[tuple[Any, str]]:
        return [(a, "max_test") for a in self.blocked.get(s, [])]


def reach(goal: set[int]) -> Any:
    return eventually("reach", lambda s: s in goal, "the goal is reached")


def verdict(edges: list[tuple[int, str, int]], prop: Any, blocked: dict[int, list[Any]] | None = None) -> Any:
    return check_liveness(GraphModel(edges, [prop], blocked)).outcomes[0]


# --- weak and strong fairness, stuttering ---------------------------------------------------------


def test_a_fair_cycle_never_reaching_the_goal_is_a_violation():
    # 0 <-> 1 by weakly fair steps, taken in the cycle; 0 -> 2 (goal) by an unfair step
    o = verdict([(0, "weak", 1), (1, "weak", 0), (0, "unfair", 2)], reach({2}))
    assert o.result == VIOLATION
    assert o.lasso is not None and not o.lasso.stutter


def test_weak_fairness_is_not_enough_when_the_exit_is_enabled_only_now_and_then():
    # the exit is enabled in 0 only; the cycle visits 1, where it is disabled: weakly fair
    o = verdict([(0, "weak", 1), (1, "weak", 0), (0, "weak", 2)], reach({2}))
    assert o.result == VIOLATION


def test_strong_fairness_takes_an_exit_enabled_infinitely_often():
    o = verdict([(0, "weak", 1), (1, "weak", 0), (0, "strong", 2)], reach({2}))
    assert o.result == OK
    # with unfair steps back to 0 the behaviour may rest in 1 forever: nothing fair is enabled there
    rest = verdict([(0, "weak", 1), (1, "unfair", 0), (0, "strong", 2)], reach({2}))
    assert rest.result == VIOLATION and rest.lasso.stutter and rest.lasso.trace[-1][1] == 1


def test_weak_fairness_takes_an_exit_enabled_throughout_the_cycle():
    o = verdict([(0, "weak", 1), (1, "weak", 0), (0, "weak", 2), (1, "weak", 2)], reach({2}))
    assert o.result == OK


def test_a_state_may_stutter_forever_unless_a_fair_action_is_enabled():
    unfair = verdict([(0, "unfair", 1)], reach({1}))
    assert unfair.result == VIOLATION and unfair.lasso is not None and unfair.lasso.stutter
    assert len(unfair.lasso.trace) == 1 and unfair.lasso.loop == 0
    assert verdict([(0, "weak", 1)], reach({1})).result == OK


def test_strong_fairness_drops_the_states_that_enable_it_and_looks_again():
    # 0 <-> 1 <-> 2: the strong exit of 0 rules out any cycle through 0; the cycle 1-2 never
    # enables it and is fair on its own
    edges = [(0, "weak", 1), (1, "weak", 0), (0, "strong", 3), (1, "weak", 2), (2, "weak", 1)]
    o = verdict(edges, reach({3}))
    assert o.result == VIOLATION
    assert {s for _, s in o.lasso.trace[o.lasso.loop:]} <= {1, 2}


def test_a_timely_invariant_fails_at_the_nearest_bad_state_with_a_shortest_trace():
    # 0 -> 1 -> 2 -> 4 (bad) and 0 -> 3 -> 4: the trace is 0, 1 or 3, then 4 (two steps)
    edges = [(0, "weak", 1), (1, "weak", 2), (2, "weak", 4), (0, "unfair", 3), (3, "weak", 4), (1, "weak", 5)]
    prop = timely_invariant("never_four", lambda s: s not in (4, 5), lambda s: s in (1, 3))
    o = verdict(edges, prop)
    assert o.result == VIOLATION and o.lasso is None
    assert [s for _, s in o.path] == [0, 1, 5]  # 5 is found first in breadth-first order
    assert o.counterexample == (o.path, None) and o.antecedent_states == 2
    assert [repr(a) for a, _ in o.path[1:]] == ["Weak(dst=1)", "Weak(dst=5)"]


def test_a_timely_invariant_whose_guard_never_holds_is_unreached():
    edges = [(0, "weak", 1)]
    assert verdict(edges, timely_invariant("p", lambda s: True, lambda s: s == 7)).result == UNREACHED
    assert verdict(edges, timely_invariant("p", lambda s: True, lambda s: s == 1)).result == OK


def test_kraft_bounds_are_lifted_together_when_one_is_not_enough():
    """A fetch timeout without pre-vote stands in epoch + 1: at max_epoch with the timer budget
    spent, lifting either bound alone leaves it disabled; lifting both enables it, so a cycle that
    waits for it is cut by `max_epoch+timeouts`, not a violation."""
    from checker.config import load_config
    from model.kraft.actions import FetchTimeout
    from model.kraft.rules import FOLLOWER

    model = load_config(model="kraft", preset="default", variant="no-pre-vote").build().liveness_model()
    s = model.init_states()[0]
    leader, follower = s.nodes[1]._replace(role=3, epoch=2, leader=1), s.nodes[0]._replace(
        role=FOLLOWER, epoch=2, leader=1)
    s = s._replace(nodes=(follower, leader, s.nodes[2]._replace(epoch=2)), cut_links=((0, 1),), cuts=1, timers=3)
    assert model.next_state(s, FetchTimeout(0)) is None
    assert (FetchTimeout(0), "max_epoch+timeouts") in model.bound_blocked(s)


def test_leads_to_and_always_eventually():
    edges = [(0, "weak", 1), (1, "weak", 2), (2, "unfair", 0), (2, "unfair", 3), (3, "unfair", 3)]
    ok = leads_to("one_then_two", lambda s: s == 1, lambda s: s == 2)
    assert verdict(edges, ok).result == OK
    # from 2 the behaviour may move to 3 and stay: 0 never comes back
    assert verdict(edges, always_eventually("zero_again", lambda s: s == 0)).result == VIOLATION
    never = leads_to("from_nowhere", lambda s: s == 9, lambda s: True)
    assert verdict(edges, never).result == UNREACHED


def test_a_cycle_that_is_fair_only_because_a_bound_blocks_an_action_is_cut_not_violated():
    edges = [(0, "weak", 1), (1, "weak", 0)]
    without = verdict(edges, reach({2}))
    assert without.result == VIOLATION
    cut = verdict(edges, reach({2}), blocked={0: [Weak(2)], 1: [Weak(2)]})
    assert cut.result == OK and cut.fair_sets == 1 and cut.cut_by_bound == {"max_test": 1}
    # blocked in one state only: weak fairness is still met by the cycle, so it is a violation
    partly = verdict(edges, reach({2}), blocked={0: [Weak(2)]})
    assert partly.result == VIOLATION


# --- the lasso ------------------------------------------------------------------------------------


def test_the_lasso_follows_the_model_closes_and_is_fair():
    edges = [(0, "weak", 1), (1, "weak", 2), (2, "weak", 1), (2, "strong", 3), (3, "weak", 1),
             (1, "unfair", 4)]
    m = GraphModel(edges, [reach({4})])
    o = check_liveness(m).outcomes[0]
    assert o.result == VIOLATION
    trace, loop = o.lasso.trace, o.lasso.loop
    for (_, s), (a, t) in zip(trace, trace[1:]):
        assert a in m.actions(s) and m.next_state(s, a) == t
    assert trace[-1][1] == trace[loop][1] and len(trace) - 1 > loop
    assert unfair_in_cycle(m, trace[loop:]) == []
    taken = {a for a, _ in trace[loop + 1:]}
    assert Weak(2) in taken and Strong(3) in taken  # every fair action of the set is taken


def test_an_unfair_cycle_is_named():
    m = GraphModel([(0, "unfair", 1), (1, "unfair", 0), (0, "weak", 2), (1, "weak", 2)], [reach({2})])
    why = unfair_in_cycle(m, [(None, 0), (Unfair(1), 1), (Unfair(0), 0)])
    assert why == ["Weak(dst=2) (weak fairness) is enabled in every state of the cycle and never taken"]


# --- against networkx and brute force -------------------------------------------------------------

graphs = st.integers(min_value=1, max_value=7).flatmap(lambda n: st.tuples(
    st.just(n),
    st.lists(st.tuples(st.integers(0, n - 1), st.sampled_from(sorted(KINDS)), st.integers(0, n - 1)),
             max_size=3 * n, unique=True),
    st.sets(st.integers(0, n - 1))))


@settings(max_examples=200, deadline=None)
@given(graphs)
def test_components_agree_with_networkx(graph):
    n, edges, _ = graph
    m = GraphModel(edges, [])
    g = build_graph(m, [])
    inside = bytearray([1]) * g.states
    ours = {frozenset(g_state for g_state in comp) for comp in components(g, inside, range(g.states))}
    index_of = {s: v for v, s in enumerate(_state_order(g, m))}
    nxg = nx.DiGraph()
    nxg.add_nodes_from(index_of.values())
    nxg.add_edges_from((index_of[a], index_of[b]) for a, _, b in edges if a in index_of)
    theirs = {frozenset(c) for c in nx.strongly_connected_components(nxg)}
    assert ours == theirs


def _state_order(g: Any, m: GraphModel) -> list[int]:
    return [g.states_of([v])[v] for v in range(g.states)]


def brute_force_violation(n: int, edges: list[tuple[int, str, int]], goal: set[int]) -> bool:
    """Is there a fair behaviour from 0 that from some point never visits the goal? A set S of
    reachable non-goal states, strongly connected (or one state, which may stutter), such that no
    weakly fair action is enabled in every state of S and taken nowhere inside it, and no strongly
    fair action is enabled somewhere in S and taken nowhere inside it."""
    graph = nx.DiGraph([(a, b) for a, _, b in edges])
    graph.add_node(0)
    reachable = {0} | nx.descendants(graph, 0)
    candidates = [s for s in reachable if s not in goal]
    for size in range(1, len(candidates) + 1):
        for subset in itertools.combinations(candidates, size):
            S = set(subset)
            inner = [(a, k, b) for a, k, b in edges if a in S and b in S]
            if size > 1 and not nx.is_strongly_connected(nx.DiGraph([(a, b) for a, _, b in inner]
                                                                     + [(s, s) for s in S])):
                continue
            taken = {(k, b) for _, k, b in inner}
            enabled = {s: {(k, b) for a, k, b in edges if a == s and k != "unfair"} for s in S}
            fair = True
            for inst in set().union(*enabled.values()) - taken:
                everywhere = all(inst in e for e in enabled.values())
                if inst[0] == "strong" or everywhere:
                    fair = False
            if fair:
                return True
    return False


@settings(max_examples=300, deadline=None)
@given(graphs)
def test_fair_cycle_search_agrees_with_brute_force(graph):
    n, edges, goal = graph
    # []<>goal fails iff from some reachable point a fair behaviour avoids the goal forever
    prop = always_eventually("goal", lambda s, goal=goal: s in goal)
    m = GraphModel(edges, [prop])
    result = check_liveness(m).outcomes[0]
    assert (result.result == VIOLATION) == brute_force_violation(n, edges, goal)
    if result.lasso is not None:
        trace, loop = result.lasso.trace, result.lasso.loop
        assert all(s not in goal for _, s in trace[loop:])
        assert trace[-1][1] == trace[loop][1]
        assert unfair_in_cycle(m, trace[loop:]) == []


# --- kraft through the CLI ------------------------------------------------------------------------


def run_cli(capsys: Any, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_no_check_quorum_is_found_as_a_lasso_and_replays(capsys, tmp_path):
    trace = tmp_path / "k8.itf.json"
    code, out, _ = run_cli(capsys, "check", "--model", "kraft", "--variant", "no-check-quorum", "--preset",
                           "isolated-leader", "--json", "--quiet", "--trace-out", str(trace))
    report = json.loads(out)
    assert code == 1 and report["result"] == "violation"
    v = report["violation"]
    assert v["kind"] == "liveness" and v["invariant"] == "isolated_leader_resigns"
    assert 0 <= v["loop"] < len(v["trace"]) - 1
    doc = json.loads(trace.read_text())
    assert doc["loop"] == v["loop"] and doc["#meta"]["kind"] == "liveness"
    code, out, _ = run_cli(capsys, "replay", str(trace), "--quiet")
    assert code == 0 and "a lasso" in out
    # Kafka 4.1 allows the same steps, but not forever: its check-quorum timer must fire
    code, out, _ = run_cli(capsys, "replay", str(trace), "--variant", "kafka-4.1", "--quiet")
    assert code == 1 and "CheckQuorumTimeout(node=0) (weak fairness)" in out


def test_kafka_holds_every_temporal_property_on_the_availability_preset(capsys):
    code, out, _ = run_cli(capsys, "check", "--model", "kraft", "--preset", "isolated-leader", "--json", "--quiet")
    report = json.loads(out)
    assert code == 0 and report["liveness"]["result"] == "ok"
    props = report["liveness"]["properties"]
    assert {p["name"] for p in props} >= {"leader_elected_eventually", "isolated_leader_resigns"}
    for p in props:
        assert p["result"] == "ok" and p["antecedent_states"] > 0
    assert sum(p["cut_by_bound"] for p in props) > 0  # bounds cut cycles, and it is reported


def test_no_liveness_skips_the_pass(capsys):
    code, out, _ = run_cli(capsys, "check", "--model", "kraft", "--variant", "no-check-quorum", "--preset",
                           "isolated-leader", "--no-liveness", "--quiet")
    assert code == 0 and "liveness:         skipped (--no-liveness)" in out


def test_a_liveness_counterexample_prints_its_cycle(capsys):
    code, out, _ = run_cli(capsys, "check", "--model", "kraft", "--variant", "no-pre-vote-no-check-quorum",
                           "--preset", "isolated-leader", "--quiet")
    assert code == 1
    assert "counterexample: liveness property isolated_leader_resigns (always_eventually) violated" in out
    assert "--- cycle: steps" in out and "repeat forever" in out


# --- docs/liveness.md's commands ------------------------------------------------------------------

DOC_COMMANDS = [  # (command as docs/liveness.md shows it, its exit code, slow)
    ("kcheck check --model kraft --preset isolated-leader", 0, False),
    ("kcheck check --model kraft --variant no-check-quorum --preset isolated-leader --trace-out k8.itf.json", 1, False),
    ("kcheck replay k8.itf.json", 0, False),
    ("kcheck replay k8.itf.json --variant kafka-4.1", 1, False),
    ("kcheck check --model kraft --variant no-pre-vote --preset rejoin", 1, True),
    ("kcheck check --model kraft --preset isolated-leader --no-liveness", 0, False),
]


def _doc_block() -> list[str]:
    text = (ROOT / "docs" / "liveness.md").read_text()
    block = text.split("```\n", 2)[1]
    return [line for line in block.splitlines() if line.startswith("kcheck ")]


def test_the_doc_shows_exactly_the_tested_commands():
    assert _doc_block() == [c for c, _, _ in DOC_COMMANDS]


def test_the_doc_commands_run(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for command, code, slow in DOC_COMMANDS:
        if slow:
            continue  # test_the_slow_doc_command_runs, which checks its trace too
        args = command.split()[1:]
        got = main(args + (["--quiet"] if args[0] in ("check", "replay") else []))
        out, err = capsys.readouterr()
        assert got == code, (command, out[-2000:], err[-2000:])


def test_the_slow_doc_command_runs(capsys, tmp_path, monkeypatch):
    """K7 on the rejoin preset (about 15 s): a finite trace, the shortest in the timely model, of a
    follower taken away from a settled, healthy leader."""
    monkeypatch.chdir(tmp_path)
    got = main(["check", "--model", "kraft", "--variant", "no-pre-vote", "--preset", "rejoin", "--quiet", "--json",
                "--trace-out", "k7.itf.json"])
    report = json.loads(capsys.readouterr()[0])
    v = report["violation"]
    assert got == 1 and report["result"] == "violation" and report["liveness"]["result"] == "violation"
    assert (v["kind"], v["invariant"], v["property_kind"], v["loop"]) == (
        "liveness", "leader_not_disrupted", "timely_invariant", None)
    assert len(v["trace"]) - 1 == 10
    doc = json.loads((tmp_path / "k7.itf.json").read_text())
    assert "loop" not in doc and len(doc["states"]) == 11
    assert main(["replay", "k7.itf.json", "--quiet"]) == 0
    assert main(["replay", "k7.itf.json", "--variant", "kafka-4.1", "--quiet"]) == 1  # it times out to Prospective


def test_list_shows_the_temporal_properties(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr()[0]
    assert "temporal properties (liveness):" in out
    assert "isolated_leader_resigns [always_eventually]" in out


def test_a_pass_past_its_state_limit_is_skipped_with_a_warning(capsys):
    code, out, err = run_cli(capsys, "check", "--model", "kraft", "--preset", "isolated-leader", "--quiet",
                             "--liveness-max-states", "1000", "--json")
    report = json.loads(out)
    assert code == 0 and report["result"] == "ok" and report["liveness"] is None
    assert "more than --liveness-max-states 1,000" in report["liveness_skipped"]
    assert "WARNING: the temporal properties were not checked" in err
    code, out, _ = run_cli(capsys, "check", "--model", "kraft", "--preset", "isolated-leader", "--quiet",
                           "--liveness-max-states", "1000", "--strict", "--json")
    assert code == 1 and json.loads(out)["result"] == "vacuous"
    # a safety pass within the limit (say a symmetry reduction made it small), a liveness graph past
    # it: the pass stops and is skipped
    import argparse

    from checker.search.run import explore
    from checker.cli.check import _liveness_pass
    from checker.config import load_config

    model = load_config(model="kraft", preset="isolated-leader").build()
    r = explore(model, max_states=None)
    r.distinct_states = 100
    args = argparse.Namespace(liveness=True, liveness_max_states=1000, max_states=None, quiet=True)
    live, skipped = _liveness_pass(args, model, r)
    assert live is None and skipped == "the liveness graph passed --liveness-max-states 1,000 states"


def test_a_gate_row_may_switch_the_pass_off(tmp_path, capsys):
    gate = tmp_path / "gate.toml"
    gate.write_text('[[row]]\nname = "k"\nmodel = "kraft"\nvariant = "kafka-4.1"\npreset = "isolated-leader"\n'
                    'expect = "holds"\nliveness = false\n'
                    'may_miss = ["truncation", "HandleBeginQuorumEpochResponse"]\n'
                    '[[row]]\nname = "k8"\nmodel = "kraft"\nvariant = "no-check-quorum"\npreset = "isolated-leader"\n'
                    'expect = "isolated_leader_resigns"\n')
    code, out, _ = run_cli(capsys, "gate", str(gate), "--json", "--quiet")
    rows = {r["name"]: r for r in json.loads(out)["rows"]}
    assert code == 0 and rows["k"]["liveness"] == "off" and rows["k8"]["kind"] == "liveness"
    assert "temporal properties not checked (liveness = false)" in rows["k"]["notes"]
    gate.write_text(gate.read_text().replace('expect = "isolated_leader_resigns"\n',
                                             'expect = "isolated_leader_resigns"\nliveness = false\n'))
    code, _, err = run_cli(capsys, "gate", str(gate), "--quiet")
    assert code == 2 and "is a temporal property, but the row sets liveness = false" in err


def test_a_bug_variant_that_passes_off_its_preset_says_where_its_bug_is(capsys):
    code, out, _ = run_cli(capsys, "check", "--model", "kraft", "--variant", "no-check-quorum", "--preset", "smoke",
                           "--quiet")
    assert code == 0
    assert ("result:           ok (variant no-check-quorum's bug is expected to break isolated_leader_resigns"
            " on preset isolated-leader, not on smoke: try --preset isolated-leader)") in out
    code, out, _ = run_cli(capsys, "check", "--model", "kraft", "--preset", "smoke", "--quiet", "--json")
    assert code == 0 and json.loads(out)["variant_note"] == ""
