"""The replication model: determinism, structural invariants under random runs, and the
checker finding each catalogued bug variant on its own (bug-catalogue.md R1, R9, R12)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checker.search.run import explore
from checker.selection import select_invariants
from checker.config import load_config
from model import definition
from model.replication.properties import structural
from model.replication.state import State

DEF = definition("replication")


def build(preset: str = "smoke", variant: str = "kafka-4.1", **overrides):
    config = load_config(DEF, variant=variant, preset=preset, overrides={k: str(v) for k, v in overrides.items()})
    return config.build()


def _plain_types_only(x) -> bool:
    if isinstance(x, tuple):
        return all(_plain_types_only(v) for v in x)
    return type(x) in (int, bool)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(choices=st.lists(st.integers(min_value=0, max_value=10_000), max_size=60))
def test_random_runs_keep_structural_invariants(choices):
    """Any action sequence keeps the controller's structural invariant and the plain-type state."""
    model = build("default")
    check = structural(model.params)
    state = model.init_states()[0]
    for c in choices:
        enabled = [n for n in (model.next_state(state, a) for a in model.actions(state)) if n is not None]
        if not enabled:
            break
        state = enabled[c % len(enabled)]
        assert isinstance(state, State)
        assert check(state), state
        assert _plain_types_only(state)


def test_actions_are_deterministic_and_repr_is_python():
    model = build("default")
    s = model.init_states()[0]
    first = model.actions(s)
    assert first == model.actions(s)
    from model.replication import actions as A

    for a in first:
        assert eval(repr(a), vars(A)) == a


FINGERPRINT_SCRIPT = """
import sys
from checker.config import load_config
from model import definition
d = definition("replication")
m = d.build(load_config(d, preset="smoke"), "kafka-4.1")
frontier = m.init_states()
seen = []
for _ in range(6):
    nxt = []
    for s in frontier:
        for a in m.actions(s):
            n = m.next_state(s, a)
            if n is not None:
                nxt.append(n)
    frontier = nxt[:50]
    seen += [m.fingerprint(s) for s in frontier] + [m.encode(s).hex() for s in frontier[:5]]
print(seen)
"""


def test_fingerprints_and_encodings_agree_across_processes():
    outs = set()
    for seed in ("0", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        out = subprocess.run([sys.executable, "-c", FINGERPRINT_SCRIPT], capture_output=True, text=True, env=env,
                             check=True, cwd=os.path.dirname(os.path.dirname(__file__)))
        outs.add(out.stdout)
    assert len(outs) == 1


def test_smoke_preset_passes_and_is_not_vacuous():
    result = explore(build("smoke"))
    assert result.result == "ok"
    assert result.distinct_states > 100
    assert result.violation is None


# Presets whose bug runs take more than a few seconds: `kcheck gate` in .ci/run checks those.
LARGE_PRESETS = {"default", "epoch-lookup", "stale-fetch", "two-values", "zombie-leader"}


def _temporal(v: object) -> bool:
    """Does the variant's expectation name a temporal property (tests/test_replication_liveness.py)?"""
    return any(p.name == v.expect and p.temporal for p in build(v.preset, v.name).properties)  # type: ignore[attr-defined]



@pytest.mark.parametrize("variant", [
    pytest.param(v.name, marks=[pytest.mark.slow] if v.preset in LARGE_PRESETS else [])
    for v in DEF.variants if v.expect != "holds" and not _temporal(v)
])
def test_each_bug_variant_is_found_by_search(variant):
    """BFS alone finds the invariant the catalogue says the variant breaks, on its preset."""
    expected = next(v for v in DEF.variants if v.name == variant)
    result = explore(select_invariants(build(expected.preset, variant), expected.invariants))
    assert result.result == "violation"
    assert result.violation["invariant"] == expected.expect


def test_smoke_reaches_every_witness_and_enables_every_action():
    """Vacuity guard: the small preset reaches every sometimes-property and every action kind."""
    result = explore(build("smoke"), workers=2)
    assert result.result == "ok" and result.unreached == [] and result.never_enabled == []
    assert result.disabled == {"ElectLeaders": "max_leader_epoch < 2",
                               "AlterPartitionReassignments": "reassignments = 0",
                               "CommitMetadata": "controller_failovers = 0",
                               "ControllerFailover": "controller_failovers = 0"}


def test_controller_failover_reaches_every_witness_and_enables_every_action():
    """The composed preset: the quorum's actions run, an answer waits for its commit, a failover
    forgets a write, and Kafka 4.1 keeps every invariant and temporal property."""
    model = build("controller-failover")
    result = explore(model, workers=2)
    assert result.result == "ok" and result.unreached == ["lossy_crash"] and result.never_enabled == []
    assert result.action_counts["ControllerFailover"] > 0 and result.action_counts["CommitMetadata"] > 0
    assert {"answer_held", "writes_queued", "failover_lost_write", "failover_reverted_partition"} <= set(result.reached)


def test_the_last_known_leader_is_elected_on_its_preset_and_the_witness_is_declared_only_there():
    """`leader_recovering` is declared where an unclean election is within the budget (ELR on and a
    crash per replica, or unclean elections on), and last-known-leader reaches it."""
    names = lambda m: {p.name for p in m.properties}  # noqa: E731
    assert "leader_recovering" not in names(build("smoke")) and "leader_recovering" not in names(build("default"))
    assert "leader_recovering" in names(build("smoke", unclean_leader_election=True))
    result = explore(build("last-known-leader"), workers=2)
    assert result.result == "ok" and result.unreached == ["lossy_crash"]
    assert "leader_recovering" in result.reached


def test_a_zero_budget_is_reported_as_off_by_config_not_as_covered():
    result = explore(build("smoke", losses=0, fences=0))
    assert result.disabled == {"DropMessage": "losses = 0", "ElectLeaders": "max_leader_epoch < 2",
                               "AlterPartitionReassignments": "reassignments = 0",
                               "CommitMetadata": "controller_failovers = 0",
                               "ControllerFailover": "controller_failovers = 0"}
    assert "DropMessage" not in result.never_enabled and result.action_counts["DropMessage"] == 0
    assert "FenceBroker" not in result.disabled  # a dead broker is fenced for free


def test_default_reaches_every_witness_and_action_within_its_first_700k_states():
    """The vacuity guard of the flagship run, in CI: the first 700,000 states (depth 13) of the
    default already reach every witness and enable every action. The whole space holds: the
    gate's `replication-kafka-4.1-default` row runs it in CI, the slow test below counts it."""
    result = explore(build("default"), workers=2, max_states=700_000)
    assert result.result == "incomplete" and result.reduction
    assert result.unreached == [] and result.never_enabled == []
    assert result.disabled == {"ElectLeaders": "max_leader_epoch < 2",
                               "AlterPartitionReassignments": "reassignments = 0",
                               "CommitMetadata": "controller_failovers = 0",
                               "ControllerFailover": "controller_failovers = 0"}


@pytest.mark.slow
def test_default_passes_and_reaches_everything():
    """The flagship run (`kcheck check`): the whole default space, every invariant holding, every
    witness reached and every action kind enabled (`leaderless` needs the two crashes and
    DropMessage the lost message: spec/replication.md, "Why the default is this size"). A model
    change that makes anything unreachable fails here."""
    result = explore(build("default"), workers=2)
    assert result.result == "ok" and result.reduction
    assert result.distinct_states == 5_430_858 and result.depth == 40
    assert result.unreached == [] and result.never_enabled == []
    assert result.disabled == {"ElectLeaders": "max_leader_epoch < 2",
                               "AlterPartitionReassignments": "reassignments = 0",
                               "CommitMetadata": "controller_failovers = 0",
                               "ControllerFailover": "controller_failovers = 0"}


def test_one_crash_leaves_leaderless_and_drop_message_out():
    """The default before 2026-11-25, where the replication proofs run: one fault, no lost message."""
    result = explore(build("one-crash"), workers=2)
    assert result.result == "ok"
    assert result.distinct_states == 281_386 and result.depth == 35
    assert result.unreached == ["leaderless"]
    assert result.never_enabled == []
    assert result.disabled == {"DropMessage": "losses = 0", "ElectLeaders": "max_leader_epoch < 2",
                               "AlterPartitionReassignments": "reassignments = 0",
                               "CommitMetadata": "controller_failovers = 0",
                               "ControllerFailover": "controller_failovers = 0"}


def test_alter_partition_answer_to_an_older_partition_epoch_is_ignored():
    """Partition.submitAlterPartition applies an answer only while `partitionState` is the very
    PendingPartitionChange it was sent for; the same ISR proposed again at a newer partition
    epoch does not match an answer to the older request."""
    from checker.proofs.conformance import sample
    from model.replication.broker_actions import handle_alter_partition_response

    model = build("smoke")
    checked = 0
    for s in sample(model, 20000):
        for resp in s.ap_responses:
            lb = s.brokers[resp.leader]
            fresh = handle_alter_partition_response(s, model.ctx, resp)
            if fresh is None or fresh.brokers[resp.leader].pending == lb.pending:
                continue  # not applied: nothing to compare against
            stale_req = resp.request._replace(partition_epoch=resp.request.partition_epoch - 1)
            old = resp._replace(request=stale_req)
            s_old = s._replace(ap_responses=tuple(old if m == resp else m for m in s.ap_responses))
            stale = handle_alter_partition_response(s_old, model.ctx, old)
            assert stale is not None and stale.brokers[resp.leader] == lb
            checked += 1
    assert checked >= 20


def test_max_faults_bounds_every_kind_of_fault_together():
    """`max_faults` counts crashes, fencings of live brokers and lost messages together: with a
    joint budget of 1 on smoke (each kind's own budget 1) no reachable state has two faults, every
    kind of fault still happens, and the space is smaller than without the joint budget."""
    from checker.search.common import initial_states, successor_function

    joint = build("smoke", max_faults=1)
    seen, frontier, step = set(), initial_states(joint), successor_function(joint)
    while frontier:
        nxt = []
        for s in frontier:
            for a in joint.actions(s):
                t = step(s, a)
                if t is not None and t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt
    assert max(s.history.crashes + s.history.fences + s.history.losses for s in seen) == 1
    assert any(s.history.fences for s in seen) and any(s.history.losses for s in seen)
    assert any(s.history.lossy_crashes for s in seen)
    assert len(seen) < explore(build("smoke")).distinct_states
    assert build("smoke", max_faults=0).disabled_actions()["DropMessage"] == "max_faults = 0"


def test_elect_leaders_moves_leadership_back_to_the_preferred_replica():
    """ElectLeaders(PREFERRED) writes the record ReplicationControlManager.electLeader builds:
    replicas[0] leads in the next leader epoch; fenced, it is not elected and nothing is
    written; with preferred_elections off the action is never taken."""
    from model.replication import actions as A
    from model.replication.records import BrokerRegistration
    m = build("last-replica-standing")
    s = m.init_states()[0]
    reg = s.controller.partition._replace(leader=1, leader_epoch=1, partition_epoch=1)
    s = s._replace(controller=s.controller._replace(log=(reg,)))
    t = m.next_state(s, A.ElectLeaders("PREFERRED"))
    assert t is not None
    assert (t.controller.partition.leader, t.controller.partition.leader_epoch) == (0, 2)
    assert m.next_state(t, A.ElectLeaders("PREFERRED")) is None  # ELECTION_NOT_NEEDED
    fenced = s._replace(controller=s.controller._replace(
        brokers=(BrokerRegistration(1, True, False),) + s.controller.brokers[1:]))
    assert m.next_state(fenced, A.ElectLeaders("PREFERRED")) is None  # PREFERRED_LEADER_NOT_AVAILABLE
    assert m.next_state(s, A.ElectLeaders("UNCLEAN")) is None  # off, and the partition has a leader
    off = build("last-replica-standing", preferred_elections=False)
    assert A.ElectLeaders("PREFERRED") not in off.actions(s) and off.next_state(s, A.ElectLeaders("PREFERRED")) is None
