"""Table-driven tests of model.replication.controller against Kafka's own unit tests.

Each case names the Kafka test it follows (PartitionChangeBuilderTest, ReplicationControlManagerTest,
in apache/kafka metadata/src/test/java/org/apache/kafka/controller/). Kafka's broker ids, epochs and
min ISR values are kept where the model's conventions allow.
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model.replication import controller as C
from model.replication.records import NO_LEADER, BrokerRegistration, PartitionRegistration


def reg(replicas, isr, leader, *, elr=(), lke=(), le=100, pe=200, recovering=False) -> PartitionRegistration:
    return PartitionRegistration(tuple(replicas), tuple(sorted(isr)), tuple(sorted(elr)), tuple(sorted(lke)),
                                 leader, le, pe, recovering)


def brokers(n, *, fenced=(), shutdown=(), epochs=None) -> tuple[BrokerRegistration, ...]:
    """n registered brokers; Kafka's tests use broker epoch 100 + id (defaultBrokerEpoch)."""
    return tuple(
        BrokerRegistration(epochs[b] if epochs else 100 + b, b in fenced, b in shutdown) for b in range(n)
    )


def every(n) -> frozenset[int]:
    return frozenset(range(n))


# PartitionChangeBuilderTest fixtures (acceptable: r != 3 for FOO, everyone for BAZ; min ISR 2)
FOO = reg((2, 1, 3), (2, 1, 3), 1)
BAZ = reg((2, 1, 3), (1, 3), 3)
NOT_3 = frozenset({0, 1, 2, 4})
OFFLINE_WITH_ELR = reg((2, 1, 3), (), NO_LEADER, elr=(3,), lke=(2,))


# ---------------------------------------------------------------------------------------------
# acceptable_leaders
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "regs, exclude, expected",
    [
        pytest.param(brokers(3), None, {0, 1, 2}, id="ClusterControlManager#isActive-all-active"),
        pytest.param(brokers(3, fenced={1}), None, {0, 2}, id="isActive-fenced-excluded"),
        pytest.param(brokers(3, shutdown={2}), None, {0, 1}, id="isActive-controlled-shutdown-excluded"),
        pytest.param(brokers(3), 0, {1, 2}, id="generateLeaderAndIsrUpdates-brokerToRemove-excluded"),
        pytest.param((BrokerRegistration(100, False), None, BrokerRegistration(102, False)), None, {0, 2},
                     id="isActive-unregistered-excluded"),
    ],
)
def test_acceptable_leaders(regs, exclude, expected):
    assert C.acceptable_leaders(regs, exclude) == frozenset(expected)


# ---------------------------------------------------------------------------------------------
# elect_leader
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "partition, target_isr, target_elr, acceptable, election, elr_enabled, expected",
    [
        # PartitionChangeBuilderTest#testElectLeader
        pytest.param(FOO, (1, 2, 3), (), NOT_3, C.PREFERRED, True, (2, False), id="testElectLeader-foo-preferred"),
        pytest.param(FOO, (1, 2, 3), (), NOT_3, C.ONLINE, True, (1, False), id="testElectLeader-foo-keeps-leader"),
        pytest.param(FOO, (1, 2, 3), (), NOT_3, C.UNCLEAN, True, (1, False), id="testElectLeader-foo-unclean-prefers-isr"),
        pytest.param(FOO, (1, 3), (2,), NOT_3, C.ONLINE, True, (1, False), id="testElectLeader-foo-isr13"),
        pytest.param(FOO, (1, 3), (2,), NOT_3, C.UNCLEAN, True, (1, False), id="testElectLeader-foo-isr13-unclean"),
        pytest.param(FOO, (3,), (1, 2), NOT_3, C.ONLINE, True, (NO_LEADER, False), id="testElectLeader-foo-isr3-offline"),
        pytest.param(FOO, (3,), (1, 2), NOT_3, C.UNCLEAN, True, (2, True), id="testElectLeader-foo-isr3-unclean"),
        pytest.param(BAZ, (1, 3), (), every(4), C.PREFERRED, True, (3, False), id="testElectLeader-baz-preferred-keeps-leader"),
        pytest.param(BAZ, (1, 3), (), every(4), C.ONLINE, True, (3, False), id="testElectLeader-baz-online"),
        pytest.param(BAZ, (1, 3), (), every(4), C.UNCLEAN, True, (3, False), id="testElectLeader-baz-unclean"),
        # ONLINE: the first valid replica in replica order, not the smallest id
        pytest.param(reg((2, 1, 3), (1, 2, 3), 3), (1, 2), (), every(4), C.ONLINE, False, (2, False),
                     id="electAnyLeader-replica-order"),
        # PREFERRED: replicas[0] invalid, current leader invalid -> first valid of replicas[1:]
        pytest.param(reg((2, 1, 3), (1, 3), 0), (1, 3), (), every(4), C.PREFERRED, False, (1, False),
                     id="electPreferredLeader-skip-first"),
        pytest.param(reg((3, 2, 1, 0), (1, 2, 3), 3), (1, 2), (), frozenset({0, 1, 2}), C.PREFERRED, False, (2, False),
                     id="electPreferredLeader-rest-in-replica-order"),
        # ELR: valid only when the target ISR is empty (PartitionChangeBuilderTest#testEligibleLeaderReplicas_ElrCanBeElected)
        pytest.param(reg((1, 2, 3, 4), (1,), 1, elr=(3,)), (), (1, 3), frozenset({0, 2, 3, 4}), C.PREFERRED, True,
                     (3, False), id="testEligibleLeaderReplicas_ElrCanBeElected"),
        pytest.param(reg((1, 2, 3, 4), (1, 2), 1, elr=(3,)), (2,), (1, 3), frozenset({3, 4}), C.ONLINE, True,
                     (NO_LEADER, False), id="isValidNewLeader-elr-ignored-when-isr-nonempty"),
        # LastKnownELR (testEligibleLeaderReplicas_ElectLastKnownLeader): elected, unclean
        pytest.param(reg((1, 2, 3, 4), (), NO_LEADER, lke=(1,)), (), (), every(5), C.PREFERRED, True, (1, True),
                     id="testEligibleLeaderReplicas_ElectLastKnownLeader"),
        pytest.param(reg((1, 2, 3, 4), (), NO_LEADER, lke=(1,)), (), (), every(5), C.ONLINE, True, (1, True),
                     id="canElectLastKnownLeader-online"),
        # ... before an unclean election picks the first acceptable replica
        pytest.param(reg((1, 2, 3, 4), (), NO_LEADER, lke=(3,)), (), (), every(5), C.UNCLEAN, True, (3, True),
                     id="electAnyLeader-last-known-leader-before-unclean"),
        # KAFKA-19522: a last known leader that is not acceptable is not elected
        pytest.param(reg((1, 2, 3, 4), (), NO_LEADER, lke=(1,)), (), (), frozenset({2, 3, 4}), C.ONLINE, True,
                     (NO_LEADER, False), id="testEligibleLeaderReplicas_NotEligibleLastKnownLeader-KAFKA-19522"),
        pytest.param(reg((1, 2, 3, 4), (), NO_LEADER, lke=(1,)), (), (), frozenset({2, 3, 4}), C.UNCLEAN, True,
                     (2, True), id="KAFKA-19522-unacceptable-last-known-then-unclean"),
        pytest.param(reg((1, 2, 3, 4), (), NO_LEADER, lke=(1,)), (), (3,), frozenset({1, 2, 4}), C.PREFERRED, True,
                     (NO_LEADER, False), id="testEligibleLeaderReplicas_ElectLastKnownLeaderShouldFail-elr-nonempty"),
        pytest.param(reg((1, 2, 3, 4), (), NO_LEADER, lke=(1,)), (), (), every(5), C.ONLINE, False,
                     (NO_LEADER, False), id="canElectLastKnownLeader-needs-elr-enabled"),
        pytest.param(reg((1, 2, 3, 4), (), NO_LEADER, lke=(1, 2)), (), (), every(5), C.ONLINE, True,
                     (NO_LEADER, False), id="canElectLastKnownLeader-needs-exactly-one"),
        # UNCLEAN with nobody acceptable
        pytest.param(reg((1, 2), (1,), NO_LEADER), (1,), (), frozenset(), C.UNCLEAN, False, (NO_LEADER, False),
                     id="electAnyLeader-unclean-nobody-acceptable"),
    ],
)
def test_elect_leader(partition, target_isr, target_elr, acceptable, election, elr_enabled, expected):
    got = C.elect_leader(partition, target_isr, target_elr, acceptable, election, elr_enabled,
                         partition.last_known_elr)
    assert got == expected


def test_elect_leader_use_last_known_leader_off():
    # PartitionChangeBuilderTest: setUseLastKnownLeaderInBalancedRecovery(false) disables the LastKnownELR election
    partition = reg((1, 2, 3, 4), (), NO_LEADER, lke=(1,))
    assert C.elect_leader(partition, (), (), every(5), C.ONLINE, True, (1,), use_last_known_leader=False) == (
        NO_LEADER, False)


def test_elect_leader_rejects_unknown_election():
    with pytest.raises(ValueError):
        C.elect_leader(FOO, (1,), (), NOT_3, "FASTEST", False, ())


# ---------------------------------------------------------------------------------------------
# partition_change (PartitionChangeBuilder.build + PartitionRegistration.merge)
# ---------------------------------------------------------------------------------------------

def change(partition, **kw):
    kw.setdefault("min_isr", 2)
    kw.setdefault("elr_enabled", True)
    return C.partition_change(partition, **kw)


@pytest.mark.parametrize(
    "partition, kwargs",
    [
        # PartitionChangeBuilderTest#testNoChange
        pytest.param(FOO, dict(acceptable=NOT_3), id="testNoChange-foo"),
        pytest.param(FOO, dict(acceptable=NOT_3, election=C.UNCLEAN), id="testNoChange-foo-unclean"),
        pytest.param(BAZ, dict(acceptable=every(4), election=C.PREFERRED), id="testNoChange-baz-preferred"),
        pytest.param(FOO, dict(acceptable=NOT_3, target_isr=(1, 2, 3)), id="testNoChange-same-isr"),
        # testEligibleLeaderReplicas_ElectLastKnownLeaderShouldFail: no record at all
        pytest.param(reg((1, 2, 3, 4), (), NO_LEADER, elr=(3,), lke=(1,)),
                     dict(acceptable=frozenset({1, 2, 4}), min_isr=3, election=C.PREFERRED, target_isr=()),
                     id="testEligibleLeaderReplicas_ElectLastKnownLeaderShouldFail"),
        # KAFKA-19522 testEligibleLeaderReplicas_NotEligibleLastKnownLeader: no record
        pytest.param(reg((1, 2, 3, 4), (), NO_LEADER, lke=(1,)),
                     dict(acceptable=frozenset({2, 3, 4}), min_isr=3, election=C.PREFERRED, target_isr=()),
                     id="testEligibleLeaderReplicas_NotEligibleLastKnownLeader"),
        # ELR disabled, last ISR member gone, leader already -1: nothing to write
        pytest.param(reg((1, 2), (1,), NO_LEADER), dict(acceptable=frozenset(), elr_enabled=False, target_isr=()),
                     id="build-elr-disabled-empty-target-isr-noop"),
    ],
)
def test_partition_change_no_record(partition, kwargs):
    assert change(partition, **kwargs) is None


@pytest.mark.parametrize(
    "partition, kwargs, expected",
    [
        # PartitionChangeBuilderTest#testIsrChangeDoesntBumpLeaderEpoch / testNoLeaderEpochBumpOnIsrShrink (MV >= 3.6)
        pytest.param(FOO, dict(acceptable=NOT_3, target_isr=(2, 1)),
                     reg((2, 1, 3), (1, 2), 1, le=100, pe=201), id="testIsrChangeDoesntBumpLeaderEpoch"),
        # testLeaderEpochBumpOnIsrShrink (MV < 3.6, KAFKA-15021)
        pytest.param(FOO, dict(acceptable=NOT_3, target_isr=(2, 1), leader_epoch_bump_on_isr_shrink=True),
                     reg((2, 1, 3), (1, 2), 1, le=101, pe=201), id="testLeaderEpochBumpOnIsrShrink"),
        # testNoLeaderEpochBumpOnIsrExpansion
        pytest.param(BAZ, dict(acceptable=every(4), target_isr=(1, 2, 3), leader_epoch_bump_on_isr_shrink=True),
                     reg((2, 1, 3), (1, 2, 3), 3, le=100, pe=201), id="testNoLeaderEpochBumpOnIsrExpansion"),
        # testIsrChangeAndLeaderChange
        pytest.param(FOO, dict(acceptable=NOT_3, target_isr=(2, 3), elr_enabled=False),
                     reg((2, 1, 3), (2, 3), 2, le=101, pe=201), id="testIsrChangeAndLeaderChange"),
        # testUncleanLeaderElection (foo, ELR enabled: 2 was also an ELR candidate; unclean clears it)
        pytest.param(FOO, dict(acceptable=NOT_3, election=C.UNCLEAN, target_isr=(3,)),
                     reg((2, 1, 3), (2,), 2, le=101, pe=201, recovering=True), id="testUncleanLeaderElection-foo"),
        # testUncleanLeaderElection (offline partition with ELR and LastKnownELR: both cleared)
        pytest.param(OFFLINE_WITH_ELR, dict(acceptable=frozenset({1}), election=C.UNCLEAN),
                     reg((2, 1, 3), (1,), 1, le=101, pe=201, recovering=True), id="testUncleanLeaderElection-offline"),
        pytest.param(OFFLINE_WITH_ELR, dict(acceptable=frozenset({1}), election=C.UNCLEAN, target_isr=(2,)),
                     reg((2, 1, 3), (1,), 1, le=101, pe=201, recovering=True),
                     id="testUncleanLeaderElection-offline-target-isr-2"),
        # testUncleanSetsLeaderRecoveringState
        pytest.param(reg((1, 2, 3), (2, 3), NO_LEADER), dict(acceptable=frozenset({1}), election=C.UNCLEAN, elr_enabled=False),
                     reg((1, 2, 3), (1,), 1, le=101, pe=201, recovering=True), id="testUncleanSetsLeaderRecoveringState"),
        # testChangeInLeadershipDoesNotChangeRecoveryState: offline (ISR kept, ELR off), then back online
        pytest.param(reg((1, 2, 3), (1,), 1, recovering=True), dict(acceptable=frozenset(), elr_enabled=False, target_isr=()),
                     reg((1, 2, 3), (1,), NO_LEADER, le=101, pe=201, recovering=True),
                     id="testChangeInLeadershipDoesNotChangeRecoveryState-offline"),
        pytest.param(reg((1, 2, 3), (1,), NO_LEADER, recovering=True), dict(acceptable=every(4), elr_enabled=False),
                     reg((1, 2, 3), (1,), 1, le=101, pe=201, recovering=True),
                     id="testChangeInLeadershipDoesNotChangeRecoveryState-online"),
        # testEligibleLeaderReplicas_IsrShrinkBelowMinISR: removed members enter the ELR
        pytest.param(reg((1, 2, 3, 4), (1, 2, 3, 4), 1),
                     dict(acceptable=frozenset({1, 2, 4}), min_isr=3, election=C.PREFERRED, target_isr=(1, 2)),
                     reg((1, 2, 3, 4), (1, 2), 1, elr=(3, 4), pe=201), id="testEligibleLeaderReplicas_IsrShrinkBelowMinISR"),
        pytest.param(reg((1, 2, 3, 4), (1, 2, 3, 4), 1),
                     dict(acceptable=frozenset({1, 2, 4}), min_isr=3, election=C.PREFERRED, target_isr=(1, 2),
                          elr_enabled=False),
                     reg((1, 2, 3, 4), (1, 2), 1, pe=201), id="testEligibleLeaderReplicas_IsrShrinkBelowMinISR-elr-off"),
        # shrink that keeps |ISR| >= min ISR: nobody enters the ELR
        pytest.param(reg((1, 2, 3, 4), (1, 2, 3, 4), 1), dict(acceptable=every(5), min_isr=3, target_isr=(1, 2, 3)),
                     reg((1, 2, 3, 4), (1, 2, 3), 1, pe=201), id="maybePopulateTargetElr-at-min-isr-no-elr"),
        # testEligibleLeaderReplicas_IsrExpandAboveMinISR (test mode: LastKnownELR tracks ELR members)
        pytest.param(reg((1, 2, 3, 4), (1, 2), 1, elr=(3,), lke=(4,)),
                     dict(acceptable=frozenset({1, 2, 4}), min_isr=3, election=C.PREFERRED, target_isr=(1, 2, 3),
                          use_last_known_leader=False),
                     reg((1, 2, 3, 4), (1, 2, 3), 1, pe=201), id="testEligibleLeaderReplicas_IsrExpandAboveMinISR"),
        # testEligibleLeaderReplicas_IsrAddNewMemberNotInELR: ELR/LastKnownELR untouched
        pytest.param(reg((1, 2, 3, 4), (1,), 1, elr=(3,), lke=(2,)),
                     dict(acceptable=frozenset({1, 2, 4}), min_isr=3, election=C.PREFERRED, target_isr=(1, 4),
                          use_last_known_leader=False),
                     reg((1, 2, 3, 4), (1, 4), 1, elr=(3,), lke=(2,), pe=201),
                     id="testEligibleLeaderReplicas_IsrAddNewMemberNotInELR"),
        # testEligibleLeaderReplicas_RemoveUncleanShutdownReplicasFromElr
        pytest.param(reg((1, 2, 3, 4), (1,), 1, elr=(2, 3)),
                     dict(acceptable=frozenset({1, 2, 4}), min_isr=3, election=C.PREFERRED,
                          unclean_shutdown_replicas=(3,), use_last_known_leader=False),
                     reg((1, 2, 3, 4), (1,), 1, elr=(2,), lke=(3,), pe=201),
                     id="testEligibleLeaderReplicas_RemoveUncleanShutdownReplicasFromElr"),
        # testEligibleLeaderReplicas_ElrCanBeElected (both LastKnownELR modes)
        pytest.param(reg((1, 2, 3, 4), (1,), 1, elr=(3,)),
                     dict(acceptable=frozenset({2, 3, 4}), min_isr=3, election=C.PREFERRED, target_isr=()),
                     reg((1, 2, 3, 4), (3,), 3, elr=(1,), le=101, pe=201),
                     id="testEligibleLeaderReplicas_ElrCanBeElected-lastKnownLeaderEnabled"),
        pytest.param(reg((1, 2, 3, 4), (1,), 1, elr=(3,), lke=(2,)),
                     dict(acceptable=frozenset({2, 3, 4}), min_isr=3, election=C.PREFERRED, target_isr=(),
                          use_last_known_leader=False),
                     reg((1, 2, 3, 4), (3,), 3, elr=(1,), lke=(2,), le=101, pe=201),
                     id="testEligibleLeaderReplicas_ElrCanBeElected-lastKnownLeaderDisabled"),
        # testEligibleLeaderReplicas_IsrCanShrinkToZero: LastKnownELR := [last leader]
        pytest.param(reg((1, 2, 3, 4), (1, 2, 3, 4), 1),
                     dict(acceptable=frozenset(), min_isr=3, election=C.PREFERRED, target_isr=()),
                     reg((1, 2, 3, 4), (), NO_LEADER, elr=(1, 2, 3, 4), lke=(1,), le=101, pe=201),
                     id="testEligibleLeaderReplicas_IsrCanShrinkToZero"),
        pytest.param(reg((1, 2, 3, 4), (1, 2, 3, 4), 1),
                     dict(acceptable=frozenset(), min_isr=3, election=C.PREFERRED, target_isr=(),
                          use_last_known_leader=False),
                     reg((1, 2, 3, 4), (), NO_LEADER, elr=(1, 2, 3, 4), le=101, pe=201),
                     id="testEligibleLeaderReplicas_IsrCanShrinkToZero-lastKnownLeaderDisabled"),
        # ... and then an unclean shutdown while leaderless: ELR shrinks, LastKnownELR stays frozen
        pytest.param(reg((1, 2, 3, 4), (), NO_LEADER, elr=(1, 2, 3, 4), lke=(1,), le=101, pe=201),
                     dict(acceptable=frozenset(), min_isr=3, election=C.PREFERRED, unclean_shutdown_replicas=(2,)),
                     reg((1, 2, 3, 4), (), NO_LEADER, elr=(1, 3, 4), lke=(1,), le=101, pe=202),
                     id="testEligibleLeaderReplicas_IsrCanShrinkToZero-then-unclean-shutdown"),
        # testEligibleLeaderReplicas_ElectLastKnownLeader: unclean winner, RECOVERING, LastKnownELR cleared
        pytest.param(reg((1, 2, 3, 4), (), NO_LEADER, lke=(1,)),
                     dict(acceptable=every(5), min_isr=3, election=C.PREFERRED, target_isr=()),
                     reg((1, 2, 3, 4), (1,), 1, le=101, pe=201, recovering=True),
                     id="testEligibleLeaderReplicas_ElectLastKnownLeader"),
        # ELR disabled: the last ISR member stays while the leader becomes -1 (leader epoch bumps)
        pytest.param(reg((1, 2), (1,), 1), dict(acceptable=frozenset({2}), elr_enabled=False, target_isr=()),
                     reg((1, 2), (1,), NO_LEADER, le=101, pe=201), id="build-elr-disabled-isr-never-empty"),
        # ELR disabled clears a leftover ELR
        pytest.param(reg((1, 2, 3), (1,), 1, elr=(2,)), dict(acceptable=every(4), elr_enabled=False),
                     reg((1, 2, 3), (1,), 1, pe=201), id="maybeUpdateRecordElr-elr-disabled-clears"),
        # effective min ISR = min(min.insync.replicas, RF) (ReplicationControlManagerTest#testEligibleLeaderReplicas_EffectiveMinIsr)
        pytest.param(reg((0, 1, 2), (0, 1, 2), 0, elr=(), lke=()),
                     dict(acceptable=every(3), min_isr=5, target_isr=(0, 1, 2), target_recovering=False),
                     None, id="testEligibleLeaderReplicas_EffectiveMinIsr-full-isr-no-elr"),
        pytest.param(reg((0, 1, 2), (0, 1, 2), 0), dict(acceptable=every(3), min_isr=5, target_isr=(0, 1)),
                     reg((0, 1, 2), (0, 1), 0, elr=(2,), pe=201), id="testEligibleLeaderReplicas_EffectiveMinIsr-shrink"),
        # AlterPartition's RECOVERED request ends the recovery (no leader epoch bump)
        pytest.param(reg((1, 2), (1,), 1, recovering=True), dict(acceptable=every(3), target_recovering=False),
                     reg((1, 2), (1,), 1, pe=201), id="build-target-leader-recovery-state"),
        # LastKnownELR cleared when the partition gets a leader from the ISR
        pytest.param(reg((1, 2, 3), (2,), NO_LEADER, lke=(1,)), dict(acceptable=every(4), min_isr=1),
                     reg((1, 2, 3), (2,), 2, le=101, pe=201), id="maybeUpdateLastKnownLeader-clear-on-leader"),
    ],
)
def test_partition_change(partition, kwargs, expected):
    assert change(partition, **kwargs) == expected


def test_partition_change_isr_shrink_to_zero_then_elect_last_known_leader():
    # PartitionChangeBuilderTest#testEligibleLeaderReplicas_IsrCanShrinkToZero followed by the
    # ElectLastKnownLeader path: the ELR members shut down uncleanly one by one, then 1 comes back.
    p = reg((1, 2, 3, 4), (1, 2, 3, 4), 1)
    p = change(p, acceptable=frozenset(), min_isr=3, target_isr=())
    for b in (1, 2, 3, 4):
        p = change(p, acceptable=frozenset(), min_isr=3, unclean_shutdown_replicas=(b,)) or p
    assert (p.isr, p.elr, p.last_known_elr, p.leader) == ((), (), (1,), NO_LEADER)
    p2 = change(p, acceptable=frozenset({1}), min_isr=3)
    assert (p2.leader, p2.isr, p2.recovering, p2.last_known_elr) == (1, (1,), True, ())
    assert p2.leader_epoch == p.leader_epoch + 1


# ---------------------------------------------------------------------------------------------
# validate_alter_partition / alter_partition (ReplicationControlManagerTest)
# ---------------------------------------------------------------------------------------------

# ReplicationControlManagerTest#testInvalidAlterPartitionRequests: topic foo [0, 1, 2], leader 0, epochs 0/0.
AP = reg((0, 1, 2), (0, 1, 2), 0, le=0, pe=0)
AP_BROKERS = brokers(3)


def isr(*ids, epochs=None):
    """AlterPartition's newIsrWithEpochs; isrWithDefaultEpoch uses 100 + id."""
    return tuple((b, (epochs or {}).get(b, 100 + b)) for b in ids)


def ap_request(**kw):
    base = dict(broker_id=0, broker_epoch=100, leader_epoch=0, partition_epoch=0, new_isr=isr(0, 1), recovering=False)
    base.update(kw)
    return base


@pytest.mark.parametrize(
    "partition, regs, request_, flags, expected",
    [
        # ReplicationControlManagerTest#testInvalidAlterPartitionRequests
        pytest.param(AP, AP_BROKERS, ap_request(broker_id=1, broker_epoch=101), {}, C.INVALID_REQUEST,
                     id="testInvalidAlterPartitionRequests-invalid-leader"),
        pytest.param(AP, AP_BROKERS, ap_request(broker_epoch=99), {}, C.STALE_BROKER_EPOCH,
                     id="testInvalidAlterPartitionRequests-stale-broker-epoch"),
        pytest.param(AP, AP_BROKERS, ap_request(leader_epoch=500), {}, C.NOT_CONTROLLER,
                     id="testInvalidAlterPartitionRequests-leader-epoch-ahead"),
        pytest.param(AP, AP_BROKERS, ap_request(partition_epoch=500), {}, C.NOT_CONTROLLER,
                     id="testInvalidAlterPartitionRequests-partition-epoch-ahead"),
        pytest.param(AP, AP_BROKERS, ap_request(new_isr=isr(0, 1, 3)), {}, C.INVALID_REQUEST,
                     id="testInvalidAlterPartitionRequests-isr-not-replicas"),
        pytest.param(AP, AP_BROKERS, ap_request(new_isr=isr(1, 2)), {}, C.INVALID_REQUEST,
                     id="testInvalidAlterPartitionRequests-isr-without-leader"),
        pytest.param(AP, AP_BROKERS, ap_request(new_isr=isr(0, 1), recovering=True), {}, C.INVALID_REQUEST,
                     id="testInvalidAlterPartitionRequests-recovering-isr-too-large"),
        pytest.param(AP, AP_BROKERS, ap_request(new_isr=isr(0), recovering=True), {}, C.INVALID_REQUEST,
                     id="testInvalidAlterPartitionRequests-recovered-to-recovering"),
        # validateAlterPartitionData: FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION, ISR shape
        pytest.param(reg((0, 1, 2), (0, 1, 2), 0, le=3, pe=5), AP_BROKERS, ap_request(leader_epoch=2, partition_epoch=5),
                     {}, C.FENCED_LEADER_EPOCH, id="validateAlterPartitionData-fenced-leader-epoch"),
        pytest.param(reg((0, 1, 2), (0, 1, 2), 0, le=3, pe=5), AP_BROKERS, ap_request(leader_epoch=3, partition_epoch=4),
                     {}, C.INVALID_UPDATE_VERSION, id="validateAlterPartitionData-invalid-update-version"),
        pytest.param(AP, AP_BROKERS, ap_request(new_isr=isr(0, 0, 1)), {}, C.INVALID_REQUEST,
                     id="Replicas.validateIsr-duplicate"),
        pytest.param(AP, AP_BROKERS, ap_request(new_isr=((0, 100), (-1, -1))), {}, C.INVALID_REQUEST,
                     id="Replicas.validateIsr-negative"),
        pytest.param(AP, AP_BROKERS, ap_request(new_isr=()), {}, C.INVALID_REQUEST, id="validateAlterPartitionData-empty-isr"),
        # RECOVERING partition: a 1-member RECOVERING request and a RECOVERED one are both fine
        pytest.param(reg((0, 1, 2), (0,), 0, le=0, pe=0, recovering=True), AP_BROKERS,
                     ap_request(new_isr=isr(0), recovering=True), {}, C.NONE, id="validateAlterPartitionData-recovering-ok"),
        # INELIGIBLE_REPLICA (KIP-841 fenced / shutting down, KIP-903 broker epochs)
        pytest.param(reg((1, 2, 3, 4), (1, 2, 4), 1, le=0, pe=1), brokers(5, fenced={3}),
                     ap_request(broker_id=1, broker_epoch=101, partition_epoch=1, new_isr=isr(1, 2, 3, 4)), {},
                     C.INELIGIBLE_REPLICA, id="testAlterPartitionShouldRejectFencedBrokers"),
        pytest.param(reg((1, 2, 3, 4), (1, 2, 3, 4), 1, le=0, pe=0), brokers(5, shutdown={3}),
                     ap_request(broker_id=1, broker_epoch=101, new_isr=isr(1, 2, 3, 4)), {},
                     C.INELIGIBLE_REPLICA, id="testAlterPartitionShouldRejectShuttingDownBrokers"),
        pytest.param(reg((1, 2, 3, 4), (1, 2, 3), 1, le=0, pe=1), brokers(5, epochs=[100, 101, 102, 103, 1104]),
                     ap_request(broker_id=1, broker_epoch=101, partition_epoch=1, new_isr=isr(1, 2, 3, 4)), {},
                     C.INELIGIBLE_REPLICA, id="testAlterPartitionShouldRejectBrokersWithStaleEpoch-v3"),
        pytest.param(reg((1, 2, 3, 4), (1, 2, 3), 1, le=0, pe=1), brokers(5, epochs=[100, 101, 102, 103, 1104]),
                     ap_request(broker_id=1, broker_epoch=101, partition_epoch=1, new_isr=isr(1, 2, 3, 4)),
                     dict(check_member_epochs=False), C.NONE,
                     id="testAlterPartitionShouldRejectBrokersWithStaleEpoch-pre-v3-R9"),
        pytest.param(reg((1, 2, 3, 4), (1, 2, 3), 1, le=0, pe=1), brokers(5, epochs=[100, 101, 102, 103, 1104]),
                     ap_request(broker_id=1, broker_epoch=101, partition_epoch=1,
                                new_isr=isr(1, 2, 3, 4, epochs={4: -1})), {}, C.NONE,
                     id="ineligibleReplicasForIsr-epoch-minus-one-skips-check"),
        pytest.param(reg((1, 2, 3, 4), (1, 2, 4), 1, le=0, pe=1), brokers(5, fenced={3}),
                     ap_request(broker_id=1, broker_epoch=101, partition_epoch=1, new_isr=isr(1, 2, 3, 4)),
                     dict(check_member_fenced=False), C.NONE, id="ineligibleReplicasForIsr-R8-fenced-check-off"),
        pytest.param(reg((0, 1, 2, 3), (0, 1), 0, le=0, pe=0), brokers(3),
                     ap_request(new_isr=isr(0, 1, 3)), {}, C.INELIGIBLE_REPLICA,
                     id="ineligibleReplicasForIsr-not-registered"),
        # Order of checks: the first failing one wins
        pytest.param(AP, AP_BROKERS, ap_request(broker_id=1, broker_epoch=7, leader_epoch=500), {},
                     C.STALE_BROKER_EPOCH, id="order-stale-broker-epoch-first"),
        pytest.param(reg((0, 1, 2), (0, 1, 2), 0, le=3, pe=5), AP_BROKERS,
                     ap_request(leader_epoch=4, partition_epoch=1), {}, C.NOT_CONTROLLER,
                     id="order-leader-epoch-ahead-before-partition-epoch-behind"),
        pytest.param(reg((0, 1, 2), (0, 1, 2), 0, le=3, pe=5), AP_BROKERS,
                     ap_request(leader_epoch=2, partition_epoch=6), {}, C.NOT_CONTROLLER,
                     id="order-partition-epoch-ahead-before-fenced-leader-epoch"),
        pytest.param(reg((0, 1, 2), (0, 1, 2), 0, le=3, pe=5), AP_BROKERS,
                     ap_request(broker_id=1, broker_epoch=101, leader_epoch=2, partition_epoch=5), {},
                     C.FENCED_LEADER_EPOCH, id="order-fenced-leader-epoch-before-not-leader"),
        pytest.param(reg((0, 1, 2), (0, 1, 2), 0, le=3, pe=5), AP_BROKERS,
                     ap_request(broker_id=1, broker_epoch=101, leader_epoch=3, partition_epoch=4), {},
                     C.INVALID_REQUEST, id="order-not-leader-before-invalid-update-version"),
        pytest.param(reg((0, 1, 2), (0, 1, 2), 0, le=3, pe=5), AP_BROKERS,
                     ap_request(leader_epoch=3, partition_epoch=4, new_isr=isr(1, 2)), {},
                     C.INVALID_UPDATE_VERSION, id="order-invalid-update-version-before-invalid-isr"),
        pytest.param(AP, brokers(3, fenced={1}), ap_request(new_isr=isr(1, 2)), {}, C.INVALID_REQUEST,
                     id="order-invalid-isr-before-ineligible"),
        pytest.param(AP, brokers(3, fenced={1}), ap_request(new_isr=isr(0, 1), recovering=True), {}, C.INVALID_REQUEST,
                     id="order-recovery-before-ineligible"),
        pytest.param(AP, AP_BROKERS, ap_request(new_isr=isr(0, 1, 2)), {}, C.NONE, id="validateAlterPartitionData-none"),
    ],
)
def test_validate_alter_partition(partition, regs, request_, flags, expected):
    assert C.validate_alter_partition(partition, regs, **request_, **flags) == expected


@pytest.mark.parametrize(
    "partition, regs, request_, kwargs, expected",
    [
        # ReplicationControlManagerTest#testShrinkAndExpandIsr
        pytest.param(AP, AP_BROKERS, ap_request(new_isr=isr(0, 1)), dict(min_isr=1, elr_enabled=False),
                     (C.NONE, reg((0, 1, 2), (0, 1), 0, le=0, pe=1)), id="testShrinkAndExpandIsr-shrink"),
        pytest.param(reg((0, 1, 2), (0, 1), 0, le=0, pe=1), AP_BROKERS,
                     ap_request(partition_epoch=1, new_isr=isr(0, 1, 2)), dict(min_isr=1, elr_enabled=False),
                     (C.NONE, reg((0, 1, 2), (0, 1, 2), 0, le=0, pe=2)), id="testShrinkAndExpandIsr-expand"),
        # testEligibleLeaderReplicas_ShrinkAndExpandIsr (min ISR 2)
        pytest.param(AP, AP_BROKERS, ap_request(new_isr=isr(0)), dict(min_isr=2, elr_enabled=True),
                     (C.NONE, reg((0, 1, 2), (0,), 0, elr=(1, 2), le=0, pe=1)),
                     id="testEligibleLeaderReplicas_ShrinkAndExpandIsr-shrink"),
        pytest.param(reg((0, 1, 2), (0,), 0, elr=(1, 2), le=0, pe=1), AP_BROKERS,
                     ap_request(partition_epoch=1, new_isr=isr(0, 1)), dict(min_isr=2, elr_enabled=True),
                     (C.NONE, reg((0, 1, 2), (0, 1), 0, le=0, pe=2)),
                     id="testEligibleLeaderReplicas_ShrinkAndExpandIsr-expand"),
        # testAlterPartitionShouldRejectFencedBrokers, after broker 3 is unfenced
        pytest.param(reg((1, 2, 3, 4), (1, 2, 4), 1, le=0, pe=1), brokers(5),
                     ap_request(broker_id=1, broker_epoch=101, partition_epoch=1, new_isr=isr(1, 2, 3, 4)),
                     dict(min_isr=1, elr_enabled=False),
                     (C.NONE, reg((1, 2, 3, 4), (1, 2, 3, 4), 1, le=0, pe=2)),
                     id="testAlterPartitionShouldRejectFencedBrokers-after-unfence"),
        # errors write nothing
        pytest.param(AP, AP_BROKERS, ap_request(leader_epoch=500), dict(min_isr=1, elr_enabled=False),
                     (C.NOT_CONTROLLER, None), id="alterPartition-error-no-record"),
        # a request that changes nothing: NONE, no record (the caller answers with the current registration)
        pytest.param(AP, AP_BROKERS, ap_request(new_isr=isr(0, 1, 2)), dict(min_isr=1, elr_enabled=False),
                     (C.NONE, None), id="alterPartition-no-op"),
        # the leader ends its recovery (RECOVERING -> RECOVERED): record, no leader epoch bump
        pytest.param(reg((0, 1, 2), (0,), 0, le=4, pe=7, recovering=True), AP_BROKERS,
                     ap_request(leader_epoch=4, partition_epoch=7, new_isr=isr(0)), dict(min_isr=1, elr_enabled=False),
                     (C.NONE, reg((0, 1, 2), (0,), 0, le=4, pe=8)), id="alterPartition-end-recovery"),
        # R8 variant: a fenced leader's own AlterPartition moves leadership -> NEW_LEADER_ELECTED + record
        pytest.param(AP, brokers(3, fenced={0}), ap_request(new_isr=isr(0, 1)),
                     dict(min_isr=1, elr_enabled=False, check_member_fenced=False),
                     (C.NEW_LEADER_ELECTED, reg((0, 1, 2), (0, 1), 1, le=1, pe=1)),
                     id="alterPartition-NEW_LEADER_ELECTED"),
    ],
)
def test_alter_partition(partition, regs, request_, kwargs, expected):
    assert C.alter_partition(partition, regs, **request_, **kwargs) == expected


# ---------------------------------------------------------------------------------------------
# Broker lifecycle (ReplicationControlManager.handleBroker*, generateLeaderAndIsrUpdates)
# ---------------------------------------------------------------------------------------------

LIFECYCLE = dict(min_isr=1, elr_enabled=False, unclean_election=False)


@pytest.mark.parametrize(
    "handler, partition, regs, broker, kwargs, expected",
    [
        # testFenceMultipleBrokers: partition [1, 2, 3]; fence 2, then 3 (leader 1 stays, no epoch bump)
        pytest.param(C.handle_broker_fenced, reg((1, 2, 3), (1, 2, 3), 1, le=0, pe=0), brokers(5, fenced={2}), 2,
                     LIFECYCLE, reg((1, 2, 3), (1, 3), 1, le=0, pe=1), id="testFenceMultipleBrokers-p0-fence-2"),
        pytest.param(C.handle_broker_fenced, reg((1, 2, 3), (1, 3), 1, le=0, pe=1), brokers(5, fenced={2, 3}), 3,
                     LIFECYCLE, reg((1, 2, 3), (1,), 1, le=0, pe=2), id="testFenceMultipleBrokers-p0-fence-3"),
        # partition [2, 3, 4] led by 2: 3 is fenced too, so 4 leads
        pytest.param(C.handle_broker_fenced, reg((2, 3, 4), (2, 3, 4), 2, le=0, pe=0), brokers(5, fenced={2, 3}), 2,
                     LIFECYCLE, reg((2, 3, 4), (3, 4), 4, le=1, pe=1), id="testFenceMultipleBrokers-p1-fence-leader"),
        pytest.param(C.handle_broker_fenced, reg((2, 3, 4), (3, 4), 4, le=1, pe=1), brokers(5, fenced={2, 3}), 3,
                     LIFECYCLE, reg((2, 3, 4), (4,), 4, le=1, pe=2), id="testFenceMultipleBrokers-p1-fence-3"),
        pytest.param(C.handle_broker_fenced, reg((1, 2, 3), (1, 3), 1), brokers(5, fenced={2}), 2,
                     LIFECYCLE, None, id="handleBrokerFenced-not-in-isr"),
        # testMaybeTriggerUncleanLeaderElectionForLeaderlessPartitions: last ISR member fenced, ELR off
        pytest.param(C.handle_broker_fenced, reg((1, 2, 4), (4,), 4, le=3, pe=3), brokers(5, fenced={0, 1, 2, 3, 4}), 4,
                     LIFECYCLE, reg((1, 2, 4), (4,), NO_LEADER, le=4, pe=4),
                     id="testMaybeTriggerUncleanLeaderElection-fence-last"),
        # testEligibleLeaderReplicas_BrokerFence (min ISR 3): 3 enters the ELR, then 1
        pytest.param(C.handle_broker_fenced, reg((0, 1, 2, 3), (0, 1, 3), 0, pe=1), brokers(4, fenced={2, 3}), 3,
                     dict(min_isr=3, elr_enabled=True, unclean_election=False),
                     reg((0, 1, 2, 3), (0, 1), 0, elr=(3,), pe=2), id="testEligibleLeaderReplicas_BrokerFence-3"),
        pytest.param(C.handle_broker_fenced, reg((0, 1, 2, 3), (0, 1), 0, elr=(3,), pe=2), brokers(4, fenced={1, 2, 3}), 1,
                     dict(min_isr=3, elr_enabled=True, unclean_election=False),
                     reg((0, 1, 2, 3), (0,), 0, elr=(1, 3), pe=3), id="testEligibleLeaderReplicas_BrokerFence-1"),
        pytest.param(C.handle_broker_unfenced, reg((0, 1, 2, 3), (0,), 0, elr=(1, 3), pe=3), brokers(4), 1,
                     dict(min_isr=3, elr_enabled=True, unclean_election=False), None,
                     id="testEligibleLeaderReplicas_BrokerFence-unfence-has-leader"),
        # testEligibleLeaderReplicas_CleanElection: last ISR member fenced, an unfenced ELR member leads
        pytest.param(C.handle_broker_fenced, reg((0, 1, 2, 3), (0,), 0, elr=(2, 3), pe=3),
                     brokers(4, fenced={0, 1, 3}), 0, dict(min_isr=3, elr_enabled=True, unclean_election=False),
                     reg((0, 1, 2, 3), (2,), 2, elr=(0, 3), le=101, pe=4),
                     id="testEligibleLeaderReplicas_CleanElection"),
        # ELR on, last ISR member fenced, nobody to elect: ISR empty, LastKnownELR = last leader
        pytest.param(C.handle_broker_fenced, reg((0, 1, 2), (0,), 0, elr=(1, 2)), brokers(3, fenced={0, 1, 2}), 0,
                     dict(min_isr=2, elr_enabled=True, unclean_election=False),
                     reg((0, 1, 2), (), NO_LEADER, elr=(0, 1, 2), lke=(0,), le=101, pe=201),
                     id="handleBrokerFenced-elr-isr-empty-last-known-leader"),
        # fencing with unclean.leader.election.enable: an out-of-sync replica takes over
        pytest.param(C.handle_broker_fenced, reg((0, 1, 2), (0,), 0), brokers(3, fenced={0}), 0,
                     dict(min_isr=1, elr_enabled=False, unclean_election=True),
                     reg((0, 1, 2), (1,), 1, le=101, pe=201, recovering=True), id="handleBrokerFenced-unclean"),
        # testMaybeTriggerUncleanLeaderElectionForLeaderlessPartitions: unfence 2 (static unclean config)
        pytest.param(C.handle_broker_unfenced, reg((1, 2, 4), (4,), NO_LEADER, le=4, pe=4),
                     brokers(5, fenced={0, 1, 3, 4}), 2, dict(min_isr=1, elr_enabled=False, unclean_election=True),
                     reg((1, 2, 4), (2,), 2, le=5, pe=5, recovering=True),
                     id="testMaybeTriggerUncleanLeaderElection-static"),
        pytest.param(C.handle_broker_unfenced, reg((1, 3, 4), (4,), NO_LEADER, le=4, pe=4),
                     brokers(5, fenced={0, 1, 3, 4}), 2, dict(min_isr=1, elr_enabled=False, unclean_election=True),
                     None, id="testMaybeTriggerUncleanLeaderElection-not-a-replica"),
        pytest.param(C.handle_broker_unfenced, reg((1, 2, 4), (4,), NO_LEADER, le=4, pe=4),
                     brokers(5, fenced={0, 1, 3, 4}), 2, LIFECYCLE, None,
                     id="testMaybeTriggerUncleanLeaderElection-none"),
        # only leaderless partitions are examined, even if their leader is no longer acceptable
        pytest.param(C.handle_broker_unfenced, reg((0, 1, 2), (0, 1), 0), brokers(3, shutdown={0}), 2,
                     LIFECYCLE, None, id="handleBrokerUnfenced-partitionsWithNoLeader-only"),
        # unfencing the last ISR member brings the partition back (clean)
        pytest.param(C.handle_broker_unfenced, reg((1, 2, 4), (4,), NO_LEADER, le=4, pe=4), brokers(5), 4,
                     LIFECYCLE, reg((1, 2, 4), (4,), 4, le=5, pe=5), id="handleBrokerUnfenced-isr-member"),
        # brokerToAdd is acceptable even if the registrations still show it fenced
        pytest.param(C.handle_broker_unfenced, reg((1, 2, 4), (4,), NO_LEADER, le=4, pe=4), brokers(5, fenced={4}), 4,
                     LIFECYCLE, reg((1, 2, 4), (4,), 4, le=5, pe=5), id="generateLeaderAndIsrUpdates-brokerToAdd"),
        # ELR: an unfenced ELR member of a leaderless partition is elected; LastKnownELR cleared
        pytest.param(C.handle_broker_unfenced, reg((0, 1, 2, 3), (), NO_LEADER, elr=(1, 3), lke=(0,), pe=5),
                     brokers(4, fenced={0, 2, 3}), 1, dict(min_isr=3, elr_enabled=True, unclean_election=False),
                     reg((0, 1, 2, 3), (1,), 1, elr=(3,), le=101, pe=6), id="handleBrokerUnfenced-elr-member"),
        # controlled shutdown of the leader (ReplicationControlManager.handleBrokerInControlledShutdown)
        pytest.param(C.handle_broker_in_controlled_shutdown, reg((0, 1, 2), (0, 1, 2), 0), brokers(3, shutdown={0}), 0,
                     LIFECYCLE, reg((0, 1, 2), (1, 2), 1, le=101, pe=201), id="handleBrokerInControlledShutdown-leader"),
        pytest.param(C.handle_broker_in_controlled_shutdown, reg((0, 1, 2), (0, 1, 2), 0), brokers(3, shutdown={2}), 2,
                     LIFECYCLE, reg((0, 1, 2), (0, 1), 0, pe=201), id="handleBrokerInControlledShutdown-follower"),
        pytest.param(C.handle_broker_in_controlled_shutdown, reg((0, 1, 2), (0, 1), 0), brokers(3, shutdown={2}), 2,
                     LIFECYCLE, None, id="handleBrokerInControlledShutdown-not-in-isr"),
        # a broker in controlled shutdown is not acceptable as leader for other partitions
        pytest.param(C.handle_broker_in_controlled_shutdown, reg((0, 1, 2), (0, 1, 2), 0),
                     brokers(3, shutdown={0, 1}), 0, LIFECYCLE, reg((0, 1, 2), (1, 2), 2, le=101, pe=201),
                     id="handleBrokerInControlledShutdown-skips-shutting-down"),
        # ReplicationControlManagerTest#testEligibleLeaderReplicas_UncleanShutdown (min ISR 3)
        pytest.param(C.handle_broker_unclean_shutdown, reg((0, 1, 2, 3), (0,), 0, elr=(2, 3), pe=3),
                     brokers(4, fenced={1, 2, 3}), 3, dict(min_isr=3, elr_enabled=True, unclean_election=False),
                     reg((0, 1, 2, 3), (0,), 0, elr=(2,), pe=4), id="testEligibleLeaderReplicas_UncleanShutdown-elr-member"),
        pytest.param(C.handle_broker_unclean_shutdown, reg((0, 1, 2, 3), (0,), 0, elr=(2,), pe=4),
                     brokers(4, fenced={0, 1, 2, 3}), 0, dict(min_isr=3, elr_enabled=True, unclean_election=False),
                     reg((0, 1, 2, 3), (), NO_LEADER, elr=(2,), lke=(0,), le=101, pe=5),
                     id="testEligibleLeaderReplicas_UncleanShutdown-last-isr-member"),
        pytest.param(C.handle_broker_unclean_shutdown, reg((0, 1, 2), (0, 1), 0, elr=(2,)), brokers(3, fenced={2}), 2,
                     dict(min_isr=3, elr_enabled=True, unclean_election=False, remove_from_elr=False), None,
                     id="handleBrokerUncleanShutdown-R13-stays-in-elr"),
        pytest.param(C.handle_broker_unclean_shutdown, reg((0, 1, 2), (0, 1), 0), brokers(3, fenced={1}), 1,
                     dict(min_isr=3, elr_enabled=True, unclean_election=False, remove_from_elr=False),
                     reg((0, 1, 2), (0,), 0, elr=(1,), pe=201), id="handleBrokerUncleanShutdown-R13-enters-elr"),
        pytest.param(C.handle_broker_unclean_shutdown, reg((0, 1, 2), (0, 1), 0), brokers(3, fenced={1}), 1,
                     dict(min_isr=3, elr_enabled=True, unclean_election=False),
                     reg((0, 1, 2), (0,), 0, pe=201), id="handleBrokerUncleanShutdown-isr-member-not-into-elr"),
        pytest.param(C.handle_broker_unclean_shutdown, reg((0, 1, 2), (0, 1), 0), brokers(3, fenced={2}), 2,
                     dict(min_isr=3, elr_enabled=True, unclean_election=False), None,
                     id="handleBrokerUncleanShutdown-neither-isr-nor-elr"),
        # ELR disabled: handled like fencing (KAFKA-18106)
        pytest.param(C.handle_broker_unclean_shutdown, reg((0, 1, 2), (0, 1), 0), brokers(3, fenced={0}), 0,
                     LIFECYCLE, reg((0, 1, 2), (1,), 1, le=101, pe=201), id="handleBrokerUncleanShutdown-elr-off"),
    ],
)
def test_lifecycle(handler, partition, regs, broker, kwargs, expected):
    assert handler(partition, regs, broker, **kwargs) == expected


# ---------------------------------------------------------------------------------------------
# Property (Hypothesis): partition_change keeps the registration well formed
# ---------------------------------------------------------------------------------------------

@st.composite
def registrations(draw):
    n = draw(st.integers(1, 4))
    replicas = tuple(draw(st.permutations(range(n))))
    isr = tuple(sorted(draw(st.sets(st.sampled_from(replicas)))))
    rest = [r for r in replicas if r not in isr]
    elr = tuple(sorted(draw(st.sets(st.sampled_from(rest)) if rest else st.just(set()))))
    lke = tuple(sorted(draw(st.sets(st.sampled_from(replicas), max_size=2))))
    leader = draw(st.sampled_from(isr)) if isr and draw(st.booleans()) else NO_LEADER
    return PartitionRegistration(replicas, isr, elr, lke, leader, draw(st.integers(0, 5)),
                                 draw(st.integers(0, 5)), draw(st.booleans()) and len(isr) == 1)


@settings(max_examples=400, deadline=None)
@given(
    p=registrations(),
    acceptable=st.sets(st.integers(0, 3)),
    min_isr=st.integers(1, 4),
    elr_enabled=st.booleans(),
    election=st.sampled_from(C.ELECTIONS),
    target=st.one_of(st.none(), st.sets(st.integers(0, 3))),
    unclean_shutdown=st.sets(st.integers(0, 3), max_size=1),
)
def test_property_partition_change_well_formed(p, acceptable, min_isr, elr_enabled, election, target, unclean_shutdown):
    target_isr = None if target is None else tuple(sorted(r for r in target if r in p.replicas))
    new = C.partition_change(
        p, acceptable=frozenset(acceptable), min_isr=min_isr, elr_enabled=elr_enabled, election=election,
        target_isr=target_isr, unclean_shutdown_replicas=tuple(unclean_shutdown),
    )
    if new is None:
        return
    assert new.partition_epoch == p.partition_epoch + 1
    assert new.leader_epoch == p.leader_epoch + (1 if new.leader != p.leader else 0)
    assert set(new.isr) <= set(new.replicas) and set(new.elr) <= set(new.replicas)
    assert not set(new.isr) & set(new.elr)
    assert new.isr == tuple(sorted(new.isr)) and new.elr == tuple(sorted(new.elr))
    assert new.leader == NO_LEADER or new.leader in acceptable
    if not elr_enabled:
        assert new.elr == ()
        assert new.isr or not p.isr  # the ISR never becomes empty without ELR
    if new.recovering and not p.recovering:  # an unclean election happened
        assert new.isr == (new.leader,) and new.elr == ()
    assert new != p or new.partition_epoch != p.partition_epoch


# ---------------------------------------------------------------------------------------------
# elect_leader_request (ReplicationControlManager.electLeader: the ElectLeaders RPC)
# ---------------------------------------------------------------------------------------------

def test_elect_preferred_leaders():
    """ReplicationControlManagerTest.testElectPreferredLeaders, partition by partition: brokers 1-4
    unfenced, broker 1 in controlled shutdown, broker 0 fenced."""
    regs = brokers(5, fenced={0}, shutdown={1})
    foo0 = reg((1, 2, 3), (1, 2, 3), 2, le=0, pe=0)  # the preferred replica is shutting down
    foo1 = reg((2, 3, 4), (2, 3, 4), 2, le=0, pe=0)  # already led by its preferred replica
    foo2 = reg((0, 2, 1), (0, 2, 1), 2, le=0, pe=0)  # the preferred replica is fenced
    ask = lambda r, b: C.elect_leader_request(r, b, C.PREFERRED, min_isr=2, elr_enabled=True)  # noqa: E731
    assert ask(foo0, regs) == (C.PREFERRED_LEADER_NOT_AVAILABLE, None)
    assert ask(foo1, regs) == (C.ELECTION_NOT_NEEDED, None)
    assert ask(foo2, regs) == (C.PREFERRED_LEADER_NOT_AVAILABLE, None)
    # brokers 0 and 1 registered and unfenced again: both preferred replicas take over, the
    # leader epoch moves (the record sets the leader) and nothing else changes
    regs = brokers(5)
    assert ask(foo0, regs) == (C.NONE, foo0._replace(leader=1, leader_epoch=1, partition_epoch=1))
    assert ask(foo1, regs) == (C.ELECTION_NOT_NEEDED, None)
    assert ask(foo2, regs) == (C.NONE, foo2._replace(leader=0, leader_epoch=1, partition_epoch=1))


def test_balance_partition_leaders_needs_the_preferred_replica_in_the_isr():
    """testBalancePartitionLeaders: the preferred replica is elected only from the ISR; out of
    it (or, with the ISR empty, out of the ELR) the current leader stays and no record is
    written."""
    regs = brokers(3)
    out_of_isr = reg((0, 1, 2), (1, 2), 1)
    assert C.elect_leader_request(out_of_isr, regs, C.PREFERRED, min_isr=2, elr_enabled=True) == (
        C.PREFERRED_LEADER_NOT_AVAILABLE, None)
    leaderless = reg((0, 1, 2), (), NO_LEADER, elr=(0,))
    error, change = C.elect_leader_request(leaderless, regs, C.PREFERRED, min_isr=2, elr_enabled=True)
    assert error == C.NONE and change is not None and (change.leader, change.isr, change.elr) == (0, (0,), ())


def test_elect_unclean_leaders():
    """ElectLeaders UNCLEAN: ELECTION_NOT_NEEDED while the partition has a leader; on a leaderless
    partition the first acceptable replica outside ISR and ELR is elected, RECOVERING, whatever
    unclean.leader.election.enable says; none acceptable: ELIGIBLE_LEADERS_NOT_AVAILABLE."""
    led = reg((0, 1, 2), (0,), 0)
    assert C.elect_leader_request(led, brokers(3), C.UNCLEAN, min_isr=2, elr_enabled=True) == (
        C.ELECTION_NOT_NEEDED, None)
    leaderless = reg((0, 1, 2), (), NO_LEADER, lke=(0,))
    error, change = C.elect_leader_request(leaderless, brokers(3, fenced={0}), C.UNCLEAN, min_isr=2,
                                           elr_enabled=True)
    assert error == C.NONE and change is not None
    assert (change.leader, change.isr, change.recovering, change.leader_epoch) == (1, (1,), True, 101)
    assert C.elect_leader_request(leaderless, brokers(3, fenced={0, 1, 2}), C.UNCLEAN, min_isr=2,
                                  elr_enabled=True) == (C.ELIGIBLE_LEADERS_NOT_AVAILABLE, None)


def test_elect_leader_request_rejects_an_online_election():
    with pytest.raises(ValueError):
        C.elect_leader_request(FOO, brokers(4), C.ONLINE, min_isr=2, elr_enabled=True)
