"""The round search: breadth first over a model's rounds (`model.rounds(state)`, coarse steps made
of the model's own actions) instead of its single actions, to a bound on the number of rounds.

Some stories lie beyond an exhaustive search by single actions: K5 needs four voters, three
elections and about thirty steps, and the space grows about 2.5 times a level. Counted in rounds
(an election, a catch-up, an AddVoter...) the same story is seven steps deep. A round is a
sequence of `next_state` steps, so every state this search reaches is a reachable state of the
model, every property is evaluated in every state of every round, and a violation comes back as
the model's own trace, step by step. What it does not do is prove: interleavings the rounds skip
are not explored, so "ok" means "no violation within N rounds", nothing about the rest.

States are deduplicated by `model.fingerprint` (a symmetry reduction included).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from checker import stop
from checker.search.common import Invariants, Result, collector_paused, coverage
from model.interface import Model, action_name


class NoRounds(Exception):
    """The model defines no rounds."""


@dataclass
class RoundProgress:
    depth: int  # rounds
    distinct_states: int
    queue: int
    seconds: float


@dataclass
class _Node:
    parent: Optional[int]
    steps: tuple = field(default_factory=tuple)  # the round's (action, state) pairs


@collector_paused
def round_search(model: Model, max_rounds: int, *, max_states: int | None = None,
                 progress: Callable[[RoundProgress], None] | None = None, progress_every: float = 5.0) -> Result:
    """Explore by rounds, to `max_rounds` rounds. Result.depth counts rounds; a violation's trace
    is in single steps (`Result.violation["rounds"]` says how many rounds it took)."""
    rounds = getattr(model, "rounds", None)
    if rounds is None:
        raise NoRounds(f"model {model.name} defines no rounds")
    start = last = time.perf_counter()
    broken = Invariants(model).broken
    description = {p.name: p.description for p in model.properties}
    pending = [p for p in model.properties if p.kind == "sometimes"]
    reached: dict[str, int] = {}
    counts: dict[str, int] = {}
    fingerprint = model.fingerprint  # type: ignore[attr-defined]
    nodes: dict[int, _Node] = {}
    frontier = []
    generated = 0

    def check(state: Any, depth: int) -> Optional[str]:
        """The invariant `state` breaks, if any, after noting the sometimes-properties it reaches."""
        nonlocal pending
        if pending:
            hit = [p for p in pending if p.predicate(state)]
            if hit:
                for p in hit:
                    reached[p.name] = depth
                pending = [p for p in pending if p.name not in reached]
        return broken(state)

    def finish(result: str, depth: int, violation: Optional[dict] = None) -> Result:
        never, disabled = coverage(model, counts)
        return Result(result=result, distinct_states=len(nodes), states_generated=generated, depth=depth,
                      seconds=time.perf_counter() - start, unreached=[p.name for p in pending],
                      never_enabled=never, action_counts=dict(counts), violation=violation,
                      max_states=max_states, queue=len(frontier), reached=reached, disabled=disabled)

    def trace_to(fp: int, tail: tuple) -> tuple[list[tuple[Any, Any]], int]:
        chain = [tail]
        while nodes[fp].parent is not None:
            chain.append(nodes[fp].steps)
            fp = nodes[fp].parent  # type: ignore[assignment]
        trace: list[tuple[Any, Any]] = [(None, nodes[fp].steps[0][1])]
        for r in reversed(chain):
            trace.extend(r)
        return trace, len(chain)

    for s in model.init_states():
        fp = fingerprint(s)
        if fp in nodes:
            continue
        nodes[fp] = _Node(None, ((None, s),))
        bad = check(s, 0)
        if bad is not None:
            return finish("violation", 0, {"invariant": bad, "description": description[bad],
                                           "trace": [(None, s)], "rounds": 0})
        frontier.append((fp, s))
    depth = 0

    def levels() -> Result:
        nonlocal frontier, depth, generated, last
        while frontier and depth < max_rounds:
            depth += 1
            level = []
            for fp, s in frontier:
                stop.check()  # a signal's request that a callback swallowed (checker/stop.py)
                # Rounds from one state may share their first steps (an election's timers, whoever
                # answers): such a state, the same object, is checked once. Held here, so no id is reused.
                checked: dict[int, Any] = {}
                for r in rounds(s):  # type: ignore[misc]
                    generated += 1
                    for i, (a, t) in enumerate(r):
                        counts[action_name(a)] = counts.get(action_name(a), 0) + 1
                        if id(t) in checked:
                            continue
                        checked[id(t)] = t
                        bad = check(t, depth)
                        if bad is not None:
                            trace, taken = trace_to(fp, r[:i + 1])
                            frontier = level
                            return finish("violation", depth, {"invariant": bad, "description": description[bad],
                                                               "trace": trace, "rounds": taken})
                    t = r[-1][1]
                    tfp = fingerprint(t)
                    if tfp in nodes:
                        continue
                    if max_states is not None and len(nodes) >= max_states:
                        frontier = level
                        return finish("incomplete", depth)
                    nodes[tfp] = _Node(fp, r)
                    level.append((tfp, t))
                if progress is not None and time.perf_counter() - last >= progress_every:
                    last = time.perf_counter()
                    progress(RoundProgress(depth, len(nodes), len(level), last - start))
            frontier = level
        return finish("ok", depth)

    try:
        return levels()
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM or kcheck's --timeout: a partial result
        out = finish("incomplete", depth)
        out.interrupted = True
        return out
