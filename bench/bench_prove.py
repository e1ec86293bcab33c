"""Seconds per `kcheck prove` run by size, as JSON on stdout.

    python bench/bench_prove.py [--model kraft|replication] [--sizes 3,5,7] [--preset default]
                                [--set KEY=VALUE]... [--invariant NAME]... [--timeout 120] [--bmc K]

For each size (voters for kraft, brokers for replication; default sizes 3,5,7 for kraft and
3,4 for replication): the induction result (proved / cti / unknown / vacuous), its seconds, the
number of Z3 queries and the slowest query; then `largest_proved`, the largest size whose
result is "proved" (null if none). With --bmc K, BMC to depth K on the same preset per size.

kraft runs on the relation derived from the model's Python, as `kcheck prove` does: each row
gives the derivation's seconds apart (`derivation_seconds`, the derivation cache as
$KCHECK_CACHE_DIR says) and, with --baseline, the same proof on the hand-written relation
(the test oracle, tests/oracles/kraft_next.py) in the same run, and the ratio of the two proofs' seconds.
Replication runs on the hand-written relation, as `kcheck prove` does on the recorded sources.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the test oracle: tests/oracles/kraft_next.py

from checker.config import load_config
from checker.proofs.prove import _SIZE_KEY, _encoding
from checker.proofs.bmc import bmc
from checker.proofs.induction import prove


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="kraft", choices=sorted(_SIZE_KEY))
    ap.add_argument("--sizes", default=None, help="default: 3,5,7 (kraft), 3,4 (replication)")
    ap.add_argument("--invariant", action="append", default=[], help="default: the model's DEFAULT_TARGETS")
    ap.add_argument("--preset", default="default")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key (e.g. values=2)")
    ap.add_argument("--variant", default=None)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--bmc", type=int, default=0)
    ap.add_argument("--baseline", action="store_true", help="kraft: also the hand-written relation, in the same run")
    args = ap.parse_args()
    Ctx, Params, _, default_targets = _encoding(args.model)
    targets = args.invariant or list(default_targets)
    sizes = args.sizes or ("3,5,7" if args.model == "kraft" else "3,4")
    size_key = _SIZE_KEY[args.model]
    rows = []
    for n in (int(x) for x in sizes.split(",")):
        rc = load_config(model=args.model, preset=args.preset, variant=args.variant, overrides=args.set)
        config = {**dict(rc.config), size_key: n}
        hand = Ctx.of(Params.from_config(config), rc.variant)
        ctx, derivation = hand, None
        if args.model == "kraft":  # what `kcheck prove` proves: the derived relation, derived first
            from checker.proofs import derived
            from checker.proofs.induction import representatives

            t0 = time.monotonic()
            ctx = derived.context(hand.p, rc.variant, actions=representatives(hand), cached=True)
            derivation = round(time.monotonic() - t0, 2)
        t0 = time.monotonic()
        o = (derived.prove if derivation is not None else prove)(ctx, targets, timeout_s=args.timeout)
        row = {"model": args.model, size_key: n, "set": args.set, "invariants": targets, "result": o.result, "seconds": round(time.monotonic() - t0, 2),
               "solver_seconds": round(o.seconds, 2), "queries": len(o.checks),
               "relation": "derived" if derivation is not None else "hand-written", "derivation_seconds": derivation,
               "slowest": max(((c.what, round(c.seconds, 2)) for c in o.checks), key=lambda x: x[1], default=None),
               "cti": None if o.cti is None else {"conjunct": o.cti.conjunct, "action": repr(o.cti.action)}}
        if args.baseline and derivation is not None:
            from tests.oracles.kraft_next import Ctx as OracleCtx

            hand = OracleCtx.of(hand.p, rc.variant)
            t0 = time.monotonic()
            b = prove(hand, targets, timeout_s=args.timeout)
            row["hand_written"] = {"result": b.result, "seconds": round(time.monotonic() - t0, 2),
                                   "queries": len(b.checks)}
            row["ratio"] = round(row["seconds"] / max(row["hand_written"]["seconds"], 1e-9), 2)
        if args.bmc:
            model = rc.definition.build(config, rc.variant)
            b = bmc(ctx, model, targets, args.bmc, timeout_s=args.timeout * 5)
            row["bmc"] = {"depth": b.depth, "result": b.result, "seconds": round(b.seconds, 2)}
        rows.append(row)
        print(json.dumps(row), flush=True)
    proved = [r[size_key] for r in rows if r["result"] == "proved"]
    print(json.dumps({"largest_proved": max(proved) if proved else None, "runs": len(rows)}))


if __name__ == "__main__":
    main()
