"""Induction and BMC on the relation derived from the KRaft model as written
(checker/proofs/derive.py): the engines (induction.prove, bmc.bmc), the state layout
(kraft_state.py) and the invariants and lemmas (kraft_inv.py, written by hand: they are the
proof's content) are the same for every relation; `step`, `transition` and `Init` come from the
model's Python. Init is the model's freshly formatted state (kraft_state.init_constraint: the
model's own `initial_state`, the encoding's ghosts empty) after quorum.initialize, derived as an
action is.

    ctx = derived.context(params, variant)          # derives every action instance once
    outcome = derived.prove(ctx, targets, timeout_s, symmetric, progress)

`prove` answers "proved" only when every action instance the proof checks derived (an action
the stand-ins cannot follow is refused, never left out) and, besides induction's queries, no
action makes the model raise (an assertion, an index out of range) from a state of the
invariant: one more query per action, "Inv & crash(a)" unsatisfiable.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, Callable, Sequence

import z3

from checker.proofs import derive as D
from checker.proofs.derivation_cache import Cache
from checker.proofs import induction
from checker.proofs import kraft_ctx as N
from checker.proofs.induction import Check, Outcome
from checker.proofs.kraft_state import fresh, init_constraint
from checker.proofs.term import Step, Sym, relation
from model.kraft.params import Params
from model.kraft import quorum as Q
from model.kraft.quorum import Context
from model.kraft.variants import Protocol

PREFIX = "s_"  # induction.prove's pre-state names: the derived steps are made on the same terms


@dataclass(frozen=True)
class DerivedCtx(N.Ctx):
    """A kraft_ctx.Ctx whose encoding's relation is the derived one (induction.encoding_of
    takes `encoding`)."""

    encoding: Any = field(default=None, compare=False, hash=False)
    derived: dict = field(default_factory=dict, compare=False, hash=False)  # ByAction: action -> derive.Derived
    spent: list = field(default_factory=lambda: [0.0], compare=False, hash=False)  # derivation seconds in all
    cache: Any = field(default=None, compare=False, hash=False)  # derivation_cache.Cache, or None

    @property
    def seconds(self) -> float:
        return self.spent[0]


class ByAction(dict):
    """Action instance -> value, told apart by kind: as tuples FetchTimeout(0) == ElectionTimeout(0)."""

    def __setitem__(self, a: Any, v: Any) -> None:
        super().__setitem__((type(a), a), v)

    def __getitem__(self, a: Any) -> Any:
        return super().__getitem__((type(a), a))

    def get(self, a: Any, default: Any = None) -> Any:
        return super().get((type(a), a), default)

    def __contains__(self, a: Any) -> bool:
        return super().__contains__((type(a), a))

    def __iter__(self) -> Any:
        return (a for _, a in super().__iter__())


class NotDerived(Exception):
    """An action instance the derivation could not follow."""


def context(p: Params, variant: str = "kafka-4.1", actions: Sequence[Any] | None = None,
            progress: Callable[[D.Derived], None] | None = None, model_ctx: Context | None = None,
            lazy: bool = False, step: Callable[..., Any] | None = None, cached: bool = False) -> DerivedCtx:
    """Derive every action instance of the configuration (or `actions`) on induction's pre-state;
    `lazy`: each when a proof first asks for it (its time added to the context's `seconds`).
    `model_ctx`: the model Context to run (the default: the variant's); `step`: a plugin's
    changed transition (derive.derive); `cached`: read and keep the derivations in the
    derivation cache (derivation_cache.py; never with a plugin's change in force)."""
    base = N.Ctx.of(p, variant)
    mctx = model_ctx or Context(p, Protocol.of(variant))
    pre = fresh(base.layout, PREFIX)
    dom = D.domain(base.layout, pre)
    every = N.actions(base) if actions is None else list(actions)
    cache = Cache("kraft", variant, p, dom) if cached else None

    def derive(a: Any) -> Any:
        make = lambda: D.derive(mctx, base.layout, pre, a, dom, step)  # noqa: E731
        return make() if cache is None else cache.derive(a, make, pre)
    derived, spent, later = derive_all(derive, every, lazy, progress)
    enc = encoding(induction.kraft_base(), "kraft (derived)", D.domain, derived, pre, later, every)
    enc.init = initial(mctx, base.layout)
    return DerivedCtx(base.p, base.proto, base.layout, enc, derived, spent, cache)


def initial(mctx: Context, layout: Any) -> Callable[[Any, Sym], Any]:
    """Init(ctx, sym): the model's formatted state, then quorum.initialize derived on it (when
    first asked for, so that a plugin's decisions in force at the proof are in force here too)."""
    made: list[Any] = []

    def init(ctx: Any, sym: Sym) -> Any:
        if not made:
            pre = fresh(layout, "init0_")
            d = D.derive(mctx, layout, pre, D.INITIALIZE, D.domain(layout, pre),
                         lambda s, a, own: Q.initialize(s, mctx))
            if d.step is None:
                raise NotDerived(f"quorum.initialize: {d.why}")
            raises = z3.Solver()
            raises.add(init_constraint(layout, pre), d.crash)
            if raises.check() != z3.unsat:  # derived over the whole domain; only the formatted state counts
                raise NotDerived("quorum.initialize: the model raises on its formatted state")
            made.append((pre, d.step))
        pre, st = made[0]  # the formatted state pins `pre`: the initial states are st's posts from it
        return z3.And(init_constraint(layout, pre), st.guard, *[sym[k] == st.post[k] for k in pre.keys()])
    return init


def derive_all(derive: Callable[[Any], Any], every: list[Any], lazy: bool,
               progress: Callable[[Any], None] | None) -> tuple[ByAction, list[float], Callable[[Any], Any] | None]:
    """(the derived instances, [their seconds in all], the function that derives one more when
    `lazy`, else None): every instance of `every` is derived now unless `lazy`."""
    derived = ByAction()
    spent = [0.0]

    def derive_one(a: Any) -> Any:
        d = derive(a)
        derived[a] = d
        spent[0] += d.seconds
        if progress:
            progress(d)
        return d

    if not lazy:
        for a in every:
            derive_one(a)
    return derived, spent, derive_one if lazy else None


def encoding(base: Any, name: str, domain: Callable[[Any, Sym], Any], derived: ByAction, pre0: Sym,
             derive_one: Callable[[Any], Any] | None, every: list[Any]) -> Any:
    """`base` (an encoding: induction.encoding_of) with `step` and `transition` the derived ones
    (each instance derived when first asked for, with `derive_one`), and `domain` the layout's
    meaningful states (what a derivation assumes)."""
    wanted = {(type(a), a) for a in every}

    def step(ctx: Any, pre: Sym, a: Any) -> Step:
        d = derived.get(a)
        if d is None and derive_one is not None and (type(a), a) in wanted:
            d = derive_one(a)
        if d is None or d.step is None:
            raise NotDerived(f"{a!r}: {'not derived' if d is None else d.why}")
        if all(pre[k] is pre0[k] or pre[k].eq(pre0[k]) for k in pre0.keys()):
            return d.step
        rename = renamer(pre0, pre)
        return Step(rename(d.step.guard), Sym({k: rename(v) for k, v in d.step.post.f.items()}))

    def transition(ctx: Any, pre: Sym, post: Sym, acts: list[Any] | None = None, selector: Any = None) -> Any:
        acts = list(every) if acts is None else acts
        return relation([step(ctx, pre, a) for a in acts], pre, post, selector)

    def crash(ctx: Any, pre: Sym, acts: list[Any]) -> tuple[Any, list[tuple[Any, Any]]]:
        """(where one of `acts` makes the model raise from `pre`, [(action, its condition)])."""
        rename = renamer(pre0, pre)
        each = []
        for a in acts:
            step(ctx, pre0, a)  # derived, or NotDerived
            c = derived[a].crash
            if not z3.is_false(z3.simplify(c)):
                each.append((a, rename(c)))
        return z3.Or([c for _, c in each]), each

    return SimpleNamespace(**{**vars(base), "name": name, "step": step, "transition": transition,
                              "actions": lambda ctx: list(every), "domain": domain, "crash": crash})


def renamer(old: Sym, new: Sym) -> Callable[[Any], Any]:
    """t -> t with each variable of `old` replaced by the same key's term of `new`: z3.substitute
    with its pairs checked and marshalled once, not once per term (a step has a term per key)."""
    pairs = [(old[k], new[k]) for k in old.keys() if not old[k].eq(new[k])]
    if not pairs:
        return lambda t: t
    ctx = pairs[0][0].ctx
    frm, to = (z3.Ast * len(pairs))(), (z3.Ast * len(pairs))()
    for i, (a, b) in enumerate(pairs):
        if a.sort() != b.sort():
            raise ValueError(f"{a} and {b} differ in sort")
        frm[i], to[i] = a.as_ast(), b.as_ast()
    return lambda t: z3.z3._to_expr_ref(z3.Z3_substitute(ctx.ref(), t.as_ast(), len(pairs), frm, to), ctx)


def not_derived(ctx: DerivedCtx, acts: Sequence[Any]) -> list[str]:
    """The instances of `acts` that did not derive (a lazy context's not yet derived are not among them)."""
    lazy = {(type(a), a) for a in ctx.encoding.actions(ctx)}
    return [f"{a!r}: {ctx.derived[a].why if a in ctx.derived else 'not derived'}"
            for a in acts if (a in ctx.derived and ctx.derived[a].step is None) or (a not in ctx.derived and (type(a), a) not in lazy)]


def prove(ctx: Any, targets: Sequence[str], timeout_s: float = 60.0, symmetric: bool = True,
          progress: Callable[[Check], None] | None = None, only: Sequence[Any] | None = None) -> Outcome:
    """induction.prove on the derived relation (of either model: `ctx.encoding` says which);
    refused (result "unknown" with the reason) when an action it checks did not derive; "cti"
    naming the action when the model raises from an Inv state."""
    enc = ctx.encoding
    acts = list(only) if only is not None else (enc.representatives(ctx) if symmetric
                                                 else list(enc.actions(ctx)))
    missing = not_derived(ctx, acts)
    if missing:
        return Outcome(induction.UNKNOWN, induction.conjuncts_for(targets, enc.support),
                       reason="not derived from the model: " + "; ".join(missing[:3]))
    try:
        out = induction.prove(ctx, targets, timeout_s, symmetric, progress, only)
    except NotDerived as e:
        return Outcome(induction.UNKNOWN, induction.conjuncts_for(targets, enc.support), reason=f"not derived from the model: {e}")
    if out.result != induction.PROVED:
        return out
    pre = enc.fresh(ctx.layout, PREFIX)
    inv = z3.And([enc.formula(n)(ctx, pre) for n in out.conjuncts])
    for a in acts:
        if a not in ctx.derived:  # a lazy context derives it now
            try:
                enc.step(ctx, pre, a)
            except NotDerived as e:
                out.result, out.reason = induction.UNKNOWN, f"not derived from the model: {e}"
                return out
        d = ctx.derived[a]
        if z3.is_false(z3.simplify(d.crash)):
            continue
        s = z3.Solver()
        s.set("timeout", max(1, int(timeout_s * 1000)))
        t0 = time.monotonic()
        r = s.check(inv, enc.domain(ctx.layout, pre), d.crash)
        answer = "holds" if r == z3.unsat else "fails" if r == z3.sat else "unknown"
        c = Check(f"Inv => {a!r} does not raise ({', '.join(d.crashes)})", answer, time.monotonic() - t0)
        out.checks.append(c)
        if progress:
            progress(c)
        if answer != "holds":
            out.result = induction.CTI if answer == "fails" else induction.UNKNOWN
            out.reason = f"the model raises {', '.join(d.crashes)} in {a!r} from a state of the invariant ({answer})"
            return out
    return out
