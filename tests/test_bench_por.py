"""bench/bench_por.py compares the full and the reduced search per configuration: verdicts, state
counts, and a reduced-search counterexample replayed on the full model by `kcheck replay`."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_por", ROOT / "bench" / "bench_por.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def test_a_holds_preset_and_a_bug_row(capsys):
    assert _bench().main(["--model-preset", "kraft:smoke", "--row", "R8-fenced-may-join-isr"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    kraft, r8, summary = lines
    assert kraft["full"]["result"] == kraft["por"]["result"] == "ok" and kraft["same"]
    assert kraft["full"]["distinct_states"] == 515 and kraft["state_ratio"] == 1.0
    assert r8["full"]["result"] == r8["por"]["result"] == "violation" and r8["por"]["invariant"] == "structural"
    assert r8["por"]["replays_on_full_model"] is True and r8["same"]
    assert summary == {"configurations": 2, "compared": 2, "same_verdict": 2, "skipped": []}


def test_a_trace_the_full_model_refuses_is_not_the_same(monkeypatch, capsys):
    """The comparison can fail: a counterexample whose replay fails makes `same` false (exit 1)."""
    bench = _bench()
    monkeypatch.setattr(bench, "replay_ok", lambda *a: False)
    assert bench.main(["--row", "R8-fenced-may-join-isr"]) == 1
    row = json.loads(capsys.readouterr().out.splitlines()[0])
    assert row["por"]["replays_on_full_model"] is False and row["same"] is False


def test_bounds_count_independent_pairs_and_relaxed_searches(capsys):
    """`--bounds`: the pairs the footprints declare independent, and the reduced search's states
    with visibility, then capacities, ignored (upper bounds: never more states than the full
    search, never fewer when less is ignored)."""
    assert _bench().main(["--preset", "smoke", "--set", "losses=0", "--bounds"]) == 0
    row = json.loads(capsys.readouterr().out.splitlines()[0])
    b = row["bounds"]
    assert 0 <= b["independent_pairs"] < b["pairs"] == b["groups"] * (b["groups"] - 1) // 2
    assert b["invisible_no_capacity"] <= b["invisible"] <= row["full"]["distinct_states"]
