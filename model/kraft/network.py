"""The network: a bounded set of messages in flight, and the connection resets of RequestManager.

Messages can be delivered in any order (reordering, arbitrary delay), dropped (loss) and held
by a cut link (partition). Helpers here are pure: they take and return a KraftState.
"""
from __future__ import annotations

from model.kraft.state import REQUESTS, KraftState, Message, rpc_of


def in_flight(s: KraftState, kind: int, requester: int, responder: int) -> bool:
    """Is a request of this RPC from `requester` to `responder`, or its response, in flight?
    (RequestManager keeps one outstanding request per destination.)"""
    rpc = rpc_of(kind)
    for m in s.network:
        if rpc_of(m.kind) == rpc:
            if m.kind == rpc and m.src == requester and m.dst == responder:
                return True
            if m.kind != rpc and m.src == responder and m.dst == requester:
                return True
    return False


def send(s: KraftState, m: Message) -> KraftState:
    """Put a message in flight (the set stays sorted, hence canonical)."""
    return s._replace(network=tuple(sorted(s.network + (m,))))


def remove(s: KraftState, m: Message) -> KraftState:
    """Take a delivered or lost message out of flight."""
    network = list(s.network)
    network.remove(m)
    return s._replace(network=tuple(network))


def find(s: KraftState, kind: int, src: int, dst: int) -> Message | None:
    for m in s.network:
        if m.kind == kind and m.src == src and m.dst == dst:
            return m
    return None


def reset_connections(s: KraftState, node: int, keep_stale: bool = True) -> KraftState:
    """KafkaRaftClient.resetConnections (RequestManager.resetAll) on every role transition:
    responses to requests sent before are no longer expected. Responses already in flight to
    `node` are discarded; its requests in flight are still delivered (their side effects at
    the receiver happen) but marked not live, so no response comes back. With keep_stale off
    (config stale_requests = false) those requests are lost instead: one particular message
    loss, a subset of the behaviours, that keeps the space small."""
    network = []
    changed = False
    for m in s.network:
        if m.kind in REQUESTS and m.src == node and m.live:
            if keep_stale:
                network.append(m._replace(live=False))
            changed = True
        elif m.kind not in REQUESTS and m.dst == node:
            changed = True
        else:
            network.append(m)
    if not changed:
        return s
    return s._replace(network=tuple(sorted(network)))


def drop_addressed_to(s: KraftState, node: int) -> KraftState:
    """A restarted process has new connections: requests in flight to it are lost."""
    network = tuple(m for m in s.network if not (m.kind in REQUESTS and m.dst == node))
    return s._replace(network=network) if len(network) != len(s.network) else s


def link_cut(s: KraftState, a: int, b: int) -> bool:
    return (min(a, b), max(a, b)) in s.cut_links
