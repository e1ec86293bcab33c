"""kcheck after a non-editable install (`pip install .`), run from a directory other than the
repo: the default gate file comes with the package, and Spark's executors import kcheck.
The install: tests/conftest.py's `installed`."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import java_available

ROOT = Path(__file__).resolve().parents[1]


def _kcheck(python: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(python), "-m", "checker.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600)


def test_gate_without_a_file_uses_the_installed_one(installed: Path, tmp_path: Path) -> None:
    p = _kcheck(installed, tmp_path, "gate", "--only", "R12-hw-ignores-min-isr", "--json", "--quiet")
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    assert Path(report["gate_file"]).read_bytes() == (ROOT / "spec" / "gate.toml").read_bytes()
    assert not Path(report["gate_file"]).is_relative_to(ROOT)
    assert [r["name"] for r in report["rows"]] == ["R12-hw-ignores-min-isr"] and report["passed"] == 1


def test_mutate_reads_the_installed_model_and_judgements(installed: Path, tmp_path: Path) -> None:
    """kcheck mutate mutates the installed model's source (not the repo's), on the installed gate's
    rows, with the installed judgements file beside it."""
    p = _kcheck(installed, tmp_path, "mutate", "--model", "kraft", "--only", "model.kraft.rules:majority:*",
                "--presets", "smoke", "--no-liveness", "--jobs", "1", "--json", "--quiet")
    assert p.returncode in (0, 1), p.stderr
    report = json.loads(p.stdout)
    assert [m["id"] for m in report["mutants"]] == ["model.kraft.rules:majority:off-by-one:0",
                                                    "model.kraft.rules:majority:off-by-one:1"]
    assert report["mutants"][1]["status"] == "killed"
    listed = _kcheck(installed, tmp_path, "mutate", "--model", "replication", "--list")
    assert listed.returncode == 0 and len(listed.stdout.splitlines()) > 500


@pytest.mark.slow  # a JVM and a Spark job: about 30 s on 2 shared cores
@pytest.mark.skipif(not java_available(), reason="Spark needs Java")
def test_spark_executors_import_the_installed_kcheck(installed: Path, tmp_path: Path) -> None:
    p = _kcheck(installed, tmp_path, "simulate", "--engine", "spark", "--walks", "8", "--depth", "4",
                "--json", "--quiet")
    assert p.returncode in (0, 1), p.stderr  # a verdict, whatever it is, means the executors ran
    report = json.loads(p.stdout)
    assert report["engine"] == "spark" and report["walks"] == 8


def test_the_pages_come_with_the_package(installed: Path, tmp_path: Path) -> None:
    """`kcheck render` and `kcheck explore` read their page templates from the installed package."""
    trace = ROOT / "traces" / "kraft" / "no-check-quorum.itf.json"
    p = _kcheck(installed, tmp_path, "render", str(trace), "--html", "k8.html")
    assert p.returncode == 0, p.stderr
    assert "isolated_leader_resigns" in (tmp_path / "k8.html").read_text()
    code = ("import urllib.request; from checker.config import load_config; from checker.view.explore import start_in_thread;"
            " s, url = start_in_thread(load_config(model='kraft', preset='smoke'));"
            " print(urllib.request.urlopen(url, timeout=30).read().decode()[:300]); s.shutdown()")
    p = subprocess.run([str(installed), "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "kcheck explore: kraft kafka-4.1 (smoke)" in p.stdout, p.stderr


def _edited_checkout(tmp_path: Path) -> Path:
    """A copy of this checkout whose model lets a follower join the ISR one offset early."""
    copy = tmp_path / "kcheck"
    built = shutil.ignore_patterns(".git", ".venv", "build", "__pycache__", "*.so", "_compiled_sources.json",
                                   "*.egg-info", ".pytest_cache", ".hypothesis")

    def ignore(folder: str, names: list[str]) -> set[str]:  # the top-level traces/, not checker/traces/
        return set(built(folder, names)) | ({"traces"} & set(names) if Path(folder) == ROOT else set())

    shutil.copytree(ROOT, copy, ignore=ignore)
    rule = copy / "model" / "replication" / "partition.py"
    text = rule.read_text()
    assert "    if follower_leo < leader_hw:\n" in text
    rule.write_text(text.replace("    if follower_leo < leader_hw:\n", "    if follower_leo + 1 < leader_hw:\n"))
    return copy


def test_an_edited_checkout_is_not_checked_as_the_installed_model(installed: Path, tmp_path: Path) -> None:
    """After `pip install .`, `kcheck` run inside a checkout whose model was edited would check the
    installed copy: it refuses, in one line, saying how to check the edited one. (`-P`: the
    console script's sys.path, without the working directory.)"""
    copy = _edited_checkout(tmp_path)
    for args in (["check", "--preset", "smoke", "--quiet"], ["gate", "--only", "R12-hw-ignores-min-isr", "--quiet"]):
        p = subprocess.run([str(installed), "-P", "-m", "checker.cli", *args], cwd=copy / "model", capture_output=True,
                           text=True, timeout=600)
        assert p.returncode == 2 and p.stdout == "", (args, p.stdout[-2000:], p.stderr[-2000:])
        assert len(p.stderr.splitlines()) == 1 and p.stderr.startswith("kcheck: error: ")
        assert f"pip install -e {copy}" in p.stderr and "python -m checker.cli" in p.stderr
    # outside any checkout: the installed model, named with its digest
    p = subprocess.run([str(installed), "-P", "-m", "checker.cli", "check", "--preset", "smoke", "--json", "--quiet",
                        "--max-states", "50"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert p.returncode == 3, p.stderr
    installed_source = json.loads(p.stdout)["model_source"]
    assert not Path(installed_source["path"]).is_relative_to(ROOT) and len(installed_source["sha256"]) == 64
    # `python -m checker.cli` from the checkout checks the edited model, and says so
    p = subprocess.run([str(installed), "-m", "checker.cli", "check", "--preset", "smoke", "--json", "--quiet",
                        "--max-states", "50"], cwd=copy, capture_output=True, text=True, timeout=600)
    assert p.returncode == 3, p.stderr
    edited = json.loads(p.stdout)["model_source"]
    assert edited["path"] == str((copy / "model").resolve()) and edited["sha256"] != installed_source["sha256"]
    # the unedited copy of the same sources is no reason to refuse
    (copy / "model" / "replication" / "partition.py").write_bytes(
        (ROOT / "model" / "replication" / "partition.py").read_bytes())
    p = subprocess.run([str(installed), "-P", "-m", "checker.cli", "check", "--preset", "smoke", "--quiet",
                        "--max-states", "50"], cwd=copy, capture_output=True, text=True, timeout=600)
    assert p.returncode == 3 and f"model source:     {installed_source['path']}" in p.stdout, p.stderr
