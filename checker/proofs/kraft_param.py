"""The KRaft model for every number of voters: a Z3 encoding over an uninterpreted sort of nodes.

The fixed-size encoding (kraft_state, the relation derived by derive.py) has one variable per voter; here a state is a
set of functions over the sort `Node` (role, epoch, vote, ... per node; messages per (src, dst)
pair) and a voter set is the whole sort. A majority is a `Quorum`: an element of a second
uninterpreted sort whose members are given by `member(node, quorum)`, with one axiom, any two
quorums share a member (two majorities of one voter set intersect). Nothing else about the size
is assumed, so a query Z3 answers unsat holds for every finite number of voters, and a model of
a satisfiable query is a finite cluster (Z3 picks the number of nodes).

Each transition follows the model's function of the same name (model/kraft/client.py,
quorum.py, faults.py; spec/proofs.md, "Every cluster size", says for each one where it
abstracts). What the election-safety argument does not read is abstracted away soundly: every
step of the model is a step of this encoding (an over-approximation), so an invariant of the
encoding is an invariant of the model, for every configuration of the bounds:

- a log is a function from offset to the entry's epoch (`log(n, k)`, with its length `len(n)`
  and last epoch `lle(n)`); an entry's value is not encoded (spec/proofs.md says why log
  matching of the epochs is log matching of the entries); a Fetch request carries the fetch
  offset and last fetched epoch, a Fetch response the leader's whole log as a ghost (`rlog`,
  its records are rlog from `rstart` to `rlen`) or a diverging flag; the leader's
  validate_offset_and_epoch is a choice constrained by what its answer VALID implies (the
  leader holds an entry of the last fetched epoch at or after offset fetch_offset - 1), and a
  truncation cuts the log to any length up to its own;
- a vote request's log check (`is_log_up_to_date`) and the log-field request validations are
  free choices;
- the bounds (`max_epoch`, `max_log`, `max_in_flight`, fault and timer budgets) and cut links
  only disable steps in the model: the encoding never disables one for them, and where a bound
  changes an effect (a single voter that cannot take the leadership at once) both outcomes are
  allowed;
- HWs, end offsets and the commit history are not encoded (no guard of an election step or a
  log's change reads them; a fatal error, which stops a change, is a free choice).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Callable

import z3

from model.kraft.rules import (
    CANDIDATE, FENCED_LEADER_EPOCH, FOLLOWER, INVALID_REQUEST, INVALID_VOTER_KEY, LEADER, NONE,
    NOT_LEADER_OR_FOLLOWER, PROSPECTIVE, RESIGNED, UNATTACHED, UNKNOWN_LEADER_EPOCH,
)
from model.kraft.variants import Protocol

Node = z3.DeclareSort("Node")
Quorum = z3.DeclareSort("Quorum")
member = z3.Function("member", Node, Quorum, z3.BoolSort())
meet = z3.Function("meet", Quorum, Quorum, Node)  # a member two quorums share (the axiom's Skolem function)
I, B = z3.IntSort(), z3.BoolSort()


def quorum_axiom() -> Any:
    """Any two quorums (majorities of the voter set) share a member: meet(q1, q2)."""
    q1, q2 = z3.Const("q1", Quorum), z3.Const("q2", Quorum)
    return z3.ForAll([q1, q2], z3.And(member(meet(q1, q2), q1), member(meet(q1, q2), q2)),
                     patterns=[meet(q1, q2)])


# --- The state ---------------------------------------------------------------------------------
# Per node (model.kraft.state.Node): role, epoch, leader (has_leader, leader), voted (has_voted,
# voted), vote_persisted, observer, the log's last epoch, FollowerState.hasFetchedFromLeader; an
# election's tally as two relations node x voter (granted, rejected; "unrecorded" is neither).
NODE = {"role": I, "epoch": I, "has_leader": B, "leader": Node, "has_voted": B, "voted": Node,
        "persisted": B, "observer": B, "lle": I, "fetched": B, "len": I}
PAIR = {"granted": B, "rejected": B, "eo": I}
# Messages: one slot per (kind, src, dst), as the model keeps at most one message of an RPC per
# (requester, responder) pair (RequestManager). Fields as in model.kraft.state.
MESSAGES = {
    "vreq": {"live": B, "epoch": I, "pre": B, "lle": I, "leo": I},
    "vresp": {"epoch": I, "has_leader": B, "leader": Node, "error": I, "granted": B},
    "bqe": {"live": B, "epoch": I},
    "bqer": {"epoch": I, "has_leader": B, "leader": Node, "error": I},
    "freq": {"live": B, "epoch": I, "observer": B, "fo": I, "lfe": I},
    "fresp": {"epoch": I, "has_leader": B, "leader": Node, "error": I, "div": B, "rstart": I, "rlen": I,
              "agree": I},
}
REQUEST_KINDS = ("vreq", "bqe", "freq")
RESPONSE_OF = {"vreq": "vresp", "bqe": "bqer", "freq": "fresp"}
MESSAGE_NAMES = {"vreq": "VoteRequest", "vresp": "VoteResponse", "bqe": "BeginQuorumEpochRequest",
                 "bqer": "BeginQuorumEpochResponse", "freq": "FetchRequest", "fresp": "FetchResponse"}
# Ghosts (never read by a guard): vote_hist(m, e, v): m granted its standard vote of epoch e to v
# (a Candidate to itself included); elected(e, n): n was elected leader in epoch e (History.elected);
# equorum(e, n): a quorum whose votes elected n in e.
# estart(e): the offset where the leader of epoch e began it (its log end when elected);
# eleader(e): that leader. ack(m, e): the longest prefix ending in an entry of epoch e that m
# held when it sent a Fetch in epoch e as a voter (its log end if its last epoch is e, else 0;
# the largest); chw(e): the largest HW the leader of e exposed (History.leader_hws).
GHOSTS = {"vote_hist": ((Node, I, Node), B), "elected": ((I, Node), B), "equorum": ((I, Node), Quorum),
          "estart": ((I,), I), "eleader": ((I,), Node), "ack": ((Node, I), I), "chw": ((I,), I),
          "cq": ((I,), Quorum)}
# The commit history (History.committed): committed(k, x): an entry of epoch x at offset k was
# below a leader's HW; cce(k, x): the epoch of the first leader whose HW passed it.
HISTORY = {"committed": ((I, I), B), "cce": ((I, I), I)}
# Logs: log(n, k) is the epoch of n's entry at offset k (k < len(n)); fresp.rlog(l, f, k) the
# epoch at offset k of the log the leader l held when it answered f (a ghost: the response
# carries its records, rlog from rstart to rlen).
LOGS = {"log": ((Node, I), I), "fresp.rlog": ((Node, Node, I), I)}


def _signature() -> dict[str, tuple[tuple[Any, ...], Any]]:
    sig: dict[str, tuple[tuple[Any, ...], Any]] = {}
    for k, s in NODE.items():
        sig[k] = ((Node,), s)
    for k, s in PAIR.items():
        sig[k] = ((Node, Node), s)
    for kind, fields in MESSAGES.items():
        sig[f"{kind}.present"] = ((Node, Node), B)
        for k, s in fields.items():
            sig[f"{kind}.{k}"] = ((Node, Node), s)
    for k, (args, res) in GHOSTS.items():
        sig[k] = (args, res)
    for k, (args, res) in LOGS.items():
        sig[k] = (args, res)
    for k, (args, res) in HISTORY.items():
        sig[k] = (args, res)
    return sig


SIGNATURE = _signature()


class State:
    """A state: for each name of SIGNATURE, a Python function from Z3 arguments to a Z3 term."""

    def __init__(self, f: dict[str, Callable[..., Any]]) -> None:
        self.f = f

    def __getattr__(self, name: str) -> Callable[..., Any]:
        try:
            return self.__dict__["f"][name]
        except KeyError:
            raise AttributeError(name) from None

    def msg(self, kind: str, field_: str) -> Callable[..., Any]:
        return self.f[f"{kind}.{field_}"]

    def with_(self, **changes: Callable[..., Any]) -> "State":
        return State({**self.f, **{k.replace("__", "."): v for k, v in changes.items()}})

    def memoized(self) -> "State":
        """This state with each field's terms built once per argument list: an action's successor is
        a large If-tree, and building its terms over a world's nodes, not solving, took most of an
        encoding check (both models' every-size checks ask the same few states again and again)."""
        def remember(fn: Callable[..., Any]) -> Callable[..., Any]:
            built: dict[tuple[Any, ...], Any] = {}

            def term(*args: Any) -> Any:
                key = tuple(x.get_id() if isinstance(x, z3.AstRef) else x for x in args)
                if key not in built:  # the arguments are kept with the term, so their ids are not reused
                    built[key] = (args, fn(*args))
                return built[key][1]

            return term

        return State({k: remember(fn) for k, fn in self.f.items()})


def fresh(prefix: str) -> tuple[State, dict[str, Any]]:
    """A state of uninterpreted functions named prefix + name, and the functions themselves."""
    decls = {k: z3.Function(prefix + k, *args, res) for k, (args, res) in SIGNATURE.items()}
    return State({k: d for k, d in decls.items()}), decls


def ite(c: Any, a: State, b: State) -> State:
    """The state a if c else b (field by field; unchanged fields stay shared)."""
    if z3.is_true(c):
        return a
    if z3.is_false(c):
        return b
    out = {}
    for k, fa in a.f.items():
        fb = b.f[k]
        out[k] = fa if fa is fb else (lambda fa, fb: lambda *x: z3.If(c, fa(*x), fb(*x)))(fa, fb)
    return State(out)


@dataclass
class Step:
    """One action's choices: fresh constants (nondeterminism: the abstracted log, a batch's
    subset of requests) and the hypotheses that constrain them (the action's guard)."""

    name: str
    pre: "State"
    guard: list[Any] = field(default_factory=list)
    counter: itertools.count = field(default_factory=itertools.count)
    choices: list[Any] = field(default_factory=list)  # the declarations of the constants and functions made

    def const(self, label: str, sort: Any = B) -> Any:
        c = z3.Const(f"{self.name}!{label}{next(self.counter)}", sort)
        self.choices.append(c.decl())
        return c

    def func(self, label: str, *sorts: Any) -> Any:
        f = z3.Function(f"{self.name}!{label}{next(self.counter)}", *sorts)
        self.choices.append(f)
        return f

    def require(self, c: Any) -> None:
        self.guard.append(c)

    def require_ghost(self, c: Any) -> None:
        """A guard on a ghost the model does not hold (a bound the proof needs, set by an earlier
        step): a guard as any other, named apart so that param_inclusion can say it does not
        relate it to the model."""
        self.require(c)


@dataclass(frozen=True)
class PCtx:
    """What the transitions read besides the state: the variant's switches and stale_requests."""

    proto: Protocol
    stale_requests: bool = True
    # HandleFetchResponse appends a response's records as the response's log itself, which is
    # the model's append only where fetch_responses holds (param_induction checks that it does
    # in every Inv state): set where that lemma is part of the invariant.
    append_as_response: bool = False


# --- Helpers over the state (model.kraft.network, quorum.set_node) ------------------------------


def _at(i: Any, new: Any, old: Callable[..., Any]) -> Callable[..., Any]:
    return lambda x: z3.If(x == i, new, old(x))


def set_node(s: State, i: Any, **vals: Any) -> State:
    return s.with_(**{k: _at(i, v, s.f[k]) for k, v in vals.items()})


def set_row(s: State, name: str, i: Any, row: Callable[[Any], Any]) -> State:
    old = s.f[name]
    return s.with_(**{name: lambda x, y: z3.If(x == i, row(y), old(x, y))})


def fresh_election(s: State, i: Any) -> State:
    """quorum.own_vote: every voter unrecorded but i, granted (a static voter set: all nodes)."""
    s = set_row(s, "granted", i, lambda y: y == i)
    return set_row(s, "rejected", i, lambda y: z3.BoolVal(False))


def no_election(s: State, i: Any) -> State:
    """votes = () (a role without an EpochElection)."""
    s = set_row(s, "granted", i, lambda y: z3.BoolVal(False))
    return set_row(s, "rejected", i, lambda y: z3.BoolVal(False))


def send(s: State, kind: str, a: Any, b: Any, **vals: Any) -> State:
    """network.send: the (kind, a, b) slot holds the message."""
    hit = lambda x, y: z3.And(x == a, y == b)  # noqa: E731
    ch = {f"{kind}.present": (lambda old: lambda x, y: z3.Or(hit(x, y), old(x, y)))(s.msg(kind, "present"))}
    for k, v in vals.items():
        ch[f"{kind}.{k}"] = (lambda old, v: lambda x, y: z3.If(hit(x, y), v, old(x, y)))(s.msg(kind, k), v)
    return State({**s.f, **ch})


def send_if(s: State, c: Any, kind: str, a: Any, b: Any, **vals: Any) -> State:
    return ite(c, send(s, kind, a, b, **vals), s)


def remove(s: State, kind: str, a: Any, b: Any) -> State:
    """network.remove: the (kind, a, b) slot is emptied."""
    old = s.msg(kind, "present")
    return State({**s.f, f"{kind}.present": lambda x, y: z3.And(old(x, y), z3.Not(z3.And(x == a, y == b)))})


def free(s: State, kind: str, a: Any, b: Any) -> Any:
    """not network.in_flight: no request of this RPC from a to b nor its response in flight."""
    return z3.And(z3.Not(s.msg(kind, "present")(a, b)), z3.Not(s.msg(RESPONSE_OF[kind], "present")(b, a)))


def reset_connections(s: State, c: PCtx, i: Any) -> State:
    """network.reset_connections: i's live requests are marked stale (or lost without
    stale_requests); responses in flight to i are dropped."""
    f = dict(s.f)
    for kind in REQUEST_KINDS:
        live, present = s.msg(kind, "live"), s.msg(kind, "present")
        if c.stale_requests:
            f[f"{kind}.live"] = (lambda live: lambda x, y: z3.And(live(x, y), x != i))(live)
        else:
            f[f"{kind}.present"] = (lambda live, present: lambda x, y: z3.And(
                present(x, y), z3.Not(z3.And(x == i, live(x, y)))))(live, present)
        resp = RESPONSE_OF[kind]
        rp = s.msg(resp, "present")
        f[f"{resp}.present"] = (lambda rp: lambda x, y: z3.And(rp(x, y), y != i))(rp)
    return State(f)


def drop_addressed_to(s: State, i: Any) -> State:
    """network.drop_addressed_to: requests in flight to a restarted node are lost."""
    f = dict(s.f)
    for kind in REQUEST_KINDS:
        p = s.msg(kind, "present")
        f[f"{kind}.present"] = (lambda p: lambda x, y: z3.And(p(x, y), y != i))(p)
    return State(f)


def respond(s: State, live: Any, kind: str, a: Any, b: Any, **vals: Any) -> State:
    """client._respond: reply unless the request is stale."""
    return send_if(s, live, kind, a, b, **vals)


# --- Role transitions (model.kraft.quorum) ------------------------------------------------------


def solo(st: Step, i: Any, label: str) -> Any:
    """A choice that may be true only if i alone is a quorum (rules.is_vote_granted of a fresh
    election: a single voter). Being false while i alone is a quorum is the bound's outcome."""
    q, m, ch = st.const(f"{label}_q", Quorum), z3.Const("m", Node), st.const(label)
    st.require(z3.Implies(ch, z3.ForAll([m], z3.Implies(member(m, q), m == i))))
    return ch, q


def role_change(s: State, c: PCtx, i: Any) -> State:
    """quorum._role_change (the HW is not encoded): reset the connections."""
    return reset_connections(s, c, i)


def poll_sends(s: State, c: PCtx, st: Step, i: Any) -> State:
    """quorum.poll_sends: the requests of i's next poll in its role, as any subset of the batch
    (the model sends all or none of it, and Send* resends one by one): Vote requests to the
    unrecorded voters, BeginQuorumEpoch to every voter, a Fetch to the leader."""
    role, ep = s.role(i), s.epoch(i)
    pick = st.func("vote_to", Node, B)
    vreq_ok = lambda y: z3.And(z3.Or(role == PROSPECTIVE, role == CANDIDATE), y != i, pick(y),  # noqa: E731
                               z3.Not(s.granted(i, y)), z3.Not(s.rejected(i, y)), free(s, "vreq", i, y))
    t = _send_many(s, "vreq", i, vreq_ok, live=z3.BoolVal(True), epoch=ep, pre=role == PROSPECTIVE,
                   lle=s.lle(i), leo=s.len(i))
    pick_b = st.func("bqe_to", Node, B)
    bqe_ok = lambda y: z3.And(role == LEADER, y != i, pick_b(y), free(s, "bqe", i, y))  # noqa: E731
    t = _send_many(t, "bqe", i, bqe_ok, live=z3.BoolVal(True), epoch=ep)
    fetch = z3.And(role == FOLLOWER, st.const("fetch"), free(s, "freq", i, s.leader(i)))
    t = send_if(t, fetch, "freq", i, s.leader(i), live=z3.BoolVal(True), epoch=ep, observer=s.observer(i),
                fo=s.len(i), lfe=s.lle(i))
    return ite(fetch, acknowledge(t, i), t)


def acknowledge(s: State, i: Any) -> State:
    """Ghost ack: i sends a Fetch in its epoch; as a voter, it acknowledges its log up to its end
    if its last entry is of that epoch."""
    ep, old = s.epoch(i), s.ack
    held = z3.If(z3.And(z3.Not(s.observer(i)), s.lle(i) == ep), s.len(i), 0)
    return s.with_(ack=lambda x, e: z3.If(z3.And(x == i, e == ep, held > old(x, e)), held, old(x, e)))


def update_hw(s: State, c: PCtx, st: Step, i: Any) -> State:
    """quorum.update_leader_hw (LeaderState.maybeUpdateHighWatermark) and the ghost commit: the HW
    may move to h when a quorum's end offsets reach h and, unless the variant counts replicas
    only, h passes the epoch start; the entries below h are committed (History.committed), the
    first commit keeping its epoch. The model moves it to the largest such h above the HW, or not
    at all; any such h is allowed here (more behaviours)."""
    e = s.epoch(i)
    moved, h, q, m = st.const("hw_moved"), st.const("hw", I), st.const("hw_q", Quorum), z3.Const("m", Node)
    support = z3.ForAll([m], z3.Implies(member(m, q), s.eo(i, m) >= h))
    start = z3.BoolVal(True) if not c.proto.epoch_start_hw else h > s.estart(e)
    st.require(z3.Implies(moved, z3.And(support, start, 0 <= h, h <= s.len(i))))
    old, oldc, oldh, log = s.committed, s.cce, s.chw, s.log
    new = lambda k, x: z3.And(0 <= k, k < h, x == log(i, k))  # noqa: E731
    s2 = s.with_(committed=lambda k, x: z3.Or(old(k, x), new(k, x)),
                 cce=lambda k, x: z3.If(old(k, x), oldc(k, x), z3.If(new(k, x), e, oldc(k, x))),
                 chw=lambda x: z3.If(z3.And(x == e, h > oldh(x)), h, oldh(x)),
                 cq=(lambda oq: lambda x: z3.If(z3.And(x == e, h > oldh(x)), q, oq(x)))(s.cq))
    return ite(moved, s2, s)


def set_end_offset(s: State, i: Any, j: Any, v: Any) -> State:
    """LeaderState.updateReplicaState / updateLocalState: leader i's end offset for j."""
    old = s.eo
    return s.with_(eo=lambda x, y: z3.If(z3.And(x == i, y == j), v, old(x, y)))


def _send_many(s: State, kind: str, i: Any, ok: Callable[[Any], Any], **vals: Any) -> State:
    """Requests of one kind from i to every y with ok(y) (each slot was free: `ok` says so)."""
    ch = {f"{kind}.present": (lambda old: lambda x, y: z3.Or(z3.And(x == i, ok(y)), old(x, y)))(s.msg(kind, "present"))}
    for k, v in vals.items():
        ch[f"{kind}.{k}"] = (lambda old, v: lambda x, y: z3.If(z3.And(x == i, ok(y)), v, old(x, y)))(s.msg(kind, k), v)
    return State({**s.f, **ch})


def become_unattached(s: State, c: PCtx, i: Any, epoch: Any) -> State:
    """quorum.become_unattached (QuorumState.transitionToUnattached): the vote of the same epoch is kept."""
    same = epoch == s.epoch(i)
    s2 = set_node(s, i, role=z3.IntVal(UNATTACHED), epoch=epoch, has_leader=z3.BoolVal(False),
                  has_voted=z3.And(same, s.has_voted(i)), fetched=z3.BoolVal(False), persisted=z3.BoolVal(True))
    return role_change(no_election(s2, i), c, i)


def add_voted_state(s: State, c: PCtx, i: Any, cand: Any) -> State:
    """quorum.add_voted_state (QuorumState.unattachedAddVotedState / prospectiveAddVotedState):
    the one standard vote of the epoch (ghost vote_hist); a Prospective's tally restarts. No reset."""
    s2 = set_node(s, i, has_voted=z3.BoolVal(True), voted=cand, persisted=z3.BoolVal(c.proto.persist_vote))
    s2 = ite(s.role(i) == PROSPECTIVE, fresh_election(s2, i), s2)
    return _vote(s2, i, s.epoch(i), cand)


def _vote(s: State, m: Any, e: Any, v: Any) -> State:
    old = s.vote_hist
    return s.with_(vote_hist=lambda x, y, z: z3.Or(old(x, y, z), z3.And(x == m, y == e, z == v)))


def become_prospective(s: State, c: PCtx, st: Step, i: Any) -> State:
    """quorum.become_prospective (QuorumState.transitionToProspective, onBecomeProspective)."""
    s2 = set_node(s, i, role=z3.IntVal(PROSPECTIVE), fetched=z3.BoolVal(False))
    s2 = role_change(fresh_election(s2, i), c, i)
    return ite(solo(st, i, "solo_prospective")[0], become_candidate(s2, c, st, i), poll_sends(s2, c, st, i))


def become_candidate(s: State, c: PCtx, st: Step, i: Any) -> State:
    """quorum.become_candidate (QuorumState.transitionToCandidate): epoch + 1, a vote for
    itself (ghost vote_hist), then onBecomeCandidate."""
    e = s.epoch(i) + 1
    s2 = set_node(s, i, role=z3.IntVal(CANDIDATE), epoch=e, has_leader=z3.BoolVal(False), has_voted=z3.BoolVal(True),
                  voted=i, fetched=z3.BoolVal(False), persisted=z3.BoolVal(True))
    s2 = role_change(_vote(fresh_election(s2, i), i, e, i), c, i)
    alone, q = solo(st, i, "solo_candidate")
    return ite(alone, become_leader(s2, c, st, i, q), poll_sends(s2, c, st, i))


def pattern(t: Any) -> list[Any]:
    """[t] as a trigger where t applies a function of the state (none in a given state, where the
    state's functions are terms)."""
    return [t] if uninterpreted(t) and t.num_args() else []


def uninterpreted(t: Any) -> bool:
    """t applies one of the state's functions (a given state's are terms instead)."""
    return z3.is_app(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED


def become_leader(s: State, c: PCtx, st: Step, i: Any, q: Any) -> State:
    """quorum.become_leader (QuorumState.transitionToLeader, onBecomeLeader: the LeaderChange
    record of the new epoch): ghost elected(epoch, i), elected by the quorum q of its tally."""
    e = s.epoch(i)
    # the quorum axiom's instances for q and every elected quorum (Z3 finds them by this pattern)
    e2, v2 = z3.Int("e2"), z3.Const("v2", Node)
    other = st.pre.equorum(e2, v2)
    st.require(z3.ForAll([e2, v2], z3.Implies(st.pre.elected(e2, v2), z3.And(
        member(meet(q, other), q), member(meet(q, other), other))), patterns=pattern(st.pre.elected(e2, v2))))
    # and for every quorum a membership fact names (those of Q(e, h) in leader completeness)
    q2, y2 = z3.Const("q2", Quorum), z3.Const("y2", Node)
    st.require(z3.ForAll([q2, y2], z3.Implies(member(y2, q2), z3.And(member(meet(q, q2), q), member(meet(q, q2), q2))),
                         patterns=[member(y2, q2)]))
    s2 = set_node(s, i, role=z3.IntVal(LEADER), has_leader=z3.BoolVal(True), leader=i, fetched=z3.BoolVal(False))
    start, lead = s2.estart, s2.eleader
    s2 = s2.with_(estart=lambda x: z3.If(x == e, s.len(i), start(x)), eleader=lambda x: z3.If(x == e, i, lead(x)))
    if c.proto.leader_change_record:
        s2 = append(s2, i, e)
    s2 = role_change(no_election(s2, i), c, i)
    old, oldq = s2.elected, s2.equorum
    s2 = s2.with_(elected=lambda x, y: z3.Or(old(x, y), z3.And(x == e, y == i)),
                  equorum=lambda x, y: z3.If(z3.And(x == e, y == i), q, oldq(x, y)))
    # every end offset unknown (-1) but its own; then maybeUpdateHighWatermark
    end, oldeo = s2.len(i), s2.eo
    s2 = s2.with_(eo=lambda x, y: z3.If(x == i, z3.If(y == i, end, -1), oldeo(x, y)))
    return poll_sends(update_hw(s2, c, st, i), c, st, i)


def become_follower(s: State, c: PCtx, st: Step, i: Any, epoch: Any, leader: Any) -> State:
    """quorum.become_follower (QuorumState.transitionToFollower): the vote of the same epoch is kept."""
    same = epoch == s.epoch(i)
    s2 = set_node(s, i, role=z3.IntVal(FOLLOWER), epoch=epoch, has_leader=z3.BoolVal(True), leader=leader,
                  has_voted=z3.And(same, s.has_voted(i)), fetched=z3.BoolVal(False), persisted=z3.BoolVal(True))
    s2 = role_change(no_election(s2, i), c, i)
    return poll_sends(s2, c, st, i)


def become_resigned(s: State, c: PCtx, i: Any) -> State:
    """quorum.become_resigned (QuorumState.transitionToResigned)."""
    return role_change(set_node(s, i, role=z3.IntVal(RESIGNED)), c, i)


def restart_process(s: State, c: PCtx, st: Step, i: Any) -> State:
    """faults.restart_process (QuorumState.initialize, rules.initial_election_state): the role
    from the quorum-state file and the log; a vote never written is forgotten; an observer
    comes back its known leader's Follower, else Unattached; then quorum.restart."""
    ep, lle = s.epoch(i), s.lle(i)
    stored = z3.And(s.has_voted(i), s.persisted(i))
    own_leader = z3.And(s.has_leader(i), s.leader(i) == i)
    own_vote = z3.And(stored, s.voted(i) == i)
    obs = s.observer(i)
    b1 = z3.And(z3.Not(obs), ep < lle)
    b2 = z3.And(z3.Not(obs), z3.Not(b1), own_leader)
    b3 = z3.And(z3.Not(obs), z3.Not(b1), z3.Not(own_leader), own_vote)
    # an observer follows the leader it knew (every leader is a voter: its endpoints are known)
    b4 = z3.Or(z3.And(z3.Not(obs), z3.Not(b1), z3.Not(own_leader), z3.Not(own_vote), s.has_leader(i)),
               z3.And(obs, ep >= lle, z3.Not(own_leader), s.has_leader(i)))
    role = z3.If(b1, UNATTACHED, z3.If(b2, RESIGNED, z3.If(b3, CANDIDATE, z3.If(b4, FOLLOWER, UNATTACHED))))
    s2 = set_node(drop_addressed_to(s, i), i, role=role, epoch=z3.If(b1, lle, ep),
                  has_leader=z3.Or(b2, b4), leader=z3.If(b2, i, s.leader(i)),
                  has_voted=z3.And(z3.Not(obs), z3.Not(b1), z3.Not(b2), stored),
                  fetched=z3.BoolVal(False), persisted=z3.BoolVal(True))
    s2 = ite(b3, fresh_election(s2, i), no_election(s2, i))
    s2 = role_change(s2, c, i)
    alone, q = solo(st, i, "solo_restart")
    return ite(z3.And(b3, alone), become_leader(s2, c, st, i, q), poll_sends(s2, c, st, i))


# --- Common handling (client.maybe_transition, handle_common_response) --------------------------


def has_consistent_leader(s: State, i: Any, has_l: Any, l: Any, epoch: Any) -> Any:
    """rules.has_consistent_leader (KafkaRaftClient.hasConsistentLeader)."""
    return z3.If(z3.And(has_l, l == i), s.role(i) == LEADER,
                 z3.Or(epoch != s.epoch(i), z3.Not(has_l), z3.Not(s.has_leader(i)), l == s.leader(i)))


def maybe_transition(s: State, c: PCtx, st: Step, i: Any, has_l: Any, l: Any, epoch: Any) -> State:
    """client.maybe_transition (KafkaRaftClient.maybeTransition); an inconsistent leader
    restarts the process (client.inconsistent_leader)."""
    consistent = has_consistent_leader(s, i, has_l, l, epoch)
    higher = ite(has_l, become_follower(s, c, st, i, epoch, l), become_unattached(s, c, i, epoch))
    learn = z3.And(has_l, z3.Not(s.has_leader(i)))
    return ite(z3.Not(consistent), restart_process(s, c, st, i),
               ite(epoch > s.epoch(i), higher, ite(learn, become_follower(s, c, st, i, epoch, l), s)))


def handle_common_response(s: State, c: PCtx, st: Step, i: Any, error: Any, has_l: Any, l: Any,
                           epoch: Any) -> tuple[State, Any]:
    """client.handle_common_response (KafkaRaftClient.maybeHandleCommonResponse,
    rules.common_response_outcome): (new state, handled)."""
    ignore = z3.Or(epoch < s.epoch(i), error == UNKNOWN_LEADER_EPOCH)
    trans = z3.And(z3.Not(ignore), z3.Or(epoch > s.epoch(i), error == FENCED_LEADER_EPOCH,
                                         error == NOT_LEADER_OR_FOLLOWER))
    follow = z3.And(z3.Not(ignore), z3.Not(trans), has_l, z3.Not(s.has_leader(i)))
    handled_only = z3.And(z3.Not(ignore), z3.Not(trans), z3.Not(follow), error == INVALID_VOTER_KEY)
    follow_state = ite(l == i, restart_process(s, c, st, i), become_follower(s, c, st, i, epoch, l))
    out = ite(trans, maybe_transition(s, c, st, i, has_l, l, epoch), ite(follow, follow_state, s))
    handled = z3.Or(ignore, trans, handled_only, z3.And(follow, z3.Or(l == i, error != NONE)))
    return out, handled


def can_grant_vote(s: State, i: Any, cand: Any, up_to_date: Any, pre: Any) -> Any:
    """rules.can_grant_vote (EpochState.canGrantVote, unattachedOrProspectiveCanGrantVote)."""
    role = s.role(i)
    unattached = z3.If(pre, up_to_date, z3.If(s.has_voted(i), s.voted(i) == cand,
                                              z3.And(z3.Not(s.has_leader(i)), up_to_date)))
    return z3.If(role == LEADER, False,
                 z3.If(z3.Or(role == CANDIDATE, role == RESIGNED), z3.And(pre, up_to_date),
                       z3.If(role == FOLLOWER, z3.And(pre, z3.Not(s.fetched(i)), up_to_date), unattached)))


# --- Actions (model.kraft.client, faults) -------------------------------------------------------
# Each returns the post-state; the Step collects the guard. `i`, `j` are Node constants.


def election_timeout(s: State, c: PCtx, st: Step, i: Any) -> State:
    """client.election_timeout (pollUnattachedAsVoter, pollProspective, pollCandidate, pollResigned)."""
    role = s.role(i)
    st.require(z3.Or(role == RESIGNED, z3.Not(s.observer(i))))
    if not c.proto.pre_vote:
        st.require(z3.Or(role == UNATTACHED, role == CANDIDATE, role == RESIGNED))
        return become_candidate(s, c, st, i)
    st.require(z3.Or(role == UNATTACHED, role == CANDIDATE, role == PROSPECTIVE, role == RESIGNED))
    return ite(role == PROSPECTIVE, prospective_transition_after_election_loss(s, c, st, i),
               ite(role == RESIGNED, become_unattached(s, c, i, s.epoch(i) + 1), become_prospective(s, c, st, i)))


def prospective_transition_after_election_loss(s: State, c: PCtx, st: Step, i: Any) -> State:
    """client.prospective_transition_after_election_loss (KafkaRaftClient.prospectiveTransitionAfterElectionLoss)."""
    return ite(s.has_leader(i), become_follower(s, c, st, i, s.epoch(i), s.leader(i)),
               become_unattached(s, c, i, s.epoch(i)))


def fetch_timeout(s: State, c: PCtx, st: Step, i: Any) -> State:
    """client.fetch_timeout (pollFollowerAsVoter)."""
    st.require(z3.And(s.role(i) == FOLLOWER, z3.Not(s.observer(i))))
    if not c.proto.pre_vote:
        return become_candidate(s, c, st, i)
    return become_prospective(s, c, st, i)


def check_quorum_timeout(s: State, c: PCtx, st: Step, i: Any) -> State:
    """client.check_quorum_timeout (LeaderState.timeUntilCheckQuorumExpires, pollLeader resigns)."""
    st.require(z3.BoolVal(c.proto.check_quorum))
    st.require(s.role(i) == LEADER)
    return become_resigned(s, c, i)


def client_append(s: State, c: PCtx, st: Step, i: Any) -> State:
    """client.client_append (KafkaRaftClient.prepareAppend): an entry of the leader's epoch."""
    st.require(s.role(i) == LEADER)
    s2 = append(s, i, s.epoch(i))
    return update_hw(set_end_offset(s2, i, i, s2.len(i)), c, st, i)


def append(s: State, i: Any, e: Any) -> State:
    """An entry of epoch e at the end of i's log (ReplicatedLog.appendAsLeader); the leader
    acknowledges its own log (ghost ack, as its end offset: updateLocalState)."""
    end, old, ack = s.len(i), s.log, s.ack
    s2 = s.with_(log=lambda x, k: z3.If(z3.And(x == i, k == end), e, old(x, k)),
                 ack=lambda x, y: z3.If(z3.And(x == i, y == e), end + 1, ack(x, y)))
    return set_node(s2, i, len=end + 1, lle=e)


def send_vote(s: State, c: PCtx, st: Step, i: Any, j: Any) -> State:
    """client.send_vote (maybeSendVoteRequests, buildVoteRequest)."""
    role = s.role(i)
    st.require(z3.And(z3.Or(role == PROSPECTIVE, role == CANDIDATE), i != j, z3.Not(s.granted(i, j)),
                      z3.Not(s.rejected(i, j)), free(s, "vreq", i, j)))
    return send(s, "vreq", i, j, live=z3.BoolVal(True), epoch=s.epoch(i), pre=role == PROSPECTIVE,
                lle=s.lle(i), leo=s.len(i))


def send_begin_quorum_epoch(s: State, c: PCtx, st: Step, i: Any, j: Any) -> State:
    """client.send_begin_quorum_epoch (maybeSendBeginQuorumEpochRequests)."""
    st.require(z3.And(s.role(i) == LEADER, i != j, free(s, "bqe", i, j)))
    return send(s, "bqe", i, j, live=z3.BoolVal(True), epoch=s.epoch(i))


def send_fetch(s: State, c: PCtx, st: Step, i: Any) -> State:
    """client.send_fetch (maybeSendFetchOrFetchSnapshot, buildFetchRequest)."""
    st.require(z3.And(s.role(i) == FOLLOWER, free(s, "freq", i, s.leader(i))))
    s2 = send(s, "freq", i, s.leader(i), live=z3.BoolVal(True), epoch=s.epoch(i), observer=s.observer(i),
              fo=s.len(i), lfe=s.lle(i))
    return acknowledge(s2, i)


def handle_vote_request(s: State, c: PCtx, st: Step, a: Any, i: Any) -> State:
    """client.handle_vote_request (KafkaRaftClient.handleVoteRequest)."""
    live, m_epoch, pre = s.msg("vreq", "live")(a, i), s.msg("vreq", "epoch")(a, i), s.msg("vreq", "pre")(a, i)
    st.require(s.msg("vreq", "present")(a, i))
    s1 = remove(s, "vreq", a, i)
    invalid = st.const("invalid_log_fields")  # rules.validate_vote_request's checks of the log fields
    error = z3.If(invalid, INVALID_REQUEST, z3.If(m_epoch < s.epoch(i), FENCED_LEADER_EPOCH, NONE))
    rejected = respond(s1, live, "vresp", i, a, epoch=s.epoch(i), has_leader=s.has_leader(i), leader=s.leader(i),
                       error=error, granted=z3.BoolVal(False))
    s2 = ite(m_epoch > s.epoch(i), become_unattached(s1, c, i, m_epoch), s1)
    observer = respond(s2, live, "vresp", i, a, epoch=s2.epoch(i), has_leader=s2.has_leader(i),
                       leader=s2.leader(i), error=z3.IntVal(INVALID_VOTER_KEY), granted=z3.BoolVal(False))
    # rules.is_log_up_to_date: the request's (last epoch, end offset) >= the voter's
    r_lle, r_leo = s.msg("vreq", "lle")(a, i), s.msg("vreq", "leo")(a, i)
    up_to_date = (z3.Or(r_lle > s.lle(i), z3.And(r_lle == s.lle(i), r_leo >= s.len(i)))
                  if c.proto.vote_log_check else z3.BoolVal(True))
    granted = can_grant_vote(s2, i, a, up_to_date, pre)
    add = z3.And(granted, z3.Not(pre), z3.Or(s2.role(i) == UNATTACHED, s2.role(i) == PROSPECTIVE),
                 z3.Not(s2.has_voted(i)))
    s3 = ite(add, add_voted_state(s2, c, i, a), s2)
    answered = respond(s3, live, "vresp", i, a, epoch=s3.epoch(i), has_leader=s3.has_leader(i),
                       leader=s3.leader(i), error=z3.IntVal(NONE), granted=granted)
    return ite(error != NONE, rejected, ite(s2.observer(i), observer, answered))


def handle_vote_response(s: State, c: PCtx, st: Step, m: Any, i: Any) -> State:
    """client.handle_vote_response (KafkaRaftClient.handleVoteResponse, EpochElection.recordVote,
    maybeTransitionForward, maybeHandleElectionLoss)."""
    g = s.msg("vresp", "granted")(m, i)
    error = s.msg("vresp", "error")(m, i)
    st.require(s.msg("vresp", "present")(m, i))
    s1 = remove(s, "vresp", m, i)
    s2, handled = handle_common_response(s1, c, st, i, error, s.msg("vresp", "has_leader")(m, i),
                                          s.msg("vresp", "leader")(m, i), s.msg("vresp", "epoch")(m, i))
    # not handled: the common handling either changed nothing or (FOLLOW with error NONE) made
    # i a Follower, which then ignores the vote; go on from its state
    role = s2.role(i)
    rec = set_row(set_row(s2, "granted", i, (lambda old: lambda y: z3.If(y == m, g, old(i, y)))(s2.granted)),
                  "rejected", i, (lambda old: lambda y: z3.If(y == m, z3.Not(g), old(i, y)))(s2.rejected))
    # forward only on a majority of granted votes (rules.is_vote_granted): some quorum within the
    # tally; not moving forward when it holds is the bounds' outcome
    fwd, q, x = st.const("majority"), st.const("tally_q", Quorum), z3.Const("m", Node)
    st.require(z3.Implies(fwd, z3.And(g, z3.ForAll([x], z3.Implies(member(x, q), rec.granted(i, x))))))
    forward = ite(role == PROSPECTIVE, become_candidate(rec, c, st, i), become_leader(rec, c, st, i, q))
    lost = z3.And(z3.Not(g), role == PROSPECTIVE, st.const("rejected_majority"))  # rules.is_vote_rejected
    recorded = ite(fwd, forward, ite(lost, prospective_transition_after_election_loss(rec, c, st, i), rec))
    return ite(z3.Or(handled, error != NONE), s2,
               ite(z3.Or(role == PROSPECTIVE, role == CANDIDATE), recorded, s2))


def handle_begin_quorum_epoch_request(s: State, c: PCtx, st: Step, l: Any, i: Any) -> State:
    """client.handle_begin_quorum_epoch_request (KafkaRaftClient.handleBeginQuorumEpochRequest)."""
    live, m_epoch = s.msg("bqe", "live")(l, i), s.msg("bqe", "epoch")(l, i)
    st.require(s.msg("bqe", "present")(l, i))
    s1 = remove(s, "bqe", l, i)
    fenced = respond(s1, live, "bqer", i, l, epoch=s.epoch(i), has_leader=s.has_leader(i), leader=s.leader(i),
                     error=z3.IntVal(FENCED_LEADER_EPOCH))
    after = maybe_transition(s1, c, st, i, z3.BoolVal(True), l, m_epoch)
    # an observer (a lost disk's new directory) answers INVALID_VOTER_KEY with the epoch and leader it now knows
    consistent = has_consistent_leader(s, i, z3.BoolVal(True), l, m_epoch)
    # (the transition resets only the connections i asked on, so answering after it is the same)
    answered = respond(after, live, "bqer", i, l, epoch=after.epoch(i), has_leader=after.has_leader(i),
                       leader=after.leader(i), error=z3.IntVal(INVALID_VOTER_KEY))
    return ite(m_epoch < s.epoch(i), fenced, ite(z3.And(s.observer(i), consistent), answered, after))


def handle_begin_quorum_epoch_response(s: State, c: PCtx, st: Step, j: Any, l: Any) -> State:
    """client.handle_begin_quorum_epoch_response (KafkaRaftClient.handleBeginQuorumEpochResponse)."""
    st.require(s.msg("bqer", "present")(j, l))
    s1 = remove(s, "bqer", j, l)
    out, _ = handle_common_response(s1, c, st, l, s.msg("bqer", "error")(j, l), s.msg("bqer", "has_leader")(j, l),
                                    s.msg("bqer", "leader")(j, l), s.msg("bqer", "epoch")(j, l))
    return out


def handle_fetch_request(s: State, c: PCtx, st: Step, f: Any, l: Any) -> State:
    """client.handle_fetch_request (KafkaRaftClient.handleFetchRequest): no role changes at the
    leader; the HW it may move is not encoded."""
    live, m_epoch = s.msg("freq", "live")(f, l), s.msg("freq", "epoch")(f, l)
    st.require(s.msg("freq", "present")(f, l))
    s1 = remove(s, "freq", f, l)
    invalid = st.const("invalid_fetch_fields")  # rules.validate_fetch_request reads the log fields
    error = z3.If(invalid, INVALID_REQUEST,
                  z3.If(m_epoch < s.epoch(l), FENCED_LEADER_EPOCH,
                        z3.If(m_epoch > s.epoch(l), UNKNOWN_LEADER_EPOCH,
                              z3.If(s.role(l) != LEADER, NOT_LEADER_OR_FOLLOWER, NONE))))
    if not c.proto.fetch_from_any:
        error = z3.If(z3.And(error == NONE, s.msg("freq", "observer")(f, l)), INVALID_REQUEST, error)
    # rules.validate_offset_and_epoch: VALID at offset 0, else only if the leader's log holds an
    # entry of the last fetched epoch ending at or after the fetch offset (endOffsetForEpoch
    # answers that epoch, and an end >= fetch_offset); when that holds, either answer is allowed
    fo, lfe = s.msg("freq", "fo")(f, l), s.msg("freq", "lfe")(f, l)
    valid, t = st.const("offset_valid"), st.const("epoch_end", I)
    st.require(z3.Implies(valid, z3.Or(fo == 0, z3.And(fo <= t, t <= s.len(l), 1 <= t, s.log(l, t - 1) == lfe))))
    ok = error == NONE
    # a valid fetch from a voter records its end offset and may move the HW (before answering)
    counted = z3.And(ok, valid, z3.Not(s.msg("freq", "observer")(f, l)))
    s2 = ite(counted, update_hw(set_end_offset(s1, l, f, fo), c, st, l), s1)
    # a diverging answer: the follower will keep at least what its log shares with the leader's
    # (rules.truncation_offset never cuts a common prefix; spec/proofs.md), a ghost
    agree, x = st.const("agree", I), z3.Int("x")
    st.require(z3.ForAll([x], z3.Implies(z3.And(0 <= x, x < s.len(f), x < s.len(l), s.log(f, x) == s.log(l, x)),
                                         x < agree)))
    out = respond(s2, live, "fresp", l, f, epoch=s.epoch(l), has_leader=s.has_leader(l), leader=s.leader(l),
                  error=error, div=z3.And(ok, z3.Not(valid)), rstart=fo, rlen=s.len(l), agree=agree)
    old, llog = out.msg("fresp", "rlog"), s.log
    hit = z3.And(live, ok, valid)
    return out.with_(fresp__rlog=lambda x, y, k: z3.If(z3.And(hit, x == l, y == f), llog(l, k), old(x, y, k)))


def appended_log(flog: Any, rlog: Any, l: Any, f: Any, div: Any, end: Any, rstart: Any, as_response: bool) -> Any:
    """f's log after a response from l that does not diverge: its log below `end`, then the records
    (rlog from rstart) at end (the model's `log + records`); `as_response`: rlog itself."""
    if as_response:
        return lambda x, k: z3.If(z3.And(x == f, z3.Not(div)), rlog(l, f, k), flog(x, k))
    return lambda x, k: z3.If(z3.And(x == f, z3.Not(div), k >= end), rlog(l, f, k - end + rstart), flog(x, k))


def handle_fetch_response(s: State, c: PCtx, st: Step, l: Any, f: Any) -> State:
    """client.handle_fetch_response (KafkaRaftClient.handleFetchResponse): truncation or
    appended records change the log (its last epoch becomes any epoch up to the follower's)."""
    error = s.msg("fresp", "error")(l, f)
    st.require(s.msg("fresp", "present")(l, f))
    s1 = remove(s, "fresp", l, f)
    s2, handled = handle_common_response(s1, c, st, f, error, s.msg("fresp", "has_leader")(l, f),
                                         s.msg("fresp", "leader")(l, f), s.msg("fresp", "epoch")(l, f))
    # not handled: go on from the state after the common handling (a FOLLOW with error NONE
    # made f the leader's Follower there)
    # a diverging epoch truncates to some length up to the log's (rules.truncation_offset); else
    # the records (rlog from rstart to rlen) are appended at the log's end
    div, rstart, rlen = (s.msg("fresp", x)(l, f) for x in ("div", "rstart", "rlen"))
    cut = st.const("cut", I)
    # a fatal error (truncation below the HW, a HW going back) changes nothing encoded
    fatal = st.const("fatal")
    # the ghost bound on a truncation binds only where the response truncates: a response the
    # common handling takes, an error or a fatal error leaves the log as it is whatever its ghosts say
    truncates = z3.And(div, z3.Not(handled), error == NONE, z3.Not(fatal))
    st.require(z3.And(0 <= cut, cut <= s2.len(f)))
    st.require_ghost(z3.Implies(truncates, cut >= s.msg("fresp", "agree")(l, f)))
    flog, rlog, end = s2.log, s.msg("fresp", "rlog"), s2.len(f)
    new_len = z3.If(div, cut, end + rlen - rstart)
    s3 = s2.with_(log=appended_log(flog, rlog, l, f, div, end, rstart, c.append_as_response))
    last = z3.If(new_len > 0, s3.log(f, new_len - 1), 0)
    fetched = poll_sends(set_node(s3, f, len=new_len, lle=last, fetched=z3.BoolVal(True)), c, st, f)
    return ite(z3.Or(handled, error != NONE, fatal), s2, fetched)


def restart(s: State, c: PCtx, st: Step, i: Any) -> State:
    """faults.restart: a crash-restart that keeps the disk."""
    return restart_process(s, c, st, i)


def disk_loss(s: State, c: PCtx, st: Step, i: Any) -> State:
    """faults.disk_loss: a fresh node (epoch 0, no vote, empty log); with KIP-853 directory ids
    an observer, else (K4) the same voter again."""
    st.require(z3.Not(s.observer(i)))
    s1 = drop_addressed_to(s, i)
    s1 = set_node(s1, i, role=z3.IntVal(UNATTACHED), epoch=z3.IntVal(0), has_leader=z3.BoolVal(False),
                  has_voted=z3.BoolVal(False), persisted=z3.BoolVal(True), observer=z3.BoolVal(c.proto.directory_id),
                  lle=z3.IntVal(0), fetched=z3.BoolVal(False), len=z3.IntVal(0))
    return role_change(no_election(s1, i), c, i)


def drop_message(kind: str) -> Callable[..., State]:
    def drop(s: State, c: PCtx, st: Step, a: Any, b: Any) -> State:
        """faults.drop_message."""
        st.require(s.msg(kind, "present")(a, b))
        return remove(s, kind, a, b)

    return drop


# (name, arity, function): the model's action kinds; DropMessage one per message kind.
ACTIONS: list[tuple[str, int, Callable[..., State]]] = [
    ("ElectionTimeout", 1, election_timeout), ("FetchTimeout", 1, fetch_timeout),
    ("CheckQuorumTimeout", 1, check_quorum_timeout), ("ClientAppend", 1, client_append),
    ("SendVote", 2, send_vote), ("SendBeginQuorumEpoch", 2, send_begin_quorum_epoch), ("SendFetch", 1, send_fetch),
    ("HandleVoteRequest", 2, handle_vote_request), ("HandleVoteResponse", 2, handle_vote_response),
    ("HandleBeginQuorumEpochRequest", 2, handle_begin_quorum_epoch_request),
    ("HandleBeginQuorumEpochResponse", 2, handle_begin_quorum_epoch_response),
    ("HandleFetchRequest", 2, handle_fetch_request), ("HandleFetchResponse", 2, handle_fetch_response),
    ("Restart", 1, restart), ("DiskLoss", 1, disk_loss),
] + [(f"DropMessage({MESSAGE_NAMES[k]})", 2, drop_message(k)) for k in MESSAGES]
# CutLink and HealLink change only the cut links, which no encoded guard reads (sends are never
# disabled by a cut link here): their steps leave the encoded state as it is.
UNCHANGED = ("CutLink", "HealLink")
ARG_NAMES = {1: ("node",), 2: ("src", "dst")}


@dataclass
class Transition:
    name: str
    args: tuple[Any, ...]
    guard: list[Any]
    post: State


def transition(c: PCtx, pre: State, name: str) -> Transition:
    """The named action from `pre`, over fresh Node constants for its arguments."""
    arity, fn = next((a, f) for n, a, f in ACTIONS if n == name)
    args = tuple(z3.Const(f"{name}!{x}", Node) for x in ARG_NAMES[arity])
    st = Step(name.replace("(", "_").replace(")", ""), pre)
    post = fn(pre, c, st, *args)
    return Transition(name, args, st.guard, post)


def init(s: State) -> Any:
    """model.kraft.state.initial_state: every node freshly formatted; nothing in flight; no history."""
    n, n2, e = z3.Const("n", Node), z3.Const("n2", Node), z3.Const("e", I)
    node = z3.And(s.role(n) == UNATTACHED, s.epoch(n) == 0, z3.Not(s.has_leader(n)), z3.Not(s.has_voted(n)),
                  s.persisted(n), z3.Not(s.observer(n)), s.lle(n) == 0, z3.Not(s.fetched(n)),
                  s.len(n) == 0)
    pair = z3.And([z3.Not(s.f[k](n, n2)) for k in SIGNATURE if SIGNATURE[k][0] == (Node, Node)
                   and SIGNATURE[k][1] == B and (k in PAIR or k.endswith(".present"))])
    k = z3.Int("k")
    return z3.And(z3.ForAll([n], node), z3.ForAll([n, n2], pair),
                  z3.ForAll([n, e, n2], z3.Not(s.vote_hist(n, e, n2))), z3.ForAll([e, n], z3.Not(s.elected(e, n))),
                  z3.ForAll([n, e], s.ack(n, e) == 0), z3.ForAll([e], s.chw(e) == -1),
                  z3.ForAll([k, e], z3.Not(s.committed(k, e))))


def initial_state() -> State:
    """One initial state, every field a constant (Init's values; the ghosts of epochs with no
    leader yet at 0, an arbitrary node and quorum): a model of Init & Inv is looked for in it when
    Z3 finds none over free functions (an initial state where Inv holds shows Init & Inv satisfiable)."""
    w_node, w_quorum = z3.Const("w_init_node", Node), z3.Const("w_init_quorum", Quorum)
    value = {I: z3.IntVal(0), B: z3.BoolVal(False), Node: w_node, Quorum: w_quorum}
    special = {"role": z3.IntVal(UNATTACHED), "persisted": z3.BoolVal(True), "chw": z3.IntVal(-1)}
    return State({k: (lambda v: lambda *_: v)(special.get(k, value[res])) for k, (_, res) in SIGNATURE.items()})
