"""Benchmark the kraft model under the exhaustive checker: prints one JSON object.

    python bench/bench_kraft.py                         # Kafka 4.1, preset default
    python bench/bench_kraft.py --preset smoke          # a few seconds
    python bench/bench_kraft.py --variant commit-by-count --preset figure8

Figures: distinct states, states generated, depth, seconds, distinct states/s and peak resident
memory of the process (ru_maxrss; tracemalloc would slow the search several times).
"""
from __future__ import annotations

import argparse
import json
import resource
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from checker.search.run import explore  # noqa: E402
from checker.config import ConfigError, load_config  # noqa: E402


def peak_memory_mb() -> float:
    """Peak resident set size of this process (KiB on Linux, bytes on macOS)."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(rss / (1024 * 1024 if sys.platform == "darwin" else 1024), 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="default")
    parser.add_argument("--variant")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--max-states", type=int)
    args = parser.parse_args(argv)
    try:
        rc = load_config(model="kraft", variant=args.variant, preset=args.preset, overrides=args.overrides)
        model = rc.build()
    except ConfigError as e:
        print(f"bench_kraft: error: {e}", file=sys.stderr)
        return 2
    r = explore(model, max_states=args.max_states)
    out: dict[str, Any] = {
        "model": rc.model,
        "preset": rc.preset,
        "variant": rc.variant,
        "config": dict(rc.config),
        "result": r.result,
        "distinct_states": r.distinct_states,
        "states_generated": r.states_generated,
        "depth": r.depth,
        "seconds": round(r.seconds, 3),
        "states_per_second": round(r.states_per_second, 1),
        "generated_per_second": round(r.states_generated / r.seconds, 1) if r.seconds > 0 else 0.0,
        "peak_memory_mb": peak_memory_mb(),
        "unreached": r.unreached,
        "never_enabled": r.never_enabled,
    }
    if r.violation is not None:
        out["violation"] = {"invariant": r.violation["invariant"], "length": len(r.violation["trace"]) - 1}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
