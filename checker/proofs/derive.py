"""Derive the KRaft transition relation from the model's own Python (model/kraft) by symbolic
execution: an action function runs on a state whose ints and bools are Z3 stand-ins (`SInt`,
`SBool`, checker/proofs/symbolic.py); a branch on a symbolic condition (`__bool__`) forks the path. Paths are explored depth
first by re-execution with a recorded choice sequence (CrossHair/KLEE style); a branch side the
path condition makes infeasible is pruned with a Z3 check. Each completed path gives (path
condition, successor as Z3 terms), "not enabled" (the action returned None) or a crash (the model
raised: an assertion, an index out of range), kept apart as the action's `crash` condition.

The stand-in state follows kraft_state's layout:
- nodes: scalars, logs (the length forked on when a node is first read), votes and end offsets
  (their shape forked on the role), the cut links (forked per link), the fault budgets;
- the network: `SymNetwork`, the slot array (one slot per (rpc, requester, responder)). The model
  reaches the network only through model/kraft/network.py's four slot functions (at, put, update,
  count); while deriving, those answer from the slot array: `at` forks on what one slot holds
  (empty, request, response), `update` (a connection reset, a restart's dropped requests) maps
  every slot it names with If terms, merging the paths of its change function, not forking;
- the ghost history: the model's three history updates (quorum.elect, quorum.commit,
  client.fatal) are answered on kraft_state's arrays (the first leader of an epoch and a conflict
  flag; the first entry committed at an offset, its kind, commit epoch and a conflict flag; the
  largest HW of each epoch's leader; the fatal flags): the abstraction of the Python value, one
  update at a time (tests/test_derive.py checks each against the Python on concrete histories).
- symbolic ints used as an index, slice or range bound (`__index__`) or as a shift amount are
  forked over the finite values that give distinct results.

The proof-only ghosts (kraft_state.GHOSTS: vote_hist, elog, ack, vle, vleo) have no Python
counterpart; `ghosts` sets them from the derived pre- and post-state (a new standard vote, a
leader's log as it grows, a Fetch sent), as the hand-written oracle (tests/oracles/kraft_next.py)
does at the corresponding calls.
"""
from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import z3

from checker.proofs import kraft_ctx as N
from checker.proofs.kraft_state import EMPTY, REQUEST, RESPONSE, RPCS, SLOT_COMMON, SLOT_FIELDS, Layout, fresh
from checker.proofs.symbolic import (  # noqa: F401 (the stand-ins, also for derive's users)
    CRASHES, Explorer, OutOfLayout, SBool, SInt, Unsupported, _arg_key, _same, _z, derived_step, merged,
)
from checker.proofs.term import Step, Sym, smax
from model.kraft import actions as A
from model.kraft import client, context, faults, network, quorum, requests, rules
from model.kraft.model import _STEP
from model.kraft.quorum import Context
from model.kraft.rules import CANDIDATE, LEADER, NO_ID, PROSPECTIVE, UNRECORDED
from model.kraft.state import (
    BQE_REQUEST, BQE_RESPONSE, FETCH_REQUEST, FETCH_RESPONSE, NO_EVENT, VOTE_REQUEST, VOTE_RESPONSE,
    BeginQuorumEpochRequest, BeginQuorumEpochResponse, FetchRequest, FetchResponse, History, KraftState, Node,
    VoteRequest, VoteResponse,
)
from model.kraft.variants import Protocol


# --- the network stand-in -----------------------------------------------------------------------

REQUEST_FIELDS = {VOTE_REQUEST: ("last_epoch", "last_offset", "pre_vote"), BQE_REQUEST: (),
                  FETCH_REQUEST: ("fetch_offset", "lfe", "fobs")}
RESPONSE_FIELDS = {VOTE_REQUEST: ("granted",), BQE_REQUEST: (), FETCH_REQUEST: ("div_epoch", "div_offset", "rec_len", "rhw")}
BOOL_FIELDS = {"live", "pre_vote", "fobs", "granted"}


def slot_keys(layout: Layout, r: int, a: int, b: int) -> list[Any]:
    keys = [(name, r, a, b) for name, _ in SLOT_COMMON + SLOT_FIELDS[r]]
    if r == FETCH_REQUEST:
        keys += [(name, r, a, b, k) for k in range(layout.L) for name in ("rec_ep", "rec_kind")]
    return keys


class SymNetwork:
    """The messages in flight as kraft_state's slot array: slot -> its variables' terms."""

    def __init__(self, layout: Layout, ex: Explorer, slots: dict[Any, dict[Any, Any]]) -> None:
        self.layout, self.ex, self.slots = layout, ex, slots

    @classmethod
    def of(cls, layout: Layout, pre: Sym, ex: Explorer) -> "SymNetwork":
        return cls(layout, ex, {(r, a, b): {k: pre[k] for k in slot_keys(layout, r, a, b)}
                                for r in RPCS for a, b in layout.pairs()})

    def merge_shape(self) -> Any:
        return ("network",)

    def merge_key(self) -> Any:
        if not hasattr(self, "_key"):
            self._key = ("network",) + tuple(t.get_id() for terms in self.slots.values() for t in terms.values())
        return self._key

    @classmethod
    def merge_cases(cls, ex: Explorer, cases: list[tuple[Any, "SymNetwork"]]) -> "SymNetwork":
        """The networks of a merged function's paths: each slot's variables as If terms where
        the paths differ."""
        net = cases[-1][1]
        slots = {}
        for key, terms in net.slots.items():
            if all(v.slots[key] is terms for _, v in cases):
                slots[key] = terms
                continue
            merged = {}
            for k, t in terms.items():
                for c, v in reversed(cases[:-1]):
                    w = v.slots[key][k]
                    if not _same(w, t):
                        t = z3.If(c, w, t)
                merged[k] = t
            slots[key] = merged
        return SymNetwork(net.layout, ex, slots)

    def _with(self, key: Any, terms: dict[Any, Any]) -> "SymNetwork":
        slots = dict(self.slots)
        slots[key] = terms
        return SymNetwork(self.layout, self.ex, slots)

    def message(self, key: Any, shape: int) -> Any:
        """The message a slot holds when its state is `shape` (REQUEST or RESPONSE)."""
        r, a, b = key
        v = self.slots[key]
        ex = self.ex
        I = lambda name: SInt(v[(name, r, a, b)], ex)  # noqa: E731
        B = lambda name: SBool(v[(name, r, a, b)], ex)  # noqa: E731
        if shape == REQUEST:
            if r == VOTE_REQUEST:
                return VoteRequest(r, a, b, B("live"), I("mepoch"), I("last_epoch"), I("last_offset"), B("pre_vote"))
            if r == BQE_REQUEST:
                return BeginQuorumEpochRequest(r, a, b, B("live"), I("mepoch"))
            return FetchRequest(r, a, b, B("live"), I("mepoch"), I("fetch_offset"), I("lfe"), B("fobs"))
        if r == VOTE_REQUEST:
            return VoteResponse(VOTE_RESPONSE, b, a, I("mepoch"), I("mleader"), I("merror"), B("granted"))
        if r == BQE_REQUEST:
            return BeginQuorumEpochResponse(BQE_RESPONSE, b, a, I("mepoch"), I("mleader"), I("merror"))
        n = ex.choose([(v[("rec_len", r, a, b)] == k, k) for k in range(self.layout.L + 1)])
        records = tuple((SInt(v[("rec_ep", r, a, b, k)], ex), SInt(v[("rec_kind", r, a, b, k)], ex)) for k in range(n))
        return FetchResponse(FETCH_RESPONSE, b, a, I("mepoch"), I("mleader"), I("merror"), I("div_epoch"),
                             I("div_offset"), records, I("rhw"))

    def key(self, rpc: int, a: Any, b: Any) -> Any:
        """The slot of (rpc, a, b) with the node ids made concrete (forked over 0..n-1 when
        symbolic), or None for an id outside them (no message has it)."""
        ids = []
        for x in (a, b):
            if isinstance(x, SInt):
                x = self.ex.choose([(x.t == v, v) for v in range(self.layout.n)] + [(z3.BoolVal(True), None)])
            if x is None or not 0 <= x < self.layout.n:
                return None
            ids.append(x)
        return (rpc, ids[0], ids[1]) if ids[0] != ids[1] else None

    def at(self, key: Any) -> Any:
        if key is None:
            return None
        st = self.slots[key][("st",) + key]
        shape = self.ex.choose([(st == EMPTY, EMPTY), (st == REQUEST, REQUEST), (z3.BoolVal(True), RESPONSE)])
        return None if shape == EMPTY else self.message(key, shape)

    def terms_of(self, key: Any, m: Any) -> dict[Any, Any]:
        """The slot's variables once it holds `m` (None: empty; the other fields keep their
        values, meaningless while the slot is empty, as in the hand-written oracle)."""
        r, a, b = key
        if m is None:
            return {("st",) + key: z3.IntVal(EMPTY)}
        if network.slot_of(m) != key:
            raise Unsupported(f"a message put in another slot than its own: {key}")
        if isinstance(m.src, SInt) or isinstance(m.dst, SInt):
            m = m._replace(src=b if m.kind == r else a, dst=a if m.kind != r else b)
        u: dict[Any, Any] = {}
        if m.kind == r:
            u[("st",) + key] = z3.IntVal(REQUEST)
            u[("live",) + key], u[("mepoch",) + key] = _z(m.live), _z(m.epoch)
            for name, value in zip(REQUEST_FIELDS[r], _request_values(m)):
                u[(name,) + key] = _z(value)
        else:
            u[("st",) + key] = z3.IntVal(RESPONSE)
            u[("mepoch",) + key], u[("mleader",) + key], u[("merror",) + key] = _z(m.epoch), _z(m.leader), _z(m.error)
            if r == VOTE_REQUEST:
                u[("granted",) + key] = _z(m.granted)
            elif r == FETCH_REQUEST:
                if len(m.records) > self.layout.L:
                    raise OutOfLayout("a Fetch response with more records than max_log")
                u.update({("div_epoch",) + key: _z(m.diverging_epoch), ("div_offset",) + key: _z(m.diverging_offset),
                          ("rec_len",) + key: z3.IntVal(len(m.records)), ("rhw",) + key: _z(m.hw)})
                for k, (e, kind) in enumerate(m.records):
                    u[("rec_ep",) + key + (k,)], u[("rec_kind",) + key + (k,)] = _z(e), _z(kind)
        return u

    def put(self, key: Any, m: Any) -> "SymNetwork":
        if key is None:
            raise OutOfLayout("a message between node ids outside the layout")
        return self._with(key, {**self.slots[key], **self.terms_of(key, m)})

    def update(self, keys: Any, change: Callable[[Any], Any]) -> "SymNetwork":
        """Each slot's message becomes change(message): the paths of `change` on each shape of
        the slot are explored on their own (under the domain only, so the result holds on every
        path that reaches here, and is made once per slot value and change) and merged into If
        terms, where a fork would multiply the action's paths."""
        out = self
        for key in keys:
            if key is None:
                continue
            old = self.slots[key]
            merged = self.ex.memo(("update", key, tuple(t.get_id() for t in old.values()), _identity(change)),
                                  lambda: self._merge(key, old, change))
            if merged is not None:
                out = out._with(key, merged)
        return out

    def _merge(self, key: Any, old: dict[Any, Any], change: Callable[[Any], Any]) -> dict[Any, Any] | None:
        st = old[("st",) + key]
        merged = dict(old)
        outer, self.ex.frames = self.ex.frames, []
        try:
            for shape in (REQUEST, RESPONSE):
                cond = z3.simplify(st == shape)
                if z3.is_false(cond) or not self.ex.feasible(cond):
                    continue

                def run(shape: int = shape) -> Any:
                    m = self.message(key, shape)
                    new = change(m)
                    return None if new is m else self.terms_of(key, new)

                for pc, result in self.ex.paths(run, assume=cond):
                    if result is None:
                        continue
                    for k, t in result.items():
                        if not _same(t, merged[k]):
                            merged[k] = z3.If(pc, t, merged[k])
        finally:
            self.ex.frames = outer
        return merged if any(not _same(merged[k], old[k]) for k in old) else None

    def count(self) -> Any:
        if not hasattr(self, "_count"):
            sts = [v[("st",) + key] for key, v in self.slots.items()]
            self._count = z3.Sum([z3.If(st != EMPTY, 1, 0) for st in sts])
        return SInt(self._count, self.ex)


def _identity(f: Callable[..., Any]) -> Any:
    """A function's code and the values it closes over: two closures with equal identities
    compute the same thing."""
    return f.__code__, tuple(c.cell_contents for c in f.__closure__ or ())


def _request_values(m: Any) -> tuple[Any, ...]:
    if m.kind == VOTE_REQUEST:
        return m.last_epoch, m.last_offset, m.pre_vote
    if m.kind == FETCH_REQUEST:
        return m.fetch_offset, m.last_fetched_epoch, m.observer
    return ()


# --- the history stand-in -----------------------------------------------------------------------


class SymPart:
    """A part of the ghost history as kraft_state's variables (key -> term). Only the model's
    history updates (quorum.elect, quorum.commit, client.fatal) read it, answered below."""

    def __init__(self, terms: dict[Any, Any]) -> None:
        self.terms = terms

    def merge_shape(self) -> Any:
        return ("part",) + tuple(self.terms)

    def merge_key(self) -> Any:
        return ("part",) + tuple(t.get_id() for t in self.terms.values())

    @classmethod
    def merge_cases(cls, ex: Explorer, cases: list[tuple[Any, "SymPart"]]) -> "SymPart":
        return SymPart(merged_terms([(c, v.terms) for c, v in cases]))

    def __iter__(self) -> Any:
        raise Unsupported("reads the history other than through quorum.elect, quorum.commit, client.fatal")

    __len__ = __getitem__ = __contains__ = __iter__  # type: ignore[assignment]


class SymLinks:
    """The cut links as kraft_state's flags (link -> Bool term). Membership is a decision on the
    flags of the links it may name, taken where the model asks (`network.link_cut`); deciding
    every flag when the state was built made 2^links paths of every action (8 at 3 voters, 64 at
    4, 1,024 at 5). CutLink and HealLink set one flag (network.cut, network.heal); iterating, which
    no action does, would decide each flag."""

    def __init__(self, ex: Explorer, flags: dict[tuple[int, int], Any]) -> None:
        self.ex, self.flags = ex, flags

    def term(self, link: tuple[Any, Any]) -> Any:
        """Is `link` cut, as a term (its ends concrete or symbolic)?"""
        a, b = link
        if isinstance(a, int) and isinstance(b, int):
            return self.flags.get((a, b), z3.BoolVal(False))
        return z3.Or([z3.And(_z(a) == x, _z(b) == y, f) for (x, y), f in self.flags.items()])

    def __contains__(self, link: Any) -> bool:
        return bool(SBool(self.term(link), self.ex))

    def _cut(self) -> tuple[tuple[int, int], ...]:
        return tuple(link for link, f in self.flags.items() if self.ex.decide(f))

    def __iter__(self) -> Any:
        return iter(self._cut())

    def __len__(self) -> int:
        return len(self._cut())

    def __add__(self, other: tuple) -> tuple:
        return self._cut() + other

    def merge_shape(self) -> Any:
        return ("links",) + tuple(self.flags)

    def merge_key(self) -> Any:
        return ("links",) + tuple(t.get_id() for t in self.flags.values())

    def with_flag(self, link: tuple[int, int], cut: bool) -> "SymLinks":
        """network.cut and network.heal: one link's flag set, no other decided."""
        assert link in self.flags, link
        return SymLinks(self.ex, {**self.flags, link: z3.BoolVal(cut)})

    @classmethod
    def merge_cases(cls, ex: Explorer, cases: list[tuple[Any, "SymLinks"]]) -> "SymLinks":
        return SymLinks(ex, merged_terms([(c, v.flags) for c, v in cases]))


def merged_terms(cases: list[tuple[Any, dict[Any, Any]]]) -> dict[Any, Any]:
    """Each key's term: the first case's whose condition holds, else the last's (If chains;
    a case whose term is the same as the one below it adds nothing)."""
    out = {}
    for k, t in cases[-1][1].items():
        for c, terms in reversed(cases[:-1]):
            if not _same(terms[k], t):
                t = z3.If(c, terms[k], t)
        out[k] = t
    return out


def symbolic_history(layout: Layout, pre: Sym) -> History:
    committed = {k: pre[k] for k in pre.keys() if k[0] in ("cmt_ep", "cmt_kind", "cmt_at", "cmt_conflict")}
    fatal = {k: pre[k] for k in pre.keys() if k[0] == "fatal"}
    return History(SymPart({("elected",): pre[("elected",)], ("el_conflict",): pre[("el_conflict",)]}),
                   SymPart(committed), SymPart({("lhws",): pre[("lhws",)]}), SymPart(fatal), NO_EVENT)


def sym_elect(h: History, epoch: Any, leader: Any) -> SymPart:
    """quorum.elect on the arrays: the first leader of each epoch, and a flag once a second one
    is elected in some epoch."""
    el, conflict = h.elected.terms[("elected",)], h.elected.terms[("el_conflict",)]
    e, ld = _z(epoch), _z(leader)
    prior = el[e]
    return SymPart({("elected",): z3.If(prior == NO_ID, z3.Store(el, e, ld), el),
                    ("el_conflict",): z3.Or(conflict, z3.And(prior != NO_ID, prior != ld))})


def sym_commit(h: History, log: tuple, hw: Any, epoch: Any) -> History:
    """quorum.commit on the arrays: every entry below the HW committed (the first one at each
    offset kept with its kind and commit epoch, a flag once another is committed there); the
    largest HW of the epoch's leader. Python reads log[off] for every off < hw: an HW past the
    log raises, a crash path."""
    if bool(hw > len(log)):
        raise IndexError("commit: the HW is past the log")
    t = dict(h.committed.terms)
    conflict = t[("cmt_conflict",)]
    w, e = _z(hw), _z(epoch)
    for k, (ep, kind) in enumerate(log):
        below, known = w > k, t[("cmt_ep", k)]
        new = z3.And(below, known == NO_ID)
        t[("cmt_ep", k)] = z3.If(new, _z(ep), known)
        t[("cmt_kind", k)] = z3.If(new, _z(kind), t[("cmt_kind", k)])
        t[("cmt_at", k)] = z3.If(new, e, t[("cmt_at", k)])
        conflict = z3.Or(conflict, z3.And(below, known != NO_ID, known != _z(ep)))
    t[("cmt_conflict",)] = conflict
    hws = h.leader_hws.terms[("lhws",)]
    return h._replace(committed=SymPart(t), leader_hws=SymPart({("lhws",): z3.Store(hws, e, smax(w, hws[e]))}))


def sym_fatal(s: KraftState, i: int, code: int) -> KraftState:
    """client.fatal on the flags: (i, code) joins the set."""
    h = s.history
    return s._replace(history=h._replace(fatal=SymPart({**h.fatal.terms, ("fatal", i, code): z3.BoolVal(True)})))


def merged_state(ex: Explorer, fn: Callable[..., Any]) -> Callable[..., Any]:
    """A model function of the state (a send, a role transition, a reply): its paths explored on
    their own under the action's path so far and merged, one fork per shape of result (None, or
    a state whose nodes' logs and role data have given lengths), so the branches of successive
    calls add up instead of multiplying. A node it reads that the action has not read yet is
    built on the action's path first (`NeedNode`), then the function is explored again."""

    def run(*args: Any, **kwargs: Any) -> Any:
        call = (lambda *a: fn(*a, **kwargs)) if kwargs else fn
        while True:
            try:
                if MEMO:
                    key = ("state", fn.__name__, _arg_key(args), tuple((k, _arg_key(v)) for k, v in sorted(kwargs.items())))
                    crash, options = ex.memo(key, lambda: ex.explore_merged(call, args, under_path=False))
                    ex.keep.append(args)  # its terms' ids stay theirs
                else:
                    crash, options = ex.explore_merged(call, args, under_path=True)
                break
            except NeedNode as e:
                if ex.depth > 0:
                    raise  # built by the outermost merge, on the action's own path
                e.nodes.node(e.i)
        return ex.take(crash, options)

    run.__name__ = fn.__name__
    return run


# the model functions of the state merged while deriving (module, name); every module of
# model/kraft that imported one by name is patched too
MERGED_STATE = (
    (client, "_respond"), (client, "maybe_transition"), (client, "handle_common_response"),
    (requests, "send_vote"), (requests, "send_begin_quorum_epoch"), (requests, "send_fetch"),
    (quorum, "poll_sends"), (quorum, "become_unattached"), (quorum, "become_follower"),
    (quorum, "add_voted_state"), (quorum, "update_leader_hw"),
)


@contextlib.contextmanager
def symbolic_model(ex: Explorer | None = None) -> Iterator[None]:
    """While deriving: the network's slot and link functions answer from the symbolic network and
    links, and the history updates from the arrays; with `ex`, the functions of MERGED_STATE are
    merged."""
    saved = [(network, "at", network.at), (network, "put", network.put), (network, "update", network.update),
             (network, "count", network.count), (quorum, "elect", quorum.elect), (quorum, "commit", quorum.commit),
             (client, "fatal", client.fatal)]
    network.at = lambda s, rpc, a, b: s.network.at(s.network.key(rpc, a, b))
    network.put = lambda s, rpc, a, b, m: s._replace(network=s.network.put(s.network.key(rpc, a, b), m))
    network.update = lambda s, slots, change: s._replace(
        network=s.network.update([s.network.key(*k) for k in slots], change))
    network.count = lambda s: s.network.count()
    links = {"cut": lambda s, link: s._replace(cut_links=s.cut_links.with_flag(link, True)),
             "heal": lambda s, link: s._replace(cut_links=s.cut_links.with_flag(link, False))}
    for name, sym in links.items():
        f = getattr(network, name)
        for m in _KRAFT_MODULES:
            if getattr(m, name, None) is f:
                saved.append((m, name, f))
                setattr(m, name, sym)
    quorum.elect, quorum.commit, client.fatal = sym_elect, sym_commit, sym_fatal
    for name in _RULES:
        saved.append((rules, name, getattr(rules, name)))
        setattr(rules, name, merged(getattr(rules, name)))
    if ex is not None:
        for module, name in MERGED_STATE:
            f = getattr(module, name)
            wrapped = merged_state(ex, f)
            for m in _KRAFT_MODULES:
                if getattr(m, name, None) is f:
                    saved.append((m, name, f))
                    setattr(m, name, wrapped)
    try:
        yield
    finally:
        for module, name, value in saved:
            setattr(module, name, value)


_KRAFT_MODULES = (client, quorum, requests, network, faults, context)

# the decision functions merged while deriving: rules.py's functions of plain values
_RULES = tuple(name for name, f in vars(rules).items()
               if callable(f) and getattr(f, "__module__", None) == rules.__name__ and not isinstance(f, type))


# --- the stand-in state from a Sym, and back ------------------------------------------------------


class NeedNode(Exception):
    """A merged function read a node not yet built: it is built (forked on) on the action's own
    path, and the function explored again."""

    def __init__(self, nodes: "LazyNodes", i: int) -> None:
        super().__init__(i)
        self.nodes, self.i = nodes, i


class LazyNodes(tuple):
    """The nodes: node i is built (its log length and role shape forked on) when first read, so an
    action pays only for the nodes it reads."""

    def __new__(cls, n: int, make: Callable[[int], Node], ex: Explorer) -> "LazyNodes":
        t = super().__new__(cls, [None] * n)
        t.make, t.cache, t.ex = make, {}, ex  # type: ignore[attr-defined]
        return t

    def node(self, i: int) -> Node:
        if i not in self.cache:  # type: ignore[attr-defined]
            if self.ex.depth > 0:  # type: ignore[attr-defined]
                raise NeedNode(self, i)
            self.cache[i] = self.make(i)  # type: ignore[attr-defined]
        return self.cache[i]  # type: ignore[attr-defined]

    def merge_shape(self) -> Any:
        return ("nodes", id(self))

    def merge_key(self) -> Any:
        from checker.proofs.symbolic import _arg_key
        return ("nodes",) + tuple(_arg_key(self.cache[i]) if i in self.cache else ("unread", i)  # type: ignore[attr-defined]
                                  for i in range(len(self)))

    def __getitem__(self, k: Any) -> Any:
        if isinstance(k, slice):  # set_node's nodes[:i] + (node,) + nodes[i + 1:]: no read yet
            return tuple(self.cache.get(i) or Thunk(self, i) for i in range(len(self))[k])  # type: ignore[attr-defined]
        return self.node(range(len(self))[k])

    def __iter__(self) -> Any:
        return (self.node(i) for i in range(len(self)))

    def __add__(self, o: Any) -> Any:
        return tuple(self) + tuple(o)


class Thunk:
    """An unread node carried over by a slice: built on its first attribute read."""

    def __init__(self, nodes: LazyNodes, i: int) -> None:
        self.nodes, self.i = nodes, i

    def merge_shape(self) -> Any:
        return ("unread", id(self.nodes), self.i)

    def merge_key(self) -> Any:
        return ("unread", self.i)  # the pre-state's node i, whatever path reads it

    @classmethod
    def merge_cases(cls, ex: Explorer, cases: list[tuple[Any, "Thunk"]]) -> "Thunk":
        return cases[-1][1]  # the same unread node on every path

    def __getattr__(self, name: str) -> Any:
        return getattr(self.nodes.node(self.i), name)


def symbolic_state(layout: Layout, pre: Sym, ex: Explorer) -> KraftState:
    n, L = layout.n, layout.L
    I = lambda k: SInt(pre[k], ex)  # noqa: E731
    B = lambda k: SBool(pre[k], ex)  # noqa: E731

    def make(i: int) -> Node:
        leo = ex.choose([(pre[("leo", i)] == k, k) for k in range(L + 1)])
        log = tuple((I(("lep", i, k)), I(("lkind", i, k))) for k in range(leo))
        role = pre[("role", i)]
        votes = (tuple(I(("votes", i, j)) for j in range(n))
                 if ex.decide(z3.Or(role == PROSPECTIVE, role == CANDIDATE)) else ())
        ends = tuple(I(("end", i, j)) for j in range(n)) if ex.decide(role == LEADER) else ()
        return Node(I(("role", i)), I(("epoch", i)), I(("leader", i)), I(("voted", i)), log, I(("hw", i)),
                    votes, I(("estart", i)), ends, B(("fetched", i)), B(("observer", i)), B(("vpers", i)))

    cut = SymLinks(ex, {link: pre[("cut",) + link] for link in layout.links()})
    return KraftState(LazyNodes(n, make, ex), SymNetwork.of(layout, pre, ex), cut, I(("restarts",)),
                      I(("disk_losses",)), I(("cuts",)), I(("losses",)), I(("timers",)),
                      symbolic_history(layout, pre), 0)


def post_of(layout: Layout, pre: Sym, s0: KraftState, s: KraftState) -> dict[Any, Any]:
    """The variables a successor changes (key -> term): nodes written, slots, links, budgets,
    history. Role data a node does not have takes kraft_state's canonical values (votes
    UNRECORDED, end offsets NO_ID)."""
    n = layout.n
    if s.changes != 0:
        raise Unsupported("voter changes")
    u: dict[Any, Any] = {}
    read = s0.nodes.cache  # type: ignore[attr-defined]
    if not isinstance(s.nodes, LazyNodes):
        for i in range(n):
            nd = tuple.__getitem__(s.nodes, i)
            if isinstance(nd, Thunk) or (i in read and nd is read[i]):
                continue
            if len(nd.log) > layout.L:
                raise OutOfLayout(f"a log longer than max_log at node {i}")
            u.update({("role", i): _z(nd.role), ("epoch", i): _z(nd.epoch), ("leader", i): _z(nd.leader),
                      ("voted", i): _z(nd.voted), ("leo", i): z3.IntVal(len(nd.log)), ("hw", i): _z(nd.hw),
                      ("estart", i): _z(nd.epoch_start), ("fetched", i): _z(nd.fetched),
                      ("observer", i): _z(nd.observer), ("vpers", i): _z(nd.vote_persisted)})
            for k, (e, kind) in enumerate(nd.log):
                u[("lep", i, k)], u[("lkind", i, k)] = _z(e), _z(kind)
            for j in range(n):
                u[("votes", i, j)] = _z(nd.votes[j]) if nd.votes else z3.IntVal(UNRECORDED)
                u[("end", i, j)] = _z(nd.end_offsets[j]) if nd.end_offsets else z3.IntVal(NO_ID)
    if s.network is not s0.network:
        for key, terms in s.network.slots.items():
            if terms is not s0.network.slots[key]:
                u.update(terms)
    for a, b in layout.links():
        links = s.cut_links
        u[("cut", a, b)] = links.term((a, b)) if isinstance(links, SymLinks) else z3.BoolVal((a, b) in links)
    for name in ("restarts", "disk_losses", "cuts", "losses", "timers"):
        u[(name,)] = _z(getattr(s, name))
    h = s.history
    for part in (h.elected, h.committed, h.leader_hws, h.fatal):
        u.update(part.terms)
    u[("last_event",)] = _z(h.last_event)
    return {k: v for k, v in u.items() if not _same(v, pre[k])}


# --- the proof-only ghosts ------------------------------------------------------------------------


def last_epoch(layout: Layout, s: Sym, i: int) -> Any:
    """kraft_ctx.last_epoch on a layout: the epoch of the last entry, 0 for an empty log."""
    return N.last_epoch(_Dims(layout), s, i)


@dataclass(frozen=True)
class _Dims:
    """What kraft_ctx's log helpers read of a Ctx."""

    layout: Layout

    @property
    def L(self) -> int:
        return self.layout.L


def ghosts(layout: Layout, pre: Sym, post: dict[Any, Any]) -> dict[Any, Any]:
    """The ghosts' updates from a derived pre- and post-state (kraft_state.GHOSTS):
    - a node whose standard vote is new (its voted is set and differs, or its epoch moved):
      vote_hist[i][epoch] := voted, and the vote's snapshot vle/vleo of its log before the step;
    - a leader whose log grew or that just became leader: elog/elen[epoch] := its log, ack[i][epoch]
      := its length;
    - a node not an observer whose Fetch request is new in a slot: ack[i][epoch] := max(ack, LEO)
      when its log is a prefix of its epoch's leader log."""
    p = pre.set(post)
    u: dict[Any, Any] = {}
    L = layout.L
    changed = lambda k: k in post  # noqa: E731
    for i in range(layout.n):
        epoch = p[("epoch", i)]
        if changed(("voted", i)) or changed(("epoch", i)):
            voted = p[("voted", i)]
            new = z3.And(voted != NO_ID, z3.Or(voted != pre[("voted", i)], epoch != pre[("epoch", i)]))
            u[("vote_hist", i)] = z3.If(new, z3.Store(pre[("vote_hist", i)], epoch, voted), pre[("vote_hist", i)])
            u[("vle", i)] = z3.If(new, z3.Store(pre[("vle", i)], epoch, last_epoch(layout, pre, i)), pre[("vle", i)])
            u[("vleo", i)] = z3.If(new, z3.Store(pre[("vleo", i)], epoch, pre[("leo", i)]), pre[("vleo", i)])
    ghost = {k: pre[k] for k in pre.keys() if k[0] in ("elen", "elog_ep", "elog_kind", "ack")}
    for i in range(layout.n):
        if any(changed((name, i)) for name in ("role", "epoch", "leo")):
            epoch, leo = p[("epoch", i)], p[("leo", i)]
            grew = z3.And(p[("role", i)] == LEADER, z3.Or(pre[("role", i)] != LEADER, epoch != pre[("epoch", i)],
                                                          leo != pre[("leo", i)]))
            ghost[("elen",)] = z3.If(grew, z3.Store(ghost[("elen",)], epoch, leo), ghost[("elen",)])
            ghost[("ack", i)] = z3.If(grew, z3.Store(ghost[("ack", i)], epoch, leo), ghost[("ack", i)])
            for k in range(L):
                for name, src in (("elog_ep", "lep"), ("elog_kind", "lkind")):
                    ghost[(name, k)] = z3.If(grew, z3.Store(ghost[(name, k)], epoch, p[(src, i, k)]), ghost[(name, k)])
    for i, b in layout.pairs():
        key = ("st", FETCH_REQUEST, i, b)
        if not changed(key):
            continue
        sent = z3.And(p[key] == REQUEST, pre[key] != REQUEST)
        e, leo, ack = p[("epoch", i)], p[("leo", i)], ghost[("ack", i)]
        prefix = z3.And([leo <= ghost[("elen",)][e]]
                        + [z3.Implies(x < leo, z3.And(p[("lep", i, x)] == ghost[("elog_ep", x)][e],
                                                      p[("lkind", i, x)] == ghost[("elog_kind", x)][e]))
                           for x in range(L)])
        ghost[("ack", i)] = z3.If(z3.And(sent, z3.Not(p[("observer", i)]), prefix),
                                  z3.Store(ack, e, smax(ack[e], leo)), ack)
    u.update({k: v for k, v in ghost.items() if not _same(v, pre[k])})
    return u


MERGE = True  # merged_state on (tests compare both)
MEMO = True

# --- deriving an action -----------------------------------------------------------------------------


@dataclass
class Derived:
    action: Any
    paths: int
    enabled_paths: int
    seconds: float
    step: Step | None  # None: unsupported
    why: str = ""
    crash: Any = None  # the condition under which the model raises (False: never)
    crash_paths: int = 0
    crashes: tuple[str, ...] = ()  # what the crash paths raise
    checks: int = 0  # the solver checks the exploration made (0: read from the derivation cache)


INITIALIZE = "quorum.initialize"  # what derived.initial derives, through `step`, in place of an action


def derive(ctx: Context, layout: Layout, pre: Sym, action: Any, domain: Any,
           step: Callable[[Any, Any, Callable[[Any, Any], Any]], Any] | None = None) -> Derived:
    """Run the model's action on the stand-in state along every feasible path. The successor is
    model.next_state's: last_event reset first. `step(state, action, base)`: a plugin's changed
    transition (model/extension.py's `next_state`), run on the stand-in state with `base` the
    model's own step; or, for INITIALIZE, the model's function that makes its initial state."""
    own = _STEP.get(type(action))

    def fn(s: Any, c: Context, a: Any) -> Any:
        if step is None:
            return own(s, c, a)
        return step(s, a, lambda s1, a1: _STEP[type(a1)](s1, c, a1))
    ex = Explorer(domain, layout.L + 1)
    start = time.perf_counter()

    def run() -> Any:
        s0 = symbolic_state(layout, pre, ex)
        try:
            s = fn(s0, ctx, action)
        except CRASHES as e:
            return ("crash", type(e).__name__)
        if s is None:
            return None
        try:
            return ("ok", post_of(layout, pre, s0, s))
        except OutOfLayout:  # a successor kraft_state cannot hold: a crash path, shown unreachable
            return ("crash", "OutOfLayout")

    try:
        with symbolic_model(ex if MERGE else None):
            paths = ex.decisions(run)
        guard, post, crash = derived_step(paths, pre, domain)
    except Unsupported as e:
        return Derived(action, 0, 0, time.perf_counter() - start, None, str(e))
    except RecursionError:
        return Derived(action, 0, 0, time.perf_counter() - start, None, "recursion")
    # the ghosts are a function of the pre- and post-state: set once, from the merged successor
    post.update(ghosts(layout, pre, post))
    enabled = [r for _, r in paths if r is not None and r[0] == "ok"]
    crashed = [r[1] for _, r in paths if r is not None and r[0] == "crash"]
    return Derived(action, len(paths), len(enabled), time.perf_counter() - start, Step(guard, pre.set(post)),
                   crash=crash, crash_paths=len(crashed), crashes=tuple(sorted(set(crashed))), checks=ex.checks)


# --- the check against the hand-written encoding ---------------------------------------------------


def domain(layout: Layout, s: Sym) -> Any:
    """The shapes kraft_state's layout gives meaning to: a role, a log length within max_log, a
    slot state, a Fetch response's record count within max_log."""
    out = []
    for i in range(layout.n):
        out += [s[("role", i)] >= 0, s[("role", i)] <= 5, s[("leo", i)] >= 0, s[("leo", i)] <= layout.L]
    for r in RPCS:
        for a, b in layout.pairs():
            st = s[("st", r, a, b)]
            out += [st >= EMPTY, st <= RESPONSE]
            if r == FETCH_REQUEST:
                n = s[("rec_len", r, a, b)]
                out.append(z3.Implies(st == RESPONSE, z3.And(n >= 0, n <= layout.L)))
    return z3.And(out)


def meaningful(layout: Layout, key: Any, s: Sym) -> Any:
    """When a variable stands for part of a Python state (kraft_state.values): a log entry below
    the log's length, a slot's field while the slot holds a message that has it, a record below
    the response's count; every other variable always."""
    name = key[0]
    if name in ("lep", "lkind"):
        return key[2] < s[("leo", key[1])]
    if name == "votes":  # a Prospective's or Candidate's election; () otherwise
        return z3.Or(s[("role", key[1])] == PROSPECTIVE, s[("role", key[1])] == CANDIDATE)
    if name == "end":  # a Leader's view of the end offsets; () otherwise
        return s[("role", key[1])] == LEADER
    if len(key) >= 4 and key[1] in RPCS and name != "st":
        r, a, b = key[1:4]
        st = s[("st", r, a, b)]
        if name in ("rec_ep", "rec_kind"):
            return z3.And(st == RESPONSE, key[4] < s[("rec_len", r, a, b)])
        if name == "mepoch":
            return st != EMPTY
        if name == "live" or name in REQUEST_FIELDS[r]:
            return st == REQUEST
        return st == RESPONSE
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
            assume: Any = None, derived: Derived | None = None) -> Comparison:
    """Z3: on the domain (and `assume`, a formula over `pre`, when given), where the model does
    not raise, the derived relation of `action` and the one `nctx`'s encoding has (the
    hand-written oracle's, tests/oracles/kraft_next.py) have the same guard and, when
    enabled, the same value of every variable that stands for part of the Python state
    (`meaningful`) and of every ghost. `derived`: the action already derived on `pre`."""
    layout = nctx.layout
    pre = fresh(layout, "pre_") if pre is None else pre
    dom = domain(layout, pre)
    d = derived or derive(ctx, layout, pre, action, dom)
    if d.step is None:
        return Comparison(action, d, "unsupported", d.why)
    t = time.perf_counter()
    from checker.proofs.induction import encoding_of

    h = encoding_of(nctx).step(nctx, pre, action)
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


def _show(m: z3.ModelRef, pre: Sym, key: Any, derived: Sym, hand: Sym) -> str:
    out = []
    if key != "guard":
        out.append(f"derived={m.eval(derived[key], model_completion=True)} "
                   f"written={m.eval(hand[key], model_completion=True)};")
    for k in pre.keys():
        if k[0] in ("role", "epoch", "leo", "lep", "leader", "voted", "hw", "cut", "st", "live", "mepoch"):
            v = m.eval(pre[k], model_completion=False)
            if not z3.eq(v, pre[k]):
                out.append(f"{'_'.join(map(str, k))}={v}")
    return " ".join(out[:32])


def contexts(p: Any, variant: str = "kafka-4.1", cls: type = N.Ctx) -> tuple[Context, N.Ctx]:
    """(the model's Context, the encoding's Ctx of class `cls`) of a configuration."""
    return Context(p, Protocol.of(variant)), cls.of(p, variant)


def action_kinds() -> list[type]:
    return [A.ElectionTimeout, A.FetchTimeout, A.CheckQuorumTimeout, A.ClientAppend, A.SendVote,
            A.SendBeginQuorumEpoch, A.SendFetch, A.Restart, A.DiskLoss, A.CutLink, A.HealLink, A.DropMessage]
