"""Shared fixtures. `spark` is the one SparkSession (local[2]) of the whole test run: started
the first time a test asks for it, stopped when pytest exits, skipped where there is no Java."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@pytest.fixture(autouse=True)
def _derivation_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test its own derivation cache (checker/proofs/derivation_cache.py): a test that edits
    the model in the process (monkeypatch) must not read, nor leave, a derivation another test
    takes for the model's own; and none writes to the user's cache."""
    monkeypatch.setenv("KCHECK_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


def java_available() -> bool:
    home = os.environ.get("JAVA_HOME")
    if home:
        return os.access(Path(home) / "bin" / "java", os.X_OK)
    return shutil.which("java") is not None


def install_checkout(tmp_path_factory: pytest.TempPathFactory, *, compile_models: bool = True) -> Path:
    """The python of a new venv holding a non-editable install (`pip install .`) of this checkout.

    The venv has no pip; its only extra path is this interpreter's site-packages, for the
    dependencies (a .pth line adds that directory to sys.path but does not run its own .pth files,
    so the editable install of the repo stays out); kcheck goes in with `pip --target`.
    `compile_models=False` builds only checker/_fpset.c (KCHECK_PURE_PYTHON=1 at install time):
    seconds instead of minutes, where the point is not the Cython build."""
    venv = tmp_path_factory.mktemp("installed") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    Path(site, "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    # Built from a clean copy: the checkout's own build/ and the bytecode other tests write into it
    # while they run are no part of what a user installs.
    source = tmp_path_factory.mktemp("source") / "kcheck"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "__pycache__", "*.so", "_compiled_sources.json", "*.egg-info", ".pytest_cache",
        ".hypothesis"))
    env = {k: v for k, v in os.environ.items() if k != "KCHECK_PURE_PYTHON"}
    if not compile_models:
        env["KCHECK_PURE_PYTHON"] = "1"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", site, str(source)],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    where = subprocess.run([str(python), "-c", "import checker; print(checker.__file__)"], check=True,
                           capture_output=True, text=True, cwd=venv).stdout
    assert where.startswith(site), where  # not the repo's
    fpset = subprocess.run([str(python), "-c", "from checker.search import visited; print(visited.COMPILED)"],
                           check=True, capture_output=True, text=True, cwd=venv).stdout.strip()
    assert fpset == "True", "the non-editable install did not compile checker/_fpset.c (is a C compiler missing?)"
    if compile_models:
        compiled = subprocess.run([str(python), "-c", "import model.replication.model, checker.search.bfs; "
                                   "from model import compiled; print(len(compiled.in_use()))"],
                                  check=True, capture_output=True, text=True, cwd=venv).stdout
        assert int(compiled) > 0, "the non-editable install compiled nothing (is a C compiler missing?)"
    return python


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The python of a venv holding a non-editable install of this checkout, models compiled: one
    per test process (defined here, not imported into each module: an imported fixture is a
    fixture of that module, and each would install again)."""
    return install_checkout(tmp_path_factory)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, timeout: float, what: str) -> None:
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


@contextmanager
def standalone_cluster(tmp: Path, workers: int) -> Iterator[str]:
    """A Spark standalone Master and `workers` Workers (1 core, 1g each) on 127.0.0.1, started from
    the installed pyspark, their logs and work directories in `tmp`; yields the master URL and
    stops them all (a Worker stops its executors as it goes)."""
    from pyspark.find_spark_home import _find_spark_home

    spark_class = Path(_find_spark_home()) / "bin" / "spark-class"
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
        wait_for(lambda: _listening(port), 60, f"the Spark master on port {port}")
        for w in range(workers):
            start(f"worker{w}", "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1", "--cores", "1",
                  "--memory", "1g", "--webui-port", str(_free_port()), "--work-dir", str(tmp / f"work{w}"))
        wait_for(lambda: (tmp / "master.log").read_bytes().count(b"Registering worker") >= workers, 60,
                 f"{workers} worker(s) to register")
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


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory):
    """The session's SparkSession on local[2], its JVM output in a temporary log file."""
    if not java_available():
        pytest.skip("Spark needs Java (no java on PATH or JAVA_HOME)")
    from checker.walks.spark import spark_session

    log = tmp_path_factory.mktemp("spark") / "jvm.log"
    session = spark_session("local[2]", "kcheck-tests", log_path=log,
                            conf={"spark.sql.shuffle.partitions": "4", "spark.default.parallelism": "2"})
    yield session
    session.stop()


@pytest.hookimpl(tryfirst=True)  # before xdist's own, which reads the groups into the test ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (`-n 2 --dist loadgroup`, README's test command), every test that uses
    the shared SparkSession runs on one worker: one JVM, one session, as without xdist; so does
    every test of the installed package: one install, not two racing in one build folder."""
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("spark"))
        elif "installed" in getattr(item, "fixturenames", ()):
            # one non-editable install (it compiles the models), built in this checkout's build/
            item.add_marker(pytest.mark.xdist_group("installed"))


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """The groups above are in the test ids that xdist's loadgroup schedules by (a pytest whose
    ids no longer take them, as 9.x with xdist 3.8, would spread them over the workers silently)."""
    if not getattr(session.config.option, "loadgroup", False):  # set in xdist's workers under loadgroup
        return
    lost = [item.nodeid for item in session.items
            if item.get_closest_marker("xdist_group") and "@" not in item.nodeid]
    if lost:
        raise pytest.UsageError(f"xdist groups are not in the test ids, so loadgroup ignores them: {lost[0]}, ...")


@pytest.fixture(scope="session")
def kafka_prevote_classpath() -> str:
    """The Kafka jars with KIP-996's pre-vote (env KCHECK_KAFKA_PREVOTE_CLASSPATH, else the checkout's
    ../shared/kafka-prevote where it exists, as .ci/run sets it); skipped without them, failed where
    KCHECK_REQUIRE_KAFKA=1. The tests run `kcheck conform` on them in a process of its own (one JVM,
    one class path per process)."""
    cp = os.environ.get("KCHECK_KAFKA_PREVOTE_CLASSPATH", "")
    if not cp:
        sibling = Path(__file__).resolve().parents[2] / "shared" / "kafka-prevote"
        cp = str(sibling) if sibling.is_dir() else ""
    if not cp:
        if os.environ.get("KCHECK_REQUIRE_KAFKA") == "1":
            pytest.fail("KCHECK_REQUIRE_KAFKA=1 but KCHECK_KAFKA_PREVOTE_CLASSPATH is not set"
                        " (nor is ../shared/kafka-prevote there)")
        pytest.skip("KCHECK_KAFKA_PREVOTE_CLASSPATH not set (the Kafka jars with pre-vote)")
    return cp


@pytest.fixture(scope="session")
def kafka_classpath() -> str:
    """The Kafka jars (env KCHECK_KAFKA_CLASSPATH) with the JVM started on them, once per test
    process; skipped without them, failed where KCHECK_REQUIRE_KAFKA=1 says they must run (.ci/run)."""
    cp = os.environ.get("KCHECK_KAFKA_CLASSPATH", "")
    if not cp:
        if os.environ.get("KCHECK_REQUIRE_KAFKA") == "1":
            pytest.fail("KCHECK_REQUIRE_KAFKA=1 but KCHECK_KAFKA_CLASSPATH is not set")
        pytest.skip("KCHECK_KAFKA_CLASSPATH not set (the Kafka jars)")
    from checker.conform.jvm import start_jvm
    start_jvm(cp)
    return cp
