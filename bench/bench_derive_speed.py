"""The derivation's solver checks (checker/proofs/symbolic.py, derive_replication.py), with and
without its two ways of making fewer: a side of a new decision that a model of the path satisfies
is feasible without a check (`symbolic.WITNESS`), and the controller's election merged to one
fork per winner inside partition_change (`derive_replication.ELECTION_BY_VALUE`).

For each action instance (kraft: one per orbit of voter renamings; replication: every one), the
default configuration, Kafka 4.1, pure Python, one process: derived once with both off (the
baseline) and once with both on, in that order; the paths, solver checks and seconds of each, and
whether the two relations are equal (Z3, on every state of the domain: the same guard and crash
condition, the same successor where enabled). Totals and ratios at the end.

    KCHECK_PURE_PYTHON=1 .venv/bin/python bench/bench_derive_speed.py --model replication --size 3 [--kinds FenceBroker ...]
"""
from __future__ import annotations

import argparse
import time

import z3

from checker.config import load_config
from checker.proofs import derive_replication as DR
from checker.proofs import symbolic as S


def instances(model: str, size: int, kinds: list[str]) -> tuple[list, object]:
    """(the instances, a function deriving one) at `size` nodes."""
    if model == "kraft":
        from checker.proofs import derive as D
        from checker.proofs.induction import representatives
        from checker.proofs.kraft_state import fresh
        from model.kraft.params import Params

        p = Params.from_config({**dict(load_config(model="kraft", preset="default").config), "voters": size})
        ctx, nctx = D.contexts(p)
        pre = fresh(nctx.layout, "pre_")
        dom = D.domain(nctx.layout, pre)
        acts = representatives(nctx)
        run = lambda a: D.derive(ctx, nctx.layout, pre, a, dom)  # noqa: E731
    else:
        from checker.proofs import replication_inclusion as RI
        from checker.proofs import replication_next as N
        from checker.proofs.replication_state import fresh
        from model.replication.context import Context
        from model.replication.params import Params as RParams
        from model.replication.variants import Rules

        p = RParams.from_config({**dict(load_config(model="replication", preset="default").config), "brokers": size})
        nctx = N.Ctx.of(p, "kafka-4.1")
        mctx = Context(p, Rules.of("kafka-4.1"))
        pre = fresh(nctx.layout, "b_")
        dom = DR.domain(nctx.layout, pre)
        acts = N.actions(nctx)
        run = lambda a: DR.derive(mctx, nctx.layout, pre, a, dom, max_paths=RI.MAX_PATHS)  # noqa: E731
    acts = [a for a in acts if not kinds or type(a).__name__ in kinds]
    return acts, (run, pre, dom)


def equal(d0, d1, pre, dom) -> str:
    if d0.step is None or d1.step is None:
        return "both not derived" if d0.step is None and d1.step is None else "one not derived"
    g0, g1 = d0.step.guard, d1.step.guard
    post = z3.And([d0.step.post[k] == d1.step.post[k] for k in pre.keys()])
    s = z3.Solver()
    s.set("timeout", 600_000)
    s.add(dom, z3.Not(z3.And(g0 == g1, d0.crash == d1.crash, z3.Implies(g0, post))))
    r = s.check()
    return "equal" if r == z3.unsat else ("DIFFER" if r == z3.sat else "unknown")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=("kraft", "replication"), default="replication")
    ap.add_argument("--size", type=int, default=3, help="voters or brokers (default 3)")
    ap.add_argument("--kinds", nargs="*", default=[], help="only these action kinds")
    args = ap.parse_args()
    acts, (run, pre, dom) = instances(args.model, args.size, args.kinds)
    print(f"{args.model}, {args.size} {'voters' if args.model == 'kraft' else 'brokers'}, {len(acts)} instances")
    print(f"{'action':48} {'paths':>11} {'checks':>15} {'seconds':>15}  relation")
    tot = [0, 0, 0.0, 0.0]
    differ = 0
    for a in acts:
        out = []
        for on in (False, True):
            S.WITNESS = DR.ELECTION_BY_VALUE = on
            t = time.perf_counter()
            d = run(a)
            out.append((d, time.perf_counter() - t))
        S.WITNESS = DR.ELECTION_BY_VALUE = True
        (d0, t0), (d1, t1) = out
        verdict = equal(d0, d1, pre, dom)
        differ += verdict != "equal"
        tot[0] += d0.checks
        tot[1] += d1.checks
        tot[2] += t0
        tot[3] += t1
        print(f"{a!r:48} {d0.paths:5} {d1.paths:5} {d0.checks:7} {d1.checks:7} {t0:7.1f} {t1:7.1f}  {verdict}",
              flush=True)
    print(f"in all: {tot[0]:,} checks and {tot[2]:.1f} s without, {tot[1]:,} checks and {tot[3]:.1f} s with "
          f"({tot[0] / max(tot[1], 1):.2f} times fewer checks, {tot[2] / max(tot[3], 1e-9):.2f} times faster); "
          f"{len(acts) - differ} of {len(acts)} relations equal")


if __name__ == "__main__":
    main()
