"""The BFS engine against hand-derived counts on the toy model and against a dumb search."""
from __future__ import annotations

import os
import subprocess
import sys
from collections import deque
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from checker.search.common import Progress  # noqa: E402
from checker.search.run import explore
from checker.fingerprint import fingerprint  # noqa: E402
from checker.traces.render import ABSENT, diff, render_text, trace_json  # noqa: E402
from model.interface import always, sometimes  # noqa: E402
from tests.toymodel import ToyModel  # noqa: E402

NO_LIMIT = 10**9


def toy(k: int, limit: int = NO_LIMIT) -> ToyModel:
    return ToyModel({"k": k, "limit": limit})


# --- a dumb reference search: recursive DFS over Python states, no fingerprints -------------


def dumb_reachable(model: Any) -> tuple[set[Any], int]:
    """Every reachable state, and the number of successors computed (TLC convention: initial
    states count, a None successor does not)."""
    seen: set[Any] = set()
    generated = 0

    def visit(s: Any) -> None:
        nonlocal generated
        for a in model.actions(s):
            t = model.next_state(s, a)
            if t is None:
                continue
            generated += 1
            if t not in seen:
                seen.add(t)
                visit(t)

    for s in model.init_states():
        generated += 1
        if s not in seen:
            seen.add(s)
            visit(s)
    return seen, generated


def dumb_distances(model: Any) -> dict[Any, int]:
    """Shortest distance from the initial states to every reachable state."""
    dist = {s: 0 for s in model.init_states()}
    queue = deque(dist)
    while queue:
        s = queue.popleft()
        for a in model.actions(s):
            t = model.next_state(s, a)
            if t is not None and t not in dist:
                dist[t] = dist[s] + 1
                queue.append(t)
    return dist


# --- the toy model: counts derived by hand -----------------------------------------------------


@pytest.mark.parametrize("k", [0, 1, 2, 3, 7])
def test_toy_counts(k: int) -> None:
    r = explore(toy(k))
    assert r.result == "ok"
    assert r.distinct_states == (k + 1) ** 2
    assert r.depth == 2 * k
    # IncX is enabled in the k*(k+1) states with x < k, IncY likewise, Reset in (k, k) only;
    # plus the one initial state.
    assert r.states_generated == 2 * k * (k + 1) + 1 + 1
    assert r.action_counts == {"IncX": k * (k + 1), "IncY": k * (k + 1), "Reset": 1, "Never": 0}
    assert r.never_enabled == (["Never"] if k else ["IncX", "IncY", "Never"])
    assert r.unreached == []
    assert r.violation is None
    assert r.reached == {"both_max": 2 * k}


@pytest.mark.parametrize("k,limit", [(1, 0), (1, 1), (2, 2), (3, 4), (3, 6), (5, 7)])
def test_shortest_counterexample(k: int, limit: int) -> None:
    r = explore(toy(k, limit))
    assert r.result == "violation"
    assert r.violation is not None
    assert r.violation["invariant"] == "sum_below_limit"
    trace = r.violation["trace"]
    assert len(trace) - 1 == limit  # actions; the first entry is the initial state
    assert trace[0][0] is None and trace[0][1] == (0, 0)
    x, y = trace[-1][1]
    assert x + y == limit
    assert r.depth == limit
    model = toy(k, limit)
    for (_, s), (a, t) in zip(trace, trace[1:]):  # every step is a real transition
        assert a in model.actions(s) and model.next_state(s, a) == t


def test_no_violation_when_limit_above_2k() -> None:
    assert explore(toy(3, 7)).result == "ok"


def test_unreached_sometimes_when_search_stops_early() -> None:
    r = explore(toy(3, 4))  # the violation at depth 4 comes before (3, 3) at depth 6
    assert r.unreached == ["both_max"]
    assert "Reset" in r.never_enabled and "Never" in r.never_enabled


def test_unreached_sometimes_reported() -> None:
    model = toy(2)
    model.properties = [*model.properties, sometimes("never", lambda s: s.x > 99, "unreachable")]
    r = explore(model)
    assert r.result == "ok" and r.unreached == ["never"]


@pytest.mark.parametrize("limit", [1, 2, 5, 8])
def test_max_states_gives_incomplete(limit: int) -> None:
    r = explore(toy(3), max_states=limit)
    assert r.result == "incomplete"
    assert r.distinct_states == limit
    assert not r.interrupted


def test_max_states_equal_to_space_is_ok() -> None:
    assert explore(toy(3), max_states=16).result == "ok"
    assert explore(toy(3), max_states=15).result == "incomplete"


def test_violation_in_initial_state() -> None:
    r = explore(toy(2, 0))
    assert r.result == "violation" and r.depth == 0
    assert r.violation is not None and len(r.violation["trace"]) == 1


def test_interrupt_gives_incomplete() -> None:
    def interrupt(p: Progress) -> None:
        raise KeyboardInterrupt

    r = explore(toy(50), progress=interrupt, progress_every=0)
    assert r.result == "incomplete" and r.interrupted
    assert 0 < r.distinct_states < 51**2


def test_progress_reports() -> None:
    seen: list[Progress] = []
    explore(toy(50), progress=seen.append, progress_every=0)
    assert seen and all(p.distinct_states > 0 and p.queue >= 0 for p in seen)


# --- BFS agrees with the dumb search ---------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(k=st.integers(0, 8), limit=st.integers(0, 20))
def test_bfs_agrees_with_dumb_search_on_toy(k: int, limit: int) -> None:
    model = toy(k, limit)
    r = explore(model)
    states, generated = dumb_reachable(toy(k))
    dist = dumb_distances(toy(k))
    bad = [d for s, d in dist.items() if s.x + s.y >= limit]
    if bad:
        assert r.result == "violation"
        assert r.violation is not None and len(r.violation["trace"]) - 1 == min(bad)
    else:
        assert r.result == "ok"
        assert r.distinct_states == len(states)
        assert r.states_generated == generated
        assert r.depth == max(dist.values())


class Node(NamedTuple):
    n: int


class Go(NamedTuple):
    to: int


class Stay(NamedTuple):
    pass


class GraphModel:
    """A random directed graph as a model: Go(to) edges, plus a Stay no-op (next_state None)."""

    name = "graph"
    variant = "default"
    config: dict[str, Any] = {}
    action_kinds = ("Go", "Stay")

    def __init__(self, edges: dict[int, list[int]], inits: list[int], bad: set[int]) -> None:
        self.edges, self.inits = edges, inits
        self.properties = [always("good", lambda s: s.n not in bad), sometimes("zero", lambda s: s.n == 0)]

    def init_states(self) -> list[Node]:
        return [Node(i) for i in self.inits]

    def actions(self, s: Node) -> list[Any]:
        return [Go(t) for t in self.edges.get(s.n, [])] + [Stay()]

    def next_state(self, s: Node, a: Any) -> Node | None:
        return Node(a.to) if isinstance(a, Go) else None

    def encode(self, s: Node) -> bytes:
        return str(s.n).encode()

    def to_json(self, s: Node) -> dict[str, Any]:
        return {"n": s.n}


graphs = st.integers(1, 12).flatmap(
    lambda n: st.tuples(
        st.dictionaries(st.integers(0, n - 1), st.lists(st.integers(0, n - 1), max_size=4)),
        st.lists(st.integers(0, n - 1), min_size=1, max_size=3),
        st.sets(st.integers(0, n - 1), max_size=2),
    )
)


@settings(max_examples=100, deadline=None)
@given(graph=graphs)
def test_bfs_agrees_with_dumb_search_on_random_graphs(graph: Any) -> None:
    edges, inits, bad = graph
    r = explore(GraphModel(edges, inits, bad))
    reference = GraphModel(edges, inits, set())
    states, generated = dumb_reachable(reference)
    dist = dumb_distances(reference)
    bad_depths = [d for s, d in dist.items() if s.n in bad]
    if bad_depths:
        assert r.result == "violation" and r.violation is not None
        trace = r.violation["trace"]
        assert len(trace) - 1 == min(bad_depths)
        assert trace[-1][1].n in bad
    else:
        assert r.result == "ok"
        assert r.distinct_states == len(states)
        assert r.states_generated == generated
        assert r.depth == max(dist.values())
        assert r.unreached == ([] if Node(0) in states else ["zero"])
        assert r.never_enabled == ([] if r.action_counts["Go"] else ["Go"]) + ["Stay"]


# --- fingerprints --------------------------------------------------------------------------


ENCODINGS = [b"", b"(0, 0)", repr((1, "a", None, (2, 3))).encode(), bytes(range(256))]


def test_fingerprint_is_64_bit_and_deterministic() -> None:
    fps = [fingerprint(e) for e in ENCODINGS]
    assert all(0 <= fp < 2**64 for fp in fps)
    assert len(set(fps)) == len(fps)
    assert fps == [fingerprint(e) for e in ENCODINGS]


@pytest.mark.parametrize("seed", ["1", "12345"])
def test_fingerprint_stable_across_processes(seed: str) -> None:
    code = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "from checker.fingerprint import fingerprint\n"
        f"print([fingerprint(e) for e in {ENCODINGS!r}])\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": seed}
    out = subprocess.run([sys.executable, "-c", code, str(ROOT)], env=env, capture_output=True, text=True,
                         check=True, cwd=ROOT)
    assert out.stdout.strip() == str([fingerprint(e) for e in ENCODINGS])


# --- rendering -----------------------------------------------------------------------------


def test_diff_to_leaf_paths() -> None:
    before = {"brokers": [{"log": [], "hw": 0}, {"log": [[1, 0]], "hw": 1}], "msgs": [{"a": 1}, {"b": 2}]}
    after = {"brokers": [{"log": [[1, 0]], "hw": 0}, {"log": [[1, 0]], "hw": 1}], "msgs": [{"b": 2}]}
    assert list(diff(before, after)) == [
        ("brokers[0].log", [], [[1, 0]]),
        ("msgs", [{"a": 1}, {"b": 2}], [{"b": 2}]),  # short: printed whole
    ]
    long_before = {"log": [{"record": "x" * 40}, {"record": "y" * 40}]}
    long_after = {"log": [{"record": "x" * 40}, {"record": "y" * 40}, {"record": "z" * 40}]}
    assert list(diff(long_before, long_after)) == [("log[2]", ABSENT, {"record": "z" * 40})]


def test_render_text_and_json() -> None:
    model = toy(3, 2)
    r = explore(model)
    assert r.violation is not None
    text = render_text(model, r.violation["trace"], "sum_below_limit")
    assert text.splitlines() == [
        "  0. initial state",
        "     x: 0",
        "     y: 0",
        "  1. IncX()",
        "     x: 0 -> 1",
        "  2. IncX()",
        "     x: 1 -> 2",
        "  invariant sum_below_limit is violated in the state after step 2",
    ]
    assert trace_json(model, r.violation["trace"]) == [
        {"action": None, "state": {"x": 0, "y": 0}},
        {"action": "IncX()", "state": {"x": 1, "y": 0}},
        {"action": "IncX()", "state": {"x": 2, "y": 0}},
    ]
