"""The replication relation derived from the model's Python (checker/proofs/derive_replication.py)
against the hand-written one (checker/proofs/replication_next.py).

Per action instance (3 brokers, every config key at its default, Kafka 4.1): the paths explored
(enabled, crashing), the derivation time, and `derive_replication.compare`'s verdict with its
time: "equal" on every state of the domain, else the first differing variable and, then, the
verdict again on the states of the proof's invariant (replication_inv's lemmas of the default
targets). An action whose paths pass --max-paths is "not derived".

With --under-inv the paths are explored under the domain and the invariant (a branch side no
state of the invariant takes is pruned), and the relation is compared on the invariant's
states only: what an induction proof needs, for the actions too branchy to derive on the whole
domain.

    .venv/bin/python bench/bench_derive_replication.py [--kinds Crash SendFetch ...] [--all] [--max-paths N] [--under-inv]

Without --all, one instance per kind (the first of replication_next.actions); message actions
name slot 0.
"""
from __future__ import annotations

import argparse
from collections import Counter

import z3

from checker.proofs import derive_replication as D
from checker.proofs import replication_next as N
from checker.proofs.induction import conjuncts_for
from checker.proofs.replication_inv import DEFAULT_TARGETS, SUPPORT, formula
from checker.proofs.replication_state import fresh


def kind_name(a: object) -> str:
    return D.MODEL_ACTION.get(type(a), type(a).__name__)


def compare_all(kinds: list[str], every: bool, max_paths: int, under_inv: bool = False) -> None:
    ctx, nctx = D.contexts(D.default_params())
    pre = fresh(nctx.layout, "pre_")
    inv = z3.And([formula(n)(nctx, pre) for n in conjuncts_for(DEFAULT_TARGETS, SUPPORT)])
    acts = N.actions(nctx)
    if kinds:  # in the order given
        acts = [a for k in kinds for a in acts if kind_name(a) == k]
    if not every:
        seen: set[str] = set()
        acts = [a for a in acts if not (kind_name(a) in seen or seen.add(kind_name(a)))]  # type: ignore[func-returns-value]
    verdicts: Counter[str] = Counter()
    total = 0.0
    print(f"{'action':46} {'paths':>5} {'enabled':>7} {'crash':>16} {'derive s':>8} {'check s':>7}  verdict")
    for a in acts:
        if under_inv:
            d = D.derive(ctx, nctx.layout, pre, a, z3.And(D.domain(nctx.layout, pre), inv), max_paths)
            c = D.compare(ctx, nctx, a, pre=pre, assume=inv, derived=d)
            if c.verdict == "equal":
                c.verdict = "equal on Inv states"
        else:
            c = D.compare(ctx, nctx, a, pre=pre, max_paths=max_paths)
        d = c.derived
        total += d.seconds
        verdict = c.verdict if c.verdict != "differs" else f"differs on the domain at {c.difference[:160]}"
        if c.verdict == "differs" and under_inv:
            verdict = f"differs on Inv states at {c.difference[:160]}"
            verdicts["differs on Inv states"] += 1
        elif c.verdict == "differs":
            again = D.compare(ctx, nctx, a, pre=pre, assume=inv, derived=d)
            verdict += f"; on Inv states: {again.verdict} {again.difference[:160]}".rstrip()
            verdicts["equal on Inv states" if again.verdict == "equal" else "differs on Inv states"] += 1
        elif c.verdict == "unsupported":
            verdict = f"not derived: {c.difference}"
            verdicts["not derived"] += 1
        else:
            verdicts[c.verdict] += 1
        crash = f"{d.crash_paths}" if not d.crashes else f"{d.crash_paths} ({'/'.join(d.crashes)})"
        print(f"{a!r:46} {d.paths:5} {d.enabled_paths:7} {crash:>16} {d.seconds:8.2f} {c.check_seconds:7.2f}  {verdict}",
              flush=True)
    print("instances:", ", ".join(f"{n} {w}" for w, n in verdicts.items()), f"(derivation {total:.1f} s in all)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kinds", nargs="*", default=[], help="only these action kinds, in this order (e.g. Crash SendFetch)")
    ap.add_argument("--all", action="store_true", help="every action instance, not one per kind")
    ap.add_argument("--max-paths", type=int, default=4000, help="give up on an action past this many paths")
    ap.add_argument("--under-inv", action="store_true", help="derive under the invariant, compare on its states")
    args = ap.parse_args()
    compare_all(args.kinds, args.all, args.max_paths, args.under_inv)


if __name__ == "__main__":
    main()
