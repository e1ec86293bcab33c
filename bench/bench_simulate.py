"""Benchmark of `kcheck simulate`: walks/s and steps/s of the local engine (one process) and of
Spark local[1] and local[2], on one configuration, all in one run; prints one JSON object.

    python bench/bench_simulate.py [--walks N] [--depth D] [--seed S] [--brokers B] [--partitions P]
                                   [--swarm] [--distinct exact|hll]

The workload is the replication model (default variant, `--brokers` brokers, other keys at their
defaults: 5 brokers is far beyond what BFS exhausts). Times exclude starting the Spark session,
which is reported on its own; Spark's include shipping fingerprints to count distinct states.
Every engine must produce the same summary; `identical_results` says so (exit 1 otherwise).
Run it on an otherwise idle machine: the speed-up of local[2] is bounded by the free cores.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from checker.config import load_config  # noqa: E402
from checker.walks.simulate import run_local  # noqa: E402
from checker.walks.walker import ModelSpec  # noqa: E402


def _rates(walks: int, steps: int, seconds: float) -> dict:
    return {"seconds": round(seconds, 3), "walks_per_second": round(walks / seconds, 1),
            "steps_per_second": round(steps / seconds, 1)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--walks", type=int, default=2000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--brokers", type=int, default=5)
    ap.add_argument("--partitions", type=int, default=8, help="Spark partitions, the same for local[1] and local[2]")
    ap.add_argument("--swarm", action="store_true")
    ap.add_argument("--distinct", choices=("exact", "hll", "none"), default="exact")
    args = ap.parse_args()

    rc = load_config(model="replication", overrides=[f"brokers={args.brokers}"])
    spec = ModelSpec.of(rc.model, rc.config, rc.variant)
    out: dict = {"model": rc.model, "variant": rc.variant, "config": dict(rc.config), "walks": args.walks,
                 "depth": args.depth, "seed": args.seed, "partitions": args.partitions, "swarm": args.swarm,
                 "distinct": args.distinct,
                 "cpus": os.cpu_count(), "python": platform.python_version(), "runs": {}}

    start = time.perf_counter()
    local, local_distinct = run_local(spec, args.seed, args.walks, args.depth, swarm=args.swarm,
                                      distinct=args.distinct)
    t_local = time.perf_counter() - start
    out["runs"]["local"] = _rates(local.walks, local.steps, t_local)
    steps = local.steps
    local.fingerprints = set()

    from checker.walks.spark import run_spark, spark_session

    identical = True
    for master in ("local[1]", "local[2]"):
        start = time.perf_counter()
        session = spark_session(master, "kcheck-bench")
        try:
            startup = time.perf_counter() - start
            start = time.perf_counter()
            summary, distinct = run_spark(session.sparkContext, spec, args.seed, args.walks, args.depth,
                                          swarm=args.swarm, partitions=args.partitions, distinct=args.distinct)
            seconds = time.perf_counter() - start
        finally:
            session.stop()
        differ = [f for f in ("walks", "steps", "action_counts", "depth_histogram", "outcomes",
                              "sometimes_reached", "violations", "violating_walks", "sketch")
                  if getattr(summary, f) != getattr(local, f)]
        if distinct != local_distinct:
            differ.append("distinct_states")
        identical &= not differ
        out["runs"][f"spark_{master}"] = {**_rates(summary.walks, summary.steps, seconds),
                                         "session_startup_seconds": round(startup, 3), "differs_from_local": differ}

    t1 = out["runs"]["spark_local[1]"]["seconds"]
    t2 = out["runs"]["spark_local[2]"]["seconds"]
    out.update(
        steps=steps,
        distinct_states=local_distinct,
        distinct_states_method=args.distinct,
        violations=sorted(local.violations),
        identical_results=identical,
        speedup_local2_over_local1=round(t1 / t2, 2),
        spark_local1_overhead_vs_local=round(t1 / t_local, 2),  # time ratio, same single core
        spark_local1_overhead_seconds=round(t1 - t_local, 3),
    )
    print(json.dumps(out, indent=1))
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
