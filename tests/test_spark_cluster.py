"""`kcheck check --engine spark` and `kcheck simulate --engine spark` on a real standalone cluster
(a Master and one Worker on 127.0.0.1, from the installed pyspark), run as a user runs them: a
non-editable install, from outside the repo, without SPARK_LOCAL_IP. The executors run the
driver's interpreter, so they import the very kcheck installed (checker/walks/spark.py,
`executors_run_own_sources`; tests/test_spark.py ships a driver's edited sources instead), and
the driver listens on the loopback address the master was reached at, not on the machine's
network address."""
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


def test_a_plugin_runs_on_a_standalone_cluster_after_a_plain_install(tmp_path_factory, tmp_path: Path) -> None:
    """A user's plugin file (outside the repo, beside the commands) on the executors of a standalone
    cluster: shipped with the job, checked by SHA-256 there, and the results are the local engine's."""
    from tests.test_spark_plugin import NO_PRODUCE
    from tests.test_plugin import QUORUM

    python = install_checkout(tmp_path_factory, compile_models=False)
    (tmp_path / "no_produce.py").write_text(NO_PRODUCE)
    (tmp_path / "hw_quorum.py").write_text(QUORUM)
    check = ["check", "--plugin", "no_produce.py", "--variant", "no-produce", "--preset", "smoke", "--json",
             "--no-liveness", "--quiet"]
    walks = ["simulate", "--plugin", "hw_quorum.py", "--variant", "hw-quorum", "--preset", "smoke", "--walks", "40",
             "--seed", "5", "--json", "--quiet"]
    with standalone_cluster(tmp_path_factory.mktemp("cluster"), workers=1) as url:
        on_cluster = _kcheck(python, tmp_path, *check, "--engine", "spark", "--master", url, "--partitions", "2")
        walked = _kcheck(python, tmp_path, *walks, "--master", url, "--partitions", "2")
    assert on_cluster.returncode == 0, on_cluster.stderr[-3000:]
    assert walked.returncode == 1, walked.stderr[-3000:]
    local = _kcheck(python, tmp_path, *check, "--workers", "1")
    local_walks = _kcheck(python, tmp_path, *walks)
    remote, here = json.loads(on_cluster.stdout), json.loads(local.stdout)
    assert remote["distinct_states"] < 56_775  # fewer than Kafka 4.1's smoke: the executors ran the plugin's step
    for key in ("result", "distinct_states", "states_generated", "depth", "action_counts", "unreached", "plugins"):
        assert remote[key] == here[key], key
    remote, here = json.loads(walked.stdout), json.loads(local_walks.stdout)
    assert remote["engine"] == "spark" and remote["violations"][0]["invariant"] == "candidate_completeness"
    for key in ("violations", "action_counts", "depth_histogram", "outcomes", "distinct_states", "steps", "plugins"):
        assert remote[key] == here[key], key
