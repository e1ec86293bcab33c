"""The KRaft controller's decisions for one partition: leader election, partition-change records,
AlterPartition validation and broker lifecycle handling.

Each function is pure and follows one Kafka method (Apache Kafka 4.1, `metadata` module):
`PartitionChangeBuilder` (electLeader, build and its helpers), `ReplicationControlManager`
(alterPartition, validateAlterPartitionData, handleBroker*, generateLeaderAndIsrUpdates) and
`ClusterControlManager` (isActive, checkBrokerEpoch).

Model conventions, where they differ from Kafka's data types:
- ISR, ELR and LastKnownELR are sets, stored as sorted tuples. Kafka stores lists and compares them
  with their order, so a request that only reorders the ISR writes a record in Kafka and none here.
  The replica list keeps its order (it is the election order).
- `brokers` is indexed by broker id; an id outside it (or a None slot) is "not registered".
- Every log directory is online (LeaderAcceptor's hasOnlineDir is always true).
- A reassignment's target replica list is a set in ascending order (its first member is the
  preferred leader); a new reassignment is asked for only when none is in progress, and none is
  cancelled (kafka-reassign-partitions.sh --cancel is outside the model).
- ElectLeaders is asked for the one partition the model has (no UNKNOWN_TOPIC_OR_PARTITION).
- The model is at the latest metadata.version (ELR supported, leader recovery supported, no
  leader-epoch bump on ISR shrink); `leader_epoch_bump_on_isr_shrink=True` gives the pre-3.6 rule.
"""
from __future__ import annotations

from typing import Iterable, NamedTuple

from model.replication.records import NO_LEADER, BrokerRegistration, PartitionRegistration

# PartitionChangeBuilder.Election
ONLINE = "ONLINE"
UNCLEAN = "UNCLEAN"
PREFERRED = "PREFERRED"
ELECTIONS = (ONLINE, UNCLEAN, PREFERRED)

# org.apache.kafka.common.protocol.Errors, by name
NONE = "NONE"
STALE_BROKER_EPOCH = "STALE_BROKER_EPOCH"
NOT_CONTROLLER = "NOT_CONTROLLER"
FENCED_LEADER_EPOCH = "FENCED_LEADER_EPOCH"
INVALID_REQUEST = "INVALID_REQUEST"
INVALID_UPDATE_VERSION = "INVALID_UPDATE_VERSION"
INELIGIBLE_REPLICA = "INELIGIBLE_REPLICA"
# Only reachable when the leader itself is not an acceptable leader (check_member_fenced=False):
# the record is written AND this error is returned (ReplicationControlManager.alterPartition).
NEW_LEADER_ELECTED = "NEW_LEADER_ELECTED"
# ElectLeaders answers (ReplicationControlManager.electLeader)
ELECTION_NOT_NEEDED = "ELECTION_NOT_NEEDED"
PREFERRED_LEADER_NOT_AVAILABLE = "PREFERRED_LEADER_NOT_AVAILABLE"
ELIGIBLE_LEADERS_NOT_AVAILABLE = "ELIGIBLE_LEADERS_NOT_AVAILABLE"
# AlterPartitionReassignments answers (validateManualPartitionAssignment; an exception thrown
# while building the record: ApiError.fromThrowable)
INVALID_REPLICA_ASSIGNMENT = "INVALID_REPLICA_ASSIGNMENT"
UNKNOWN_SERVER_ERROR = "UNKNOWN_SERVER_ERROR"

# ElectLeadersRequest's electionType (org.apache.kafka.common.ElectionType)
ELECTION_TYPES = (PREFERRED, UNCLEAN)

# PartitionChangeRecord.leader when the record does not touch the leader (LeaderConstants).
_NO_LEADER_CHANGE = -2


def _registration(brokers: tuple[BrokerRegistration | None, ...], broker_id: int) -> BrokerRegistration | None:
    if 0 <= broker_id < len(brokers):
        return brokers[broker_id]
    return None


def _is_active(brokers: tuple[BrokerRegistration | None, ...], broker_id: int) -> bool:
    reg = _registration(brokers, broker_id)
    return reg is not None and not reg.fenced and not reg.in_controlled_shutdown


def acceptable_leaders(brokers: tuple[BrokerRegistration, ...], exclude: int | None = None) -> frozenset[int]:
    """ClusterControlManager.isActive (via ReplicationControlManager.LeaderAcceptor): who may lead.

    A broker is acceptable when it is registered, not fenced and not in controlled shutdown, and it
    is not `exclude` (generateLeaderAndIsrUpdates' brokerToRemove / brokerWithUncleanShutdown).
    """
    return frozenset(
        b for b in range(len(brokers)) if b != exclude and _is_active(brokers, b)
    )


def elect_leader(
    reg: PartitionRegistration,
    target_isr: tuple[int, ...],
    target_elr: tuple[int, ...],
    acceptable: frozenset[int],
    election: str,
    elr_enabled: bool,
    last_known_elr: tuple[int, ...],
    *,
    use_last_known_leader: bool = True,
    target_replicas: tuple[int, ...] | None = None,
) -> tuple[int, bool]:
    """PartitionChangeBuilder.electLeader: (new leader or NO_LEADER, whether the election is unclean).

    A replica r is a valid new leader when it is acceptable and (r is in the target ISR, or the
    target ISR is empty and r is in the target ELR).
    - PREFERRED: replicas[0] if valid; else the current leader if valid; else the first valid
      replica of replicas[1:]; else the last known leader (below); else NO_LEADER.
    - ONLINE / UNCLEAN: the current leader if valid; else the first valid replica in replica
      order; else the last known leader; else (UNCLEAN only) the first acceptable replica, unclean;
      else NO_LEADER.
    - Last known leader (canElectLastKnownLeader): ELR enabled, use_last_known_leader (Kafka's
      useLastKnownLeaderInBalancedRecovery, true in production), target ISR and target ELR both
      empty, the registration's LastKnownELR has exactly one member, and (KAFKA-19522, Kafka 4.1)
      that member is acceptable. It is elected as an unclean election.
    `target_elr` is the ELR after PartitionChangeBuilder.maybePopulateTargetElr; `last_known_elr`
    is the registration's LastKnownELR (Kafka reads `partition.lastKnownElr`, not the target).
    Replica order is the target replicas' (`target_replicas`, the registration's when None).
    """
    if election not in ELECTIONS:
        raise ValueError(f"election must be one of {ELECTIONS}, not {election!r}")
    isr = set(target_isr)
    elr = set(target_elr)

    def valid(r: int) -> bool:
        return (r in isr or (not isr and r in elr)) and r in acceptable

    def last_known_leader() -> bool:
        if not elr_enabled or not use_last_known_leader:
            return False
        if elr or isr:
            return False
        if len(last_known_elr) != 1:
            return False
        return last_known_elr[0] in acceptable  # KAFKA-19522

    replicas = reg.replicas if target_replicas is None else target_replicas
    if election == PREFERRED:
        if replicas and valid(replicas[0]):
            return replicas[0], False
        if valid(reg.leader):
            return reg.leader, False
        for r in replicas[1:]:
            if valid(r):
                return r, False
        if last_known_leader():
            return last_known_elr[0], True
        return NO_LEADER, False

    if valid(reg.leader):
        return reg.leader, False
    for r in replicas:
        if valid(r):
            return r, False
    if last_known_leader():
        return last_known_elr[0], True
    if election == UNCLEAN:
        for r in replicas:
            if r in acceptable:
                return r, True
    return NO_LEADER, False


class _Record(NamedTuple):
    """The fields a PartitionChangeRecord sets (None: not set; leader _NO_LEADER_CHANGE: not set)."""

    leader: int
    isr: tuple[int, ...] | None
    elr: tuple[int, ...] | None
    last_known_elr: tuple[int, ...] | None
    recovering: bool | None
    replicas: tuple[int, ...] | None = None
    removing: tuple[int, ...] | None = None
    adding: tuple[int, ...] | None = None

    def is_no_op(self) -> bool:
        """PartitionChangeBuilder.changeRecordIsNoOp."""
        return (
            self.leader == _NO_LEADER_CHANGE
            and self.isr is None
            and self.elr is None
            and self.last_known_elr is None
            and self.recovering is None
            and self.replicas is None
            and self.removing is None
            and self.adding is None
        )


def reassignment_replicas(current: tuple[int, ...], target: tuple[int, ...]) -> tuple[
        tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """PartitionReassignmentReplicas(currentAssignment, targetAssignment): (replicas, removing,
    adding). Removing = current - target and adding = target - current, each ascending; replicas =
    the target followed by the removing replicas."""
    removing = tuple(sorted(set(current) - set(target)))
    adding = tuple(sorted(set(target) - set(current)))
    return tuple(target) + removing, removing, adding


def maybe_complete_reassignment(
    replicas: tuple[int, ...], removing: tuple[int, ...], adding: tuple[int, ...], target_isr: tuple[int, ...],
) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """PartitionReassignmentReplicas.maybeCompleteReassignment: (replicas, ISR) once the reassignment
    can finish, else None. It finishes when the ISR without the removing replicas is non-empty and
    holds every replica left; the removing replicas leave replicas and ISR."""
    if not removing and not adding:
        return None
    isr, left = tuple(target_isr), tuple(replicas)
    if removing:
        isr = tuple(r for r in target_isr if r not in removing)
        left = tuple(r for r in replicas if r not in removing)
        if not isr or not left:
            return None
    if not set(left) <= set(isr):
        return None
    return left, isr


def _sorted(xs: Iterable[int]) -> tuple[int, ...]:
    return tuple(sorted(set(xs)))


def _build_record(
    reg: PartitionRegistration,
    *,
    acceptable: frozenset[int],
    min_isr: int,
    elr_enabled: bool,
    election: str,
    target_isr: tuple[int, ...] | None,
    unclean_shutdown_replicas: tuple[int, ...],
    target_recovering: bool | None,
    use_last_known_leader: bool,
    leader_epoch_bump_on_isr_shrink: bool,
    target_reassignment: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]] | None = None,
    reassignment_epoch_bump: bool = True,
) -> _Record:
    """PartitionChangeBuilder.build, up to (not including) the merge into a registration."""
    t_isr = _sorted(reg.isr if target_isr is None else target_isr)
    t_replicas, t_removing, t_adding = (
        (reg.replicas, reg.removing, reg.adding) if target_reassignment is None else target_reassignment)

    # completeReassignmentIfNeeded
    completed = maybe_complete_reassignment(t_replicas, t_removing, t_adding, t_isr)
    if completed is not None:
        t_replicas, t_isr = completed[0], _sorted(completed[1])
        t_removing, t_adding = (), ()
    t_elr = _sorted(reg.elr)
    t_lke = _sorted(reg.last_known_elr)
    t_recovering = reg.recovering if target_recovering is None else target_recovering
    effective_min_isr = min(min_isr, len(reg.replicas))  # ReplicationControlManager.getTopicEffectiveMinIsr

    # maybePopulateTargetElr
    if elr_enabled:
        if len(t_isr) >= effective_min_isr:
            t_elr, t_lke = (), ()
        else:
            candidates = set(t_elr) | set(reg.isr)
            t_elr = _sorted(r for r in candidates if r not in t_isr and r not in unclean_shutdown_replicas)
            candidates |= set(t_lke)
            t_lke = _sorted(r for r in candidates if r not in t_isr and r not in t_elr)

    # tryElection
    leader = _NO_LEADER_CHANGE
    isr_field: tuple[int, ...] | None = None
    recovering_field: bool | None = None
    winner, unclean = elect_leader(
        reg, t_isr, t_elr, acceptable, election, elr_enabled, reg.last_known_elr,
        use_last_known_leader=use_last_known_leader, target_replicas=t_replicas,
    )
    if winner != reg.leader:
        if winner in t_elr:  # elected from the ELR: it becomes the sole ISR member
            t_isr = (winner,)
            t_elr = tuple(r for r in t_elr if r != winner)
        leader = winner
        if unclean:
            isr_field = (winner,)
            if not reg.recovering:
                recovering_field = True

    # triggerLeaderEpochBumpForReplicaReassignmentIfNeeded: a replica leaves the replica set
    if reassignment_epoch_bump and leader == _NO_LEADER_CHANGE and not set(reg.replicas) <= set(t_replicas):
        leader = reg.leader

    # maybeUpdateRecordElr
    elr_field: tuple[int, ...] | None = None
    lke_field: tuple[int, ...] | None = None
    clean = isr_field is None
    if not clean or not elr_enabled:
        t_elr, t_lke = (), ()
    if t_elr != _sorted(reg.elr):
        elr_field = t_elr
    if not use_last_known_leader and t_lke != _sorted(reg.last_known_elr):
        lke_field = t_lke

    # The ISR: only with ELR enabled may it become empty.
    if isr_field is None and (t_isr or elr_enabled) and t_isr != _sorted(reg.isr):
        isr_field = t_isr

    # triggerLeaderEpochBumpForIsrShrinkIfNeeded (metadata.version < 3.6 only)
    if (
        leader_epoch_bump_on_isr_shrink
        and leader == _NO_LEADER_CHANGE
        and isr_field is not None
        and not set(reg.isr) <= set(isr_field)
    ):
        leader = reg.leader

    # maybeUpdateLastKnownLeader
    if use_last_known_leader and elr_enabled:
        if isr_field is not None and not isr_field and (
            len(reg.last_known_elr) != 1 or reg.last_known_elr[0] != reg.leader
        ):
            lke_field = (reg.leader,)  # the first time the partition becomes leaderless
        elif (leader >= 0 or (reg.leader != NO_LEADER and leader != NO_LEADER)) and reg.last_known_elr:
            lke_field = ()  # the partition has, or keeps, a leader

    # The requested leader recovery state (AlterPartition) overrides the election's.
    if t_recovering != reg.recovering:
        recovering_field = t_recovering

    # setAssignmentChanges
    return _Record(leader, isr_field, elr_field, lke_field, recovering_field,
                   replicas=None if tuple(t_replicas) == reg.replicas else tuple(t_replicas),
                   removing=None if tuple(t_removing) == reg.removing else tuple(t_removing),
                   adding=None if tuple(t_adding) == reg.adding else tuple(t_adding))


def _merge(reg: PartitionRegistration, record: _Record) -> PartitionRegistration:
    """PartitionRegistration.merge: the leader epoch rises iff the record sets the leader field."""
    bump = record.leader != _NO_LEADER_CHANGE
    return PartitionRegistration(
        replicas=reg.replicas if record.replicas is None else record.replicas,
        isr=_sorted(reg.isr) if record.isr is None else _sorted(record.isr),
        elr=_sorted(reg.elr) if record.elr is None else _sorted(record.elr),
        last_known_elr=_sorted(reg.last_known_elr) if record.last_known_elr is None else _sorted(record.last_known_elr),
        leader=record.leader if bump else reg.leader,
        leader_epoch=reg.leader_epoch + 1 if bump else reg.leader_epoch,
        partition_epoch=reg.partition_epoch + 1,
        recovering=reg.recovering if record.recovering is None else record.recovering,
        removing=reg.removing if record.removing is None else record.removing,
        adding=reg.adding if record.adding is None else record.adding,
    )


def partition_change(
    reg: PartitionRegistration,
    *,
    acceptable: frozenset[int],
    min_isr: int,
    elr_enabled: bool,
    election: str = ONLINE,
    target_isr: tuple[int, ...] | None = None,
    unclean_shutdown_replicas: tuple[int, ...] = (),
    target_recovering: bool | None = None,
    use_last_known_leader: bool = True,
    leader_epoch_bump_on_isr_shrink: bool = False,
    target_reassignment: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]] | None = None,
    reassignment_epoch_bump: bool = True,
) -> PartitionRegistration | None:
    """PartitionChangeBuilder.build, merged as PartitionRegistration.merge: the next registration, or None.

    Steps, in Kafka's order:
    0. completeReassignmentIfNeeded: with a reassignment in progress (the registration's, or
       `target_reassignment` = (replicas, removing, adding)), once the target ISR without the
       removing replicas is non-empty and holds every remaining replica, the removing replicas
       leave the replicas and the target ISR and the reassignment ends (maybe_complete_reassignment).
    1. maybePopulateTargetElr (ELR enabled): with effective min ISR m = min(min_isr, |replicas|),
       |target ISR| >= m clears the target ELR; else target ELR := (ELR ∪ current ISR) − target ISR
       − unclean_shutdown_replicas.
    2. tryElection (see elect_leader). A winner from the target ELR becomes the sole target ISR
       member and leaves the ELR. An unclean winner is written as the sole ISR member and the
       recovery state becomes RECOVERING (unless it already is).
    3. maybeUpdateRecordElr: an unclean election, or ELR disabled, empties the ELR.
    4. The ISR is written if it differs; it may only become empty with ELR enabled (with ELR
       disabled the last member stays while the leader becomes NO_LEADER).
    5. maybeUpdateLastKnownLeader (ELR enabled): when the written ISR is empty, LastKnownELR :=
       [previous leader] (unless it already holds exactly that); else, when the partition gets or
       keeps a leader, LastKnownELR := []. It is frozen while the partition stays leaderless.
       Note (source over protocol-rules.md §3): |ISR| >= min ISR does NOT itself clear LastKnownELR
       in production mode (useLastKnownLeaderInBalancedRecovery); only this step touches it.
    Between 2 and 3, triggerLeaderEpochBumpForReplicaReassignmentIfNeeded: when a replica leaves
    the replica set and the leader is not changing, the record sets the leader to itself, so the
    leader epoch rises (`reassignment_epoch_bump=False`: variant R19 drops it).
    6. A target recovery state different from the current one is written (AlterPartition).
    7. setAssignmentChanges: replicas, removing and adding replicas are written where they differ.
    Returns None when the record sets no field (changeRecordIsNoOp): nothing changes, no epoch moves.
    Otherwise partition_epoch + 1, and leader_epoch + 1 exactly when the record sets the leader
    (a leader change, incl. to NO_LEADER). An ISR shrink bumps the leader epoch only with
    leader_epoch_bump_on_isr_shrink=True (metadata.version < 3.6, KAFKA-15021).
    `target_isr=None` keeps the current ISR. `use_last_known_leader=False` is Kafka's test-only mode
    where LastKnownELR tracks the last ELR members instead of the last leader.
    """
    record = _build_record(
        reg,
        acceptable=acceptable,
        min_isr=min_isr,
        elr_enabled=elr_enabled,
        election=election,
        target_isr=target_isr,
        unclean_shutdown_replicas=tuple(unclean_shutdown_replicas),
        target_recovering=target_recovering,
        use_last_known_leader=use_last_known_leader,
        leader_epoch_bump_on_isr_shrink=leader_epoch_bump_on_isr_shrink,
        target_reassignment=target_reassignment,
        reassignment_epoch_bump=reassignment_epoch_bump,
    )
    if record.is_no_op():
        return None
    return _merge(reg, record)


def elect_leader_request(
    reg: PartitionRegistration,
    brokers: tuple[BrokerRegistration, ...],
    election_type: str,
    *,
    min_isr: int,
    elr_enabled: bool,
    reassignment_epoch_bump: bool = True,
) -> tuple[str, PartitionRegistration | None]:
    """ReplicationControlManager.electLeader: one partition of an ElectLeaders request (and, for
    PREFERRED, of maybeBalancePartitionLeaders, the auto.leader.rebalance.enable task).

    - PREFERRED when the leader is already replicas[0] (hasPreferredLeader), UNCLEAN when the
      partition has a leader (hasLeader): ELECTION_NOT_NEEDED, no record.
    - Else PartitionChangeBuilder with that election (LeaderAcceptor: registered, unfenced, not
      shutting down); no record (changeRecordIsNoOp): PREFERRED_LEADER_NOT_AVAILABLE for
      PREFERRED, ELIGIBLE_LEADERS_NOT_AVAILABLE for UNCLEAN.
    - Else NONE and the record. An UNCLEAN request elects outside the ISR and ELR whatever
      unclean.leader.election.enable says: the operator asked for it."""
    if election_type not in ELECTION_TYPES:
        raise ValueError(f"election_type must be one of {ELECTION_TYPES}, not {election_type!r}")
    preferred = reg.replicas[0] if reg.replicas else NO_LEADER
    if (election_type == PREFERRED and reg.leader == preferred) or (
            election_type == UNCLEAN and reg.leader != NO_LEADER):
        return ELECTION_NOT_NEEDED, None
    change = partition_change(reg, acceptable=acceptable_leaders(brokers), min_isr=min_isr,
                              elr_enabled=elr_enabled, election=election_type,
                              reassignment_epoch_bump=reassignment_epoch_bump)
    if change is None:
        return (PREFERRED_LEADER_NOT_AVAILABLE if election_type == PREFERRED
                else ELIGIBLE_LEADERS_NOT_AVAILABLE), None
    return NONE, change


class _NotAssigned(Exception):
    """PartitionRegistration.directory's IllegalArgumentException: the replica is not assigned."""


class _AssignedAcceptor(frozenset):
    """LeaderAcceptor over the registration the builder started from: asking about a broker that is
    not among its replicas throws (PartitionRegistration.directory), as Kafka's does."""

    replicas: frozenset[int]

    def __new__(cls, acceptable: frozenset[int], replicas: tuple[int, ...]) -> "_AssignedAcceptor":
        self = super().__new__(cls, acceptable)
        self.replicas = frozenset(replicas)
        return self

    def __contains__(self, broker: object) -> bool:
        if broker not in self.replicas:
            raise _NotAssigned(broker)
        return frozenset.__contains__(self, broker)


def alter_partition_reassignment(
    reg: PartitionRegistration,
    brokers: tuple[BrokerRegistration, ...],
    target: tuple[int, ...],
    *,
    min_isr: int,
    elr_enabled: bool,
    reassignment_epoch_bump: bool = True,
) -> tuple[str, PartitionRegistration | None]:
    """ReplicationControlManager.changePartitionReassignment (an AlterPartitionReassignments
    request for the partition): (error, the record or None).

    - A target that is empty, repeats a broker or names an unregistered one:
      INVALID_REPLICA_ASSIGNMENT (validateManualPartitionAssignment), no record.
    - Else PartitionChangeBuilder, election ONLINE, with replicas = target + removing, removing =
      current - target, adding = target - current (reassignment_replicas). The build completes the
      reassignment at once when the ISR already allows it (a reordering, or a removal whose
      remaining replicas are all in the ISR). ("NONE", None) when nothing changes.
    - The election asks LeaderAcceptor about a replica only when it could win (in the target ISR,
      or the ISR is empty and it is in the ELR). LeaderAcceptor looks the replica's directory up in
      the registration before the change, which throws for a replica being added: a leaderless
      partition whose ELR names a replica being added gets UNKNOWN_SERVER_ERROR, no record."""
    if not target or len(set(target)) != len(target) or any(_registration(brokers, b) is None for b in target):
        return INVALID_REPLICA_ASSIGNMENT, None
    replicas, removing, adding = reassignment_replicas(reg.replicas, target)
    try:
        change = partition_change(
            reg, acceptable=_AssignedAcceptor(acceptable_leaders(brokers), reg.replicas), min_isr=min_isr,
            elr_enabled=elr_enabled, target_reassignment=(replicas, removing or reg.removing, adding or reg.adding),
            reassignment_epoch_bump=reassignment_epoch_bump,
        )
    except _NotAssigned:
        return UNKNOWN_SERVER_ERROR, None
    return NONE, change


def reassigning(reg: PartitionRegistration) -> bool:
    """PartitionRegistration.isReassigning: removing or adding replicas are set."""
    return bool(reg.removing or reg.adding)


def _validate_isr(replicas: tuple[int, ...], isr: list[int]) -> bool:
    """Replicas.validateIsr: no negative ids, no duplicates, every member a replica."""
    if not isr:
        return True
    if any(r < 0 for r in isr) or len(set(isr)) != len(isr):
        return False
    return set(isr) <= set(replicas)


def validate_alter_partition(
    reg: PartitionRegistration,
    brokers: tuple[BrokerRegistration, ...],
    *,
    broker_id: int,
    broker_epoch: int,
    leader_epoch: int,
    partition_epoch: int,
    new_isr: tuple[tuple[int, int], ...],
    recovering: bool,
    check_member_epochs: bool = True,
    check_member_fenced: bool = True,
) -> str:
    """ReplicationControlManager.alterPartition (checkBrokerEpoch) + validateAlterPartitionData: the first error.

    Order (the first failing check wins):
    0. sender unregistered or its broker epoch differs from its registration: STALE_BROKER_EPOCH
       (ClusterControlManager.checkBrokerEpoch; Kafka fails the whole request with it).
    1. request leader epoch > current: NOT_CONTROLLER; 2. request partition epoch > current:
       NOT_CONTROLLER; 3. request leader epoch < current: FENCED_LEADER_EPOCH; 4. sender is not
       the leader: INVALID_REQUEST; 5. request partition epoch < current: INVALID_UPDATE_VERSION;
    6. new ISR not a duplicate-free, non-negative subset of the replicas: INVALID_REQUEST;
       new ISR without the current leader: INVALID_REQUEST;
    7. requested RECOVERING with |new ISR| > 1: INVALID_REQUEST; RECOVERED -> RECOVERING:
       INVALID_REQUEST;
    8. any member not registered, in controlled shutdown, fenced, or (KIP-903) with a given broker
       epoch (!= -1) that differs from its registration: INELIGIBLE_REPLICA (request version > 1).
    `check_member_fenced=False` drops the shutdown/fenced part of 8 (variant R8, pre-KIP-841);
    `check_member_epochs=False` drops the epoch part (variant R9, AlterPartition < v3 sends -1).
    """
    sender = _registration(brokers, broker_id)
    if sender is None or sender.epoch != broker_epoch:
        return STALE_BROKER_EPOCH
    if leader_epoch > reg.leader_epoch:
        return NOT_CONTROLLER
    if partition_epoch > reg.partition_epoch:
        return NOT_CONTROLLER
    if leader_epoch < reg.leader_epoch:
        return FENCED_LEADER_EPOCH
    if broker_id != reg.leader:
        return INVALID_REQUEST
    if partition_epoch < reg.partition_epoch:
        return INVALID_UPDATE_VERSION
    ids = [b for b, _ in new_isr]
    if not _validate_isr(reg.replicas, ids):
        return INVALID_REQUEST
    if reg.leader not in ids:
        return INVALID_REQUEST
    if recovering and len(ids) > 1:
        return INVALID_REQUEST
    if not reg.recovering and recovering:
        return INVALID_REQUEST
    for b, epoch in new_isr:
        member = _registration(brokers, b)
        if member is None:
            return INELIGIBLE_REPLICA
        if check_member_fenced and (member.in_controlled_shutdown or member.fenced):
            return INELIGIBLE_REPLICA
        if check_member_epochs and epoch != -1 and member.epoch != epoch:
            return INELIGIBLE_REPLICA
    return NONE


def alter_partition(
    reg: PartitionRegistration,
    brokers: tuple[BrokerRegistration, ...],
    *,
    broker_id: int,
    broker_epoch: int,
    leader_epoch: int,
    partition_epoch: int,
    new_isr: tuple[tuple[int, int], ...],
    recovering: bool,
    min_isr: int,
    elr_enabled: bool,
    election: str = ONLINE,
    check_member_epochs: bool = True,
    check_member_fenced: bool = True,
    reassignment_epoch_bump: bool = True,
) -> tuple[str, PartitionRegistration | None]:
    """ReplicationControlManager.alterPartition for one partition: (error, new registration or None).

    First validate_alter_partition; on an error nothing is written: (error, None). Then the change
    is built as Kafka does: target ISR = the request's ISR ids, target recovery state = the
    request's, acceptable leaders = active brokers (no exclusion), `election` = UNCLEAN when
    unclean.leader.election.enable is set for the topic, else ONLINE.
    - ("NONE", reg'): the record to write is reg'; answer the leader with reg'.
    - ("NONE", None): the request changes nothing and no record is written; Kafka still answers
      NONE with the CURRENT registration (leader, ISR, recovery state, leader epoch, partition
      epoch), so the caller must send back `reg` itself.
    - ("NEW_LEADER_ELECTED", reg'): the change moved leadership away from the sender: the new ISR
      completed a reassignment that removes the sender, or (check_member_fenced=False) the sender
      itself is not acceptable; Kafka writes the record AND answers with this error and no
      registration.
    """
    error = validate_alter_partition(
        reg, brokers, broker_id=broker_id, broker_epoch=broker_epoch, leader_epoch=leader_epoch,
        partition_epoch=partition_epoch, new_isr=new_isr, recovering=recovering,
        check_member_epochs=check_member_epochs, check_member_fenced=check_member_fenced,
    )
    if error != NONE:
        return error, None
    change = partition_change(
        reg,
        acceptable=acceptable_leaders(brokers),
        min_isr=min_isr,
        elr_enabled=elr_enabled,
        election=election,
        target_isr=tuple(b for b, _ in new_isr),
        target_recovering=recovering,
        reassignment_epoch_bump=reassignment_epoch_bump,
    )
    if change is not None and change.leader_epoch != reg.leader_epoch and change.leader != broker_id:
        return NEW_LEADER_ELECTED, change
    return NONE, change


def _leader_and_isr_update(
    reg: PartitionRegistration,
    brokers: tuple[BrokerRegistration, ...],
    *,
    broker_to_remove: int = NO_LEADER,
    broker_to_add: int = NO_LEADER,
    broker_with_unclean_shutdown: int = NO_LEADER,
    min_isr: int,
    elr_enabled: bool,
    unclean_election: bool,
    reassignment_epoch_bump: bool = True,
) -> PartitionRegistration | None:
    """ReplicationControlManager.generateLeaderAndIsrUpdates for one partition.

    Acceptable leader r: r is neither broker_to_remove nor broker_with_unclean_shutdown, and
    (r == broker_to_add or r is active). Target ISR = ISR without broker_to_remove and
    broker_with_unclean_shutdown; the latter is also the builder's unclean-shutdown replica.
    Election UNCLEAN when unclean.leader.election.enable, else ONLINE.
    """
    acceptable = frozenset(
        r for r in set(reg.replicas) | set(range(len(brokers)))
        if r != broker_to_remove and r != broker_with_unclean_shutdown
        and (r == broker_to_add or _is_active(brokers, r))
    )
    gone = {broker_to_remove, broker_with_unclean_shutdown} - {NO_LEADER}
    return partition_change(
        reg,
        acceptable=acceptable,
        min_isr=min_isr,
        elr_enabled=elr_enabled,
        election=UNCLEAN if unclean_election else ONLINE,
        target_isr=tuple(r for r in reg.isr if r not in gone),
        unclean_shutdown_replicas=(broker_with_unclean_shutdown,) if broker_with_unclean_shutdown != NO_LEADER else (),
        reassignment_epoch_bump=reassignment_epoch_bump,
    )


def handle_broker_fenced(
    reg: PartitionRegistration,
    brokers: tuple[BrokerRegistration, ...],
    broker_id: int,
    *,
    min_isr: int,
    elr_enabled: bool,
    unclean_election: bool,
    reassignment_epoch_bump: bool = True,
) -> PartitionRegistration | None:
    """ReplicationControlManager.handleBrokerFenced: remove the broker from the ISR, re-elect if it led.

    Only partitions with the broker in their ISR are examined (brokersToIsrs); the broker is
    excluded from the acceptable leaders and from the target ISR (generateLeaderAndIsrUpdates with
    brokerToRemove). It stays in the ELR; with ELR enabled it may enter it (ISR below min ISR).
    """
    if broker_id not in reg.isr:
        return None
    return _leader_and_isr_update(
        reg, brokers, broker_to_remove=broker_id,
        min_isr=min_isr, elr_enabled=elr_enabled, unclean_election=unclean_election,
        reassignment_epoch_bump=reassignment_epoch_bump,
    )


# ReplicationControlManager.handleBrokerInControlledShutdown: the partition change is fencing's
# (generateLeaderAndIsrUpdates with brokerToRemove, over partitionsWithBrokerInIsr); only the
# broker-registration record differs, and the model keeps no in-controlled-shutdown flag.
handle_broker_in_controlled_shutdown = handle_broker_fenced


def handle_broker_unfenced(
    reg: PartitionRegistration,
    brokers: tuple[BrokerRegistration, ...],
    broker_id: int,
    *,
    min_isr: int,
    elr_enabled: bool,
    unclean_election: bool,
    reassignment_epoch_bump: bool = True,
) -> PartitionRegistration | None:
    """ReplicationControlManager.handleBrokerUnfenced: re-examine leaderless partitions only.

    generateLeaderAndIsrUpdates with brokerToAdd: the unfenced broker is acceptable even if the
    registrations still show it fenced; the target ISR is the current ISR.
    """
    if reg.leader != NO_LEADER:
        return None
    return _leader_and_isr_update(
        reg, brokers, broker_to_add=broker_id,
        min_isr=min_isr, elr_enabled=elr_enabled, unclean_election=unclean_election,
        reassignment_epoch_bump=reassignment_epoch_bump,
    )


def handle_broker_unclean_shutdown(
    reg: PartitionRegistration,
    brokers: tuple[BrokerRegistration, ...],
    broker_id: int,
    *,
    min_isr: int,
    elr_enabled: bool,
    unclean_election: bool,
    remove_from_elr: bool = True,
    reassignment_epoch_bump: bool = True,
) -> PartitionRegistration | None:
    """ReplicationControlManager.handleBrokerUncleanShutdown (KAFKA-15586, KAFKA-18106, KAFKA-18635).

    Called when a broker re-registers without a matching clean-shutdown broker epoch.
    - ELR enabled: partitions with the broker in the ISR, then those with it in the ELR, are
      updated with brokerWithUncleanShutdown: not acceptable, removed from the target ISR and
      (when the target ISR is below min ISR) from the ELR.
    - ELR disabled: handled like fencing (brokerToRemove, ISR partitions only).
    `remove_from_elr=False` (variant R13, pre-KAFKA-15586) treats it like fencing even with ELR on:
    the broker is not removed from, and may even enter, the ELR.
    """
    if not elr_enabled or not remove_from_elr:
        return handle_broker_fenced(
            reg, brokers, broker_id, min_isr=min_isr, elr_enabled=elr_enabled, unclean_election=unclean_election,
            reassignment_epoch_bump=reassignment_epoch_bump,
        )
    if broker_id not in reg.isr and broker_id not in reg.elr:
        return None
    return _leader_and_isr_update(
        reg, brokers, broker_with_unclean_shutdown=broker_id,
        min_isr=min_isr, elr_enabled=elr_enabled, unclean_election=unclean_election,
        reassignment_epoch_bump=reassignment_epoch_bump,
    )


__all__ = [
    "ONLINE", "UNCLEAN", "PREFERRED", "ELECTIONS",
    "NONE", "STALE_BROKER_EPOCH", "NOT_CONTROLLER", "FENCED_LEADER_EPOCH", "INVALID_REQUEST",
    "INVALID_UPDATE_VERSION", "INELIGIBLE_REPLICA", "NEW_LEADER_ELECTED",
    "INVALID_REPLICA_ASSIGNMENT", "reassignment_replicas", "maybe_complete_reassignment",
    "alter_partition_reassignment", "reassigning",
    "acceptable_leaders", "elect_leader", "partition_change", "validate_alter_partition", "alter_partition",
    "handle_broker_fenced", "handle_broker_in_controlled_shutdown", "handle_broker_unfenced",
    "handle_broker_unclean_shutdown",
]
