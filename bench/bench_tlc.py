"""kcheck against TLC, distinct states per CPU-second, in one process tree: prints one JSON object.

    python bench/bench_tlc.py                                   # kcheck's figures; TLC when configured
    KCHECK_TLC=/opt/tlc/tlc KCHECK_TLC_SPECS=~/kafka-specification python bench/bench_tlc.py
    python bench/bench_tlc.py --spec Kip320 --replicas 3 --max-leader-epoch 2 --preset one-crash

TLC is never fetched or bundled. Give it with two environment variables:
- `KCHECK_TLC`: a TLC launcher (`tlc WORKERS SPEC.tla CFG`, as ../tools/build-tlc.sh builds) or a
  `tla2tools.jar` (run with `java -cp JAR tlc2.TLC`);
- `KCHECK_TLC_SPECS`: a folder holding hachikuji/kafka-specification's modules (the comparable
  work: Kafka replication with ISR, HW and leader epochs, one partition, in TLA+).
Without them the TLC half is skipped with a message and kcheck's own figures are still printed.

The script copies the spec's modules into a temporary folder, writes a TLC configuration there
(the constants given and the spec's ISR invariants), runs TLC on one worker as a child process and
reads its "distinct states found" line. CPU seconds are user + system time: the child's from
`resource.getrusage(RUSAGE_CHILDREN)`, kcheck's (run in this process, one worker) from
`RUSAGE_SELF`. `ratio` is kcheck's distinct states per CPU-second over TLC's. The two models are
not the same state machine: kcheck's replication model has more mechanisms (KRaft controller,
AlterPartition, ELR, fencing, faults), so the ratio compares checkers on comparable work, not
on the same states.

kcheck runs as installed: the models compiled (setup.py, model/compiled.py). Unless
`--no-python-baseline`, the same kcheck run is repeated as pure Python in a child process
(`KCHECK_PURE_PYTHON=1`): `kcheck_python`, and `compiled_speedup` is the ratio of the two rates.

On a shared or virtual machine one run's CPU seconds vary from run to run, by up to a third on
the 2-core VM (docs/performance.md). `--repeat N` makes N rounds
of the runs, each round kcheck, then pure Python, then TLC; each side's figures are then those of
its median run (the lower median for even N), its rates of every round are listed under
`rates`, `ratio` is the median run's over TLC's median run, and `ratios` the ratio of each
round's two runs.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Sequence

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from checker.search.run import explore  # noqa: E402
from checker.config import ConfigError, load_config  # noqa: E402
from model import compiled  # noqa: E402

DISTINCT = re.compile(r"([\d,]+) distinct states found")
# The ISR invariants the specs state as THEOREM Spec => []Inv. Left out: TypeOk, which a current
# TLC cannot evaluate (it compares an empty log slot, -1, with a record), and LeaderInIsr, which
# the specs' own Init breaks (no leader yet). The bounded specs stop, so deadlock is not an error.
INVARIANTS = ("WeakIsr", "StrongIsr")


def cpu(who: int) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def tlc_command(tlc: str, spec: str, cfg: str, work: Path) -> list[str]:
    if tlc.endswith(".jar"):
        return ["java", "-XX:+UseParallelGC", "-cp", tlc, "tlc2.TLC", "-workers", "1", "-config", cfg,
                "-metadir", str(work / "meta"), spec]
    return [tlc, "1", spec, cfg]


def tlc_and_specs(specs_env: str, required: Sequence[str], hint: str) -> tuple[str, Path] | dict[str, str]:
    """KCHECK_TLC and the spec folder named by `specs_env` holding the `required` files, or why the
    TLC half is skipped (nothing is fetched)."""
    tlc, specs = os.environ.get("KCHECK_TLC"), os.environ.get(specs_env)
    if not tlc or not specs:
        return {"skipped": f"set KCHECK_TLC (a TLC launcher or tla2tools.jar) and {specs_env} ({hint}) to compare with TLC"}
    source = Path(specs).expanduser()
    if not all((source / name).is_file() for name in required):
        return {"skipped": f"no {' and '.join(required)} in {specs_env}={specs}"}
    if not Path(tlc).exists():
        return {"skipped": f"KCHECK_TLC={tlc} does not exist"}
    return tlc, source


@contextmanager
def spec_copy(source: Path, prefix: str) -> Iterator[Path]:
    """A temporary folder holding the spec's modules (TLC writes its states next to them)."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        for module in source.glob("*.tla"):
            shutil.copy(module, work)
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_tlc(args: argparse.Namespace) -> dict[str, Any]:
    found_tlc = tlc_and_specs("KCHECK_TLC_SPECS", [f"{args.spec}.tla"], "hachikuji/kafka-specification's modules")
    if isinstance(found_tlc, dict):
        return found_tlc
    tlc, source = found_tlc
    with spec_copy(source, "kcheck-tlc-") as work:
        return _run_kip320(args, tlc, work)


def _run_kip320(args: argparse.Namespace, tlc: str, work: Path) -> dict[str, Any]:
    try:
        replicas = ", ".join(f"r{i}" for i in range(1, args.replicas + 1))
        invariants = "\n".join(f"    {name}" for name in INVARIANTS)
        (work / "bench.cfg").write_text(
            f"CONSTANTS\n    Replicas = {{{replicas}}}\n    LogSize = {args.log_size}\n"
            f"    MaxRecords = {args.max_records}\n    MaxLeaderEpoch = {args.max_leader_epoch}\n"
            f"INIT Init\nNEXT Next\nINVARIANTS\n{invariants}\nCHECK_DEADLOCK FALSE\n")
        before, t0 = cpu(resource.RUSAGE_CHILDREN), time.monotonic()
        done = subprocess.run(tlc_command(tlc, f"{args.spec}.tla", "bench.cfg", work), cwd=work,
                              capture_output=True, text=True, timeout=args.timeout)
        seconds, cpu_seconds = time.monotonic() - t0, cpu(resource.RUSAGE_CHILDREN) - before
        found = DISTINCT.findall(done.stdout)
        if not found:
            tail = (done.stdout + done.stderr).strip().splitlines()[-5:]
            return {"error": f"TLC exit {done.returncode}, no distinct-state count", "output": tail}
        distinct = int(found[-1].replace(",", ""))
        return {"spec": args.spec, "replicas": args.replicas, "log_size": args.log_size,
                "max_records": args.max_records, "max_leader_epoch": args.max_leader_epoch,
                "exit": done.returncode, "distinct_states": distinct, "seconds": round(seconds, 2),
                "cpu_seconds": round(cpu_seconds, 2),
                "distinct_states_per_cpu_second": round(distinct / cpu_seconds, 1) if cpu_seconds else 0.0}
    except subprocess.TimeoutExpired:
        return {"error": f"TLC ran past --timeout {args.timeout} s"}


def run_kcheck(args: argparse.Namespace) -> dict[str, Any]:
    rc = load_config(model="replication", preset=args.preset)
    model = rc.build()
    before, t0 = cpu(resource.RUSAGE_SELF), time.monotonic()
    r = explore(model, workers=1)
    seconds, cpu_seconds = time.monotonic() - t0, cpu(resource.RUSAGE_SELF) - before
    return {"model": "replication", "preset": args.preset, "compiled_modules": len(compiled.in_use()),
            "result": r.result, "distinct_states": r.distinct_states,
            "depth": r.depth, "seconds": round(seconds, 2), "cpu_seconds": round(cpu_seconds, 2),
            "distinct_states_per_cpu_second": round(r.distinct_states / cpu_seconds, 1) if cpu_seconds else 0.0}


def run_python_baseline(args: argparse.Namespace) -> dict[str, Any]:
    """The same kcheck run with every module as Python (no compiled model), in a child process."""
    done = subprocess.run([sys.executable, __file__, "--kcheck-only", "--preset", args.preset],
                          env={**os.environ, "KCHECK_PURE_PYTHON": "1"}, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spec", default="Kip320", help="the TLA+ module (default Kip320)")
    ap.add_argument("--replicas", type=int, default=3)
    ap.add_argument("--log-size", type=int, default=2)
    ap.add_argument("--max-records", type=int, default=2)
    ap.add_argument("--max-leader-epoch", type=int, default=2)
    ap.add_argument("--preset", default="one-crash", help="kcheck's replication preset (default one-crash)")
    ap.add_argument("--timeout", type=float, default=3600.0, help="TLC's time limit in seconds")
    ap.add_argument("--no-python-baseline", action="store_true",
                    help="skip the second kcheck run as pure Python (KCHECK_PURE_PYTHON=1, a child process)")
    ap.add_argument("--repeat", type=int, default=1, metavar="N",
                    help="rounds of the runs; each side reports its median run (default 1)")
    ap.add_argument("--kcheck-only", action="store_true", help=argparse.SUPPRESS)  # the baseline child
    args = ap.parse_args(argv)
    if args.repeat < 1:
        print("bench_tlc: --repeat must be at least 1", file=sys.stderr)
        return 2
    try:
        kcheck = run_kcheck(args)
    except ConfigError as e:
        print(f"bench_tlc: {e}", file=sys.stderr)
        return 2
    if args.kcheck_only:
        print(json.dumps(kcheck))
        return 0
    runs: dict[str, list[dict[str, Any]]] = {"kcheck": [], "kcheck_python": [], "tlc": []}
    for r in range(args.repeat):
        runs["kcheck"].append(kcheck if r == 0 else run_kcheck(args))
        if not args.no_python_baseline:
            runs["kcheck_python"].append(run_python_baseline(args))
        runs["tlc"].append(run_tlc(args))
    out: dict[str, Any] = {side: median_run(rs) for side, rs in runs.items() if rs}
    if args.repeat > 1:
        for side, rs in runs.items():
            if rs and side in out and "distinct_states_per_cpu_second" in out[side]:
                out[side] = {**out[side], "rates": [x.get("distinct_states_per_cpu_second") for x in rs]}
    if "kcheck_python" in out:
        out["compiled_speedup"] = round(kcheck_rate(out["kcheck"]) / kcheck_rate(out["kcheck_python"]), 2)
    tlc = out["tlc"]
    if tlc.get("distinct_states_per_cpu_second"):
        out["ratio"] = round(kcheck_rate(out["kcheck"]) / tlc["distinct_states_per_cpu_second"], 2)
        if args.repeat > 1:
            out["ratios"] = [round(kcheck_rate(k) / t["distinct_states_per_cpu_second"], 2)
                             for k, t in zip(runs["kcheck"], runs["tlc"]) if t.get("distinct_states_per_cpu_second")]
    print(json.dumps(out))
    return 0


def kcheck_rate(run: dict[str, Any]) -> float:
    return float(run["distinct_states_per_cpu_second"])


def median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run of median rate (the lower median of an even count); a skipped or failed TLC run
    (no rate) is reported as the first one was."""
    rated = [r for r in runs if r.get("distinct_states_per_cpu_second")]
    if not rated:
        return runs[0]
    middle = statistics.median_low(r["distinct_states_per_cpu_second"] for r in rated)
    return next(r for r in rated if r["distinct_states_per_cpu_second"] == middle)


if __name__ == "__main__":
    sys.exit(main())
