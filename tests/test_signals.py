"""SIGTERM (what CI runners and `timeout` send) ends a parallel check like Ctrl-C: partial
figures, exit 3, and no worker left behind."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from checker.parallel import available

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
