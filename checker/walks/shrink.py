"""Shrinking a violating random walk to a short counterexample.

1. Delta debugging (Zeller's ddmin) over the action sequence: drop chunks, then single steps,
   replaying by action *value* (an action no longer enabled, or a no-op, is skipped) and keeping
   any candidate that still breaks the same invariant, cut at the first state that breaks it.
2. Adjacent swaps: a swap is kept when, after it, the trace gets shorter or one more step can go.
3. When at most `bfs_limit` steps remain, a breadth-first search bounded by that length (and by
   `bfs_max_states`) from every initial state finds a shortest trace breaking the invariant.

The result is a trace like the BFS engine's: [(None, initial state), (action, state), ...].
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from model.interface import Model

Trace = list  # [(None, init), (action, state), ...]


class _Replayer:
    """Replays action values from one initial state, counting replays against a budget."""

    def __init__(self, model: Model, init: Any, broken: Callable[[Any], bool], budget: int) -> None:
        self.model, self.init, self.broken, self.budget = model, init, broken, budget
        self.replays = 0

    def run(self, actions: Sequence[Any]) -> Trace | None:
        """The trace up to the first state breaking the invariant, or None if none does."""
        self.replays += 1
        state = self.init
        trace: Trace = [(None, state)]
        if self.broken(state):
            return trace
        for a in actions:
            if a not in list(self.model.actions(state)):
                continue
            nxt = self.model.next_state(state, a)
            if nxt is None:
                continue
            state = nxt
            trace.append((a, state))
            if self.broken(state):
                return trace
        return None

    @property
    def exhausted(self) -> bool:
        return self.replays >= self.budget


def _actions(trace: Trace) -> list[Any]:
    return [a for a, _ in trace[1:]]


def _ddmin(r: _Replayer, trace: Trace) -> Trace:
    """Drop chunks of halving size down to single steps while the invariant still breaks."""
    cur = trace
    n = 2
    while len(cur) > 1 and not r.exhausted:
        acts = _actions(cur)
        size = max(1, -(-len(acts) // n))
        for start in range(0, len(acts), size):
            t = r.run(acts[:start] + acts[start + size:])
            if t is not None and len(t) < len(cur):
                cur, n = t, max(n - 1, 2)
                break
        else:
            if size == 1:
                break
            n = min(n * 2, len(acts))
    return cur


def _swaps(r: _Replayer, trace: Trace) -> Trace | None:
    """A shorter trace from swapping two adjacent steps (and then dropping one), or None."""
    acts = _actions(trace)
    for i in range(len(acts) - 1):
        if r.exhausted:
            return None
        swapped = acts[:i] + [acts[i + 1], acts[i]] + acts[i + 2:]
        t = r.run(swapped)
        if t is None:
            continue
        if len(t) < len(trace):
            return t
        for j in range(len(swapped)):
            t2 = r.run(swapped[:j] + swapped[j + 1:])
            if t2 is not None and len(t2) < len(trace):
                return t2
    return None


def bounded_bfs(model: Model, broken: Callable[[Any], bool], max_depth: int,
                max_states: int) -> tuple[Trace | None, bool]:
    """Breadth-first search for a shortest trace of at most `max_depth` steps reaching a state where
    `broken` holds. Returns (trace or None, complete): `complete` is False when `max_states` was
    hit first, in which case a None trace proves nothing."""
    parent: dict[Any, tuple[Any, Any] | None] = {}
    frontier = []
    for s in model.init_states():
        if s in parent:
            continue
        parent[s] = None
        if broken(s):
            return _path(parent, s), True
        frontier.append(s)
    for _ in range(max_depth):
        nxt_frontier = []
        for s in frontier:
            for a in model.actions(s):
                t = model.next_state(s, a)
                if t is None or t in parent:
                    continue
                parent[t] = (s, a)
                if broken(t):
                    return _path(parent, t), True
                if len(parent) >= max_states:
                    return None, False
                nxt_frontier.append(t)
        if not nxt_frontier:
            break
        frontier = nxt_frontier
    return None, True


def _path(parent: dict, s: Any) -> Trace:
    out = []
    while parent[s] is not None:
        prev, a = parent[s]
        out.append((a, s))
        s = prev
    out.append((None, s))
    out.reverse()
    return out


def shrink(model: Model, init: Any, actions: Sequence[Any], invariant: str, *, bfs_limit: int = 25,
           bfs_max_states: int = 50_000, budget: int = 20_000, stats: dict | None = None) -> Trace:
    """Shrink the walk `actions` from `init`, which breaks `invariant`, to a short trace.

    `stats`, when given, receives: original_length, ddmin_length, length, minimal (True when the
    bounded BFS proved no shorter trace exists), replays.
    """
    props = {p.name: p for p in model.properties if p.kind == "always"}
    if invariant not in props:
        raise ValueError(f"{invariant!r} is not an `always` property of model {model.name!r}")
    pred = props[invariant].predicate

    def broken(s: Any) -> bool:
        return not pred(s)

    r = _Replayer(model, init, broken, budget)
    cur = r.run(list(actions))
    if cur is None:
        raise ValueError(f"the walk does not break {invariant!r} when replayed")
    original = len(actions)
    while not r.exhausted:
        cur = _ddmin(r, cur)
        shorter = _swaps(r, cur)
        if shorter is None:
            break
        cur = shorter
    ddmin_length = len(cur) - 1
    minimal = False
    if ddmin_length <= bfs_limit:
        found, complete = bounded_bfs(model, broken, ddmin_length - 1, bfs_max_states)
        if found is not None:
            cur = found
        minimal = complete
    if stats is not None:
        stats.update(original_length=original, ddmin_length=ddmin_length, length=len(cur) - 1,
                     minimal=minimal, replays=r.replays)
    return cur


def shrink_walk(model: Model, init_index: int, action_indices: Sequence[int], invariant: str,
                **kwargs: Any) -> Trace:
    """Shrink a walk recorded as indices (checker.walks.walker.WalkResult / Violation)."""
    from checker.walks.walker import replay

    trace = replay(model, init_index, action_indices)
    return shrink(model, trace[0][1], _actions(trace), invariant, **kwargs)
