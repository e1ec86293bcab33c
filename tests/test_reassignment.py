"""Partition reassignment in the replication model, against Kafka's own unit tests.

The rules follow PartitionReassignmentReplicasTest, PartitionChangeBuilderTest and
ReplicationControlManagerTest (apache/kafka metadata/src/test/java/org/apache/kafka/controller/);
the broker side follows PartitionTest (core). Then the model: Kafka 4.1 holds on the
`reassignment` preset with every reassignment witness reached, R19 is found, and H3's ELR that
names a removed replica leads, in a scripted run, to an acked record lost.
"""
from __future__ import annotations

import pytest

from checker.search.run import explore
from checker.config import load_config
from model import definition
from model.replication import actions as A
from model.replication import controller as C
from model.replication.records import NO_LEADER, BrokerRegistration, PartitionRegistration
from model.replication.state import AP_ERRORS, F_FENCED, F_UNKNOWN

DEF = definition("replication")


def reg(replicas, isr, leader, *, elr=(), removing=(), adding=(), le=100, pe=200) -> PartitionRegistration:
    return PartitionRegistration(tuple(replicas), tuple(sorted(isr)), tuple(sorted(elr)), (), leader, le, pe, False,
                                 tuple(removing), tuple(adding))


def brokers(n, *, fenced=()) -> tuple[BrokerRegistration, ...]:
    return tuple(BrokerRegistration(100 + b, b in fenced, False) for b in range(n))


# --- PartitionReassignmentReplicasTest -----------------------------------------------------

@pytest.mark.parametrize("current, target, replicas, removing, adding", [
    pytest.param((3, 2, 1), (3, 2, 1), (3, 2, 1), (), (), id="testNoneAddedOrRemoved"),
    pytest.param((3, 2, 1), (3, 6, 2, 1, 5), (3, 6, 2, 1, 5), (), (5, 6), id="testAdditions"),
    pytest.param((3, 2, 1, 0), (3, 1), (3, 1, 0, 2), (0, 2), (), id="testRemovals"),
    pytest.param((3, 2, 1, 0), (7, 3, 1, 9), (7, 3, 1, 9, 0, 2), (0, 2), (7, 9), id="testAdditionsAndRemovals"),
    pytest.param((3, 2, 1, 0), (0, 1, 3, 2), (0, 1, 3, 2), (), (), id="testRearrangement"),
])
def test_reassignment_replicas(current, target, replicas, removing, adding):
    assert C.reassignment_replicas(current, target) == (replicas, removing, adding)


@pytest.mark.parametrize("current, target, isr, expected", [
    pytest.param((0, 1, 2), (3, 4, 5), (0, 1, 2, 3, 4), None, id="testDoesNotCompleteReassignment"),
    pytest.param((0, 1, 2), (0, 1, 2), (0, 1, 2), None, id="testDoesNotCompleteReassignmentIfNoneOngoing"),
    pytest.param((0, 1, 2), (3, 4, 5), (0, 1, 2, 3, 4, 5), ((3, 4, 5), (3, 4, 5)),
                 id="testDoesCompleteReassignmentAllNewReplicas"),
    pytest.param((0, 1, 2), (0, 1, 3), (0, 1, 2, 3), ((0, 1, 3), (0, 1, 3)),
                 id="testDoesCompleteReassignmentSomeNewReplicas"),
    pytest.param((0, 1, 2), (0, 1, 3), (3,), None, id="testDoesNotCompleteReassignmentIfIsrDoesNotHaveAllTargetReplicas"),
])
def test_maybe_complete_reassignment(current, target, isr, expected):
    replicas, removing, adding = C.reassignment_replicas(current, target)
    assert C.maybe_complete_reassignment(replicas, removing, adding, isr) == expected


def test_is_reassignment_in_progress():
    """PartitionReassignmentReplicasTest#testIsReassignmentInProgress."""
    assert C.reassigning(reg((0, 1, 3, 2), (0, 1, 3, 2), 0, removing=(2,), adding=(3,)))
    assert C.reassigning(reg((0, 1, 3, 2), (0, 1, 3, 2), 0, removing=(2,)))
    assert C.reassigning(reg((0, 1, 3, 2), (0, 1, 3, 2), 0, adding=(3,)))
    assert not C.reassigning(reg((0, 1, 2), (0, 1, 2), 0))


# --- PartitionChangeBuilderTest / ReplicationControlManagerTest ----------------------------

FOO = reg((2, 1, 3), (2, 1, 3), 1)


def test_removing_replica_reassignment():
    """PartitionChangeBuilderTest#testRemovingReplicaReassignment: replicas [1, 2], ISR [2, 1], and
    the leader field set to the same leader, so the leader epoch rises."""
    error, change = C.alter_partition_reassignment(FOO, brokers(4), (1, 2), min_isr=2, elr_enabled=True)
    assert error == C.NONE
    assert change == reg((1, 2), (1, 2), 1, le=101, pe=201)


def test_removing_replica_reassignment_without_the_epoch_bump_is_variant_r19():
    _, change = C.alter_partition_reassignment(FOO, brokers(4), (1, 2), min_isr=2, elr_enabled=True,
                                               reassignment_epoch_bump=False)
    assert change == reg((1, 2), (1, 2), 1, le=100, pe=201)


def test_adding_replica_reassignment():
    """PartitionChangeBuilderTest#testAddingReplicaReassignment: replicas [1, 2, 3, 4], adding [4];
    the ISR and the leader epoch stay."""
    error, change = C.alter_partition_reassignment(FOO, brokers(5), (1, 2, 3, 4), min_isr=2, elr_enabled=True)
    assert error == C.NONE
    assert change == reg((1, 2, 3, 4), (1, 2, 3), 1, adding=(4,), pe=201)


def test_reassignment_completes_when_the_new_replica_joins_the_isr():
    """ReplicationControlManagerTest#testReassignPartitions: the AlterPartition that adds the new
    replica to the ISR ends the reassignment; the removed replica leaves replicas and ISR."""
    moving = reg((0, 1, 2), (0, 1), 0, removing=(1,), adding=(2,))
    new_isr = ((0, 100), (1, 101), (2, 102))
    error, change = C.alter_partition(moving, brokers(3), broker_id=0, broker_epoch=100, leader_epoch=100,
                                      partition_epoch=200, new_isr=new_isr, recovering=False, min_isr=2,
                                      elr_enabled=True)
    assert error == C.NONE
    assert change == reg((0, 2), (0, 2), 0, le=101, pe=201)


def test_alter_partition_that_removes_its_leader_answers_new_leader_elected():
    """ReplicationControlManager.alterPartition: an ISR change that completes a reassignment
    removing the sender writes the record and answers NEW_LEADER_ELECTED."""
    moving = reg((1, 0), (0,), 0, removing=(0,), adding=(1,))
    error, change = C.alter_partition(moving, brokers(2), broker_id=0, broker_epoch=100, leader_epoch=100,
                                      partition_epoch=200, new_isr=((0, 100), (1, 101)), recovering=False,
                                      min_isr=1, elr_enabled=True)
    assert error == C.NEW_LEADER_ELECTED
    assert change == reg((1,), (1,), 1, le=101, pe=201)


def test_invalid_replica_assignment():
    """ReplicationControlManager.validateManualPartitionAssignment: empty, repeated or unregistered."""
    for target in ((), (1, 1), (1, 7)):
        assert C.alter_partition_reassignment(FOO, brokers(4), target, min_isr=2, elr_enabled=True) == (
            C.INVALID_REPLICA_ASSIGNMENT, None)


def test_a_removed_replica_can_stay_in_the_elr():
    """maybePopulateTargetElr draws the ELR from the old ISR, whatever the target replicas: a
    removal that leaves the ISR below min ISR puts the removed replica in the ELR (H3)."""
    _, change = C.alter_partition_reassignment(reg((0, 1), (0, 1), 0), brokers(2), (0,), min_isr=2,
                                               elr_enabled=True)
    assert change == reg((0,), (0,), 0, elr=(1,), le=101, pe=201)


def test_leaderless_partition_whose_elr_names_an_adding_replica_cannot_be_reassigned():
    """LeaderAcceptor looks the candidate's directory up in the registration before the change,
    which throws for a replica being added: the request fails, no record is written."""
    offline = reg((0,), (), NO_LEADER, elr=(0, 1))
    assert C.alter_partition_reassignment(offline, brokers(2, fenced={0}), (1,), min_isr=2, elr_enabled=True) == (
        C.UNKNOWN_SERVER_ERROR, None)


# --- the model -----------------------------------------------------------------------------

def build(variant: str = "kafka-4.1", **overrides):
    return load_config(DEF, variant=variant, preset="reassignment",
                       overrides={k: str(v) for k, v in overrides.items()}).build()


def run(m, s, *steps):
    for a in steps:
        t = m.next_state(s, a)
        assert t is not None, a
        s = t
    return s


def _fetch_of(s, f):
    return next(q for q in s.fetch_requests if q.follower == f)


def test_update_assignment_and_isr_forgets_a_removed_replica_and_the_removed_replica_deletes_its_log():
    """PartitionTest#testUpdateAssignmentAndIsr (the leader drops a removed replica's state) and
    ReplicaManager's deletes (the removed broker stops its fetcher and deletes its log)."""
    m = build()
    s = m.init_states()[0]
    s = run(m, s, A.Produce(0, 0), A.SendFetch(1))
    s = run(m, s, A.HandleFetch(_fetch_of(s, 1)))
    s = run(m, s, A.HandleFetchResponse(s.fetch_responses[0]))
    assert s.brokers[0].followers[1].leo == 0 and s.brokers[1].log
    s = run(m, s, A.AlterPartitionReassignments((0,)), A.ReplayMetadata(0), A.ReplayMetadata(1))
    assert s.brokers[0].replicas == (0,) and s.brokers[0].followers[1].leo == -1
    assert s.brokers[1].log == () and s.brokers[1].leader == NO_LEADER
    # the Fetch it sent before it deleted its log carries the old leader epoch: fenced
    t = run(m, s, A.HandleFetch(_fetch_of(s, 1)))
    assert t.fetch_responses[0].error == F_FENCED and t.brokers[0].followers[1].leo == -1


def test_a_fetch_from_a_broker_that_is_not_a_replica_is_unknown_leader_epoch():
    """Partition.followerReplicaOrThrow: in the same leader epoch (variant R19 keeps it), a Fetch from
    a broker outside the replicas gets UNKNOWN_LEADER_EPOCH and records no position."""
    m = build("reassignment-keeps-leader-epoch")
    s = m.init_states()[0]
    s = run(m, s, A.SendFetch(1), A.AlterPartitionReassignments((0,)), A.ReplayMetadata(0))
    s = run(m, s, A.HandleFetch(_fetch_of(s, 1)))
    assert s.fetch_responses[0].error == F_UNKNOWN and s.brokers[0].followers[1].leo == -1


def test_kafka_holds_on_the_reassignment_preset_and_reaches_every_reassignment_witness():
    result = explore(build(), workers=2)
    assert result.result == "ok"
    assert result.unreached == ["lossy_crash"] and result.never_enabled == []
    assert "AlterPartitionReassignments" not in result.disabled


def test_reassignment_is_off_by_configuration_elsewhere():
    m = load_config(DEF, preset="smoke").build()
    assert m.disabled_actions()["AlterPartitionReassignments"] == "reassignments = 0"
    assert not {"removed_replica_never_leads", "reassignment_completes_in_sync"} & {p.name for p in m.properties}


def test_r19_the_stale_fetch_of_a_removed_replica_puts_its_empty_log_in_the_isr():
    result = explore(build("reassignment-keeps-leader-epoch"), workers=2)
    assert result.result == "violation" and result.violation["invariant"] == "candidate_completeness"
    kinds = [type(a).__name__ for a, _ in result.violation["trace"] if a is not None]
    assert kinds.count("AlterPartitionReassignments") == 2 and kinds[-1] == "HandleAlterPartition"


def test_h3_the_elr_names_a_removed_replica_after_one_reassignment():
    result = explore(build("reassignment-leaves-elr"), workers=1)
    assert result.result == "violation" and result.violation["invariant"] == "structural"
    assert [type(a).__name__ for a, _ in result.violation["trace"] if a is not None] == ["AlterPartitionReassignments"]


def test_h3_a_replica_removed_and_added_back_is_elected_from_the_elr_and_an_acked_record_is_lost():
    """Kafka 4.1's rules, three brokers, min ISR 3: remove broker 1 (ELR [1]), fence broker 2 (ISR
    [0], ELR [1, 2]), add broker 1 back while broker 0 leads (the ELR stays: ISR 1 < min ISR 2 of
    two replicas), broker 1 deletes its log and starts again empty; broker 0 shuts down, and broker
    1, in the ELR with an empty log, is elected: value 0, acked by all three, is gone from the leader."""
    m = load_config(DEF, preset="reassignment", overrides={
        "brokers": "3", "min_insync_replicas": "3", "fences": "1", "max_leader_epoch": "4",
        "max_partition_epoch": "6", "max_in_flight": "3"}).build()
    s = m.init_states()[0]
    s = run(m, s, A.Produce(0, 0))
    for f in (1, 2):
        s = run(m, s, A.SendFetch(f))
        s = run(m, s, A.HandleFetch(_fetch_of(s, f)))
        s = run(m, s, A.HandleFetchResponse(next(r for r in s.fetch_responses if r.follower == f)))
    for f in (1, 2):
        s = run(m, s, A.HandleFetch(_fetch_of(s, f)))
    assert s.history.acked == (0,)
    s = run(m, s, A.AlterPartitionReassignments((0, 2)), A.FenceBroker(2), A.AlterPartitionReassignments((0, 1, 2)))
    assert s.controller.partition.elr == (1, 2) and s.controller.partition.adding == (1,)
    s = run(m, s, A.ReplayMetadata(1), A.ReplayMetadata(1), A.ReplayMetadata(1), A.ControlledShutdown(0),
            A.ReplayMetadata(1))
    assert s.controller.partition.leader == 1 and s.brokers[1].log == ()
    broken = {p.name for p in m.properties if p.kind == "always" and not p.predicate(s)}
    assert {"leader_completeness", "candidate_completeness"} <= broken


def test_a_reassignment_that_ends_with_a_replica_out_of_sync_breaks_reassignment_completes_in_sync(monkeypatch):
    """The ghost behind `reassignment_completes_in_sync`: a completion check that forgets the ISR
    (maybeCompleteReassignment without its last test) ends the adding of broker 1 at once."""
    m = build()
    s = run(m, m.init_states()[0], A.AlterPartitionReassignments((0,)))
    check = next(p for p in m.properties if p.name == "reassignment_completes_in_sync")
    assert check.predicate(run(m, s, A.AlterPartitionReassignments((0, 1))))
    monkeypatch.setattr(C, "maybe_complete_reassignment",
                        lambda replicas, removing, adding, isr: (replicas, isr) if adding else None)
    t = run(m, s, A.AlterPartitionReassignments((0, 1)))
    assert t.controller.partition.replicas == (0, 1) and not t.controller.partition.adding
    assert not check.predicate(t)


def test_h3_guided_search_finds_a_committed_record_lost_on_three_brokers(capsys):
    """Beyond BFS on three brokers, guided walks find H3's consequence with Kafka 4.1's rules: a
    replica removed into the ELR is added back, the leader is fenced, and the re-added replica,
    with an empty log, is elected from the ELR. One walk in tens of thousands finds it, so the
    seed decides the round. On 2026-11-29: seed 5 at walk 4,140 (round 5 of 45, 17 s), seed 6 in
    round 18, seed 2 in 33, seed 0 in 39, seeds 1 and 3 not within 45 rounds. A model change that
    moves the states' hashes moves the walks too; then pick a seed again."""
    from checker.cli.commands import main

    code = main(["simulate", "--preset", "reassignment", "--set", "brokers=3", "--set", "min_insync_replicas=3",
                 "--set", "fences=1", "--set", "max_leader_epoch=4", "--set", "max_partition_epoch=6",
                 "--set", "max_in_flight=3", "--invariant", "leader_completeness", "--invariant",
                 "no_acked_record_lost", "--guided", "--rounds", "45", "--walks", "1000", "--depth", "40",
                 "--swarm", "--seed", "5", "--json", "--quiet"])
    report = __import__("json").loads(capsys.readouterr().out)
    assert code == 1 and [v["invariant"] for v in report["violations"]] == ["leader_completeness"]
    kinds = [step["action"].split("(")[0] for step in report["violations"][0]["trace"][1:]]
    assert kinds.count("AlterPartitionReassignments") == 2 and "FenceBroker" in kinds


def test_new_leader_elected_is_an_alter_partition_answer():
    assert AP_ERRORS[-1] == "NEW_LEADER_ELECTED"
