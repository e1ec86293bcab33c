"""The multi-process BFS (checker.search.parallel) gives what the one-process BFS gives: the same counts,
coverage, depth and levels at which sometimes-properties are reached, a counterexample just as
short, and the same `--max-states` semantics."""
from __future__ import annotations

import pytest

from checker.search.run import explore
from checker.config import load_config
from checker.search.parallel import available
from model import definition
from tests.test_bfs import NO_LIMIT, toy

pytestmark = pytest.mark.skipif(not available(), reason="needs the fork start method")


def _same(a, b) -> None:
    assert (a.result, a.distinct_states, a.states_generated, a.depth) == (b.result, b.distinct_states,
                                                                          b.states_generated, b.depth)
    assert (a.unreached, a.never_enabled, a.action_counts, a.reached) == (b.unreached, b.never_enabled,
                                                                          b.action_counts, b.reached)


@pytest.mark.parametrize("workers", [2, 3])
@pytest.mark.parametrize("chunk", [1, 7, 4096])
def test_toy_space_is_the_same_on_several_workers(workers: int, chunk: int) -> None:
    from checker.search.parallel import explore_parallel

    one = explore(toy(12))
    many = explore_parallel(toy(12), workers=workers, chunk=chunk)
    _same(one, many)
    assert many.distinct_states == 13 ** 2 and many.depth == 24 and many.workers == workers


def test_toy_violation_is_a_shortest_counterexample() -> None:
    one = explore(toy(9, 5))
    many = explore(toy(9, 5), workers=2)
    assert one.result == many.result == "violation"
    assert len(many.violation["trace"]) == len(one.violation["trace"]) == 6  # x + y reaches 5 after 5 steps
    last = many.violation["trace"][-1][1]
    assert last.x + last.y == 5 and many.depth == 5


@pytest.mark.parametrize("limit", [1, 10, 50])
def test_max_states_is_exact(limit: int) -> None:
    r = explore(toy(9, NO_LIMIT), max_states=limit, workers=2)
    assert r.result == "incomplete" and r.distinct_states == limit


def test_replication_smoke_matches_one_process() -> None:
    d = definition("replication")
    model = d.build(load_config(d, preset="smoke", overrides={"losses": "0", "fences": "0"}), "kafka-4.1")
    _same(explore(model), explore(model, workers=2))


def test_a_failing_model_is_reported_not_hung() -> None:
    class Broken(type(toy(3))):  # type: ignore[misc]
        def next_state(self, s, a):
            if s.x == 2:
                raise ValueError("model bug")
            return super().next_state(s, a)

    with pytest.raises(RuntimeError, match="model bug"):
        explore(Broken({"k": 3, "limit": NO_LIMIT}), workers=2)
