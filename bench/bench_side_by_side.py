"""kcheck against TLC on replication and on KRaft (Raft), and the gate's wall time: one table.

    python bench/bench_side_by_side.py                  # both rows; a TLC half is skipped unless configured
    python bench/bench_side_by_side.py --gate           # plus `kcheck gate --jobs 2`'s wall time
    python bench/bench_side_by_side.py --json           # one JSON object instead of the table

TLC and the TLA+ specs are never fetched or bundled; give them as environment variables:
- `KCHECK_TLC`: a TLC launcher (`tlc WORKERS SPEC.tla CFG`) or a `tla2tools.jar`, as in bench/bench_tlc.py;
- `KCHECK_TLC_SPECS`: hachikuji/kafka-specification's modules (replication: `Kip320`, bench/bench_tlc.py's row);
- `KCHECK_TLC_RAFT_SPECS`: the folder of Vanlightly/raft-tlaplus's `specifications/pull-raft` (its
  `KRaft.tla`, Kafka's KRaft reverse-engineered as a pull-based Raft, with its `KRaft.cfg`: three
  servers, one value, two elections, no restarts, symmetry over the servers), run on its own
  configuration with deadlock checking off (the bounded spec stops). That configuration runs
  for more than the hour: `--raft-timeout SECONDS` stops it and counts the distinct states of its
  last progress line (the row says "stopped"); `--raft-max-elections 1` ends in seconds (1,759 states).

Every run is one worker; CPU seconds are user + system time (kcheck's from this process, TLC's
from its child process). kcheck runs as this interpreter has it (compiled when installed so, see
`compiled_modules`). The kcheck side of the Raft row is the `kraft` model's `--raft-preset`
(default `elections`: three voters, two epochs, one record, no faults). The two sides are not the same
state machine (kcheck's models have more mechanisms); the ratio compares checkers on comparable work.
"""
from __future__ import annotations

import argparse
import json
import re
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import bench_tlc  # noqa: E402
from checker.search.run import explore  # noqa: E402
from checker.config import load_config  # noqa: E402
from model import compiled  # noqa: E402

DEPTH = re.compile(r"depth of the complete state graph search is (\d+)")


def kcheck_row(model: str, preset: str) -> dict[str, Any]:
    m = load_config(model=model, preset=preset).build()
    before, t0 = bench_tlc.cpu(resource.RUSAGE_SELF), time.monotonic()
    r = explore(m, workers=1)
    seconds, cpu_seconds = time.monotonic() - t0, bench_tlc.cpu(resource.RUSAGE_SELF) - before
    return {"model": model, "preset": preset, "compiled_modules": len(compiled.in_use()), "result": r.result,
            "distinct_states": r.distinct_states, "depth": r.depth, "seconds": round(seconds, 2),
            "cpu_seconds": round(cpu_seconds, 2),
            "distinct_states_per_cpu_second": round(r.distinct_states / cpu_seconds, 1) if cpu_seconds else 0.0}


def tlc_raft(timeout: float, max_elections: int | None = None) -> dict[str, Any]:
    found_tlc = bench_tlc.tlc_and_specs("KCHECK_TLC_RAFT_SPECS", ["KRaft.tla", "KRaft.cfg"],
                                        "Vanlightly/raft-tlaplus's specifications/pull-raft")
    if isinstance(found_tlc, dict):
        return found_tlc
    tlc, source = found_tlc
    with bench_tlc.spec_copy(source, "kcheck-tlc-raft-") as work:
        return _run_kraft_tla(timeout, max_elections, tlc, source, work)


def _run_kraft_tla(timeout: float, max_elections: int | None, tlc: str, source: Path, work: Path) -> dict[str, Any]:
    cfg = (source / "KRaft.cfg").read_text()
    if max_elections is not None:
        cfg = re.sub(r"MaxElections\s*=\s*\d+", f"MaxElections = {max_elections}", cfg)
    (work / "bench.cfg").write_text(cfg + "\nCHECK_DEADLOCK FALSE\n")
    before, t0 = bench_tlc.cpu(resource.RUSAGE_CHILDREN), time.monotonic()
    proc = subprocess.Popen(bench_tlc.tlc_command(tlc, "KRaft.tla", "bench.cfg", work), cwd=work,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
        stopped = False
    except subprocess.TimeoutExpired:  # stopped: its last progress line counts, marked incomplete
        proc.kill()
        stdout, stderr = proc.communicate()
        stopped = True
    seconds, cpu_seconds = time.monotonic() - t0, bench_tlc.cpu(resource.RUSAGE_CHILDREN) - before
    found = bench_tlc.DISTINCT.findall(stdout)
    if not found or (proc.returncode != 0 and not stopped):
        tail = (stdout + stderr).strip().splitlines()[-5:]
        return {"error": f"TLC exit {proc.returncode}", "output": tail}
    distinct = int(found[-1].replace(",", ""))
    depth = DEPTH.findall(stdout)
    elections = re.search(r"MaxElections\s*=\s*(\d+)", cfg)
    return {"spec": f"KRaft (Vanlightly/raft-tlaplus pull-raft, MaxElections {elections.group(1) if elections else '?'})",
            "distinct_states": distinct, "incomplete": stopped,
            "depth": int(depth[-1]) if depth else None, "seconds": round(seconds, 2),
            "cpu_seconds": round(cpu_seconds, 2),
            "distinct_states_per_cpu_second": round(distinct / cpu_seconds, 1) if cpu_seconds else 0.0}


def gate_wall_time(jobs: int) -> dict[str, Any]:
    kcheck = Path(sys.executable).parent / "kcheck"
    command = [str(kcheck)] if kcheck.exists() else [sys.executable, "-c", "import sys; from checker.cli import main; sys.exit(main())"]
    t0 = time.monotonic()
    done = subprocess.run(command + ["gate", "--jobs", str(jobs), "--quiet"], cwd=ROOT, capture_output=True, text=True)
    return {"jobs": jobs, "exit": done.returncode, "seconds": round(time.monotonic() - t0, 1)}


def ratio(a: dict[str, Any], b: dict[str, Any]) -> float | None:
    x, y = a.get("distinct_states_per_cpu_second"), b.get("distinct_states_per_cpu_second")
    return round(x / y, 2) if x and y else None


def table(out: dict[str, Any]) -> str:
    lines = ["| checker | work | distinct states | CPU s | distinct states / CPU s | kcheck / TLC |",
             "|---|---|---|---|---|---|"]
    for name, row in out["rows"].items():
        k = row["kcheck"]
        kind = "compiled" if k["compiled_modules"] else "pure Python"
        lines.append(f"| kcheck, {kind} | {k['model']} `{k['preset']}` | {k['distinct_states']:,} | {k['cpu_seconds']} "
                     f"| {k['distinct_states_per_cpu_second']:,.0f} | {row['ratio'] if row['ratio'] else '-'} |")
        t = row["tlc"]
        if "distinct_states" in t:
            seen = f"{t['distinct_states']:,}" + (" (stopped)" if t.get("incomplete") else "")
            lines.append(f"| TLC | {t['spec']} | {seen} | {t['cpu_seconds']} "
                         f"| {t['distinct_states_per_cpu_second']:,.0f} | |")
        else:
            lines.append(f"| TLC | {name} | - | - | - | {t.get('skipped') or t.get('error')} |")
    if "gate" in out:
        g = out["gate"]
        lines.append("")
        lines.append(f"`kcheck gate --jobs {g['jobs']}`: {g['seconds']} s wall time (exit {g['exit']})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", default="one-crash", help="kcheck's replication preset (default one-crash)")
    ap.add_argument("--raft-preset", default="elections", help="kcheck's kraft preset (default elections)")
    ap.add_argument("--timeout", type=float, default=3600.0, help="each TLC run's time limit in seconds")
    ap.add_argument("--raft-max-elections", type=int, help="TLC's MaxElections for KRaft.tla (default: its KRaft.cfg's, 2)")
    ap.add_argument("--raft-timeout", type=float,
                    help="stop TLC's KRaft run after SECONDS and count the distinct states of its last progress"
                         " line (marked incomplete): with its KRaft.cfg it does not end within the hour")
    ap.add_argument("--gate", action="store_true", help="also time `kcheck gate --jobs N` (wall clock)")
    ap.add_argument("--jobs", type=int, default=2, help="the gate's jobs (default 2)")
    ap.add_argument("--json", action="store_true", help="one JSON object instead of the table")
    args = ap.parse_args(argv)
    tlc_args = argparse.Namespace(spec="Kip320", replicas=3, log_size=2, max_records=2, max_leader_epoch=2,
                                  timeout=args.timeout)
    rows: dict[str, Any] = {}
    rows["replication"] = {"kcheck": kcheck_row("replication", args.preset), "tlc": bench_tlc.run_tlc(tlc_args)}
    rows["raft"] = {"kcheck": kcheck_row("kraft", args.raft_preset), "tlc": tlc_raft(args.raft_timeout or args.timeout, args.raft_max_elections)}
    for row in rows.values():
        row["ratio"] = ratio(row["kcheck"], row["tlc"])
    out: dict[str, Any] = {"rows": rows}
    if args.gate:
        out["gate"] = gate_wall_time(args.jobs)
    print(json.dumps(out, indent=1) if args.json else table(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
