"""What each action of the replication model reads and writes, for partial-order reduction.

The state is cut into *locations*, each a part of it that an action reads or replaces as a whole:
one field of one broker (`("broker", 2, "log")`), one broker's registration at the controller,
one field of the controller or of the ghost history, and the messages in flight per channel: the
Fetch requests and responses of one follower, the AlterPartition requests and responses of one
leader (each a sub-multiset of its field, which is their sorted union). `get` and `put` read and
replace one location, so the state is the product of its locations.

Every action value maps to a *group* (`group_of`): actions of one group have one footprint
(`Footprint`), a function of the configuration and the group only, never of the state, so the
checker can reason about actions not yet enabled. The number of messages in flight, which
`max_in_flight` bounds, is the capacity `IN_FLIGHT`: an action that may add a message "takes"
it, one that may remove one "frees" it, and reading it means a guard compares it with the bound.

The footprints include what the search's step adds after an action: `compact` (it drops metadata
records every live broker replayed) and the stutter reduction (`ReplicationModel.reduce`: a
follower's replay of a record that keeps its leader), both triggered by a change of a broker's
liveness, metadata position or leadership, or of the metadata log. Controller and fault actions
are declared as reading and writing everything: they change most of the state and every
invariant reads what they write, so a finer declaration would buy no reduction.
tests/test_footprints.py checks every declaration on breadth-first samples of every preset.
"""
from __future__ import annotations

import weakref
from typing import Any, Iterable

from model.interface import Footprint
from model.replication import actions as A
from model.replication.state import (
    AlterPartitionRequest, AlterPartitionResponse, Broker, FetchRequest, FetchResponse, History, State, compact,
)

IN_FLIGHT = ("in_flight",)

_BROKER = Broker._fields
_HISTORY = History._fields
_CONTROLLER = ("log", "uncommitted", "failovers", "reverted")  # the registrations are locations of their own
_CHANNELS = (("fetch_requests", "follower"), ("fetch_responses", "follower"), ("ap_requests", "leader"),
             ("ap_responses", "leader"))
_CHANNEL_KEY = dict(_CHANNELS)


def locations(n: int) -> list[tuple]:
    """Every location of a state with `n` brokers."""
    out: list[tuple] = [("broker", b, f) for b in range(n) for f in _BROKER]
    out += [("registration", b) for b in range(n)]
    out += [("controller", f) for f in _CONTROLLER]
    out += [(field, b) for field, _ in _CHANNELS for b in range(n)]
    out += [("history", f) for f in _HISTORY]
    return out


def get(s: State, loc: tuple) -> Any:
    kind = loc[0]
    if kind == "broker":
        return getattr(s.brokers[loc[1]], loc[2])
    if kind == "registration":
        return s.controller.brokers[loc[1]]
    if kind == "controller":
        return getattr(s.controller, loc[1])
    if kind == "history":
        return getattr(s.history, loc[1])
    key = _CHANNEL_KEY[kind]
    return tuple(m for m in getattr(s, kind) if getattr(m, key) == loc[1])


def put(s: State, loc: tuple, value: Any) -> State:
    """`s` with location `loc` replaced by `value` (and nothing else changed)."""
    kind = loc[0]
    if kind == "broker":
        b = loc[1]
        brokers = list(s.brokers)
        brokers[b] = brokers[b]._replace(**{loc[2]: value})
        return s._replace(brokers=tuple(brokers))
    if kind == "registration":
        regs = list(s.controller.brokers)
        regs[loc[1]] = value
        return s._replace(controller=s.controller._replace(brokers=tuple(regs)))
    if kind == "controller":
        return s._replace(controller=s.controller._replace(**{loc[1]: value}))
    if kind == "history":
        return s._replace(history=s.history._replace(**{loc[1]: value}))
    key = _CHANNEL_KEY[kind]
    rest = tuple(m for m in getattr(s, kind) if getattr(m, key) != loc[1])
    return s._replace(**{kind: tuple(sorted(rest + tuple(value)))})


def _b(b: int, *fields: str) -> set[tuple]:
    return {("broker", b, f) for f in (fields or _BROKER)}


def _all_b(n: int, *fields: str) -> set[tuple]:
    return {loc for b in range(n) for loc in _b(b, *fields)}


def _h(*fields: str) -> set[tuple]:
    return {("history", f) for f in fields}


def _registrations(n: int) -> set[tuple]:
    return {("registration", b) for b in range(n)}


# What the step adds after an action (see the module docstring): its trigger and its footprint.
_TRIGGER_FIELDS = ("alive", "meta", "leader", "leader_epoch")
_SETTLE_READS_FIELDS = ("alive", "meta", "leader", "leader_epoch", "partition_epoch", "replicas", "isr", "pending",
                        "leso", "followers", "log", "hw")
_SETTLE_WRITES_FIELDS = ("meta", "partition_epoch")


def _leader_progress(n: int, b: int) -> tuple[set[tuple], set[tuple]]:
    """broker_actions.leader_progress: the leader's HW, the produce purgatory and what is exposed."""
    reads = _b(b) | _registrations(n) | {("controller", "uncommitted")} | _h("pending", "acked", "exposed")
    return reads, _b(b, "hw") | _h("pending", "acked", "exposed")


def _live_pending(n: int) -> tuple[set[tuple], set[tuple]]:
    """broker_actions.live_pending: a produce whose leader lost its epoch fails."""
    return _all_b(n, "alive", "leader", "leader_epoch") | _h("pending"), _h("pending")


class Footprints:
    """The footprints of one configuration's actions (`n` brokers)."""

    get = staticmethod(get)
    put = staticmethod(put)

    def __init__(self, model: Any) -> None:
        # a weak reference: the model holds its footprints, and a cycle would keep a dropped model
        # (and everything it refers to) alive until the cyclic collector runs
        self.model = weakref.proxy(model)
        self.n = n = model.params.n
        self.locations = locations(n)
        self.every = frozenset(self.locations)
        self._cache: dict[tuple, Footprint] = {}

    def group_of(self, action: Any) -> tuple:
        """The group of an action value: its kind and the brokers that fix its footprint."""
        kind = type(action).__name__
        if isinstance(action, (A.SendFetch,)):
            return (kind, action.follower)
        if isinstance(action, (A.ReplayMetadata,)):
            return (kind, action.broker)
        if isinstance(action, A.HandleFetch):
            return (kind, action.request.follower, action.request.leader)
        if isinstance(action, A.HandleFetchResponse):
            return (kind, action.response.follower)
        if isinstance(action, A.ShrinkIsr):
            return (kind, action.leader)
        if isinstance(action, A.HandleAlterPartitionResponse):
            return (kind, action.response.leader)
        if isinstance(action, A.Produce):
            return (kind, action.leader)
        if isinstance(action, A.DropMessage):
            m = action.message
            if isinstance(m, FetchRequest):
                return (kind, "fetch_requests", m.follower)
            if isinstance(m, FetchResponse):
                return (kind, "fetch_responses", m.follower)
            if isinstance(m, AlterPartitionRequest):
                return (kind, "ap_requests", m.leader)
            assert isinstance(m, AlterPartitionResponse)
            return (kind, "ap_responses", m.leader)
        return (kind,)  # controller and fault actions: everything

    def groups(self) -> list[tuple]:
        """Every group this configuration can produce (those of `group_of`)."""
        n = self.n
        out: list[tuple] = []
        for b in range(n):
            out += [("SendFetch", b), ("ReplayMetadata", b), ("HandleFetchResponse", b), ("ShrinkIsr", b),
                    ("HandleAlterPartitionResponse", b), ("Produce", b)]
            out += [("HandleFetch", f, b) for f in range(n)]
            out += [("DropMessage", field, b) for field, _ in _CHANNELS]
        out += [(k,) for k in ("FenceBroker", "UnfenceBroker", "HandleAlterPartition", "ElectLeaders",
                               "AlterPartitionReassignments", "CommitMetadata", "ControllerFailover",
                               "ControlledShutdown", "Crash", "LossyCrash", "Restart")]
        return out

    def capacity(self, s: State) -> dict[tuple, int]:
        return {IN_FLIGHT: s.in_flight()}

    def settled(self, s: State) -> bool:
        """Whether `s` is a state the search can hold: compacted, and reduced (a state made by
        `put` may not be, and a step from it would also do what settling does)."""
        return compact(s) == s and self.model.reduce(s) == s

    def property_footprints(self) -> dict[str, frozenset]:
        """The locations each `always` property reads."""
        return _property_reads(self.n, [p.name for p in self.model.properties if p.kind == "always"])

    def dead(self, s: State) -> list[tuple]:
        """The groups no action can enable again from `s`: their budget is spent (the counters
        only grow). Their enabling sets are empty (checker/search/por.py)."""
        p, h = self.model.params, s.history
        out: list[tuple] = []
        no_fault = not p.fault_left(h)
        if no_fault or h.crashes >= p.crashes:
            out += [("Crash",), ("ControlledShutdown",), ("LossyCrash",)]
        elif h.lossy_crashes >= p.lossy_crashes:
            out.append(("LossyCrash",))
        if no_fault or 0 <= p.losses <= h.losses:
            out += [("DropMessage", field, b) for field, _ in _CHANNELS for b in range(self.n)]
        if h.reassignments >= p.reassignments:
            out.append(("AlterPartitionReassignments",))
        if s.controller.failovers >= p.controller_failovers:
            out.append(("ControllerFailover",))
        if h.next_value >= p.values:
            out += [("Produce", b) for b in range(self.n)]
        return out

    def _guard(self, kind: str) -> set[tuple]:
        return _coarse_guard(self.n, kind)

    def footprint(self, group: tuple) -> Footprint:
        fp = self._cache.get(group)
        if fp is None:
            fp = self._cache[group] = self._declare(group)
        return fp

    def _declare(self, group: tuple) -> Footprint:
        n = self.n
        kind = group[0]
        reads: set[tuple]
        writes: set[tuple]
        takes = frees = False
        reads_room = effect_room = False  # a guard, an effect that compares the messages in flight with the bound
        if kind == "SendFetch":
            f = group[1]
            reads = _b(f, "alive", "leader", "epoch", "leader_epoch", "log") | _all_b(n, "alive")
            reads |= {("fetch_requests", f), ("fetch_responses", f)}
            writes, takes, reads_room = {("fetch_requests", f)}, True, True
        elif kind == "HandleFetch":
            f, b = group[1], group[2]
            pr, pw = _leader_progress(n, b)
            reads = _b(b) | _b(f, "alive", "epoch") | _registrations(n) | {("controller", "uncommitted")}
            reads |= {("fetch_requests", f), ("fetch_responses", f), ("ap_requests", b)} | pr
            writes = {("fetch_requests", f), ("fetch_responses", f), ("ap_requests", b)}
            writes |= _b(b, "followers", "pending") | pw
            takes = frees = effect_room = True  # an ISR expansion is proposed only if there is room
        elif kind == "HandleFetchResponse":
            f = group[1]
            reads = _b(f) | _all_b(n, "alive") | {("fetch_requests", f), ("fetch_responses", f)}
            writes = _b(f, "log", "hw") | {("fetch_requests", f), ("fetch_responses", f)}
            frees = effect_room = True  # the next Fetch is sent only if there is room
        elif kind == "ShrinkIsr":
            b = group[1]
            reads = _b(b) | {("ap_requests", b)}
            writes = _b(b, "followers", "pending") | {("ap_requests", b)}
            takes = reads_room = True
        elif kind == "HandleAlterPartitionResponse":
            b = group[1]
            pr, pw = _leader_progress(n, b)
            reads = _b(b) | {("ap_responses", b), ("controller", "log"), ("controller", "uncommitted")} | pr
            writes = _b(b, "isr", "partition_epoch", "pending") | {("ap_responses", b)} | pw
            frees = True
        elif kind == "Produce":
            b = group[1]
            pr, pw = _leader_progress(n, b)
            reads = _b(b) | _h("next_value", "pending") | pr
            writes = _b(b, "log") | _h("next_value", "pending") | pw
        elif kind == "ReplayMetadata":
            b = group[1]
            pr, pw = _leader_progress(n, b)
            lr, lw = _live_pending(n)
            reads = _b(b) | {("controller", "log"), ("controller", "uncommitted")} | pr | lr
            writes = _b(b) - _b(b, "alive", "epoch", "clean") | pw | lw
        elif kind == "DropMessage":
            channel, b = group[1], group[2]
            reads = {(channel, b)} | _h("losses", "crashes", "fences")
            writes = {(channel, b)} | _h("losses")
            frees = True
        elif kind in _CONTROLLER_KINDS:
            reads, writes = _controller_footprint(n, kind)
            frees = True  # an answer held until its batch commits, or a request answered, or put back
            takes = kind == "ControllerFailover"
        else:  # fault actions: everything, but a guard that reads less
            cap = frozenset({IN_FLIGHT})
            return Footprint(self.every, self.every, takes=cap, frees=cap, reads_capacity=cap, effect_capacity=cap,
                             guard=frozenset(self._guard(kind)))
        if any(loc[0] == "broker" and loc[2] in _TRIGGER_FIELDS or loc in {("controller", "log"),
                                                                          ("controller", "uncommitted")}
               for loc in writes):
            lr, lw = _live_pending(n)
            reads |= _all_b(n, *_SETTLE_READS_FIELDS) | {("controller", "log"), ("controller", "uncommitted")} | lr
            writes |= _all_b(n, *_SETTLE_WRITES_FIELDS) | {("controller", "log")} | lw
        guard = frozenset(self._guard(kind)) if kind in _CONTROLLER_KINDS else None
        return Footprint(frozenset(reads), frozenset(writes),
                         takes=frozenset({IN_FLIGHT}) if takes else frozenset(),
                         frees=frozenset({IN_FLIGHT}) if frees else frozenset(),
                         reads_capacity=frozenset({IN_FLIGHT}) if reads_room else frozenset(),
                         effect_capacity=frozenset({IN_FLIGHT}) if effect_room else frozenset(), guard=guard)


_FAULTS = ("crashes", "fences", "losses")  # Params.fault_left: the joint budget
_CONTROLLER_KINDS = ("FenceBroker", "UnfenceBroker", "HandleAlterPartition", "ElectLeaders",
                     "AlterPartitionReassignments", "CommitMetadata", "ControllerFailover")


def _controller_footprint(n: int, kind: str) -> tuple[set[tuple], set[tuple]]:
    """A controller event: it reads the registrations, the metadata log and what it answers, and
    writes a partition-change record (`write`: the reassignment ghost too), its batch and answers
    (`settle`), and a registration or a request it consumes."""
    ctl = {("controller", f) for f in _CONTROLLER}
    reads = ctl | _registrations(n) | _h("reassigned_out_of_sync")
    writes = {("controller", "log"), ("controller", "uncommitted")} | _h("reassigned_out_of_sync")
    if kind == "FenceBroker":  # timing assumption H2 reads the Fetch requests in flight
        reads |= _all_b(n, "alive") | _h(*_FAULTS) | {("fetch_requests", b) for b in range(n)}
        writes |= _registrations(n) | _h("fences")
    elif kind == "UnfenceBroker":
        reads |= _all_b(n, "alive", "epoch")
        writes |= _registrations(n)
    elif kind == "HandleAlterPartition":
        channels = {(field, b) for field in ("ap_requests", "ap_responses") for b in range(n)}
        reads |= channels
        writes |= channels
    elif kind == "AlterPartitionReassignments":
        reads |= _h("reassignments")
        writes |= _h("reassignments")
    elif kind == "CommitMetadata":
        reads |= {("ap_responses", b) for b in range(n)}
        writes |= {("ap_responses", b) for b in range(n)}
    elif kind == "ControllerFailover":
        reads |= {("ap_requests", b) for b in range(n)}
        writes |= ctl | _registrations(n) | {("ap_requests", b) for b in range(n)}
    return reads, writes


def _coarse_guard(n: int, kind: str) -> set[tuple]:
    """What decides whether a controller or fault action is enabled (its candidate in
    `ReplicationModel.actions` and its function's guard). A partition change past the epoch
    bounds disables the action (`controller_actions.write`): the metadata log and the
    registrations it is computed from are read by every guard that writes one."""
    partition = {("controller", "log"), ("controller", "uncommitted")} | _registrations(n)
    table = {
        "FenceBroker": partition | _all_b(n, "alive") | _h(*_FAULTS) | {("fetch_requests", b) for b in range(n)},
        "UnfenceBroker": partition | _all_b(n, "alive", "epoch"),
        "HandleAlterPartition": partition | {("ap_requests", b) for b in range(n)} | _h(*_FAULTS),
        "ElectLeaders": partition,
        "AlterPartitionReassignments": partition | _h("reassignments"),
        "CommitMetadata": {("controller", "uncommitted")},
        "ControllerFailover": {("controller", "uncommitted"), ("controller", "failovers")},
        "ControlledShutdown": partition | _all_b(n, "alive") | _h(*_FAULTS),
        "Crash": _all_b(n, "alive") | _h(*_FAULTS),
        "LossyCrash": _all_b(n, "alive", "log") | _h("lossy_crashes", *_FAULTS),
        "Restart": partition | _all_b(n, "alive", "clean"),  # an unclean restart writes a partition change
    }
    return table.get(kind, set(locations(n)))


def _property_reads(n: int, names: Iterable[str]) -> dict[str, frozenset]:
    """The locations each invariant (`always` property) reads, finer than `Property.reads`."""
    reg = {("controller", "log")}
    table = {
        "leader_completeness": reg | _all_b(n, "alive", "leader", "leader_epoch", "log") | _h("exposed", "acked"),
        "candidate_completeness": reg | _all_b(n, "alive", "log") | _h("exposed"),
        "quorum_superset": reg | {("controller", "uncommitted")} | _registrations(n)
        | _all_b(n, "alive", "leader", "leader_epoch", "isr", "pending", "followers", "log"),
        "log_matching": _all_b(n, "log", "hw"),
        "consistent_reads": _all_b(n, "alive", "leader", "log", "hw") | _h("exposed"),
        "no_acked_record_lost": _all_b(n, "log") | _h("lossy_crashes", "acked"),
        "structural": reg | _registrations(n),
        "removed_replica_never_leads": reg | _all_b(n, "alive", "leader", "leader_epoch"),
        "reassignment_completes_in_sync": _h("reassigned_out_of_sync"),
    }
    every = frozenset(locations(n))
    return {name: frozenset(table[name]) if name in table else every for name in names}
