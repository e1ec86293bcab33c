"""The invariants and lemmas of the every-size KRaft encoding (kraft_param), by name.

Each is a function (PCtx, State) -> a closed Z3 formula, quantified over the sort Node (and
epochs, integers). spec/proofs.md, "Every cluster size", says why each holds.
"""
from __future__ import annotations

from typing import Any, Callable

import z3

from checker.proofs.kraft_param import MESSAGES, Node, PCtx, Quorum, State, member
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
# encoding proves the first four (spec/proofs.md).
NOT_FOR_ANY_SIZE = ("leader_completeness", "committed_kept", "leader_hw_monotonic", "no_fatal_error",
                    "state_sanity")


def conjuncts(c: PCtx, targets: list[str]) -> list[str]:
    """The lemmas the targets rest on, then the targets. vote_persisted is a lemma only where
    the variant persists votes (K3 does not: its proof must fail, and does, at vote_record)."""
    names = [x for t in targets for x in SUPPORT[t]]
    names = [x for x in dict.fromkeys(names) if x != "vote_persisted" or c.proto.persist_vote]
    return names + [t for t in targets if t not in names]


def formula(name: str) -> Callable[[PCtx, State], Any]:
    return INVARIANTS[name] if name in INVARIANTS else LEMMAS[name]
