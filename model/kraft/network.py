"""The network: a bounded set of messages in flight, and the connection resets of RequestManager.

Messages can be delivered in any order (reordering, arbitrary delay), dropped (loss) and held
by a cut link (partition). Helpers here are pure: they take and return a KraftState.

The set is keyed: RequestManager keeps one outstanding request per destination, so at most one
request of an RPC, or its response, is in flight per (requester, responder) pair, and that pair's
*slot* (rpc, requester, responder) holds it. The actions reach the network only through the
functions below, and these only through the four slot functions `at`, `put`, `update` and
`count`. The proofs run the actions on a symbolic network that answers those four with terms over
a slot array (checker/proofs/derive.py), so no action iterates over the messages itself. The cut
links likewise: `link_cut`, `cut` and `heal` take one link, and the proofs answer them with one
flag per link.
"""
from __future__ import annotations

from typing import Callable, Iterable

from model.kraft.state import REQUESTS, KraftState, Message, rpc_of

Slot = tuple[int, int, int]  # (rpc: its request kind, requester, responder)


class SlotTaken(Exception):
    """An action sent a message into a slot that already holds one."""


def slot_of(m: Message) -> Slot:
    """The slot a message occupies: a request's own pair, a response's request's."""
    if m.kind in REQUESTS:
        return m.kind, m.src, m.dst
    return m.kind - 1, m.dst, m.src


# --- the slot functions ---------------------------------------------------------------------------


def at(s: KraftState, rpc: int, requester: int, responder: int) -> Message | None:
    """The request or response in the slot, or None."""
    for m in s.network:
        if slot_of(m) == (rpc, requester, responder):
            return m
    return None


def put(s: KraftState, rpc: int, requester: int, responder: int, m: Message | None) -> KraftState:
    """The slot now holds `m` (None: empty). The tuple stays sorted, hence canonical."""
    key = (rpc, requester, responder)
    network = [x for x in s.network if slot_of(x) != key]
    if m is not None:
        network.append(m)
    return s._replace(network=tuple(sorted(network)))


def update(s: KraftState, slots: Iterable[Slot], change: Callable[[Message], Message | None]) -> KraftState:
    """Each message in one of the slots becomes change(message) (None: it leaves the network)."""
    keys = set(slots)
    network = []
    changed = False
    for m in s.network:
        new = change(m) if slot_of(m) in keys else m
        changed = changed or new is not m
        if new is not None:
            network.append(new)
    return s._replace(network=tuple(sorted(network))) if changed else s


def count(s: KraftState) -> int:
    """Messages in flight."""
    return len(s.network)


# --- what the actions use ------------------------------------------------------------------------


def in_flight(s: KraftState, kind: int, requester: int, responder: int) -> bool:
    """Is a request of this RPC from `requester` to `responder`, or its response, in flight?
    (RequestManager keeps one outstanding request per destination.)"""
    return at(s, rpc_of(kind), requester, responder) is not None


def send(s: KraftState, m: Message) -> KraftState:
    """Put a message in flight. Its slot must be empty: the senders check in_flight first, as
    RequestManager does; a sender that does not would silently replace a message, which no Kafka
    node does, so it is a model error rather than a loss."""
    slot = slot_of(m)
    if at(s, *slot) is not None:
        raise SlotTaken(f"a second message in flight in slot {slot} (rpc, requester, responder): {m}")
    return put(s, *slot, m)


def remove(s: KraftState, m: Message) -> KraftState:
    """Take a delivered or lost message out of flight."""
    return put(s, *slot_of(m), None)


def find(s: KraftState, kind: int, src: int, dst: int) -> Message | None:
    """The message of this kind from src to dst, if one is in flight."""
    rpc = rpc_of(kind)
    m = at(s, rpc, src, dst) if kind == rpc else at(s, rpc, dst, src)
    return m if m is not None and m.kind == kind else None


def reset_connections(s: KraftState, node: int, keep_stale: bool = True) -> KraftState:
    """KafkaRaftClient.resetConnections (RequestManager.resetAll) on every role transition:
    responses to requests sent before are no longer expected. Responses already in flight to
    `node` are discarded; its requests in flight are still delivered (their side effects at
    the receiver happen) but marked not live, so no response comes back. With keep_stale off
    (config stale_requests = false) those requests are lost instead: one particular message
    loss, a subset of the behaviours, that keeps the space small."""

    def reset(m: Message) -> Message | None:
        if m.kind not in REQUESTS:
            return None  # a response to node
        if not m.live:
            return m
        return m._replace(live=False) if keep_stale else None

    return update(s, _slots(s, node, requester=True), reset)


def drop_addressed_to(s: KraftState, node: int) -> KraftState:
    """A restarted process has new connections: requests in flight to it are lost."""
    return update(s, _slots(s, node, requester=False), lambda m: None if m.kind in REQUESTS else m)


def _slots(s: KraftState, node: int, requester: bool) -> list[Slot]:
    """The slots of every RPC between `node` and each other node, `node` the requester or the responder."""
    others = [j for j in range(len(s.nodes)) if j != node]
    return [(rpc, node, j) if requester else (rpc, j, node) for rpc in REQUESTS for j in others]


# --- the cut links: asked and changed one link at a time, as for the slots ------------------------


def link_cut(s: KraftState, a: int, b: int) -> bool:
    return (min(a, b), max(a, b)) in s.cut_links


def cut(s: KraftState, link: tuple[int, int]) -> KraftState:
    """`link` is cut too. The tuple stays sorted, hence canonical."""
    return s._replace(cut_links=tuple(sorted(s.cut_links + (link,))))


def heal(s: KraftState, link: tuple[int, int]) -> KraftState:
    """`link` is no longer cut."""
    return s._replace(cut_links=tuple(x for x in s.cut_links if x != link))
