"""bench/bench_speed.py compares a revision with the checkout on the same search and fails when
the two explored different spaces; here on small searches of each kind it supports."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _has_history() -> bool:
    """bench_speed unpacks its baseline with `git archive`: a copy of the sources without .git has none."""
    try:
        done = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", "HEAD"], capture_output=True)
    except FileNotFoundError:  # no git at all
        return False
    return done.returncode == 0


def _bench(*args: str) -> dict:
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_speed.py"), "--baseline", "HEAD", *args],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)


@pytest.mark.parametrize("args", [("--model", "kraft", "--preset", "smoke"),
                                  ("--model", "replication", "--preset", "smoke", "--workers", "2"),
                                  ("--model", "kraft", "--preset", "elections", "--rounds", "2")])
def test_bench_speed_compares_the_same_search(args):
    if not _has_history():
        pytest.skip("no git history here: bench_speed compares a git revision with the checkout")
    out = _bench(*args)
    assert out["same_states"] is True
    for side in ("baseline", "new"):
        assert out[side]["distinct_states"] > 0 and out[side]["cpu_seconds"] > 0
        assert out[side]["action_counts"]  # the searches took steps
    assert out["ratio"] > 0
