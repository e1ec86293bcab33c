"""What each action of the kraft model reads and writes, for partial-order reduction.

Locations: each node as a whole (`("node", 2)`), the messages in flight from one node to another
(`("network", 0, 1)`, a sub-set of the network, which is their sorted union), the cut links, each
fault and timer counter, and each field of the ghost history. The number of messages in flight,
which `max_in_flight` bounds, is the capacity `IN_FLIGHT`.

A node's own steps (its timers, the requests it sends, its handling of a message addressed to
it) read and write that node and every channel to or from it (a role change resets its
connections), the timer and voter-change counters, and the ghost history; they read the cut links.
Losing a message touches its channel and the fault counters only. Restarts, disk losses and link
cuts are declared as reading and writing everything. `history.last_event` is set by every step:
steps that never record an event only *reset* it (to NO_EVENT), and two resets commute.
These are coarse on purpose: every kraft invariant reads the nodes or the history that these
steps write, and the shared bound on messages in flight ties every send to every other; the
declarations are checked by tests/test_footprints.py on breadth-first samples of every preset.
"""
from __future__ import annotations

import weakref
from typing import Any

from model.interface import Footprint
from model.kraft import actions as A
from model.kraft.state import NO_EVENT, History, KraftState

IN_FLIGHT = ("in_flight",)
_COUNTS = ("restarts", "disk_losses", "cuts", "losses", "timers", "changes")
_LAST_EVENT = ("history", "last_event")
_HISTORY = tuple(f for f in History._fields if f != "last_event")

# The kinds that never record an event: they only reset last_event.
_RESET_ONLY = {"SendVote", "SendBeginQuorumEpoch", "SendFetch", "SendObserverFetch", "ClientAppend", "DropMessage",
               "HandleBeginQuorumEpochResponse", "HandleFetchRequest", "HandleVoteRequest"}
_NODE_KINDS = {"ElectionTimeout", "FetchTimeout", "CheckQuorumTimeout", "ClientAppend", "SendFetch",
               "ResignAfterRemoval"}
_PAIR_KINDS = {"SendVote", "SendBeginQuorumEpoch", "SendObserverFetch", "AddVoter", "RemoveVoter"}
_HANDLE_KINDS = {"HandleVoteRequest", "HandleVoteResponse", "HandleBeginQuorumEpochRequest",
                 "HandleBeginQuorumEpochResponse", "HandleFetchRequest", "HandleFetchResponse"}
_FAULT_KINDS = ("Restart", "DiskLoss", "CutLink", "HealLink")


def locations(n: int) -> list[tuple]:
    out: list[tuple] = [("node", i) for i in range(n)]
    out += [("network", i, j) for i in range(n) for j in range(n) if i != j]
    out += [("cut_links",)] + [("count", f) for f in _COUNTS]
    out += [("history", f) for f in History._fields]
    return out


def get(s: KraftState, loc: tuple) -> Any:
    kind = loc[0]
    if kind == "node":
        return s.nodes[loc[1]]
    if kind == "network":
        return tuple(m for m in s.network if m.src == loc[1] and m.dst == loc[2])
    if kind == "cut_links":
        return s.cut_links
    if kind == "count":
        return getattr(s, loc[1])
    return getattr(s.history, loc[1])


def put(s: KraftState, loc: tuple, value: Any) -> KraftState:
    kind = loc[0]
    if kind == "node":
        nodes = list(s.nodes)
        nodes[loc[1]] = value
        return s._replace(nodes=tuple(nodes))
    if kind == "network":
        rest = tuple(m for m in s.network if not (m.src == loc[1] and m.dst == loc[2]))
        return s._replace(network=tuple(sorted(rest + tuple(value))))
    if kind == "cut_links":
        return s._replace(cut_links=value)
    if kind == "count":
        return s._replace(**{loc[1]: value})
    return s._replace(history=s.history._replace(**{loc[1]: value}))


class Footprints:
    """The footprints of one configuration's actions (`n` nodes)."""

    get = staticmethod(get)
    put = staticmethod(put)

    def __init__(self, model: Any) -> None:
        # a weak reference: the model holds its footprints, and a cycle would keep a dropped model
        # (and everything it refers to) alive until the cyclic collector runs
        self.model = weakref.proxy(model)
        self.n = model.params.n
        self.locations = locations(self.n)
        self.every = frozenset(self.locations)
        self._cache: dict[tuple, Footprint] = {}

    def group_of(self, action: Any) -> tuple:
        return (type(action).__name__,) + tuple(action)

    def groups(self) -> list[tuple]:
        n = self.n
        out: list[tuple] = []
        for i in range(n):
            out += [(k, i) for k in sorted(_NODE_KINDS)] + [("Restart", i), ("DiskLoss", i)]
            for j in range(n):
                if j != i:
                    out += [(k, i, j) for k in sorted(_PAIR_KINDS | _HANDLE_KINDS)]
                    if i < j:
                        out += [("CutLink", i, j), ("HealLink", i, j)]
            out += [("RemoveVoter", i, i)]
        for name in sorted(A.MESSAGE_KIND):
            out += [("DropMessage", name, i, j) for i in range(n) for j in range(n) if i != j]
        return out

    def capacity(self, s: KraftState) -> dict[tuple, int]:
        return {IN_FLIGHT: len(s.network)}

    def reset_value(self, loc: tuple) -> Any:
        assert loc == _LAST_EVENT
        return NO_EVENT

    def settled(self, s: KraftState) -> bool:
        return True  # the step normalises nothing

    def property_footprints(self) -> dict[str, frozenset]:
        """The locations each `always` property reads (by its `Property.reads`: nodes, network and
        history are whole families of locations here)."""
        families = {"nodes": ("node",), "network": ("network",), "history": ("history",),
                    "disk_losses": ("count",)}
        out = {}
        for p in self.model.properties:
            if p.kind != "always":
                continue
            if not p.reads:
                out[p.name] = self.every
                continue
            kinds = {k for r in p.reads for k in families.get(r, ("node", "network", "cut_links", "count", "history"))}
            out[p.name] = frozenset(loc for loc in self.locations if loc[0] in kinds)
        return out

    def footprint(self, group: tuple) -> Footprint:
        fp = self._cache.get(group)
        if fp is None:
            fp = self._cache[group] = self._declare(group)
        return fp

    def _touching(self, i: int) -> set[tuple]:
        return {("network", i, j) for j in range(self.n) if j != i} | {("network", j, i) for j in range(self.n) if j != i}

    def _declare(self, group: tuple) -> Footprint:
        kind = group[0]
        cap = frozenset({IN_FLIGHT})
        if kind in _FAULT_KINDS:
            return Footprint(self.every, self.every, takes=cap, frees=cap, reads_capacity=cap, effect_capacity=cap)
        if kind == "DropMessage":
            # both directions: a message's slot (network.slot_of) also holds the answer to it
            channel = {("network", group[2], group[3]), ("network", group[3], group[2])}
            counts = {("count", f) for f in ("restarts", "disk_losses", "cuts", "losses")}
            return Footprint(frozenset(channel | counts), frozenset(channel | {("count", "losses")}),
                             frees=cap, resets=frozenset({_LAST_EVENT}))
        if kind in _HANDLE_KINDS:
            i = group[2]  # the receiver
        else:
            i = group[1]
        own = {("node", i)} | self._touching(i)
        reads = own | {("cut_links",)} | {("count", f) for f in _COUNTS} | {("history", f) for f in _HISTORY}
        writes = own | {("count", "timers"), ("count", "changes")} | {("history", f) for f in _HISTORY}
        if kind in ("AddVoter", "RemoveVoter", "SendVote", "SendBeginQuorumEpoch", "SendObserverFetch"):
            reads |= {("node", group[2])} | self._touching(group[2])
            writes |= self._touching(group[2])
        resets = frozenset()
        if kind in _RESET_ONLY:
            resets = frozenset({_LAST_EVENT})
        else:
            writes.add(_LAST_EVENT)
        # a node sends a request or a response only while there is room: its effect reads the count
        return Footprint(frozenset(reads), frozenset(writes), takes=cap, frees=cap, reads_capacity=cap,
                         effect_capacity=cap, resets=resets)
