"""Exhaustive search on Spark against the local engine, on the same configurations: one JSON
object per configuration, with both engines' seconds and states/s and their ratio.

    python bench/bench_spark_check.py                                  # smoke, then the kraft default
    python bench/bench_spark_check.py --run replication:smoke --run kraft:default --master local[2] --workers 2

Both engines run in this process, one after the other, on the same cores: `--workers` processes
for the local engine, the Spark session's executors (default local[2]) for Spark.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from checker.search.run import explore  # noqa: E402
from checker.config import load_config  # noqa: E402
from checker.search.spark_bfs import explore_spark  # noqa: E402
from checker.walks.spark import spark_session  # noqa: E402
from checker.walks.walker import ModelSpec  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", action="append", metavar="MODEL:PRESET",
                        help="a configuration (repeatable; default replication:smoke and kraft:default)")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--partitions", type=int)
    args = parser.parse_args(argv)
    runs = args.run or ["replication:smoke", "kraft:default"]
    session = spark_session(args.master, app_name="kcheck-bench")
    try:
        for run in runs:
            name, preset = run.split(":")
            rc = load_config(model=name, preset=preset)
            local = explore(rc.build(), workers=args.workers)
            begin = time.perf_counter()
            spark = explore_spark(session.sparkContext, ModelSpec.of(rc.model, rc.config, rc.variant),
                                  partitions=args.partitions)
            wall = time.perf_counter() - begin
            same = (local.result, local.distinct_states, local.states_generated, local.depth) == \
                (spark.result, spark.distinct_states, spark.states_generated, spark.depth)
            print(json.dumps({
                "model": name, "preset": preset, "distinct_states": local.distinct_states, "depth": local.depth,
                "same_result": same, "local_workers": args.workers, "master": session.sparkContext.master,
                "local_seconds": round(local.seconds, 2), "spark_seconds": round(wall, 2),
                "local_states_per_second": round(local.states_per_second), "spark_states_per_second":
                    round(spark.distinct_states / wall) if wall else None,
                "spark_over_local_time": round(wall / local.seconds, 2) if local.seconds else None,
            }), flush=True)
    finally:
        session.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
