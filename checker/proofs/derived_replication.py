"""Induction on the relation derived from the replication model as written
(checker/proofs/derive_replication.py) instead of the hand-written one (replication_next.py),
as checker/proofs/derived.py does for KRaft: the same engine, layout, Init, invariants and
lemmas (replication_inv.py, written by hand), with `step` and `transition` from the model's
Python.

Each action instance is derived under the proof's own inductive invariant (its targets and their
lemmas): a branch no state of the invariant takes is pruned, so the derived step is the model's
on exactly the states an induction step asks about (spec/proofs.md, "Deriving the replication
relation"). A context therefore belongs to one set of targets.

Every target carries the well-formedness lemmas (`well_formed` and its support: the latest
record's sets, the ids and epochs in range, the messages' domains): the model's Python raises (an
IndexError: a record the controller no longer holds, an id past the brokers) on states they
exclude, which the hand-written relation maps to some successor instead. So a proof of
`structural` on the derived relation proves them with it.

    ctx = derived_replication.context(params, variant, targets)   # lazy: derived when first asked
    outcome = derived.prove(ctx, targets, timeout_s)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import z3

from checker.proofs import derive_replication as DR
from checker.proofs.derivation_cache import Cache
from checker.proofs import replication_inv
from checker.proofs import replication_next as N
from checker.proofs.derived import PREFIX, derive_all, encoding
from checker.proofs.induction import conjuncts_for
from checker.proofs.replication_state import fresh
from model.replication.context import Context
from model.replication.params import Params
from model.replication.variants import Rules


@dataclass(frozen=True)
class DerivedCtx(N.Ctx):
    """A replication_next.Ctx whose encoding's relation is the derived one."""

    encoding: Any = field(default=None, compare=False, hash=False)
    derived: dict = field(default_factory=dict, compare=False, hash=False)  # ByAction: action -> Derived
    spent: list = field(default_factory=lambda: [0.0], compare=False, hash=False)  # derivation seconds in all
    cache: Any = field(default=None, compare=False, hash=False)  # derivation_cache.Cache, or None

    @property
    def seconds(self) -> float:
        return self.spent[0]


WELL_FORMED = tuple(conjuncts_for(["well_formed"], replication_inv.SUPPORT))
SUPPORT = {name: tuple(x for x in WELL_FORMED if x != name)
           + tuple(x for x in replication_inv.SUPPORT.get(name, ()) if x not in WELL_FORMED)
           for name in {**replication_inv.INVARIANTS, **replication_inv.LEMMAS}}


def context(p: Params, variant: str, targets: Sequence[str], actions: Sequence[Any] | None = None,
            progress: Callable[[Any], None] | None = None, lazy: bool = True,
            max_paths: int = 4000, step: Callable[..., Any] | None = None, cached: bool = False) -> DerivedCtx:
    """Every action instance of the configuration (or `actions`), derived under the inductive
    invariant of `targets` on induction's pre-state (`lazy`: each when a proof first asks);
    `step`: a plugin's changed transition (derive_replication.derive); `cached`: read and keep
    the derivations in the derivation cache (never with a plugin's change in force)."""
    base = N.Ctx.of(p, variant)
    mctx = Context(p, Rules.of(variant))
    pre = fresh(base.layout, PREFIX)
    inv = z3.And([replication_inv.formula(n)(base, pre) for n in conjuncts_for(targets, SUPPORT)])
    dom = DR.domain(base.layout, pre)
    every = N.actions(base) if actions is None else list(actions)
    cache = Cache("replication", variant, (p, max_paths), dom, inv) if cached else None

    def derive(a: Any) -> Any:
        make = lambda: DR.derive(mctx, base.layout, pre, a, dom, max_paths, assume=inv, step=step)  # noqa: E731
        return make() if cache is None else cache.derive(a, make, pre)
    derived, spent, later = derive_all(derive, every, lazy, progress)
    enc = encoding(replication_inv.ENCODING, "replication (derived)", DR.domain, derived, pre, later, every)
    enc.support = SUPPORT
    return DerivedCtx(base.p, base.r, base.layout, base.variant, enc, derived, spent, cache)
