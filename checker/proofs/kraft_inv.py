"""The KRaft safety invariants (model/kraft/properties.py) as Z3 formulas, and the auxiliary
lemmas that strengthen them into an inductive invariant (mypyvy style: each a named formula
over one symbolic state; spec/proofs.md says in words what each one states and why it holds).

`INVARIANTS` are the model's `always` properties (same names, same meaning on every state
without a history conflict, see kraft_state). `LEMMAS` are the strengthening; `SUPPORT` names,
per invariant, the lemmas its induction proof uses.
"""
from __future__ import annotations

from typing import Any, Callable

import z3

from checker.proofs.kraft_ctx import Ctx, last_epoch, log_end_offset_for_epoch, majority, truncation_offset
from checker.proofs.kraft_state import EMPTY, REQUEST, RESPONSE, FETCH_REQUEST
from checker.proofs.term import Sym, at_least, at_most, count, select
from model.kraft.rules import (
    CANDIDATE, FOLLOWER, GRANTED, INVALID_VOTER_KEY, LEADER, NO_ID, NONE, PROSPECTIVE, RESIGNED, UNATTACHED,
    UNRECORDED,
)
from model.kraft.state import LEADER_CHANGE, VOTE_REQUEST

Formula = Callable[[Ctx, Sym], Any]


def _nodes(c: Ctx) -> range:
    return range(c.n)


def _epochs(c: Ctx) -> range:
    """The epochs a lemma about the history ranges over: every epoch the configuration allows
    (state_sanity bounds each node's epoch by max_epoch), so no quantifier is needed."""
    return range(0, c.p.max_epoch + 1)


def _entry_eq(s: Sym, a: int, b: int, k: int) -> Any:
    return z3.And(s[("lep", a, k)] == s[("lep", b, k)], s[("lkind", a, k)] == s[("lkind", b, k)])


# --- the model's invariants ------------------------------------------------------------------


def election_safety(c: Ctx, s: Sym) -> Any:
    """properties.election_safety: at most one leader was ever elected per epoch."""
    return z3.Not(s[("el_conflict",)])


def leader_completeness(c: Ctx, s: Sym) -> Any:
    """properties.leader_completeness: every leader holds every entry committed in an earlier
    epoch (the first entry committed at each offset; a second is committed_kept's failure)."""
    out = []
    for i in _nodes(c):
        for k in range(c.L):
            ep, at = s[("cmt_ep", k)], s[("cmt_at", k)]
            out.append(z3.Implies(z3.And(s[("role", i)] == LEADER, ep != NO_ID, at < s[("epoch", i)]),
                                  z3.And(k < s[("leo", i)], s[("lep", i, k)] == ep)))
    return z3.And(out)


def log_matching(c: Ctx, s: Sym) -> Any:
    """properties.log_matching: two logs with an entry of the same epoch at an offset agree on
    every entry up to it."""
    out = []
    for a in _nodes(c):
        for b in range(a + 1, c.n):
            for k in range(c.L):
                same = z3.And(k < s[("leo", a)], k < s[("leo", b)], s[("lep", a, k)] == s[("lep", b, k)])
                out.append(z3.Implies(same, z3.And([_entry_eq(s, a, b, x) for x in range(k + 1)])))
    return z3.And(out)


def committed_kept(c: Ctx, s: Sym) -> Any:
    """properties.committed_kept: never two entries committed at one offset; while fewer than a
    majority lost their disks, each committed entry is on majority - disks lost voters."""
    q = majority(c.n)
    out = [z3.Not(s[("cmt_conflict",)])]
    for k in range(c.L):
        ep = s[("cmt_ep", k)]
        held = count([z3.And(k < s[("leo", i)], s[("lep", i, k)] == ep) for i in _nodes(c)])
        out.append(z3.Implies(z3.And(ep != NO_ID, s[("disk_losses",)] < q), held >= q - s[("disk_losses",)]))
    return z3.And(out)


def leader_hw_monotonic(c: Ctx, s: Sym) -> Any:
    """properties.leader_hw_monotonic: a leader's HW is within its log and the largest its epoch
    exposed."""
    return z3.And([z3.Implies(s[("role", i)] == LEADER,
                              z3.And(s[("hw", i)] <= s[("leo", i)], s[("hw", i)] >= s[("lhws",)][s[("epoch", i)]]))
                   for i in _nodes(c)])


def state_sanity(c: Ctx, s: Sym) -> Any:
    """properties.state_sanity: each role's structure (QuorumState, EpochState) and the bounds."""
    return _structure(c, s, hw_within_log=True)


def role_structure(c: Ctx, s: Sym) -> Any:
    """state_sanity without "a follower's HW is within its log": that one rests on leader
    completeness (a follower never truncates below an HW it was sent), which election safety
    and log matching do not need."""
    return _structure(c, s, hw_within_log=False)


def _structure(c: Ctx, s: Sym, hw_within_log: bool) -> Any:
    out = [at_most([s[("st", r, a, b)] != EMPTY for r in (0, 2, 4) for a, b in c.layout.pairs()],
                   c.p.max_in_flight)]
    for i in _nodes(c):
        role, epoch, leader, voted, hw, leo = (s[("role", i)], s[("epoch", i)], s[("leader", i)], s[("voted", i)],
                                               s[("hw", i)], s[("leo", i)])
        pc = z3.Or(role == PROSPECTIVE, role == CANDIDATE)
        out += [
            role >= 0, role <= RESIGNED, 0 <= leo, leo <= c.L,
            epoch >= last_epoch(c, s, i), NO_ID <= hw, epoch <= c.p.max_epoch,
            hw <= leo if hw_within_log else z3.Implies(role == LEADER, hw <= leo),
            z3.Implies(s[("observer", i)], z3.Or(role == UNATTACHED, role == FOLLOWER)),
            z3.Implies(pc, s[("votes", i, i)] == GRANTED),
            z3.Implies(z3.Not(pc), z3.And([s[("votes", i, j)] == UNRECORDED for j in _nodes(c)])),
            z3.Implies(role == CANDIDATE, z3.And(voted == i, leader == NO_ID)),
            z3.Implies(role == LEADER, z3.And(leader == i, s[("end", i, i)] == leo)),
            z3.Implies(role != LEADER, z3.And(s[("estart", i)] == NO_ID,
                                              z3.And([s[("end", i, j)] == NO_ID for j in _nodes(c)]))),
            z3.Implies(role == FOLLOWER, z3.And(leader != NO_ID, leader != i)),
            z3.Implies(role == RESIGNED, leader == i),
            z3.Implies(role == UNATTACHED, leader == NO_ID),
        ]
        if c.proto.leader_change_record:
            es = s[("estart", i)]
            lc = z3.Or([z3.And(es == k, k < leo, s[("lep", i, k)] == epoch, s[("lkind", i, k)] == LEADER_CHANGE)
                        for k in range(c.L)])
            out.append(z3.Implies(role == LEADER, lc))
    return z3.And(out)


def no_fatal_error(c: Ctx, s: Sym) -> Any:
    """properties.no_fatal_error."""
    return z3.And([z3.Not(s[("fatal", i, code)]) for i in _nodes(c) for code in (1, 2)])


INVARIANTS: dict[str, Formula] = {
    "election_safety": election_safety,
    "leader_completeness": leader_completeness,
    "log_matching": log_matching,
    "committed_kept": committed_kept,
    "leader_hw_monotonic": leader_hw_monotonic,
    "state_sanity": state_sanity,
    "no_fatal_error": no_fatal_error,
}
# What `kcheck prove` proves by default (committed_kept, leader_hw_monotonic and no_fatal_error
# without follower_hw are proved on request: spec/proofs.md).
DEFAULT_TARGETS = ("election_safety", "log_matching", "leader_completeness")


# --- auxiliary lemmas -------------------------------------------------------------------------


def ids_in_range(c: Ctx, s: Sym) -> Any:
    """Node ids held in the state name a node or none."""
    out = []
    for i in _nodes(c):
        for name in ("leader", "voted"):
            out.append(z3.And(s[(name, i)] >= NO_ID, s[(name, i)] < c.n))
    return z3.And(out)


def well_formed(c: Ctx, s: Sym) -> Any:
    """Values stay in their domains: epochs and entry epochs >= 0, kinds 0/1, budgets within
    the configuration, the leader a node knows is itself only as Leader or Resigned, and (with
    follower_hw off) only a leader holds an HW."""
    out = []
    for name, cap in (("restarts", c.p.restarts), ("disk_losses", c.p.disk_losses), ("cuts", c.p.partitions),
                      ("losses", c.p.losses)):
        out += [s[(name,)] >= 0, s[(name,)] <= cap]
    out.append(s[("restarts",)] + s[("disk_losses",)] + s[("cuts",)] + s[("losses",)] <= c.p.faults)
    if c.p.timeouts >= 0:
        out += [s[("timers",)] >= 0, s[("timers",)] <= c.p.timeouts]
    for i in _nodes(c):
        role = s[("role", i)]
        out += [s[("epoch", i)] >= 0, s[("leo", i)] >= 0, s[("leo", i)] <= c.L,
                z3.Implies(z3.And(role != LEADER, role != RESIGNED), s[("leader", i)] != i)]
        for k in range(c.L):
            out.append(z3.Implies(k < s[("leo", i)], z3.And(s[("lep", i, k)] >= 1, s[("lkind", i, k)] >= 0,
                                                             s[("lkind", i, k)] <= 1)))
        if not c.p.follower_hw:
            out.append(z3.Implies(role != LEADER, s[("hw", i)] == NO_ID))
        # epoch 0 has no election: no Candidate, no vote
        out.append(z3.Implies(z3.Or(role == CANDIDATE, s[("voted", i)] != NO_ID), s[("epoch", i)] >= 1))
        out += [z3.And(s[("votes", i, j)] >= 0, s[("votes", i, j)] <= 2) for j in _nodes(c)]
        if c.proto.persist_vote:  # only vote-not-persisted skips the durable write
            out.append(s[("vpers", i)])
        # a Leader (or a leader that resigned) voted for itself as Candidate
        out.append(z3.Implies(role == LEADER, s[("voted", i)] == i))
        out.append(z3.Implies(role == RESIGNED, z3.Or(s[("voted", i)] == i, s[("voted", i)] == NO_ID)))
        # a leader's view of its voters: nobody is known past its own log end; its HW is
        # within its log and (KRaft's rule) past its epoch start; epochs start at 1
        leo = s[("leo", i)]
        out.append(z3.Implies(role == LEADER, z3.And(
            [z3.And(s[("end", i, j)] >= NO_ID, s[("end", i, j)] <= leo) for j in _nodes(c)]
            + [s[("epoch", i)] >= 1, s[("hw", i)] <= leo, s[("estart", i)] >= 0, s[("estart", i)] <= leo])))
        if c.proto.epoch_start_hw:
            out.append(z3.Implies(z3.And(role == LEADER, s[("hw", i)] != NO_ID), s[("hw", i)] > s[("estart", i)]))
        # entries are appended in epoch order (a leader appends its own, newest, epoch)
        for k in range(c.L - 1):
            out.append(z3.Implies(k + 1 < s[("leo", i)], s[("lep", i, k)] <= s[("lep", i, k + 1)]))
    return z3.And(out)


def history_domains(c: Ctx, s: Sym) -> Any:
    """The ghost history holds entries of the kinds and epochs logs hold."""
    out = []
    for k in range(c.L):
        ep = s[("cmt_ep", k)]
        out.append(ep >= NO_ID)
        out.append(z3.Implies(ep != NO_ID, z3.And(ep >= 1, s[("cmt_kind", k)] >= 0, s[("cmt_kind", k)] <= 1,
                                                  s[("cmt_at", k)] >= 1, s[("cmt_at", k)] <= c.p.max_epoch)))
    return z3.And(out)


def message_domains(c: Ctx, s: Sym) -> Any:
    """Every message in flight carries values in their domains (epochs within the bound, offsets
    within a log, node ids, error codes of the raft RPCs)."""
    out = []
    errors = (0, 6, 42, 74, 75, 125)
    for r in (0, 2, 4):
        for a, b in c.layout.pairs():
            k = (r, a, b)
            st, ep = s[("st",) + k], s[("mepoch",) + k]
            out.append(z3.And(st >= 0, st <= 2))
            out.append(z3.Implies(st != EMPTY, z3.And(ep >= 0, ep <= c.p.max_epoch)))
            out.append(z3.Implies(st == RESPONSE, z3.And(s[("mleader",) + k] >= NO_ID, s[("mleader",) + k] < c.n,
                                                         z3.Or([s[("merror",) + k] == x for x in errors]))))
            if r == VOTE_REQUEST:
                out.append(z3.Implies(z3.And(st == REQUEST, z3.Not(s[("pre_vote",) + k])), ep >= 1))
                out.append(z3.Implies(st == REQUEST, z3.And(
                    s[("last_epoch",) + k] >= 0, s[("last_epoch",) + k] <= ep,
                    s[("last_offset",) + k] >= 0, s[("last_offset",) + k] <= c.L)))
            if r == FETCH_REQUEST:
                out.append(z3.Implies(st == REQUEST, z3.And(
                    s[("lfe",) + k] >= 0, s[("lfe",) + k] <= ep,
                    s[("fetch_offset",) + k] >= 0, s[("fetch_offset",) + k] <= c.L)))
                rl = s[("rec_len",) + k]
                out.append(z3.Implies(st == RESPONSE, z3.And(
                    rl >= 0, rl <= c.L, s[("rhw",) + k] >= NO_ID, s[("div_epoch",) + k] >= NO_ID,
                    z3.And([z3.Implies(x < rl, z3.And(s[("rec_ep",) + k + (x,)] >= 1, s[("rec_kind",) + k + (x,)] >= 0,
                                                      s[("rec_kind",) + k + (x,)] <= 1)) for x in range(c.L)]))))
    return z3.And(out)


def vote_record(c: Ctx, s: Sym) -> Any:
    """The persisted vote is the ghost vote history at the current epoch, and no vote was
    granted at a later epoch (a voter grants one standard vote per epoch, and remembers it:
    QuorumState's votedKey in the quorum-state file). A Resigned leader that restarted has
    forgotten its own vote but cannot grant one in its epoch."""
    out = []
    for k in _nodes(c):
        hist, epoch, voted, role = s[("vote_hist", k)], s[("epoch", k)], s[("voted", k)], s[("role", k)]
        now = hist[epoch]
        out.append(z3.Implies(z3.Not(s[("observer", k)]), z3.And(
            z3.Implies(voted != NO_ID, now == voted),
            z3.Implies(z3.And(voted == NO_ID, role != RESIGNED), now == NO_ID),
            z3.Implies(role == RESIGNED, z3.Or(now == NO_ID, now == k)),
            z3.And([z3.Implies(x > epoch, hist[x] == NO_ID) for x in _epochs(c)]),
            hist[0] == NO_ID,
        )))
    return z3.And(out)


def vote_tally(c: Ctx, s: Sym) -> Any:
    """A Candidate's tally only counts real votes: a granted voter's ghost vote history names
    the Candidate at its epoch (EpochElection.recordVote after a granted VoteResponse)."""
    out = []
    for i in _nodes(c):
        e = s[("epoch", i)]
        for j in _nodes(c):
            out.append(z3.Implies(z3.And(s[("role", i)] == CANDIDATE, s[("votes", i, j)] == GRANTED),
                                  s[("vote_hist", j)][e] == i))
    return z3.And(out)


def rpc_state(c: Ctx, s: Sym) -> Any:
    """A live request's sender is still in the role, epoch (and log) it sent it from, and a
    response's requester still in the role it asked from: every role change resets the
    connections (KafkaRaftClient.resetConnections: its requests stop being live, responses to
    it are dropped) and a restart drops them too. A granted Vote response is for the epoch of
    its requester, and to a Candidate it is a real vote (ghost vote history)."""
    out = []
    for a, b in c.layout.pairs():
        role, epoch, leo = s[("role", a)], s[("epoch", a)], s[("leo", a)]
        lle = last_epoch(c, s, a)
        nominee = z3.Or(role == PROSPECTIVE, role == CANDIDATE)
        k = (VOTE_REQUEST, a, b)
        st = s[("st",) + k]
        out.append(z3.Implies(z3.And(st == REQUEST, s[("live",) + k]), z3.And(
            nominee, s[("mepoch",) + k] == epoch, s[("pre_vote",) + k] == (role == PROSPECTIVE),
            s[("last_epoch",) + k] == lle, s[("last_offset",) + k] == leo)))
        out.append(z3.Implies(st == RESPONSE, nominee))
        out.append(z3.Implies(z3.And(st == RESPONSE, s[("granted",) + k]), z3.And(
            s[("mepoch",) + k] == epoch, s[("merror",) + k] == NONE,
            z3.Implies(role == CANDIDATE, s[("vote_hist", b)][epoch] == a))))
        k = (2, a, b)
        st = s[("st",) + k]
        out.append(z3.Implies(z3.And(st == REQUEST, s[("live",) + k]),
                              z3.And(role == LEADER, s[("mepoch",) + k] == epoch)))
        # an error answers from a newer epoch, but an observer's INVALID_VOTER_KEY from the leader's own
        out.append(z3.Implies(st == RESPONSE, z3.And(role == LEADER, s[("merror",) + k] != NONE, z3.If(
            s[("merror",) + k] == INVALID_VOTER_KEY, s[("mepoch",) + k] == epoch, s[("mepoch",) + k] > epoch))))
        k = (FETCH_REQUEST, a, b)
        st = s[("st",) + k]
        out.append(z3.Implies(z3.And(st == REQUEST, s[("live",) + k]), z3.And(
            role == FOLLOWER, s[("leader", a)] == b, s[("mepoch",) + k] == epoch,
            s[("fetch_offset",) + k] == leo, s[("lfe",) + k] == lle, s[("fobs",) + k] == s[("observer", a)])))
        out.append(z3.Implies(st == RESPONSE, z3.And(role == FOLLOWER, s[("leader", a)] == b)))
        out.append(z3.Implies(z3.And(st == RESPONSE, s[("merror",) + k] == NONE), z3.And(
            s[("mleader",) + k] == b, s[("mepoch",) + k] == epoch,
            z3.Implies(s[("div_epoch",) + k] != NO_ID, z3.And(
                s[("div_epoch",) + k] >= 0, s[("div_epoch",) + k] <= epoch,
                s[("div_offset",) + k] >= 0, s[("div_offset",) + k] <= c.L)))))
    return z3.And(out)


def leader_knowledge(c: Ctx, s: Sym) -> Any:
    """Whatever names a leader of an epoch names the one elected in it: a node's known leader,
    a BeginQuorumEpoch request, a response's leader field. And a voter elected in its current
    epoch is its Leader or has resigned it (it never follows or stands again in that epoch)."""
    el = s[("elected",)]
    out = []
    for i in _nodes(c):
        epoch, leader, role = s[("epoch", i)], s[("leader", i)], s[("role", i)]
        out.append(z3.Implies(leader != NO_ID, el[epoch] == leader))
        out.append(z3.Implies(z3.And(el[epoch] == i, z3.Not(s[("observer", i)])),
                              z3.Or(role == LEADER, role == RESIGNED)))
    for a, b in c.layout.pairs():
        out.append(z3.Implies(s[("st", 2, a, b)] == REQUEST, el[s[("mepoch", 2, a, b)]] == a))
        for r in (0, 2, 4):
            k = (r, a, b)
            ml = s[("mleader",) + k]
            out.append(z3.Implies(z3.And(s[("st",) + k] == RESPONSE, ml != NO_ID), el[s[("mepoch",) + k]] == ml))
    for e in _epochs(c):
        out.append(z3.Implies(el[e] != NO_ID, z3.And(e >= 1, el[e] >= 0, el[e] < c.n)))
    return z3.And(out)


def elected_quorum(c: Ctx, s: Sym) -> Any:
    """Whoever was elected in an epoch holds the votes of a majority in it (ghost), and a
    current leader is the one elected in its epoch."""
    el = s[("elected",)]
    out = [z3.Implies(el[e] != NO_ID, at_least([s[("vote_hist", j)][e] == el[e] for j in _nodes(c)], majority(c.n)))
           for e in _epochs(c)]
    # the one elected voted for itself (as Candidate) in that epoch
    out += [z3.Implies(el[e] == i, s[("vote_hist", i)][e] == i) for e in _epochs(c) for i in _nodes(c)]
    for i in _nodes(c):
        out.append(z3.Implies(z3.Or(s[("role", i)] == LEADER, s[("role", i)] == RESIGNED), el[s[("epoch", i)]] == i))
    return z3.And(out)


def _elog_prefix(c: Ctx, s: Sym, ep_at: Callable[[int], Any], kind_at: Callable[[int], Any], k: int, e: Any) -> Any:
    """Entries 0..k of a log equal those of the log of epoch e's leader (and k is within it)."""
    return z3.And([k < s[("elen",)][e]] + [z3.And(ep_at(x) == s[("elog_ep", x)][e], kind_at(x) == s[("elog_kind", x)][e])
                                           for x in range(k + 1)])


def epoch_logs(c: Ctx, s: Sym) -> Any:
    """The ghost log of each epoch (its leader's log as last written) has a length within the
    bound, is empty before the epoch's election, holds entries of that epoch or older in epoch
    order, and is the current log of a leader of that epoch (a leader only appends)."""
    out = []
    elen, el = s[("elen",)], s[("elected",)]
    for e in _epochs(c):
        n_e = elen[e]
        out += [n_e >= 0, n_e <= c.L, z3.Implies(el[e] == NO_ID, n_e == 0)]
        for k in range(c.L):
            ep, kind = s[("elog_ep", k)][e], s[("elog_kind", k)][e]
            out.append(z3.Implies(k < n_e, z3.And(ep >= 1, ep <= e, kind >= 0, kind <= 1,
                                                  _elog_prefix(c, s, lambda x: s[("elog_ep", x)][e],
                                                               lambda x: s[("elog_kind", x)][e], k, ep))))
            if k + 1 < c.L:
                out.append(z3.Implies(k + 1 < n_e, ep <= s[("elog_ep", k + 1)][e]))
    for i in _nodes(c):
        e, leo = s[("epoch", i)], s[("leo", i)]
        out.append(z3.Implies(s[("role", i)] == LEADER, z3.And(
            [elen[e] == leo] + [z3.Implies(k < leo, z3.And(s[("lep", i, k)] == s[("elog_ep", k)][e],
                                                            s[("lkind", i, k)] == s[("elog_kind", k)][e]))
                                for k in range(c.L)])))
    return z3.And(out)


def log_origin(c: Ctx, s: Sym) -> Any:
    """Every log, up to each of its entries, is a prefix of the log of that entry's epoch
    (Raft's log matching, stated against the ghost epoch logs). The same for the log a
    follower will have after the records of a Fetch response in flight to it: its log,
    unchanged since it sent the request, then the records."""
    out = []
    for i in _nodes(c):
        leo = s[("leo", i)]
        for k in range(c.L):
            out.append(z3.Implies(k < leo, _elog_prefix(c, s, lambda x: s[("lep", i, x)], lambda x: s[("lkind", i, x)],
                                                         k, s[("lep", i, k)])))
    for a, b in c.layout.pairs():
        key = (FETCH_REQUEST, a, b)
        leo, rl = s[("leo", a)], s[("rec_len",) + key]
        records = z3.And(s[("st",) + key] == RESPONSE, s[("merror",) + key] == NONE, s[("div_epoch",) + key] == NO_ID)
        rec_ep = [s[("rec_ep",) + key + (x,)] for x in range(c.L)]
        rec_kind = [s[("rec_kind",) + key + (x,)] for x in range(c.L)]

        def v_ep(x: int, a: int = a, leo: Any = leo, rec_ep: list[Any] = rec_ep) -> Any:
            return z3.If(x < leo, s[("lep", a, x)], select(rec_ep, x - leo, z3.IntVal(NO_ID)))

        def v_kind(x: int, a: int = a, leo: Any = leo, rec_kind: list[Any] = rec_kind) -> Any:
            return z3.If(x < leo, s[("lkind", a, x)], select(rec_kind, x - leo, z3.IntVal(NO_ID)))

        body = [leo + rl <= c.L, s[("mepoch",) + key] == s[("epoch", a)]]
        body += [z3.Implies(k < leo + rl, z3.And(v_ep(k) >= 1, v_ep(k) <= s[("mepoch",) + key],
                                                 _elog_prefix(c, s, v_ep, v_kind, k, v_ep(k)))) for k in range(c.L)]
        out.append(z3.Implies(records, z3.And(body)))
    return z3.And(out)


# --- leader completeness: acknowledgement quorums ------------------------------------------------


def _elog(s: Sym, x: int, e: Any) -> tuple[Any, Any]:
    return s[("elog_ep", x)][e], s[("elog_kind", x)][e]


def _has_prefix(c: Ctx, s: Sym, ep_at: Callable[[int], Any], kind_at: Callable[[int], Any], length: Any,
                e: int, h: int) -> Any:
    """A log (entries ep_at/kind_at, `length` of them) starts with the first h entries of the
    ghost log of epoch e."""
    return z3.And([length >= h] + [z3.And(ep_at(x) == _elog(s, x, e)[0], kind_at(x) == _elog(s, x, e)[1])
                                   for x in range(h)])


def _quorum_cond(c: Ctx, s: Sym, e: int, h: int) -> Any:
    """The prefix of length h of epoch e's log ends in an entry of epoch e, and the voters that
    acknowledged it in e, together with the voters that still could (not observers, in epoch
    <= e), are a majority: it is committed or may yet be."""
    possible = [z3.Or(s[("ack", j)][e] >= h, z3.And(z3.Not(s[("observer", j)]), s[("epoch", j)] <= e))
                for j in _nodes(c)]
    return z3.And(h <= s[("elen",)][e], s[("elog_ep", h - 1)][e] == e, at_least(possible, majority(c.n)))


def _quorum_pairs(c: Ctx) -> list[tuple[int, int]]:
    return [(e, h) for e in range(1, c.p.max_epoch + 1) for h in range(1, c.L + 1)]


def ack_record(c: Ctx, s: Sym) -> Any:
    """Acknowledgements (ghost ack) are prefixes of the epoch's log: 0 <= ack[j][e] <= elen[e];
    a Leader has acknowledged its whole log; a Leader knows of a follower only what the follower
    acknowledged (end offset <= ack); a Fetch request in flight (not from an observer) that asks
    from offset fo >= 1 describes a prefix of the log of its last fetched epoch, and if that
    prefix is also the one of the request's epoch's log, it was acknowledged. A Fetch request
    goes to the leader elected in its epoch (a follower fetches from the leader it knows)."""
    out = []
    elen = s[("elen",)]
    for j in _nodes(c):
        for e in _epochs(c):
            out += [s[("ack", j)][e] >= 0, s[("ack", j)][e] <= elen[e]]
        e = s[("epoch", j)]
        out.append(z3.Implies(s[("role", j)] == LEADER, z3.And(
            [s[("ack", j)][e] == s[("leo", j)]]
            + [s[("end", j, x)] <= s[("ack", x)][e] for x in _nodes(c) if x != j])))
    for a, b in c.layout.pairs():
        k = (FETCH_REQUEST, a, b)
        fo, lfe, me = s[("fetch_offset",) + k], s[("lfe",) + k], s[("mepoch",) + k]
        same = z3.And([fo <= elen[me]] + [z3.Implies(x < fo, z3.And(_elog(s, x, lfe)[0] == _elog(s, x, me)[0],
                                                                     _elog(s, x, lfe)[1] == _elog(s, x, me)[1]))
                                          for x in range(c.L)])
        out.append(z3.Implies(s[("st",) + k] == REQUEST, s[("elected",)][me] == b))
        out.append(z3.Implies(z3.And(s[("st",) + k] == REQUEST, z3.Not(s[("fobs",) + k]), fo >= 1), z3.And(
            lfe >= 1, fo <= elen[lfe], z3.Implies(same, s[("ack", a)][me] >= fo))))
    return z3.And(out)


def vote_snapshot(c: Ctx, s: Sym) -> Any:
    """A vote went to a log at least as up to date as the voter's when it voted (its snapshot,
    ghost vle/vleo): while its candidate is in that epoch and nobody was elected in it, the
    candidate's log is unchanged since it asked, so (last epoch, end offset) >= the snapshot
    (KafkaRaftClient.handleVoteRequest's isLogUpToDate). A voter that got a vote in an epoch has
    reached it; a standard Vote request still carries its sender's log while the sender is in
    the request's epoch and nobody was elected in it."""
    out = []
    el = s[("elected",)]
    for cand in _nodes(c):
        ec, obs = s[("epoch", cand)], s[("observer", cand)]
        lec, leoc = last_epoch(c, s, cand), s[("leo", cand)]
        for j in _nodes(c):
            for e in range(1, c.p.max_epoch + 1):
                vle, vleo = s[("vle", j)][e], s[("vleo", j)][e]
                up = z3.Or(lec > vle, z3.And(lec == vle, leoc >= vleo))
                if cand == 0:
                    out.append(z3.Implies(s[("vote_hist", j)][e] != NO_ID, z3.And(
                        vle >= 0, vle <= e, vleo >= 0, vleo <= c.L, z3.Implies(vle == 0, vleo == 0))))
                out.append(z3.Implies(z3.And(s[("vote_hist", j)][e] == cand, z3.Not(obs)), z3.And(
                    ec >= e, z3.Implies(z3.And(ec == e, el[e] == NO_ID), up))))
    for a, b in c.layout.pairs():
        k = (VOTE_REQUEST, a, b)
        me = s[("mepoch",) + k]
        req = z3.And(s[("st",) + k] == REQUEST, z3.Not(s[("observer", a)]))
        out.append(z3.Implies(req, me <= s[("epoch", a)]))
        out.append(z3.Implies(z3.And(req, z3.Not(s[("pre_vote",) + k]), me == s[("epoch", a)], el[me] == NO_ID),
                              z3.And(s[("last_epoch",) + k] == last_epoch(c, s, a),
                                     s[("last_offset",) + k] == s[("leo", a)])))
    return z3.And(out)


def diverging_response(c: Ctx, s: Sym) -> Any:
    """A diverging Fetch response in flight to a follower answers its current log: the
    follower's last epoch is older than the response's epoch, and truncating at the diverging
    (offset, epoch) cuts where truncating at the end offset of that last epoch in the epoch's
    leader log would (ReplicatedLog.validateOffsetAndEpoch answers that end offset; later
    appends of the leader's own epoch do not change where the follower truncates)."""
    out = []
    elen = s[("elen",)]
    for a, b in c.layout.pairs():
        k = (FETCH_REQUEST, a, b)
        me = s[("mepoch",) + k]
        lea = last_epoch(c, s, a)
        off, ep = log_end_offset_for_epoch(c, [_elog(s, x, me)[0] for x in range(c.L)], elen[me], lea)
        div = z3.And(s[("st",) + k] == RESPONSE, s[("merror",) + k] == NONE, s[("div_epoch",) + k] != NO_ID)
        cut = truncation_offset(c, s, a, s[("div_offset",) + k], s[("div_epoch",) + k])
        out.append(z3.Implies(div, z3.And(lea < me, cut == truncation_offset(c, s, a, off, ep))))
    return z3.And(out)


def acked_in_later_leaders(c: Ctx, s: Sym) -> Any:
    """If the prefix of length h of epoch e's log (ending in an entry of epoch e) has been or
    can still be acknowledged by a majority (_quorum_cond), every leader elected in a later
    epoch holds it: its election needed a majority of votes in that later epoch, whose voters
    cannot acknowledge in e any more, so one of them acknowledged before it voted and voted for
    a log holding the prefix (acked_votes)."""
    out = []
    el, elen = s[("elected",)], s[("elen",)]
    for e, h in _quorum_pairs(c):
        cond = _quorum_cond(c, s, e, h)
        for e2 in range(e + 1, c.p.max_epoch + 1):
            out.append(z3.Implies(z3.And(cond, el[e2] != NO_ID),
                                  _has_prefix(c, s, lambda x: _elog(s, x, e2)[0], lambda x: _elog(s, x, e2)[1],
                                              elen[e2], e, h)))
    return z3.And(out)


def acked_votes(c: Ctx, s: Sym) -> Any:
    """Under _quorum_cond(e, h), a voter that acknowledged the prefix in e and voted in a later
    epoch held it when it voted: its vote snapshot is a log holding the prefix (the
    acknowledgement comes first: a voter acknowledges in its current epoch and votes only in
    its current epoch, and epochs only grow)."""
    out = []
    elen = s[("elen",)]
    for e, h in _quorum_pairs(c):
        cond = _quorum_cond(c, s, e, h)
        for j in _nodes(c):
            for e2 in range(e + 1, c.p.max_epoch + 1):
                vle, vleo = s[("vle", j)][e2], s[("vleo", j)][e2]
                snap = z3.And(vleo >= h, elen[vle] >= h,
                              *[z3.And(_elog(s, x, vle)[0] == _elog(s, x, e)[0], _elog(s, x, vle)[1] == _elog(s, x, e)[1])
                                for x in range(h)])
                out.append(z3.Implies(z3.And(cond, s[("ack", j)][e] >= h, s[("vote_hist", j)][e2] != NO_ID), snap))
    return z3.And(out)


def acked_held(c: Ctx, s: Sym) -> Any:
    """Under _quorum_cond(e, h), every voter (not an observer) that acknowledged the prefix in
    e still holds it: after acknowledging it only appends, or truncates on a diverging Fetch
    response from the leader of its epoch, whose log holds the prefix too (acked_in_later_leaders),
    and truncation (ReplicatedLog.truncateToEndOffset) never cuts a prefix both logs share."""
    out = []
    for e, h in _quorum_pairs(c):
        cond = _quorum_cond(c, s, e, h)
        for j in _nodes(c):
            out.append(z3.Implies(z3.And(cond, s[("ack", j)][e] >= h, z3.Not(s[("observer", j)])),
                                  _has_prefix(c, s, lambda x, j=j: s[("lep", j, x)], lambda x, j=j: s[("lkind", j, x)],
                                              s[("leo", j)], e, h)))
    return z3.And(out)


def committed_quorum(c: Ctx, s: Sym) -> Any:
    """The largest HW exposed in an epoch (history lhws) ends in an entry of that epoch (KRaft:
    the HW passes the epoch start, LeaderState.maybeUpdateHighWatermark) and a majority
    acknowledged the log up to it; each committed entry lies below the HW of its commit epoch
    and is that epoch's log entry."""
    out = []
    elen, lhws = s[("elen",)], s[("lhws",)]
    for e in range(1, c.p.max_epoch + 1):
        hw = lhws[e]
        last = select([s[("elog_ep", x)][e] for x in range(c.L)], hw - 1, z3.IntVal(NO_ID))
        out.append(z3.Implies(hw != NO_ID, s[("elected",)][e] != NO_ID))
        out.append(z3.Implies(hw >= 1, z3.And(hw <= elen[e], last == e,
                                              at_least([s[("ack", j)][e] >= hw for j in _nodes(c)], majority(c.n)))))
    for k in range(c.L):
        ep, at = s[("cmt_ep", k)], s[("cmt_at", k)]
        out.append(z3.Implies(ep != NO_ID, z3.And(k < lhws[at], ep == _elog(s, k, at)[0],
                                                  s[("cmt_kind", k)] == _elog(s, k, at)[1])))
    return z3.And(out)


def observers_counted(c: Ctx, s: Sym) -> Any:
    """Every observer is a voter that lost its disk (KIP-853: a new directory id), so there are
    no more observers than disk losses."""
    return count([s[("observer", j)] for j in _nodes(c)]) <= s[("disk_losses",)]


LEMMAS: dict[str, Formula] = {
    "ids_in_range": ids_in_range,
    "well_formed": well_formed,
    "message_domains": message_domains,
    "history_domains": history_domains,
    "role_structure": role_structure,
    "vote_record": vote_record,
    "vote_tally": vote_tally,
    "rpc_state": rpc_state,
    "leader_knowledge": leader_knowledge,
    "elected_quorum": elected_quorum,
    "epoch_logs": epoch_logs,
    "log_origin": log_origin,
    "ack_record": ack_record,
    "vote_snapshot": vote_snapshot,
    "diverging_response": diverging_response,
    "acked_in_later_leaders": acked_in_later_leaders,
    "acked_votes": acked_votes,
    "acked_held": acked_held,
    "committed_quorum": committed_quorum,
    "observers_counted": observers_counted,
}

QUANTIFIED: tuple[str, ...] = ()  # lemmas with quantifiers, left out of the enabledness (sat) checks

_CORE = ("ids_in_range", "well_formed", "message_domains", "history_domains", "role_structure", "vote_record",
         "vote_tally", "rpc_state", "leader_knowledge", "elected_quorum", "epoch_logs", "log_origin")

_COMPLETENESS = ("ack_record", "vote_snapshot", "diverging_response", "acked_in_later_leaders", "acked_votes",
                 "acked_held", "committed_quorum")

# The lemmas each invariant's proof uses (spec/proofs.md). state_sanity (with follower_hw) and
# no_fatal_error (with follower_hw) are not inductive with these: asking gives a CTI.
SUPPORT: dict[str, tuple[str, ...]] = {
    "election_safety": _CORE,
    "log_matching": _CORE,
    "leader_completeness": _CORE + _COMPLETENESS,
    "state_sanity": _CORE,
    "committed_kept": _CORE + _COMPLETENESS + ("observers_counted",),
    "leader_hw_monotonic": _CORE + _COMPLETENESS,
    "no_fatal_error": _CORE + _COMPLETENESS,
}
