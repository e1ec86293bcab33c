"""Cross-check a hand-written encoding against the Python model (mypyvy's "check fast code against
dumb code"): on a bounded breadth-first sample of reachable states,

  - every transition the model takes satisfies the symbolic relation with the concrete pre-
    and post-state substituted (`check_transitions`), and
  - the symbolic successors of a state, enumerated as Z3 models with blocking clauses, are
    exactly the model's successors (`check_successors`).

`cross_check` runs both on a fixed sample of each model (SAMPLES) and stops where the two part:
the record (python -m checker.proofs.record) runs it on replication's fixed-size encoding before
recording its sources (checker/proofs/checked_against.py), and the tests run it on that encoding
and on KRaft's hand-written test oracle (tests/test_symbolic_replication.py,
tests/test_symbolic_conformance.py). A sample can show two relations differ, never that they agree.
"""
from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

import z3

from checker.proofs.induction import encoding_of


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


@dataclass(frozen=True)
class Part:
    """Where the encoding and the model part: the model's action, and how they differ there."""

    action: str  # repr of the model's action
    how: str


@dataclass
class Report:
    states: int = 0
    transitions: int = 0
    failures: list[str] = field(default_factory=list)
    parts: list[Part] = field(default_factory=list)  # one per failure, in the same order


class Relation:
    """Next(pre, post) built once over fresh variables; a concrete pre-state is substituted into
    it (one solver per pre-state), a concrete post-state asserted per check."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.enc = enc = encoding_of(ctx)
        self.pre = enc.fresh(ctx.layout, "pre_")
        self.post = enc.fresh(ctx.layout, "post_")
        self.relation = enc.transition(ctx, self.pre, self.post)
        self._at: tuple[Any, Any, Any] | None = None  # (pre-state, its formula, its solver): checks come grouped by state

    def _at_state(self, s: Any) -> tuple[Any, Any]:
        """The relation with s's values substituted and simplified, and a solver for it: several
        times faster per check than one incremental solver under assumptions."""
        if self._at is None or self._at[0] != s:
            pairs, rest = _ground_equalities(self.enc.matches(self.ctx.layout, self.pre, s))
            formula = z3.And(z3.simplify(z3.substitute(self.relation, *pairs)), *rest)
            solver = z3.Solver()
            solver.add(formula)
            self._at = (s, formula, solver)
        return self._at[1], self._at[2]

    def _solver_at(self, s: Any) -> Any:
        return self._at_state(s)[1]

    def allows(self, s: Any, t: Any) -> bool:
        """Does the relation allow the concrete step s -> t? Both states substituted and the
        formula simplified first: most steps are decided there, without a search."""
        formula, _ = self._at_state(s)
        pairs, rest = _ground_equalities(self.enc.matches(self.ctx.layout, self.post, t))
        ground = z3.simplify(z3.substitute(formula, *pairs)) if pairs else formula
        if z3.is_false(ground):
            return False
        solver = z3.Solver()
        solver.add(ground, *rest)
        return solver.check() == z3.sat

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
        if z3.is_and(e) or (z3.is_or(e) and e.num_args() == 1):
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
                r.parts.append(Part(repr(acts[0]), "the model takes this step and the encoding forbids it"))
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
            r.parts.append(Part(repr(py[t][0]), "the model's successor is missing from the encoding's"))
        for t in got - want:
            r.failures.append(f"extra symbolic successor from {s!r}: {t!r}")
            r.parts.append(Part(_action_to(rel, s, t), "the encoding has a successor the model does not"))
    return r


def _action_to(rel: Relation, s: Any, t: Any) -> str:
    """The (model's) action by which the encoding steps from s to t: asked of each action's step."""
    enc, ctx = rel.enc, rel.ctx
    pre = rel.pre
    for a in enc.actions(ctx):
        st = enc.step(ctx, pre, a)
        solver = z3.Solver()
        solver.add(enc.matches(ctx.layout, pre, s), st.guard, enc.matches(ctx.layout, st.post, t))
        if solver.check() == z3.sat:
            return repr(enc.concrete_action(ctx, a, solver.model(), pre))
    return "an action"


# ---------------------------------------------------------------------------------------------
# The cross-check `kcheck prove` runs on an edited model


class Steps:
    """Each action's guard and post-state, built once over fresh pre-state variables. A concrete
    pre-state substituted in makes them (nearly always) ground, so a state's symbolic successors
    come out of z3.simplify, without a search: ten times faster per transition than `Relation`."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.enc = enc = encoding_of(ctx)
        self.pre = enc.fresh(ctx.layout, "pre_")
        self.actions = enc.actions(ctx)
        self.steps = [enc.step(ctx, self.pre, a) for a in self.actions]

    def compare(self, model: Any, s: Any) -> tuple[int, list[Part]]:
        """(the model's transitions from s, where the encoding parts from the model at s): a model
        step no enabled action gives, and (without a history conflict) an enabled action's
        successor that is no model successor."""
        lay, matches = self.ctx.layout, self.enc.matches
        pairs, rest = _ground_equalities(matches(lay, self.pre, s))
        enabled = []
        for a, st in zip(self.actions, self.steps):
            guard = z3.simplify(z3.substitute(st.guard, *pairs))
            if not z3.is_false(guard):
                enabled.append((a, guard, st.post))
        py = successors(model, s)

        def same(guard: Any, post: Any, t: Any) -> bool:
            f = z3.simplify(z3.substitute(matches(lay, post, t), *pairs))
            if z3.is_false(f):
                return False
            if z3.is_true(f) and z3.is_true(guard) and not rest:
                return True
            solver = z3.Solver()
            solver.add(guard, f, *rest)
            return solver.check() == z3.sat

        parts = [Part(repr(acts[0]), "the model takes this step and the encoding forbids it")
                 for t, acts in py.items() if not any(same(g, post, t) for _, g, post in enabled)]
        conflict = self.enc.has_conflict or has_conflict
        if not parts and not conflict(s) and not any(conflict(t) for t in py):
            for a, guard, post in enabled:
                if not any(same(guard, post, t) for t in py) and _enabled(guard, rest):
                    parts.append(Part(self._concrete(a, pairs, rest),
                                      "the encoding takes this step to a state the model does not reach"))
                    break
        return len(py), parts

    def _concrete(self, a: Any, pairs: list[tuple[Any, Any]], rest: list[Any]) -> str:
        solver = z3.Solver()
        solver.add(*[var == value for var, value in pairs], *rest)
        solver.check()
        return repr(self.enc.concrete_action(self.ctx, a, solver.model(), self.pre))


def _enabled(guard: Any, rest: list[Any]) -> bool:
    if z3.is_true(guard) and not rest:
        return True
    solver = z3.Solver()
    solver.add(guard, *rest)
    return solver.check() == z3.sat


def distinct_phases(model: Any, limit: int) -> list[Any]:
    """A breadth-first search of up to `limit` states, keeping the first state of each abstract
    phase (the model's `abstraction`, as `simulate --guided` uses): a sample as varied as the whole
    search, a fraction of its size."""
    phase = getattr(model, "abstraction", None)
    if phase is None:
        return sample(model, limit)
    seen: set[Any] = set()
    return [s for s in sample(model, limit) if not (phase(s) in seen or seen.add(phase(s)))]


@dataclass(frozen=True)
class Sample:
    """Part of the cross-check's sample: states of one preset, the first of each phase of a
    breadth-first search (`phases` states searched) and those of seeded walks."""

    preset: str
    phases: int = 0
    walks: int = 0
    depth: int = 0
    seed: int = 0
    overrides: tuple[str, ...] = ()
    variant: str = ""  # a variant this part is always checked on ("": the cross-check's)


# The action kinds their transitions take are reported (CrossCheck.kinds); tests/test_symbolic_*.py list them.
SAMPLES = {
    "kraft": (Sample("smoke", phases=2_000, overrides=("symmetry=false",)),
              Sample("default", walks=2, depth=25, seed=7, overrides=("symmetry=false",)),
              # a lost disk's observer that knows its leader, restarting (two faults; no shipped preset)
              Sample("disk-loss", phases=4_000, overrides=("faults=2", "restarts=1", "symmetry=false"),
                     variant="no-pre-vote"),
              # a lone voter: Leader of epoch 1 from the start, restarts that stand again at once
              # (KafkaRaftClient.initialize), and one beyond max_epoch that is not taken
              Sample("default", phases=200, overrides=("voters=1", "max_epoch=3", "max_log=3", "faults=3",
                                                       "restarts=2", "symmetry=false")),
              Sample("default", phases=200, overrides=("voters=1", "max_epoch=3", "max_log=3", "faults=3",
                                                       "restarts=2", "symmetry=false"),
                     variant="same-identity-after-disk-loss")),
    "replication": (Sample("smoke", phases=300, walks=2, depth=30, seed=5),
                    Sample("default", walks=1, depth=40, seed=7)),
}


@dataclass
class CrossCheck:
    """The encoding against the model on SAMPLES[model]: where they part first, if they do."""

    model: str
    variant: str
    states: int = 0
    transitions: int = 0  # model transitions checked against the encoding's
    seconds: float = 0.0
    kinds: set[str] = field(default_factory=set)  # the action kinds the sample's transitions took
    first: Part | None = None
    preset: str = ""  # where `first` was found

    @property
    def passed(self) -> bool:
        return self.first is None

    def as_json(self) -> dict[str, Any]:
        return {"model": self.model, "variant": self.variant, "passed": self.passed, "states": self.states,
                "transitions": self.transitions, "seconds": round(self.seconds, 3),
                "action_kinds": sorted(self.kinds),
                "first_difference": None if self.first is None else {
                    "action": self.first.action, "how": self.first.how, "preset": self.preset}}


def cross_check(model: str, variant: str = "kafka-4.1", progress: Callable[[str], None] | None = None,
                ctx_class: Any = None) -> CrossCheck:
    """The hand-written encoding of `model` against the Python model on SAMPLES[model], both ways
    (every model transition is an encoded one, every encoded successor a model one), stopping
    where they part. `ctx_class`: the encoding's Ctx class (KRaft's hand-written relation is a
    test oracle, tests/oracles/kraft_next.py, whose Ctx the tests pass here)."""
    from checker.config import load_config
    from checker.proofs.encodings import encoding_context

    out = CrossCheck(model, variant)
    start = time.monotonic()
    try:
        for part in SAMPLES[model]:
            rc = load_config(model=model, preset=part.preset, variant=part.variant or variant,
                             overrides=list(part.overrides))
            built = rc.build()
            steps = Steps(encoding_context(model, rc.config, part.variant or variant, ctx_class))
            states = distinct_phases(built, part.phases) if part.phases else []
            if part.walks:
                states += walk_sample(built, walks=part.walks, depth=part.depth, seed=part.seed)
            for s in states:
                transitions, parts = steps.compare(built, s)
                out.transitions += transitions
                if parts:
                    out.first, out.preset = parts[0], part.preset
                    return out
                out.states += 1
                out.kinds.update(type(a).__name__ for acts in successors(built, s).values() for a in acts)
            if progress is not None:
                progress(f"{part.preset}: {len(states)} states agree ({time.monotonic() - start:.1f} s)")
        return out
    finally:
        out.seconds = time.monotonic() - start
