"""Does `kcheck simulate` find every catalogued bug that BFS finds, and at what cost? For each bug
row of the gate file (a variant, its preset and its invariant), runs BFS (`kcheck check`, for the
shortest counterexample and the states it explored) and then one simulate search, and prints one
JSON line per row and a Markdown table at the end.

    python bench/bench_simulate_catalogue.py [--only NAME]... [--gate FILE] [--seed S]
                                             [-- SIMULATE OPTIONS...]

The simulate options default to the novelty search documented in docs/simulate.md:
`--guided --cells state --novelty --walks 5000 --corpus 5000 --rounds 300 --depth 30 --swarm
--distinct none`. Each run is a child process (`python -m checker.cli`), one at a time, so the
seconds are those of one core and the peak memory that of the simulate process; a row is "found" when simulate breaks the row's invariant, and
`within_2x` says whether the shrunk counterexample is at most twice BFS's shortest.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from checker.gate.gate import default_gate_file, load_gate, select  # noqa: E402

NOVELTY = ["--guided", "--cells", "state", "--novelty", "--walks", "5000", "--corpus", "5000", "--rounds", "300",
           "--depth", "30", "--swarm", "--distinct", "none"]


CHILD = ("import resource, sys; from checker.cli import main; code = main(sys.argv[1:]); "
         "print('peak_rss_kib', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr); sys.exit(code)")


def _kcheck(argv: list[str]) -> tuple[dict, float, float]:
    """(the JSON report, seconds, peak memory in MiB) of one `kcheck` run in a child process."""
    start = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", CHILD, *argv, "--json", "--quiet"], cwd=ROOT,
                       capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if p.returncode not in (0, 1):
        raise SystemExit(f"kcheck {' '.join(argv)}: exit {p.returncode}: {p.stderr.strip()}")
    rss = next((int(line.split()[1]) for line in p.stderr.splitlines() if line.startswith("peak_rss_kib ")), 0)
    return json.loads(p.stdout), seconds, rss / 1024


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gate", default=str(default_gate_file()))
    ap.add_argument("--only", action="append", default=[], metavar="NAME", help="a gate row (repeatable)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("simulate", nargs=argparse.REMAINDER, help="simulate options after --")
    args = ap.parse_args()
    options = [a for a in args.simulate if a != "--"] or NOVELTY
    rows = [r for r in select(load_gate(args.gate), args.only) if r.is_bug]
    results = []
    for row in rows:
        base = ["--model", row.model, "--variant", row.variant, "--preset", row.preset]
        if row.config_file:
            base.insert(0, row.config_file)
        for k, v in row.overrides:
            base += ["--set", f"{k}={json.dumps(v) if isinstance(v, bool) else v}"]
        for name in row.invariants:
            base += ["--invariant", name]
        bfs, bfs_seconds, _ = _kcheck(["check", *base])
        bfs_length = len(bfs["violation"]["trace"]) - 1 if bfs.get("violation") else None
        sim, sim_seconds, sim_mib = _kcheck(["simulate", *base, "--seed", str(args.seed), *options])
        v = next((v for v in sim["violations"] if v["invariant"] == row.expect), None)
        g = sim.get("guided_search") or {}
        out = {
            "row": row.name, "preset": row.config_label, "invariant": row.expect,
            "bfs_length": bfs_length, "bfs_states": bfs["distinct_states"], "bfs_seconds": round(bfs_seconds, 1),
            "found": v is not None, "round": g.get("violation_round"), "walks": sim["walks"],
            "states_kept": g.get("cells"), "seconds": round(sim_seconds, 1), "peak_mib": round(sim_mib),
            "length": v and v["length"], "shrunk": v and v["shrunk_length"], "shortest": bool(v and v["shortest"]),
            "within_2x": bool(v and bfs_length is not None and v["shrunk_length"] <= 2 * bfs_length),
        }
        results.append(out)
        print(json.dumps(out), flush=True)
    print()
    print("| row | preset | BFS: shortest, states | simulate: found (round, walks) | states kept | seconds | peak MiB | shrunk |")
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        found = f"round {r['round']}, {r['walks']:,} walks" if r["found"] else "**not found**"
        shrunk = "-" if not r["found"] else f"{r['shrunk']}" + (" (proven shortest)" if r["shortest"] else "")
        print(f"| {r['row']} | {r['preset']} | {r['bfs_length']}, {r['bfs_states']:,} | {found} | "
              f"{r['states_kept'] or 0:,} | {r['seconds']} | {r['peak_mib']:,} | {shrunk} |")
    found = sum(r["found"] and r["within_2x"] for r in results)
    print(f"\n{found} of {len(results)} found, each shrunk to at most twice BFS's shortest")
    return 0 if found == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
