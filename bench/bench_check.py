"""Benchmark the exhaustive checker: prints one JSON object.

    python bench/bench_check.py                                  # replication, preset default
    python bench/bench_check.py --preset smoke --baseline toy    # plus the toy model, for a ratio
    python bench/bench_check.py --model toy --set k=50           # any registered model
    python bench/bench_check.py --workers 2                      # 2 processes, against 1 process
    python bench/bench_check.py --workers 2 --no-one-process     # 2 processes only
    python bench/bench_check.py --memory-states 100000 --run-dir /tmp/run   # a queue on disk, checkpoints
    python bench/bench_check.py --set brokers=4 --workers 2 --no-one-process --timeout 900   # as far as 15 min go
    python bench/bench_check.py --set brokers=4 --resume /tmp/run   # go on with a run this script started

A progress line goes to stderr every --progress seconds (default 60). Ctrl-C, SIGTERM and
--timeout stop the search and print the figures it reached (`interrupted`
true); with --run-dir the run goes on from its last checkpoint with --resume and the same options.

Memory: `peak_memory_mb` is this process's peak RSS (the coordinator's, with workers),
`peak_memory_mb_per_worker` the largest worker's; `bytes_per_state` is their sum over every
process (coordinator + workers x largest worker) divided by the distinct states, and
`visited_bytes_per_state` the visited set's own table over the distinct states.

`--baseline toy` also explores the toy model of tests/toymodel.py with k = --toy-k (default
300, 90,601 states; built directly, so k may exceed the toy's config range) in the same process,
and reports `ratio` = this model's distinct states/s over the toy's.
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

import model as registry  # noqa: E402
from checker.search.common import Result  # noqa: E402
from checker.search.run import explore
from checker.cli.check import MEMORY_STATES  # noqa: E402
from checker.cli.options import progress_printer
from checker.config import ConfigError, load_config  # noqa: E402

TOY_MODULE = "tests.toymodel"


def peak_memory_mb() -> float:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(rss / (1024 * 1024 if sys.platform == "darwin" else 1024), 1)  # bytes on macOS, KiB on Linux


def peak_child_memory_mb() -> float:
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return round(rss / (1024 * 1024 if sys.platform == "darwin" else 1024), 1)


def figures(r: Result) -> dict[str, Any]:
    return {
        "result": r.result,
        "interrupted": r.interrupted,
        "queue": r.queue,
        "distinct_states": r.distinct_states,
        "states_generated": r.states_generated,
        "depth": r.depth,
        "seconds": round(r.seconds, 3),
        "distinct_states_per_second": round(r.states_per_second, 1),
        "generated_per_second": round(r.states_generated / r.seconds, 1) if r.seconds > 0 else 0.0,
    }


def toy_baseline(k: int) -> dict[str, Any]:
    from tests.toymodel import ToyModel

    r = explore(ToyModel({"k": k, "limit": 10**9}))
    return {"model": "toy", "k": k, **figures(r)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="replication")
    parser.add_argument("--preset", default="default")
    parser.add_argument("--variant")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--max-states", type=int)
    parser.add_argument("--baseline", choices=["toy"], help="also run the toy model and report the ratio")
    parser.add_argument("--toy-k", type=int, default=300, help="the toy baseline's k (default 300)")
    parser.add_argument("--workers", type=int, default=1,
                        help="processes for the main run (default 1); with N > 1 the run is repeated on"
                             " one process first and `speedup` is the ratio of their states/s")
    parser.add_argument("--no-one-process", dest="one_process", action="store_false",
                        help="with --workers N > 1: skip the one-process run")
    parser.add_argument("--memory-states", type=int, default=MEMORY_STATES,
                        help=f"states of a level each worker keeps in memory, the rest on disk (default {MEMORY_STATES:,},"
                             " as `kcheck check`)")
    runs = parser.add_mutually_exclusive_group()
    runs.add_argument("--run-dir", help="keep the run's files there (a new directory), with checkpoints")
    runs.add_argument("--resume", metavar="DIR",
                      help="go on with a run this script started with --run-dir DIR (give the same options)")
    parser.add_argument("--checkpoint-every", type=float, default=60.0)
    parser.add_argument("--progress", type=float, default=60.0, metavar="SECONDS",
                        help="a progress line on stderr every SECONDS of the main run, as `kcheck check` prints"
                             " (default 60; 0: none)")
    parser.add_argument("--timeout", type=float, help="stop the search after SECONDS (result incomplete, interrupted)")
    args = parser.parse_args(argv)

    registry.MODELS.setdefault("toy", TOY_MODULE)
    try:
        rc = load_config(model=args.model, variant=args.variant, preset=args.preset, overrides=args.overrides)
        model = rc.build()
    except ConfigError as e:
        print(f"bench_check: error: {e}", file=sys.stderr)
        return 2

    import signal

    from checker import stop

    def interrupt(signum: int, frame: Any) -> None:
        stop.request(KeyboardInterrupt)

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, interrupt)
    if args.timeout:
        signal.signal(signal.SIGALRM, interrupt)
        signal.setitimer(signal.ITIMER_REAL, args.timeout)
    baseline = toy_baseline(args.toy_k) if args.baseline == "toy" else None
    one = explore(model, max_states=args.max_states) if args.workers > 1 and args.one_process else None
    try:
        r = explore(model, max_states=args.max_states, workers=args.workers, keep=args.memory_states,
                    progress=progress_printer(sys.stderr) if args.progress > 0 else None,
                    progress_every=args.progress or 5.0,
                    run_dir=args.run_dir or args.resume, resume=bool(args.resume),
                    checkpoint_every=args.checkpoint_every)
    except (ValueError, ConfigError) as e:  # e.g. a resume that does not match the run in the directory
        print(f"bench_check: error: {e}", file=sys.stderr)
        return 2
    out: dict[str, Any] = {"model": rc.model, "preset": rc.preset, "variant": rc.variant,
                           "config": dict(rc.config), "workers": r.workers, **figures(r),
                           "peak_memory_mb": peak_memory_mb()}
    total_mb = out["peak_memory_mb"]
    if args.workers > 1:
        out["peak_memory_mb_per_worker"] = peak_child_memory_mb()
        total_mb += r.workers * out["peak_memory_mb_per_worker"]
    if r.distinct_states:
        out["bytes_per_state"] = round(total_mb * 1024 * 1024 / r.distinct_states, 1)
        out["visited_bytes_per_state"] = round(r.visited_bytes / r.distinct_states, 2)
    if one is not None:
        out["one_process"] = figures(one)
        rate = one.states_per_second
        out["speedup"] = round(r.states_per_second / rate, 3) if rate else None
    if baseline is not None:
        out["baseline"] = baseline
        toy_rate = baseline["distinct_states_per_second"]
        out["ratio"] = round(out["distinct_states_per_second"] / toy_rate, 4) if toy_rate else None
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
