"""Benchmark the liveness pass against the safety pass of the same configuration: prints one
JSON object.

    python bench/bench_liveness.py                         # kraft, preset default
    python bench/bench_liveness.py --model replication     # any model with temporal properties
    python bench/bench_liveness.py --preset isolated-leader --variant no-check-quorum

Each pass runs in its own child process, one after the other (so each one's peak resident memory
is its own), both on one core: the safety pass as `kcheck check --no-liveness --workers 1` does
it, the liveness pass as `kcheck check` runs it after a safety pass that ends ok. `ratio_seconds`
is the liveness pass's wall time over the safety pass's, `ratio_memory` the same for peak memory,
`bytes_per_edge` the graph's own arrays and index over its edges, `peak_bytes_per_edge` the
liveness process's peak resident memory over the edges.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import resource
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from checker.config import ConfigError, load_config  # noqa: E402


def _peak_bytes() -> int:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss if sys.platform == "darwin" else rss * 1024


def _safety(args: argparse.Namespace, out: Any) -> None:
    from checker.search.run import explore

    model = load_config(model=args.model, variant=args.variant, preset=args.preset, overrides=args.overrides).build()
    start = time.perf_counter()
    r = explore(model)
    out.send({"result": r.result, "distinct_states": r.distinct_states, "depth": r.depth,
              "seconds": round(time.perf_counter() - start, 2), "peak_memory_mb": round(_peak_bytes() / 2**20, 1)})


def _liveness(args: argparse.Namespace, out: Any) -> None:
    from checker.search.liveness import check_liveness

    model = load_config(model=args.model, variant=args.variant, preset=args.preset, overrides=args.overrides).build()
    start = time.perf_counter()
    live = check_liveness(model)
    seconds = time.perf_counter() - start
    peak = _peak_bytes()
    out.send({"result": live.result, "states": live.states, "edges": live.edges, "depth": live.depth,
              "graph_seconds": round(live.graph_seconds, 2), "seconds": round(seconds, 2),
              "peak_memory_mb": round(peak / 2**20, 1),
              "bytes_per_edge": round(live.graph_bytes / live.edges, 1) if live.edges else None,
              "peak_bytes_per_edge": round(peak / live.edges, 1) if live.edges else None,
              "properties": {o.name: {"result": o.result, "seconds": round(o.seconds, 2), "fair_sets": o.fair_sets,
                                      "cut": o.cut} for o in live.outcomes}})


def _run(target: Any, args: argparse.Namespace) -> dict[str, Any]:
    receive, send = multiprocessing.Pipe(duplex=False)
    child = multiprocessing.get_context("fork").Process(target=target, args=(args, send))
    child.start()
    result = receive.recv()
    child.join()
    return result  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="kraft")
    parser.add_argument("--preset", default="default")
    parser.add_argument("--variant")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args(argv)
    try:
        rc = load_config(model=args.model, variant=args.variant, preset=args.preset, overrides=args.overrides)
    except ConfigError as e:
        print(f"bench_liveness: error: {e}", file=sys.stderr)
        return 2
    safety = _run(_safety, args)
    live = _run(_liveness, args)
    print(json.dumps({
        "model": rc.model, "preset": rc.preset, "variant": rc.variant, "config": dict(rc.config),
        "safety": safety, "liveness": live,
        "ratio_seconds": round(live["seconds"] / safety["seconds"], 2) if safety["seconds"] else None,
        "ratio_memory": round(live["peak_memory_mb"] / safety["peak_memory_mb"], 2),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
