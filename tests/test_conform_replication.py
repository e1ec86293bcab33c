"""Conformance of the replication model's controller with Kafka's ReplicationControlManager (jars).

Needs the Kafka jars: env KCHECK_KAFKA_CLASSPATH (skipped without it, failed with
KCHECK_REQUIRE_KAFKA=1). One JVM per test process, so the tests share the xdist group "jvm".
"""
from __future__ import annotations

import collections
import glob
import os
import random
from typing import Any

import pytest

from checker import itf
from checker.config import load_config
from checker.conform.adapter import compare

pytestmark = pytest.mark.xdist_group("jvm")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONTROLLER_KINDS = ("FenceBroker", "UnfenceBroker", "HandleAlterPartition", "ElectLeaders",
                    "AlterPartitionReassignments", "ControlledShutdown", "Restart", "CommitMetadata",
                    "ControllerFailover")
PRESETS = ("smoke", "stale-fetch", "stale-fetch-failover", "default", "two-values", "epoch-lookup",
           "last-replica-standing", "zombie-leader", "three-replica-conflict", "last-known-leader", "one-crash",
           "reassignment", "faults", "controller-failover")
# configurations beyond the presets: unclean elections (topic config and ElectLeaders UNCLEAN), ELR off
EXTRA = (
    ("smoke", {"unclean_elect_leaders": True, "max_leader_epoch": 3, "max_partition_epoch": 4}),
    ("zombie-leader", {"unclean_leader_election": True}),
    ("last-replica-standing", {"elr_enabled": False}),
    ("reassignment", {"brokers": 3, "min_insync_replicas": 2, "reassignments": 2}),
)


@pytest.fixture(scope="module")
def jvm() -> None:
    cp = os.environ.get("KCHECK_KAFKA_CLASSPATH", "")
    if not cp:
        if os.environ.get("KCHECK_REQUIRE_KAFKA") == "1":
            pytest.fail("KCHECK_REQUIRE_KAFKA=1 but KCHECK_KAFKA_CLASSPATH is not set")
        pytest.skip("KCHECK_KAFKA_CLASSPATH not set (the Kafka jars)")
    from checker.conform.jvm import start_jvm
    start_jvm(cp)


def _adapter(model: Any) -> Any:
    from checker.conform.replication import ReplicationAdapter
    return ReplicationAdapter(model)


def _model(preset: str, variant: str | None = None, overrides: dict | None = None) -> Any:
    return load_config("replication", variant=variant, preset=preset, overrides=overrides or {}).build()


class Outcome(collections.namedtuple("Outcome", "steps kinds step action refused keys known")):
    """One behaviour against the real controller: its steps, the action kinds taken, and the first
    difference (step, action, refusal line, differing keys, the documented divergence it is)."""


def run(model: Any, adapter: Any, behaviour: Any) -> Outcome:
    """Drive `adapter` along `behaviour` (yields (state, action, successor)), comparing after every step."""
    from checker.conform.replication import known_divergence
    kinds: collections.Counter = collections.Counter()
    steps = 0
    for state, action, successor in behaviour:
        if steps == 0 and state is not None:
            adapter.reset(state)
            keys = compare(adapter.abstract(state), adapter.observe())
            if keys:
                return Outcome(0, kinds, 0, "init", None, keys, None)
        steps += 1
        kinds[type(action).__name__] += 1
        refused = adapter.step(state, action, successor)
        real = adapter.observe()
        keys = compare(adapter.abstract(successor), real)
        if refused or keys:
            return Outcome(steps, kinds, steps, repr(action), refused, keys,
                           known_divergence(state, action, successor, real))
    return Outcome(steps, kinds, None, None, None, {}, None)


def swarm_walk(model: Any, seed: int, depth: int) -> Any:
    """A seeded swarm walk: each action kind on (weight in [0.1, 1)) or off, as checker.walks does."""
    from checker.walks import swarm_weights
    rng = random.Random(seed)
    weights = swarm_weights(model, rng)
    s = model.init_states()[0]
    for _ in range(depth):
        succ = [(a, t) for a in model.actions(s) if (t := model.next_state(s, a)) is not None]
        if not succ:
            return
        on = [(a, t) for a, t in succ if weights[type(a).__name__] > 0] or succ
        total = sum(weights[type(a).__name__] or 1.0 for a, _ in on)
        x, pick = rng.random() * total, on[-1]
        for a, t in on:
            x -= weights[type(a).__name__] or 1.0
            if x <= 0:
                pick = (a, t)
                break
        yield s, pick[0], pick[1]
        s = pick[1]


def trace_behaviour(model: Any, path: str) -> Any:
    """The model's own steps along a recorded trace: at each step the successor by the named
    action whose JSON is the trace's state (or is, after the checker's stutter reduction)."""
    doc = itf.load(path)
    states = itf.steps(doc)
    s = model.init_states()[0]
    assert model.to_json(s) == states[0][1], f"{path}: the trace does not start in the initial state"
    for action_text, values in states[1:]:
        for a in model.actions(s):
            if action_text is not None and repr(a) != action_text:
                continue
            t = model.next_state(s, a)
            if t is None:
                continue
            if model.to_json(t) == values or model.to_json(model.reduce(t)) == values:
                break
        else:
            raise AssertionError(f"{path}: no successor by {action_text}")
        yield s, a, t
        s = t if model.to_json(t) == values else model.reduce(t)


def sample(walks: int, depth: int, seed: int = 0) -> tuple[list[tuple[str, Outcome]], collections.Counter]:
    out, kinds = [], collections.Counter()
    configs = [(p, {}) for p in PRESETS] + list(EXTRA)
    for preset, overrides in configs:
        model = _model(preset, overrides=overrides)
        adapter = _adapter(model)
        for w in range(walks):
            o = run(model, adapter, swarm_walk(model, seed * 1_000_003 + w, depth))
            kinds.update(o.kinds)
            out.append((f"{preset} {overrides or ''} walk {w}", o))
    return out, kinds


def test_seeded_walks_agree_with_the_real_controller(jvm: None) -> None:
    outcomes, kinds = sample(walks=12, depth=40)
    unexplained = [(name, o) for name, o in outcomes if o.step is not None and o.known is None]
    assert not unexplained, "\n".join(f"{n}: step {o.step} {o.action}: {o.refused or o.keys}" for n, o in unexplained[:5])
    assert sum(o.steps for _, o in outcomes) > 5000
    for kind in CONTROLLER_KINDS:
        assert kinds[kind] > 0, f"{kind} never exercised: {dict(kinds)}"
