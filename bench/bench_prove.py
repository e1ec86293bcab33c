"""Seconds per `kcheck prove` run by number of voters, as JSON on stdout.

    python bench/bench_prove.py [--sizes 3,5,7] [--invariant election_safety] [--timeout 120]
                                [--bmc K]

For each size: the induction result (proved / cti / unknown / vacuous), its seconds, the
number of Z3 queries and the slowest query; then `largest_proved`, the largest size whose
result is "proved" (null if none). With --bmc K, BMC to depth K on the smoke preset per size.
"""
from __future__ import annotations

import argparse
import json
import time

from checker.config import load_config
from checker.symbolic.bmc import bmc
from checker.symbolic.induction import prove
from checker.symbolic.kraft_inv import DEFAULT_TARGETS
from checker.symbolic.kraft_next import Ctx
from model.kraft.params import Params


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="3,5,7")
    ap.add_argument("--invariant", action="append", default=[], help="default: kraft_inv.DEFAULT_TARGETS")
    ap.add_argument("--preset", default="default")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--bmc", type=int, default=0)
    args = ap.parse_args()
    targets = args.invariant or list(DEFAULT_TARGETS)
    rows = []
    for n in (int(x) for x in args.sizes.split(",")):
        rc = load_config(model="kraft", preset=args.preset)
        config = {**dict(rc.config), "voters": n}
        ctx = Ctx.of(Params.from_config(config), rc.variant)
        t0 = time.monotonic()
        o = prove(ctx, targets, timeout_s=args.timeout)
        row = {"voters": n, "invariants": targets, "result": o.result, "seconds": round(time.monotonic() - t0, 2),
               "solver_seconds": round(o.seconds, 2), "queries": len(o.checks),
               "slowest": max(((c.what, round(c.seconds, 2)) for c in o.checks), key=lambda x: x[1], default=None),
               "cti": None if o.cti is None else {"conjunct": o.cti.conjunct, "action": repr(o.cti.action)}}
        if args.bmc:
            model = rc.definition.build(config, rc.variant)
            b = bmc(ctx, model, targets, args.bmc, timeout_s=args.timeout * 5)
            row["bmc"] = {"depth": b.depth, "result": b.result, "seconds": round(b.seconds, 2)}
        rows.append(row)
        print(json.dumps(row), flush=True)
    proved = [r["voters"] for r in rows if r["result"] == "proved"]
    print(json.dumps({"largest_proved": max(proved) if proved else None, "runs": len(rows)}))


if __name__ == "__main__":
    main()
