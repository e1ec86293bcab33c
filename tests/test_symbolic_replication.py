"""The replication Z3 encoding (checker/proofs/replication_*.py) against the Python model: every
transition the model takes satisfies the symbolic relation, and the symbolic successors of a
state, enumerated as Z3 models with blocking clauses, are exactly the model's. A drifted
encoding fails here (one test drifts it on purpose)."""
from __future__ import annotations

import pytest
import z3

from checker.config import load_config
from checker.proofs import conformance as C
from checker.proofs import replication_next as N
from checker.proofs.replication_next import Ctx
from checker.proofs.replication_state import decode, fresh, init_constraint, matches
from model.replication import actions as A
from model.replication.params import Params


def setup(preset: str, variant: str = "kafka-4.1", *sets: str):
    rc = load_config(model="replication", preset=preset, variant=variant, overrides=list(sets))
    return rc.build(), Ctx.of(Params.from_config(rc.config), variant)


def first_failures(model, ctx, states, rel):
    """check_transitions, stopping at the first state with a failure."""
    for s in states:
        r = C.check_transitions(model, ctx, [s], rel)
        if r.failures:
            return r.failures
    return []


@pytest.fixture(scope="module")
def smoke():
    model, ctx = setup("smoke")
    states = C.sample(model, 40) + C.walk_sample(model, walks=2, depth=30, seed=5)
    return model, ctx, C.Relation(ctx), states


def test_the_abstraction_round_trips():
    """decode(matches(s)) == s on reachable states: the abstraction loses nothing."""
    model, ctx = setup("smoke")
    for s in C.walk_sample(model, walks=2, depth=25, seed=11)[::3]:
        sym = fresh(ctx.layout, "x_")
        solver = z3.Solver()
        assert solver.check(matches(ctx.layout, sym, s)) == z3.sat
        assert decode(ctx.layout, solver.model(), sym) == s


def test_init_is_the_model_initial_state():
    model, ctx = setup("default")
    sym = fresh(ctx.layout, "i_")
    solver = z3.Solver()
    assert solver.check(init_constraint(ctx.layout, sym, ctx.p)) == z3.sat
    assert decode(ctx.layout, solver.model(), sym) == model.init_states()[0]


def test_every_model_transition_satisfies_the_relation(smoke):
    model, ctx, rel, states = smoke
    r = C.check_transitions(model, ctx, states, rel)
    assert r.failures == []
    assert r.transitions > 200  # the sample exercised the relation


def test_symbolic_successors_are_the_model_successors(smoke):
    model, ctx, rel, states = smoke
    r = C.check_successors(model, ctx, states[::4], rel)
    assert r.failures == []
    assert r.states >= 10 and r.transitions > 40


def test_the_sample_covers_every_action_kind(smoke):
    """The smoke sample takes every kind of action at least once (so each is cross-checked)."""
    model, _, _, states = smoke
    kinds = {type(a).__name__ for s in states for t, acts in C.successors(model, s).items() for a in acts}
    assert set(A.ACTION_KINDS) - set(model.disabled_actions()) - kinds == set()


def test_three_brokers_deep_states():
    """Random walks of the default configuration (3 brokers, min ISR 2, a lossy crash): ISR
    changes through AlterPartition, ELR, elections and truncation appear only deep in the space."""
    model, ctx = setup("default")
    states = C.walk_sample(model, walks=1, depth=40, seed=7)
    rel = C.Relation(ctx)
    r = C.check_transitions(model, ctx, states, rel)
    assert r.failures == [] and r.transitions > 100
    r = C.check_successors(model, ctx, states[::10], rel)
    assert r.failures == [] and r.states >= 3


def test_a_drifted_transition_is_caught(smoke, monkeypatch):
    """Mutate the encoding (the leader never moves its HW after a Fetch, a produce or an ISR
    change): the check must fail."""
    model, ctx, _, states = smoke
    monkeypatch.setattr(N, "leader_progress", lambda c, s, b: s)
    assert first_failures(model, ctx, states, C.Relation(ctx)) != []


def test_a_drifted_rule_is_caught(smoke, monkeypatch):
    """Mutate one rule of controller.py's encoding (fencing a broker no longer removes it from
    the ISR): the check must fail on a FenceBroker transition."""
    model, ctx, _, states = smoke
    monkeypatch.setattr(N, "handle_broker_fenced", lambda c, s, reg, b: (z3.BoolVal(False), reg))
    failures = first_failures(model, ctx, states, C.Relation(ctx))
    assert any("FenceBroker" in f or "ControlledShutdown" in f or "Restart" in f for f in failures)


def test_concrete_action_names_the_message():
    """A symbolic message action (a slot) becomes the model's action carrying the message."""
    model, ctx = setup("smoke")
    s = model.init_states()[0]
    t = model.next_state(s, A.SendFetch(1))
    sym = fresh(ctx.layout, "c_")
    solver = z3.Solver()
    solver.add(matches(ctx.layout, sym, t))
    assert solver.check() == z3.sat
    m = solver.model()
    slot = next(x for x in range(ctx.M) if m.eval(sym[("mk", x)]).as_long() != 0)
    a = N.concrete_action(ctx, N.HandleFetchIn(slot, 1, 0), m, sym)
    assert a == A.HandleFetch(t.fetch_requests[0])


VARIANT_PRESETS = [
    ("truncate-to-hw", "smoke"), ("truncate-to-hw-diverge", "epoch-lookup"), ("hw-ignores-min-isr", "smoke"),
    ("no-broker-epoch-in-alter-partition", "smoke"), ("epoch-lookup-first-larger", "epoch-lookup"),
    ("isr-expand-without-leso", "smoke"), ("record-fetch-on-divergence", "two-values"),
    ("hw-without-maximal-isr", "smoke"), ("fenced-may-join-isr", "smoke"),
    ("accept-stale-broker-epoch-fetch", "stale-fetch"), ("no-elr", "last-replica-standing"),
    ("unclean-restart-keeps-elr", "smoke"), ("unclean-election", "smoke"),
    ("no-current-epoch-in-fetch", "zombie-leader"), ("response-before-metadata", "smoke"),
    ("fence-with-stale-fetch-queued", "stale-fetch"),
]


@pytest.mark.slow
@pytest.mark.parametrize("variant,preset", VARIANT_PRESETS)
def test_variants_conform(variant, preset):
    model, ctx = setup(preset, variant)
    states = C.walk_sample(model, walks=4, depth=35, seed=1)
    rel = C.Relation(ctx)
    assert C.check_transitions(model, ctx, states, rel).failures == []
    assert C.check_successors(model, ctx, states[::5], rel).failures == []


def test_the_joint_fault_budget_conforms():
    """`max_faults` (a joint budget of 1 on smoke, where each kind's own budget is 1): the
    encoding disables a second fault of any kind exactly where the model does."""
    model, ctx = setup("smoke", "kafka-4.1", "max_faults=1")
    states = C.walk_sample(model, walks=3, depth=30, seed=3)
    assert any(s.history.crashes + s.history.fences + s.history.losses == 1 for s in states)
    rel = C.Relation(ctx)
    r = C.check_transitions(model, ctx, states, rel)
    assert r.failures == [] and r.transitions > 100
    r = C.check_successors(model, ctx, states[::6], rel)
    assert r.failures == [] and r.states >= 5


@pytest.mark.slow  # about 2.5 CPU minutes; `python -m checker.proofs.record` runs it on every change
def test_the_cross_check_prove_runs_on_an_edited_model_passes_on_this_one():
    """checker.proofs.conformance.cross_check, which `kcheck prove` runs when the model's sources
    are not those the encoding was last checked against, agrees on the unedited model."""
    r = C.cross_check("replication")
    assert r.passed, r.first
    assert r.states > 150 and r.transitions > 1_000
    assert {"Produce", "SendFetch", "HandleFetch", "HandleFetchResponse", "ShrinkIsr", "HandleAlterPartition",
            "HandleAlterPartitionResponse", "FenceBroker", "UnfenceBroker", "Crash", "Restart"} <= r.kinds
