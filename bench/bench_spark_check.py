"""Exhaustive search on Spark against the local engine, on the same configurations: one JSON
object per configuration, with both engines' seconds and states/s and their ratio, and for the
levels Spark ran (their frontier above `--driver-level`) a least-squares fit of a level's seconds
as a cost per level plus a cost per state expanded, beside the local engine's seconds per state,
and the floor of a level: the median seconds of five jobs of a level's shape (two stages, one task
a partition and stage, a shuffle) that carry one record a partition.

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
from checker.search.spark_bfs import DRIVER_LEVEL, default_partitions, explore_spark  # noqa: E402
from checker.walks.spark import spark_session  # noqa: E402
from checker.walks.walker import ModelSpec  # noqa: E402


def _fit(ticks: list[tuple[int, float]], driver_level: int) -> tuple:
    """Seconds of a level run on Spark = a + b * its frontier: (a in s, b in ms, levels fitted). The
    first level on Spark is left out: it starts the executors' Python workers."""
    points = []
    for (frontier, t0), (_, t1) in zip([(0, 0.0)] + ticks, ticks):
        if frontier > driver_level:
            points.append((frontier, t1 - t0))
    points = points[1:]
    if len(points) < 2:
        return None, None, len(points)
    mx = sum(x for x, _ in points) / len(points)
    my = sum(y for _, y in points) / len(points)
    sxx = sum((x - mx) ** 2 for x, _ in points)
    b = sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else 0.0
    return round(my - b * mx, 3), round(1000 * b, 4), len(points)


def _empty_level(sc, parts: int) -> float:
    """Median seconds of five jobs shaped as a level of the search, carrying one record a partition
    (a job of empty partitions took longer here: 1.1 to 1.4 s against 0.4 s on local[2])."""
    def through(_part, items):
        yield from items

    times = []
    for _ in range(5):
        begin = time.perf_counter()
        sc.parallelize([(k, k) for k in range(parts)], parts).mapPartitionsWithIndex(through).partitionBy(
            parts).mapPartitionsWithIndex(through).collect()
        times.append(time.perf_counter() - begin)
    return round(sorted(times)[2], 3)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", action="append", metavar="MODEL:PRESET",
                        help="a configuration (repeatable; default replication:smoke and kraft:default)")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--partitions", type=int)
    parser.add_argument("--driver-level", type=int, default=DRIVER_LEVEL)
    args = parser.parse_args(argv)
    runs = args.run or ["replication:smoke", "kraft:default"]
    session = spark_session(args.master, app_name="kcheck-bench")
    try:
        parts = args.partitions or default_partitions(session.sparkContext)
        _empty_level(session.sparkContext, parts)  # the first jobs start the Python workers
        floor = _empty_level(session.sparkContext, parts)
        for run in runs:
            name, preset = run.split(":")
            rc = load_config(model=name, preset=preset)
            local = explore(rc.build(), workers=args.workers)
            ticks: list[tuple[int, float]] = []  # (queue after the level, seconds since the start)
            begin = time.perf_counter()
            spark = explore_spark(session.sparkContext, ModelSpec.of(rc.model, rc.config, rc.variant),
                                  partitions=args.partitions, driver_level=args.driver_level,
                                  progress=lambda p: ticks.append((p.queue, time.perf_counter() - begin)))
            wall = time.perf_counter() - begin
            per_level, per_state, n = _fit(ticks, args.driver_level)
            same = (local.result, local.distinct_states, local.states_generated, local.depth) == \
                (spark.result, spark.distinct_states, spark.states_generated, spark.depth)
            print(json.dumps({
                "model": name, "preset": preset, "distinct_states": local.distinct_states, "depth": local.depth,
                "same_result": same, "local_workers": args.workers, "master": session.sparkContext.master,
                "local_seconds": round(local.seconds, 2), "spark_seconds": round(wall, 2),
                "local_states_per_second": round(local.states_per_second), "spark_states_per_second":
                    round(spark.distinct_states / wall) if wall else None,
                "spark_over_local_time": round(wall / local.seconds, 2) if local.seconds else None,
                "partitions": parts, "levels_on_spark": n, "spark_seconds_per_level": per_level,
                "empty_level_seconds": floor,
                "spark_ms_per_state": per_state, "local_ms_per_state":
                    round(1000 * local.seconds / local.distinct_states, 4) if local.distinct_states else None,
            }), flush=True)
    finally:
        session.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
