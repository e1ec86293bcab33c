"""checker/proofs/derivation_cache.py: a derivation read back from the cache is the relation
derived afresh; any other input (variant, configuration, model sources, explored invariant) or a
damaged file derives again; `kcheck prove --derive` says what it read from the cache."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
import z3

from checker.config import load_config
from checker.proofs import derive as D
from checker.proofs import derived
from checker.proofs import derivation_cache
from model.kraft import actions as A
from model.kraft.params import Params

ACTIONS = [A.SendFetch(0), A.HandleFetchRequest(1, 0), A.CutLink(0, 1)]


@pytest.fixture(scope="module")
def two_voters():
    rc = load_config(model="kraft", preset="smoke", variant="kafka-4.1", overrides=[])
    return Params.from_config({**dict(rc.config), "voters": 2})


def _same(a, b) -> bool:
    diffs = [z3.Xor(a.step.guard, b.step.guard), z3.Xor(a.crash, b.crash)]
    diffs += [z3.And(a.step.guard, a.step.post[k] != b.step.post[k]) for k in a.step.post.keys()]
    return z3.Solver().check(z3.Or(diffs)) == z3.unsat


def _derived(params, variant="kafka-4.1"):
    ctx = derived.context(params, variant, actions=ACTIONS, cached=True)
    return ctx, [ctx.derived[a] for a in ACTIONS]


def test_a_cached_derivation_is_the_derived_relation(two_voters, monkeypatch):
    ctx, first = _derived(two_voters)
    assert not ctx.cache.hits and len(list(derivation_cache.folder().glob("*.json"))) == len(ACTIONS)
    calls = []
    real = D.derive
    monkeypatch.setattr(D, "derive", lambda *a, **k: calls.append(a[3]) or real(*a, **k))
    ctx, again = _derived(two_voters)
    assert calls == [] and ctx.cache.hits == {repr(a) for a in ACTIONS}
    for d, e in zip(first, again):
        assert _same(d, e) and (d.paths, d.enabled_paths, d.crash_paths, d.crashes) == (
            e.paths, e.enabled_paths, e.crash_paths, e.crashes)


def test_other_inputs_derive_again(two_voters, monkeypatch):
    _derived(two_voters)
    calls = []
    real = D.derive
    monkeypatch.setattr(D, "derive", lambda *a, **k: calls.append(a[3]) or real(*a, **k))
    _derived(two_voters, "no-pre-vote")  # another variant
    assert calls == ACTIONS
    calls.clear()
    _derived(Params.from_config({**dict(load_config(model="kraft", preset="smoke").config), "voters": 2,
                                 "max_log": 3}))  # another configuration
    assert calls == ACTIONS
    calls.clear()
    import checker.provenance

    real_digest = checker.provenance.model_digest
    monkeypatch.setattr(checker.provenance, "model_digest", lambda name: "edited" + real_digest(name))
    _derived(two_voters)  # the model's sources edited
    assert calls == ACTIONS
    monkeypatch.setattr(checker.provenance, "model_digest", real_digest)
    calls.clear()
    for f in derivation_cache.folder().glob("*.json"):
        f.write_text(f.read_text()[:200])  # damaged
    ctx, _ = _derived(two_voters)
    assert calls == ACTIONS and not ctx.cache.hits


def test_prove_says_what_it_read_from_the_cache():
    def prove():
        out = subprocess.run([sys.executable, "-m", "checker.cli", "prove", "--model", "kraft", "--preset", "smoke",
                              "--size", "1", "--derive"], capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stderr[-2000:]
        return out
    first, second = prove(), prove()
    assert "read from the derivation cache" not in first.stdout + first.stderr
    line = next(x for x in second.stdout.splitlines() if x.startswith("encoding:"))
    n = int(line.split(": ", 2)[2].split(" action instances")[0])
    assert f"; {n} of them read from the derivation cache, {derivation_cache.folder()}" in line
    assert "(read from the derivation cache)" in second.stderr and "result:     proved" in second.stdout


def test_the_replication_derivation_is_kept_under_its_invariant(monkeypatch):
    """Replication derives under the proof's invariant: kept with it, read back for the same
    targets, derived again for others."""
    from checker.proofs import derive_replication as DR
    from checker.proofs import derived_replication
    from checker.proofs import replication_next as N
    from model.replication.params import Params as RParams

    p = RParams.from_config({**dict(load_config(model="replication", preset="smoke").config), "brokers": 2})
    acts = [a for a in N.actions(N.Ctx.of(p, "kafka-4.1")) if type(a).__name__ in ("SendFetch", "ShrinkIsr")][:3]
    first = derived_replication.context(p, "kafka-4.1", ["structural"], actions=acts, lazy=False, cached=True)
    calls = []
    real = DR.derive
    monkeypatch.setattr(DR, "derive", lambda *a, **k: calls.append(a[3]) or real(*a, **k))
    again = derived_replication.context(p, "kafka-4.1", ["structural"], actions=acts, lazy=False, cached=True)
    assert calls == [] and again.cache.hits == {repr(a) for a in acts}
    assert all(_same(first.derived[a], again.derived[a]) for a in acts)
    derived_replication.context(p, "kafka-4.1", ["candidate_completeness"], actions=acts, lazy=False, cached=True)
    assert calls == acts
