"""The Spark search's memory split across executors: one JSON object with the one-process search's
peak memory, then the same search on a standalone cluster whose executors' Python memory is capped
below it, and the figures of both.

    python bench/bench_spark_memory.py                                   # the replication default
    python bench/bench_spark_memory.py --preset one-crash --pyspark-memory 256m

It runs, each as a child process from a temporary directory outside the repo, as a user runs them:

1. `kcheck check --workers 1 --json` (the local engine, one process): its counts and its peak
   resident memory (the kernel's ru_maxrss of the process, as `/usr/bin/time -v` reports it);
2. a Spark standalone Master and `--executors` Workers on 127.0.0.1 (1 core, 1 GiB each, as
   tests/test_spark_cluster.py starts them), and on it `kcheck check --engine spark --master URL
   --conf spark.executor.pyspark.memory=CAP`: each executor's Python workers then run under an
   address-space limit of CAP (PySpark's worker sets RLIMIT_AS), past which an allocation fails and
   the job with it. Its figures:
   - seconds (the run's own, and the wall time of the command with its Spark session);
   - peak memory per executor: every 0.2 s the bench reads /proc of the processes whose working
     directory is in that worker's work directory (the executor's JVM, PySpark's daemon and its
     Python workers): the largest resident peak (VmHWM) of one Python process, and the largest
     sum of the executor's Python processes' resident memory in one reading; and Spark's own
     reading of the same, the executor metric ProcessTreePythonRSSMemory, from the event log;
   - the shuffle: bytes written, from the tasks' metrics in Spark's event log, per successor
     and per new state of the levels Spark expanded (from `--out`'s levels table; the levels of
     at most `--driver-level` states run on the driver and shuffle nothing);
   - whether the cap was in force: the executors' stderr says "Setting mem limits to ...".
The counts (result, distinct states, states generated, depth, action counts) must be the local
engine's.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.conftest import standalone_cluster  # noqa: E402

MB = 1 << 20


def _kcheck(*args: str) -> list[str]:
    """`kcheck check ARGS` with this interpreter (whose environment has kcheck installed)."""
    return [sys.executable, "-m", "checker.cli", "check", *args]


def _env() -> dict[str, str]:
    """A user's environment: no SPARK_LOCAL_IP or PYSPARK_PYTHON."""
    return {k: v for k, v in os.environ.items() if k not in ("SPARK_LOCAL_IP", "PYSPARK_PYTHON")}


def _status(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM of a process, in bytes ({} once it is gone)."""
    out = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0]) * 1024
    except OSError:
        return {}
    return out


class Sampler(threading.Thread):
    """Reads every 0.2 s the memory of the processes working in each worker's work directory."""

    def __init__(self, workdirs: list[Path], driver: int | None = None) -> None:
        super().__init__(daemon=True)
        self.workdirs = workdirs
        self.driver = driver
        self.done = threading.Event()
        self.python_hwm = [0] * len(workdirs)  # the largest VmHWM of one Python process
        self.python_sum = [0] * len(workdirs)  # the largest sum of VmRSS of the Python processes at once
        self.jvm_hwm = [0] * len(workdirs)
        self.pythons_seen = [set() for _ in workdirs]
        self.driver_hwm = 0

    def _where(self, pid: str) -> int | None:
        try:
            cwd = Path(os.readlink(f"/proc/{pid}/cwd"))
        except OSError:
            return None
        for i, d in enumerate(self.workdirs):
            if cwd.is_relative_to(d):
                return i
        return None

    def sample(self) -> None:
        sums = [0] * len(self.workdirs)
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            i = self._where(proc.name)
            if i is None:
                continue
            try:
                exe = os.readlink(proc / "exe")
            except OSError:
                continue
            mem = _status(int(proc.name))
            if not mem:
                continue
            if "java" in Path(exe).name:
                self.jvm_hwm[i] = max(self.jvm_hwm[i], mem["VmHWM"])
            elif "python" in Path(exe).name:
                self.pythons_seen[i].add(int(proc.name))
                self.python_hwm[i] = max(self.python_hwm[i], mem["VmHWM"])
                sums[i] += mem["VmRSS"]
        for i, total in enumerate(sums):
            self.python_sum[i] = max(self.python_sum[i], total)
        if self.driver is not None:
            self.driver_hwm = max(self.driver_hwm, _status(self.driver).get("VmHWM", 0))

    def run(self) -> None:
        while not self.done.is_set():
            self.sample()
            self.done.wait(0.2)


def _event_log(folder: Path) -> dict:
    """Shuffle and executor-memory figures from the application's event log."""
    shuffle_bytes = tasks = spilled = 0
    python_rss: dict[str, int] = {}
    jobs = 0
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith(("appstatus", "."))):
        with open(path) as f:
            for line in f:
                event = json.loads(line)
                kind = event.get("Event")
                if kind == "SparkListenerTaskEnd":
                    metrics = event.get("Task Metrics") or {}
                    write = metrics.get("Shuffle Write Metrics") or {}
                    shuffle_bytes += write.get("Shuffle Bytes Written", 0)
                    spilled += metrics.get("Disk Bytes Spilled", 0)
                    tasks += 1
                elif kind == "SparkListenerStageExecutorMetrics":
                    executor = event["Executor ID"]
                    rss = (event.get("Executor Metrics") or {}).get("ProcessTreePythonRSSMemory", 0)
                    if executor != "driver":
                        python_rss[executor] = max(python_rss.get(executor, 0), rss)
                elif kind == "SparkListenerJobStart":
                    jobs += 1
    return {"shuffle_bytes": shuffle_bytes, "tasks": tasks, "jobs": jobs,
            "disk_bytes_spilled": spilled, "python_rss_by_spark": python_rss}


def _spark_levels(tables: Path, driver_level: int) -> dict:
    """From `--out`'s levels table: the levels Spark expanded (those whose frontier, the level
    before, had more than `driver_level` states), their new states, successors and seconds."""
    import pyarrow.parquet as pq

    rows = sorted(zip(*[pq.read_table(tables / "levels").column(c).to_pylist()
                        for c in ("level", "new_states", "generated", "seconds")]))
    frontier = {level: new for level, new, _, _ in rows}
    spark = [(level, new, gen, sec) for level, new, gen, sec in rows
             if level > 0 and frontier.get(level - 1, 0) > driver_level]
    return {"levels": len(spark), "all_levels": len(rows), "new_states": sum(r[1] for r in spark),
            "generated": sum(r[2] for r in spark), "seconds": round(sum(r[3] for r in spark), 1)}


def _cap_in_force(workdir: Path) -> list[str]:
    """The limits the executors' Python workers say they set, from the executors' stderr."""
    found = set()
    for stderr in workdir.rglob("stderr"):
        for line in stderr.read_text(errors="replace").splitlines():
            if line.startswith("Setting mem limits to"):
                found.add(line.strip())
    return sorted(found)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="replication")
    parser.add_argument("--preset", help="a preset of the model (default: its default configuration)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--executors", type=int, default=2, help="standalone Workers, one 1-core executor each")
    parser.add_argument("--pyspark-memory", default="512m",
                        help="spark.executor.pyspark.memory, each executor's Python memory cap (default 512m)")
    parser.add_argument("--partitions", type=int, help="--partitions of the Spark search (default its own)")
    parser.add_argument("--driver-level", type=int, default=5_000,
                        help="--driver-level of the Spark search (default 5,000, its own default)")
    parser.add_argument("--max-states", type=int, help="stop both searches at N distinct states")
    parser.add_argument("--no-local", action="store_true", help="skip the one-process search")
    args = parser.parse_args(argv)
    config = ["--model", args.model, *(["--preset", args.preset] if args.preset else []),
              *[x for kv in args.overrides for x in ("--set", kv)],
              *(["--max-states", str(args.max_states)] if args.max_states else []), "--json", "--no-liveness"]
    report: dict = {"model": args.model, "preset": args.preset or "default", "overrides": args.overrides,
                    "pyspark_memory": args.pyspark_memory, "executors": args.executors}
    with tempfile.TemporaryDirectory(prefix="kcheck-bench-memory-") as tmp:
        where = Path(tmp)
        local = None
        if not args.no_local:
            begin = time.perf_counter()
            child = subprocess.Popen(_kcheck(*config, "--workers", "1", "--quiet"), cwd=where, env=_env(),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            out, err = child.communicate()
            # The first child this process waited for: the largest peak of its children is its own.
            peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
            if child.returncode not in (0, 1, 3):
                print(err[-3000:], file=sys.stderr)
                return 1
            local = json.loads(out)
            report["local"] = {"result": local["result"], "distinct_states": local["distinct_states"],
                               "states_generated": local["states_generated"], "depth": local["depth"],
                               "seconds": round(local["seconds"], 1), "wall_seconds": round(time.perf_counter() - begin, 1),
                               "peak_rss_mb": round(peak / MB, 1)}
            print(json.dumps({"local": report["local"]}), file=sys.stderr, flush=True)
        cluster = where / "cluster"
        cluster.mkdir()
        events = where / "events"
        events.mkdir()
        run = where / "run"
        run.mkdir()
        with standalone_cluster(cluster, workers=args.executors) as url:
            confs = {"spark.executor.pyspark.memory": args.pyspark_memory,
                     "spark.eventLog.enabled": "true", "spark.eventLog.dir": events.as_uri(),
                     "spark.eventLog.compress": "false", "spark.eventLog.rolling.enabled": "false",
                     "spark.eventLog.logStageExecutorMetrics": "true",
                     "spark.executor.processTreeMetrics.enabled": "true",
                     "spark.executor.metrics.pollingInterval": "500ms"}
            argv_spark = [*config, "--engine", "spark", "--master", url, "--out", str(where / "tables"),
                          *(["--partitions", str(args.partitions)] if args.partitions else []),
                          "--driver-level", str(args.driver_level),
                          *[x for k, v in confs.items() for x in ("--conf", f"{k}={v}")]]
            env = _env()
            env["KCHECK_SPARK_LOG"] = str(where / "driver-jvm.log")
            begin = time.perf_counter()
            child = subprocess.Popen(_kcheck(*argv_spark), cwd=run, env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
            sampler = Sampler([cluster / f"work{w}" for w in range(args.executors)], driver=child.pid)
            sampler.start()
            errors: list[str] = []
            def relay() -> None:  # the run's progress lines, kept for a failure's report
                for line in child.stderr:
                    errors.append(line)
                    print(line, end="", file=sys.stderr, flush=True)

            reader = threading.Thread(target=relay, daemon=True)
            reader.start()
            out = child.stdout.read()
            child.wait()
            wall = time.perf_counter() - begin
            sampler.done.set()
            sampler.join()
            reader.join()
            limits = _cap_in_force(cluster)
        if child.returncode not in (0, 1, 3):
            print("".join(errors)[-3000:], file=sys.stderr)
            return 1
        spark = json.loads(out)
        log = _event_log(events)
        on_spark = _spark_levels(where / "tables", args.driver_level)
        same = None if local is None else all(spark[k] == local[k] for k in
                                    ("result", "distinct_states", "states_generated", "depth", "action_counts"))
        distinct = spark["distinct_states"]
        report["spark"] = {
            "result": spark["result"], "distinct_states": distinct, "states_generated": spark["states_generated"],
            "depth": spark["depth"], "same_counts_as_local": same, "partitions": args.partitions or "default",
            "seconds": round(spark["seconds"], 1), "wall_seconds": round(wall, 1),
            "states_per_second": round(distinct / spark["seconds"]) if spark["seconds"] else None,
            "cap_in_force": limits,
            "executors": [{"python_process_peak_rss_mb": round(sampler.python_hwm[i] / MB, 1),
                           "python_processes_peak_sum_rss_mb": round(sampler.python_sum[i] / MB, 1),
                           "python_processes": len(sampler.pythons_seen[i]),
                           "jvm_peak_rss_mb": round(sampler.jvm_hwm[i] / MB, 1)} for i in range(args.executors)],
            "python_rss_by_spark_mb": {k: round(v / MB, 1) for k, v in sorted(log["python_rss_by_spark"].items())},
            "driver_python_peak_rss_mb": round(sampler.driver_hwm / MB, 1),
            "jobs": log["jobs"], "tasks": log["tasks"], "disk_bytes_spilled": log["disk_bytes_spilled"],
            "levels_on_spark": on_spark["levels"], "levels": on_spark["all_levels"],
            "spark_levels_seconds": on_spark["seconds"],
            "spark_levels_new_states": on_spark["new_states"], "spark_levels_generated": on_spark["generated"],
            "shuffle_bytes": log["shuffle_bytes"],
            "shuffle_bytes_per_successor": round(log["shuffle_bytes"] / on_spark["generated"], 1)
            if on_spark["generated"] else None,
            "shuffle_bytes_per_new_state": round(log["shuffle_bytes"] / on_spark["new_states"], 1)
            if on_spark["new_states"] else None,
        }
    print(json.dumps(report), flush=True)
    return 1 if same is False else 0


if __name__ == "__main__":
    sys.exit(main())
