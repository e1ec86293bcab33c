"""Liveness of the replication model (model/replication/liveness.py): Kafka 4.1 holds every
temporal property on smoke with every antecedent reached, R18 (hw-waits-for-ineligible) is found
with a lasso that replays, fairness is never on a fault, and bound_blocked names the bound."""
from __future__ import annotations

from typing import Any

import pytest

from checker.traces import itf
from checker.traces import replay
from checker.config import load_config
from checker.search.liveness import OK, VIOLATION, check_liveness
from model.replication import actions as A
from model.replication import liveness


def build(preset: str, variant: str = "kafka-4.1", **overrides: Any) -> Any:
    return load_config(model="replication", preset=preset, variant=variant, overrides=overrides).build()


def run(model: Any, steps: list[Any]) -> Any:
    s = model.init_states()[0]
    for a in steps:
        s = model.next_state(s, a)
        assert s is not None, a
    return s


def test_kafka_holds_every_liveness_property_on_smoke() -> None:
    live = check_liveness(build("smoke"))
    assert live.result == OK, [(o.name, o.result) for o in live.outcomes]
    names = {o.name for o in live.outcomes}
    assert {"produce_completes", "leader_elected", "acked_0_on_live_isr", "unfenced_0", "replays_latest_1"} <= names
    for o in live.outcomes:
        assert o.kind == "leads_to" and o.antecedent_states > 0, o.name  # no vacuous pass
    # the epoch bounds do cut fair cycles: they are counted, not reported
    assert any(o.cut for o in live.outcomes)


def test_r18_lasso_found_and_replays() -> None:
    model = build("smoke", "hw-waits-for-ineligible")
    live = check_liveness(model)
    bad = live.violation
    assert live.result == VIOLATION and bad is not None and bad.name == "produce_completes"
    assert [o.name for o in live.outcomes if o.result == VIOLATION] == ["produce_completes"]
    lasso = bad.lasso
    assert lasso is not None
    kinds = [type(a).__name__ for a, _ in lasso.trace[1:]]
    assert "ControlledShutdown" in kinds or "FenceBroker" in kinds  # the follower left the ISR by the controller
    doc = itf.to_itf(model, lasso.trace, {"invariant": bad.name}, loop=lasso.loop)
    out = replay.replay(model, itf.steps(doc), loop=doc["loop"])
    assert out.result == "valid", out
    final = lasso.trace[-1][1]
    assert final.history.pending and len(final.controller.partition.isr) >= 1


def test_fairness_is_never_on_a_fault() -> None:
    kinds = {f.action for f in liveness.FAIRNESS}
    assert not kinds & {"Crash", "LossyCrash", "ControlledShutdown", "DropMessage", "Produce", "Restart"}
    assert kinds <= set(A.ACTION_KINDS)
    fence = next(f for f in liveness.FAIRNESS if f.action == "FenceBroker")
    model = build("smoke")
    s = model.init_states()[0]
    assert fence.when is not None and not fence.when(s, A.FenceBroker(1))  # a live broker: the fault
    down = run(model, [A.Crash(1)])
    assert fence.when(down, A.FenceBroker(1))  # a dead broker's session expires
    for f in liveness.FAIRNESS:
        assert f.reason and f.strength in ("weak", "strong")


def test_bound_blocked_names_the_epoch_bounds() -> None:
    # broker 1 shuts down, broker 0 (the last ISR member) is fenced: the partition is leaderless
    # with 0 in the ELR; unfencing 0 would elect it at leader epoch 2 and partition epoch 3
    model = build("smoke").liveness_model()
    s = run(model, [A.ControlledShutdown(1), A.FenceBroker(0), A.ReplayMetadata(0), A.ReplayMetadata(0)])
    assert model.next_state(s, A.UnfenceBroker(0)) is None
    blocked = [(type(a).__name__, a, bound) for a, bound in model.bound_blocked(s)]
    assert blocked == [("UnfenceBroker", A.UnfenceBroker(0), "max_leader_epoch+max_partition_epoch")]


def test_bound_blocked_names_max_in_flight() -> None:
    model = build("default", max_in_flight=1)
    s = run(model, [A.SendFetch(1)])
    assert not any(isinstance(a, A.SendFetch) for a in model.actions(s))  # no free slot
    blocked = [(type(a).__name__, a, bound) for a, bound in model.bound_blocked(s)]
    assert ("SendFetch", A.SendFetch(2), "max_in_flight") in blocked


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["stale-fetch", "two-values", "last-replica-standing"])
def test_kafka_holds_every_liveness_property(preset: str) -> None:
    live = check_liveness(build(preset))
    assert live.result == OK, [(o.name, o.result) for o in live.outcomes]
