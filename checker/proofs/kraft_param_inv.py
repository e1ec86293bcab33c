"""The invariants and lemmas of the every-size KRaft encoding (kraft_param), by name.

Each is a function (PCtx, State) -> a closed Z3 formula, quantified over the sort Node (and
epochs, integers). spec/proofs.md, "Every cluster size", says why each holds.
"""
from __future__ import annotations

import itertools
from typing import Any, Callable

import z3

from checker.proofs.kraft_param import (MESSAGES, Node, PCtx, Quorum, State, init, initial_state, meet, member,
                                        uninterpreted)
from model.kraft.rules import CANDIDATE, FOLLOWER, LEADER, NONE, PROSPECTIVE, RESIGNED, UNATTACHED

n, m, v, v2 = (z3.Const(x, Node) for x in ("n", "m", "v", "v2"))
e = z3.Int("e")
q = z3.Const("q", Quorum)


def election_safety(c: PCtx, s: State) -> Any:
    """At most one leader is ever elected in an epoch (properties.election_safety)."""
    return z3.ForAll([e, v, v2], z3.Implies(z3.And(s.elected(e, v), s.elected(e, v2)), v == v2))


def no_self_messages(c: PCtx, s: State) -> Any:
    """No message goes from a node to itself."""
    return z3.ForAll([n], z3.And([z3.Not(s.msg(k, "present")(n, n)) for k in MESSAGES]))


def knows_itself(c: PCtx, s: State) -> Any:
    """A Leader or Resigned node knows itself as the leader of its epoch."""
    return z3.ForAll([n], z3.Implies(z3.Or(s.role(n) == LEADER, s.role(n) == RESIGNED),
                                     z3.And(s.has_leader(n), s.leader(n) == n)))


def own_vote(c: PCtx, s: State) -> Any:
    """A Candidate or Leader voted for itself in its epoch; a Resigned leader too, unless it
    restarted since (then it has no vote)."""
    return z3.ForAll([n], z3.And(z3.Implies(z3.Or(s.role(n) == CANDIDATE, s.role(n) == LEADER),
                                            z3.And(s.has_voted(n), s.voted(n) == n)),
                                 z3.Implies(z3.And(s.role(n) == RESIGNED, s.has_voted(n)), s.voted(n) == n)))


def vote_persisted(c: PCtx, s: State) -> Any:
    """Every granted vote is on disk (Kafka 4.1 writes it before the response)."""
    return z3.ForAll([n], s.persisted(n))


def voted_recorded(c: PCtx, s: State) -> Any:
    """A node's current vote is the ghost vote of its current epoch."""
    return z3.ForAll([n], z3.Implies(s.has_voted(n), s.vote_hist(n, s.epoch(n), s.voted(n))))


def vote_record(c: PCtx, s: State) -> Any:
    """A voter (not an observer) that voted for v in epoch e is past e, or in e and still holds
    that vote (a Resigned leader that restarted forgot its own vote, and never votes in e again)."""
    body = z3.Or(s.epoch(m) > e, z3.And(s.epoch(m) == e, z3.Or(z3.And(s.has_voted(m), s.voted(m) == v),
                                                               z3.And(s.role(m) == RESIGNED, v == m))))
    return z3.ForAll([m, e, v], z3.Implies(z3.And(s.vote_hist(m, e, v), z3.Not(s.observer(m))), body))


def vote_unique(c: PCtx, s: State) -> Any:
    """A voter grants at most one standard vote per epoch."""
    return z3.ForAll([m, e, v, v2], z3.Implies(z3.And(s.vote_hist(m, e, v), s.vote_hist(m, e, v2)), v == v2))


def live_vote_requests(c: PCtx, s: State) -> Any:
    """A live Vote request's sender is still the Prospective (pre-vote) or Candidate (standard
    vote) of the request's epoch that sent it."""
    present, live = s.msg("vreq", "present"), s.msg("vreq", "live")
    body = z3.And(z3.Or(s.role(n) == PROSPECTIVE, s.role(n) == CANDIDATE), s.msg("vreq", "epoch")(n, m) == s.epoch(n),
                  s.msg("vreq", "pre")(n, m) == (s.role(n) == PROSPECTIVE))
    return z3.ForAll([n, m], z3.Implies(z3.And(present(n, m), live(n, m)), body))


def granted_responses(c: PCtx, s: State) -> Any:
    """A granted Vote response to a Candidate, of its epoch, is a ghost vote for it."""
    g = z3.And(s.msg("vresp", "present")(m, n), s.msg("vresp", "granted")(m, n), s.role(n) == CANDIDATE,
               s.msg("vresp", "epoch")(m, n) == s.epoch(n))
    return z3.ForAll([m, n], z3.Implies(g, s.vote_hist(m, s.epoch(n), n)))


def tally(c: PCtx, s: State) -> Any:
    """A Candidate's tally counts voter m as granted only if m's ghost vote of its epoch is for it."""
    return z3.ForAll([n, m], z3.Implies(z3.And(s.role(n) == CANDIDATE, s.granted(n, m)),
                                        s.vote_hist(m, s.epoch(n), n)))


def roles(c: PCtx, s: State) -> Any:
    """Roles are the six of QuorumState; a Follower knows its leader."""
    return z3.ForAll([n], z3.And(0 <= s.role(n), s.role(n) <= RESIGNED,
                                 z3.Implies(s.role(n) == FOLLOWER, s.has_leader(n))))


def tally_roles(c: PCtx, s: State) -> Any:
    """Only a Prospective or Candidate has an election's tally, and it counts its own vote."""
    return z3.ForAll([n, m], z3.And(
        z3.Implies(z3.Or(s.granted(n, m), s.rejected(n, m)), z3.Or(s.role(n) == PROSPECTIVE, s.role(n) == CANDIDATE)),
        z3.Implies(z3.Or(s.role(n) == PROSPECTIVE, s.role(n) == CANDIDATE), s.granted(n, n))))


def observer_role(c: PCtx, s: State) -> Any:
    """An observer (a voter that lost its disk, KIP-853) is Unattached or a Follower."""
    return z3.ForAll([n], z3.Implies(s.observer(n), z3.Or(s.role(n) == UNATTACHED, s.role(n) == FOLLOWER)))


def log_epoch(c: PCtx, s: State) -> Any:
    """A log's last epoch is at most its node's epoch."""
    return z3.ForAll([n], z3.And(0 <= s.lle(n), s.lle(n) <= s.epoch(n)))


def self_leader(c: PCtx, s: State) -> Any:
    """Only a Leader or Resigned node knows itself as leader."""
    return z3.ForAll([n], z3.Implies(z3.And(s.has_leader(n), s.leader(n) == n),
                                     z3.Or(s.role(n) == LEADER, s.role(n) == RESIGNED)))


def leader_elected(c: PCtx, s: State) -> Any:
    """A node's known leader was elected in the node's epoch."""
    return z3.ForAll([n], z3.Implies(s.has_leader(n), s.elected(s.epoch(n), s.leader(n))))


def message_leaders(c: PCtx, s: State) -> Any:
    """A BeginQuorumEpoch request comes from the leader elected in its epoch; a response's
    leader field names the leader elected in its epoch."""
    parts = [z3.Implies(s.msg("bqe", "present")(n, m), s.elected(s.msg("bqe", "epoch")(n, m), n))]
    for k in ("vresp", "bqer", "fresp"):
        parts.append(z3.Implies(z3.And(s.msg(k, "present")(n, m), s.msg(k, "has_leader")(n, m)),
                                s.elected(s.msg(k, "epoch")(n, m), s.msg(k, "leader")(n, m))))
    return z3.ForAll([n, m], z3.And(parts))


def elected_reached(c: PCtx, s: State) -> Any:
    """A voter elected in epoch e has passed e, or is the Leader or Resigned leader of e."""
    body = z3.Or(s.epoch(v) > e, z3.And(s.epoch(v) == e, z3.Or(s.role(v) == LEADER, s.role(v) == RESIGNED)))
    return z3.ForAll([e, v], z3.Implies(z3.And(s.elected(e, v), z3.Not(s.observer(v))), body))


def elected_quorum(c: PCtx, s: State) -> Any:
    """Whoever was elected in an epoch holds the ghost votes of a quorum in it (equorum)."""
    return z3.ForAll([e, v, m], z3.Implies(z3.And(s.elected(e, v), member(m, s.equorum(e, v))),
                                           s.vote_hist(m, e, v)))


# --- Logs: log(n, k) for 0 <= k < len(n); a valid Fetch response's ghost log rlog(l, f, k) for
# 0 <= k < rlen (the leader's whole log when it answered) ----------------------------------------

k, j = z3.Int("k"), z3.Int("j")
l2, f2 = z3.Const("l2", Node), z3.Const("f2", Node)


def _at(s: State, x: Any, i: Any) -> Any:
    return z3.And(0 <= i, i < s.len(x))


def _records(s: State, x: Any, y: Any) -> Any:
    """A Fetch response from x to y that carries records (error NONE, not diverging)."""
    return z3.And(s.msg("fresp", "present")(x, y), s.msg("fresp", "error")(x, y) == NONE,
                  z3.Not(s.msg("fresp", "div")(x, y)))


def _in_rlog(s: State, x: Any, y: Any, i: Any) -> Any:
    return z3.And(_records(s, x, y), 0 <= i, i < s.msg("fresp", "rlen")(x, y))


def log_matching(c: PCtx, s: State) -> Any:
    """Two logs with an entry of the same epoch at one offset hold the same epochs up to it
    (properties.log_matching, over the entries' epochs)."""
    return z3.ForAll([n, m, k, j], z3.Implies(
        z3.And(_at(s, n, k), _at(s, m, k), s.log(n, k) == s.log(m, k), 0 <= j, j <= k), s.log(n, j) == s.log(m, j)))


def log_bounds(c: PCtx, s: State) -> Any:
    """A log's entries have epochs from 0 to its node's epoch; lle is the last one (0 if empty);
    a Fetch request's offset is not negative; a response's records lie within its log, whose
    epochs run from 0 to the response's epoch."""
    rlog, rlen, rstart = s.msg("fresp", "rlog"), s.msg("fresp", "rlen"), s.msg("fresp", "rstart")
    return z3.And(
        z3.ForAll([n], z3.And(0 <= s.len(n), s.lle(n) == z3.If(s.len(n) > 0, s.log(n, s.len(n) - 1), 0))),
        z3.ForAll([n, k], z3.Implies(_at(s, n, k), z3.And(0 <= s.log(n, k), s.log(n, k) <= s.epoch(n)))),
        z3.ForAll([n, m], z3.Implies(s.msg("freq", "present")(n, m), s.msg("freq", "fo")(n, m) >= 0)),
        z3.ForAll([n, m], z3.Implies(_records(s, n, m), z3.And(0 <= rstart(n, m), rstart(n, m) <= rlen(n, m)))),
        z3.ForAll([n, m, k], z3.Implies(_in_rlog(s, n, m, k), z3.And(
            0 <= rlog(n, m, k), rlog(n, m, k) <= s.msg("fresp", "epoch")(n, m)))))


def fetch_requests(c: PCtx, s: State) -> Any:
    """A live Fetch request comes from a Follower of its destination, and its fetch offset and
    last fetched epoch are the follower's log end and last epoch."""
    return z3.ForAll([n, m], z3.Implies(z3.And(s.msg("freq", "present")(n, m), s.msg("freq", "live")(n, m)), z3.And(
        s.role(n) == FOLLOWER, s.has_leader(n), s.leader(n) == m,
        s.msg("freq", "fo")(n, m) == s.len(n), s.msg("freq", "lfe")(n, m) == s.lle(n))))


def one_fetch(c: PCtx, s: State) -> Any:
    """A Fetch request and its response are never in flight together (network.in_flight)."""
    return z3.ForAll([n, m], z3.Not(z3.And(s.msg("freq", "present")(n, m), s.msg("fresp", "present")(m, n))))


def fetch_responses(c: PCtx, s: State) -> Any:
    """A Fetch response (error NONE) goes to a Follower of its source; if it carries records, the
    follower's log is the response's log up to the records' start, which is the follower's log end."""
    rlog, rstart = s.msg("fresp", "rlog"), s.msg("fresp", "rstart")
    ok = z3.And(s.msg("fresp", "present")(m, n), s.msg("fresp", "error")(m, n) == NONE)
    return z3.And(
        z3.ForAll([m, n], z3.Implies(ok, z3.And(s.role(n) == FOLLOWER, s.has_leader(n), s.leader(n) == m))),
        z3.ForAll([m, n], z3.Implies(_records(s, m, n), rstart(m, n) == s.len(n))),
        z3.ForAll([m, n, k], z3.Implies(z3.And(_records(s, m, n), _at(s, n, k)), s.log(n, k) == rlog(m, n, k))))


def message_log_matching(c: PCtx, s: State) -> Any:
    """Log matching between a response's log and a node's log, and between two responses' logs."""
    rlog = s.msg("fresp", "rlog")
    node = z3.ForAll([l2, f2, m, k, j], z3.Implies(
        z3.And(_in_rlog(s, l2, f2, k), _at(s, m, k), rlog(l2, f2, k) == s.log(m, k), 0 <= j, j <= k),
        rlog(l2, f2, j) == s.log(m, j)))
    msgs = z3.ForAll([l2, f2, n, m, k, j], z3.Implies(
        z3.And(_in_rlog(s, l2, f2, k), _in_rlog(s, n, m, k), rlog(l2, f2, k) == rlog(n, m, k), 0 <= j, j <= k),
        rlog(l2, f2, j) == rlog(n, m, j)))
    return z3.And(node, msgs)


def entry_start(c: PCtx, s: State) -> Any:
    """An entry of epoch e at offset k, in any log, lies at or after estart(e), and every
    entry of that log from estart(e) to k is of epoch e (its leader began e at estart(e))."""
    rlog = s.msg("fresp", "rlog")
    return z3.And(
        z3.ForAll([n, k], z3.Implies(_at(s, n, k), s.estart(s.log(n, k)) <= k)),
        z3.ForAll([n, k, j], z3.Implies(z3.And(_at(s, n, k), s.estart(s.log(n, k)) <= j, j <= k),
                                        s.log(n, j) == s.log(n, k))),
        z3.ForAll([n, m, k], z3.Implies(_in_rlog(s, n, m, k), s.estart(rlog(n, m, k)) <= k)),
        z3.ForAll([n, m, k, j], z3.Implies(z3.And(_in_rlog(s, n, m, k), s.estart(rlog(n, m, k)) <= j, j <= k),
                                           rlog(n, m, j) == rlog(n, m, k))))


def entry_elected(c: PCtx, s: State) -> Any:
    """An entry of epoch e, in any log, was written by eleader(e), elected in e."""
    rlog = s.msg("fresp", "rlog")
    return z3.And(
        z3.ForAll([n, k], z3.Implies(_at(s, n, k), s.elected(s.log(n, k), s.eleader(s.log(n, k))))),
        z3.ForAll([n, m, k], z3.Implies(_in_rlog(s, n, m, k), s.elected(rlog(n, m, k), s.eleader(rlog(n, m, k))))))


def leader_log(c: PCtx, s: State) -> Any:
    """A Leader of epoch e is eleader(e); its log holds entries of e from estart(e) to its end,
    and every entry of e in any log lies before its log's end."""
    rlog = s.msg("fresp", "rlog")
    e_ = s.epoch(n)
    return z3.ForAll([n], z3.Implies(s.role(n) == LEADER, z3.And(
        s.eleader(e_) == n, 0 <= s.estart(e_), s.estart(e_) <= s.len(n),
        z3.ForAll([k], z3.Implies(z3.And(s.estart(e_) <= k, k < s.len(n)), s.log(n, k) == e_)),
        z3.ForAll([m, k], z3.Implies(z3.And(_at(s, m, k), s.log(m, k) == e_), k < s.len(n))),
        z3.ForAll([l2, m, k], z3.Implies(z3.And(_in_rlog(s, l2, m, k), rlog(l2, m, k) == e_), k < s.len(n))))))


INVARIANTS: dict[str, Callable[[PCtx, State], Any]] = {"election_safety": election_safety,
                                                      "log_matching": log_matching}
LEMMAS: dict[str, Callable[[PCtx, State], Any]] = {
    "roles": roles, "tally_roles": tally_roles,
    "no_self_messages": no_self_messages, "knows_itself": knows_itself, "own_vote": own_vote,
    "vote_persisted": vote_persisted, "voted_recorded": voted_recorded, "vote_record": vote_record,
    "vote_unique": vote_unique, "live_vote_requests": live_vote_requests,
    "granted_responses": granted_responses, "tally": tally, "elected_quorum": elected_quorum,
    "observer_role": observer_role, "log_epoch": log_epoch, "self_leader": self_leader,
    "leader_elected": leader_elected, "message_leaders": message_leaders, "elected_reached": elected_reached,
    "log_bounds": log_bounds,
}
ELECTION_LEMMAS = tuple(LEMMAS)
LOG_LEMMAS: dict[str, Callable[[PCtx, State], Any]] = {
    "one_fetch": one_fetch, "fetch_requests": fetch_requests, "fetch_responses": fetch_responses, "entry_elected": entry_elected,
    "entry_start": entry_start, "leader_log": leader_log, "message_log_matching": message_log_matching,
}
LEMMAS.update(LOG_LEMMAS)
# log matching rests on election safety (one eleader per epoch), proved with it as a lemma
SUPPORT = {"election_safety": ELECTION_LEMMAS,
           "log_matching": ELECTION_LEMMAS + ("election_safety",) + tuple(LOG_LEMMAS)}
# The model's other invariants: not proved for every size (refused with --size any); the fixed-size
# encoding proves the first three (spec/proofs.md).
NOT_FOR_ANY_SIZE = ("committed_kept", "leader_hw_monotonic", "no_fatal_error",
                    "state_sanity")


def conjuncts(c: PCtx, targets: list[str]) -> list[str]:
    """The lemmas the targets rest on, then the targets. vote_persisted is a lemma only where
    the variant persists votes (K3 does not: its proof must fail, and does, at vote_record)."""
    names = [x for t in targets for x in SUPPORT[t]]
    names = [x for x in dict.fromkeys(names) if x != "vote_persisted" or c.proto.persist_vote]
    return names + [t for t in targets if t not in names]


def formula(name: str) -> Callable[[PCtx, State], Any]:
    return INVARIANTS[name] if name in INVARIANTS else LEMMAS[name]


# --- Leader completeness: the HW, end offsets, acknowledgements and the commit history ------------

h, x, x0 = z3.Int("h"), z3.Int("x"), z3.Const("x0", Node)
ep2 = z3.Int("e2")


def holds(s: State, y: Any, i: Any, ee: Any) -> Any:
    """y's log has an entry of epoch ee at offset i."""
    return z3.And(0 <= i, i < s.len(y), s.log(y, i) == ee)


def rholds(s: State, a: Any, b: Any, i: Any, ee: Any) -> Any:
    """The log of a Fetch response with records from a to b has an entry of epoch ee at offset i."""
    return z3.And(_in_rlog(s, a, b, i), s.msg("fresp", "rlog")(a, b, i) == ee)


def may_ack(s: State, ee: Any, hh: Any, y: Any) -> Any:
    """y acknowledged e's log up to hh, or may still do so (a voter still in an epoch <= e)."""
    return z3.Or(s.ack(y, ee) >= hh, z3.And(s.epoch(y) <= ee, z3.Not(s.observer(y))))


qv = z3.Const("qv", Quorum)


def qp(s: State) -> Any:
    """The predicate Q(e, h, q) of state s, a fresh symbol defined by qp_defs (so that lemmas
    mention it as an atom E-matching can trigger on); kept with the state."""
    if "_qp" not in s.__dict__:
        s.__dict__["_qp"] = z3.Function(f"Qp{next(_QP_IDS)}", z3.IntSort(), z3.IntSort(), Quorum, z3.BoolSort())
    return s.__dict__["_qp"]


_QP_IDS = itertools.count()


def qp_defs(s: State, also: State | None = None) -> list[Any]:
    """Q(e, h, q) <=> every member of q acknowledged e's log up to h or may still do so. The
    "<=" direction also triggers on `also`'s predicate (the post-state's), which creates the
    pre-state's term that the lemmas' instances need."""
    f, y = qp(s), z3.Const("ya", Node)
    body = z3.ForAll([y], z3.Implies(member(y, qv), may_ack(s, e, h, y)))
    pats = [f(e, h, qv)] + ([qp(also)(e, h, qv)] if also is not None else [])
    return [z3.ForAll([e, h, qv], z3.Implies(f(e, h, qv), body), patterns=[f(e, h, qv)]),
            z3.ForAll([e, h, qv], z3.Implies(body, f(e, h, qv)), patterns=pats)]


def _pats(*terms: Any) -> list[Any]:
    """A multi-pattern of the terms when each is an uninterpreted application (a pre-state's);
    none otherwise (a post-state's terms are If-trees, and its lemma is only ever a goal)."""
    ok = all(uninterpreted(t) for t in terms)
    return [z3.MultiPattern(*terms) if len(terms) > 1 else terms[0]] if ok else []


def quorum_may_ack(s: State, ee: Any, hh: Any, qq: Any = qv) -> Any:
    """Q(e, h) for the quorum qq: every member acknowledged e's log up to hh or may still do so.
    The lemmas quantify qq universally (an antecedent), so no existential quorum appears."""
    return qp(s)(ee, hh, qq)


def log_sorted(c: PCtx, s: State) -> Any:
    """A log's epochs never decrease."""
    rlog = s.msg("fresp", "rlog")
    return z3.And(
        z3.ForAll([n, j, k], z3.Implies(z3.And(0 <= j, j <= k, k < s.len(n)), s.log(n, j) <= s.log(n, k))),
        z3.ForAll([l2, f2, j, k], z3.Implies(z3.And(0 <= j, j <= k, _in_rlog(s, l2, f2, k)),
                                             rlog(l2, f2, j) <= rlog(l2, f2, k))))


def vote_request_logs(c: PCtx, s: State) -> Any:
    """A live Vote request carries its sender's last epoch and log end (unchanged since it sent it)."""
    return z3.And(
        z3.ForAll([n, m], z3.Implies(z3.And(s.msg("vreq", "present")(n, m), s.msg("vreq", "live")(n, m)), z3.And(
            s.msg("vreq", "lle")(n, m) == s.lle(n), s.msg("vreq", "leo")(n, m) == s.len(n)))),
        z3.ForAll([n, m], z3.Implies(z3.And(s.msg("vreq", "present")(n, m), z3.Not(s.observer(n))),
                                     s.msg("vreq", "epoch")(n, m) <= s.epoch(n))),
        # the log of one that voted for itself does not change in that epoch (a restart keeps
        # it), so even a stale standard request of that epoch carries it, unless it followed a
        # leader of that epoch before a restart made it a Candidate again (it can no longer win)
        z3.ForAll([n, m], z3.Implies(z3.And(s.msg("vreq", "present")(n, m), z3.Not(s.msg("vreq", "pre")(n, m)),
                                            unelected_candidate(s, n), s.msg("vreq", "epoch")(n, m) == s.epoch(n)),
                                     z3.And(s.msg("vreq", "lle")(n, m) == s.lle(n),
                                            s.msg("vreq", "leo")(n, m) == s.len(n)))),
        # without stale requests a request is dropped when its sender changes role
        z3.BoolVal(True) if c.stale_requests else
        z3.ForAll([n, m], z3.Implies(s.msg("vreq", "present")(n, m), s.msg("vreq", "live")(n, m))))


def unelected_candidate(s: State, n: Any) -> Any:
    """n voted for itself in its epoch (a Candidate, or one since timed out or restarted) and no
    one was elected in it (elected_leader: eleader names whoever was)."""
    return z3.And(s.has_voted(n), s.voted(n) == n, z3.Not(s.elected(s.epoch(n), s.eleader(s.epoch(n)))))


def elected_leader(c: PCtx, s: State) -> Any:
    """Whoever was elected in an epoch is eleader of it."""
    return z3.ForAll([e, v], z3.Implies(s.elected(e, v), s.eleader(e) == v))


def end_offsets(c: PCtx, s: State) -> Any:
    """A Leader's end offset for a voter lies within its log and, where it ends in an entry of the
    leader's epoch, the voter acknowledged the leader's log that far."""
    eo = s.eo(n, m)
    return z3.ForAll([n, m], z3.Implies(s.role(n) == LEADER, z3.And(
        eo <= s.len(n), z3.Implies(z3.And(eo >= 1, s.log(n, eo - 1) == s.epoch(n)), s.ack(m, s.epoch(n)) >= eo))))


def fetch_acks(c: PCtx, s: State) -> Any:
    """A Fetch request in flight (stale ones too) from a voter, whose last fetched epoch is the
    request's, was sent after its sender acknowledged its log up to the fetch offset; its last
    fetched epoch is at most its epoch."""
    fo, lfe, fe = (s.msg("freq", k)(n, m) for k in ("fo", "lfe", "epoch"))
    return z3.ForAll([n, m], z3.Implies(s.msg("freq", "present")(n, m), z3.And(
        lfe <= fe, z3.Implies(z3.And(z3.Not(s.msg("freq", "observer")(n, m)), fo >= 1, lfe == fe), s.ack(n, fe) >= fo))))


def acks(c: PCtx, s: State) -> Any:
    """An acknowledgement in epoch e ends past estart(e), in an epoch with a leader, that a voter
    reached; a Leader's log is at least as long as every acknowledgement of its epoch."""
    a = s.ack(m, e)
    return z3.And(
        z3.ForAll([m, e], z3.And(a >= 0, z3.Implies(a >= 1, z3.And(
            s.estart(e) < a, s.elected(e, s.eleader(e)), z3.Implies(z3.Not(s.observer(m)), e <= s.epoch(m)))))),
        z3.ForAll([n, m], z3.Implies(s.role(n) == LEADER, s.ack(m, s.epoch(n)) <= s.len(n))),
        z3.ForAll([m, e], s.ack(m, e) <= s.ack(s.eleader(e), e)),
        z3.ForAll([n, k], z3.Implies(_at(s, n, k), k < s.ack(s.eleader(s.log(n, k)), s.log(n, k)))),
        z3.ForAll([l2, f2, k], z3.Implies(_in_rlog(s, l2, f2, k), k < s.ack(s.eleader(s.msg("fresp", "rlog")(l2, f2, k)),
                                                                           s.msg("fresp", "rlog")(l2, f2, k)))),
        z3.ForAll([n], z3.Implies(z3.And(s.role(n) == LEADER, s.len(n) >= 1, s.log(n, s.len(n) - 1) == s.epoch(n)),
                                  s.ack(n, s.epoch(n)) == s.len(n))))


def votes_for_reached(c: PCtx, s: State) -> Any:
    """Whoever got a standard vote in epoch e (not an observer) reached e."""
    return z3.ForAll([m, e, v], z3.Implies(z3.And(s.vote_hist(m, e, v), z3.Not(s.observer(v))), s.epoch(v) >= e))


def acked_held(c: PCtx, s: State) -> Any:
    """Under Q(e, h), a voter that acknowledged e's log up to h still holds its entry at h - 1."""
    return z3.ForAll([e, h, m, qv], z3.Implies(
        z3.And(h >= 1, s.estart(e) < h, s.ack(m, e) >= h, z3.Not(s.observer(m)), quorum_may_ack(s, e, h)),
        holds(s, m, h - 1, e)),
        patterns=_pats(qp(s)(e, h, qv), s.ack(m, e)))


def diverging_agree(c: PCtx, s: State) -> Any:
    """A diverging Fetch response in flight, of its follower's epoch (only such a one is handled:
    handle_common_response), keeps (agree) every entry of its own epoch the follower holds and,
    under Q(e, h), the entry at h - 1 of an earlier epoch e."""
    present = z3.And(s.msg("fresp", "present")(m, n), s.msg("fresp", "error")(m, n) == NONE, s.msg("fresp", "div")(m, n),
                     s.msg("fresp", "epoch")(m, n) == s.epoch(n))
    re, agree = s.msg("fresp", "epoch")(m, n), s.msg("fresp", "agree")(m, n)
    # two quantifiers: the first has no quorum, which no term of its own would instantiate
    return z3.And(
        z3.ForAll([m, n, h], z3.Implies(z3.And(present, h >= 1, holds(s, n, h - 1, re)), agree >= h)),
        z3.ForAll([m, n, e, h, qv], z3.Implies(z3.And(
            present, h >= 1, holds(s, n, h - 1, e), e < re, s.estart(e) < h, s.ack(s.eleader(e), e) >= h,
            quorum_may_ack(s, e, h)), agree >= h)))


def acked_in_later_logs(c: PCtx, s: State) -> Any:
    """Under Q(e, h), with e's log acknowledged up to h by someone: every Leader of a later epoch,
    every log with an entry of a later epoch, and every node that voted for itself in a later
    epoch with no leader yet and got the vote of one who acknowledged it, holds the entry at
    h - 1 (Raft 5.4.3)."""
    rlog = s.msg("fresp", "rlog")
    return z3.ForAll([e, h, qv], z3.Implies(z3.And(h >= 1, s.estart(e) < h, s.ack(s.eleader(e), e) >= h,
                                                   quorum_may_ack(s, e, h)), z3.And(
        z3.ForAll([n], z3.Implies(z3.And(s.role(n) == LEADER, s.epoch(n) > e), holds(s, n, h - 1, e))),
        z3.ForAll([n, k], z3.Implies(z3.And(_at(s, n, k), s.log(n, k) > e), holds(s, n, h - 1, e))),
        z3.ForAll([l2, f2, k], z3.Implies(z3.And(_in_rlog(s, l2, f2, k), rlog(l2, f2, k) > e),
                                          rholds(s, l2, f2, h - 1, e))),
        z3.ForAll([n, m], z3.Implies(z3.And(unelected_candidate(s, n), s.epoch(n) > e, s.vote_hist(m, s.epoch(n), n),
                                            s.ack(m, e) >= h), holds(s, n, h - 1, e))))),
        patterns=_pats(qp(s)(e, h, qv)))


def later_elections_met(c: PCtx, s: State) -> Any:
    """Under Q(e, h, q), the member q shares with the quorum that elected a leader of a later
    epoch acknowledged e's log up to h (it voted later, so it is no longer in an epoch <= e)."""
    mt = meet(qv, s.equorum(ep2, v))
    return z3.ForAll([e, h, qv, ep2, v], z3.Implies(z3.And(quorum_may_ack(s, e, h), s.elected(ep2, v), ep2 > e),
                                                    s.ack(mt, e) >= h),
                     patterns=_pats(qp(s)(e, h, qv), s.elected(ep2, v)))


def _committed(s: State, body: Callable[[Any, Any, Any, Any], Any]) -> Any:
    ce = s.cce(k, x)
    return z3.ForAll([k, x], z3.Implies(s.committed(k, x), body(k, x, ce, s.chw(ce))))


def hw_quorums(c: PCtx, s: State) -> Any:
    """The largest HW exposed in an epoch (-1 until one is) passes the epoch's start, its leader
    acknowledged it, and its quorum (ghost cq) did: Q(e, HW, cq(e))."""
    hh = s.chw(e)
    return z3.ForAll([e], z3.And(hh >= -1, z3.Implies(hh >= 0, z3.And(
        s.elected(e, s.eleader(e)), s.estart(e) < hh, s.ack(s.eleader(e), e) >= hh, quorum_may_ack(s, e, hh, s.cq(e)),
        z3.ForAll([m], z3.Implies(member(m, s.cq(e)), s.ack(m, e) >= hh))))))


def up_to_date_holds(c: PCtx, s: State) -> Any:
    """Under Q(e, h, q) with h past e's start: a log at least as up to date as one holding the entry
    at h - 1 (rules.is_log_up_to_date: last epoch, then length) holds it too."""
    newer = z3.Or(s.lle(v) > s.lle(m), z3.And(s.lle(v) == s.lle(m), s.len(v) >= s.len(m)))
    return z3.ForAll([e, h, qv, m, v], z3.Implies(
        z3.And(h >= 1, s.estart(e) < h, s.ack(s.eleader(e), e) >= h, quorum_may_ack(s, e, h),
               holds(s, m, h - 1, e), newer), holds(s, v, h - 1, e)),
        patterns=_pats(qp(s)(e, h, qv), s.lle(m), s.lle(v)))


def committed_bounds(c: PCtx, s: State) -> Any:
    """A committed entry lies below the largest HW of its commit epoch."""
    return _committed(s, lambda k, x, ce, hh: z3.And(0 <= k, k < hh))


def committed_logs(c: PCtx, s: State) -> Any:
    """Every log (a node's, a response's) holding the last entry below that HW holds the committed entry."""
    return _committed(s, lambda k, x, ce, hh: z3.And(
        z3.ForAll([n], z3.Implies(holds(s, n, hh - 1, ce), holds(s, n, k, x))),
        z3.ForAll([l2, f2], z3.Implies(rholds(s, l2, f2, hh - 1, ce), rholds(s, l2, f2, k, x)))))


def leader_completeness(c: PCtx, s: State) -> Any:
    """Every Leader holds every entry committed in an earlier epoch (properties.leader_completeness)."""
    return z3.ForAll([k, x, n], z3.Implies(z3.And(s.committed(k, x), s.role(n) == LEADER, s.cce(k, x) < s.epoch(n)),
                                           holds(s, n, k, x)))


INVARIANTS["leader_completeness"] = leader_completeness
LC_LEMMAS: dict[str, Callable[[PCtx, State], Any]] = {
    "log_sorted": log_sorted, "elected_leader": elected_leader, "vote_request_logs": vote_request_logs, "end_offsets": end_offsets,
    "fetch_acks": fetch_acks, "acks": acks, "votes_for_reached": votes_for_reached, "acked_held": acked_held,
    "diverging_agree": diverging_agree, "later_elections_met": later_elections_met,
    "acked_in_later_logs": acked_in_later_logs, "up_to_date_holds": up_to_date_holds,
    "hw_quorums": hw_quorums, "committed_bounds": committed_bounds, "committed_logs": committed_logs,
}
LEMMAS.update(LC_LEMMAS)
SUPPORT["leader_completeness"] = SUPPORT["log_matching"] + ("log_matching",) + tuple(LC_LEMMAS)
# The consecution query of a conjunct may assume conjuncts of the post-state proved for the same
# step before it (sound where this order has no cycle: tests/test_prove_any.py checks it).
ASSUMES: dict[str, tuple[str, ...]] = {
    "leader_completeness": ("hw_quorums", "committed_bounds", "committed_logs", "later_elections_met",
                            "acked_in_later_logs"),
    "up_to_date_holds": ("acked_in_later_logs", "entry_start", "log_sorted", "log_bounds"),
    "elected_leader": ("election_safety",), "acked_in_later_logs": ("election_safety", "elected_quorum", "later_elections_met"),
}


def assumed(name: str, names: list[str]) -> tuple[str, ...]:
    """The post-state conjuncts the query of `name` assumes: those of ASSUMES that are proved too."""
    return tuple(y for y in ASSUMES.get(name, ()) if y in names)


def definitions(names: list[str], pre: State, post: State | None = None) -> list[Any]:
    """The axioms defining the symbols the conjuncts mention besides the state's (Q where leader
    completeness's lemmas are among them), for the pre-state and, in a step, the post-state."""
    if not any(x == "leader_completeness" or x in LC_LEMMAS for x in names):
        return []
    return qp_defs(pre) if post is None else qp_defs(pre, post) + qp_defs(post)


def written_out(s: State) -> State:
    """s with Q written out (its definition in place of a symbol): for a given state, where no
    E-matching is needed."""
    y = z3.Const("y_w", Node)
    s.__dict__["_qp"] = lambda ee, hh, qq: z3.ForAll([y], z3.Implies(member(y, qq), may_ack(s, ee, hh, y)))
    return s


def initial_witness(c: PCtx, names: list[str]) -> list[Any]:
    """Init and the conjuncts of one initial state (kraft_param.initial_state), Q written out:
    satisfiable means Init & Inv is."""
    w = written_out(initial_state())
    return [init(w)] + [formula(x)(c, w) for x in names]
