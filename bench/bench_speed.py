"""A revision of kcheck against this checkout on the same search, in one command: prints one JSON object.

    python bench/bench_speed.py                                  # replication one-crash, baseline main
    python bench/bench_speed.py --preset smoke --baseline HEAD~3 --repeat 3
    python bench/bench_speed.py --preset default --python /opt/venv-compiled/bin/python
    python bench/bench_speed.py --model kraft --preset voter-race --rounds 7   # a gate row's round search
    python bench/bench_speed.py --workers 2                      # the multi-process search

The baseline's source is `git archive BASELINE` unpacked into a temporary folder; each side runs
the same search (`checker.search.run.explore`, `--workers` processes, default one, the model's
reduction on; or with `--rounds N` the round search, `checker.search.rounds.round_search`) in its
own child process, with `KCHECK_PURE_PYTHON=1` unless `--compiled` (then each side imports the
compiled modules that match its sources, as model/compiled.py allows: in practice only the side
that was installed). Sides alternate, `--repeat` times each; a side's figure is its fastest run.

Per side: `cpu_seconds` (the user + system time of the search alone, the child's and its
workers'), `distinct_per_cpu_second`, `bytes_per_state` (the child's peak RSS grown during the
search, over the distinct states: the states of a level held in memory, the visited set and the
link files' buffers; not the workers'). `ratio` is the new side's distinct states per CPU-second
over the baseline's. `same_states` checks that both sides found the same result, distinct
states, states generated, depth, digest (the sum of the fingerprints; none for the round search),
action counts and the levels where sometimes-properties were reached: a faster search that
explored something else is not a speed-up; the command fails (exit 1) when they differ.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from checker.config import load_config
from checker.search.rounds import round_search
from checker.search.run import explore
rc = load_config(model=sys.argv[2], preset=sys.argv[3], variant=sys.argv[4] or None)
rounds, workers = int(sys.argv[5]), int(sys.argv[6])
m = rc.build()
def rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
before_rss = rss()
def cpu_now():  # this process and its reaped children (the workers of a parallel search)
    return sum(u.ru_utime + u.ru_stime for u in map(resource.getrusage, (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)))
t0 = cpu_now()
r = round_search(m, rounds) if rounds else explore(m, workers=workers)
cpu = cpu_now() - t0
print(json.dumps({"result": r.result, "distinct_states": r.distinct_states, "states_generated": r.states_generated,
                  "depth": r.depth, "digest": r.digest, "action_counts": r.action_counts, "reached": r.reached,
                  "cpu_seconds": round(cpu, 3),
                  "grown_bytes": rss() - before_rss}))
"""

SAME = ("result", "distinct_states", "states_generated", "depth", "digest", "action_counts", "reached")


def unpack(rev: str, dest: Path) -> None:
    """The baseline's tracked files at `rev` into `dest` (no work tree of it is needed)."""
    archive = dest / "src.tar"
    subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", "-o", str(archive), rev], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(dest / "src", filter="data")
    archive.unlink()


def run_side(python: str, source: Path, args: argparse.Namespace) -> dict[str, Any]:
    env = dict(os.environ)
    if not args.compiled:
        env["KCHECK_PURE_PYTHON"] = "1"
    env["PYTHONPATH"] = str(source)
    out = subprocess.run([python, "-c", CHILD, str(source), args.model, args.preset, args.variant or "",
                          str(args.rounds or 0), str(args.workers)],
                         cwd=source, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"bench_speed: the run in {source} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    best = min(runs, key=lambda r: r["cpu_seconds"])
    n = best["distinct_states"]
    return {**{k: best[k] for k in SAME}, "cpu_seconds": best["cpu_seconds"],
            "cpu_seconds_all": [r["cpu_seconds"] for r in runs],
            "distinct_per_cpu_second": round(n / best["cpu_seconds"], 1) if best["cpu_seconds"] else 0.0,
            "bytes_per_state": round(min(r["grown_bytes"] for r in runs) / n, 1) if n else 0.0}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="main", help="a git revision of this repository (default main)")
    parser.add_argument("--model", default="replication")
    parser.add_argument("--preset", default="one-crash")
    parser.add_argument("--variant")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each side, alternating (the fastest counts)")
    parser.add_argument("--python", default=sys.executable, help="the interpreter both sides run on")
    parser.add_argument("--compiled", action="store_true", help="do not set KCHECK_PURE_PYTHON=1")
    parser.add_argument("--workers", type=int, default=1, help="worker processes of the BFS (their CPU time counts too)")
    parser.add_argument("--rounds", type=int, help="the round search to this many rounds (a gate row's `rounds`) instead of BFS")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="kcheck-bench-speed-") as tmp:
        unpack(args.baseline, Path(tmp))
        sides = {"baseline": Path(tmp) / "src", "new": ROOT}
        runs: dict[str, list[dict[str, Any]]] = {k: [] for k in sides}
        for _ in range(max(args.repeat, 1)):
            for name, source in sides.items():
                runs[name].append(run_side(args.python, source, args))
    base, new = summary(runs["baseline"]), summary(runs["new"])
    same = all(base[k] == new[k] for k in SAME)
    out = {"model": args.model, "preset": args.preset, "variant": args.variant or "kafka-4.1", "rounds": args.rounds, "workers": args.workers,
           "baseline_rev": args.baseline, "pure_python": not args.compiled, "baseline": base, "new": new,
           "ratio": round(new["distinct_per_cpu_second"] / base["distinct_per_cpu_second"], 3)
           if base["distinct_per_cpu_second"] else None,
           "bytes_ratio": round(new["bytes_per_state"] / base["bytes_per_state"], 3) if base["bytes_per_state"] else None,
           "same_states": same}
    print(json.dumps(out, indent=2))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
