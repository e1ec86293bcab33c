"""Property.reads is a promise the search relies on: an invariant whose declared fields a
successor shares with its parent is not evaluated again (checker.search.common.Invariants). A predicate
that reads a field it does not declare would then miss a violation, so every declared `reads` is
checked here against what the predicate really reads, on the states of small searches."""
from __future__ import annotations

from collections import deque
from typing import Any

import pytest

from checker.config import load_config


class Recorder:
    """A state stand-in that records each top-level field read through it."""

    def __init__(self, state: Any, seen: set[str]) -> None:
        self._state, self._seen = state, seen

    def __getattr__(self, name: str) -> Any:
        self._seen.add(name)
        return getattr(self._state, name)


def _states(model: Any, limit: int) -> list[Any]:
    """Up to `limit` reachable states, breadth first (the checker's own order is not needed)."""
    seen, queue, out = set(), deque(model.init_states()), []
    while queue and len(out) < limit:
        s = queue.popleft()
        if s in seen:
            continue
        seen.add(s)
        out.append(s)
        for a in model.actions(s):
            t = model.next_state(s, a)
            if t is not None and t not in seen:
                queue.append(t)
    return out


CASES = [("replication", p) for p in ("smoke", "reassignment", "controller-failover", "stale-fetch")] + \
        [("kraft", p) for p in ("default", "reconfig")]


def undeclared_reads(p: Any, states: list[Any]) -> set[str]:
    """The fields `p`'s predicate reads on `states` beyond its declared `reads` (and it must give
    the same answer through the recorder)."""
    extra: set[str] = set()
    for s in states:
        read: set[str] = set()
        assert p.predicate(Recorder(s, read)) == p.predicate(s), p.name
        extra |= read - set(p.reads)
    return extra


@pytest.mark.parametrize("model_name, preset", CASES)
def test_every_declared_read_covers_what_the_invariant_reads(model_name, preset):
    model = load_config(model=model_name, preset=preset).build()
    states = _states(model, 3000)
    assert len(states) == 3000  # each preset is larger: a breadth-first sample of it
    fields = set(type(states[0])._fields)
    for p in model.properties:
        if p.kind == "always" and p.reads:
            assert set(p.reads) <= fields, (p.name, p.reads)
            assert undeclared_reads(p, states) == set(), p.name


def test_the_replication_invariants_declare_what_they_read():
    """Not vacuous: the replication model declares reads for its invariants, which the search uses."""
    model = load_config(model="replication", preset="smoke").build()
    declared = {p.name for p in model.properties if p.kind == "always" and p.reads}
    assert {"leader_completeness", "candidate_completeness", "log_matching", "structural"} <= declared


def test_a_wrong_declaration_is_caught():
    """The check can fail: log_matching declared as reading the controller only is named."""
    import dataclasses

    model = load_config(model="replication", preset="smoke").build()
    p = next(p for p in model.properties if p.name == "log_matching")
    wrong = dataclasses.replace(p, reads=("controller",))
    assert undeclared_reads(wrong, _states(model, 200)) == {"brokers"}


@pytest.mark.parametrize("workers", [1, 2])
def test_every_engine_skips_an_invariant_on_the_fields_it_declares(workers):
    """The one-process and the multi-process search both rely on the declaration (checker.search.
    common.Invariants): declared right, `x < 2` fails at depth 2; declared as reading `y` only, the
    step to (2, 0), which keeps y, is not checked, and no state with a value of y that passed is
    checked again, so the violation is missed. Wrong on purpose, to show that the skips are in force
    in both engines (and why the declarations are checked above)."""
    from checker.search.common import Invariants
    from checker.search.run import explore
    from model.interface import always
    from tests.test_bfs import toy

    results = {}
    for reads in (("x",), ("y",)):
        model = toy(4)
        model.properties = [always("x_below_2", lambda s: s.x < 2, "x < 2", reads=reads)]
        results[reads] = explore(model, workers=workers)
    assert results[("x",)].result == "violation" and len(results[("x",)].violation["trace"]) - 1 == 2
    assert results[("y",)].result == "ok"
    s = toy(4).init_states()[0]
    t = s._replace(x=2)
    wrong = Invariants(type("M", (), {"properties": [always("x_below_2", lambda s: s.x < 2, "", reads=("y",))]})())
    assert wrong.broken(t, s) is None and wrong.broken(t) == "x_below_2"  # without a parent: always evaluated


@pytest.mark.parametrize("workers", [1, 2])
def test_an_invariant_is_evaluated_once_per_distinct_value_of_what_it_reads(workers, tmp_path):
    """Every invariant declares its reads, so a state whose read fields equal those of a state that
    passed is not evaluated again (Invariants.passed): `x < 9` on the toy's 5 x 5 grid is evaluated
    for the 5 values of x (and the initial state), not for the 25 states; a violation is still
    found at its depth, and a state that failed is not remembered as passed."""
    from checker.search.common import Invariants
    from checker.search.run import explore
    from model.interface import always
    from tests.test_bfs import toy

    calls = tmp_path / "calls"

    def x_below(limit):
        def check(s):
            with calls.open("a") as f:  # the multi-process search evaluates in its workers
                f.write(f"{s.x},{s.y}\n")
            return s.x < limit
        return check

    model = toy(4)
    model.properties = [always("x_below_9", x_below(9), "x < 9", reads=("x",))]
    result = explore(model, workers=workers)
    assert result.result == "ok" and result.distinct_states == 25
    evaluated = calls.read_text().split()
    assert sorted({e.split(",")[0] for e in evaluated}) == ["0", "1", "2", "3", "4"]
    assert len(evaluated) < 25

    calls.unlink()
    model.properties = [always("x_below_3", x_below(3), "x < 3", reads=("x",))]
    result = explore(model, workers=workers)
    assert result.result == "violation" and len(result.violation["trace"]) - 1 == 3

    inv = Invariants(type("M", (), {"properties": [always("x_below_3", lambda s: s.x < 3, "", reads=("x",))]})())
    s = toy(4).init_states()[0]
    assert inv.broken(s._replace(x=3)) == "x_below_3" and inv.broken(s._replace(x=3, y=1)) == "x_below_3"
    assert inv.broken(s._replace(x=1)) is None and inv.passed == {1}


def test_the_passed_values_are_forgotten_when_full(monkeypatch):
    from checker.search.common import Invariants
    from model.interface import always
    from tests.test_bfs import toy

    monkeypatch.setattr(Invariants, "PASSED_MAX", 2)
    inv = Invariants(type("M", (), {"properties": [always("x_below_3", lambda s: s.x < 3, "", reads=("x",))]})())
    s = toy(4).init_states()[0]
    for x in (0, 1, 2):
        assert inv.broken(s._replace(x=x)) is None
    assert inv.passed == {2}
    without_reads = Invariants(type("M", (), {"properties": [always("a", lambda s: True, ""),
                                                            always("b", lambda s: True, "", reads=("x",))]})())
    assert without_reads.read_fields is None  # one invariant reads anything: nothing is remembered
    assert without_reads.broken(s) is None and without_reads.passed == set()


def test_remembering_stops_when_values_rarely_repeat(monkeypatch):
    """After TRIAL lookups with fewer than two in three hits, nothing more is remembered (the
    lookups would cost what they save); every state is then evaluated, and violations still found."""
    from checker.search.common import Invariants
    from model.interface import always

    monkeypatch.setattr(Invariants, "TRIAL", 6)
    inv = Invariants(type("M", (), {"properties": [always("x_below_9", lambda s: s.x < 9, "", reads=("x",))]})())
    from tests.test_bfs import toy
    s = toy(4).init_states()[0]
    for x in (0, 1, 2, 3, 4, 0):  # one hit in six
        assert inv.broken(s._replace(x=x)) is None
    assert inv.lookups == 6 and inv.hits == 1 and inv.read_fields is None and inv.passed == set()
    assert inv.broken(s._replace(x=9)) == "x_below_9" and inv.lookups == 6

    inv = Invariants(type("M", (), {"properties": [always("x_below_9", lambda s: s.x < 9, "", reads=("x",))]})())
    for x in (0, 1, 0, 1, 0, 1):  # four hits in six
        assert inv.broken(s._replace(x=x)) is None
    assert inv.hits == 4 and inv.read_fields is not None
