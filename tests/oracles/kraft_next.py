"""The hand-written KRaft transition relation in Z3, the test oracle of the relation derived from
the model's Python (checker/proofs/derive.py): one function per action of model/kraft/client.py,
faults.py and quorum.py, transcribed branch by branch (guard first, then effect), over the
symbolic state of kraft_state. `step(ctx, s, action)` gives the action's guard and post-state
as terms of the pre-state. Each function cites the Python function it mirrors (which cites
Kafka); where Python branches on a state value the encoding builds both branches and merges
them (`cases`/`ite`).

No command proves on it: `kcheck prove` derives its relation from the model. The tests compare
the two (`derive.compare`, on every state of the domain) and run the engines on both. A `Ctx`
of this module carries this encoding (`encoding`), so induction and BMC take it as they take a
derived context.

Ghost updates (kraft_state.GHOSTS) are marked "ghost:"; no guard or effect reads them.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Callable

import z3

from checker.proofs import kraft_ctx
from checker.proofs.kraft_ctx import actions, end_offset_for_epoch, last_epoch, majority, truncation_offset
from checker.proofs.kraft_state import EMPTY, FETCH_REQUEST, REQUEST, RESPONSE, RPCS
from checker.proofs.term import Step, Sym, at_least, at_most, cases, ite, relation, select, smax, smin, step_ite
from model.kraft import actions as A
from model.kraft.rules import (
    CANDIDATE, FENCED_LEADER_EPOCH, FOLLOWER, GRANTED, INVALID_REQUEST, INVALID_VOTER_KEY, LEADER, NO_ID,
    NONE, NOT_LEADER_OR_FOLLOWER, PROSPECTIVE, REJECTED, RESIGNED, UNATTACHED, UNKNOWN_LEADER_EPOCH,
    UNRECORDED,
)
from model.kraft.state import (
    BQE_REQUEST, CHECK_QUORUM_RESIGN, DATA, ELECTED_AFTER_RESTART, FATAL_NON_MONOTONIC_HW,
    FATAL_TRUNCATE_BELOW_HW, LEADER_CHANGE, NO_EVENT, PRE_VOTE_LOST, TRUNCATED, VOTE_REQUEST,
)

T, F = z3.BoolVal(True), z3.BoolVal(False)


@dataclass(frozen=True)
class Ctx(kraft_ctx.Ctx):
    """A kraft_ctx.Ctx whose encoding is this module's relation."""

    @property
    def encoding(self) -> Any:
        return ENCODING


def ok(s: Sym) -> Step:
    return Step(T, s)


def no(s: Sym) -> Step:
    return Step(F, s)


# --- node and log helpers ------------------------------------------------------------------------


def entry_ep(c: Ctx, s: Sym, i: int, k: Any) -> Any:
    return select([s[("lep", i, x)] for x in range(c.L)], k, z3.IntVal(NO_ID))


def entry_kind(c: Ctx, s: Sym, i: int, k: Any) -> Any:
    return select([s[("lkind", i, x)] for x in range(c.L)], k, z3.IntVal(NO_ID))


def set_log(c: Ctx, s: Sym, i: int, eps: list[Any], kinds: list[Any], leo: Any) -> Sym:
    u = {("leo", i): leo}
    for k in range(c.L):
        u[("lep", i, k)] = eps[k]
        u[("lkind", i, k)] = kinds[k]
    return s.set(u)


def append_entry(c: Ctx, s: Sym, i: int, epoch: Any, kind: int) -> Sym:
    """Append one entry at the LEO (the caller checks it fits)."""
    leo = s[("leo", i)]
    eps = [z3.If(leo == k, epoch, s[("lep", i, k)]) for k in range(c.L)]
    kinds = [z3.If(leo == k, kind, s[("lkind", i, k)]) for k in range(c.L)]
    return set_log(c, s, i, eps, kinds, leo + 1)


def own_vote(c: Ctx, i: int) -> dict[Any, Any]:
    return {("votes", i, j): z3.IntVal(GRANTED if j == i else UNRECORDED) for j in range(c.n)}


def no_votes(c: Ctx, i: int) -> dict[Any, Any]:
    return {("votes", i, j): z3.IntVal(UNRECORDED) for j in range(c.n)}


def no_ends(c: Ctx, i: int) -> dict[Any, Any]:
    return {("end", i, j): z3.IntVal(NO_ID) for j in range(c.n)}


def is_vote_granted(c: Ctx, votes: list[Any]) -> Any:
    return at_least([v == GRANTED for v in votes], majority(c.n))


def is_vote_rejected(c: Ctx, votes: list[Any]) -> Any:
    return at_least([v == REJECTED for v in votes], c.n - majority(c.n) + 1)


def votes_of(c: Ctx, s: Sym, i: int) -> list[Any]:
    return [s[("votes", i, j)] for j in range(c.n)]


# --- network (model/kraft/network.py) -----------------------------------------------------------


def occupied(c: Ctx, s: Sym) -> list[Any]:
    """One condition per slot: something is in it."""
    return [s[("st", r, a, b)] != EMPTY for r in RPCS for a, b in c.layout.pairs()]


def room(c: Ctx, s: Sym) -> Any:
    """Fewer than max_in_flight messages in flight."""
    return at_most(occupied(c, s), c.p.max_in_flight - 1)


def in_flight(s: Sym, rpc: int, a: int, b: int) -> Any:
    """network.in_flight: a request of the RPC from a to b, or its response, is in flight."""
    return s[("st", rpc, a, b)] != EMPTY


def link_cut(s: Sym, a: int, b: int) -> Any:
    return s[("cut", min(a, b), max(a, b))]


def remove_slot(s: Sym, rpc: int, a: int, b: int) -> Sym:
    return s.set({("st", rpc, a, b): z3.IntVal(EMPTY)})


def reset_connections(c: Ctx, s: Sym, i: int) -> Sym:
    """network.reset_connections: i's live requests in flight become not live (lost without
    stale_requests); responses in flight to i are discarded."""
    u = {}
    for r in RPCS:
        for b in range(c.n):
            if b == i:
                continue
            st, live = s[("st", r, i, b)], s[("live", r, i, b)]
            if c.p.stale_requests:
                u[("live", r, i, b)] = z3.If(st == REQUEST, F, live)
                u[("st", r, i, b)] = z3.If(st == RESPONSE, EMPTY, st)
            else:
                u[("st", r, i, b)] = z3.If(z3.Or(st == RESPONSE, z3.And(st == REQUEST, live)), EMPTY, st)
    return s.set(u)


def drop_addressed_to(c: Ctx, s: Sym, i: int) -> Sym:
    """network.drop_addressed_to: requests in flight to a restarted node are lost."""
    u = {}
    for r in RPCS:
        for a in range(c.n):
            if a != i:
                st = s[("st", r, a, i)]
                u[("st", r, a, i)] = z3.If(st == REQUEST, EMPTY, st)
    return s.set(u)


def respond(s: Sym, live: Any, rpc: int, requester: int, responder: int, fields: dict[str, Any]) -> Sym:
    """client._respond: the response goes into the (just emptied) slot if the request was live."""
    u = {("st", rpc, requester, responder): z3.If(live, RESPONSE, EMPTY)}
    for name, v in fields.items():
        if isinstance(v, list):  # records
            for k, x in enumerate(v):
                u[(name, rpc, requester, responder, k)] = x
        else:
            u[(name, rpc, requester, responder)] = v
    return s.set(u)


# --- history (ghost) ---------------------------------------------------------------------------


def commit(c: Ctx, s: Sym, i: int, hw: Any) -> Sym:
    """quorum.commit: every entry below the new HW is committed (first commit epoch kept); the
    largest HW of the epoch's leader. A second entry at an offset sets cmt_conflict."""
    epoch = s[("epoch", i)]
    u = {}
    conflict = s[("cmt_conflict",)]
    for k in range(c.L):
        below = k < hw
        known = s[("cmt_ep", k)]
        fresh = z3.And(below, known == NO_ID)
        u[("cmt_ep", k)] = z3.If(fresh, s[("lep", i, k)], known)
        u[("cmt_kind", k)] = z3.If(fresh, s[("lkind", i, k)], s[("cmt_kind", k)])
        u[("cmt_at", k)] = z3.If(fresh, epoch, s[("cmt_at", k)])
        conflict = z3.Or(conflict, z3.And(below, known != NO_ID, known != s[("lep", i, k)]))
    u[("cmt_conflict",)] = conflict
    hws = s[("lhws",)]
    u[("lhws",)] = z3.Store(hws, epoch, smax(hw, hws[epoch]))
    return s.set(u)


def leader_high_watermark(c: Ctx, ends: list[Any], estart: Any, hw: Any) -> Any:
    """rules.leader_high_watermark: the (n/2)-th largest end offset (the largest value that at
    least a majority reach), if past the epoch start (unless counting only) and the HW."""
    m = majority(c.n)
    best: Any = z3.IntVal(-2)
    for e in ends:
        best = z3.If(z3.And(at_least([x >= e for x in ends], m), e > best), e, best)
    keep = z3.Or(best < 0, z3.And(hw >= 0, best <= hw))
    if c.proto.epoch_start_hw:
        keep = z3.Or(keep, best <= estart)
    return z3.If(keep, hw, best)


def record_epoch_log(c: Ctx, s: Sym, i: int) -> Sym:
    """ghost: the log of leader i is the log of its epoch (elog), as it grows; the leader holds
    all of it (ack)."""
    e = s[("epoch", i)]
    u = {("elen",): z3.Store(s[("elen",)], e, s[("leo", i)]),
         ("ack", i): z3.Store(s[("ack", i)], e, s[("leo", i)])}
    for k in range(c.L):
        u[("elog_ep", k)] = z3.Store(s[("elog_ep", k)], e, s[("lep", i, k)])
        u[("elog_kind", k)] = z3.Store(s[("elog_kind", k)], e, s[("lkind", i, k)])
    return s.set(u)


def update_leader_hw(c: Ctx, s: Sym, i: int) -> Sym:
    """quorum.update_leader_hw: LeaderState.maybeUpdateHighWatermark and the ghost commit."""
    hw = s[("hw", i)]
    new = leader_high_watermark(c, [s[("end", i, j)] for j in range(c.n)], s[("estart", i)], hw)
    moved = commit(c, s.set({("hw", i): new}), i, new)
    return ite(new == hw, s, moved)


# --- role transitions (model/kraft/quorum.py) ----------------------------------------------------


def role_change(c: Ctx, s: Sym, i: int) -> Sym:
    """quorum._role_change: without follower_hw only leaders hold an HW; reset connections."""
    if not c.p.follower_hw:
        s = s.set({("hw", i): z3.If(s[("role", i)] == LEADER, s[("hw", i)], NO_ID)})
    return reset_connections(c, s, i)


def poll_sends(c: Ctx, s: Sym, i: int) -> Sym:
    """quorum.poll_sends: the requests of i's next poll in its role, a batch whole or not at all."""
    role = s[("role", i)]

    def batch(send_one: Callable[[Ctx, Sym, int, int, bool], Step]) -> Sym:
        t = s
        for j in range(c.n):
            if j != i:
                st = send_one(c, t, i, j, False)
                t = ite(st.guard, st.post, t)
        return ite(z3.Not(at_most(occupied(c, t), c.p.max_in_flight)), s, t)

    fetch = send_fetch(c, s, i)
    out = s
    out = ite(role == FOLLOWER, ite(fetch.guard, fetch.post, s), out)
    out = ite(role == LEADER, batch(send_begin_quorum_epoch), out)
    out = ite(z3.Or(role == PROSPECTIVE, role == CANDIDATE), batch(send_vote), out)
    return out


def become_unattached(c: Ctx, s: Sym, i: int, epoch: Any, leader: Any = None) -> Sym:
    """quorum.become_unattached (the vote of the same epoch is kept; the HW is kept)."""
    voted = z3.If(epoch == s[("epoch", i)], s[("voted", i)], NO_ID)
    u = {("role", i): z3.IntVal(UNATTACHED), ("epoch", i): epoch,
         ("leader", i): z3.IntVal(NO_ID) if leader is None else leader, ("voted", i): voted,
         ("estart", i): z3.IntVal(NO_ID), ("fetched", i): F, ("vpers", i): T}
    u.update(no_votes(c, i))
    u.update(no_ends(c, i))
    return role_change(c, s.set(u), i)


def add_voted_state(c: Ctx, s: Sym, i: int, candidate: int) -> Sym:
    """quorum.add_voted_state: grant the standard vote of this epoch (a Prospective's pre-vote
    tally restarts); no connection reset. ghost: vote_hist[i][epoch] := candidate."""
    is_p = s[("role", i)] == PROSPECTIVE
    u: dict[Any, Any] = {("voted", i): z3.IntVal(candidate), ("vpers", i): z3.BoolVal(c.proto.persist_vote)}
    for j in range(c.n):
        u[("votes", i, j)] = z3.If(is_p, GRANTED if j == i else UNRECORDED, s[("votes", i, j)])
    u[("vote_hist", i)] = z3.Store(s[("vote_hist", i)], s[("epoch", i)], candidate)
    u.update(vote_snapshot(c, s, i, s[("epoch", i)]))
    return s.set(u)


def vote_snapshot(c: Ctx, s: Sym, i: int, epoch: Any) -> dict[Any, Any]:
    """ghost: the (last epoch, end offset) of i's log when it grants its vote of `epoch`."""
    return {("vle", i): z3.Store(s[("vle", i)], epoch, last_epoch(c, s, i)),
            ("vleo", i): z3.Store(s[("vleo", i)], epoch, s[("leo", i)])}


def become_prospective(c: Ctx, s: Sym, i: int) -> Sym:
    """quorum.become_prospective; a single voter goes on to Candidate."""
    u = {("role", i): z3.IntVal(PROSPECTIVE), ("estart", i): z3.IntVal(NO_ID), ("fetched", i): F}
    u.update(own_vote(c, i))
    u.update(no_ends(c, i))
    s = role_change(c, s.set(u), i)
    if c.n == 1:
        return become_candidate(c, s, i)
    return poll_sends(c, s, i)


def become_candidate(c: Ctx, s: Sym, i: int) -> Sym:
    """quorum.become_candidate: epoch + 1, vote for ourselves (durable); a single voter is at
    once Leader (onBecomeCandidate). ghost: vote_hist[i][epoch + 1] := i."""
    epoch = s[("epoch", i)] + 1
    u = {("role", i): z3.IntVal(CANDIDATE), ("epoch", i): epoch, ("leader", i): z3.IntVal(NO_ID),
         ("voted", i): z3.IntVal(i), ("estart", i): z3.IntVal(NO_ID), ("fetched", i): F, ("vpers", i): T,
         ("vote_hist", i): z3.Store(s[("vote_hist", i)], epoch, i)}
    u.update(vote_snapshot(c, s, i, epoch))
    u.update(own_vote(c, i))
    u.update(no_ends(c, i))
    s = role_change(c, s.set(u), i)
    if c.n == 1:
        return become_leader(c, s, i)
    return poll_sends(c, s, i)


def can_become_leader(c: Ctx, s: Sym, i: int) -> Any:
    """quorum.can_become_leader: the LeaderChange record fits in the log (the model's bound)."""
    return T if not c.proto.leader_change_record else s[("leo", i)] < c.L


def become_leader(c: Ctx, s: Sym, i: int) -> Sym:
    """quorum.become_leader: epoch start = LEO, the LeaderChange record appended (onBecomeLeader),
    end offsets known for ourselves only, no HW; ghost elected; then the HW and the sends."""
    epoch, leo = s[("epoch", i)], s[("leo", i)]
    if c.proto.leader_change_record:
        s = append_entry(c, s, i, epoch, LEADER_CHANGE)
    s = record_epoch_log(c, s, i)
    new_leo = s[("leo", i)]
    u = {("role", i): z3.IntVal(LEADER), ("leader", i): z3.IntVal(i), ("hw", i): z3.IntVal(NO_ID),
         ("estart", i): leo, ("fetched", i): F}
    u.update(no_votes(c, i))
    u.update({("end", i, j): (new_leo if j == i else z3.IntVal(NO_ID)) for j in range(c.n)})
    s = role_change(c, s.set(u), i)
    el = s[("elected",)]
    prior = el[epoch]
    event = z3.If(s[("restarts",)] + s[("disk_losses",)] > 0, ELECTED_AFTER_RESTART, s[("last_event",)])
    s = s.set({("elected",): z3.If(prior == NO_ID, z3.Store(el, epoch, i), el),
               ("el_conflict",): z3.Or(s[("el_conflict",)], z3.And(prior != NO_ID, prior != i)),
               ("last_event",): event})
    return poll_sends(c, update_leader_hw(c, s, i), i)


def become_follower(c: Ctx, s: Sym, i: int, epoch: Any, leader: Any) -> Sym:
    """quorum.become_follower (the vote of the same epoch and the HW kept)."""
    voted = z3.If(epoch == s[("epoch", i)], s[("voted", i)], NO_ID)
    u = {("role", i): z3.IntVal(FOLLOWER), ("epoch", i): epoch, ("leader", i): leader, ("voted", i): voted,
         ("estart", i): z3.IntVal(NO_ID), ("fetched", i): F, ("vpers", i): T}
    u.update(no_votes(c, i))
    u.update(no_ends(c, i))
    return poll_sends(c, role_change(c, s.set(u), i), i)


def become_resigned(c: Ctx, s: Sym, i: int) -> Sym:
    """quorum.become_resigned: no HW, no leader state."""
    u = {("role", i): z3.IntVal(RESIGNED), ("hw", i): z3.IntVal(NO_ID), ("estart", i): z3.IntVal(NO_ID)}
    u.update(no_ends(c, i))
    return role_change(c, s.set(u), i)


def restart_node(c: Ctx, s: Sym, i: int) -> Sym:
    """quorum.restart: a restarted Candidate of a single-voter quorum is at once Leader; a single
    voter in any other role stands at once (quorum.stands_at_start) within the bounds."""
    s = role_change(c, s, i)
    if c.n == 1:
        lead = z3.And(s[("role", i)] == CANDIDATE, can_become_leader(c, s, i))
        stand = z3.And(stands_at_start(c, s, i), may_stand_at_start(c, s, i))
        return ite(lead, become_leader(c, s, i), ite(stand, become_candidate(c, s, i), poll_sends(c, s, i)))
    return poll_sends(c, s, i)


def stands_at_start(c: Ctx, s: Sym, i: int) -> Any:
    """quorum.stands_at_start: the only voter (one voter, not an observer), not a Candidate or Leader."""
    if c.n != 1:
        return F
    role = s[("role", i)]
    return z3.And(z3.Not(s[("observer", i)]), role != CANDIDATE, role != LEADER)


def may_stand_at_start(c: Ctx, s: Sym, i: int) -> Any:
    """quorum.may_stand_at_start: the new epoch and the LeaderChange record within the bounds."""
    return z3.And(s[("epoch", i)] < c.p.max_epoch, can_become_leader(c, s, i))


def restart_beyond_bounds(c: Ctx, s: Sym, i: int) -> Any:
    """quorum.restart_beyond_bounds, on the restored state: the Leader a single voter's restart
    makes at once would pass the bounds (the fault actions are then not taken)."""
    if c.n != 1:
        return F
    cand = z3.And(s[("role", i)] == CANDIDATE, z3.Not(can_become_leader(c, s, i)))
    return z3.Or(cand, z3.And(stands_at_start(c, s, i), z3.Not(may_stand_at_start(c, s, i))))


def restored(c: Ctx, s: Sym, i: int) -> Sym:
    """quorum.restored_node: QuorumState.initialize from the quorum-state file and the log
    (rules.initial_election_state); memory lost; an unwritten vote forgotten; an observer comes
    back its known leader's Follower, else Unattached; messages to it dropped."""
    epoch, leader = s[("epoch", i)], s[("leader", i)]
    stored_vote = z3.If(s[("vpers", i)], s[("voted", i)], NO_ID)
    lle = last_epoch(c, s, i)
    obs = s[("observer", i)]
    c1 = z3.And(z3.Not(obs), epoch < lle)
    c2 = z3.And(z3.Not(obs), z3.Not(c1), leader == i)
    c3 = z3.And(z3.Not(obs), z3.Not(c1), z3.Not(c2), stored_vote == i)
    # an observer follows the leader it knew (every leader is a voter: its endpoints are known)
    c4 = z3.Or(z3.And(z3.Not(obs), z3.Not(c1), z3.Not(c2), z3.Not(c3), leader != NO_ID),
               z3.And(obs, epoch >= lle, leader != i, leader != NO_ID))
    role = z3.If(c1, UNATTACHED, z3.If(c2, RESIGNED, z3.If(c3, CANDIDATE, z3.If(c4, FOLLOWER, UNATTACHED))))
    new_epoch = z3.If(c1, lle, epoch)
    new_leader = z3.If(c2, i, z3.If(c4, leader, NO_ID))
    new_voted = z3.If(z3.Or(obs, c1, c2), NO_ID, stored_vote)
    u = {("role", i): role, ("epoch", i): new_epoch, ("leader", i): new_leader, ("voted", i): new_voted,
         ("hw", i): z3.IntVal(NO_ID), ("estart", i): z3.IntVal(NO_ID), ("fetched", i): F, ("vpers", i): T}
    u.update({("votes", i, j): z3.If(role == CANDIDATE, GRANTED if j == i else UNRECORDED, UNRECORDED)
              for j in range(c.n)})
    u.update(no_ends(c, i))
    return drop_addressed_to(c, s, i).set(u)


def restart_process(c: Ctx, s: Sym, i: int) -> Sym:
    """faults.restart_process: the restored node (restored), then quorum.restart."""
    return restart_node(c, restored(c, s, i), i)


def init(c: Ctx, sym: Sym) -> Any:
    """Init: the model's initial state (KraftModel.init_states): every node freshly formatted
    (kraft_state.init_constraint), then quorum.initialize: a single voter stands at once, Leader
    of epoch 1, within the bounds."""
    from checker.proofs.kraft_state import fresh, init_constraint

    if c.n != 1:
        return init_constraint(c.layout, sym)
    pre = fresh(c.layout, "init0_")
    stand = z3.And(stands_at_start(c, pre, 0), may_stand_at_start(c, pre, 0))
    post = ite(stand, become_candidate(c, pre, 0), pre)
    return z3.And(init_constraint(c.layout, pre), *[sym[k] == post[k] for k in pre.keys()])


# --- timers ---------------------------------------------------------------------------------


def timer_may_expire(c: Ctx, s: Sym) -> Any:
    return T if c.p.timeouts < 0 else s[("timers",)] < c.p.timeouts


def expired(c: Ctx, st: Step) -> Step:
    if c.p.timeouts < 0:
        return st
    return Step(st.guard, st.post.set({("timers",): st.post[("timers",)] + 1}))


def election_timeout(c: Ctx, s: Sym, i: int) -> Step:
    """client.election_timeout."""
    role, epoch = s[("role", i)], s[("epoch", i)]
    guard = z3.And(z3.Not(s[("observer", i)]), timer_may_expire(c, s))
    below = epoch < c.p.max_epoch
    if not c.proto.pre_vote:
        inner = cases(no(s), [(z3.And(z3.Or(role == UNATTACHED, role == CANDIDATE, role == RESIGNED), below),
                               lambda: ok(become_candidate(c, s, i)))])
    else:
        single_stuck = z3.And(z3.BoolVal(c.n == 1), z3.Not(below))
        inner = cases(no(s), [
            (z3.Or(role == UNATTACHED, role == CANDIDATE),
             lambda: Step(z3.Not(single_stuck), become_prospective(c, s, i))),
            (role == PROSPECTIVE, lambda: ok(prospective_after_election_loss(c, s, i))),
            (z3.And(role == RESIGNED, below), lambda: ok(become_unattached(c, s, i, epoch + 1))),
        ])
    inner = expired(c, inner)
    return Step(z3.And(guard, inner.guard), inner.post)


def fetch_timeout(c: Ctx, s: Sym, i: int) -> Step:
    """client.fetch_timeout."""
    guard = z3.And(s[("role", i)] == FOLLOWER, z3.Not(s[("observer", i)]), timer_may_expire(c, s))
    below = s[("epoch", i)] < c.p.max_epoch
    if not c.proto.pre_vote:
        return expired(c, Step(z3.And(guard, below), become_candidate(c, s, i)))
    stuck = z3.And(z3.BoolVal(c.n == 1), z3.Not(below))
    return expired(c, Step(z3.And(guard, z3.Not(stuck)), become_prospective(c, s, i)))


def check_quorum_timeout(c: Ctx, s: Sym, i: int) -> Step:
    """client.check_quorum_timeout."""
    if not c.proto.check_quorum or c.n == 1:
        return no(s)
    guard = z3.And(s[("role", i)] == LEADER, timer_may_expire(c, s))
    st = expired(c, ok(become_resigned(c, s, i)))
    return Step(guard, st.post.set({("last_event",): z3.IntVal(CHECK_QUORUM_RESIGN)}))


def client_append(c: Ctx, s: Sym, i: int) -> Step:
    """client.client_append: a Data entry of the leader's epoch; the HW may move."""
    guard = z3.And(s[("role", i)] == LEADER, s[("leo", i)] < c.L)
    t = record_epoch_log(c, append_entry(c, s, i, s[("epoch", i)], DATA), i)
    t = t.set({("end", i, i): t[("leo", i)]})
    return Step(guard, update_leader_hw(c, t, i))


# --- sends ------------------------------------------------------------------------------------


def send_vote(c: Ctx, s: Sym, i: int, j: int, bounded: bool = True) -> Step:
    """client.send_vote (bounded=False: the unbounded context poll_sends sizes a batch with)."""
    role = s[("role", i)]
    guard = z3.And(z3.Or(role == PROSPECTIVE, role == CANDIDATE), s[("votes", i, j)] == UNRECORDED,
                   z3.Not(is_vote_rejected(c, votes_of(c, s, i))), z3.Not(in_flight(s, VOTE_REQUEST, i, j)),
                   z3.Not(link_cut(s, i, j)))
    if bounded:
        guard = z3.And(guard, room(c, s))
    k = (VOTE_REQUEST, i, j)
    post = s.set({("st",) + k: z3.IntVal(REQUEST), ("live",) + k: T, ("mepoch",) + k: s[("epoch", i)],
                  ("last_epoch",) + k: last_epoch(c, s, i), ("last_offset",) + k: s[("leo", i)],
                  ("pre_vote",) + k: role == PROSPECTIVE})
    return Step(guard, post)


def send_begin_quorum_epoch(c: Ctx, s: Sym, i: int, j: int, bounded: bool = True) -> Step:
    """client.send_begin_quorum_epoch."""
    guard = z3.And(s[("role", i)] == LEADER, z3.Not(in_flight(s, BQE_REQUEST, i, j)), z3.Not(link_cut(s, i, j)))
    if bounded:
        guard = z3.And(guard, room(c, s))
    k = (BQE_REQUEST, i, j)
    return Step(guard, s.set({("st",) + k: z3.IntVal(REQUEST), ("live",) + k: T, ("mepoch",) + k: s[("epoch", i)]}))


def fetch_ack(c: Ctx, s: Sym, i: int) -> Any:
    """ghost: a voter (not an observer) that sends a Fetch in epoch e while its log is a prefix
    of e's leader log acknowledges that prefix: ack[i][e] := max(ack[i][e], LEO)."""
    e, leo, ack = s[("epoch", i)], s[("leo", i)], s[("ack", i)]
    pfx = z3.And([leo <= s[("elen",)][e]]
                 + [z3.Implies(x < leo, z3.And(s[("lep", i, x)] == s[("elog_ep", x)][e],
                                               s[("lkind", i, x)] == s[("elog_kind", x)][e])) for x in range(c.L)])
    return z3.If(z3.And(z3.Not(s[("observer", i)]), pfx), z3.Store(ack, e, smax(ack[e], leo)), ack)


def send_fetch(c: Ctx, s: Sym, i: int) -> Step:
    """client.send_fetch, to the leader i knows (a case per possible leader)."""
    leader = s[("leader", i)]
    out = no(s)
    for b in range(c.n):
        if b == i:
            continue
        guard = z3.And(s[("role", i)] == FOLLOWER, leader == b, room(c, s),
                       z3.Not(in_flight(s, FETCH_REQUEST, i, b)), z3.Not(link_cut(s, i, b)))
        k = (FETCH_REQUEST, i, b)
        post = s.set({("st",) + k: z3.IntVal(REQUEST), ("live",) + k: T, ("mepoch",) + k: s[("epoch", i)],
                      ("fetch_offset",) + k: s[("leo", i)], ("lfe",) + k: last_epoch(c, s, i),
                      ("fobs",) + k: s[("observer", i)], ("ack", i): fetch_ack(c, s, i)})
        out = step_ite(leader == b, Step(guard, post), out)
    return out


# --- common handling ------------------------------------------------------------------------


def has_consistent_leader(s: Sym, i: int, epoch: Any, leader: Any) -> Any:
    """rules.has_consistent_leader."""
    return z3.If(z3.And(leader != NO_ID, leader == i), s[("role", i)] == LEADER,
                 z3.Or(epoch != s[("epoch", i)], leader == NO_ID, s[("leader", i)] == NO_ID,
                       leader == s[("leader", i)]))


def maybe_transition(c: Ctx, s: Sym, i: int, leader: Any, epoch: Any) -> Sym:
    """client.maybe_transition."""
    return ite(z3.Not(has_consistent_leader(s, i, epoch, leader)), restart_process(c, s, i),
               ite(epoch > s[("epoch", i)],
                   ite(leader != NO_ID, become_follower(c, s, i, epoch, leader), become_unattached(c, s, i, epoch)),
                   ite(z3.And(leader != NO_ID, s[("leader", i)] == NO_ID), become_follower(c, s, i, epoch, leader), s)))


def common_response(c: Ctx, s: Sym, i: int, error: Any, leader: Any, epoch: Any) -> tuple[Sym, Any]:
    """client.handle_common_response: (state, handled)."""
    ne, nl = s[("epoch", i)], s[("leader", i)]
    ignore = z3.Or(epoch < ne, error == UNKNOWN_LEADER_EPOCH)
    transition = z3.And(z3.Not(ignore), z3.Or(epoch > ne, error == FENCED_LEADER_EPOCH,
                                              error == NOT_LEADER_OR_FOLLOWER))
    follow = z3.And(z3.Not(ignore), z3.Not(transition), leader != NO_ID, nl == NO_ID)
    handled_only = z3.And(z3.Not(ignore), z3.Not(transition), z3.Not(follow), error == INVALID_VOTER_KEY)
    follow_state = ite(leader == i, restart_process(c, s, i), become_follower(c, s, i, epoch, leader))
    state = ite(transition, maybe_transition(c, s, i, leader, epoch), ite(follow, follow_state, s))
    handled = z3.Or(ignore, transition, handled_only, z3.And(follow, z3.Or(leader == i, error != NONE)))
    return state, handled


# --- handlers -------------------------------------------------------------------------------


def handle_vote_request(c: Ctx, s: Sym, src: int, i: int) -> Step:
    """client.handle_vote_request."""
    k = (VOTE_REQUEST, src, i)
    present = s[("st",) + k] == REQUEST
    live, mepoch = s[("live",) + k], s[("mepoch",) + k]
    le, lo, pre = s[("last_epoch",) + k], s[("last_offset",) + k], s[("pre_vote",) + k]
    s = remove_slot(s, *k)
    illegal = z3.If(pre, le > mepoch, le >= mepoch)
    error = z3.If(z3.Or(lo < 0, le < 0, illegal), INVALID_REQUEST,
                  z3.If(mepoch < s[("epoch", i)], FENCED_LEADER_EPOCH, NONE))
    err_resp = respond(s, live, *k, {"mepoch": s[("epoch", i)], "mleader": s[("leader", i)], "merror": error,
                                     "granted": F})
    t = ite(mepoch > s[("epoch", i)], become_unattached(c, s, i, mepoch), s)
    obs_resp = respond(t, live, *k, {"mepoch": t[("epoch", i)], "mleader": t[("leader", i)],
                                     "merror": z3.IntVal(INVALID_VOTER_KEY), "granted": F})
    if c.proto.vote_log_check:
        lle, leo = last_epoch(c, t, i), t[("leo", i)]
        up_to_date = z3.Or(le > lle, z3.And(le == lle, lo >= leo))
    else:
        up_to_date = T
    role, leader, voted = t[("role", i)], t[("leader", i)], t[("voted", i)]
    unatt = z3.If(pre, up_to_date, z3.If(voted != NO_ID, voted == src, z3.If(leader != NO_ID, F, up_to_date)))
    granted = z3.If(role == LEADER, F,
                    z3.If(z3.Or(role == CANDIDATE, role == RESIGNED), z3.And(pre, up_to_date),
                          z3.If(role == FOLLOWER, z3.And(pre, z3.Not(t[("fetched", i)]), up_to_date), unatt)))
    record = z3.And(granted, z3.Not(pre), z3.Or(role == UNATTACHED, role == PROSPECTIVE), voted == NO_ID)
    u = ite(record, add_voted_state(c, t, i, src), t)
    grant_resp = respond(u, live, *k, {"mepoch": u[("epoch", i)], "mleader": u[("leader", i)],
                                       "merror": z3.IntVal(NONE), "granted": granted})
    post = ite(error != NONE, err_resp, ite(t[("observer", i)], obs_resp, grant_resp))
    return Step(present, post)


def prospective_after_election_loss(c: Ctx, s: Sym, i: int) -> Sym:
    """client.prospective_transition_after_election_loss."""
    epoch, leader = s[("epoch", i)], s[("leader", i)]
    return ite(leader != NO_ID, become_follower(c, s, i, epoch, leader), become_unattached(c, s, i, epoch))


def handle_vote_response(c: Ctx, s: Sym, src: int, i: int) -> Step:
    """client.handle_vote_response."""
    k = (VOTE_REQUEST, i, src)
    present = s[("st",) + k] == RESPONSE
    error, leader, epoch, granted = s[("merror",) + k], s[("mleader",) + k], s[("mepoch",) + k], s[("granted",) + k]
    s = remove_slot(s, *k)
    t, handled = common_response(c, s, i, error, leader, epoch)
    role = t[("role", i)]
    votes = [z3.If(granted, GRANTED, REJECTED) if j == src else t[("votes", i, j)] for j in range(c.n)]
    tallied = t.set({("votes", i, j): votes[j] for j in range(c.n)})
    won = z3.And(granted, is_vote_granted(c, votes))
    lost = z3.And(z3.Not(granted), is_vote_rejected(c, votes), role == PROSPECTIVE)
    forward = cases(ok(tallied), [
        (z3.And(won, role == PROSPECTIVE),
         lambda: Step(t[("epoch", i)] < c.p.max_epoch, become_candidate(c, tallied, i))),
        (z3.And(won, role == CANDIDATE),
         lambda: Step(can_become_leader(c, t, i), become_leader(c, tallied, i))),
        (lost, lambda: ok(prospective_after_election_loss(c, tallied, i).set(
            {("last_event",): z3.IntVal(PRE_VOTE_LOST)}))),
    ])
    out = cases(forward, [
        (z3.Or(handled, error != NONE), lambda: ok(t)),
        (z3.And(role != PROSPECTIVE, role != CANDIDATE), lambda: ok(t)),
    ])
    return Step(z3.And(present, out.guard), out.post)


def handle_bqe_request(c: Ctx, s: Sym, src: int, i: int) -> Step:
    """client.handle_begin_quorum_epoch_request."""
    k = (BQE_REQUEST, src, i)
    present = s[("st",) + k] == REQUEST
    live, mepoch = s[("live",) + k], s[("mepoch",) + k]
    s = remove_slot(s, *k)
    fenced = mepoch < s[("epoch", i)]
    err = respond(s, live, *k, {"mepoch": s[("epoch", i)], "mleader": s[("leader", i)],
                                "merror": z3.IntVal(FENCED_LEADER_EPOCH)})
    after = maybe_transition(c, s, i, z3.IntVal(src), mepoch)
    # an observer (a lost disk's new directory) answers INVALID_VOTER_KEY with what it now knows
    answered = respond(s, live, *k, {"mepoch": after[("epoch", i)], "mleader": after[("leader", i)],
                                     "merror": z3.IntVal(INVALID_VOTER_KEY)})
    observer = z3.And(s[("observer", i)], has_consistent_leader(s, i, mepoch, z3.IntVal(src)))
    return Step(present, ite(fenced, err, ite(observer, maybe_transition(c, answered, i, z3.IntVal(src), mepoch),
                                              after)))


def handle_bqe_response(c: Ctx, s: Sym, src: int, i: int) -> Step:
    """client.handle_begin_quorum_epoch_response."""
    k = (BQE_REQUEST, i, src)
    present = s[("st",) + k] == RESPONSE
    error, leader, epoch = s[("merror",) + k], s[("mleader",) + k], s[("mepoch",) + k]
    s = remove_slot(s, *k)
    t, _ = common_response(c, s, i, error, leader, epoch)
    return Step(present, t)


def handle_fetch_request(c: Ctx, s: Sym, src: int, i: int) -> Step:
    """client.handle_fetch_request."""
    k = (FETCH_REQUEST, src, i)
    present = s[("st",) + k] == REQUEST
    live, mepoch, fo, lfe, obs = (s[("live",) + k], s[("mepoch",) + k], s[("fetch_offset",) + k],
                                  s[("lfe",) + k], s[("fobs",) + k])
    s = remove_slot(s, *k)
    ne = s[("epoch", i)]
    error = z3.If(z3.Or(fo < 0, lfe < 0, lfe > mepoch), INVALID_REQUEST,
                  z3.If(mepoch < ne, FENCED_LEADER_EPOCH,
                        z3.If(mepoch > ne, UNKNOWN_LEADER_EPOCH,
                              z3.If(s[("role", i)] != LEADER, NOT_LEADER_OR_FOLLOWER, NONE))))
    none_recs = {"rec_len": z3.IntVal(0)}
    err = respond(s, live, *k, {"mepoch": ne, "mleader": s[("leader", i)], "merror": error,
                                "div_epoch": z3.IntVal(NO_ID), "div_offset": z3.IntVal(NO_ID),
                                "rhw": z3.IntVal(NO_ID), **none_recs})
    found_off, found_ep = end_offset_for_epoch(c, s, i, lfe)
    diverging = z3.And(fo != 0, z3.Or(found_ep != lfe, found_off < fo))
    div = respond(s, live, *k, {"mepoch": ne, "mleader": s[("leader", i)], "merror": z3.IntVal(NONE),
                                "div_epoch": found_ep, "div_offset": found_off, "rhw": s[("hw", i)], **none_recs})
    recorded = update_leader_hw(c, s.set({("end", i, src): fo}), i)
    t = ite(obs, s, recorded)
    records = {"rec_ep": [entry_ep(c, t, i, fo + x) for x in range(c.L)],
               "rec_kind": [entry_kind(c, t, i, fo + x) for x in range(c.L)]}
    good = respond(t, live, *k, {"mepoch": t[("epoch", i)], "mleader": t[("leader", i)], "merror": z3.IntVal(NONE),
                                 "div_epoch": z3.IntVal(NO_ID), "div_offset": z3.IntVal(NO_ID),
                                 "rec_len": t[("leo", i)] - fo, "rhw": t[("hw", i)], **records})
    return Step(present, ite(error != NONE, err, ite(diverging, div, good)))


def set_fatal(s: Sym, i: int, code: int) -> Sym:
    return s.set({("fatal", i, code): T})


def handle_fetch_response(c: Ctx, s: Sym, src: int, i: int) -> Step:
    """client.handle_fetch_response."""
    k = (FETCH_REQUEST, i, src)
    present = s[("st",) + k] == RESPONSE
    error, leader, epoch = s[("merror",) + k], s[("mleader",) + k], s[("mepoch",) + k]
    dep, doff, rlen, rhw = s[("div_epoch",) + k], s[("div_offset",) + k], s[("rec_len",) + k], s[("rhw",) + k]
    rec_ep = [s[("rec_ep",) + k + (x,)] for x in range(c.L)]
    rec_kind = [s[("rec_kind",) + k + (x,)] for x in range(c.L)]
    s = remove_slot(s, *k)
    t, handled = common_response(c, s, i, error, leader, epoch)
    hw, leo = t[("hw", i)], t[("leo", i)]
    # diverging: truncate (below the HW Kafka throws)
    cut = truncation_offset(c, t, i, doff, dep)
    truncated = t.set({("leo", i): cut, ("fetched", i): T})
    truncated = truncated.set({("last_event",): z3.If(cut < leo, TRUNCATED, t[("last_event",)])})
    on_div = ite(z3.And(hw >= 0, doff < hw), set_fatal(t, i, FATAL_TRUNCATE_BELOW_HW), poll_sends(c, truncated, i))
    # records: append, follower HW
    eps = [z3.If(x < leo, t[("lep", i, x)], select(rec_ep, x - leo, t[("lep", i, x)])) for x in range(c.L)]
    kinds = [z3.If(x < leo, t[("lkind", i, x)], select(rec_kind, x - leo, t[("lkind", i, x)])) for x in range(c.L)]
    new_leo = leo + rlen
    appended = set_log(c, t, i, eps, kinds, new_leo)
    if c.p.follower_hw:
        fhw = z3.If(rhw >= 0, smin(new_leo, rhw), hw)
        back = z3.And(rhw >= 0, hw >= 0, fhw < hw)
        on_recs = ite(back, set_fatal(t, i, FATAL_NON_MONOTONIC_HW),
                      poll_sends(c, appended.set({("hw", i): fhw, ("fetched", i): T}), i))
    else:
        on_recs = poll_sends(c, appended.set({("fetched", i): T}), i)
    post = ite(z3.Or(handled, error != NONE), t, ite(dep >= 0, on_div, on_recs))
    return Step(present, post)


# --- faults (model/kraft/faults.py) ------------------------------------------------------------


def may_fault(c: Ctx, s: Sym, used: str, budget: int) -> Any:
    total = s[("restarts",)] + s[("disk_losses",)] + s[("cuts",)] + s[("losses",)]
    return z3.And(s[(used,)] < budget, total < c.p.faults)


def restart(c: Ctx, s: Sym, i: int) -> Step:
    """faults.restart."""
    t = restored(c, s.set({("restarts",): s[("restarts",)] + 1}), i)
    guard = z3.And(may_fault(c, s, "restarts", c.p.restarts), z3.Not(restart_beyond_bounds(c, t, i)))
    return Step(guard, restart_node(c, t, i))


def disk_loss(c: Ctx, s: Sym, i: int) -> Step:
    """faults.disk_loss: a freshly formatted node; with KIP-853 an observer."""
    guard = z3.And(z3.Not(s[("observer", i)]), may_fault(c, s, "disk_losses", c.p.disk_losses))
    u = {("role", i): z3.IntVal(UNATTACHED), ("epoch", i): z3.IntVal(0), ("leader", i): z3.IntVal(NO_ID),
         ("voted", i): z3.IntVal(NO_ID), ("leo", i): z3.IntVal(0), ("hw", i): z3.IntVal(NO_ID),
         ("estart", i): z3.IntVal(NO_ID), ("fetched", i): F, ("observer", i): z3.BoolVal(c.proto.directory_id),
         ("vpers", i): T}
    u.update(no_votes(c, i))
    u.update(no_ends(c, i))
    t = drop_addressed_to(c, s.set({("disk_losses",): s[("disk_losses",)] + 1}), i).set(u)
    return Step(z3.And(guard, z3.Not(restart_beyond_bounds(c, t, i))), restart_node(c, t, i))


def cut_link(c: Ctx, s: Sym, a: int, b: int) -> Step:
    guard = z3.And(z3.Not(s[("cut", a, b)]), may_fault(c, s, "cuts", c.p.partitions))
    return Step(guard, s.set({("cut", a, b): T, ("cuts",): s[("cuts",)] + 1}))


def heal_link(c: Ctx, s: Sym, a: int, b: int) -> Step:
    return Step(s[("cut", a, b)], s.set({("cut", a, b): F}))


def drop_message(c: Ctx, s: Sym, kind: int, src: int, dst: int) -> Step:
    """faults.drop_message: the message of this kind from src to dst is lost."""
    if kind in RPCS:
        k, st = (kind, src, dst), REQUEST
    else:
        k, st = (kind - 1, dst, src), RESPONSE
    guard = z3.And(may_fault(c, s, "losses", c.p.losses), s[("st",) + k] == st)
    return Step(guard, remove_slot(s, *k).set({("losses",): s[("losses",)] + 1}))


# --- the relation -------------------------------------------------------------------------------

HANDLERS = {
    A.HandleVoteRequest: handle_vote_request,
    A.HandleVoteResponse: handle_vote_response,
    A.HandleBeginQuorumEpochRequest: handle_bqe_request,
    A.HandleBeginQuorumEpochResponse: handle_bqe_response,
    A.HandleFetchRequest: handle_fetch_request,
    A.HandleFetchResponse: handle_fetch_response,
}


def step(c: Ctx, s: Sym, a: Any) -> Step:
    """The guard and post-state of action `a` from `s` (model.next_state: last_event is reset
    first)."""
    s = s.set({("last_event",): z3.IntVal(NO_EVENT)})
    t = type(a)
    if t is A.ElectionTimeout:
        return election_timeout(c, s, a.node)
    if t is A.FetchTimeout:
        return fetch_timeout(c, s, a.node)
    if t is A.CheckQuorumTimeout:
        return check_quorum_timeout(c, s, a.node)
    if t is A.ClientAppend:
        return client_append(c, s, a.node)
    if t is A.SendVote:
        return send_vote(c, s, a.src, a.dst)
    if t is A.SendBeginQuorumEpoch:
        return send_begin_quorum_epoch(c, s, a.src, a.dst)
    if t is A.SendFetch:
        return send_fetch(c, s, a.src)
    if t in HANDLERS:
        return HANDLERS[t](c, s, a.src, a.dst)
    if t is A.Restart:
        return restart(c, s, a.node)
    if t is A.DiskLoss:
        return disk_loss(c, s, a.node)
    if t is A.CutLink:
        return cut_link(c, s, a.a, a.b)
    if t is A.HealLink:
        return heal_link(c, s, a.a, a.b)
    if t is A.DropMessage:
        return drop_message(c, s, A.MESSAGE_KIND[a.message], a.src, a.dst)
    raise ValueError(f"unknown action {a!r}")


def transition(c: Ctx, pre: Sym, post: Sym, acts: list[Any] | None = None, selector: Any = None) -> Any:
    """Next(pre, post) over every action instance (term.relation; selector == the action index)."""
    acts = actions(c) if acts is None else acts
    return relation([step(c, pre, a) for a in acts], pre, post, selector)


def _encoding() -> Any:
    from checker.proofs.induction import kraft_base

    return SimpleNamespace(**{**vars(kraft_base()), "name": "kraft (hand-written oracle)", "step": step,
                              "transition": transition, "init": init})


ENCODING = _encoding()
