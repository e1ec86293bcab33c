"""The checker's stutter reduction (`ReplicationModel.reduce`, `kcheck check --no-reduce`).

What makes it sound, checked on states sampled by seeded random walks (which never reduce):
every property has the same value on a state and on its reduction, every action enabled in a
state is enabled in its reduction and leads to the same reduced state, and the reduction only
replays metadata. Then BFS with and without it agrees on every verdict, coverage and witness,
and its counterexamples are never longer. A reduction that absorbs a leader change fails here.
"""
from __future__ import annotations

import json
import random
from typing import Any

import pytest

from checker.search.run import explore
from checker.config import load_config
from model.replication import actions as A
from model.replication import broker_actions

PRESETS = ("smoke", "default", "zombie-leader", "epoch-lookup", "faults")


def build(preset: str, variant: str = "kafka-4.1", *sets: str) -> Any:
    return load_config(model="replication", preset=preset, variant=variant, overrides=list(sets)).build()


def walk_states(model: Any, walks: int, depth: int, seed: int) -> list[Any]:
    """States of seeded random walks of `next_state` (no reduction), the initial one included."""
    rng = random.Random(seed)
    out: list[Any] = []
    for _ in range(walks):
        s = model.init_states()[0]
        out.append(s)
        for _ in range(depth):
            succ = [t for a in model.actions(s) if (t := model.next_state(s, a)) is not None]
            if not succ:
                break
            s = rng.choice(succ)
            out.append(s)
    return out


def reduction_failures(model: Any, states: list[Any]) -> list[str]:
    """Where `model.reduce` breaks what the checker relies on (see model/interface.py)."""
    failures: list[str] = []
    for s in states:
        r = model.reduce(s)
        if model.reduce(r) != r:
            failures.append(f"not idempotent: {s}")
        for p in model.properties:
            if p.temporal:  # checked on liveness_model(), which explores without the reduction
                continue
            if p.predicate(s) != p.predicate(r):
                failures.append(f"{p.name} differs on the reduction of {s}")
        changed = [b for b, (x, y) in enumerate(zip(s.brokers, r.brokers)) if x != y]
        for b in changed:  # only metadata replay: the follower's position and partition epoch
            x, y = s.brokers[b], r.brokers[b]
            if x._replace(meta=y.meta, partition_epoch=y.partition_epoch) != y:
                failures.append(f"broker {b} changed beyond its metadata position in {s}")
        for a in model.actions(s):
            if isinstance(a, A.ReplayMetadata) and broker_actions.follower_stutter(s, a.broker, model.ctx):
                continue  # the replay the reduction absorbs
            t = model.next_state(s, a)
            if t is None:
                continue
            u = model.next_state(r, a)
            if u is None:
                failures.append(f"{a} is enabled in a state and not in its reduction: {s}")
            elif model.reduce(t) != model.reduce(u):
                failures.append(f"{a} from a state and from its reduction leads to different reduced states: {s}")
    return failures


@pytest.mark.parametrize("preset", PRESETS)
def test_reduction_keeps_properties_and_commutes(preset: str) -> None:
    model = build(preset)
    states = walk_states(model, walks=30, depth=40, seed=11)
    reduced = [s for s in states if model.reduce(s) != s]
    assert len(reduced) >= 10, "the sample must hold states the reduction changes"
    assert reduction_failures(model, states) == []


def any_pending(s: Any, b: int, ctx: Any) -> bool:
    """A reduction gone too far: every pending replay is absorbed, leader changes too."""
    x = s.brokers[b]
    return x.alive and x.meta < s.controller.partition.partition_epoch


def test_a_reduction_that_absorbs_a_leader_change_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Absorb every pending replay, leader changes too: the checks above must fail."""
    model = build("default")
    states = walk_states(model, walks=30, depth=40, seed=11)

    monkeypatch.setattr(broker_actions, "follower_stutter", any_pending)
    assert reduction_failures(model, states)


@pytest.mark.parametrize("preset,variant", [
    ("smoke", "kafka-4.1"),
    ("smoke", "no-broker-epoch-in-alter-partition"),
    ("default", "hw-ignores-min-isr"),
    ("default", "truncate-to-hw"),
    ("two-values", "record-fetch-on-divergence"),
])
def test_bfs_with_and_without_the_reduction_agree(preset: str, variant: str) -> None:
    model = build(preset, variant)
    full = explore(model, reduce=False)
    reduced = explore(model)
    assert reduced.reduction and full.reduction is None
    assert reduced.result == full.result
    assert reduced.unreached == full.unreached and reduced.never_enabled == full.never_enabled
    assert reduced.distinct_states < full.distinct_states
    if full.violation is not None:
        assert reduced.violation is not None
        assert reduced.violation["invariant"] == full.violation["invariant"]
        assert len(reduced.violation["trace"]) <= len(full.violation["trace"])


def test_reduced_counterexample_replays_through_next_state() -> None:
    """Each reduced step is the named action followed by replays the reduction absorbed (H1 on
    smoke: a short trace in which the reduction absorbs replays)."""
    model = build("smoke", "response-before-metadata")
    r = explore(model)
    assert r.violation is not None
    trace = r.violation["trace"]
    absorbed = 0
    for (_, s), (a, t) in zip(trace, trace[1:]):
        u = model.next_state(s, a)
        assert u is not None and model.reduce(u) == t
        absorbed += u != t
    assert absorbed > 0


def test_cli_reports_the_reduction_and_no_reduce_turns_it_off(capsys: pytest.CaptureFixture[str]) -> None:
    from checker.cli.commands import main

    runs = {}
    for extra in ([], ["--no-reduce"]):
        code = main(["check", "--preset", "smoke", "--workers", "1", "--json", "--quiet", *extra])
        runs[bool(extra)] = (code, json.loads(capsys.readouterr().out))
    (code, reduced), (code_full, full) = runs[False], runs[True]
    assert code == code_full == 0
    assert reduced["reduction"] and full["reduction"] is None
    assert reduced["distinct_states"] < full["distinct_states"]
    assert reduced["unreached"] == full["unreached"] == [] and reduced["never_enabled"] == full["never_enabled"] == []
    assert main(["check", "--preset", "smoke", "--workers", "1", "--quiet"]) == 0
    assert "reduction:        a follower replays" in capsys.readouterr().out


# --- the reduction in the liveness pass (the timely model's `reduce_liveness`) ---------------------


def liveness_failures(model: Any, states: list[Any]) -> list[str]:
    """Where the reduction would change a liveness verdict: a temporal predicate (a follower's
    own replays_latest_<b> aside, spec/replication.md "Liveness") or a fairness condition that
    differs on a state and its reduction, or an action enabled in the reduction only."""
    fairness = {f.action: f for f in model.fairness}
    failures: list[str] = []
    for s in states:
        r = model.reduce(s)
        if r == s:
            continue
        for p in model.properties:
            if not p.temporal or p.name.startswith("replays_latest_"):
                continue
            for f in (p.predicate, p.target):
                if f is not None and f(s) != f(r):
                    failures.append(f"{p.name} differs on the reduction of {s}")
        for a in model.actions(r):
            if model.next_state(r, a) is None:
                continue
            if model.next_state(s, a) is None:
                failures.append(f"{a} is enabled in the reduction only: {s}")
            f = fairness.get(type(a).__name__)
            if f is not None and f.when is not None and f.when(s, a) != f.when(r, a):
                failures.append(f"{a}'s fairness condition differs on the reduction of {s}")
    return failures


@pytest.mark.parametrize("preset", ("smoke", "default", "stale-fetch"))
def test_the_reduction_keeps_what_the_liveness_pass_reads(preset: str) -> None:
    lm = build(preset).liveness_model()
    assert lm.reduce_liveness and not build(preset).reduce_liveness
    assert "ReplayMetadata" in {f.action for f in lm.fairness if f.strength == "weak" and f.when is None}
    states = walk_states(lm, walks=30, depth=40, seed=5)
    assert len([s for s in states if lm.reduce(s) != s]) >= 10
    assert reduction_failures(lm, states) == []
    assert liveness_failures(lm, states) == []


@pytest.mark.parametrize("variant", ("kafka-4.1", "hw-waits-for-ineligible"))
def test_the_liveness_pass_with_and_without_the_reduction_agree(variant: str) -> None:
    from checker.search.liveness import check_liveness

    model = build("smoke", variant)
    reduced, full = check_liveness(model), check_liveness(model, reduce=False)
    assert reduced.reduced and not full.reduced and reduced.states < full.states
    assert [(o.name, o.result) for o in reduced.outcomes] == [(o.name, o.result) for o in full.outcomes]
    assert reduced.violation is None if variant == "kafka-4.1" else reduced.violation.lasso is not None


def test_a_reduction_that_absorbs_leader_changes_changes_what_the_liveness_pass_reads(
        monkeypatch: pytest.MonkeyPatch) -> None:
    lm = build("default").liveness_model()
    states = walk_states(lm, walks=30, depth=40, seed=5)

    monkeypatch.setattr(broker_actions, "follower_stutter", any_pending)
    assert liveness_failures(lm, states)
