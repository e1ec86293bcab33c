"""`kcheck check --engine spark` and `kcheck simulate --engine spark` on a real standalone cluster
(a Master and one Worker on 127.0.0.1, from the installed pyspark), run as a user runs them: a
non-editable install, from outside the repo, without SPARK_LOCAL_IP. The executors import the
kcheck shipped to them, which holds no compiled module (the install's compiled fingerprint table
must not be asked for there), and the driver listens on the loopback address the master was
reached at, not on the machine's network address."""
from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import install_checkout, java_available, standalone_cluster

pytestmark = [pytest.mark.slow,  # two JVMs, then a driver JVM per command: a few minutes on 2 shared cores
              pytest.mark.skipif(not java_available(), reason="Spark needs Java")]


def _kcheck(python: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_LOCAL_IP", "PYSPARK_PYTHON")}
    env["KCHECK_SPARK_LOG"] = str(cwd / "driver-jvm.log")
    return subprocess.run([str(python), "-m", "checker.cli", *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=900)


def _running_in(folder: Path) -> list[int]:
    """Processes whose working directory is in `folder` (the executors run in the work directory)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and Path(os.readlink(proc / "cwd")).is_relative_to(folder):
                found.append(int(proc.name))
        except OSError:
            continue
    return found


def test_both_engines_run_on_a_standalone_cluster_after_a_plain_install(tmp_path_factory, tmp_path: Path) -> None:
    python = install_checkout(tmp_path_factory, compile_models=False)  # the C fingerprint table, no Cython
    where = tmp_path_factory.mktemp("cluster")
    argv = ["check", "--model", "replication", "--preset", "smoke", "--variant", "hw-without-maximal-isr",
            "--json", "--no-liveness"]
    with standalone_cluster(where, workers=1) as url:
        on_cluster = _kcheck(python, tmp_path, *argv, "--engine", "spark", "--master", url, "--partitions", "1")
        walks = _kcheck(python, tmp_path, "simulate", "--model", "kraft", "--preset", "smoke", "--walks", "8",
                        "--depth", "6", "--json", "--quiet", "--master", url)
        driver_urls = re.findall(r'--driver-url" "spark://CoarseGrainedScheduler@([^:"]+):',
                                 (where / "worker0.log").read_text())
    assert _running_in(where) == [], "a Spark process outlived the cluster"
    for p in (on_cluster, walks):
        assert all(line.startswith("kcheck: ") for line in p.stderr.splitlines()), p.stderr[-3000:]  # no JVM output
    assert on_cluster.returncode == 1, on_cluster.stderr[-3000:]
    remote = json.loads(on_cluster.stdout)
    local = json.loads(_kcheck(python, tmp_path, *argv, "--workers", "1", "--quiet").stdout)
    assert remote["violation"]["invariant"] == "candidate_completeness"
    for key in ("result", "violation", "depth", "unreached", "never_enabled"):
        assert remote[key] == local[key], key
    assert walks.returncode in (0, 1), walks.stderr[-3000:]  # a verdict, whatever it is: the executors ran
    report = json.loads(walks.stdout)
    assert report["engine"] == "spark" and report["walks"] == 8 and report["steps"] > 0
    # Two applications, each with one executor told to call its driver back on the loopback address.
    assert driver_urls == ["127.0.0.1", "127.0.0.1"], driver_urls
