"""Random walks on Spark (checker.spark_engine): the shared local[2] session (tests/conftest.py),
results independent
of the partition count and equal to the local engine's, and a real standalone cluster (a Master
and a Worker started here from the installed pyspark) running a simulation submitted by URL."""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import model  # noqa: E402
from checker.cli import main  # noqa: E402
from checker.simulate import run_local  # noqa: E402
from checker.walks import ModelSpec  # noqa: E402


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
    from checker.spark_engine import run_spark

    one = run_spark(spark.sparkContext, TOY, 3, WALKS, DEPTH, swarm=swarm, partitions=1)
    four = run_spark(spark.sparkContext, TOY, 3, WALKS, DEPTH, swarm=swarm, partitions=4)
    assert one == four
    assert one[0].walks == WALKS and one[0].violations


def test_local_engine_equals_spark_engine(spark) -> None:
    from checker.spark_engine import run_spark

    remote, distinct = run_spark(spark.sparkContext, TOY, 5, WALKS, DEPTH, partitions=3)
    local, local_distinct = run_local(TOY, 5, WALKS, DEPTH)
    assert distinct == local_distinct and remote == _without_fingerprints(local)
    assert remote.violations["sum_below_limit"].length == 11


def test_hyperloglog_on_spark_equals_local(spark) -> None:
    """Per-partition sketches merged on the driver: the same registers as one local sketch."""
    from checker.spark_engine import run_spark

    big = ModelSpec("toy", (("k", 40), ("limit", 1000)), "kafka-4.1", "tests.toymodel")
    remote, estimate = run_spark(spark.sparkContext, big, 2, 300, 60, partitions=4, distinct="hll")
    local, local_estimate = run_local(big, 2, 300, 60, distinct="hll")
    exact = run_local(big, 2, 300, 60)[1]
    assert remote == local and estimate == local_estimate and abs(estimate - exact) <= 0.04 * exact


def test_replication_on_spark_equals_local(spark) -> None:
    """The replication model (smallest preset, swarm) on 4 partitions: the local engine's result."""
    from checker.config import load_config
    from checker.spark_engine import run_spark

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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.3)


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A Master and one Worker (1 core, 1g) on 127.0.0.1; yields the master URL."""
    from pyspark.find_spark_home import _find_spark_home

    spark_class = Path(_find_spark_home()) / "bin" / "spark-class"
    tmp = tmp_path_factory.mktemp("spark-cluster")
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", SPARK_DAEMON_MEMORY="256m", SPARK_WORKER_DIR=str(tmp))
    port = _free_port()
    url = f"spark://127.0.0.1:{port}"
    procs: list[subprocess.Popen] = []
    logs = []

    def start(name: str, *args: str) -> None:
        log = open(tmp / f"{name}.log", "wb")
        logs.append(log)
        procs.append(subprocess.Popen([str(spark_class), *args], stdout=log, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL, env=env, cwd=tmp))

    try:
        start("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
              "--webui-port", str(_free_port()))
        _wait_for(lambda: _listening(port), 60, f"the Spark master on port {port}")
        start("worker", "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1", "--cores", "1",
              "--memory", "1g", "--webui-port", str(_free_port()), "--work-dir", str(tmp / "work"))
        _wait_for(lambda: b"Registering worker" in (tmp / "master.log").read_bytes(), 60, "the worker to register")
        yield url
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in reversed(procs):
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for log in logs:
            log.close()


DRIVER = """
import sys
sys.path.insert(0, {root!r})
import model
model.MODELS["toy"] = "tests.toymodel"
from checker.cli import main
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
