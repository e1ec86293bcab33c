"""The replication model's actions: small values whose repr reads like a protocol log line."""
from __future__ import annotations

from typing import NamedTuple

from model.replication.state import AlterPartitionRequest, AlterPartitionResponse, FetchRequest, FetchResponse


# controller
class FenceBroker(NamedTuple):
    broker: int


class UnfenceBroker(NamedTuple):
    broker: int


class HandleAlterPartition(NamedTuple):
    request: AlterPartitionRequest


class ElectLeaders(NamedTuple):
    election: str  # "PREFERRED" or "UNCLEAN" (ElectionType)


class AlterPartitionReassignments(NamedTuple):
    target: tuple[int, ...]  # the target replicas, ascending


# brokers
class ReplayMetadata(NamedTuple):
    broker: int


class SendFetch(NamedTuple):
    follower: int


class HandleFetch(NamedTuple):
    request: FetchRequest


class HandleFetchResponse(NamedTuple):
    response: FetchResponse


class ShrinkIsr(NamedTuple):
    leader: int
    follower: int


class HandleAlterPartitionResponse(NamedTuple):
    response: AlterPartitionResponse


class Produce(NamedTuple):
    leader: int
    value: int


# the controller quorum (controller_failovers > 0)
class CommitMetadata(NamedTuple):
    """The KRaft quorum commits the oldest uncommitted controller write."""


class ControllerFailover(NamedTuple):
    """The active controller loses leadership; the next one knows only committed records."""


# faults
class ControlledShutdown(NamedTuple):
    broker: int


class Crash(NamedTuple):
    broker: int


class LossyCrash(NamedTuple):
    broker: int
    keep: int  # records that survive: the flushed prefix


class Restart(NamedTuple):
    broker: int


class DropMessage(NamedTuple):
    message: FetchRequest | FetchResponse | AlterPartitionRequest | AlterPartitionResponse


ACTION_KINDS = (
    "FenceBroker",
    "UnfenceBroker",
    "HandleAlterPartition",
    "ReplayMetadata",
    "SendFetch",
    "HandleFetch",
    "HandleFetchResponse",
    "ShrinkIsr",
    "HandleAlterPartitionResponse",
    "Produce",
    "ControlledShutdown",
    "Crash",
    "LossyCrash",
    "Restart",
    "DropMessage",
    "ElectLeaders",
    "AlterPartitionReassignments",
    "CommitMetadata",
    "ControllerFailover",
)
