"""Benchmark `kcheck conform --model kraft`: seeded swarm walks driven on the real KafkaRaftClient
(jars through JPype); prints one JSON object with the steps per second.

    python bench/bench_conform.py                               # 100 walks of depth 30, every preset `kcheck conform` drives
    python bench/bench_conform.py --walks 20 --preset elections # one preset
    python bench/bench_conform.py --kafka-classpath ../shared/kafka

The class path is --kafka-classpath or env KCHECK_KAFKA_CLASSPATH. `seconds` is the walks' wall
time after the JVM started (`jvm_seconds`); `steps_per_second` counts model steps driven and
compared, `skipped` the draws the real code could not take.
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

from checker.config import ConfigError, load_config  # noqa: E402
from checker.conform import engine  # noqa: E402
from checker.conform.jvm import start_jvm  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kafka-classpath")
    parser.add_argument("--walks", type=int, default=100)
    parser.add_argument("--depth", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--preset", action="append", default=[])
    args = parser.parse_args()
    try:
        t0 = time.monotonic()
        start_jvm(args.kafka_classpath)
        jvm_seconds = time.monotonic() - t0
        from checker.conform.kraft import PRESETS, KraftAdapter, default_variant

        variant = default_variant()
        presets = args.preset or list(PRESETS)
        models = [(p, load_config(model="kraft", variant=variant, preset=p).build()) for p in presets]
    except ConfigError as e:
        print(f"bench_conform: error: {e}", file=sys.stderr)
        return 2
    report = engine.Report("kraft", variant, presets, args.seed, args.depth, True)
    report.action_kinds = tuple(models[0][1].action_kinds)
    engine.run_walks(models, KraftAdapter, args.seed, args.walks, args.depth, True, report)
    print(json.dumps({
        "model": "kraft", "variant": variant, "presets": presets, "walks": report.behaviours, "depth": args.depth,
        "seed": args.seed, "steps": report.steps, "seconds": round(report.seconds, 2),
        "steps_per_second": round(report.steps_per_second, 1), "jvm_seconds": round(jvm_seconds, 2),
        "skipped": sum(report.skipped.values()), "agree": report.first is None,
    }))
    return 0 if report.first is None else 1


if __name__ == "__main__":
    sys.exit(main())
