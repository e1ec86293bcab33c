"""Partial-order reduction (checker/search/por.py, `kcheck check --por`): fewer states where actions
are independent and invisible, the same verdicts, counterexamples that are behaviours of the
full model, the cycle proviso in force, and negative claims (unreached, never enabled) settled by
the full search."""
from __future__ import annotations

import json
import subprocess
import sys
from typing import Any, NamedTuple

import pytest

from checker.search.common import successor_function
from checker.search.run import explore
from model.interface import Footprint, always, sometimes


class Tick(NamedTuple):
    process: int


class Processes:
    """`n` processes, each a counter 0..k that only it reads and writes; with `wrap`, k steps back
    to 0 (a cycle of invisible steps). The invariant reads process 0's counter only, so the other
    processes' steps are invisible to it and independent of everything but themselves."""

    name = "processes"
    variant = "default"
    action_kinds = ("Tick",)

    def __init__(self, n: int = 3, k: int = 3, limit: int = 99, wrap: bool = False, footprints: Any = None,
                 witness: Any = True, invariant: Any = None) -> None:
        self.n, self.k, self.wrap = n, k, wrap
        self.config = {"n": n, "k": k}
        self.properties = [invariant or always("first_below", lambda s: s[0] < limit, "process 0 stays below the limit")]
        if witness is True:
            self.properties.append(sometimes("all_at_k", lambda s: all(c == k for c in s), "every counter at k"))
        elif witness:
            self.properties.append(witness)
        self.footprints = footprints or ProcessFootprints(n)

    def init_states(self) -> list[tuple]:
        return [(0,) * self.n]

    def actions(self, s: tuple) -> list[Tick]:
        return [Tick(i) for i in range(self.n)]

    def next_state(self, s: tuple, a: Tick) -> tuple | None:
        c = s[a.process]
        if c == self.k and not self.wrap:
            return None
        return s[:a.process] + ((c + 1) % (self.k + 1),) + s[a.process + 1:]

    def encode(self, s: tuple) -> bytes:
        return repr(s).encode()

    def to_json(self, s: tuple) -> dict[str, Any]:
        return {"counters": list(s)}


class ProcessFootprints:
    def __init__(self, n: int) -> None:
        self.n = n

    def group_of(self, a: Tick) -> tuple:
        return ("Tick", a.process)

    def groups(self) -> list[tuple]:
        return [("Tick", i) for i in range(self.n)]

    def footprint(self, g: tuple) -> Footprint:
        return Footprint(frozenset({g[1]}), frozenset({g[1]}))

    def property_footprints(self) -> dict[str, frozenset]:
        return {"first_below": frozenset({0}), "not_first_alone": frozenset({0, 1})}


def test_independent_invisible_steps_are_explored_in_one_order():
    full = explore(Processes(), reduce=False)
    reduced = explore(Processes(), reduce=False, por=True)
    assert full.result == reduced.result == "ok"
    assert full.distinct_states == 4 ** 3
    assert reduced.distinct_states < full.distinct_states / 3
    assert reduced.por["reduced"] > 0 and reduced.unreached == [] and reduced.never_enabled == []


def test_a_violation_is_found_and_its_trace_is_a_behaviour_of_the_full_model():
    model = Processes(limit=2)
    r = explore(model, reduce=False, por=True)
    assert r.result == "violation" and r.violation["invariant"] == "first_below"
    step = successor_function(model, False)
    trace = r.violation["trace"]
    state = trace[0][1]
    assert state == model.init_states()[0]
    for action, t in trace[1:]:
        assert step(state, action) == t
        state = t
    assert state[0] == 2


def test_the_cycle_proviso_keeps_an_invisible_cycle_from_hiding_a_violation(monkeypatch):
    """With wrap-around every other process can cycle for ever through invisible steps: the ample
    set {Tick(2)} at every state would never let process 0 move. The proviso (a successor seen
    already: expand in full) finds the violation; without it, the search misses it."""
    assert explore(Processes(limit=2, wrap=True, witness=False), reduce=False, por=True).result == "violation"

    from checker.search import por

    monkeypatch.setattr(por.AmpleSets, "proviso", False)
    r = explore(Processes(limit=2, wrap=True, witness=False), reduce=False, por=True)
    assert r.result == "ok" and r.distinct_states == 4  # the missed violation: process 2 cycles alone


def test_a_wrong_footprint_loses_a_violation():
    """Why the declarations are checked (tests/test_footprints.py): "process 0 never moves alone"
    reads processes 0 and 1; declared as reading process 0 only, the steps of process 1 look
    invisible, the reduction runs process 1 to its end before process 0 moves, the state (1, 0, 0)
    is never visited, and the search says ok."""

    class Wrong(ProcessFootprints):
        def property_footprints(self) -> dict[str, frozenset]:
            return {"not_first_alone": frozenset({0})}

    alone = always("not_first_alone", lambda s: not (s[0] == 1 and s[1] == 0), "process 0 never moves alone")
    right = explore(Processes(invariant=alone, witness=False), reduce=False, por=True)
    assert right.result == "violation" and right.violation["trace"][-1][1][:2] == (1, 0)
    wrong = explore(Processes(invariant=alone, witness=False, footprints=Wrong(3)), reduce=False, por=True)
    assert wrong.result == "ok"


def test_what_the_reduced_search_leaves_unreached_is_settled_by_the_full_search():
    """"Process 2 finishes before process 1 starts" is reached by the full search, but the reduced
    one runs process 1 first (the invariant sees neither): its "unreached" is not reported; the
    full search runs, and its result (reached) is what `explore` returns, with the reason."""
    early = sometimes("two_before_one", lambda s: s[1] == 0 and s[2] == 3, "process 2 ends first")
    full = explore(Processes(witness=early), reduce=False)
    r = explore(Processes(witness=early), reduce=False, por=True)
    assert full.unreached == r.unreached == [] and r.distinct_states == full.distinct_states == 64
    assert r.por["settled_by_full_search"] == ["sometimes-property two_before_one unreached"]
    assert r.por["reduced_distinct_states"] < 64 and r.por["reduced"] > 0


def test_a_search_that_took_no_ample_set_settles_its_own_claims():
    """With every process visible nothing is reduced: the reduced search is the full one, and what
    it leaves unreached stands without a second search."""

    class AllVisible(ProcessFootprints):
        def property_footprints(self) -> dict[str, frozenset]:
            return {"first_below": frozenset(range(3))}

    never = sometimes("never", lambda s: False, "unreachable")
    r = explore(Processes(witness=never, footprints=AllVisible(3)), reduce=False, por=True)
    assert r.unreached == ["never"] and r.por == {"expanded": 64, "reduced": 0}


def test_an_undeclared_group_is_expanded_in_full():
    class Partial(ProcessFootprints):
        def groups(self) -> list[tuple]:
            return [("Tick", 0)]

    r = explore(Processes(footprints=Partial(3)), reduce=False, por=True)
    assert r.distinct_states == 4 ** 3 and r.por["reduced"] == 0


def _kcheck(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "checker.cli", *args], capture_output=True, text=True, timeout=300)


def test_the_documented_command_runs_and_says_what_it_did():
    """docs/cli.md's `kcheck check --preset smoke --por --no-liveness`."""
    r = _kcheck("check", "--preset", "smoke", "--por", "--no-liveness")
    assert r.returncode == 0
    assert "result:           ok" in r.stdout
    assert "partial order:    ample sets at 0 of 56,775 states expanded" in r.stdout  # nothing to reduce (spec)


def test_the_flag_gives_the_same_verdict_on_smoke_and_says_what_it_did():
    on = _kcheck("check", "--preset", "smoke", "--por", "--no-liveness", "--json", "--quiet")
    off = _kcheck("check", "--preset", "smoke", "--no-por", "--no-liveness", "--json", "--quiet", "--workers", "1")
    assert on.returncode == off.returncode == 0
    a, b = json.loads(on.stdout), json.loads(off.stdout)
    assert a["result"] == b["result"] == "ok" and a["unreached"] == b["unreached"] == []
    assert a["partial_order"]["expanded"] == a["distinct_states"] and b["partial_order"] is None


@pytest.mark.parametrize("extra", [["--workers", "2"], ["--engine", "spark"], ["--run-dir", "RUN"],
                                   ["--rounds", "2"]])
def test_the_flag_refuses_what_it_does_not_support(extra, tmp_path):
    extra = [str(tmp_path / "run") if x == "RUN" else x for x in extra]
    r = _kcheck("check", "--preset", "smoke", "--por", *extra)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().startswith("kcheck: ") and "--por does not apply with" in r.stderr


def test_dependence_from_footprints():
    """Checker/search/por.py's relation, location by location: a write against a read or a write;
    raising a count against a guard or an effect that reads it; lowering it only against an
    effect (it can only enable a guard, which the closure's enabling sets cover); two resets
    commute, a reset and a read do not."""
    from checker.search.por import dependent, may_enable

    c = frozenset({"count"})
    f = lambda **kw: Footprint(**{"reads": frozenset(), "writes": frozenset(), **kw})  # noqa: E731
    assert dependent(f(writes=frozenset({"x"})), f(reads=frozenset({"x"})))
    assert dependent(f(writes=frozenset({"x"})), f(writes=frozenset({"x"})))
    assert not dependent(f(reads=frozenset({"x"})), f(reads=frozenset({"x"})))
    assert dependent(f(takes=c), f(reads_capacity=c)) and dependent(f(takes=c), f(effect_capacity=c))
    assert not dependent(f(frees=c), f(reads_capacity=c)) and dependent(f(frees=c), f(effect_capacity=c))
    assert not dependent(f(takes=c), f(takes=c, frees=c))
    assert may_enable(f(frees=c), f(reads_capacity=c))
    r = frozenset({"event"})
    assert not dependent(f(resets=r), f(resets=r)) and dependent(f(resets=r), f(reads=r))
    assert dependent(f(resets=r), f(writes=r))
    assert may_enable(f(writes=frozenset({"g"})), f(reads=frozenset({"g", "e"}), guard=frozenset({"g"})))
    assert not may_enable(f(writes=frozenset({"e"})), f(reads=frozenset({"g", "e"}), guard=frozenset({"g"})))
