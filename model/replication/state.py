"""The replication model's state: brokers, controller, network and ghost history.

Every field is an int (>= -1), a bool or a tuple of those, never None or a str: so the
built-in tuple hash of a state is the same in every process (see `Model.fingerprint`).
"""
from __future__ import annotations

from typing import NamedTuple

from model.replication.records import BrokerRegistration, LogEntry, PartitionRegistration
from model.tuples import fast_fields, fast_replace

UNKNOWN = -1  # an offset or epoch the holder does not know


@fast_fields
class FollowerState(NamedTuple):
    """The leader's view of one follower, from its last Fetch (Replica.ReplicaState)."""

    leo: int  # the follower's log end offset: the fetch offset of its last Fetch (logEndOffset)
    broker_epoch: int  # the broker epoch its last Fetch carried (brokerEpoch, KIP-903)
    caught_up: bool  # reached the leader's LEO since the leader last found it lagging (lastCaughtUpTimeMs)


NO_FOLLOWER = FollowerState(-1, -1, False)  # after a new leader epoch: nothing fetched yet


@fast_replace
class Broker(NamedTuple):
    """One broker process and its replica of the partition (Partition.scala, UnifiedLog)."""

    alive: bool
    epoch: int  # broker epoch of its latest registration
    clean: bool  # clean-shutdown marker on disk (written by a controlled shutdown)
    meta: int  # partition epoch of the last metadata record it replayed
    log: tuple[LogEntry, ...]
    hw: int
    # the partition as this broker last learnt it (metadata replay or AlterPartition response)
    leader: int
    leader_epoch: int
    partition_epoch: int
    # leader-only state (empty / UNKNOWN on followers)
    isr: tuple[int, ...]  # committed ISR
    pending: tuple[int, ...]  # ISR proposed by an AlterPartition in flight; () = none
    leso: int  # leader epoch start offset
    # per broker id (the leader's own entry unused), from its fetches; NO_FOLLOWER for a non-replica
    followers: tuple[FollowerState, ...]
    replicas: tuple[int, ...]  # leader-only: the replica set (Partition.assignmentState)

    @property
    def maximal_isr(self) -> tuple[int, ...]:
        """KIP-497: the committed ISR plus a pending expansion (a pending shrink keeps the old ISR)."""
        if not self.pending:
            return self.isr
        return tuple(sorted(set(self.isr) | set(self.pending)))

    @property
    def leo(self) -> int:
        return len(self.log)


@fast_fields
class Batch(NamedTuple):
    """One controller write the quorum has not committed yet (QuorumController's records of one
    event, appended atomically): what it changed from, and the answers that wait for its commit."""

    brokers: tuple[BrokerRegistration, ...]  # the registrations before it
    partition: PartitionRegistration  # the partition's record before it
    responses: tuple["AlterPartitionResponse", ...]  # held in the controller's purgatory until it commits


@fast_replace
class Controller(NamedTuple):
    """The active KRaft controller's in-memory state: broker registrations and the metadata log."""

    brokers: tuple[BrokerRegistration, ...]
    # The partition-change records some live broker has still to replay, and always the latest:
    # consecutive partition epochs, starting at log[0].partition_epoch (see `compact`).
    log: tuple[PartitionRegistration, ...]
    # With controller_failovers > 0: the writes the quorum has not committed, oldest first
    uncommitted: tuple[Batch, ...] = ()
    failovers: int = 0  # controller failovers so far (ghost: the budget)
    reverted: bool = False  # ghost: a failover forgot a partition-change record

    @property
    def committed_brokers(self) -> tuple[BrokerRegistration, ...]:
        """The registrations as committed: what brokers' metadata images hold."""
        return self.uncommitted[0].brokers if self.uncommitted else self.brokers

    @property
    def partition(self) -> PartitionRegistration:
        return self.log[-1]

    @property
    def committed_epoch(self) -> int:
        """The partition epoch of the last committed partition record: what brokers may replay."""
        return self.uncommitted[0].partition.partition_epoch if self.uncommitted else self.log[-1].partition_epoch

    def record(self, partition_epoch: int) -> PartitionRegistration:
        """The record that set `partition_epoch` (it must still be held)."""
        return self.log[partition_epoch - self.log[0].partition_epoch]


@fast_fields
class FetchRequest(NamedTuple):
    """Follower -> leader Fetch (FetchRequest v12+, with broker epoch as in KIP-903)."""

    follower: int
    leader: int
    broker_epoch: int
    leader_epoch: int  # current leader epoch of the follower (KIP-320)
    fetch_offset: int
    last_fetched_epoch: int


@fast_fields
class FetchResponse(NamedTuple):
    """Leader -> follower. `error` is an index into FETCH_ERRORS; records only on NONE."""

    follower: int
    leader: int
    leader_epoch: int  # the request's leader epoch (the fetcher ignores stale epochs)
    fetch_offset: int
    error: int
    diverging_epoch: int
    diverging_end_offset: int
    records: tuple[LogEntry, ...]
    hw: int  # on OFFSET_OUT_OF_RANGE: the leader's log end offset, as its ListOffsets would answer


FETCH_ERRORS = ("NONE", "NOT_LEADER_OR_FOLLOWER", "FENCED_LEADER_EPOCH", "UNKNOWN_LEADER_EPOCH", "DIVERGING_EPOCH",
                "OFFSET_OUT_OF_RANGE")
F_NONE, F_NOT_LEADER, F_FENCED, F_UNKNOWN, F_DIVERGING, F_OUT_OF_RANGE = range(len(FETCH_ERRORS))


@fast_fields
class IsrMember(NamedTuple):
    """One member of a proposed ISR (AlterPartitionRequest's BrokerState, KIP-903)."""

    broker_id: int
    broker_epoch: int  # as the leader saw it in the member's last Fetch


@fast_fields
class AlterPartitionRequest(NamedTuple):
    """Leader -> controller AlterPartition (KIP-497, per-member broker epochs from KIP-903)."""

    leader: int
    broker_epoch: int
    leader_epoch: int
    partition_epoch: int
    new_isr: tuple[IsrMember, ...]
    recovering: bool


@fast_fields
class AlterPartitionResponse(NamedTuple):
    """Controller -> leader. `error` is an index into AP_ERRORS; `registration` on NONE."""

    leader: int
    request: AlterPartitionRequest
    error: int
    registration: tuple[PartitionRegistration, ...]  # () or (the registration it answers with,)


AP_ERRORS = (
    "NONE",
    "STALE_BROKER_EPOCH",
    "NOT_CONTROLLER",
    "FENCED_LEADER_EPOCH",
    "INVALID_REQUEST",
    "INVALID_UPDATE_VERSION",
    "INELIGIBLE_REPLICA",
    "NEW_LEADER_ELECTED",
)


@fast_fields
class Pending(NamedTuple):
    """A produce request (acks=all) waiting in purgatory for the HW to pass its record."""

    value: int
    leader: int
    leader_epoch: int
    offset: int


@fast_replace
class History(NamedTuple):
    """Ghost variables: what clients saw and the fault budgets used. Not visible to the protocol."""

    next_value: int  # values are produced in order 0, 1, ...
    pending: tuple[Pending, ...]
    acked: tuple[int, ...]
    exposed: tuple[LogEntry, ...]  # the longest log prefix ever below a leader's HW (true HW = len)
    crashes: int
    lossy_crashes: int
    fences: int
    losses: int
    reassignments: int
    # a reassignment ended with a target replica outside the ISR (not after an unclean election)
    reassigned_out_of_sync: bool


@fast_replace
class State(NamedTuple):
    brokers: tuple[Broker, ...]
    controller: Controller
    fetch_requests: tuple[FetchRequest, ...]  # multisets: sorted tuples
    fetch_responses: tuple[FetchResponse, ...]
    ap_requests: tuple[AlterPartitionRequest, ...]
    ap_responses: tuple[AlterPartitionResponse, ...]
    history: History

    def in_flight(self) -> int:
        """Every message in flight, requests and responses: what `max_in_flight` bounds."""
        held = sum(len(b.responses) for b in self.controller.uncommitted) if self.controller.uncommitted else 0
        return (len(self.fetch_requests) + len(self.fetch_responses) + len(self.ap_requests) + len(self.ap_responses)
                + held)


def with_message(messages: tuple, message: object) -> tuple:
    """Add a message to a multiset of messages (kept sorted, so equal networks are equal tuples)."""
    return tuple(sorted(messages + (message,)))


def with_messages(messages: tuple, new: tuple) -> tuple:
    """Add several messages at once to a multiset of messages."""
    return tuple(sorted(messages + new)) if new else messages


def without_message(messages: tuple, message: object) -> tuple:
    """Remove one copy of a message from a multiset of messages."""
    i = messages.index(message)
    return messages[:i] + messages[i + 1 :]


def compact(s: State) -> State:
    """Forget metadata records every live broker has replayed: nothing reads them again (a dead
    broker catches up to the latest record when it restarts), so histories that differ only in
    them are one state. The latest record is always kept."""
    log = s.controller.log
    if len(log) == 1:
        return s
    replayed = min((b.meta for b in s.brokers if b.alive), default=log[-1].partition_epoch)
    drop = min(replayed - log[0].partition_epoch + 1, len(log) - 1)
    if drop <= 0:
        return s
    return s._replace(controller=s.controller._replace(log=log[drop:]))
