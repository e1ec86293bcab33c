"""Inductive-invariant checking (mypyvy's `check_init` / `check_transitions`).

Inv is the conjunction of the target invariants and their supporting lemmas. We check
  1. Inv is satisfiable together with Init (else every proof below is vacuous), and every
     action is enabled in some Inv state (an action that never is proves nothing about itself);
  2. Init => C for each conjunct C of Inv;
  3. Inv & guard(a) => C(post(a)) for each action a and each conjunct C: one query per pair,
     so a failure names the action and the conjunct, and its model is a counterexample to
     induction (CTI): a concrete Inv state from which `a` breaks C.
Z3 `unknown` (a timeout, or quantifier incompleteness) is reported as such, never as proved.

Voters are interchangeable (the model's symmetry, model/kraft/symmetry.py) and Inv is invariant
under renaming, so by default one action per orbit is checked (node 0; the pair (0, 1)).

The engine is generic: a Ctx with an `encoding` attribute (a derived context, derived.py and
derived_replication.py) brings its own actions, step, state layout, formulas and lemmas; a
replication Ctx without one is replication_next's (replication_inv.ENCODING). A KRaft relation is
only ever derived: `kraft_base` is what a KRaft encoding has besides its relation.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import z3

from checker import stop
from checker.proofs.kraft_inv import INVARIANTS, LEMMAS, QUANTIFIED, SUPPORT
from checker.proofs.kraft_ctx import Ctx, actions
from checker.proofs.term import Sym

PROVED, CTI, UNKNOWN, VACUOUS, INTERRUPTED = "proved", "cti", "unknown", "vacuous", "interrupted"


def kraft_base() -> Any:
    """What the engines need from a KRaft encoding besides its relation (`step`, `transition`,
    `init`), which derived.py derives from the model's Python."""
    from types import SimpleNamespace

    from checker.proofs import kraft_state

    return SimpleNamespace(
        name="kraft", actions=actions, representatives=representatives, fresh=kraft_state.fresh,
        key_name=kraft_state.key_name, matches=kraft_state.matches,
        decode=kraft_state.decode, formula=formula, invariants=INVARIANTS, lemmas=LEMMAS, support=SUPPORT,
        quantified=QUANTIFIED, ghosts=ghosts, concrete_action=lambda ctx, a, model, pre: a,
        has_conflict=None,
    )


def encoding_of(ctx: Any) -> Any:
    """The encoding a Ctx belongs to: its `encoding` attribute, else the replication one for a
    replication Ctx (checker/proofs/replication_inv.py, which imports the transition relation)."""
    enc = getattr(ctx, "encoding", None)
    if enc is not None:
        return enc
    from checker.proofs import replication_inv, replication_next

    if isinstance(ctx, replication_next.Ctx):
        return replication_inv.ENCODING
    raise TypeError(f"{type(ctx).__name__}: a KRaft context has a relation only once derived (derived.context)")


@dataclass
class Check:
    """One query: what it checks, its answer and its time."""

    what: str
    answer: str  # "holds" | "fails" | "unknown"; for enabledness "enabled" | "never enabled" | "unknown";
    # for Init & Inv "satisfiable" | "unsatisfiable" | "unknown"
    seconds: float


@dataclass
class Counterexample:
    """A CTI: an Inv state (or the initial state) and the action after which `conjunct` fails."""

    conjunct: str
    action: Any  # None for an Init failure
    pre: Any  # the Python state (kraft_state.decode)
    post: Any
    ghosts: dict[str, Any] = field(default_factory=dict)  # ghost arrays of the pre-state, per epoch


@dataclass
class Outcome:
    result: str
    conjuncts: list[str]
    checks: list[Check] = field(default_factory=list)
    cti: Counterexample | None = None
    never_enabled: list[str] = field(default_factory=list)
    reason: str = ""

    @property
    def seconds(self) -> float:
        return sum(c.seconds for c in self.checks)


def conjuncts_for(targets: Sequence[str], support: Any = None) -> list[str]:
    """The targets and, before them, every lemma their proofs use (in a fixed order)."""
    support = SUPPORT if support is None else support
    names: list[str] = []
    for t in targets:
        for lemma in support.get(t, ()):
            if lemma not in names:
                names.append(lemma)
    for t in targets:
        if t not in names:
            names.append(t)
    return names


def formula(name: str) -> Callable[[Ctx, Any], Any]:
    return INVARIANTS[name] if name in INVARIANTS else LEMMAS[name]


def _changed_parts(before: Any, after: Any) -> list[Any]:
    """The top-level conjuncts of `after` that differ from those of `before`."""
    if z3.is_and(before) and z3.is_and(after) and before.num_args() == after.num_args():
        return [a for b, a in zip(before.children(), after.children()) if not a.eq(b)]
    return [] if after.eq(before) else [after]


def representatives(c: Ctx) -> list[Any]:
    """One action per orbit of voter renamings: those naming only voters 0 and 1, with the
    first voter named 0."""
    out = []
    for a in actions(c):
        ids = [x for x in a if isinstance(x, int)]
        if ids and ids[0] == 0 and all(x in (0, 1) for x in ids):
            out.append(a)
    return out


def _solver(timeout_ms: int) -> z3.Solver:
    s = z3.Solver()
    s.set("timeout", timeout_ms)
    s.set("ctrl_c", False)  # Z3's own Ctrl-C handler would make a stop an "unknown": `interruptible` stops it
    return s


def interruptible(run: Callable[[], Any], interrupted: Callable[[], Any]) -> Any:
    """`run()`, or `interrupted()` when a stop (Ctrl-C, SIGTERM) ends it: Z3 is cancelled as the
    signal arrives, even inside a query, and the stop is taken from whatever it raised."""
    try:
        with stop.cancelling(z3.main_ctx().interrupt):
            return run()
    except KeyboardInterrupt:
        return interrupted()
    except Exception:  # e.g. ctypes.ArgumentError wrapping the KeyboardInterrupt raised inside a Z3 call
        if stop.requested():
            return interrupted()
        raise


def _answer(r: Any) -> str:
    return "holds" if r == z3.unsat else "fails" if r == z3.sat else "unknown"


def sat_answer(r: Any) -> str:
    """The words for a query that asks for a state (non-vacuity), where sat is the good answer."""
    return "satisfiable" if r == z3.sat else "unsatisfiable" if r == z3.unsat else "unknown"


def _enabled(inv_qf: Any, guard: Any, timeout_ms: int) -> str:
    """Is the action enabled in some state of the quantifier-free part of Inv? (a sat query:
    quantifiers would make it hard; an action enabled nowhere would be proved preserving
    vacuously.) "enabled" | "never enabled" | "unknown"."""
    r = _solver(timeout_ms).check(inv_qf, guard)
    return "enabled" if r == z3.sat else "never enabled" if r == z3.unsat else "unknown"


def prove(ctx: Ctx, targets: Sequence[str], timeout_s: float = 60.0, symmetric: bool = True,
          progress: Callable[[Check], None] | None = None, only: Sequence[Any] | None = None) -> Outcome:
    """Check that the targets and their lemmas form an inductive invariant (`only`: check
    consecution for these actions alone, e.g. in tests). A stop ends it with the result
    "interrupted" and the queries answered until then."""
    enc = encoding_of(ctx)
    out = Outcome(PROVED, conjuncts_for(targets, enc.support))

    def interrupted() -> Outcome:
        out.result, out.cti, out.reason = INTERRUPTED, None, f"stopped after {len(out.checks)} queries"
        return out

    return interruptible(lambda: _prove(ctx, enc, out, timeout_s, symmetric, progress, only), interrupted)


def _prove(ctx: Ctx, enc: Any, out: Outcome, timeout_s: float, symmetric: bool,
           progress: Callable[[Check], None] | None, only: Sequence[Any] | None) -> Outcome:
    formula = enc.formula
    names = out.conjuncts
    lay = ctx.layout
    ms = max(1, int(timeout_s * 1000))
    pre = enc.fresh(lay, "s_")
    inv = {n: formula(n)(ctx, pre) for n in names}
    inv_all = z3.And(list(inv.values()))

    def record(what: str, r: Any, t0: float, answer: Callable[[Any], str] = _answer) -> str:
        stop.check()  # a query cancelled by a stop is not "unknown"
        c = Check(what, answer(r), time.monotonic() - t0)
        out.checks.append(c)
        if progress:
            progress(c)
        return c.answer

    # 1. Init => C
    for n in names:
        s = _solver(ms)
        t0 = time.monotonic()
        r = s.check(enc.init(ctx, pre), z3.Not(inv[n]))
        if record(f"Init => {n}", r, t0) == "fails":
            st = enc.decode(lay, s.model(), pre)
            out.result, out.cti = CTI, Counterexample(n, None, st, st)
            return out
        if r == z3.unknown:
            out.result, out.reason = UNKNOWN, f"Init => {n}: z3 unknown"
    if out.result == UNKNOWN:
        return out
    # 2. non-vacuity: Init & Inv satisfiable
    s = _solver(ms)
    t0 = time.monotonic()
    if record("Init & Inv satisfiable", s.check(enc.init(ctx, pre), inv_all), t0, sat_answer) != "satisfiable":
        out.result, out.reason = VACUOUS, "Init & Inv is unsatisfiable (or unknown): nothing would be proved"
        return out
    # 3. consecution, per action and conjunct
    acts = list(only) if only is not None else enc.representatives(ctx) if symmetric else enc.actions(ctx)
    unknown: list[str] = []
    inv_qf = z3.And([f for n, f in inv.items() if n not in enc.quantified])
    for a in acts:
        st = enc.step(ctx, pre, a)
        t0 = time.monotonic()
        enabled = _enabled(inv_qf, st.guard, min(ms, 20_000))
        stop.check()
        c = Check(f"{a!r} enabled in some Inv state", enabled, time.monotonic() - t0)
        out.checks.append(c)
        if progress:
            progress(c)
        if enabled == "never enabled":  # nothing to preserve, but say so
            out.never_enabled.append(repr(a))
            continue
        if enabled == "unknown":  # its consecution is not checked, so nothing is proved
            unknown.append(f"{a!r} enabled")
            continue
        s = _solver(ms)
        s.add(inv_all, st.guard)
        # name the changed variables of the post-state, so formulas (and quantifier patterns)
        # see constants rather than If-terms
        named = {}
        for key, v in st.post.f.items():
            if v is pre.f[key] or v.eq(pre.f[key]):
                named[key] = v
            else:
                named[key] = z3.Const(enc.key_name("t_", key), v.sort())
                s.add(named[key] == v)
        post = Sym(named)
        for n in names:
            # only the parts of the conjunct that mention a changed variable can break: the
            # others are the same term before and after (hash-consed), and hold by Inv
            changed = _changed_parts(inv[n], formula(n)(ctx, post))
            if not changed:
                continue
            s.push()
            s.add(z3.Not(z3.And(changed)))
            t0 = time.monotonic()
            r = s.check()
            ans = record(f"Inv & {a!r} => {n}'", r, t0)
            if ans == "fails":
                m = s.model()
                out.result = CTI
                out.cti = Counterexample(n, a, enc.decode(lay, m, pre), enc.decode(lay, m, st.post),
                                         enc.ghosts(ctx, m, pre) if enc.ghosts else {})
                return out
            if ans == "unknown":
                unknown.append(f"{a!r} => {n}'")
            s.pop()
    if unknown:
        out.result, out.reason = UNKNOWN, "z3 unknown on " + ", ".join(unknown[:5])
    return out


def ghosts(ctx: Ctx, m: z3.ModelRef, s: Sym) -> dict[str, Any]:
    """The ghost arrays of a CTI's pre-state at epochs 0..max_epoch (what the lemmas read)."""
    from checker.proofs.kraft_state import GHOSTS

    epochs = range(ctx.p.max_epoch + 1)
    out: dict[str, Any] = {}
    for key in s.keys():
        if key[0] in GHOSTS:
            arr = s[key]
            out["_".join(str(x) for x in key)] = [m.eval(arr[e], model_completion=True).as_long() for e in epochs]
    return out


def preserves(ctx: Ctx, targets: Sequence[str], action: Any, conjunct: str, timeout_s: float = 60.0) -> str:
    """Does `action` preserve one conjunct of the targets' Inv? "holds" | "fails" | "unknown"."""
    enc = encoding_of(ctx)
    pre = enc.fresh(ctx.layout, "s_")
    st = enc.step(ctx, pre, action)
    s = _solver(max(1, int(timeout_s * 1000)))
    s.add([enc.formula(n)(ctx, pre) for n in conjuncts_for(targets, enc.support)])
    s.add(st.guard, z3.Not(enc.formula(conjunct)(ctx, st.post)))
    return _answer(s.check())
