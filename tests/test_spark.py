"""Random walks on Spark (checker.walks.spark): the shared local[2] session (tests/conftest.py),
results independent
of the partition count and equal to the local engine's, and a real standalone cluster (a Master
and a Worker started here from the installed pyspark) running a simulation submitted by URL."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import model  # noqa: E402
from checker.cli.commands import main  # noqa: E402
from checker.walks.simulate import run_local  # noqa: E402
from checker.walks.walker import ModelSpec  # noqa: E402
from tests.conftest import standalone_cluster  # noqa: E402


def _java() -> bool:
    home = os.environ.get("JAVA_HOME")
    return bool(home and os.access(Path(home) / "bin" / "java", os.X_OK)) or shutil.which("java") is not None


pytestmark = pytest.mark.skipif(not _java(), reason="Spark needs Java (no java on PATH or JAVA_HOME)")

TOY = ModelSpec("toy", (("k", 6), ("limit", 11)), "kafka-4.1", "tests.toymodel")
WALKS, DEPTH = 400, 40


@pytest.fixture(autouse=True)
def toy_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(model.MODELS, "toy", "tests.toymodel")


def _without_fingerprints(summary):
    summary.fingerprints = set()
    return summary


@pytest.mark.parametrize("swarm", [False, True])
def test_partitions_do_not_change_the_result(spark, swarm: bool) -> None:
    from checker.walks.spark import run_spark

    one = run_spark(spark.sparkContext, TOY, 3, WALKS, DEPTH, swarm=swarm, partitions=1)
    four = run_spark(spark.sparkContext, TOY, 3, WALKS, DEPTH, swarm=swarm, partitions=4)
    assert one == four
    assert one[0].walks == WALKS and one[0].violations


def test_local_engine_equals_spark_engine(spark) -> None:
    from checker.walks.spark import run_spark

    remote, distinct = run_spark(spark.sparkContext, TOY, 5, WALKS, DEPTH, partitions=3)
    local, local_distinct = run_local(TOY, 5, WALKS, DEPTH)
    assert distinct == local_distinct and remote == _without_fingerprints(local)
    assert remote.violations["sum_below_limit"].length == 11


def test_hyperloglog_on_spark_equals_local(spark) -> None:
    """Per-partition sketches merged on the driver: the same registers as one local sketch."""
    from checker.walks.spark import run_spark

    big = ModelSpec("toy", (("k", 40), ("limit", 1000)), "kafka-4.1", "tests.toymodel")
    remote, estimate = run_spark(spark.sparkContext, big, 2, 300, 60, partitions=4, distinct="hll")
    local, local_estimate = run_local(big, 2, 300, 60, distinct="hll")
    exact = run_local(big, 2, 300, 60)[1]
    assert remote == local and estimate == local_estimate and abs(estimate - exact) <= 0.04 * exact


def test_replication_on_spark_equals_local(spark) -> None:
    """The replication model (smallest preset, swarm) on 4 partitions: the local engine's result."""
    from checker.config import load_config
    from checker.walks.spark import run_spark

    rc = load_config(model="replication", preset="smoke")
    spec = ModelSpec.of(rc.model, rc.config, rc.variant)
    remote, distinct = run_spark(spark.sparkContext, spec, 7, 80, 30, swarm=True, partitions=4)
    local, local_distinct = run_local(spec, 7, 80, 30, swarm=True)
    assert distinct == local_distinct > 1 and remote == _without_fingerprints(local)


def test_cli_on_the_shared_session(spark, capsys) -> None:
    argv = ["simulate", "--model", "toy", "--set", "k=6", "--set", "limit=11", "--walks", "200", "--json", "--quiet"]
    assert main(argv + ["--engine", "spark", "--partitions", "3"]) == 1
    remote = json.loads(capsys.readouterr().out)
    assert main(argv) == 1
    local = json.loads(capsys.readouterr().out)
    assert remote["where"] == "spark (local[2])" and remote["engine"] == "spark"
    assert spark.sparkContext._jsc is not None  # the shared session was reused, not stopped
    for key in ("violations", "action_counts", "depth_histogram", "sometimes_reached", "distinct_states", "steps"):
        assert remote[key] == local[key], key


# --- a real standalone cluster --------------------------------------------------------------------


@pytest.fixture(scope="module")
def cluster_home(tmp_path_factory) -> Path:
    """The folder of the cluster's logs and work directories (work0, work1: the executors' own)."""
    return tmp_path_factory.mktemp("spark-cluster")


@pytest.fixture(scope="module")
def cluster(cluster_home: Path):
    """A Master and two Workers (1 core, 1g each) on 127.0.0.1; yields the master URL."""
    with standalone_cluster(cluster_home, workers=2) as url:
        yield url


DRIVER = """
import sys
sys.path.insert(0, {root!r})
import model
model.MODELS["toy"] = "tests.toymodel"
from checker.cli.commands import main
sys.exit(main(sys.argv[1:]))
"""


def test_standalone_cluster_gives_the_local_result(cluster, tmp_path: Path, capsys) -> None:
    """A separate driver process submits by master URL; packages are shipped with addPyFile."""
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER.format(root=str(ROOT)))
    argv = ["simulate", "--model", "toy", "--set", "k=6", "--set", "limit=11", "--walks", "300",
            "--seed", "9", "--swarm", "--json"]
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", KCHECK_SPARK_LOG=str(tmp_path / "driver-jvm.log"))
    p = subprocess.run([sys.executable, str(driver), *argv, "--master", cluster, "--partitions", "4"],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert p.returncode == 1, p.stderr[-3000:]
    assert "Traceback" not in p.stderr and "WARN" not in p.stderr  # JVM output went to the log file
    remote = json.loads(p.stdout)
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(model.MODELS, "toy", "tests.toymodel")
        assert main(argv + ["--quiet"]) == 1
    local = json.loads(capsys.readouterr().out)
    assert remote["where"] == f"spark ({cluster})"
    for key in ("violations", "action_counts", "depth_histogram", "sometimes_reached", "distinct_states",
                "steps", "outcomes"):
        assert remote[key] == local[key], key


# --- exhaustive search on Spark (kcheck check --engine spark) -------------------------------------


def _figures(r) -> tuple:
    trace = None if r.violation is None else [(repr(a), s) for a, s in r.violation["trace"]]
    return (r.result, r.depth, r.reached, r.unreached, r.never_enabled, r.violation and r.violation["invariant"],
            trace)


@pytest.mark.parametrize("name,variant", [("kraft", "kafka-4.1"), ("replication", "hw-without-maximal-isr")])
def test_the_spark_search_finds_what_the_local_one_finds(spark, name: str, variant: str, tmp_path: Path) -> None:
    from checker.search.run import explore
    from checker.config import load_config
    from checker.search.spark_bfs import explore_spark
    from checker.walks.walker import ModelSpec

    rc = load_config(model=name, variant=variant, preset="smoke")
    local = explore(rc.build())
    spec = ModelSpec.of(rc.model, rc.config, rc.variant)
    on_spark = explore_spark(spark.sparkContext, spec, partitions=3, run_dir=tmp_path / "run")
    assert _figures(on_spark) == _figures(local)
    if local.result == "ok":  # on a violation the search stops within the level, Spark at its end
        assert (on_spark.distinct_states, on_spark.states_generated, on_spark.action_counts, on_spark.digest) == \
            (local.distinct_states, local.states_generated, local.action_counts, local.digest)
        assert len(list((tmp_path / "run").glob("visited-*.bin"))) == 3 * (local.depth + 2)  # levels 0 .. depth, and the last, empty one


@pytest.mark.parametrize("driver_level", [0, 300, 10**9])
def test_levels_on_the_driver_change_nothing(spark, driver_level: int, tmp_path: Path) -> None:
    """Every level on Spark (0), the small ones on the driver (300: the first, the last, and some in
    between, in and out), or all on the driver: the local search's states, counts, trace and files."""
    from checker.config import load_config
    from checker.search.run import explore
    from checker.search.spark_bfs import explore_spark
    from checker.walks.walker import ModelSpec

    for variant in ("kafka-4.1", "hw-without-maximal-isr"):
        rc = load_config(model="replication", variant=variant, preset="smoke")
        local = explore(rc.build())
        run = tmp_path / variant
        on_spark = explore_spark(spark.sparkContext, ModelSpec.of(rc.model, rc.config, rc.variant), partitions=3,
                                 run_dir=run, driver_level=driver_level)
        assert _figures(on_spark) == _figures(local)
        if local.result == "ok":
            assert (on_spark.distinct_states, on_spark.states_generated, on_spark.action_counts, on_spark.digest) == \
                (local.distinct_states, local.states_generated, local.action_counts, local.digest)
            assert len(list(run.glob("visited-*.bin"))) == 3 * (local.depth + 2)


def test_a_state_limit_on_spark_still_checks_the_level_it_stops_at(spark, tmp_path: Path) -> None:
    """A level's properties are checked by the job after the one that found it: a search stopped by
    --max-states at the level where an invariant breaks still reports the violation, and one stopped
    at an earlier level reports the levels it finished, with the queue it left."""
    from checker.config import load_config
    from checker.search.run import explore
    from checker.search.spark_bfs import explore_spark
    from checker.walks.walker import ModelSpec

    rc = load_config(model="replication", variant="hw-without-maximal-isr", preset="smoke")
    local = explore(rc.build())
    assert local.result == "violation"
    spec = ModelSpec.of(rc.model, rc.config, rc.variant)
    seen: list = []
    whole = explore_spark(spark.sparkContext, spec, partitions=3, driver_level=0,
                          progress=lambda p: seen.append((p.depth, p.distinct_states, p.queue)))
    assert whole.result == "violation" and len(whole.violation["trace"]) == len(local.violation["trace"])
    before = next(p for p in seen if p[0] == whole.depth - 1)  # the last level before the violating one
    at_violation = explore_spark(spark.sparkContext, spec, partitions=3, driver_level=0, max_states=before[1] + 1)
    assert _figures(at_violation) == _figures(local)
    earlier = next(p for p in seen if p[0] == whole.depth - 3)
    stopped = explore_spark(spark.sparkContext, spec, partitions=3, driver_level=0, max_states=earlier[1])
    assert (stopped.result, stopped.distinct_states, stopped.queue) == ("incomplete", earlier[1], earlier[2])


def test_the_spark_search_does_not_depend_on_the_partition_count(spark) -> None:
    from checker.config import load_config
    from checker.search.spark_bfs import explore_spark
    from checker.walks.walker import ModelSpec

    rc = load_config(model="kraft", variant="no-pre-vote", preset="smoke")
    spec = ModelSpec.of(rc.model, rc.config, rc.variant)
    one, seven = (explore_spark(spark.sparkContext, spec, partitions=p) for p in (1, 7))
    assert _figures(one) == _figures(seven)
    assert (one.distinct_states, one.states_generated, one.action_counts) == \
        (seven.distinct_states, seven.states_generated, seven.action_counts)


def test_check_engine_options_are_checked(tmp_path: Path) -> None:
    def run(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "checker.cli", "check", "--preset", "smoke", *argv],
                              capture_output=True, text=True, cwd=ROOT, timeout=120)

    for argv, message in ((["--master", "local[2]"], "--master needs --engine spark"),
                          (["--partitions", "3"], "--partitions needs --engine spark"),
                          (["--engine", "spark", "--workers", "2"], "--workers is for --engine local"),
                          (["--engine", "spark", "--resume", str(tmp_path)], "--resume is for --engine local"),
                          (["--conf", "spark.executor.memory=2g"], "--conf needs --engine spark"),
                          (["--engine", "spark", "--conf", "spark.executor.memory"], "expected KEY=VALUE"),
                          (["--engine", "spark", "--conf", "spark.executor.memory="], "expected KEY=VALUE"),
                          (["--engine", "spark", "--conf", "executor.memory=2g"], "'executor.memory' is not a Spark"
                                                                                   " property"),
                          (["--engine", "spark", "--conf", "spark.executor.memory=1g", "--conf",
                            "spark.executor.memory=2g"], "--conf spark.executor.memory is given twice")):
        p = run(*argv)
        assert p.returncode == 2 and message in p.stderr and "Traceback" not in p.stderr, (argv, p.stderr)
        assert len(p.stderr.splitlines()) == 1, p.stderr
    walks = subprocess.run([sys.executable, "-m", "checker.cli", "simulate", "--preset", "smoke", "--walks", "1",
                            "--conf", "spark.executor.memory=2g"], capture_output=True, text=True, cwd=ROOT,
                           timeout=120)
    assert walks.returncode == 2 and "--conf needs --engine spark" in walks.stderr, walks.stderr


def test_conf_pairs_reach_the_session_a_command_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--conf KEY=VALUE` (repeatable) on check and simulate: the properties of the session they start."""
    from checker.walks import spark as spark_module

    asked: list[dict] = []

    def refuse(master=None, app_name="", **kw):  # stands in for starting Spark: what the command asked for
        asked.append(kw.get("conf"))
        raise spark_module.SparkUnavailable("not started here")

    monkeypatch.setattr(spark_module, "spark_session", refuse)
    monkeypatch.setattr(spark_module, "_active_context", lambda: None)
    confs = ["--conf", "spark.executor.pyspark.memory=512m", "--conf", "spark.executor.memory = 2g"]
    assert main(["check", "--preset", "smoke", "--engine", "spark", "--quiet", *confs]) == 2
    assert main(["simulate", "--preset", "smoke", "--engine", "spark", "--walks", "1", "--quiet", *confs]) == 2
    assert asked == [{"spark.executor.pyspark.memory": "512m", "spark.executor.memory": "2g"}] * 2


PROBE_DRIVER = """
import json, sys
sys.path.insert(0, {root!r})
from checker.config import load_config
from checker.walks.spark import executors_run_own_sources, ship_packages, spark_session
from checker.walks.walker import ModelSpec

session = spark_session({master!r}, app_name="kcheck-probe")
sc = session.sparkContext
rc = load_config(model="replication", preset="smoke")
files = ship_packages(sc, ModelSpec.of(rc.model, rc.config, rc.variant), sc.master)


def where(_):
    import checker.search.bfs
    yield checker.search.bfs.__file__


ran = sorted(set(sc.parallelize(range(4), 4).mapPartitions(where).collect()))
print(json.dumps({{"own": executors_run_own_sources(sc), "files": [f.rsplit("/", 1)[-1] for f in files], "ran": ran}}))
session.stop()
"""


def test_executors_run_their_own_kcheck_only_when_its_sources_are_the_drivers(cluster, tmp_path: Path) -> None:
    """Every executor of the cluster imports this checkout's sources: nothing is shipped, and they
    run the checkout's own (compiled) modules. A driver whose `checker` differs by one comment
    ships its sources, and the executors run those."""
    import shutil

    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", KCHECK_SPARK_LOG=str(tmp_path / "driver-jvm.log"))

    def probe(root: Path) -> dict:
        driver = tmp_path / "probe.py"
        driver.write_text(PROBE_DRIVER.format(root=str(root), master=cluster))
        p = subprocess.run([sys.executable, str(driver)], capture_output=True, text=True, env=env, cwd=tmp_path,
                           timeout=300)
        assert p.returncode == 0, p.stderr[-3000:]
        return json.loads(p.stdout.splitlines()[-1])

    same = probe(ROOT)
    assert same["own"] is True and same["files"] == []
    assert [Path(f).parent for f in same["ran"]] == [ROOT / "checker" / "search"], same["ran"]
    copy = tmp_path / "edited"
    for package in ("model", "checker"):
        shutil.copytree(ROOT / package, copy / package, ignore=shutil.ignore_patterns("__pycache__"))
    with (copy / "checker" / "search" / "bfs.py").open("a") as f:
        f.write("# one comment more than the executors' copy\n")
    edited = probe(copy)
    assert edited["own"] is False and len(edited["files"]) == 1 and edited["files"][0].startswith("kcheck-packages-")
    assert all(f.endswith(edited["files"][0] + "/checker/search/bfs.py") for f in edited["ran"]), edited["ran"]


def test_check_on_a_standalone_cluster_of_two_workers_gives_the_local_result(cluster, cluster_home: Path,
                                                                            tmp_path: Path) -> None:
    """`kcheck check --engine spark --master spark://...`: the same JSON report as the local engine;
    `--conf spark.executor.pyspark.memory=...` caps every executor's Python workers."""
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER.format(root=str(ROOT)))
    argv = ["check", "--preset", "smoke", "--variant", "hw-without-maximal-isr", "--json", "--quiet",
            "--no-liveness"]
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", KCHECK_SPARK_LOG=str(tmp_path / "driver-jvm.log"))
    p = subprocess.run([sys.executable, str(driver), *argv, "--engine", "spark", "--master", cluster,
                        "--partitions", "4", "--run-dir", str(tmp_path / "run"), "--driver-level", "0",
                        "--conf", "spark.executor.pyspark.memory=300m"],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert p.returncode == 1, p.stderr[-3000:]
    remote = json.loads(p.stdout)
    assert remote["workers"] == 2  # the cluster's cores: one on each worker
    for worker in ("work0", "work1"):  # PySpark's worker says so on the executor's stderr as it sets RLIMIT_AS
        said = [f.read_text() for f in (cluster_home / worker).rglob("stderr")]
        assert any(f"Setting mem limits to {300 << 20} of max {300 << 20}" in text for text in said), worker
    q = subprocess.run([sys.executable, "-m", "checker.cli", *argv, "--workers", "1"], capture_output=True,
                       text=True, cwd=ROOT, timeout=600)
    local = json.loads(q.stdout)
    for key in ("result", "violation", "depth", "unreached", "never_enabled"):
        assert remote[key] == local[key], key


def test_the_spark_command_of_docs_performance_md_runs_as_shown(spark, capsys) -> None:
    """docs/performance.md's `kcheck check ... --engine spark` on the shared session: the local report."""
    import shlex

    page = (ROOT / "docs" / "performance.md").read_text()
    block = page.split("## Exhaustive search on Spark", 1)[1]
    command = next(line.strip() for line in block.splitlines() if line.strip().startswith("kcheck check"))
    argv = shlex.split(command)[1:] + ["--json", "--quiet", "--no-liveness"]
    assert "--engine" in argv
    code = main(argv)
    remote = json.loads(capsys.readouterr().out)
    local_argv = [a for a in argv if a not in ("--engine", "spark", "--partitions", "4")]
    assert main(local_argv + ["--workers", "1"]) == code == 0
    local = json.loads(capsys.readouterr().out)
    for key in ("result", "distinct_states", "states_generated", "depth", "action_counts", "unreached",
                "never_enabled"):
        assert remote[key] == local[key], key


def test_the_spark_bench_prints_both_engines_and_the_fitted_costs(tmp_path: Path) -> None:
    """bench/bench_spark_check.py, as docs/performance.md runs it, on a small configuration: the same
    counts on both engines, a cost per level and per state fitted on the levels Spark ran, and an
    empty level's floor."""
    env = dict(os.environ, KCHECK_SPARK_LOG=str(tmp_path / "jvm.log"))
    p = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_spark_check.py"), "--run", "kraft:smoke",
                        "--partitions", "2", "--driver-level", "40"], capture_output=True, text=True, env=env,
                       cwd=tmp_path, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    row = json.loads(p.stdout.splitlines()[-1])
    assert row["same_result"] is True and row["partitions"] == 2
    assert row["levels_on_spark"] >= 3 and row["spark_ms_per_state"] is not None, row
    assert row["empty_level_seconds"] > 0 and row["local_ms_per_state"] > 0
