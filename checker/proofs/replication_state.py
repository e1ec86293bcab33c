"""The replication state (model/replication/state.py) as Z3 variables, for N brokers.

Logs are `values` entry slots and a length (a log never holds more records than were produced);
the network is `max_in_flight` message slots (the model's bound on messages in flight); the
controller's metadata log is one slot per partition epoch 0..max_partition_epoch with the first
held epoch (`c_start`, what `state.compact` dropped below it) and the latest (`c_latest`).
Broker epochs, offsets, HWs, leader epochs and partition epochs are unbounded integers; the
model's bounds are guards, as in Python.

Layout (keys of a `Sym`):
  broker i    alive, bepoch (broker epoch), clean, meta, leo, lep/lval[i, k] (entry k's leader
              epoch and value, meaningful below leo), hw, leader, le (leader epoch), pe
              (partition epoch), isr[i, j] / pend[i, j] (leader-only ISR and pending ISR, as
              membership bits; pending = () is all false), leso, fleo/fep/fcu[i, j] (the
              follower state (LEO, broker epoch, caught up); (-1, -1, false) when the model
              has `followers = ()`, i.e. on every broker that does not lead)
  controller  rep[i], fenced[i] (registrations; `in_controlled_shutdown` is never true in a
              state, only inside ControlledShutdown); per partition epoch p: c_isr/c_elr[p, j],
              c_lke[p, j] for j in 0..n (j = n stands for the id -1), c_leader, c_le, c_rec;
              c_start, c_latest (the records held are c_start..c_latest)
  network     slot m: mk (0 empty, 1 Fetch request, 2 Fetch response, 3 AlterPartition request,
              4 AlterPartition response) and the fields of that message (see `SLOT_INTS`); the
              model's multisets are the slots' contents in any order
  history     next (next value), hp/hpl/hple/hpoff[v] (produce of value v pending, its leader,
              leader epoch, offset), acked[v], elen/eep/eval (the exposed prefix), crashes,
              lossy, fences, losses

`matches` is the exact abstraction of a Python state: every meaningful variable is fixed and the
messages are placed in the slots in some order (a disjunction over placements); log entries past
a length, records outside c_start..c_latest and message fields the message kind does not use are
left free.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Iterable

import z3

from checker.proofs.term import Key, Sym, val
from model.replication.params import Params
from model.replication.records import BrokerRegistration, LogEntry, PartitionRegistration
from model.replication.state import (
    UNKNOWN, AlterPartitionRequest, AlterPartitionResponse, Broker, Controller, FetchRequest, FetchResponse,
    FollowerState, History, IsrMember, Pending, State,
)

EMPTY, FREQ, FRESP, APREQ, APRESP = range(5)
KIND_NAMES = ("empty", "FetchRequest", "FetchResponse", "AlterPartitionRequest", "AlterPartitionResponse")

BROKER_INTS = ("bepoch", "meta", "leo", "hw", "leader", "le", "pe", "leso")
BROKER_BOOLS = ("alive", "clean")
# message fields: a = follower (Fetch) / leader (AlterPartition); b = the Fetch's leader; be = broker
# epoch; le = leader epoch; off = fetch offset (Fetch) / partition epoch (AlterPartition); lfe = last
# fetched epoch; err; de/do = diverging epoch / end offset; hw; rlen = number of records
SLOT_INTS = ("mk", "ma", "mb", "mbe", "mle", "moff", "mlfe", "merr", "mde", "mdo", "mhw", "mrlen",
             "mr_leader", "mr_le", "mr_pe")
SLOT_BOOLS = ("mrecov", "mhas", "mr_rec")
REC_INTS = ("c_leader", "c_le")


@dataclass(frozen=True)
class Layout:
    """The sizes: n brokers, L log slots, M message slots, partition epochs 0..P, V values."""

    n: int
    L: int
    M: int
    P: int
    V: int

    @classmethod
    def of(cls, p: Params) -> "Layout":
        return cls(p.n, p.values, p.max_in_flight, p.max_partition_epoch, p.values)

    def sorts(self) -> dict[Key, Any]:
        I, B = z3.IntSort(), z3.BoolSort()
        out: dict[Key, Any] = {}
        n, L = self.n, self.L
        for i in range(n):
            for name in BROKER_INTS:
                out[(name, i)] = I
            for name in BROKER_BOOLS:
                out[(name, i)] = B
            for k in range(L):
                out[("lep", i, k)] = I
                out[("lval", i, k)] = I
            for j in range(n):
                out[("isr", i, j)] = B
                out[("pend", i, j)] = B
                out[("fleo", i, j)] = I
                out[("fep", i, j)] = I
                out[("fcu", i, j)] = B
            out[("rep", i)] = I
            out[("fenced", i)] = B
        for p in range(self.P + 1):
            for j in range(n):
                out[("c_isr", p, j)] = B
                out[("c_elr", p, j)] = B
            for j in range(n + 1):
                out[("c_lke", p, j)] = B
            for name in REC_INTS:
                out[(name, p)] = I
            out[("c_rec", p)] = B
        out[("c_start",)] = I
        out[("c_latest",)] = I
        for m in range(self.M):
            for name in SLOT_INTS:
                out[(name, m)] = I
            for name in SLOT_BOOLS:
                out[(name, m)] = B
            for k in range(L):
                out[("mrep", m, k)] = I
                out[("mrval", m, k)] = I
            for j in range(n):
                out[("mnis", m, j)] = B
                out[("mnie", m, j)] = I
                out[("mr_isr", m, j)] = B
                out[("mr_elr", m, j)] = B
            for j in range(n + 1):
                out[("mr_lke", m, j)] = B
        for name in ("next", "elen", "crashes", "lossy", "fences", "losses"):
            out[(name,)] = I
        for v in range(self.V):
            out[("hp", v)] = B
            out[("acked", v)] = B
            for name in ("hpl", "hple", "hpoff"):
                out[(name, v)] = I
        for k in range(L):
            out[("eep", k)] = I
            out[("eval", k)] = I
        return out


def key_name(prefix: str, key: Key) -> str:
    return prefix + "_".join(str(x) for x in key)


def fresh(layout: Layout, prefix: str = "") -> Sym:
    return Sym({k: z3.Const(key_name(prefix, k), s) for k, s in layout.sorts().items()})


# --- the abstraction of a Python state -----------------------------------------------------------


def _bits(n: int, members: Iterable[int]) -> list[bool]:
    ms = set(members)
    return [j in ms for j in range(n)]


def _lke_bits(n: int, members: Iterable[int]) -> list[bool]:
    ms = set(members)
    assert all(x == -1 or 0 <= x < n for x in ms), f"LastKnownELR member out of range: {ms}"
    return [j in ms for j in range(n)] + [-1 in ms]


def values(layout: Layout, s: State) -> list[tuple[Key, Any]]:
    """The meaningful variables of a Python state except the messages, and their values."""
    n, L = layout.n, layout.L
    out: list[tuple[Key, Any]] = []
    assert len(s.brokers) == n
    for i, b in enumerate(s.brokers):
        assert len(b.log) <= L, f"log of broker {i} longer than values"
        out += [(("alive", i), b.alive), (("bepoch", i), b.epoch), (("clean", i), b.clean), (("meta", i), b.meta),
                (("leo", i), len(b.log)), (("hw", i), b.hw), (("leader", i), b.leader), (("le", i), b.leader_epoch),
                (("pe", i), b.partition_epoch), (("leso", i), b.leso)]
        for k, e in enumerate(b.log):
            out += [(("lep", i, k), e.epoch), (("lval", i, k), e.value)]
        isr, pend = _bits(n, b.isr), _bits(n, b.pending)
        out += [(("isr", i, j), isr[j]) for j in range(n)] + [(("pend", i, j), pend[j]) for j in range(n)]
        assert b.replicas == (tuple(range(n)) if b.leader == i else ()), "the encoding makes every broker a replica"
        if b.leader == i:
            assert len(b.followers) == n, "a leader without follower state"
            fs = b.followers
        else:
            assert b.followers == (), "follower state on a broker that does not lead"
            fs = ((UNKNOWN, UNKNOWN, False),) * n
        for j, (fl, fe, fc) in enumerate(fs):
            out += [(("fleo", i, j), fl), (("fep", i, j), fe), (("fcu", i, j), fc)]
    for i, r in enumerate(s.controller.brokers):
        assert not r.in_controlled_shutdown
        out += [(("rep", i), r.epoch), (("fenced", i), r.fenced)]
    log = s.controller.log
    start = log[0].partition_epoch
    out += [(("c_start",), start), (("c_latest",), log[-1].partition_epoch)]
    for x, r in enumerate(log):
        p = start + x
        assert r.partition_epoch == p and p <= layout.P and r.replicas == tuple(range(n))
        assert not r.removing and not r.adding, "the encoding has no reassignment"
        isr, elr, lke = _bits(n, r.isr), _bits(n, r.elr), _lke_bits(n, r.last_known_elr)
        out += [(("c_isr", p, j), isr[j]) for j in range(n)] + [(("c_elr", p, j), elr[j]) for j in range(n)]
        out += [(("c_lke", p, j), lke[j]) for j in range(n + 1)]
        out += [(("c_leader", p), r.leader), (("c_le", p), r.leader_epoch), (("c_rec", p), r.recovering)]
    h = s.history
    out += [(("next",), h.next_value), (("crashes",), h.crashes), (("lossy",), h.lossy_crashes),
            (("fences",), h.fences), (("losses",), h.losses), (("elen",), len(h.exposed))]
    assert len(h.exposed) <= L
    for k, e in enumerate(h.exposed):
        out += [(("eep", k), e.epoch), (("eval", k), e.value)]
    pend = {p.value: p for p in h.pending}
    assert len(pend) == len(h.pending) and list(pend) == sorted(pend)
    for v in range(layout.V):
        out.append((("hp", v), v in pend))
        if v in pend:
            p = pend[v]
            out += [(("hpl", v), p.leader), (("hple", v), p.leader_epoch), (("hpoff", v), p.offset)]
        out.append((("acked", v), v in h.acked))
    assert len(set(h.acked)) == len(h.acked)
    return out


def messages(s: State) -> list[Any]:
    return list(s.fetch_requests) + list(s.fetch_responses) + list(s.ap_requests) + list(s.ap_responses)


def _reg_fields(n: int, sym: Sym, m: int, r: PartitionRegistration) -> list[Any]:
    isr, elr, lke = _bits(n, r.isr), _bits(n, r.elr), _lke_bits(n, r.last_known_elr)
    assert r.replicas == tuple(range(n))
    return ([sym[("mr_isr", m, j)] == isr[j] for j in range(n)] + [sym[("mr_elr", m, j)] == elr[j] for j in range(n)]
            + [sym[("mr_lke", m, j)] == lke[j] for j in range(n + 1)]
            + [sym[("mr_leader", m)] == r.leader, sym[("mr_le", m)] == r.leader_epoch,
               sym[("mr_pe", m)] == r.partition_epoch, sym[("mr_rec", m)] == r.recovering])


def _ap_request_fields(n: int, sym: Sym, m: int, q: AlterPartitionRequest) -> list[Any]:
    members = dict(q.new_isr)
    assert len(members) == len(q.new_isr) and all(0 <= j < n for j in members)
    out = [sym[("ma", m)] == q.leader, sym[("mbe", m)] == q.broker_epoch, sym[("mle", m)] == q.leader_epoch,
           sym[("moff", m)] == q.partition_epoch, sym[("mrecov", m)] == q.recovering]
    for j in range(n):
        out.append(sym[("mnis", m, j)] == (j in members))
        if j in members:
            out.append(sym[("mnie", m, j)] == members[j])
    return out


def message_in_slot(layout: Layout, sym: Sym, m: int, msg: Any) -> Any:
    """The constraint: slot m holds the message `msg`."""
    n = layout.n
    if isinstance(msg, FetchRequest):
        cs = [sym[("mk", m)] == FREQ, sym[("ma", m)] == msg.follower, sym[("mb", m)] == msg.leader,
              sym[("mbe", m)] == msg.broker_epoch, sym[("mle", m)] == msg.leader_epoch,
              sym[("moff", m)] == msg.fetch_offset, sym[("mlfe", m)] == msg.last_fetched_epoch]
    elif isinstance(msg, FetchResponse):
        assert len(msg.records) <= layout.L
        cs = [sym[("mk", m)] == FRESP, sym[("ma", m)] == msg.follower, sym[("mb", m)] == msg.leader,
              sym[("mle", m)] == msg.leader_epoch, sym[("moff", m)] == msg.fetch_offset, sym[("merr", m)] == msg.error,
              sym[("mde", m)] == msg.diverging_epoch, sym[("mdo", m)] == msg.diverging_end_offset,
              sym[("mhw", m)] == msg.hw, sym[("mrlen", m)] == len(msg.records)]
        for k, e in enumerate(msg.records):
            cs += [sym[("mrep", m, k)] == e.epoch, sym[("mrval", m, k)] == e.value]
    elif isinstance(msg, AlterPartitionRequest):
        cs = [sym[("mk", m)] == APREQ] + _ap_request_fields(n, sym, m, msg)
    elif isinstance(msg, AlterPartitionResponse):
        assert msg.leader == msg.request.leader
        cs = [sym[("mk", m)] == APRESP, sym[("merr", m)] == msg.error, sym[("mhas", m)] == bool(msg.registration)]
        cs += _ap_request_fields(n, sym, m, msg.request)
        if msg.registration:
            cs += _reg_fields(n, sym, m, msg.registration[0])
    else:
        raise TypeError(f"not a message: {msg!r}")
    return z3.And(cs)


def network_matches(layout: Layout, sym: Sym, msgs: list[Any]) -> Any:
    """The slots hold exactly `msgs`, in some order (the others are empty)."""
    M = layout.M
    assert len(msgs) <= M, "more messages in flight than max_in_flight"
    options = []
    for placement in itertools.permutations(range(M), len(msgs)):
        used = set(placement)
        cs = [message_in_slot(layout, sym, m, msg) for m, msg in zip(placement, msgs)]
        cs += [sym[("mk", m)] == EMPTY for m in range(M) if m not in used]
        options.append(z3.And(cs))
    return z3.Or(options)


def matches(layout: Layout, sym: Sym, s: State) -> Any:
    """The constraint: the symbolic state `sym` is the abstraction of the Python state `s`."""
    cs = [sym[key] == val(v) for key, v in values(layout, s)]
    cs.append(network_matches(layout, sym, messages(s)))
    return z3.And(cs)


def init_constraint(layout: Layout, sym: Sym, p: Params) -> Any:
    from model.replication.model import initial_state

    return matches(layout, sym, initial_state(p))


# --- decoding a Z3 model into a Python state -----------------------------------------------------


class _Eval:
    def __init__(self, model: z3.ModelRef, sym: Sym) -> None:
        self.model, self.sym = model, sym

    def __call__(self, key: Key) -> Any:
        v = self.model.eval(self.sym[key], model_completion=True)
        if z3.is_bool(v):
            return z3.is_true(v)
        return v.as_long()


def _set(ev: _Eval, name: str, idx: tuple, n: int) -> tuple[int, ...]:
    return tuple(j for j in range(n) if ev((name, *idx, j)))


def _lke(ev: _Eval, name: str, idx: tuple, n: int) -> tuple[int, ...]:
    return ((-1,) if ev((name, *idx, n)) else ()) + _set(ev, name, idx, n)


def _log(ev: _Eval, ep: str, vl: str, idx: tuple, length: int, L: int) -> tuple[LogEntry, ...]:
    length = max(0, min(length, L))
    return tuple(LogEntry(ev((ep, *idx, k)), ev((vl, *idx, k))) for k in range(length))


def decode_message(layout: Layout, ev: _Eval, m: int) -> Any:
    """The message in slot m (None when it is empty)."""
    n, L = layout.n, layout.L
    kind = ev(("mk", m))
    if kind == FREQ:
        return FetchRequest(ev(("ma", m)), ev(("mb", m)), ev(("mbe", m)), ev(("mle", m)), ev(("moff", m)),
                            ev(("mlfe", m)))
    if kind == FRESP:
        return FetchResponse(ev(("ma", m)), ev(("mb", m)), ev(("mle", m)), ev(("moff", m)), ev(("merr", m)),
                             ev(("mde", m)), ev(("mdo", m)), _log(ev, "mrep", "mrval", (m,), ev(("mrlen", m)), L),
                             ev(("mhw", m)))
    if kind in (APREQ, APRESP):
        req = AlterPartitionRequest(ev(("ma", m)), ev(("mbe", m)), ev(("mle", m)), ev(("moff", m)),
                                    tuple(IsrMember(j, ev(("mnie", m, j))) for j in range(n) if ev(("mnis", m, j))),
                                    ev(("mrecov", m)))
        if kind == APREQ:
            return req
        reg: tuple = ()
        if ev(("mhas", m)):
            reg = (PartitionRegistration(tuple(range(n)), _set(ev, "mr_isr", (m,), n), _set(ev, "mr_elr", (m,), n),
                                         _lke(ev, "mr_lke", (m,), n), ev(("mr_leader", m)), ev(("mr_le", m)),
                                         ev(("mr_pe", m)), ev(("mr_rec", m))),)
        return AlterPartitionResponse(req.leader, req, ev(("merr", m)), reg)
    return None


def decode(layout: Layout, model: z3.ModelRef, sym: Sym, epochs: Iterable[int] = ()) -> State:
    """The Python state a Z3 model assigns to `sym` (`epochs` is unused: no history arrays)."""
    ev = _Eval(model, sym)
    n, L = layout.n, layout.L
    brokers = []
    for i in range(n):
        leader = ev(("leader", i))
        followers = tuple(FollowerState(ev(("fleo", i, j)), ev(("fep", i, j)), ev(("fcu", i, j))) for j in range(n)) \
            if leader == i else ()
        brokers.append(Broker(ev(("alive", i)), ev(("bepoch", i)), ev(("clean", i)), ev(("meta", i)),
                              _log(ev, "lep", "lval", (i,), ev(("leo", i)), L), ev(("hw", i)), leader, ev(("le", i)),
                              ev(("pe", i)), _set(ev, "isr", (i,), n), _set(ev, "pend", (i,), n), ev(("leso", i)),
                              followers, tuple(range(n)) if leader == i else ()))
    regs = tuple(BrokerRegistration(ev(("rep", i)), ev(("fenced", i)), False) for i in range(n))
    start, latest = ev(("c_start",)), ev(("c_latest",))
    start, latest = max(0, min(start, layout.P)), max(0, min(latest, layout.P))
    log = tuple(PartitionRegistration(tuple(range(n)), _set(ev, "c_isr", (p,), n), _set(ev, "c_elr", (p,), n),
                                      _lke(ev, "c_lke", (p,), n), ev(("c_leader", p)), ev(("c_le", p)), p,
                                      ev(("c_rec", p)))
                for p in range(start, max(start, latest) + 1))
    msgs = [decode_message(layout, ev, m) for m in range(layout.M)]
    pending = tuple(Pending(v, ev(("hpl", v)), ev(("hple", v)), ev(("hpoff", v))) for v in range(layout.V)
                    if ev(("hp", v)))
    acked = tuple(v for v in range(layout.V) if ev(("acked", v)))
    history = History(ev(("next",)), pending, acked, _log(ev, "eep", "eval", (), ev(("elen",)), L), ev(("crashes",)),
                      ev(("lossy",)), ev(("fences",)), ev(("losses",)), 0, False)
    return State(tuple(brokers), Controller(regs, log),
                 tuple(sorted(x for x in msgs if isinstance(x, FetchRequest))),
                 tuple(sorted(x for x in msgs if isinstance(x, FetchResponse))),
                 tuple(sorted(x for x in msgs if type(x) is AlterPartitionRequest)),
                 tuple(sorted(x for x in msgs if isinstance(x, AlterPartitionResponse))),
                 history)
