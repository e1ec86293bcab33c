"""bench/bench_tlc.py: kcheck against TLC when TLC is given, kcheck alone otherwise."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_bench_tlc_prints_kchecks_figures_and_skips_tlc_with_a_message(tmp_path: Path) -> None:
    """bench/bench_tlc.py without TLC configured (or with a path that is not there): kcheck's own
    figures, and the TLC half skipped with a message, not an error (docs/performance.md)."""
    env = {k: v for k, v in os.environ.items() if k not in ("KCHECK_TLC", "KCHECK_TLC_SPECS")}
    for extra in ({}, {"KCHECK_TLC": str(tmp_path / "no-tlc"), "KCHECK_TLC_SPECS": str(tmp_path)}):
        done = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_tlc.py"), "--preset", "smoke"],
                              env={**env, **extra}, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        out = json.loads(done.stdout)
        assert out["kcheck"]["result"] == "ok" and out["kcheck"]["distinct_states"] == 56_775
        assert out["kcheck"]["distinct_states_per_cpu_second"] > 0
        assert out["kcheck"]["compiled_modules"] > 0 and out["kcheck_python"]["compiled_modules"] == 0
        assert out["kcheck_python"]["distinct_states"] == 56_775 and out["compiled_speedup"] > 0
        assert "skipped" in out["tlc"] and "ratio" not in out


def test_bench_tlc_repeat_reports_the_median_run_and_every_rate() -> None:
    """--repeat N: each side's figures are its median run's, its rates of every round listed."""
    env = {k: v for k, v in os.environ.items() if k not in ("KCHECK_TLC", "KCHECK_TLC_SPECS")}
    command = [sys.executable, str(ROOT / "bench" / "bench_tlc.py"), "--preset", "smoke"]
    done = subprocess.run(command + ["--repeat", "3", "--no-python-baseline"], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    rates = out["kcheck"]["rates"]
    assert len(rates) == 3 and all(r > 0 for r in rates)
    assert out["kcheck"]["distinct_states_per_cpu_second"] == sorted(rates)[1]
    assert "kcheck_python" not in out and "skipped" in out["tlc"] and "ratio" not in out
    bad = subprocess.run(command + ["--repeat", "0"], env=env, capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and bad.stderr.strip() == "bench_tlc: --repeat must be at least 1"


def test_bench_side_by_side_prints_both_rows_and_skips_tlc_with_a_message() -> None:
    """bench/bench_side_by_side.py without TLC configured: kcheck's replication and kraft rows,
    each TLC half skipped with a message (docs/performance.md, "Against TLC")."""
    env = {k: v for k, v in os.environ.items() if k not in ("KCHECK_TLC", "KCHECK_TLC_SPECS", "KCHECK_TLC_RAFT_SPECS")}
    command = [sys.executable, str(ROOT / "bench" / "bench_side_by_side.py"), "--preset", "smoke", "--raft-preset", "smoke"]
    done = subprocess.run(command + ["--json"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["rows"]
    assert rows["replication"]["kcheck"]["distinct_states"] == 56_775
    assert rows["raft"]["kcheck"]["model"] == "kraft" and rows["raft"]["kcheck"]["distinct_states"] == 515
    assert all("skipped" in row["tlc"] and row["ratio"] is None for row in rows.values())
    table = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, check=True).stdout
    assert table.startswith("| checker | work |") and "| kcheck, " in table and "replication `smoke`" in table
