"""Random walks on Spark: the `checker.walks.walker` kernel inside `mapPartitionsWithIndex`.

Partition i of P runs walk ids i, i+P, i+2P, ... (round robin). Each walk is seeded by its id
alone, and the per-partition summaries merge order-independently, so the result is the same for
any P, any executor count and any machine: a violation found on a cluster replays locally.

The model is rebuilt on each executor from (model name, defining module, config, variant).
Distinct states are counted exactly, the union of every walk's state fingerprints through
`distinct().count()`, or estimated (`distinct="hll"`) by merging per-partition HyperLogLog
sketches on the driver, which shuffles nothing.

Sessions: `local[*]` by default, or a master URL such as `spark://host:7077`. The JVM's
stdout/stderr (Spark's log4j output and executor Python stderr in local mode) go to a log file,
never to the terminal. Against a non-local master, a job first asks every executor which `model`
and `checker` sources it imports: where every one imports the driver's very sources (the same
kcheck installed on each machine, compiled or not), the executors run their own; else the two
packages are zipped and shipped with `sc.addPyFile` (as pure Python: a zip holds no compiled
module). A model module outside `model` (a test model) is shipped on every master, and so are the
`--plugin` files (`sc.addFile`, checked by SHA-256 in each task:
checker/walks/spark_plugins.py).
"""
from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import re
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
import zipfile
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlsplit

from checker import stop
from checker.walks.walker import ModelSpec, RoundPlan, Summary, summarize, walk_ids_of_part


class SparkUnavailable(Exception):
    """Spark cannot run here; the message is one line a user can act on."""


def is_local(master: str) -> bool:
    return master == "local" or master.startswith("local[") or master.startswith("local-cluster[")


def default_log_path() -> Path:
    return Path(os.environ.get("KCHECK_SPARK_LOG") or Path(tempfile.gettempdir()) / f"kcheck-spark-{os.getpid()}.log")


def check_java() -> str:
    """The java executable Spark will use (JAVA_HOME first, as spark-class does), or SparkUnavailable."""
    home = os.environ.get("JAVA_HOME")
    if home:
        java = Path(home) / "bin" / "java"
        if os.access(java, os.X_OK):
            return str(java)
        raise SparkUnavailable(f"JAVA_HOME={home} has no bin/java: point JAVA_HOME at a JDK 17+ (Spark needs Java)")
    java = shutil.which("java")
    if java is None:
        raise SparkUnavailable("Java not found: Spark needs a JDK 17+ on PATH or JAVA_HOME (or use --engine local)")
    return java


def check_master(master: str, timeout: float = 5.0) -> str:
    """Fail fast with a clear line when no host of a spark:// master URL accepts a connection;
    else the local address of that connection: the one the master's executors can reach us at."""
    if not master.startswith("spark://"):
        raise SparkUnavailable(f"unsupported master {master!r}: use local[*], local[N] or spark://host:port")
    errors = []
    for hostport in master[len("spark://"):].split(","):
        parts = urlsplit("//" + hostport)
        try:
            host, port = parts.hostname, parts.port or 7077
        except ValueError:
            raise SparkUnavailable(f"bad master URL {master!r}: expected spark://host:port") from None
        if not host:
            raise SparkUnavailable(f"bad master URL {master!r}: expected spark://host:port")
        try:
            with socket.create_connection((host, port), timeout=timeout) as connection:
                return connection.getsockname()[0]
        except socket.timeout:
            errors.append(f"{host}:{port} timed out after {timeout:g}s")
        except OSError as e:
            errors.append(f"{host}:{port} {e.strerror or e}")
    raise SparkUnavailable(f"cannot reach Spark master {master} ({'; '.join(errors)})")


def _active_context():
    from pyspark import SparkContext

    return SparkContext._active_spark_context


def guarded() -> Any:
    """Around a command's whole use of Spark, from starting the session to stopping it: a stop
    (Ctrl-C, SIGTERM) cancels the active context's jobs at once and is raised at the next
    `stop.check()`, never inside a Py4J call (where it breaks the connection and prints a
    traceback). Call `stop.check()` after the block."""
    def cancel() -> None:
        sc = _active_context()
        if sc is not None:
            sc.cancelAllJobs()

    return stop.cancelling(cancel, defer=True)


def spark_session(master: str | None = None, app_name: str = "kcheck-simulate", *,
                  log_path: Path | None = None, connect_timeout: float = 5.0,
                  executor_timeout: float = 60.0, conf: dict[str, str] | None = None):
    """A SparkSession on `master` with its JVM output sent to `log_path`.

    `master` None means local[*], or under spark-submit the master spark-submit was given.
    An already active SparkContext is reused as is (e.g. a test's session).
    """
    submitted = "PYSPARK_GATEWAY_PORT" in os.environ  # we run inside spark-submit's driver
    if master is None and not submitted:
        master = "local[*]"
    driver_host = "127.0.0.1"  # local mode: nothing outside this machine talks to the driver
    if master is not None and not is_local(master):
        driver_host = check_master(master, connect_timeout)
    check_java()
    logging.getLogger("py4j").setLevel(logging.ERROR)
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway
    from pyspark.sql import SparkSession

    if _active_context() is not None:
        return SparkSession.builder.getOrCreate()
    c = SparkConf().setAppName(app_name)
    if master is not None:
        c.setMaster(master)
    c.set("spark.ui.showConsoleProgress", "false")
    if not submitted:
        c.set("spark.ui.enabled", "false")
        # Executors run this interpreter (see docs), which can import the installed kcheck. PySpark
        # 4 takes the workers' interpreter from PYSPARK_PYTHON alone (the conf is for spark-submit):
        # without it they start `python3` from PATH, which cannot, from outside the repo.
        python = os.environ.get("PYSPARK_PYTHON") or (conf or {}).get("spark.pyspark.python") or sys.executable
        c.set("spark.pyspark.python", python)
        os.environ["PYSPARK_PYTHON"] = python
    if not submitted and not os.environ.get("SPARK_LOCAL_IP"):
        # Spark binds the driver to the address its host name resolves to, or else to the first
        # non-loopback interface, which a cluster on 127.0.0.1 may not reach and which exposes
        # the driver to the network: bind it where the master was reached (SPARK_LOCAL_IP wins).
        c.set("spark.driver.host", driver_host)
        c.set("spark.driver.bindAddress", driver_host)
    for k, v in (conf or {}).items():
        c.set(k, v)
    log_path = Path(log_path or default_log_path())
    log = open(log_path, "ab")
    try:
        # A JVM left by a stopped context, or spark-submit's, is reused.
        gateway = None if SparkContext._gateway else launch_gateway(c, popen_kwargs={"stdout": log, "stderr": log})
        ours = signal.getsignal(signal.SIGINT) if threading.current_thread() is threading.main_thread() else None
        sc = SparkContext(conf=c, gateway=gateway)
        if ours is not None:  # PySpark's own raises KeyboardInterrupt inside a Py4J call: a traceback
            signal.signal(signal.SIGINT, ours)
    except Exception as e:  # JVM exited, port clash, bad conf...
        first = str(e).splitlines()[0] if str(e) else ""
        raise SparkUnavailable(f"Spark failed to start on {master or 'the spark-submit master'}: "
                               f"{type(e).__name__}: {first} (see {log_path})") from None
    finally:
        log.close()
    sc.setLogLevel("ERROR")
    if not is_local(sc.master):
        _wait_for_executor(sc, sc.master, executor_timeout)
    return SparkSession(sc)


def _wait_for_executor(sc, master: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while sc._jsc.sc().getExecutorMemoryStatus().size() <= 1:  # the driver itself is listed
        if time.monotonic() > deadline:
            sc.stop()
            raise SparkUnavailable(f"no executor registered with {master} within {timeout:g}s "
                                   "(are workers running, with enough free cores and memory?)")
        time.sleep(0.2)


def package_zip(packages: list[str], directory: str | None = None) -> str:
    """A zip of the named top-level packages, as imported here, for `sc.addPyFile`.

    Entries are sorted and timestamp-free and the name carries a hash of the content, so the same
    sources give the same file (Spark refuses to re-add a name with different content). A package
    without `__init__.py` (a namespace package) gets an empty one in the zip.
    """
    entries: dict[str, bytes] = {}
    for name in packages:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            raise SparkUnavailable(f"cannot ship package {name!r}: it is not importable here")
        for root in map(Path, spec.submodule_search_locations):
            for path in sorted(root.rglob("*")):
                rel = path.relative_to(root.parent)
                if "__pycache__" in rel.parts or path.suffix == ".pyc":
                    continue
                if path.is_file():
                    entries[rel.as_posix()] = path.read_bytes()
            for d in [root, *(p for p in root.rglob("*") if p.is_dir() and "__pycache__" not in p.parts)]:
                init = (d.relative_to(root.parent) / "__init__.py").as_posix()
                if any(d.glob("*.py")):
                    entries.setdefault(init, b"")
    digest = hashlib.blake2b(digest_size=8)
    for k in sorted(entries):
        digest.update(k.encode() + b"\0" + entries[k] + b"\0")
    out = Path(directory or tempfile.gettempdir()) / f"kcheck-packages-{digest.hexdigest()}.zip"
    if not out.exists():
        tmp = out.with_suffix(f".{os.getpid()}.tmp")
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
            for k in sorted(entries):
                z.writestr(zipfile.ZipInfo(k, date_time=(1980, 1, 1, 0, 0, 0)), entries[k])
        os.replace(tmp, out)
    return str(out)


def _archive_of(package: str) -> Path | None:
    """The zip or wheel a package was imported from (e.g. spark-submit --py-files), else None."""
    spec = importlib.util.find_spec(package)
    for location in (spec.submodule_search_locations or []) if spec else []:
        path = Path(location)
        if path.is_dir():
            return None
        while path != path.parent and not path.is_file():
            path = path.parent
        if zipfile.is_zipfile(path):
            return path
    return None


def _as_zip(archive: Path) -> str:
    """A copy of a zip/wheel named *.zip: PySpark puts only .zip/.egg/.jar on executors' sys.path."""
    if archive.suffix == ".zip":
        return str(archive)
    digest = hashlib.blake2b(archive.read_bytes(), digest_size=8).hexdigest()
    out = Path(tempfile.gettempdir()) / f"{archive.stem}-{digest}.zip"
    if not out.exists():
        shutil.copyfile(archive, out)
    return str(out)


_SHIPPED: dict[str, set[str]] = {}  # applicationId -> files already added
_OWN: dict[str, bool] = {}  # applicationId -> whether every executor imports the driver's model and checker


def _sources_probe() -> Callable[[int, Any], Any]:
    """A task answering (its working directory, the SHA-256 of the `model` and `checker` sources it
    would import, or None when either is not a plain directory there). Made of the standard library
    only, so that it runs where kcheck is not installed; the driver runs the same function."""
    def probe(_part: int, _items: Any) -> Any:
        import hashlib
        import importlib.util
        import os
        from pathlib import Path

        digest = hashlib.sha256()
        for package in ("model", "checker"):
            try:
                spec = importlib.util.find_spec(package)
            except (ImportError, ValueError):
                spec = None
            places = list(spec.submodule_search_locations or []) if spec is not None else []
            if len(places) != 1 or not os.path.isdir(places[0]):
                yield os.getcwd(), None
                return
            root = Path(places[0])
            for path in sorted(root.rglob("*.py")):
                if "__pycache__" not in path.parts:
                    digest.update(path.relative_to(root.parent).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
        yield os.getcwd(), digest.hexdigest()

    return probe


def executors_run_own_sources(sc: Any) -> bool:
    """Whether every executor registered imports this driver's `model` and `checker` sources: a job
    of two tasks a core asks them (an executor that no task reached counts as not)."""
    if sc.applicationId in _OWN:
        return _OWN[sc.applicationId]
    probe = _sources_probe()
    mine = next(probe(0, iter(())))[1]
    executors = max(1, sc._jsc.sc().getExecutorIds().size())
    tasks = max(2 * sc.defaultParallelism, 2 * executors)
    answers = set(sc.parallelize(range(tasks), tasks).mapPartitionsWithIndex(probe).collect())
    own = mine is not None and len({where for where, _ in answers}) >= executors and \
        all(digest == mine for _, digest in answers)
    _OWN[sc.applicationId] = own
    return own


def ship_packages(sc, spec: ModelSpec, master: str) -> list[str]:
    """addPyFile what executors need: model + checker off-box, unless every executor imports the
    driver's very sources (`executors_run_own_sources`), and a model module living elsewhere
    on every master. Packages imported from source directories are zipped; packages imported from a
    zip or wheel (spark-submit --py-files kcheck.whl) are shipped as that archive, renamed .zip,
    on every master: PySpark's Python workers, local ones included, do not see a .whl."""
    packages = ["model", "checker"]
    top = (spec.module or "model").split(".")[0]
    if top not in packages:
        packages.append(top)
    archives = {p: _archive_of(p) for p in packages}
    if is_local(master):
        # Local workers import source directories from the driver's sys.path; a plug-in model
        # package is shipped anyway (it may have been put on sys.path at run time, as tests do).
        plugin = top not in ("model", "checker")
        packages = [p for p in packages if archives[p] is not None or (plugin and p == top)]
    files = sorted({_as_zip(a) for p in packages if (a := archives[p]) is not None})
    sources = [p for p in packages if archives[p] is None]
    if not is_local(master) and {"model", "checker"} <= set(sources) and executors_run_own_sources(sc):
        sources = [p for p in sources if p not in ("model", "checker")]  # each executor imports these very sources
    if sources:
        files.append(package_zip(sources))
    shipped = _SHIPPED.setdefault(sc.applicationId, set())
    for path in files:
        if Path(path).name not in shipped:
            sc.addPyFile(path)
            shipped.add(Path(path).name)
    if spec.plugins:  # the user's plugin files, on every master (checker/walks/spark_plugins.py)
        from checker import plugin
        from checker.walks.spark_plugins import ship

        ship(sc, [p for p in plugin.active() if p.sha256 in {sha for _, sha in spec.plugins}])
    return files


def build_on_executor(spec: ModelSpec) -> Any:
    """The model of `spec` in a task: its plugins checked and put in force first, alone (a reused
    Python worker may hold another job's)."""
    from checker.walks.spark_plugins import activate_on_executor

    activate_on_executor(spec.plugins)
    return spec.build()


def job_failure(e: BaseException) -> str:
    """One line for a failed Spark job: the executor's Python exception, and what to do about it."""
    found = re.findall(r"^\s*([A-Za-z_]\w*(?:Error|Exception)(?:: .*)?)$", str(e), re.MULTILINE)
    cause = found[-1] if found else (str(e).splitlines() or [type(e).__name__])[0]
    hint = ""
    if cause.startswith("ModuleNotFoundError"):
        hint = ("; executors cannot import kcheck: install it where they run, or pass the wheel with "
                "spark-submit --py-files (docs/simulate.md, 'Shipping kcheck to the executors')")
    where = "spark-submit's output" if "PYSPARK_GATEWAY_PORT" in os.environ else f"the JVM log {default_log_path()}"
    return f"Spark job failed: {cause.strip()}{hint} (details in {where})"


def _partition_runner(spec: ModelSpec, seed: int, walks: int, depth: int, swarm: bool, parts: int,
                      distinct: str, max_violations: int, walks_acc, steps_acc,
                      plan: RoundPlan | None = None, known: Any = None, shared: tuple | None = None) -> Callable:
    def run(index: int, _items: Any):
        nonlocal plan
        if known is not None:  # novelty mode: the archive's states, broadcast once per round
            plan = replace(plan, known=known.value)
        model = build_on_executor(spec)
        s = summarize(model, seed, walk_ids_of_part(walks, index, parts), depth, swarm, distinct,
                      max_violations=max_violations, plan=plan, rows=shared is not None)
        fps, s.fingerprints = s.fingerprints, set()
        rows, s.rows = s.rows, None
        walks_acc.add(s.walks)
        steps_acc.add(s.steps)
        yield ("summary", s)
        for fp in fps:
            yield ("fp", fp)
        if rows is not None:
            from checker.walks.results import walk_row

            for w in rows:
                yield ("walk", walk_row(shared, w))

    return run


def run_spark(sc, spec: ModelSpec, seed: int, walks: int, depth: int, *, swarm: bool = False,
              partitions: int | None = None, distinct: str = "exact", max_violations: int = 20,
              progress: Callable[[int, int, float], None] | None = None, plan: RoundPlan | None = None,
              fingerprints: list | None = None, out: tuple | None = None) -> tuple[Summary, int | None]:
    """Run `walks` walks on `sc`; returns the merged Summary (without fingerprints) and the number
    of distinct states visited: exact (fingerprints deduplicated by Spark), a HyperLogLog estimate
    (per-partition sketches merged on the driver: nothing is shuffled) or None, by `distinct`.
    `progress(walks_done, steps_done, seconds)` is called about once a second from a helper
    thread; the counts are accumulators, which advance as partitions complete.
    `plan`: one guided round (checker.walks.guided). `fingerprints`: a list to which, with exact
    counting, the round's distinct fingerprints are appended as a persisted RDD instead of being
    counted (`count_distinct` counts the union of several rounds'). `out`: (folder, the columns
    every walk row shares): the executors write a row per walk there, as Parquet
    (checker/walks/results.py), appended to what earlier rounds wrote."""
    master = sc.master
    ship_packages(sc, spec, master)
    parts = max(1, min(partitions or sc.defaultParallelism * 4, max(walks, 1)))
    walks_acc, steps_acc = sc.accumulator(0), sc.accumulator(0)
    known = None
    if plan is not None and plan.known is not None:  # one copy per executor, not one per task
        known, plan = sc.broadcast(plan.known), replace(plan, known=None)
    runner = _partition_runner(spec, seed, walks, depth, swarm, parts, distinct, max_violations,
                               walks_acc, steps_acc, plan, known, out[1] if out is not None else None)
    rdd = sc.parallelize(range(parts), parts).mapPartitionsWithIndex(runner)
    exact = distinct == "exact"
    kept = exact or out is not None
    if kept:
        from pyspark import StorageLevel

        rdd.persist(StorageLevel.MEMORY_AND_DISK)  # two actions: the summaries, then the fingerprints or rows
    reported = threading.Event()
    start = time.monotonic()
    if progress is not None:
        def report() -> None:  # when the counts move, else every 10 s (partitions finish in bursts)
            last, said = (-1, -1), 0.0
            while not reported.wait(1.0):
                now, counts = time.monotonic() - start, (walks_acc.value, steps_acc.value)
                if counts != last or now - said >= 10.0:
                    progress(*counts, now)
                    last, said = counts, now

        threading.Thread(target=report, daemon=True).start()
    try:
        with stop.cancelling(sc.cancelAllJobs, defer=True):  # a stop fails the running job (checker/stop.py)
            summaries = rdd.filter(lambda kv: kv[0] == "summary").map(lambda kv: kv[1]).collect()
            count = None
            if exact:
                fps = rdd.filter(lambda kv: kv[0] == "fp").map(lambda kv: kv[1]).distinct(parts)
                if fingerprints is None:
                    count = fps.count()
                else:
                    from pyspark import StorageLevel

                    fps.persist(StorageLevel.MEMORY_AND_DISK)
                    fps.count()  # materialise before the walks' RDD is unpersisted
                    fingerprints.append(fps)
            if out is not None:
                from pyspark.sql import SparkSession

                from checker.walks.results import WALKS, spark_schema

                rows = rdd.filter(lambda kv: kv[0] == "walk").map(lambda kv: kv[1])
                SparkSession.builder.getOrCreate().createDataFrame(rows, spark_schema(WALKS)).write.mode("append").parquet(out[0])
        stop.check()
    except Exception as e:  # Py4JJavaError: a task failed (4 times); its Python error is in the text
        stop.check()  # or a stop cancelled the job
        raise SparkUnavailable(job_failure(e)) from None
    finally:
        reported.set()
        if kept:
            rdd.unpersist()
        if known is not None:
            known.unpersist()
    total = Summary(max_violations=max_violations)
    for s in summaries:
        total.merge(s)
    if distinct == "hll":
        count = total.distinct_states()[0]
    return total, count


def count_distinct(sc, fingerprints: list, partitions: int | None = None) -> int:
    """The number of distinct fingerprints in the union of RDDs kept by `run_spark(...,
    fingerprints=...)` (one per guided round); unpersists them."""
    try:
        if not fingerprints:
            return 0
        parts = max(1, partitions or sc.defaultParallelism * 4)
        with stop.cancelling(sc.cancelAllJobs, defer=True):
            count = sc.union(fingerprints).distinct(parts).count()
        stop.check()
        return count
    except Exception as e:
        stop.check()  # a stop cancelled the job
        raise SparkUnavailable(job_failure(e)) from None
    finally:
        for rdd in fingerprints:
            rdd.unpersist()
