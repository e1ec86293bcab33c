"""Steered walks (`kcheck conform --steer`): each step draws its action kind as a plain walk does,
then, among that kind's actions, prefers the one whose successor lies in the abstract cell the
run's walks have entered least so far.

A plain walk draws uniformly among a kind's actions, so a successor in a rare protocol phase (a
fenced ISR member's AlterPartition, a leader with a caught-up spare) is drawn about as rarely as
the phase is reached. Steering weighs each action by 1 / (1 + the run's steps into its successor's
cell): the novelty of guided search (checker/walks/guided.py, checker/walks/abstraction.py: the
model's own `abstraction`, else kinds enabled and `sometimes` holding) applied per step instead of
per start. Weighing kinds the same way was measured too (bench/bench_branch_coverage.py) and
reached fewer ways: it starves the kinds that make progress.

Determinism: the counts are the run's, folded in walk order, so walk w's path depends on the seed,
its id and the walks before it (not only on its id, as a plain walk's does). The same seed, budget
and presets give the same walks.
"""
from __future__ import annotations

import random
from collections import Counter
from typing import Any, Iterator, Mapping, Sequence

from checker.walks.abstraction import Abstraction
from checker.walks.walker import Walker, _below, swarm_weights, walk_seed
from model.interface import action_name


class Steering:
    """The counts of one run: abstract cell -> steps of the run's walks that entered it (over every
    preset's model: cells of presets of different sizes differ anyway)."""

    def __init__(self) -> None:
        self.cells: Counter = Counter()
        self._abstractions: dict[int, Abstraction] = {}  # id(model) -> its Abstraction (it memoises cells)

    def cell(self, model: Any, state: Any) -> Any:
        abstraction = self._abstractions.get(id(model))
        if abstraction is None:
            abstraction = self._abstractions[id(model)] = Abstraction(model)
        return abstraction.cell(state, [] if abstraction.hint is not None else list(model.actions(state)), 0)

    def step(self, model: Any, state: Any, rng: random.Random, weights: Mapping[str, float] | None,
             raw: Any = None) -> tuple[int, Any, Any] | None:
        """(index among the enabled actions, action, successor), or None at a deadlock. The kind is
        drawn as a plain walk draws it (uniformly, or by the swarm weights); then one of its actions,
        with weight 1 / (1 + the run's steps into its successor's cell). `raw` (default `model`)
        computes the successors weighed; `model.next_state` takes the one drawn, and may refuse
        it (None: a no-op, or a draw the real code cannot take), which drops it and draws again."""
        raw = model if raw is None else raw
        candidates = list(model.actions(state))
        kinds: dict[str, list[int]] = {}
        for i, a in enumerate(candidates):
            kinds.setdefault(action_name(a), []).append(i)
        while kinds:
            open_kinds = list(kinds)  # first-enabled order: deterministic
            kind = open_kinds[Walker._pick_kind(open_kinds, rng, weights)]
            members = kinds[kind]
            successors = (raw.next_state(state, candidates[i]) for i in members)
            cells = [None if n is None else self.cell(raw, n) for n in successors]
            ws = [0.0 if c is None else 1.0 / (1 + self.cells[c]) for c in cells]
            if any(ws):
                j = _weighted(rng, ws)
                i = members[j]
                nxt = model.next_state(state, candidates[i])
                if nxt is not None:
                    self.cells[cells[j]] += 1
                    return i, candidates[i], nxt
                members.pop(j)
            else:
                members.clear()
            if not members:
                del kinds[kind]
        return None


def _weighted(rng: random.Random, ws: Sequence[float]) -> int:
    """An index drawn with probability proportional to `ws` (some positive), from one `random()` draw."""
    r = rng.random() * sum(ws)
    for j, w in enumerate(ws):
        r -= w
        if r < 0.0 and w > 0.0:
            return j
    return max(j for j, w in enumerate(ws) if w > 0.0)  # float rounding at the top end


def model_walks(models: Sequence[Any], seed: int, walks: int, depth: int, swarm: bool = True,
                steering: Steering | None = None) -> Iterator[tuple[Any, Any, Any]]:
    """The (state, action, successor) steps of walks 0..walks-1 of the models alone, walk w over
    models[w % len(models)], seeded and drawn as `kcheck conform` draws them (plain, or steered
    by `steering`), except that conform also drops a draw the real code cannot take."""
    walkers = [Walker(m, keep_fingerprints=False) for m in models]
    for w in range(walks):
        walker = walkers[w % len(models)]
        rng = random.Random(walk_seed(seed, w))
        weights = swarm_weights(walker.model, rng) if swarm else None
        state = walker.inits[_below(rng, len(walker.inits))]
        for _ in range(depth):
            picked = (steering.step(walker.model, state, rng, weights) if steering is not None
                      else walker._step(state, rng, weights))
            if picked is None:
                break
            _, action, successor = picked
            yield state, action, successor
            state = successor
