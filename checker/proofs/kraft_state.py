"""The KRaft state (model/kraft/state.py) as Z3 variables, for N voters and logs of at most
`max_log` entries; epochs, offsets and HWs are unbounded integers.

Layout (keys of a `Sym`):
  node i      role, epoch, leader, voted, leo, hw, estart (epoch start offset), fetched,
              observer, vpers (vote_persisted); lep/lkind[i, k] the log's k-th entry (epoch,
              kind), meaningful below leo; votes[i, j] (Prospective/Candidate), end[i, j] (Leader)
  network     one slot per (rpc, requester, responder): at most one request of an RPC or its
              response is in flight per pair (RequestManager), so the model's set of messages is
              a slot array. st = 0 empty, 1 request, 2 response; the message's fields follow.
  cut[a, b]   the link a-b (a < b) is cut; restarts, disk_losses, cuts, losses, timers
  history     elected: epoch -> the first leader elected in it (-1 none) and el_conflict (a
              second leader was elected in some epoch); cmt_ep/cmt_kind/cmt_at[k]: the entry
              first committed at offset k (-1 none) and cmt_conflict (another entry was committed
              at an offset); lhws: epoch -> the largest HW its leader exposed; fatal[i, code];
              last_event.
  ghosts      symbolic only, never read by an action: vote_hist[i]: epoch -> the candidate i
              granted its standard vote in that epoch (-1 none); elog_ep/elog_kind[k]: epoch
              -> the k-th entry of the log of that epoch's leader, as it last wrote it, and
              elen: epoch -> its length (0 before an election); ack[i]: epoch -> the longest
              prefix of that epoch's leader log that i held when it sent a Fetch in that epoch
              (for the leader itself, its log length); vle[i]/vleo[i]: epoch -> the last epoch
              and end offset of i's log when it granted its standard vote in that epoch (the
              vote's snapshot). They make lemmas statable.

The abstraction of a Python state (`matches`) is exact except after a conflict: the Python
history keeps every entry committed at an offset (every leader of an epoch), the encoding the
first one and a flag. Conflicts only arise once committed_kept (election_safety) has failed.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

import z3

from checker.proofs.term import Key, Sym, val
from model.kraft.params import Params
from model.kraft.rules import CANDIDATE, LEADER, NO_ID, PROSPECTIVE
from model.kraft.state import (
    BQE_REQUEST, BQE_RESPONSE, FETCH_REQUEST, FETCH_RESPONSE, VOTE_REQUEST, VOTE_RESPONSE,
    BeginQuorumEpochRequest, BeginQuorumEpochResponse, FetchRequest, FetchResponse, History, KraftState,
    Node, VoteRequest, VoteResponse, initial_state,
)

RPCS = (VOTE_REQUEST, BQE_REQUEST, FETCH_REQUEST)
EMPTY, REQUEST, RESPONSE = 0, 1, 2
FATAL_CODES = (1, 2)

NODE_INTS = ("role", "epoch", "leader", "voted", "leo", "hw", "estart")
NODE_BOOLS = ("fetched", "observer", "vpers")
SLOT_COMMON = (("st", int), ("live", bool), ("mepoch", int), ("mleader", int), ("merror", int))
SLOT_FIELDS = {
    VOTE_REQUEST: (("last_epoch", int), ("last_offset", int), ("pre_vote", bool), ("granted", bool)),
    BQE_REQUEST: (),
    FETCH_REQUEST: (("fetch_offset", int), ("lfe", int), ("fobs", bool), ("div_epoch", int),
                    ("div_offset", int), ("rec_len", int), ("rhw", int)),
}
GHOSTS = ("vote_hist", "elog_ep", "elog_kind", "elen", "ack", "vle", "vleo")
ARRAY = z3.ArraySort(z3.IntSort(), z3.IntSort())


@dataclass(frozen=True)
class Layout:
    """The sizes: n voters, logs of at most `L` entries."""

    n: int
    L: int

    @classmethod
    def of(cls, p: Params) -> "Layout":
        return cls(p.n, p.max_log)

    def pairs(self) -> list[tuple[int, int]]:
        return [(a, b) for a in range(self.n) for b in range(self.n) if a != b]

    def links(self) -> list[tuple[int, int]]:
        return [(a, b) for a in range(self.n) for b in range(a + 1, self.n)]

    def sorts(self) -> dict[Key, Any]:
        """Every variable key and its sort."""
        out: dict[Key, Any] = {}
        n, L = self.n, self.L
        for i in range(n):
            for name in NODE_INTS:
                out[(name, i)] = z3.IntSort()
            for name in NODE_BOOLS:
                out[(name, i)] = z3.BoolSort()
            for k in range(L):
                out[("lep", i, k)] = z3.IntSort()
                out[("lkind", i, k)] = z3.IntSort()
            for j in range(n):
                out[("votes", i, j)] = z3.IntSort()
                out[("end", i, j)] = z3.IntSort()
            for c in FATAL_CODES:
                out[("fatal", i, c)] = z3.BoolSort()
            out[("vote_hist", i)] = ARRAY
            out[("ack", i)] = ARRAY
            out[("vle", i)] = ARRAY
            out[("vleo", i)] = ARRAY
        for r in RPCS:
            for a, b in self.pairs():
                for name, t in SLOT_COMMON + SLOT_FIELDS[r]:
                    out[(name, r, a, b)] = z3.IntSort() if t is int else z3.BoolSort()
                if r == FETCH_REQUEST:
                    for k in range(L):
                        out[("rec_ep", r, a, b, k)] = z3.IntSort()
                        out[("rec_kind", r, a, b, k)] = z3.IntSort()
        for a, b in self.links():
            out[("cut", a, b)] = z3.BoolSort()
        for name in ("restarts", "disk_losses", "cuts", "losses", "timers", "last_event"):
            out[(name,)] = z3.IntSort()
        out[("elected",)] = ARRAY
        out[("lhws",)] = ARRAY
        out[("el_conflict",)] = z3.BoolSort()
        out[("cmt_conflict",)] = z3.BoolSort()
        for k in range(L):
            for name in ("cmt_ep", "cmt_kind", "cmt_at"):
                out[(name, k)] = z3.IntSort()
            out[("elog_ep", k)] = ARRAY
            out[("elog_kind", k)] = ARRAY
        out[("elen",)] = ARRAY
        return out


def key_name(prefix: str, key: Key) -> str:
    return prefix + "_".join(str(x) for x in key)


def fresh(layout: Layout, prefix: str = "") -> Sym:
    """A state of fresh variables named `prefix` + key."""
    return Sym({k: z3.Const(key_name(prefix, k), s) for k, s in layout.sorts().items()})


# --- the abstraction of a Python state -----------------------------------------------------------


def _array(pairs: Iterable[tuple[int, Any]], default: int = NO_ID) -> Any:
    a: Any = z3.K(z3.IntSort(), z3.IntVal(default))
    for x, y in sorted(pairs):
        a = z3.Store(a, x, y)
    return a


def slot_of(m: Any) -> tuple[int, int, int, int]:
    """(rpc, requester, responder, st) of a message."""
    if m.kind in RPCS:
        return m.kind, m.src, m.dst, REQUEST
    return m.kind - 1, m.dst, m.src, RESPONSE


def values(layout: Layout, s: KraftState) -> list[tuple[Key, Any]]:
    """The meaningful variables of a Python state and their values (arrays as Z3 terms; a
    conflict in the history gives a Z3 Or of the choices under the key ("choice", ...))."""
    out: list[tuple[Key, Any]] = []
    n, L = layout.n, layout.L
    assert len(s.nodes) == n
    for i, nd in enumerate(s.nodes):
        assert nd.leo <= L, f"log of node {i} longer than max_log"
        out += [(("role", i), nd.role), (("epoch", i), nd.epoch), (("leader", i), nd.leader),
                (("voted", i), nd.voted), (("leo", i), nd.leo), (("hw", i), nd.hw),
                (("estart", i), nd.epoch_start), (("fetched", i), nd.fetched),
                (("observer", i), nd.observer), (("vpers", i), nd.vote_persisted)]
        for k, (e, kind) in enumerate(nd.log):
            out += [(("lep", i, k), e), (("lkind", i, k), kind)]
        if nd.role in (PROSPECTIVE, CANDIDATE):
            assert len(nd.votes) == n
            out += [(("votes", i, j), v) for j, v in enumerate(nd.votes)]
        else:
            assert nd.votes == ()
        if nd.role == LEADER:
            assert len(nd.end_offsets) == n
            out += [(("end", i, j), v) for j, v in enumerate(nd.end_offsets)]
        else:
            assert nd.end_offsets == ()
        fatal = set(s.history.fatal)
        out += [(("fatal", i, c), (i, c) in fatal) for c in FATAL_CODES]
    present = {}
    for m in s.network:
        r, a, b, st = slot_of(m)
        assert (r, a, b) not in present, f"two messages of one RPC between {a} and {b}"
        present[(r, a, b)] = (m, st)
    for r in RPCS:
        for a, b in layout.pairs():
            if (r, a, b) not in present:
                out.append((("st", r, a, b), EMPTY))
                continue
            m, st = present[(r, a, b)]
            out.append((("st", r, a, b), st))
            if st == REQUEST:
                out += [(("live", r, a, b), m.live), (("mepoch", r, a, b), m.epoch)]
                if r == VOTE_REQUEST:
                    out += [(("last_epoch", r, a, b), m.last_epoch), (("last_offset", r, a, b), m.last_offset),
                            (("pre_vote", r, a, b), m.pre_vote)]
                elif r == FETCH_REQUEST:
                    out += [(("fetch_offset", r, a, b), m.fetch_offset), (("lfe", r, a, b), m.last_fetched_epoch),
                            (("fobs", r, a, b), m.observer)]
            else:
                out += [(("mepoch", r, a, b), m.epoch), (("mleader", r, a, b), m.leader),
                        (("merror", r, a, b), m.error)]
                if r == VOTE_REQUEST:
                    out.append((("granted", r, a, b), m.granted))
                elif r == FETCH_REQUEST:
                    assert len(m.records) <= L
                    out += [(("div_epoch", r, a, b), m.diverging_epoch), (("div_offset", r, a, b), m.diverging_offset),
                            (("rec_len", r, a, b), len(m.records)), (("rhw", r, a, b), m.hw)]
                    for k, (e, kind) in enumerate(m.records):
                        out += [(("rec_ep", r, a, b, k), e), (("rec_kind", r, a, b, k), kind)]
    cut = set(s.cut_links)
    out += [(("cut", a, b), (a, b) in cut) for a, b in layout.links()]
    out += [(("restarts",), s.restarts), (("disk_losses",), s.disk_losses), (("cuts",), s.cuts),
            (("losses",), s.losses), (("timers",), s.timers), (("last_event",), s.history.last_event)]
    h = s.history
    leaders: dict[int, list[int]] = {}
    for e, i in h.elected:
        leaders.setdefault(e, []).append(i)
    out.append((("el_conflict",), any(len(v) > 1 for v in leaders.values())))
    out.append((("elected",), _choice_array("el", leaders)))
    out.append((("lhws",), _array(h.leader_hws)))
    at: dict[int, list[tuple[int, int, int]]] = {}
    for off, e, kind, ce in h.committed:
        at.setdefault(off, []).append((e, kind, ce))
    out.append((("cmt_conflict",), any(len(v) > 1 for v in at.values())))
    for k in range(L):
        entries = at.get(k, [])
        if len(entries) <= 1:
            e, kind, ce = entries[0] if entries else (NO_ID, 0, NO_ID)
            out.append((("cmt_ep", k), e))
            if entries:
                out += [(("cmt_kind", k), kind), (("cmt_at", k), ce)]
        else:  # several: the encoding keeps one of them (the first, which Python forgets)
            out.append((("choice", "cmt", k), entries))
    return out


def _choice_array(tag: str, leaders: dict[int, list[int]]) -> Any:
    """An epoch -> leader array; where Python has several leaders, a marker the caller resolves."""
    if all(len(v) == 1 for v in leaders.values()):
        return _array((e, v[0]) for e, v in leaders.items())
    return ("choice", tag, leaders)


def matches(layout: Layout, sym: Sym, s: KraftState) -> Any:
    """The constraint: the symbolic state `sym` is the abstraction of the Python state `s`."""
    cs = []
    for key, v in values(layout, s):
        if key[0] == "choice":  # several entries committed at offset key[2]: any of them
            k = key[2]
            cs.append(z3.Or([z3.And(sym[("cmt_ep", k)] == e, sym[("cmt_kind", k)] == kind, sym[("cmt_at", k)] == ce)
                             for e, kind, ce in v]))
        elif isinstance(v, tuple) and v and v[0] == "choice":
            leaders = v[2]
            a: Any = z3.K(z3.IntSort(), z3.IntVal(NO_ID))
            for e in sorted(leaders):
                if len(leaders[e]) == 1:
                    a = z3.Store(a, e, leaders[e][0])
                else:
                    pick = z3.FreshInt("pick")
                    cs.append(z3.Or([pick == x for x in leaders[e]]))
                    a = z3.Store(a, e, pick)
            cs.append(sym[key] == a)
        else:
            cs.append(sym[key] == (v if isinstance(v, z3.ExprRef) else val(v)))
    return z3.And(cs)


def init_constraint(layout: Layout, sym: Sym) -> Any:
    """Init: the model's initial state, and the ghosts empty."""
    n = layout.n
    ghosts = [sym[("vote_hist", i)] == z3.K(z3.IntSort(), z3.IntVal(NO_ID)) for i in range(n)]
    ghosts.append(sym[("elen",)] == z3.K(z3.IntSort(), z3.IntVal(0)))
    zero = z3.K(z3.IntSort(), z3.IntVal(0))
    ghosts += [sym[(g, i)] == zero for i in range(n) for g in ("ack", "vle", "vleo")]
    # the encoding's canonical values of the role data a fresh node does not have
    canon = [sym[("votes", i, j)] == 0 for i in range(n) for j in range(n)]
    canon += [sym[("end", i, j)] == NO_ID for i in range(n) for j in range(n)]
    return z3.And(matches(layout, sym, initial_state(n)), *ghosts, *canon)


# --- decoding a Z3 model into a Python state -----------------------------------------------------


def decode(layout: Layout, model: z3.ModelRef, sym: Sym, epochs: Iterable[int] = ()) -> KraftState:
    """The Python state a Z3 model assigns to `sym`. History arrays are read at the epochs the
    state mentions and at `epochs`."""

    def ev(key: Key) -> Any:
        v = model.eval(sym[key], model_completion=True)
        if z3.is_bool(v):
            return z3.is_true(v)
        return v.as_long()

    n, L = layout.n, layout.L
    nodes = []
    seen_epochs = set(epochs)
    for i in range(n):
        role, leo = ev(("role", i)), ev(("leo", i))
        leo = max(0, min(leo, L))
        log = tuple((ev(("lep", i, k)), ev(("lkind", i, k))) for k in range(leo))
        votes = tuple(ev(("votes", i, j)) for j in range(n)) if role in (PROSPECTIVE, CANDIDATE) else ()
        ends = tuple(ev(("end", i, j)) for j in range(n)) if role == LEADER else ()
        nodes.append(Node(role, ev(("epoch", i)), ev(("leader", i)), ev(("voted", i)), log, ev(("hw", i)), votes,
                          ev(("estart", i)), ends, ev(("fetched", i)), ev(("observer", i)), ev(("vpers", i))))
        seen_epochs.add(nodes[-1].epoch)
        seen_epochs.update(e for e, _ in log)
    network: list[Any] = []
    for r in RPCS:
        for a, b in layout.pairs():
            st = ev(("st", r, a, b))
            if st == REQUEST:
                live, epoch = ev(("live", r, a, b)), ev(("mepoch", r, a, b))
                if r == VOTE_REQUEST:
                    network.append(VoteRequest(r, a, b, live, epoch, ev(("last_epoch", r, a, b)),
                                               ev(("last_offset", r, a, b)), ev(("pre_vote", r, a, b))))
                elif r == BQE_REQUEST:
                    network.append(BeginQuorumEpochRequest(r, a, b, live, epoch))
                else:
                    network.append(FetchRequest(r, a, b, live, epoch, ev(("fetch_offset", r, a, b)),
                                                ev(("lfe", r, a, b)), ev(("fobs", r, a, b))))
            elif st == RESPONSE:
                epoch, leader, error = ev(("mepoch", r, a, b)), ev(("mleader", r, a, b)), ev(("merror", r, a, b))
                if r == VOTE_REQUEST:
                    network.append(VoteResponse(VOTE_RESPONSE, b, a, epoch, leader, error, ev(("granted", r, a, b))))
                elif r == BQE_REQUEST:
                    network.append(BeginQuorumEpochResponse(BQE_RESPONSE, b, a, epoch, leader, error))
                else:
                    ln = max(0, min(ev(("rec_len", r, a, b)), L))
                    recs = tuple((ev(("rec_ep", r, a, b, k)), ev(("rec_kind", r, a, b, k))) for k in range(ln))
                    network.append(FetchResponse(FETCH_RESPONSE, b, a, epoch, leader, error, ev(("div_epoch", r, a, b)),
                                                 ev(("div_offset", r, a, b)), recs, ev(("rhw", r, a, b))))
            else:
                continue
            seen_epochs.add(network[-1].epoch)
    cut = tuple((a, b) for a, b in layout.links() if ev(("cut", a, b)))
    el = model.eval(sym[("elected",)], model_completion=True)
    hws = model.eval(sym[("lhws",)], model_completion=True)
    committed = []
    for k in range(L):
        e = ev(("cmt_ep", k))
        if e >= 0:
            committed.append((k, e, ev(("cmt_kind", k)), ev(("cmt_at", k))))
            seen_epochs.update((e, committed[-1][3]))
    elected, leader_hws = [], []
    for e in sorted(x for x in seen_epochs if x >= 0):
        x = model.eval(el[e], model_completion=True).as_long()
        if x >= 0:
            elected.append((e, x))
        y = model.eval(hws[e], model_completion=True).as_long()
        if y >= 0:
            leader_hws.append((e, y))
    fatal = tuple((i, c) for i in range(n) for c in FATAL_CODES if ev(("fatal", i, c)))
    history = History(tuple(sorted(elected)), tuple(sorted(committed)), tuple(leader_hws), fatal, ev(("last_event",)))
    return KraftState(tuple(nodes), tuple(sorted(network)), cut, ev(("restarts",)), ev(("disk_losses",)),
                      ev(("cuts",)), ev(("losses",)), ev(("timers",)), history)
