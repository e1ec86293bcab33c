"""checker/proofs/derive.py: the relation derived from the model's Python equals the hand-written
one (kraft_next) on the actions the stand-ins cover, and a model edit shows up as a difference
naming the action."""
from __future__ import annotations

import pytest

from checker.proofs import derive as D
from checker.proofs import kraft_next as N
from model.kraft import actions as A
from model.kraft import faults
from model.kraft.params import CONFIG_KEYS, Params


@pytest.fixture(scope="module")
def ctxs():
    p = Params.from_config({**{k.name: k.default for k in CONFIG_KEYS}, "voters": 3})
    return D.contexts(p)


def test_covered_actions_equal_the_hand_encoding(ctxs):
    ctx, nctx = ctxs
    covered = [a for a in N.actions(nctx) if type(a) in (A.CutLink, A.HealLink)]
    assert len(covered) == 6
    for a in covered:
        c = D.compare(ctx, nctx, a)
        assert c.verdict == "equal", (a, c.difference)
        assert c.derived.paths > 0 and c.derived.enabled_paths > 0


def test_uncovered_actions_name_the_construct(ctxs):
    ctx, nctx = ctxs
    c = D.compare(ctx, nctx, A.HandleVoteRequest(0, 1))
    assert c.verdict == "unsupported" and c.difference == "reads the network"
    c = D.compare(ctx, nctx, A.ClientAppend(0))
    assert c.verdict == "unsupported" and c.difference == "reads the history"


def test_a_model_edit_changes_the_derived_relation(ctxs, monkeypatch):
    """A cut that ignores the budget of all faults together (used < budget only): the derived
    CutLink no longer equals the hand encoding, and the check names the action and the guard."""
    ctx, nctx = ctxs
    monkeypatch.setattr(faults, "may_fault", lambda s, c, used, budget: used < budget)
    c = D.compare(ctx, nctx, A.CutLink(0, 1))
    assert c.verdict == "differs" and c.key == "guard", c.difference
    assert c.action == A.CutLink(0, 1)
    c = D.compare(ctx, nctx, A.HealLink(0, 1))
    assert c.verdict == "equal"


def test_bench_derive_prints_what_derives_and_what_stops_the_rest():
    """bench/bench_derive.py, as spec/proofs.md runs it: the covered actions equal, the rest counted by cause."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, str(root / "bench" / "bench_derive.py")], cwd=root, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "not derived: 102 instances: reads the network, 3 instances: reads the history" in out.stdout
    assert "CutLink(a=0, b=1)" in out.stdout and "derives: 16 paths, 4 enabled" in out.stdout
