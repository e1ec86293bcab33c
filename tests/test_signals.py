"""SIGTERM (what CI runners and `timeout` send) ends a parallel check like Ctrl-C: partial
figures, exit 3, and no worker left behind."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from checker.search.parallel import available
from tests.conftest import java_available

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(not available() or not Path("/proc").is_dir(),
                                reason="needs fork and /proc")


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _alive(pid: int) -> bool:
    """Running, not a zombie waiting for its reaper."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _wait_for(predicate, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def test_sigterm_to_the_coordinator_alone_leaves_no_worker(tmp_path: Path) -> None:
    out_path, err_path = tmp_path / "out", tmp_path / "err"
    with open(out_path, "w") as out, open(err_path, "w") as err:  # files: a worker holding a pipe would hang us
        proc = subprocess.Popen([sys.executable, "-m", "checker.cli", "check", "--workers", "2", "--quiet"],
                                cwd=ROOT, stdout=out, stderr=err)
    workers: list[int] = []
    try:
        assert _wait_for(lambda: len(_children(proc.pid)) == 2, 30), "the workers never started"
        workers = _children(proc.pid)
        time.sleep(0.3)  # into the first levels
        proc.send_signal(signal.SIGTERM)  # the main process only, not its group
        proc.wait(timeout=30)
        assert proc.returncode == 3, err_path.read_text()
        assert "incomplete (interrupted)" in out_path.read_text()
        assert _wait_for(lambda: not any(_alive(w) for w in workers), 10), \
            f"workers survived: {[w for w in workers if _alive(w)]}"
    finally:
        for pid in [proc.pid, *workers]:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        proc.wait()


def test_sigterm_during_mutate_s_infection_pass_stops_it(tmp_path: Path) -> None:
    """The infection pass explores Kafka 4.1 in the coordinator itself; a SIGTERM there must end
    the analysis (exit 3, partial report), not just that one search."""
    out_path, err_path = tmp_path / "out", tmp_path / "err"
    argv = [sys.executable, "-m", "checker.cli", "mutate", "--model", "replication", "--presets", "default",
            "--only", "model.replication.controller:validate_alter_partition:compare:5", "--jobs", "1",
            "--no-liveness"]
    with open(out_path, "w") as out, open(err_path, "w") as err:
        proc = subprocess.Popen(argv, cwd=ROOT, stdout=out, stderr=err)
    try:
        assert _wait_for(lambda: "exploring with Kafka 4.1" in err_path.read_text(), 60), err_path.read_text()
        time.sleep(1)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        assert proc.returncode == 3, err_path.read_text()
        assert "Traceback" not in err_path.read_text()
    finally:
        if _alive(proc.pid):
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()


def _stopped(argv: list[str], tmp_path: Path, sig: int, ready: str, *, after: float = 0.0,
             timeout: float = 120) -> tuple[int, str, str, float]:
    """Run `kcheck argv`, send `sig` to it `after` seconds past the first stderr line holding
    `ready`; (exit code, stdout, stderr, seconds from the signal to the exit)."""
    out_path, err_path = tmp_path / "out", tmp_path / "err"
    with open(out_path, "w") as out, open(err_path, "w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "checker.cli", *argv], cwd=tmp_path, stdout=out, stderr=err,
                                env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert _wait_for(lambda: ready in err_path.read_text() or proc.poll() is not None, timeout), \
            err_path.read_text()
        assert proc.poll() is None, f"it ended before the signal: {err_path.read_text()[-2000:]}"
        time.sleep(after)
        sent = time.monotonic()
        proc.send_signal(sig)
        proc.wait(timeout=60)
        return proc.returncode, out_path.read_text(), err_path.read_text(), time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_during_prove_s_queries_ends_it_as_interrupted(tmp_path: Path, sig: int) -> None:
    """Not "unknown" (Z3's own Ctrl-C handler cancelled the query), not "proved" minutes later (the
    request swallowed inside Z3), and no traceback: the queries answered so far, exit 3."""
    code, out, err, seconds = _stopped(["prove", "--model", "kraft"], tmp_path, sig, "kcheck: Init => ",
                                       after=1.0)
    assert code == 3, err[-3000:]
    assert "result:     interrupted (stopped after " in out, out
    assert "Traceback" not in err and "Error" not in err, err[-3000:]
    assert ": unknown (" not in err, err  # no query cancelled into an "unknown"
    assert seconds < 15


def test_sigterm_while_prove_builds_its_encoding_leaves_no_traceback(tmp_path: Path) -> None:
    """The encoding is built by thousands of Z3 calls: a KeyboardInterrupt raised inside one of
    them came out as `ctypes.ArgumentError` and exit 1."""
    code, out, err, _ = _stopped(["prove", "--model", "kraft", "--bmc", "40"], tmp_path, signal.SIGTERM,
                                 "kcheck: prove --bmc: still running", after=0.5)
    assert code == 3, err[-3000:]
    assert "result:     interrupted (stopped: no violation up to the depth checked)" in out, out
    assert "Traceback" not in err and "ArgumentError" not in err, err[-3000:]


GATE_ROWS = ["--only", "replication-kafka-4.1-default", "--only", "kraft-kafka-4.1-default", "--jobs", "2"]


def _start_gate(tmp_path: Path, *extra: str) -> tuple[subprocess.Popen, list[int], Path, Path]:
    """`kcheck gate` on two long rows (minutes each), two at a time; returns once both rows run."""
    out_path, err_path = tmp_path / "out", tmp_path / "err"
    (tmp_path / "tmp").mkdir()
    with open(out_path, "w") as out, open(err_path, "w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "checker.cli", "gate", *GATE_ROWS, *extra], cwd=ROOT,
                                stdout=out, stderr=err, env={**os.environ, "TMPDIR": str(tmp_path / "tmp")})
    assert _wait_for(lambda: err_path.read_text().count(": started") == 2 and len(_children(proc.pid)) == 2, 60), \
        err_path.read_text()
    time.sleep(2)  # into their searches
    return proc, _children(proc.pid), out_path, err_path


def test_sigterm_to_gate_with_jobs_stops_its_rows_at_once(tmp_path: Path) -> None:
    """At once, with the finished rows (none here) as a partial result, and no folder left."""
    proc, rows, out_path, err_path = _start_gate(tmp_path, "--json")
    try:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)  # the rows ran on for minutes
        err = err_path.read_text()
        assert proc.returncode == 3, err
        assert "Traceback" not in err and "kcheck: gate interrupted: a partial result, 0 of 2 row(s) finished" in err
        report = json.loads(out_path.read_text())
        assert report["interrupted"] and report["rows"] == [] and report["passed"] == report["failed"] == 0
        assert report["unfinished"] == ["replication-kafka-4.1-default", "kraft-kafka-4.1-default"]
        assert _wait_for(lambda: not any(_alive(r) for r in rows), 10), [r for r in rows if _alive(r)]
        assert list((tmp_path / "tmp").iterdir()) == []  # the rows' temporary run folders too
    finally:
        for pid in [proc.pid, *rows]:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        proc.wait()


def test_the_rows_of_a_killed_gate_end_with_it(tmp_path: Path) -> None:
    """SIGKILL leaves the gate no time to stop its rows: the kernel does (they ignored SIGTERM)."""
    proc, rows, _, _ = _start_gate(tmp_path)
    try:
        proc.kill()
        proc.wait()
        assert _wait_for(lambda: not any(_alive(r) for r in rows), 10), [r for r in rows if _alive(r)]
    finally:
        for pid in rows:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_an_interrupted_mutate_counts_no_unrun_mutant_and_leaves_no_folder(tmp_path: Path) -> None:
    """SIGTERM during the kill wave (two task processes, each with a search's temporary folder):
    the mutants not judged are "interrupted", not "survived" or "unchanged"; no kill rate; $TMPDIR
    as it was."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    argv = [sys.executable, "-m", "checker.cli", "mutate", "--model", "kraft", "--presets", "default",
            "--only", "model.kraft.rules:majority:*", "--jobs", "2", "--no-liveness", "--json"]
    out_path, err_path = tmp_path / "out", tmp_path / "err"
    with open(out_path, "w") as out, open(err_path, "w") as err:
        proc = subprocess.Popen(argv, cwd=ROOT, stdout=out, stderr=err, env={**os.environ, "TMPDIR": str(scratch)})
    try:
        assert _wait_for(lambda: "change something" in err_path.read_text() or proc.poll() is not None, 300), \
            err_path.read_text()
        assert _wait_for(lambda: len(_children(proc.pid)) == 2, 30), "the kill wave never started"
        time.sleep(3)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        err = err_path.read_text()
        assert proc.returncode == 3, err[-3000:]
        assert "Traceback" not in err
        report = json.loads(out_path.read_text())
        assert report["interrupted"] and report["summary"]["safety_kill_rate"] is None
        statuses = [m["status"] for m in report["mutants"]]
        assert set(statuses) <= {"killed", "availability", "interrupted"} and "interrupted" in statuses, statuses
        assert report["summary"]["survived"] == report["summary"]["unchanged"] == 0
        assert list(scratch.iterdir()) == []
    finally:
        if _alive(proc.pid):
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()


def _in_session(sid: int) -> list[int]:
    """Live processes of session `sid` (a kcheck started with start_new_session, and its JVM and
    Python workers)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and int((proc / "stat").read_text().rsplit(")", 1)[1].split()[3]) == sid:
                found.append(int(proc.name))
        except (OSError, ValueError, IndexError):
            continue
    return [p for p in found if _alive(p)]


def _spark_stop(tmp_path: Path, argv: list[str], ready: str, ctrl_c: bool) -> tuple[int, str, str]:
    """Run `kcheck argv` on Spark in a session of its own, stop it once `ready` is on stderr:
    Ctrl-C as a terminal sends it (SIGINT to the whole process group) or SIGTERM to kcheck alone.
    Returns (exit code, stdout, stderr) once no process of the session is left."""
    out_path, err_path = tmp_path / "out", tmp_path / "err"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "KCHECK_SPARK_LOG": str(tmp_path / "jvm.log")}
    with open(out_path, "w") as out, open(err_path, "w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "checker.cli", *argv], cwd=tmp_path, stdout=out, stderr=err,
                                env=env, start_new_session=True)
    try:
        assert _wait_for(lambda: ready in err_path.read_text() or proc.poll() is not None, 300), err_path.read_text()
        assert proc.poll() is None, err_path.read_text()[-3000:]
        time.sleep(1)
        if ctrl_c:
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        assert _wait_for(lambda: not _in_session(proc.pid), 30), f"left running: {_in_session(proc.pid)}"
        return proc.returncode, out_path.read_text(), err_path.read_text()
    finally:
        for pid in _in_session(proc.pid):
            os.kill(pid, signal.SIGKILL)
        proc.wait()


# Every level a Spark job (--driver-level 0): smoke's levels are small enough for the driver, which
# would finish the whole search before the signal.
SPARK_CHECK = ["check", "--engine", "spark", "--master", "local[1]", "--model", "kraft", "--preset", "smoke",
               "--partitions", "2", "--driver-level", "0"]


@pytest.mark.slow  # a JVM each: about a minute on 2 shared cores
@pytest.mark.skipif(not java_available(), reason="Spark needs Java")
@pytest.mark.parametrize("ctrl_c", [False, True], ids=["sigterm", "ctrl-c"])
def test_a_stop_during_check_on_spark_is_a_partial_result(tmp_path: Path, ctrl_c: bool) -> None:
    """Was exit 1 and a Py4J traceback (SIGTERM), or PySpark's KeyboardInterrupt traceback (Ctrl-C)."""
    code, out, err = _spark_stop(tmp_path, SPARK_CHECK, "depth 2,", ctrl_c)
    assert code == 3, err[-3000:]
    assert "result:           incomplete (interrupted)" in out
    assert all(line.startswith("kcheck: ") for line in err.splitlines()), err[-3000:]  # no traceback, no log line


@pytest.mark.slow  # a JVM each: about a minute on 2 shared cores
@pytest.mark.skipif(not java_available(), reason="Spark needs Java")
def test_ctrl_c_during_simulate_on_spark_is_one_line(tmp_path: Path) -> None:
    code, out, err = _spark_stop(tmp_path, ["simulate", "--engine", "spark", "--master", "local[1]", "--walks",
                                            "100000000", "--depth", "60"], "JVM log in", True)
    assert code == 3, err[-3000:]
    assert all(line.startswith("kcheck: ") for line in err.splitlines()), err[-3000:]
    assert err.splitlines()[-1] == "kcheck: interrupted"
