"""The network: the messages in flight, four multisets (Fetch and AlterPartition requests and
responses) kept as sorted tuples in the state.

The actions reach the messages only through the functions below: a send, the receipt of a
message an action names, the loss of the messages a predicate picks, a question about the
messages of one kind, the count of all. The proofs run the actions on a symbolic network that
answers these from replication_state's message slots (checker/proofs/derive_replication.py), so
no action iterates over the messages itself.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable

from model.replication.state import (
    AlterPartitionRequest, AlterPartitionResponse, FetchRequest, FetchResponse, State, with_message, with_messages,
    without_message,
)

# the state field holding each kind of message
CHANNELS = {FetchRequest: "fetch_requests", FetchResponse: "fetch_responses",
            AlterPartitionRequest: "ap_requests", AlterPartitionResponse: "ap_responses"}


def channel_of(m: Any) -> str:
    return CHANNELS[type(m)]


def send(s: State, m: Any) -> State:
    """Put a message in flight."""
    field = channel_of(m)
    return s._replace(**{field: with_message(getattr(s, field), m)})


def send_all(s: State, ms: Iterable[Any]) -> State:
    """Put several messages of one kind in flight at once (none: s itself)."""
    ms = tuple(ms)
    if not ms:
        return s
    field = channel_of(ms[0])
    return s._replace(**{field: with_messages(getattr(s, field), ms)})


def holds(s: State, m: Any) -> bool:
    """Is (a copy of) the message in flight?"""
    return m in getattr(s, channel_of(m))


def receive(s: State, m: Any) -> State:
    """One copy of a message in flight leaves the network (delivered or lost)."""
    field = channel_of(m)
    return s._replace(**{field: without_message(getattr(s, field), m)})


def exists(s: State, kind: type, pred: Callable[[Any], Any]) -> bool:
    """Is some message of this kind in flight for which pred holds?"""
    return any(pred(m) for m in getattr(s, CHANNELS[kind]))


def lose(s: State, kind: type, pred: Callable[[Any], Any]) -> State:
    """The messages of this kind for which pred holds leave the network (a broker's connections
    died with it)."""
    field = CHANNELS[kind]
    return s._replace(**{field: tuple(m for m in getattr(s, field) if not pred(m))})


def count(s: State) -> int:
    """Every message in flight, requests and responses: what `max_in_flight` bounds."""
    return s.in_flight()
