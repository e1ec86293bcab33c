"""Plain records shared by the replication model's pure rules and its state machine.

Broker ids are 0..N-1. Sets of brokers are sorted tuples, so states encode canonically.
"""
from __future__ import annotations

from typing import NamedTuple

from model.tuples import fast_fields

NO_LEADER = -1


@fast_fields
class PartitionRegistration(NamedTuple):
    """The controller's partition record (metadata PartitionRegistration)."""

    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    elr: tuple[int, ...]
    last_known_elr: tuple[int, ...]
    leader: int  # NO_LEADER when there is none
    leader_epoch: int
    partition_epoch: int
    recovering: bool  # LeaderRecoveryState.RECOVERING
    # an ongoing reassignment (removingReplicas / addingReplicas); both empty when none is
    removing: tuple[int, ...] = ()
    adding: tuple[int, ...] = ()


@fast_fields
class BrokerRegistration(NamedTuple):
    """The controller's view of one broker (ClusterControlManager / BrokerRegistration)."""

    epoch: int
    fenced: bool
    in_controlled_shutdown: bool = False


@fast_fields
class LogEntry(NamedTuple):
    """One record of a partition log: the leader epoch it was written in and its value."""

    epoch: int
    value: int
