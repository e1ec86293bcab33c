"""The kraft model's actions: small immutable values whose reprs are valid Python, so a trace
reads like a protocol log (`HandleVoteRequest(src=0, dst=1)`).

Message handlers are named after KafkaRaftClient's; `src`/`dst` are the sender and receiver of
the message delivered. Timers are named after the Kafka timer that expires.
"""
from __future__ import annotations

from typing import NamedTuple

from model.kraft.state import (
    BQE_REQUEST, BQE_RESPONSE, FETCH_REQUEST, FETCH_RESPONSE, MESSAGE_NAMES, VOTE_REQUEST, VOTE_RESPONSE,
)


class ElectionTimeout(NamedTuple):
    node: int


class FetchTimeout(NamedTuple):
    node: int


class CheckQuorumTimeout(NamedTuple):
    node: int


class ClientAppend(NamedTuple):
    node: int


class SendVote(NamedTuple):
    src: int
    dst: int


class SendBeginQuorumEpoch(NamedTuple):
    src: int
    dst: int


class SendFetch(NamedTuple):
    src: int


class HandleVoteRequest(NamedTuple):
    src: int
    dst: int


class HandleVoteResponse(NamedTuple):
    src: int
    dst: int


class HandleBeginQuorumEpochRequest(NamedTuple):
    src: int
    dst: int


class HandleBeginQuorumEpochResponse(NamedTuple):
    src: int
    dst: int


class HandleFetchRequest(NamedTuple):
    src: int
    dst: int


class HandleFetchResponse(NamedTuple):
    src: int
    dst: int


class Restart(NamedTuple):
    node: int


class DiskLoss(NamedTuple):
    node: int


class CutLink(NamedTuple):
    a: int
    b: int


class HealLink(NamedTuple):
    a: int
    b: int


class DropMessage(NamedTuple):
    message: str  # a MESSAGE_NAMES entry
    src: int
    dst: int


class SendObserverFetch(NamedTuple):
    src: int  # an observer that knows no leader
    dst: int  # a bootstrap voter


class AddVoter(NamedTuple):
    leader: int
    node: int


class RemoveVoter(NamedTuple):
    leader: int
    node: int


class ResignAfterRemoval(NamedTuple):
    node: int


HANDLE_ACTION = {
    VOTE_REQUEST: HandleVoteRequest,
    VOTE_RESPONSE: HandleVoteResponse,
    BQE_REQUEST: HandleBeginQuorumEpochRequest,
    BQE_RESPONSE: HandleBeginQuorumEpochResponse,
    FETCH_REQUEST: HandleFetchRequest,
    FETCH_RESPONSE: HandleFetchResponse,
}
MESSAGE_KIND = {name: kind for kind, name in enumerate(MESSAGE_NAMES)}

ACTION_KINDS = (
    "ElectionTimeout", "FetchTimeout", "CheckQuorumTimeout", "ClientAppend",
    "SendVote", "SendBeginQuorumEpoch", "SendFetch",
    "HandleVoteRequest", "HandleVoteResponse",
    "HandleBeginQuorumEpochRequest", "HandleBeginQuorumEpochResponse",
    "HandleFetchRequest", "HandleFetchResponse",
    "Restart", "DiskLoss", "CutLink", "HealLink", "DropMessage",
    "SendObserverFetch", "AddVoter", "RemoveVoter", "ResignAfterRemoval",
)
