"""Derived (checker/proofs/derive.py) vs hand-written (checker/proofs/kraft_next.py) KRaft
relations, 3 voters, default config and variant: per action instance, whether it derives (else
the construct that stops it), the paths explored, the derivation time, the size of the derived
terms (characters of the changed variables and guard), the equivalence check's verdict, and the
time of the same one-step consecution query (election_safety and the cut-link lemma-free check
inv(pre) & step & !inv(post)) with each relation.

    .venv/bin/python bench/bench_derive.py
"""
from __future__ import annotations

import time
from collections import Counter

import z3

from checker.proofs import derive as D
from checker.proofs import kraft_next as N
from checker.proofs.induction import formula
from checker.proofs.kraft_state import fresh
from model.kraft.params import CONFIG_KEYS, Params
from model.kraft.state import History


def consecution(nctx: N.Ctx, pre: D.Sym, dom: z3.BoolRef, st: N.Step, inv: str) -> tuple[str, float]:
    f = formula(inv)
    s = z3.Solver()
    s.add(dom, f(nctx, pre), st.guard, z3.Not(f(nctx, st.post)))
    t = time.perf_counter()
    r = s.check()
    return str(r), time.perf_counter() - t


def main() -> None:
    p = Params.from_config({**{k.name: k.default for k in CONFIG_KEYS}, "voters": 3})
    ctx, nctx = D.contexts(p)
    why: Counter[str] = Counter()
    print(f"{'action':48} {'verdict':8} {'paths':>5} {'derive s':>8} {'size':>6} {'query derived s':>15} {'query written s':>15}")
    for a in N.actions(nctx):
        c = D.compare(ctx, nctx, a)
        if c.verdict == "unsupported":
            why[c.difference] += 1
            continue
        pre = fresh(nctx.layout, "pre_")
        dom = D.domain(nctx.layout, pre)
        d = D.derive(ctx, nctx.layout, pre, a, dom)
        rd, td = consecution(nctx, pre, dom, d.step, "election_safety")
        rw, tw = consecution(nctx, pre, dom, N.step(nctx, pre, a), "election_safety")
        print(f"{a!r:48} {c.verdict:8} {d.paths:5} {d.seconds:8.3f} {d.size:6} {td:9.3f} {rd:5} {tw:9.3f} {rw:5}")
    print("not derived:", ", ".join(f"{n} instances: {w}" for w, n in why.items()))
    probe(ctx, nctx)


def probe(ctx: D.Context, nctx: N.Ctx) -> None:
    """What stops each action kind beyond the network and history: both fixed to the empty
    network and history (not a relation of the model, only a probe of the constructs)."""
    orig = D.symbolic_state

    def empty(layout, pre, ex):  # type: ignore[no-untyped-def]
        return orig(layout, pre, ex)._replace(network=(), history=History((), (), (), (), 0))

    print("probe, network and history fixed empty (first instance of each kind):")
    D.symbolic_state = empty
    try:
        seen: set[type] = set()
        for a in N.actions(nctx):
            if type(a) in seen:
                continue
            seen.add(type(a))
            pre = fresh(nctx.layout, "pre_")
            try:
                d = D.derive(ctx, nctx.layout, pre, a, D.domain(nctx.layout, pre))
                what = d.why or f"derives: {d.paths} paths, {d.enabled_paths} enabled"
                print(f"  {a!r:48} {what} ({d.seconds:.3f} s)")
            except TypeError as e:
                print(f"  {a!r:48} TypeError: {e}")
    finally:
        D.symbolic_state = orig


if __name__ == "__main__":
    main()
