"""Cross-check the KRaft encoding against the Python model (mypyvy's "check fast code against
dumb code"): on a bounded breadth-first sample of reachable states,

  - every transition the model takes satisfies the symbolic relation with the concrete pre-
    and post-state substituted (`check_transitions`), and
  - the symbolic successors of a state, enumerated as Z3 models with blocking clauses, are
    exactly the model's successors (`check_successors`).

Used by tests/test_symbolic_conformance.py and `kcheck prove --conformance`.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

import z3

from checker.symbolic.induction import encoding_of


def sample(model: Any, limit: int) -> list[Any]:
    """Up to `limit` reachable states, breadth first (plain states, no symmetry)."""
    init = model.init_states()
    seen = set(init)
    queue = deque(init)
    out = []
    while queue and len(out) < limit:
        s = queue.popleft()
        out.append(s)
        for a in model.actions(s):
            t = model.next_state(s, a)
            if t is not None and t not in seen:
                seen.add(t)
                queue.append(t)
    return out


def walk_sample(model: Any, walks: int, depth: int, seed: int = 0) -> list[Any]:
    """States met on seeded random walks (deep behaviours a small BFS does not reach)."""
    import random

    rng = random.Random(seed)
    out: list[Any] = []
    seen: set[Any] = set()
    for _ in range(walks):
        s = model.init_states()[0]
        for _ in range(depth):
            if s not in seen:
                seen.add(s)
                out.append(s)
            nexts = list(successors(model, s))
            if not nexts:
                break
            s = nexts[rng.randrange(len(nexts))]
    return out


def successors(model: Any, s: Any) -> dict[Any, list[Any]]:
    """successor -> the actions leading to it."""
    out: dict[Any, list[Any]] = {}
    for a in model.actions(s):
        t = model.next_state(s, a)
        if t is not None:
            out.setdefault(t, []).append(a)
    return out


def has_conflict(s: Any) -> bool:
    """A history the encoding abstracts (two entries committed at an offset, two leaders of an
    epoch): only after committed_kept or election_safety failed."""
    offsets = [c[0] for c in s.history.committed]
    epochs = [e for e, _ in s.history.elected]
    return len(offsets) != len(set(offsets)) or len(epochs) != len(set(epochs))


@dataclass
class Report:
    states: int = 0
    transitions: int = 0
    failures: list[str] = field(default_factory=list)


class Relation:
    """Next(pre, post) built once over fresh variables; a concrete pre-state is substituted into
    it (one solver per pre-state), a concrete post-state asserted per check."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.enc = enc = encoding_of(ctx)
        self.pre = enc.fresh(ctx.layout, "pre_")
        self.post = enc.fresh(ctx.layout, "post_")
        self.relation = enc.transition(ctx, self.pre, self.post)
        self._at: tuple[Any, Any] | None = None  # (pre-state, its solver): checks come grouped by state

    def _solver_at(self, s: Any) -> Any:
        """A solver for the relation with s's values substituted and simplified: several times
        faster per check than one incremental solver under assumptions."""
        if self._at is None or self._at[0] != s:
            pairs, rest = _ground_equalities(self.enc.matches(self.ctx.layout, self.pre, s))
            solver = z3.Solver()
            solver.add(z3.simplify(z3.substitute(self.relation, *pairs)), *rest)
            self._at = (s, solver)
        return self._at[1]

    def allows(self, s: Any, t: Any) -> bool:
        """Does the relation allow the concrete step s -> t?"""
        return self._solver_at(s).check(self.enc.matches(self.ctx.layout, self.post, t)) == z3.sat

    def successors(self, s: Any, limit: int = 10_000) -> list[Any]:
        """The concrete successors of s the relation allows (Z3 models, each blocked in turn)."""
        lay, matches, decode = self.ctx.layout, self.enc.matches, self.enc.decode
        solver = self._solver_at(s)
        out: list[Any] = []
        solver.push()
        try:
            epochs = range(0, getattr(self.ctx.p, "max_epoch", 0) + 2)
            while len(out) < limit and solver.check() == z3.sat:
                t = decode(lay, solver.model(), self.post, epochs)
                out.append(t)
                solver.add(z3.Not(matches(lay, self.post, t)))
        finally:
            solver.pop()
        return out


def _ground(e: Any) -> bool:
    if z3.is_const(e):
        return e.decl().kind() != z3.Z3_OP_UNINTERPRETED
    return all(_ground(a) for a in e.children())


def _ground_equalities(conj: Any) -> tuple[list[tuple[Any, Any]], list[Any]]:
    """Split a conjunction into (variable, ground value) pairs and the other constraints."""
    todo, pairs, rest, seen = [conj], [], [], set()
    while todo:
        e = todo.pop()
        if z3.is_and(e):
            todo.extend(e.children())
            continue
        if z3.is_eq(e):
            for var, value in ((e.arg(0), e.arg(1)), (e.arg(1), e.arg(0))):
                if z3.is_const(var) and not _ground(var) and _ground(value) and var.get_id() not in seen:
                    seen.add(var.get_id())
                    pairs.append((var, value))
                    break
            else:
                rest.append(e)
        else:
            rest.append(e)
    # a second value for a substituted variable must still conflict with the first
    return pairs, [z3.substitute(e, *pairs) for e in rest] if pairs else rest


def check_transitions(model: Any, ctx: Any, states: list[Any], relation: Relation | None = None) -> Report:
    """Every model transition from `states` satisfies the relation."""
    rel = relation or Relation(ctx)
    r = Report()
    for s in states:
        r.states += 1
        for t, acts in successors(model, s).items():
            r.transitions += 1
            if not rel.allows(s, t):
                r.failures.append(f"the relation forbids {acts[0]!r} from {s!r}")
    return r


def check_successors(model: Any, ctx: Any, states: list[Any], relation: Relation | None = None) -> Report:
    """For each state without a history conflict, symbolic successors == model successors."""
    rel = relation or Relation(ctx)
    conflict = rel.enc.has_conflict or has_conflict
    r = Report()
    for s in states:
        py = successors(model, s)
        if conflict(s) or any(conflict(t) for t in py):
            continue
        r.states += 1
        sym = rel.successors(s, limit=len(py) + 5)
        r.transitions += len(py)
        got, want = set(sym), set(py)
        for t in want - got:
            r.failures.append(f"missing successor by {py[t][0]!r} from {s!r}: {t!r}")
        for t in got - want:
            r.failures.append(f"extra symbolic successor from {s!r}: {t!r}")
    return r
