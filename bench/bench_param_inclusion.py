"""The every-size KRaft encoding against the relation derived from the model's Python, by Z3
(checker/proofs/param_inclusion.py): per action instance at each number of voters, the paths
derived, the derivation's seconds (no cache: derived afresh), Z3's seconds (the inclusion and
the ghost `agree`'s relation), the invariant assumed, the ghost guards and whether the relation
was kept; then per size the totals, and the peak memory of the process. Kafka 4.1, `default`'s bounds,
the conjuncts of the three every-size targets, as `python -m checker.proofs.record` runs it.
With `--model replication`, the every-size replication encoding against that model's relation
(checker/proofs/replication_inclusion.py), every action instance at each number of brokers.

    .venv/bin/python bench/bench_param_inclusion.py [--voters 3 4] [--kinds HandleFetchResponse ...]
    .venv/bin/python bench/bench_param_inclusion.py --model replication [--brokers 3] [--kinds FenceBroker ...]
"""
from __future__ import annotations

import argparse
import resource
import time
from typing import Any

from checker.config import load_config
from checker.proofs import param_inclusion as PI
from checker.proofs.induction import representatives
from checker.proofs.kraft_ctx import Ctx
from checker.proofs.kraft_param import PCtx
from checker.proofs.kraft_param_inv import INVARIANTS, conjuncts
from model.kraft.params import Params
from model.kraft.quorum import Context
from model.kraft.variants import Protocol


def summary(size: str, rep: Any, t0: float) -> str:
    """One size's totals: instances, verdict, seconds deriving and in Z3, the invariant assumed."""
    j = rep.as_json()
    verdict = "all included" if rep.failure is None else "stopped: " + rep.failure.verdict
    return (f"{size}: {j['instances']} instances, {verdict}; {j['derive_seconds']} s deriving, {j['z3_seconds']} s "
            f"in Z3, {time.monotonic() - t0:.1f} s wall; assumed: {', '.join(j['assumed']) or 'nothing'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--voters", type=int, nargs="+", default=list(PI.SIZES))
    ap.add_argument("--kinds", nargs="*", default=None, help="only these action kinds")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per Z3 query")
    ap.add_argument("--model", choices=["kraft", "replication"], default="kraft")
    ap.add_argument("--brokers", type=int, nargs="+", default=None, help="replication: the numbers of brokers")
    args = ap.parse_args()
    if args.model == "replication":
        replication(args)
        return
    config = dict(load_config(model="kraft", preset="default").config)
    c = PCtx(Protocol.of("kafka-4.1"), stale_requests=bool(config["stale_requests"]))
    names = conjuncts(c, list(INVARIANTS))
    print(f"{'voters':>6} {'action':<48} {'verdict':<13} {'paths':>6} {'derive s':>9} {'z3 s':>7} assumed  ghost guards  agree")
    for n in args.voters:
        p = Params.from_config({**config, "voters": n})
        ctx = Ctx.of(p, "kafka-4.1")
        acts = [a for a in representatives(ctx) if args.kinds is None or type(a).__name__ in args.kinds]
        t0 = time.monotonic()
        rep = PI.check_size(Context(p, Protocol.of("kafka-4.1")), ctx.layout, c, acts, names,
                            int(args.timeout * 1000), lambda r: print(
                                f"{n:>6} {r.action!r:<48} {r.verdict:<13} {r.paths:>6} {r.derive_seconds:>9.1f} "
                                f"{r.seconds:>7.1f} {r.assumed or '-':<8} {r.ghost_guards:<12} {r.agree or '-'}", flush=True))
        print(summary(f"{n} voters", rep, t0) + f"; ghost guards no relation ties to the model: {', '.join(rep.as_json()['ghost_guards']) or 'none'}")
    print(f"peak memory: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


def replication(args: argparse.Namespace) -> None:
    from checker.proofs import replication_inclusion as RI
    from checker.proofs import replication_next as N
    from model.replication.params import Params as RParams

    config = dict(load_config(model="replication", preset="default").config)
    print(f"{'brokers':>7} {'action':<52} {'verdict':<13} {'paths':>6} {'derive s':>9} {'z3 s':>7} assumed")
    for n in args.brokers or list(RI.SIZES):
        p = RParams.from_config({**config, "brokers": n})
        acts = [a for a in N.actions(N.Ctx.of(p, "kafka-4.1")) if args.kinds is None or type(a).__name__ in args.kinds]
        t0 = time.monotonic()
        rep = RI.check_size(p, "kafka-4.1", acts, int(args.timeout * 1000), lambda r: print(
            f"{n:>7} {r.action!r:<52} {r.verdict:<13} {r.paths:>6} {r.derive_seconds:>9.1f} {r.seconds:>7.1f} "
            f"{r.assumed or '-'}", flush=True))
        print(summary(f"{n} brokers", rep, t0))
    print(f"peak memory: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
