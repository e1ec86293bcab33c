"""Derive the replication transition relation from the model's own Python (model/replication) by
symbolic execution, as checker/proofs/derive.py does for KRaft: an action function runs on a
state whose ints and bools are Z3 stand-ins (`SInt`, `SBool`); a branch on a symbolic condition
forks the path; each completed path gives (path condition, successor), "not enabled" or a crash.

The stand-in state follows replication_state's layout:
- brokers: scalars; a log (its length forked on when first read), the ISR and pending ISR (each
  member's bit forked on when the set is first read; a membership test of one id forks on that
  bit only), the follower states and replica set (their shape, leader or not, forked on when
  first read). These are `Lazy` sequences: built on first use, once per path;
- the controller: the registrations, and the metadata log as `SymLog`, records at partition
  epochs c_start..c_latest read with symbolic indices (no fork), appended in place of slot
  c_latest + 1; `state.compact` (which model.next_state applies) runs on its own and its paths
  are merged into the new c_start;
- the network: `SymNet`, replication_state's message slots. The model reaches its messages
  only through model/replication/network.py (send, send_all, holds, receive, exists, lose,
  count); while deriving, those answer from the slots: a send fills the first empty slot (If
  terms, no fork), `exists` and `lose` explore their predicate on each slot on its own and
  merge it into one condition per slot;
- partition.py's pure rules (leader_hw, can_expand_isr, fetch_divergence, follower_truncation,
  out_of_range_truncation) and controller.py's two pure functions every controller event runs
  (validate_alter_partition: the first error of an AlterPartition; partition_change: the next
  partition registration) are merged at their call (`merged_rule`), so their branches do not
  multiply the action's paths (a partition change iterates over the ISR, ELR and LastKnownELR,
  each iteration forking on every member's bit); `Broker.maximal_isr` of two unread sets is their
  bits' union;
- the ghost history: the model's updates of the produce requests and the exposed prefix
  (broker_actions.live_pending, complete_produces, expose, produced) are answered on
  replication_state's arrays (hp/hpl/hple/hpoff, acked, elen/eep/eval), the abstraction of the
  Python value, one update at a time (tests/test_derive_replication.py checks each against the
  Python on concrete histories).

A message action names the slot it reads, as replication_next's do (`HandleFetchIn(slot=0,
follower=1, leader=0)`): the derivation reads the message out of that slot (the action is not
enabled unless the slot holds a message of that kind between those brokers) and runs the
model's action on it.
"""
from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import z3

from checker.proofs import replication_next as N
from checker.proofs.derive import Derived, SymPart
from checker.proofs.replication_state import (
    APREQ, APRESP, EMPTY, FREQ, FRESP, SLOT_BOOLS, SLOT_INTS, Layout, fresh,
)
from checker.proofs.symbolic import (
    CRASHES, DecisionTree, Explorer, OutOfLayout, SBool, SInt, Unsupported, _same, _z, derived_step, merged_options,
)
from checker.proofs.term import Step, Sym, select, smin
from model.replication import broker_actions, network, state
from model.replication import controller as controller_rules
from model.replication.context import Context
from model.replication.model import _STEP
from model.replication.params import Params
from model.replication.records import BrokerRegistration, LogEntry, PartitionRegistration
from model.replication.state import (
    UNKNOWN, AlterPartitionRequest, AlterPartitionResponse, Broker, Controller, FetchRequest, FetchResponse,
    FollowerState, History, IsrMember, State,
)
from model.replication.variants import Rules

KIND = {FetchRequest: FREQ, FetchResponse: FRESP, AlterPartitionRequest: APREQ, AlterPartitionResponse: APRESP}


# --- lazily read sequences ----------------------------------------------------------------------


class Lazy:
    """A tuple of the state read on first use: `force` builds it (forking as it reads), once per
    path. `ids` (member id -> bit term) makes it a set of broker ids: a membership test of one id
    forks on that bit alone, a truth test on "some bit"; `terms` are the variables it stands for
    while unread (post_of takes them as they are)."""

    def __init__(self, ex: Explorer, force: Callable[[], tuple], ids: dict[int, Any] | None = None,
                 terms: dict[Any, Any] | None = None, key: Any = None) -> None:
        self.ex, self.force, self.ids, self.terms = ex, force, ids, terms
        self.cache: dict[int, tuple[Any, tuple]] = {}
        # what it is read from (the same on every path), for memos: its bits' or variables' terms
        if key is None and ids is not None:
            key = ("set",) + tuple((x, t.get_id()) for x, t in sorted(ids.items()))
        if key is None and terms is not None:
            key = ("terms",) + tuple((k, t.get_id()) for k, t in terms.items())
        self.key = key

    def read(self) -> bool:
        """Has the current path read it?"""
        f = self.ex.frames[-1]
        hit = self.cache.get(id(f))
        return hit is not None and hit[0] is f

    def value(self) -> tuple:
        # keyed by the path (its frame): a function explored on its own (`isolated`) reads it anew
        f = self.ex.frames[-1]
        hit = self.cache.get(id(f))
        if hit is None or hit[0] is not f:
            hit = (f, tuple(self.force()))
            self.cache[id(f)] = hit
        return hit[1]

    def __len__(self) -> int:
        return len(self.value())

    def __iter__(self) -> Any:
        return iter(self.value())

    def __getitem__(self, k: Any) -> Any:
        return self.value()[k]

    def __contains__(self, x: Any) -> bool:
        if self.ids is not None and not self.read() and isinstance(x, int) and not isinstance(x, bool):
            return x in self.ids and self.ex.decide(self.ids[x])
        return x in self.value()

    def __bool__(self) -> bool:
        if self.ids is not None and not self.read():
            return self.ex.decide(z3.Or(list(self.ids.values())))
        return bool(self.value())

    def _bits_eq(self, o: Any) -> Any:
        """An unread set of ids against a tuple of concrete ids or another unread set on the same
        ids: the bits' equality, one fork where reading both would fork on every bit; else None."""
        if self.ids is None or self.read():
            return None
        if isinstance(o, Lazy):
            if o.ids is None or o.read() or set(o.ids) != set(self.ids):
                return None
            other = [o.ids[j] for j in sorted(self.ids)]
        elif isinstance(o, tuple) and all(type(x) is int for x in o):
            if len(set(o)) != len(o) or list(o) != sorted(o) or not set(o) <= set(self.ids):
                return z3.BoolVal(False)  # a set is sorted and without repeats
            other = [z3.BoolVal(j in o) for j in sorted(self.ids)]
        else:
            return None
        return z3.And([self.ids[j] == x for j, x in zip(sorted(self.ids), other)])

    def __eq__(self, o: Any) -> Any:  # type: ignore[override]
        same = self._bits_eq(o)
        if same is not None:
            return SBool(same, self.ex)
        return self.value() == (o.value() if isinstance(o, Lazy) else o)

    def __ne__(self, o: Any) -> Any:  # type: ignore[override]
        same = self._bits_eq(o)
        if same is not None:
            return SBool(z3.Not(same), self.ex)
        return not self.__eq__(o)

    def __hash__(self) -> int:
        return hash(self.value())

    def __add__(self, o: Any) -> tuple:
        return self.value() + tuple(o)

    def __radd__(self, o: Any) -> tuple:
        return tuple(o) + self.value()

    def __repr__(self) -> str:
        return f"Lazy({self.terms or self.ids})"


def lazy_set(ex: Explorer, ids: dict[int, Any]) -> Lazy:
    """A set of broker ids as a sorted tuple, one bit per possible member."""
    return Lazy(ex, lambda: tuple(x for x in sorted(ids) if ex.decide(ids[x])), ids=ids)


def set_bits(x: Any, members: range | list[int]) -> list[Any]:
    """The membership bit of each id in `members` of a set of ids (a Lazy one unread: its bits)."""
    if isinstance(x, Lazy) and x.ids is not None and not x.read():
        return [x.ids.get(j, z3.BoolVal(False)) for j in members]
    xs = [_z(e) for e in x]
    return [z3.simplify(z3.Or([e == j for e in xs])) if xs else z3.BoolVal(False) for j in members]


class SId(SInt):
    """A broker id (a record's leader): hashed, as the rules' set lookups do, it forks on the ids
    -1..n-1 and hashes as the one it is; an equality test then decides the lookup symbolically."""

    __slots__ = ("n",)

    def __init__(self, t: Any, ex: Explorer, n: int) -> None:
        super().__init__(t, ex)
        self.n = n

    def __hash__(self) -> int:
        v = self.ex.choose([(self.t == j, j) for j in range(-1, self.n)] + [(z3.BoolVal(True), None)])
        return hash(v if v is not None else ("not a broker id",))


def isolated(ex: Explorer, run: Callable[[], Any]) -> list[tuple[list[Any], Any]]:
    """The paths of run() on their own (`Explorer.decisions`), under the domain only (their
    conditions hold on every path that reaches the call): the way a function is merged instead of
    multiplying the paths."""
    return ex.on_its_own(run)


# --- merging the pure rules of partition.py ------------------------------------------------------


def _explorer_in(x: Any) -> Explorer | None:
    if isinstance(x, (SInt, SBool)):
        return x.ex
    if isinstance(x, Lazy):
        return x.ex
    if isinstance(x, dict):
        x = tuple(x.values())
    if isinstance(x, (tuple, list)):
        for y in x:
            ex = _explorer_in(y)
            if ex is not None:
                return ex
    return None


def _key(x: Any) -> Any:
    """The identity of a rule's arguments: terms by id, a Lazy sequence by the object (read
    anew on each path), containers item by item."""
    if isinstance(x, (SInt, SBool)):
        return ("t", x.t.get_id())
    if isinstance(x, Lazy):
        if x.key is not None:
            return x.key
        x.ex.memos.setdefault("alive", []).append(x)  # kept alive, so that its id names it alone
        return ("lazy", id(x))
    if isinstance(x, dict):
        return ("dict",) + tuple((k, _key(v)) for k, v in sorted(x.items()))
    if isinstance(x, (tuple, list)):
        return (type(x).__name__,) + tuple(_key(y) for y in x)
    return x


def merged_rule(fn: Callable[..., Any], by_value: bool = False) -> Callable[..., Any]:
    """A pure rule (model/replication/partition.py, keyword arguments allowed) on symbolic
    arguments: its paths are explored on their own and its results merged into If terms, one fork
    per shape of result and one when some path raises (derive.merged, for keyword calls);
    `by_value`: one fork per distinct concrete result (merged_options)."""

    def run(*args: Any, **kwargs: Any) -> Any:
        ex = _explorer_in((args, tuple(kwargs.values())))
        if ex is None:
            return fn(*args, **kwargs)

        def once() -> Any:
            try:
                return ("ok", fn(*args, **kwargs))
            except CRASHES as e:
                return ("crash", e)

        def explore() -> Any:
            return merged_options(ex, isolated(ex, once), by_value)

        crash, options = ex.memo(("rule", fn.__name__, _key(args), _key(tuple(sorted(kwargs.items())))), explore)
        if crash and ex.decide(z3.Or([pc for pc, _ in crash])):
            raise crash[0][1]
        return ex.choose(options) if len(options) > 1 else options[0][1]

    run.__name__ = fn.__name__
    return run


# the pure rules merged while deriving, as broker_actions imports them
_PARTITION_RULES = ("leader_hw", "can_expand_isr", "fetch_divergence", "follower_truncation", "out_of_range_truncation")
# and the controller's, looked up in model.replication.controller by its callers (controller_actions' `rules.`)
_CONTROLLER_RULES = ("validate_alter_partition", "partition_change")
# and, inside partition_change, the election: its winner is a replica id the caller puts in sets,
# so it is merged to one fork per (winner, unclean) instead of one per path through the replicas
_CONTROLLER_ELECTION = "elect_leader"
ELECTION_BY_VALUE = True  # off only for bench/bench_derive_speed.py's baseline


# --- the controller's metadata log ----------------------------------------------------------------

REC_FIELDS = ("c_leader", "c_le", "c_rec")


class SymLog:
    """Controller.log: the records at partition epochs start..latest, each kept in the slot of its
    partition epoch (replication_state: c_isr/c_elr/c_lke[p, j], c_leader/c_le/c_rec[p]). Read at
    symbolic positions without forking; appending writes slot latest + 1."""

    def __init__(self, layout: Layout, ex: Explorer, start: Any, latest: Any, slots: dict[Any, Any]) -> None:
        self.layout, self.ex, self.start, self.latest, self.slots = layout, ex, start, latest, slots

    @classmethod
    def of(cls, layout: Layout, pre: Sym, ex: Explorer) -> "SymLog":
        slots = {k: pre[k] for k in pre.keys() if k[0] in ("c_isr", "c_elr", "c_lke") + REC_FIELDS}
        return cls(layout, ex, pre[("c_start",)], pre[("c_latest",)], slots)

    def record(self, pos: Any) -> PartitionRegistration:
        """The record of partition epoch `pos` (a term within start..latest)."""
        n, ex = self.layout.n, self.ex
        pos = z3.simplify(pos)
        key = ("record", pos.get_id(), tuple(t.get_id() for t in self.slots.values()))
        t = ex.memo(key, lambda: self._picked(pos))
        lke = {j: t[("c_lke", j)] for j in range(n)}
        lke[-1] = t[("c_lke", n)]
        return PartitionRegistration(
            tuple(range(n)), lazy_set(ex, {j: t[("c_isr", j)] for j in range(n)}),
            lazy_set(ex, {j: t[("c_elr", j)] for j in range(n)}), lazy_set(ex, lke),
            SId(t[("c_leader",)], ex, n), SInt(t[("c_le",)], ex), SInt(pos, ex), SBool(t[("c_rec",)], ex), (), ())

    def _picked(self, pos: Any) -> dict[Any, Any]:
        """Each record variable of the slot `pos` names (key without the slot)."""
        P, n = self.layout.P, self.layout.n
        keys = ([("c_isr", j) for j in range(n)] + [("c_elr", j) for j in range(n)]
                + [("c_lke", j) for j in range(n + 1)] + [(name,) for name in REC_FIELDS])
        out = {}
        for key in keys:
            items = [self.slots[(key[0], q) + key[1:]] for q in range(P + 1)]
            out[key] = z3.simplify(select(items, pos, items[0]))
        return out

    def length(self) -> Any:
        return self.latest - self.start + 1

    def __len__(self) -> int:
        P = self.layout.P
        return self.ex.choose([(self.length() == k, k) for k in range(1, P + 1)] + [(z3.BoolVal(True), P + 1)])

    def _position(self, i: Any) -> Any:
        """The partition epoch at index i, Python's indexing: from the end when negative, an
        IndexError past either end."""
        t = _z(i)
        if self.ex.decide(t >= 0):
            if not self.ex.decide(t < self.length()):
                raise IndexError("controller log index out of range")
            return self.start + t
        if not self.ex.decide(t >= -self.length()):
            raise IndexError("controller log index out of range")
        return self.latest + 1 + t

    def __getitem__(self, k: Any) -> Any:
        if isinstance(k, slice):
            if k.stop is not None or k.step is not None:
                raise Unsupported("a controller log slice other than log[k:]")
            a = _z(0 if k.start is None else k.start)
            if not self.ex.decide(a >= 0) or not self.ex.decide(a < self.length()):
                raise Unsupported("a controller log slice that is empty or from the end")
            return SymLog(self.layout, self.ex, z3.simplify(self.start + a), self.latest, self.slots)
        return self.record(self._position(k))

    def __iter__(self) -> Any:
        return (self[i] for i in range(len(self)))

    def __add__(self, o: Any) -> "SymLog":
        (reg,) = tuple(o)
        n, P = self.layout.n, self.layout.P
        nxt = self.latest + 1
        if reg.replicas != tuple(range(n)) or reg.removing != () or reg.adding != ():
            raise Unsupported("a record of a reassignment (replication_state has no replica sets)")
        if not self.ex.decide(_z(reg.partition_epoch) == nxt) or not self.ex.decide(nxt <= P):
            raise OutOfLayout("a record at another partition epoch than the next one, or past max_partition_epoch")
        new: dict[Any, Any] = {}
        for name, x, members in (("c_isr", reg.isr, range(n)), ("c_elr", reg.elr, range(n)),
                                 ("c_lke", reg.last_known_elr, list(range(n)) + [-1])):
            for j, bit in zip(range(len(members)), set_bits(x, members)):
                new[(name, j)] = bit
        new[("c_leader",)], new[("c_le",)], new[("c_rec",)] = _z(reg.leader), _z(reg.leader_epoch), _z(reg.recovering)
        slots = dict(self.slots)
        for q in range(P + 1):
            here = nxt == q
            for (name, *idx), t in new.items():
                key = (name, q, *idx)
                slots[key] = z3.If(here, t, slots[key])
        return SymLog(self.layout, self.ex, self.start, z3.simplify(nxt), slots)

    def terms(self) -> dict[Any, Any]:
        return {("c_start",): self.start, ("c_latest",): self.latest, **self.slots}


# --- the network -----------------------------------------------------------------------------------


def _slot_keys(layout: Layout, m: int) -> list[Any]:
    keys = [(name, m) for name in SLOT_INTS + SLOT_BOOLS]
    keys += [(name, m, k) for k in range(layout.L) for name in ("mrep", "mrval")]
    keys += [(name, m, j) for j in range(layout.n) for name in ("mnis", "mnie", "mr_isr", "mr_elr")]
    keys += [("mr_lke", m, j) for j in range(layout.n + 1)]
    return keys


class SymNet:
    """The messages in flight as replication_state's slots: slot -> its variables' terms (keys
    without the slot index). Messages read out of a slot are remembered, so that receiving one
    empties its slot."""

    def __init__(self, layout: Layout, ex: Explorer, slots: list[dict[Any, Any]], read: dict[int, tuple[Any, int]]) -> None:
        self.layout, self.ex, self.slots, self.read = layout, ex, slots, read

    @classmethod
    def of(cls, layout: Layout, pre: Sym, ex: Explorer) -> "SymNet":
        slots = [{(k[0],) + k[2:]: pre[k] for k in _slot_keys(layout, m)} for m in range(layout.M)]
        return cls(layout, ex, slots, {})

    def _with(self, slots: list[dict[Any, Any]]) -> "SymNet":
        return SymNet(self.layout, self.ex, slots, self.read)

    def message(self, m: int, kind: type, **concrete: int) -> Any:
        """The message slot m holds, when it holds one of this kind (`concrete`: fields known)."""
        v, ex, n, L = self.slots[m], self.ex, self.layout.n, self.layout.L
        I = lambda name: SInt(v[(name,)], ex)  # noqa: E731
        B = lambda name: SBool(v[(name,)], ex)  # noqa: E731

        def records() -> tuple:
            k = ex.choose([(v[("mrlen",)] == x, x) for x in range(L + 1)] + [(z3.BoolVal(True), None)])
            if k is None:
                raise OutOfLayout("a Fetch response with more records than values")
            return tuple(LogEntry(SInt(v[("mrep", x)], ex), SInt(v[("mrval", x)], ex)) for x in range(k))

        def request() -> AlterPartitionRequest:
            terms = {key: t for key, t in v.items() if key[0] in ("mnis", "mnie")}
            members = Lazy(ex, lambda: tuple(IsrMember(j, SInt(v[("mnie", j)], ex)) for j in range(n)
                                             if ex.decide(v[("mnis", j)])), terms=terms)
            return AlterPartitionRequest(concrete.get("leader", I("ma")), I("mbe"), I("mle"), I("moff"), members,
                                         B("mrecov"))

        def registration() -> tuple:
            if not ex.decide(v[("mhas",)]):
                return ()
            lke = {j: v[("mr_lke", j)] for j in range(n)}
            lke[-1] = v[("mr_lke", n)]
            return (PartitionRegistration(
                tuple(range(n)), lazy_set(ex, {j: v[("mr_isr", j)] for j in range(n)}),
                lazy_set(ex, {j: v[("mr_elr", j)] for j in range(n)}), lazy_set(ex, lke),
                SId(v[("mr_leader",)], ex, n), I("mr_le"), I("mr_pe"), B("mr_rec"), (), ()),)

        if kind is FetchRequest:
            msg: Any = FetchRequest(concrete.get("follower", I("ma")), concrete.get("leader", I("mb")), I("mbe"),
                                    I("mle"), I("moff"), I("mlfe"))
        elif kind is FetchResponse:
            terms = {key: t for key, t in v.items() if key[0] in ("mrlen", "mrep", "mrval")}
            msg = FetchResponse(concrete.get("follower", I("ma")), concrete.get("leader", I("mb")), I("mle"),
                                I("moff"), I("merr"), I("mde"), I("mdo"), Lazy(ex, records, terms=terms), I("mhw"))
        elif kind is AlterPartitionRequest:
            msg = request()
        else:
            req = request()
            terms = {key: t for key, t in v.items() if key[0] in ("mhas", "mr_isr", "mr_elr", "mr_lke", "mr_leader",
                                                                   "mr_le", "mr_pe", "mr_rec")}
            msg = AlterPartitionResponse(req.leader, req, I("merr"), Lazy(ex, registration, terms=terms))
        self.read[id(msg)] = (msg, m)
        return msg

    def slot_of(self, msg: Any) -> int:
        hit = self.read.get(id(msg))
        if hit is None or hit[0] is not msg:
            raise Unsupported("a message received that was not read out of a slot")
        return hit[1]

    def terms_of(self, msg: Any) -> dict[Any, Any]:
        """The slot variables (keys without the slot) of a message put in a slot."""
        n, L = self.layout.n, self.layout.L
        u: dict[Any, Any] = {("mk",): z3.IntVal(KIND[type(msg)])}

        def carried(x: Any) -> bool:
            return isinstance(x, Lazy) and x.terms is not None and not x.read()

        if isinstance(msg, FetchRequest):
            u.update({("ma",): _z(msg.follower), ("mb",): _z(msg.leader), ("mbe",): _z(msg.broker_epoch),
                      ("mle",): _z(msg.leader_epoch), ("moff",): _z(msg.fetch_offset),
                      ("mlfe",): _z(msg.last_fetched_epoch)})
            return u
        if isinstance(msg, FetchResponse):
            u.update({("ma",): _z(msg.follower), ("mb",): _z(msg.leader), ("mle",): _z(msg.leader_epoch),
                      ("moff",): _z(msg.fetch_offset), ("merr",): _z(msg.error), ("mde",): _z(msg.diverging_epoch),
                      ("mdo",): _z(msg.diverging_end_offset), ("mhw",): _z(msg.hw)})
            if carried(msg.records):
                u.update(msg.records.terms)
            else:
                if len(msg.records) > L:
                    raise OutOfLayout("a Fetch response with more records than values")
                u[("mrlen",)] = z3.IntVal(len(msg.records))
                for k, e in enumerate(msg.records):
                    u[("mrep", k)], u[("mrval", k)] = _z(e.epoch), _z(e.value)
            return u
        req = msg if isinstance(msg, AlterPartitionRequest) else msg.request
        if isinstance(msg, AlterPartitionResponse) and msg.leader is not req.leader and not bool(msg.leader == req.leader):
            raise OutOfLayout("an AlterPartition response to another broker than its request's sender")
        u.update({("ma",): _z(req.leader), ("mbe",): _z(req.broker_epoch), ("mle",): _z(req.leader_epoch),
                  ("moff",): _z(req.partition_epoch), ("mrecov",): _z(req.recovering)})
        if carried(req.new_isr):
            u.update(req.new_isr.terms)
        else:
            members = list(req.new_isr)
            ids = [x.broker_id for x in members]
            if len(set(ids)) != len(ids) or not all(isinstance(j, int) and 0 <= j < n for j in ids):
                raise Unsupported("an AlterPartition ISR with ids not concrete, repeated or out of range")
            for j in range(n):
                u[("mnis", j)] = z3.BoolVal(j in ids)
            for x in members:
                u[("mnie", x.broker_id)] = _z(x.broker_epoch)
        if isinstance(msg, AlterPartitionResponse):
            u[("merr",)] = _z(msg.error)
            if carried(msg.registration):
                u.update(msg.registration.terms)
            else:
                regs = tuple(msg.registration)
                u[("mhas",)] = z3.BoolVal(bool(regs))
                if regs:
                    r = regs[0]
                    if r.replicas != tuple(range(n)) or r.removing != () or r.adding != ():
                        raise Unsupported("a registration of a reassignment")
                    for name, x, members_ in (("mr_isr", r.isr, range(n)), ("mr_elr", r.elr, range(n)),
                                              ("mr_lke", r.last_known_elr, list(range(n)) + [-1])):
                        for j, bit in zip(range(len(members_)), set_bits(x, members_)):
                            u[(name, j)] = bit
                    u.update({("mr_leader",): _z(r.leader), ("mr_le",): _z(r.leader_epoch),
                              ("mr_pe",): _z(r.partition_epoch), ("mr_rec",): _z(r.recovering)})
        return u

    def send(self, msg: Any) -> "SymNet":
        """with_message: the first empty slot (replication_next.add_message); no empty slot is a
        state the layout cannot hold."""
        M = self.layout.M
        if self.ex.decide(z3.And([self.slots[m][("mk",)] != EMPTY for m in range(M)])):
            raise OutOfLayout("more messages in flight than max_in_flight")
        u = self.terms_of(msg)
        slots = []
        earlier_full: list[Any] = []
        for m in range(M):
            here = z3.And(self.slots[m][("mk",)] == EMPTY, *earlier_full)
            slots.append({**self.slots[m], **{k: z3.If(here, t, self.slots[m][k]) for k, t in u.items()}})
            earlier_full.append(self.slots[m][("mk",)] != EMPTY)
        return self._with(slots)

    def receive(self, msg: Any) -> "SymNet":
        m = self.slot_of(msg)
        slots = list(self.slots)
        slots[m] = {**slots[m], ("mk",): z3.IntVal(EMPTY)}
        return self._with(slots)

    def holds(self, msg: Any) -> bool:
        self.slot_of(msg)
        return True

    def where(self, kind: type, pred: Callable[[Any], Any]) -> list[Any]:
        """Per slot: it holds a message of this kind for which pred holds (pred's paths explored on
        their own and merged)."""
        out = []
        for m in range(self.layout.M):
            mk = self.slots[m][("mk",)]
            held = z3.simplify(mk == KIND[kind])
            if z3.is_false(held) or not self.ex.feasible(held):
                out.append(z3.BoolVal(False))
                continue

            def run(m: int = m) -> Any:
                r = pred(self.message(m, kind))
                return r.t if isinstance(r, SBool) else z3.BoolVal(bool(r))

            paths = isolated(self.ex, lambda: _guarded(run))
            if any(isinstance(r, Exception) for _, r in paths):
                raise Unsupported("a predicate over the messages that raises")
            cond = DecisionTree(paths).fold(lambda r: r)
            out.append(z3.simplify(z3.And(held, cond)))
        return out

    def exists(self, kind: type, pred: Callable[[Any], Any]) -> SBool:
        return SBool(z3.Or(self.where(kind, pred)), self.ex)

    def lose(self, kind: type, pred: Callable[[Any], Any]) -> "SymNet":
        slots = list(self.slots)
        for m, gone in enumerate(self.where(kind, pred)):
            if not z3.is_false(gone):
                slots[m] = {**slots[m], ("mk",): z3.If(gone, EMPTY, slots[m][("mk",)])}
        return self._with(slots)

    def count(self) -> SInt:
        return SInt(z3.Sum([z3.If(v[("mk",)] != EMPTY, 1, 0) for v in self.slots]), self.ex)

    def terms(self) -> dict[Any, Any]:
        return {(k[0], m) + k[1:]: t for m, v in enumerate(self.slots) for k, t in v.items()}


def _guarded(run: Callable[[], Any]) -> Any:
    try:
        return run()
    except CRASHES as e:
        return e


# --- the history stand-in -----------------------------------------------------------------------


class Part(SymPart):
    """A part of the ghost history as replication_state's variables: only the model's history
    updates read it (answered below)."""

    def __init__(self, terms: dict[Any, Any], ex: Explorer) -> None:
        super().__init__(terms)
        self.ex = ex


def symbolic_history(layout: Layout, pre: Sym, ex: Explorer) -> History:
    V, L = layout.V, layout.L
    pending = Part({(name, v): pre[(name, v)] for v in range(V) for name in ("hp", "hpl", "hple", "hpoff")}, ex)
    acked = Part({("acked", v): pre[("acked", v)] for v in range(V)}, ex)
    exposed = Part({("elen",): pre[("elen",)], **{(name, k): pre[(name, k)] for k in range(L)
                                                 for name in ("eep", "eval")}}, ex)
    I = lambda k: SInt(pre[k], ex)  # noqa: E731
    return History(I(("next",)), pending, acked, exposed, I(("crashes",)), I(("lossy",)), I(("fences",)),
                   I(("losses",)), 0, False)


def sym_live_pending(h: History, brokers: tuple) -> History:
    """live_pending on the arrays: a produce whose leader is down, or no longer leads its epoch,
    is no longer pending."""
    t = dict(h.pending.terms)
    for v in range(len([k for k in t if k[0] == "hp"])):
        lead, le = t[("hpl", v)], t[("hple", v)]
        alive = z3.Or([z3.And(lead == j, _z(b.alive), _z(b.leader) == j, _z(b.leader_epoch) == le)
                       for j, b in enumerate(brokers)])
        t[("hp", v)] = z3.And(t[("hp", v)], alive)
    return h._replace(pending=Part(t, h.pending.ex))


def sym_complete_produces(h: History, b: int, leader_epoch: Any, hw: Any, maximal: Any, min_isr: int) -> History:
    """complete_produces on the arrays: leader b's produces of its epoch below the HW leave the
    pending ones, acked when the maximal ISR has min ISR members (counted on its bits, unread)."""
    if isinstance(maximal, Lazy) and maximal.ids is not None and not maximal.read():
        enough = z3.Sum([z3.If(x, 1, 0) for x in maximal.ids.values()]) >= min_isr
    else:
        enough = z3.BoolVal(len(maximal) >= min_isr)
    t, a = dict(h.pending.terms), dict(h.acked.terms)
    for v in range(len(a)):
        done = z3.And(t[("hp", v)], t[("hpl", v)] == b, t[("hple", v)] == _z(leader_epoch), t[("hpoff", v)] < _z(hw))
        a[("acked", v)] = z3.Or(a[("acked", v)], z3.And(done, _z(enough)))
        t[("hp", v)] = z3.And(t[("hp", v)], z3.Not(done))
    return h._replace(pending=Part(t, h.pending.ex), acked=Part(a, h.pending.ex))


def sym_expose(h: History, log: Any, hw: Any) -> History:
    """expose on the arrays: the log below the HW becomes the exposed prefix when it extends it."""
    log = tuple(log)
    t = dict(h.exposed.terms)
    if ("eep", len(log) - 1) not in t and log:
        raise OutOfLayout("a log longer than values")
    elen, w = t[("elen",)], _z(hw)
    readable = smin(w, len(log))
    prefix = z3.And([z3.Implies(k < elen, z3.And(t[("eep", k)] == _z(e.epoch), t[("eval", k)] == _z(e.value)))
                     for k, e in enumerate(log)])
    grow = z3.And(w > elen, readable > elen, prefix)
    out = {("elen",): z3.If(grow, readable, elen)}
    for k, e in enumerate(log):
        out[("eep", k)] = z3.If(z3.And(grow, k < readable), _z(e.epoch), t[("eep", k)])
        out[("eval", k)] = z3.If(z3.And(grow, k < readable), _z(e.value), t[("eval", k)])
    return h._replace(exposed=Part({**t, **out}, h.exposed.ex))


def sym_produced(h: History, p: Any) -> History:
    """produced on the arrays: value v pending at its leader, epoch and offset; next = v + 1."""
    t = dict(h.pending.terms)
    v = p.value
    if not isinstance(v, int) or ("hp", v) not in t:
        raise OutOfLayout("a produced value outside 0..values-1")
    if h.pending.ex.decide(t[("hp", v)]):
        raise OutOfLayout("a second pending produce of one value")
    t.update({("hp", v): z3.BoolVal(True), ("hpl", v): _z(p.leader), ("hple", v): _z(p.leader_epoch),
              ("hpoff", v): _z(p.offset)})
    return h._replace(next_value=v + 1, pending=Part(t, h.pending.ex))


# --- the stand-in state ---------------------------------------------------------------------------


def symbolic_state(layout: Layout, pre: Sym, ex: Explorer) -> State:
    n, L = layout.n, layout.L
    I = lambda k: SInt(pre[k], ex)  # noqa: E731
    B = lambda k: SBool(pre[k], ex)  # noqa: E731

    def broker(i: int) -> Broker:
        def log() -> tuple:
            k = ex.choose([(pre[("leo", i)] == x, x) for x in range(L + 1)] + [(z3.BoolVal(True), None)])
            if k is None:
                raise OutOfLayout("a log longer than values")
            return tuple(LogEntry(I(("lep", i, x)), I(("lval", i, x))) for x in range(k))

        leads = pre[("leader", i)] == i
        followers = Lazy(ex, lambda: tuple(FollowerState(I(("fleo", i, j)), I(("fep", i, j)), B(("fcu", i, j)))
                                           for j in range(n)) if ex.decide(leads) else ())
        replicas = Lazy(ex, lambda: tuple(range(n)) if ex.decide(leads) else ())
        log_key = ("log", pre[("leo", i)].get_id()) + tuple(pre[(name, i, x)].get_id() for x in range(L)
                                                            for name in ("lep", "lval"))
        return Broker(B(("alive", i)), I(("bepoch", i)), B(("clean", i)), I(("meta", i)), Lazy(ex, log, key=log_key),
                      I(("hw", i)), I(("leader", i)), I(("le", i)), I(("pe", i)),
                      lazy_set(ex, {j: pre[("isr", i, j)] for j in range(n)}),
                      lazy_set(ex, {j: pre[("pend", i, j)] for j in range(n)}), I(("leso", i)), followers, replicas)

    regs = tuple(BrokerRegistration(I(("rep", i)), B(("fenced", i)), False) for i in range(n))
    controller = Controller(regs, SymLog.of(layout, pre, ex))
    net = SymNet.of(layout, pre, ex)
    # the four message fields all hold the one network: the model reaches it through network.py
    return State(tuple(broker(i) for i in range(n)), controller, net, net, net, net,
                 symbolic_history(layout, pre, ex))


def sym_maximal_isr(self: Broker) -> Any:
    """Broker.maximal_isr (the ISR and a pending expansion) of unread sets: their bits' union,
    unread; else the property as written."""
    isr, pending = self.isr, self.pending
    if (isinstance(isr, Lazy) and isinstance(pending, Lazy) and isr.ids is not None and pending.ids is not None
            and not isr.read() and not pending.read() and set(isr.ids) == set(pending.ids)):
        return lazy_set(isr.ex, {j: z3.simplify(z3.Or(isr.ids[j], pending.ids[j])) for j in sorted(isr.ids)})
    return _MAXIMAL_ISR.fget(self)  # type: ignore[union-attr]


_MAXIMAL_ISR = Broker.__dict__["maximal_isr"]


@contextlib.contextmanager
def symbolic_model() -> Iterator[None]:
    """While deriving: network.py answers from the slots, the history updates from the arrays."""
    def with_net(s: State, net: SymNet) -> State:
        return s._replace(fetch_requests=net, fetch_responses=net, ap_requests=net, ap_responses=net)

    def send_all(s: State, ms: Any) -> State:
        for m in ms:
            s = with_net(s, s.fetch_requests.send(m))
        return s

    patches = [
        (network, "send", lambda s, m: with_net(s, s.fetch_requests.send(m))),
        (network, "send_all", send_all),
        (network, "holds", lambda s, m: s.fetch_requests.holds(m)),
        (network, "receive", lambda s, m: with_net(s, s.fetch_requests.receive(m))),
        (network, "exists", lambda s, kind, pred: s.fetch_requests.exists(kind, pred)),
        (network, "lose", lambda s, kind, pred: with_net(s, s.fetch_requests.lose(kind, pred))),
        (network, "count", lambda s: s.fetch_requests.count()),
        (broker_actions, "live_pending", sym_live_pending),
        (broker_actions, "complete_produces", sym_complete_produces),
        (broker_actions, "expose", sym_expose),
        (broker_actions, "produced", sym_produced),
    ] + [(broker_actions, name, merged_rule(getattr(broker_actions, name))) for name in _PARTITION_RULES]
    patches += [(controller_rules, name, merged_rule(getattr(controller_rules, name))) for name in _CONTROLLER_RULES]
    if ELECTION_BY_VALUE:
        patches.append((controller_rules, _CONTROLLER_ELECTION,
                        merged_rule(getattr(controller_rules, _CONTROLLER_ELECTION), by_value=True)))
    patches.append((Broker, "maximal_isr", property(sym_maximal_isr)))
    saved = [(module, name, module.__dict__[name] if isinstance(module, type) else getattr(module, name))
             for module, name, _ in patches]
    for module, name, value in patches:
        setattr(module, name, value)
    try:
        yield
    finally:
        for module, name, value in saved:
            setattr(module, name, value)


# --- back to variables ----------------------------------------------------------------------------


def _unchanged(x: Any, x0: Any) -> bool:
    """A field carried over as it was: its variables keep their values."""
    return x is x0


def broker_terms(layout: Layout, i: int, b: Broker, b0: Broker) -> dict[Any, Any]:
    n, L = layout.n, layout.L
    u: dict[Any, Any] = {("alive", i): _z(b.alive), ("bepoch", i): _z(b.epoch), ("clean", i): _z(b.clean),
                         ("meta", i): _z(b.meta), ("hw", i): _z(b.hw), ("leader", i): _z(b.leader),
                         ("le", i): _z(b.leader_epoch), ("pe", i): _z(b.partition_epoch), ("leso", i): _z(b.leso)}
    if not _unchanged(b.log, b0.log):
        log = tuple(b.log)
        if len(log) > L:
            raise OutOfLayout(f"a log longer than values at broker {i}")
        u[("leo", i)] = z3.IntVal(len(log))
        for k, e in enumerate(log):
            u[("lep", i, k)], u[("lval", i, k)] = _z(e.epoch), _z(e.value)
    for name, x, x0 in (("isr", b.isr, b0.isr), ("pend", b.pending, b0.pending)):
        if not _unchanged(x, x0):
            for j, bit in enumerate(set_bits(x, range(n))):
                u[(name, i, j)] = bit
    shape_kept = _unchanged(b.followers, b0.followers) and _unchanged(b.replicas, b0.replicas) and b.leader is b0.leader
    if not shape_kept:
        fs, reps = tuple(b.followers), tuple(b.replicas)
        leads = b.leader == i
        if fs:  # the layout keeps follower state, and the replica set 0..n-1, exactly on a leader
            if len(fs) != n or reps != tuple(range(n)) or not leads:
                raise OutOfLayout(f"follower state or replicas of broker {i} that its leader field does not imply")
            for j, (fl, fe, fc) in enumerate(fs):
                u[("fleo", i, j)], u[("fep", i, j)], u[("fcu", i, j)] = _z(fl), _z(fe), _z(fc)
        else:
            if reps != () or leads:
                raise OutOfLayout(f"follower state or replicas of broker {i} that its leader field does not imply")
            for j in range(n):
                u[("fleo", i, j)], u[("fep", i, j)], u[("fcu", i, j)] = (z3.IntVal(UNKNOWN), z3.IntVal(UNKNOWN),
                                                                          z3.BoolVal(False))
    return u


def post_of(layout: Layout, pre: Sym, s0: State, s: State) -> dict[Any, Any]:
    """The variables a successor changes (key -> term)."""
    u: dict[Any, Any] = {}
    for i, (b, b0) in enumerate(zip(s.brokers, s0.brokers)):
        if b is not b0:
            u.update(broker_terms(layout, i, b, b0))
    c = s.controller
    if c.uncommitted or c.failovers or c.reverted:
        raise Unsupported("the controller quorum (controller_failovers > 0)")
    for i, r in enumerate(c.brokers):
        if r.in_controlled_shutdown is not False:
            raise Unsupported("a registration in controlled shutdown")
        u[("rep", i)], u[("fenced", i)] = _z(r.epoch), _z(r.fenced)
    if not isinstance(c.log, SymLog):
        raise Unsupported("a controller log rebuilt")
    u.update(c.log.terms())
    nets = {id(x) for x in (s.fetch_requests, s.fetch_responses, s.ap_requests, s.ap_responses)}
    if len(nets) != 1 or not isinstance(s.fetch_requests, SymNet):
        raise Unsupported("a message field written other than through model/replication/network.py")
    u.update(s.fetch_requests.terms())
    h = s.history
    if h.reassignments != 0 or h.reassigned_out_of_sync is not False:
        raise Unsupported("reassignments")
    for part in (h.pending, h.acked, h.exposed):
        if not isinstance(part, SymPart):
            raise Unsupported("a history part written other than through its update functions")
        u.update(part.terms)
    for key, x in ((("next",), h.next_value), (("crashes",), h.crashes), (("lossy",), h.lossy_crashes),
                   (("fences",), h.fences), (("losses",), h.losses)):
        u[key] = _z(x)
    return {k: v for k, v in u.items() if not _same(v, pre[k])}


def compacted(layout: Layout, ex: Explorer, s: State) -> State:
    """state.compact (model.next_state's last step), its paths explored on their own and merged
    into the log's new start."""
    log = s.controller.log
    key = ("compact", log.start.get_id(), log.latest.get_id(),
           tuple((_z(b.alive).get_id(), _z(b.meta).get_id()) for b in s.brokers))

    def explore() -> Any:
        def once() -> Any:
            t = state.compact(s)
            return t.controller.log.start

        paths = isolated(ex, lambda: _guarded(once))
        if any(isinstance(r, Exception) for _, r in paths):
            raise Unsupported("state.compact raises")
        return DecisionTree(paths).fold(_z)

    start = ex.memo(key, explore)
    return s._replace(controller=s.controller._replace(log=SymLog(layout, ex, start, log.latest, log.slots)))


# --- deriving an action -----------------------------------------------------------------------------

MESSAGE_KINDS = {N.HandleFetchIn: FetchRequest, N.HandleFetchResponseIn: FetchResponse,
                 N.HandleAlterPartitionIn: AlterPartitionRequest,
                 N.HandleAlterPartitionResponseIn: AlterPartitionResponse}
MODEL_ACTION = {N.HandleFetchIn: "HandleFetch", N.HandleFetchResponseIn: "HandleFetchResponse",
                N.HandleAlterPartitionIn: "HandleAlterPartition",
                N.HandleAlterPartitionResponseIn: "HandleAlterPartitionResponse", N.DropMessageIn: "DropMessage"}


def _model_action(s0: State, ex: Explorer, action: Any) -> Any:
    """The model's action for an action instance; for a message action, the message read out of
    its slot, or None when the slot holds no such message."""
    from model.replication import actions as A

    t = type(action)
    if t not in MODEL_ACTION:
        return action
    net: SymNet = s0.fetch_requests  # type: ignore[assignment]
    mk = net.slots[action.slot][("mk",)]
    if t is N.DropMessageIn:
        kind = ex.choose([(mk == EMPTY, None)] + [(mk == code, k) for k, code in KIND.items()]
                         + [(z3.BoolVal(True), None)])
        return None if kind is None else A.DropMessage(net.message(action.slot, kind))
    kind = MESSAGE_KINDS[t]
    v = net.slots[action.slot]
    ids = {"follower": action.follower, "leader": action.leader} if kind in (FetchRequest, FetchResponse) \
        else {"leader": action.leader}
    cond = [mk == KIND[kind]] + ([v[("ma",)] == action.follower, v[("mb",)] == action.leader]
                                 if "follower" in ids else [v[("ma",)] == action.leader])
    if not ex.decide(z3.And(cond)):
        return None
    return getattr(A, MODEL_ACTION[t])(net.message(action.slot, kind, **ids))


def derive(ctx: Context, layout: Layout, pre: Sym, action: Any, domain: Any, max_paths: int = 4000,
           assume: Any = None, step: Callable[[Any, Any, Callable[[Any, Any], Any]], Any] | None = None) -> Derived:
    """Run the model's action on the stand-in state along every feasible path, then state.compact
    (model.next_state). More than `max_paths` paths: not derived. With `assume` (an inductive
    invariant) only its states are explored: a branch side none of them takes is pruned, and a
    decision that holds on all of them is left out (symbolic.DecisionTree), so the relation is the
    model's on those states only (what an induction step asks about); the guard leaves `assume`
    out. `step(state, action, base)`: a plugin's changed transition (model/extension.py's
    `next_state`), run on the stand-in state with `base` the model's own."""
    ex = Explorer(domain if assume is None else z3.And(domain, assume), layout.L + 1)
    start = time.perf_counter()
    count = [0]

    def run() -> Any:
        count[0] += 1
        if count[0] > max_paths:
            raise Unsupported(f"more than {max_paths} paths")
        s0 = symbolic_state(layout, pre, ex)
        try:
            a = _model_action(s0, ex, action)
            if a is None:
                return None
            if step is None:
                s = _STEP[type(a)](s0, ctx, a)
            else:
                s = step(s0, a, lambda s1, a1: _STEP[type(a1)](s1, ctx, a1))
            if s is None:
                return None
            s = compacted(layout, ex, s)
            return ("ok", post_of(layout, pre, s0, s))
        except CRASHES as e:
            return ("crash", type(e).__name__)

    try:
        with symbolic_model():
            paths = ex.decisions(run)
        guard, post, crash = derived_step(paths, pre, domain)
    except Unsupported as e:
        return Derived(action, count[0], 0, time.perf_counter() - start, None, str(e))
    except RecursionError:
        return Derived(action, count[0], 0, time.perf_counter() - start, None, "recursion")
    enabled = [r for _, r in paths if r is not None and r[0] == "ok"]
    crashed = [r[1] for _, r in paths if r is not None and r[0] == "crash"]
    return Derived(action, len(paths), len(enabled), time.perf_counter() - start, Step(guard, pre.set(post)),
                   crash=crash, crash_paths=len(crashed), crashes=tuple(sorted(set(crashed))), checks=ex.checks)


# --- the check against the hand-written encoding ---------------------------------------------------


def domain(layout: Layout, s: Sym) -> Any:
    """The shapes replication_state's layout gives meaning to: log and exposed lengths within
    values, the held records c_start <= c_latest within 0..max_partition_epoch, a slot's kind, a
    Fetch response's record count within values, a pending produce's leader a broker id."""
    n, L, P = layout.n, layout.L, layout.P
    out = []
    for i in range(n):
        out += [s[("leo", i)] >= 0, s[("leo", i)] <= L]
    out += [s[("c_start",)] >= 0, s[("c_start",)] <= s[("c_latest",)], s[("c_latest",)] <= P]
    for m in range(layout.M):
        mk = s[("mk", m)]
        out += [mk >= EMPTY, mk <= APRESP,
                z3.Implies(mk == FRESP, z3.And(s[("mrlen", m)] >= 0, s[("mrlen", m)] <= L))]
    out += [s[("elen",)] >= 0, s[("elen",)] <= L]
    for v in range(layout.V):
        out.append(z3.Implies(s[("hp", v)], z3.And(s[("hpl", v)] >= 0, s[("hpl", v)] < n)))
    return z3.And(out)


_REQUEST = ("ma", "mbe", "mle", "moff", "mrecov", "mnis")
_FIELDS = {
    FREQ: {"ma", "mb", "mbe", "mle", "moff", "mlfe"},
    FRESP: {"ma", "mb", "mle", "moff", "merr", "mde", "mdo", "mhw", "mrlen", "mrep", "mrval"},
    APREQ: set(_REQUEST) | {"mnie"},
    APRESP: set(_REQUEST) | {"mnie", "merr", "mhas", "mr_isr", "mr_elr", "mr_lke", "mr_leader", "mr_le", "mr_pe",
                             "mr_rec"},
}


def meaningful(layout: Layout, key: Any, s: Sym) -> Any:
    """When a variable stands for part of a Python state (replication_state.values and
    message_in_slot): a log entry below the log's length, a record within c_start..c_latest, a
    slot's field while the slot holds a message that has it, an exposed entry below its length,
    a pending produce's fields while it is pending; every other variable always."""
    name = key[0]
    if name in ("lep", "lval"):
        return key[2] < s[("leo", key[1])]
    if name in ("c_isr", "c_elr", "c_lke", "c_leader", "c_le", "c_rec"):
        p = key[1]
        return z3.And(s[("c_start",)] <= p, p <= s[("c_latest",)])
    if name in ("eep", "eval"):
        return key[1] < s[("elen",)]
    if name in ("hpl", "hple", "hpoff"):
        return s[("hp", key[1])]
    if name.startswith("m") and len(key) >= 2 and name != "mk" and name in set().union(*_FIELDS.values()):
        m = key[1]
        mk = s[("mk", m)]
        kinds = [k for k, names in _FIELDS.items() if name in names]
        held = z3.Or([mk == k for k in kinds])
        if name in ("mrep", "mrval"):
            return z3.And(held, key[2] < s[("mrlen", m)])
        if name == "mnie":
            return z3.And(held, s[("mnis", m, key[2])])
        if name.startswith("mr_"):
            return z3.And(held, s[("mhas", m)])
        return held
    return z3.BoolVal(True)


@dataclass
class Comparison:
    action: Any
    derived: Derived
    verdict: str  # "equal", "differs", "unsupported"
    difference: str = ""
    hand_seconds: float = 0.0
    key: Any = None
    check_seconds: float = 0.0


def compare(ctx: Context, nctx: N.Ctx, action: Any, timeout_ms: int = 60000, pre: Sym | None = None,
            assume: Any = None, derived: Derived | None = None, max_paths: int = 4000) -> Comparison:
    """Z3: on the domain (and `assume`, over `pre`, when given), where the model does not raise,
    the derived and hand-written relations of `action` have the same guard and, when enabled, the
    same value of every variable that stands for part of the Python state (`meaningful`)."""
    layout = nctx.layout
    pre = fresh(layout, "pre_") if pre is None else pre
    dom = domain(layout, pre)
    d = derived or derive(ctx, layout, pre, action, dom, max_paths)
    if d.step is None:
        return Comparison(action, d, "unsupported", d.why)
    t = time.perf_counter()
    h = N.step(nctx, pre, action)
    hand = time.perf_counter() - t
    t = time.perf_counter()
    checks: list[tuple[Any, Any]] = [("guard", z3.Xor(d.step.guard, h.guard))]
    for k in pre.keys():
        a, b = d.step.post[k], h.post[k]
        if not a.eq(b):
            checks.append((k, z3.And(h.guard, meaningful(layout, k, h.post), a != b)))
    s = z3.Solver()
    s.set("timeout", timeout_ms)
    s.add(dom, z3.Not(d.crash))
    if assume is not None:
        s.add(assume)
    for k, diff in checks:
        s.push()
        s.add(diff)
        r = s.check()
        if r != z3.unsat:
            m = s.model() if r == z3.sat else None
            s.pop()
            shown = "" if m is None else _show(m, pre, k, d.step.post, h.post)
            return Comparison(action, d, "differs", f"{k}: {r} {shown}", hand, k, time.perf_counter() - t)
        s.pop()
    return Comparison(action, d, "equal", "", hand, check_seconds=time.perf_counter() - t)


_SHOWN = ("alive", "leader", "le", "pe", "meta", "leo", "lep", "hw", "fenced", "rep", "bepoch", "c_start", "c_latest",
          "mk", "ma", "mb", "mle", "moff", "merr", "mde", "mdo", "mhw", "isr", "pend", "hp", "elen")


def _show(m: z3.ModelRef, pre: Sym, key: Any, derived: Sym, hand: Sym) -> str:
    out = []
    if key != "guard":
        out.append(f"derived={m.eval(derived[key], model_completion=True)} "
                   f"written={m.eval(hand[key], model_completion=True)};")
    for k in pre.keys():
        if k[0] in _SHOWN:
            v = m.eval(pre[k], model_completion=False)
            if not z3.eq(v, pre[k]):
                out.append(f"{'_'.join(map(str, k))}={v}")
    return " ".join(out[:60])


def contexts(p: Params, variant: str = "kafka-4.1") -> tuple[Context, N.Ctx]:
    return Context(p, Rules.of(variant)), N.Ctx.of(p, variant)


def default_params(**overrides: Any) -> Params:
    """Every config key at its default (3 brokers), with `overrides`."""
    from model.replication.params import CONFIG_KEYS

    return Params.from_config({**{k.name: k.default for k in CONFIG_KEYS}, **overrides})


__all__ = ["derive", "compare", "domain", "meaningful", "post_of", "symbolic_state", "symbolic_model", "contexts",
           "default_params"]
