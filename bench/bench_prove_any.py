"""Seconds of `kcheck prove --size any` (invariants for every number of voters), as JSON.

    python bench/bench_prove_any.py [--variant NAME]... [--invariant NAME]... [--no-stale-requests] [--timeout 60]
    python bench/bench_prove_any.py --model replication [--variant NAME]... [--set KEY=VALUE]...

The invariants default to those `kcheck prove --size any` proves (election_safety,
log_matching and leader_completeness); `--no-stale-requests` proves them with stale_requests = false. For each variant
(default: kafka-4.1 and the two that break election safety, K3 and K4): the
result (proved / cti / unknown), wall seconds, seconds inside Z3, the number of queries, the
query seconds by kind (Init, enabledness, consecution: count, total, median, max) and the five
slowest queries; for a CTI, the lemma, the action and the number of nodes of Z3's model.

With `--model replication`: `structural` for every number of brokers, on the default configuration
with the `--set` values (default variants: kafka-4.1 and fenced-may-join-isr, R8): the sample
check's transitions and seconds, then the proof's, and the peak memory of the whole run.
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

from checker.proofs.kraft_param import PCtx
from checker.proofs.kraft_param_inv import INVARIANTS
from checker.proofs.param_induction import prove_any
from model.kraft.variants import Protocol

DEFAULT = ("kafka-4.1", "vote-not-persisted", "same-identity-after-disk-loss")


def _kind(what: str) -> str:
    if what.startswith("Init"):
        return "init"
    return "enabled" if " enabled in some Inv state" in what else "consecution"


def _replication(variants: list[str], overrides: list[str], timeout: float) -> None:
    import resource

    from checker.config import load_config
    from checker.proofs import replication_any as RA
    from checker.proofs import replication_param as R
    from model.replication.variants import Rules

    rows = []
    for variant in variants or ["kafka-4.1", "fenced-may-join-isr"]:
        rc = load_config(model="replication", variant=variant, overrides=overrides)
        c = R.RCtx.of(rc.build().params, Rules.of(variant))
        t0 = time.monotonic()
        sample = RA.encoding_covers(rc, c, quiet=True)
        t1 = time.monotonic()
        o = RA.prove(c, timeout_s=timeout)
        rows.append({"variant": variant, "result": o.result, "sample_transitions": sample["transitions"],
                     "sample_seconds": round(t1 - t0, 2), "proof_seconds": round(time.monotonic() - t1, 2),
                     "solver_seconds": round(o.seconds, 2), "queries": len(o.checks),
                     "cti": None if o.cti is None else {"conjunct": o.cti.conjunct, "action": o.cti.action}})
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(json.dumps({"model": "replication", "brokers": "any", "set": overrides, "peak_mb": peak, "runs": rows},
                     indent=1))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", choices=("kraft", "replication"), default="kraft")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                    help="replication: a configuration value")
    ap.add_argument("--variant", action="append", default=[])
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--invariant", action="append", default=[], choices=sorted(INVARIANTS))
    ap.add_argument("--no-stale-requests", action="store_true", help="prove with stale_requests = false")
    args = ap.parse_args()
    if args.model == "replication":
        _replication(args.variant, args.overrides, args.timeout)
        return
    invariants = args.invariant or list(INVARIANTS)
    rows = []
    for variant in args.variant or DEFAULT:
        t0 = time.monotonic()
        c = PCtx(Protocol.of(variant), stale_requests=not args.no_stale_requests)
        o = prove_any(c, invariants, timeout_s=args.timeout)
        wall = time.monotonic() - t0
        kinds: dict[str, list[float]] = {}
        for ch in o.checks:
            kinds.setdefault(_kind(ch.what), []).append(ch.seconds)
        rows.append({
            "variant": variant, "result": o.result, "seconds": round(wall, 2), "solver_seconds": round(o.seconds, 2),
            "queries": len(o.checks),
            "per_query": {k: {"count": len(v), "total": round(sum(v), 2), "median": round(statistics.median(v), 3),
                              "max": round(max(v), 2)} for k, v in kinds.items()},
            "slowest": [{"query": ch.what, "seconds": round(ch.seconds, 2)}
                        for ch in sorted(o.checks, key=lambda ch: -ch.seconds)[:5]],
            "cti": None if o.cti is None else {"conjunct": o.cti.conjunct, "action": o.cti.action,
                                               "nodes": o.cti.nodes},
        })
    print(json.dumps({"invariants": invariants, "stale_requests": not args.no_stale_requests, "voters": "any",
                      "runs": rows}, indent=1))


if __name__ == "__main__":
    main()
