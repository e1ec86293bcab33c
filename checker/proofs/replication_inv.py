"""The replication model's safety invariants (model/replication/properties.py) as Z3 formulas,
and the lemmas that strengthen them into an inductive invariant (each a named formula over one
symbolic state; spec/proofs.md says in words what each one states and why it holds).

`INVARIANTS` are the model's `always` properties (same names, same meaning on every state the
abstraction covers). `LEMMAS` are the strengthening; `SUPPORT` names, per invariant, the lemmas
its induction proof uses. `ENCODING` bundles what the generic engines (induction, bmc,
conformance) need from this encoding.
"""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Callable

import z3

from checker.proofs import replication_next as N
from checker.proofs import replication_state as S
from checker.proofs.replication_next import Ctx, maximal_isr, member, nonempty, partition, waited_for
from checker.proofs.term import Sym, at_least, count
from model.replication.state import F_DIVERGING, F_NONE, F_OUT_OF_RANGE

F = z3.BoolVal(False)

Formula = Callable[[Ctx, Sym], Any]


def _brokers(c: Ctx) -> range:
    return range(c.n)


def _prefix_of_log(c: Ctx, s: Sym, i: int, length: Any, ep: Callable[[int], Any], vl: Callable[[int], Any]) -> Any:
    """The sequence (ep(k), vl(k)) for k < length is a prefix of broker i's log."""
    return z3.And(length <= s[("leo", i)],
                  *[z3.Implies(k < length, z3.And(s[("lep", i, k)] == ep(k), s[("lval", i, k)] == vl(k)))
                    for k in range(c.L)])


def _exposed_in(c: Ctx, s: Sym, i: int) -> Any:
    """properties._prefix(history.exposed, broker i's log)."""
    return _prefix_of_log(c, s, i, s[("elen",)], lambda k: s[("eep", k)], lambda k: s[("eval", k)])


def _holds_value(c: Ctx, s: Sym, i: int, v: int) -> Any:
    return z3.Or([z3.And(k < s[("leo", i)], s[("lval", i, k)] == v) for k in range(c.L)]) if c.L else z3.BoolVal(False)


def _log_kept(s: Sym, j: int) -> Any:
    """Broker j's log is as it was when j last ran: j is up, or down after a controlled shutdown,
    or no lossy crash has happened (an unclean crash that is not lossy keeps the log too)."""
    return z3.Or(s[("alive", j)], s[("clean", j)], s[("lossy",)] == 0)


def _current_leader(c: Ctx, s: Sym, i: int) -> Any:
    """properties.current_leader is broker i: the controller's leader, up, leading its epoch."""
    reg = partition(c, s)
    return z3.And(reg["leader"] == i, s[("alive", i)], s[("leader", i)] == i, s[("le", i)] == reg["le"])


# --- the model's invariants ------------------------------------------------------------------


def leader_completeness(c: Ctx, s: Sym) -> Any:
    out = []
    for i in _brokers(c):
        acked = [z3.Implies(s[("acked", v)], _holds_value(c, s, i, v)) for v in range(c.layout.V)]
        out.append(z3.Implies(_current_leader(c, s, i), z3.And(_exposed_in(c, s, i), *acked)))
    return z3.And(out)


def candidate_completeness(c: Ctx, s: Sym) -> Any:
    reg = partition(c, s)
    return z3.And([z3.Implies(z3.And(z3.Or(reg["isr"][i], reg["elr"][i]), s[("alive", i)]), _exposed_in(c, s, i))
                   for i in _brokers(c)])


def quorum_superset(c: Ctx, s: Sym) -> Any:
    reg = partition(c, s)
    out = []
    for i in _brokers(c):
        quorum = [z3.Or(x, y) for x, y in zip(maximal_isr(c, s, i), waited_for(c, s, i))]
        sup_isr = z3.And([z3.Implies(reg["isr"][j], quorum[j]) for j in _brokers(c)])
        sup_elr = z3.And([z3.Implies(reg["elr"][j], quorum[j]) for j in _brokers(c)])
        small = z3.Not(at_least([s[("isr", i, j)] for j in _brokers(c)], c.p.min_isr))
        out.append(z3.Implies(_current_leader(c, s, i), z3.And(sup_isr, z3.Or(small, sup_elr))))
    return z3.And(out)


def log_matching(c: Ctx, s: Sym) -> Any:
    out = []
    for a in _brokers(c):
        for b in range(a + 1, c.n):
            k = N.smin(s[("hw", a)], s[("hw", b)])
            la, lb = N.smin(k, s[("leo", a)]), N.smin(k, s[("leo", b)])
            same = [z3.Implies(x < la, z3.And(s[("lep", a, x)] == s[("lep", b, x)], s[("lval", a, x)] == s[("lval", b, x)]))
                    for x in range(c.L)]
            # a.log[:k] == b.log[:k] (k >= 0 here: a negative HW never occurs, hw_domains)
            out.append(z3.Or(k < 0, z3.And(la == lb, *same)))
    return z3.And(out)


def consistent_reads(c: Ctx, s: Sym) -> Any:
    out = []
    elen = s[("elen",)]
    for i in _brokers(c):
        r = N.smin(s[("hw", i)], s[("leo", i)])
        agree = lambda upto: z3.And([z3.Implies(k < upto, z3.And(s[("lep", i, k)] == s[("eep", k)],
                                                                 s[("lval", i, k)] == s[("eval", k)]))
                                     for k in range(c.L)])
        ok = z3.Or(z3.And(r <= elen, agree(r)), z3.And(elen <= r, agree(elen)))
        out.append(z3.Implies(z3.And(s[("alive", i)], s[("leader", i)] == i, s[("hw", i)] >= 0), ok))
    return z3.And(out)


def no_acked_record_lost(c: Ctx, s: Sym) -> Any:
    held = [z3.Implies(s[("acked", v)], z3.Or([_holds_value(c, s, i, v) for i in _brokers(c)]))
            for v in range(c.layout.V)]
    return z3.Or(s[("lossy",)] >= c.p.min_isr, z3.And(held))


def structural(c: Ctx, s: Sym) -> Any:
    """properties.structural on the latest record (ISR, ELR within the replicas and the records'
    consecutive partition epochs hold by construction of the encoding)."""
    reg = partition(c, s)
    isr, elr = reg["isr"], reg["elr"]
    out = [z3.Not(z3.And(isr[j], elr[j])) for j in _brokers(c)]
    out.append(z3.Implies(at_least(isr, c.p.min_isr), z3.Not(nonempty(elr))))
    if c.p.elr:
        out += [z3.Implies(isr[j], z3.Not(s[("fenced", j)])) for j in _brokers(c)]
    out.append(z3.Implies(reg["leader"] != -1, member(reg["leader"], isr)))
    if not c.p.elr:
        out.append(nonempty(isr))
    return z3.And(out)


INVARIANTS: dict[str, Formula] = {
    "leader_completeness": leader_completeness,
    "candidate_completeness": candidate_completeness,
    "quorum_superset": quorum_superset,
    "log_matching": log_matching,
    "consistent_reads": consistent_reads,
    "no_acked_record_lost": no_acked_record_lost,
    "structural": structural,
}

# the default of `kcheck prove --model replication`: the structural invariant and the lemma that
# the partition keeps a candidate leader while fewer brokers crashed than min ISR (with the
# lemmas both need), fast at every size; the other invariants are proved on request
# (`--invariant NAME`, on the `default` preset: minutes, spec/proofs.md)
DEFAULT_TARGETS = ("structural", "candidates_remain")

# --- the lemmas -------------------------------------------------------------------------------


def elr_small(c: Ctx, s: Sym) -> Any:
    """With min ISR 1 the latest record's ELR has at most one member. The ELR is only populated
    when the target ISR falls below min ISR, i.e. becomes empty: a broker leaving an ISR of one
    (fencing, controlled shutdown, unclean restart), and then ELR = old ELR ∪ old ISR minus it,
    where the old ELR was empty if the old ISR was not (structural); an AlterPartition always
    keeps its sender, the leader, in the ISR. Needed when a member is elected from the ELR:
    it becomes the ISR of one, and the rest of the ELR must then be empty."""
    if c.p.min_isr != 1:
        return z3.BoolVal(True)
    from checker.proofs.term import at_most

    return at_most(partition(c, s)["elr"], 1)


def well_formed(c: Ctx, s: Sym) -> Any:
    """Domains and bookkeeping every action keeps: logs hold at most the values produced
    (0 <= HW <= LEO <= next value <= values), entries carry a leader epoch in 0..max_leader_epoch
    and a produced value; the controller holds records c_start..c_latest within 0..max partition
    epoch, each with a leader in -1..n-1 and a leader epoch in 0..max_leader_epoch and at most
    its partition epoch, leader epochs not decreasing along the records, and a live broker's leader epoch at most that of
    every record it has still to replay; a broker's
    registration carries its own broker epoch (>= 1); a live broker has replayed at least the
    record before c_start (compact keeps every record a live broker still has to replay) and at
    most the latest, knows a leader in -1..n-1, a leader epoch at most the controller's and a
    partition epoch >= 0; a dead broker has forgotten all of it (-1); only a leader has leader-only
    state; no more brokers are down than crashes happened; the fault budgets and the ghost
    history are within the configuration."""
    n, L, V, p = c.n, c.L, c.layout.V, c.p
    out = [0 <= s[("next",)], s[("next",)] <= V, 0 <= s[("elen",)], s[("elen",)] <= s[("next",)]]
    latest, start = s[("c_latest",)], s[("c_start",)]
    out += [0 <= start, start <= latest, latest <= c.layout.P]
    reg = partition(c, s)
    for q in range(c.layout.P + 1):
        held = z3.And(start <= q, q <= latest)
        out.append(z3.Implies(held, z3.And(s[("c_leader", q)] >= -1, s[("c_leader", q)] < n, s[("c_le", q)] >= 0,
                                           s[("c_le", q)] <= p.max_leader_epoch, s[("c_le", q)] <= reg["le"],
                                           s[("c_le", q)] <= q)))
    for q in range(c.layout.P + 1):
        for q2 in range(q + 1, c.layout.P + 1):
            both = z3.And(start <= q, q2 <= latest)
            out.append(z3.Implies(both, s[("c_le", q)] <= s[("c_le", q2)]))
        for i in _brokers(c):
            later = z3.And(s[("alive", i)], s[("meta", i)] < q, start <= q, q <= latest)
            out.append(z3.Implies(later, s[("le", i)] <= s[("c_le", q)]))
    for k in range(L):
        out.append(z3.Implies(k < s[("elen",)], z3.And(s[("eep", k)] >= 0, s[("eep", k)] <= p.max_leader_epoch,
                                                       s[("eval", k)] >= 0, s[("eval", k)] < s[("next",)])))
    for i in _brokers(c):
        leo, hw = s[("leo", i)], s[("hw", i)]
        out += [0 <= hw, hw <= leo, leo <= s[("next",)], s[("bepoch", i)] >= 1, s[("rep", i)] == s[("bepoch", i)]]
        for k in range(L):
            out.append(z3.Implies(k < leo, z3.And(s[("lep", i, k)] >= 0, s[("lep", i, k)] <= p.max_leader_epoch,
                                                  s[("lval", i, k)] >= 0, s[("lval", i, k)] < s[("next",)])))
        alive = s[("alive", i)]
        out.append(z3.Implies(alive, z3.And(s[("meta", i)] >= start - 1, s[("meta", i)] <= latest,
                                            s[("leader", i)] >= -1, s[("leader", i)] < n,
                                            s[("le", i)] >= 0, s[("le", i)] <= reg["le"],
                                            s[("pe", i)] >= 0)))
        out.append(z3.Implies(z3.Not(alive), z3.And(s[("meta", i)] == -1, s[("leader", i)] == -1,
                                                    s[("le", i)] == -1, s[("pe", i)] == -1)))
        leads = z3.And(alive, s[("leader", i)] == i)
        out.append(z3.Implies(z3.Not(leads), z3.And(s[("leso", i)] == -1, *[z3.And(
            z3.Not(s[("isr", i, j)]), z3.Not(s[("pend", i, j)]), s[("fleo", i, j)] == -1, s[("fep", i, j)] == -1,
            z3.Not(s[("fcu", i, j)])) for j in _brokers(c)])))
        out.append(z3.Implies(leads, z3.And(s[("leso", i)] >= 0, s[("leso", i)] <= leo,
                                            *[z3.And(s[("fleo", i, j)] >= -1, s[("fleo", i, j)] <= s[("next",)],
                                                     s[("fep", i, j)] >= -1, s[("fep", i, j)] <= s[("rep", j)])
                                              for j in _brokers(c)])))
    out.append(count([z3.Not(s[("alive", i)]) for i in _brokers(c)]) <= s[("crashes",)])
    out += [0 <= s[("crashes",)], s[("crashes",)] <= p.crashes, 0 <= s[("lossy",)],
            s[("lossy",)] <= s[("crashes",)], s[("lossy",)] <= p.lossy_crashes,
            0 <= s[("fences",)], 0 <= s[("losses",)]]
    if p.fences >= 0:
        out.append(s[("fences",)] <= p.fences)
    if p.losses >= 0:
        out.append(s[("losses",)] <= p.losses)
    for v in range(V):
        out.append(z3.Implies(z3.Or(s[("hp", v)], s[("acked", v)]), v < s[("next",)]))
        out.append(z3.Not(z3.And(s[("hp", v)], s[("acked", v)])))
    return z3.And(out)


def partition_epoch_replayed(c: Ctx, s: Sym) -> Any:
    """A live broker's partition epoch is the last one it replayed (pe = meta). Replaying a record
    always applies it (records come in order, so none is older than the local partition epoch)
    and a restart takes the latest; an AlterPartition response is handled (timing assumption H1,
    `metadata_before_response`) only after its record was replayed, and applied only if not
    older than the local partition epoch, so it sets the same partition epoch."""
    return z3.And([z3.Implies(s[("alive", i)], s[("pe", i)] == s[("meta", i)]) for i in _brokers(c)])


def message_domains(c: Ctx, s: Sym) -> Any:
    """Every message in flight carries values of the states it was built from: broker ids in
    range (a Fetch between two different brokers), broker epochs >= 1 and at most the sender's
    registration, leader epochs in 0..the controller's, partition epochs within the held
    records, fetch offsets and record counts within the values produced, records of produced
    values, error codes of their enumerations; pending produces name a broker and an offset
    below the next value. Messages copy fields of the sender's state, which well_formed bounds."""
    n, L, p = c.n, c.L, c.p
    reg = partition(c, s)
    nxt, latest = s[("next",)], s[("c_latest",)]
    out = []

    def bid(x: Any) -> Any:
        return z3.And(x >= 0, x < n)

    for m in range(c.M):
        k = s[("mk", m)]
        a, b, be, le, off = s[("ma", m)], s[("mb", m)], s[("mbe", m)], s[("mle", m)], s[("moff", m)]
        out.append(z3.And(k >= 0, k <= 4))
        rep_a = N.bsel(c, s, "rep", a, z3.IntVal(0))
        # the broker a message is from or to has not gone back in leader epoch since
        out.append(z3.Implies(z3.And(k != S.EMPTY, N.bsel(c, s, "alive", a, z3.BoolVal(False))),
                              le <= N.bsel(c, s, "le", a, z3.IntVal(-1))))
        fetch = [bid(a), bid(b), a != b, le >= 0, le <= reg["le"], off >= 0, off <= nxt]
        out.append(z3.Implies(k == S.FREQ, z3.And(*fetch, be >= 1, be <= rep_a, s[("mlfe", m)] >= -1,
                                                  s[("mlfe", m)] <= p.max_leader_epoch)))
        rlen = s[("mrlen", m)]
        recs = [z3.Implies(x < rlen, z3.And(s[("mrep", m, x)] >= 0, s[("mrep", m, x)] <= p.max_leader_epoch,
                                            s[("mrval", m, x)] >= 0, s[("mrval", m, x)] < nxt)) for x in range(L)]
        out.append(z3.Implies(k == S.FRESP, z3.And(*fetch, s[("merr", m)] >= 0, s[("merr", m)] <= 5, rlen >= 0,
                                                   off + rlen <= nxt, s[("mhw", m)] >= -1, s[("mhw", m)] <= nxt,
                                                   z3.Implies(z3.Or(s[("merr", m)] == F_NONE, s[("merr", m)] == F_DIVERGING,
                                                                    s[("merr", m)] == F_OUT_OF_RANGE), s[("mhw", m)] >= 0),
                                                   s[("mde", m)] >= -1, s[("mdo", m)] >= -1, *recs)))
        ap = [bid(a), be >= 1, be <= rep_a, le >= 0, le <= reg["le"], off >= 0, off <= latest,
              z3.Implies(z3.And(N.bsel(c, s, "alive", a, z3.BoolVal(False)), be == rep_a),
                         off <= N.bsel(c, s, "meta", a, z3.IntVal(-1)))]
        ap += [z3.Implies(s[("mnis", m, j)], z3.And(s[("mnie", m, j)] >= -1, s[("mnie", m, j)] <= s[("rep", j)]))
               for j in _brokers(c)]
        out.append(z3.Implies(k == S.APREQ, z3.And(ap)))
        answer = z3.And(s[("mr_pe", m)] >= 0, s[("mr_pe", m)] <= latest, s[("mr_le", m)] >= 0,
                        s[("mr_le", m)] <= reg["le"], s[("mr_leader", m)] >= -1, s[("mr_leader", m)] < n)
        out.append(z3.Implies(k == S.APRESP, z3.And(*ap, s[("merr", m)] >= 0, s[("merr", m)] <= N.AP_NEW_LEADER,
                                                    s[("mhas", m)] == (s[("merr", m)] == N.AP_NONE),
                                                    z3.Implies(s[("mhas", m)], answer))))
    for v in range(c.layout.V):
        out.append(z3.Implies(s[("hp", v)], z3.And(bid(s[("hpl", v)]), s[("hple", v)] >= 0, s[("hpoff", v)] >= 0,
                                                   s[("hpoff", v)] < nxt)))
    return z3.And(out)


def _subset(a: list[Any], b: list[Any]) -> Any:
    return z3.And([z3.Implies(x, y) for x, y in zip(a, b)])


def _rec(c: Ctx, s: Sym, q: int) -> tuple[list[Any], list[Any]]:
    return [s[("c_isr", q, j)] for j in _brokers(c)], [s[("c_elr", q, j)] for j in _brokers(c)]


def _controller_leader(c: Ctx, s: Sym, b: int) -> Any:
    reg = partition(c, s)
    return z3.And(reg["leader"] == b, s[("alive", b)])


def records_structural(c: Ctx, s: Sym) -> Any:
    """Every held record has an empty ELR when its ISR has min ISR members, its leader (if
    any) in its ISR and then an empty LastKnownELR (each record was the latest when written, and
    `structural` held for it then; records never change; KIP-966 sets the LastKnownELR only when
    the ISR empties and clears it when a leader is elected). A live broker knows the leader and leader epoch of the last record it
    replayed, if still held (an AlterPartition answer changes neither); records of one leader
    epoch name one leader (the leader epoch rises exactly when the leader field is set), and a
    live broker in a held record's leader epoch knows that record's leader; an AlterPartition
    request or response of the sender's current incarnation and leader epoch is from a leader (a leader stays
    leader within its epoch), and one of an older incarnation of a live broker is of an older
    leader epoch, as is one of a fenced broker; held records of an AlterPartition's leader epoch
    name its sender as leader (fencing the leader moves the leader epoch on,
    and a restart needs the broker fenced). A broker acting as leader is in its own ISR (it took it from a
    record it leads or from an AlterPartition answer, which keeps the leader), and every
    AlterPartition request or response in flight proposes an ISR with its sender in it (the
    leader's ISR with one member added or removed, never itself)."""
    out = []
    for q in range(c.layout.P + 1):
        isr, elr = _rec(c, s, q)
        held = z3.And(s[("c_start",)] <= q, q <= s[("c_latest",)])
        out.append(z3.Implies(z3.And(held, at_least(isr, c.p.min_isr)), z3.Not(nonempty(elr))))
        lead = s[("c_leader", q)]
        out.append(z3.Implies(z3.And(held, lead != -1), member(lead, isr)))
        # maybeUpdateLastKnownLeader: set when the ISR empties, cleared when a leader is elected
        out.append(z3.Implies(z3.And(held, lead != -1), z3.Not(z3.Or([s[("c_lke", q, j)] for j in range(c.n + 1)]))))
    for b in _brokers(c):
        out.append(z3.Implies(z3.And(s[("alive", b)], s[("leader", b)] == b), s[("isr", b, b)]))
        for q in range(c.layout.P + 1):
            seen = z3.And(s[("alive", b)], s[("meta", b)] == q, s[("c_start",)] <= q)
            out.append(z3.Implies(seen, z3.And(s[("le", b)] == s[("c_le", q)], s[("leader", b)] == s[("c_leader", q)])))
        for q in range(c.layout.P + 1):
            held = z3.And(s[("c_start",)] <= q, q <= s[("c_latest",)])
            out.append(z3.Implies(z3.And(held, s[("alive", b)], s[("le", b)] == s[("c_le", q)]),
                                  s[("leader", b)] == s[("c_leader", q)]))
        # ...which two live brokers agree on even once the records they replayed are compacted
        for b2 in range(b + 1, c.n):
            both = z3.And(s[("alive", b)], s[("alive", b2)])
            out.append(z3.Implies(z3.And(both, s[("meta", b)] <= s[("meta", b2)]), s[("le", b)] <= s[("le", b2)]))
            out.append(z3.Implies(z3.And(both, s[("meta", b2)] <= s[("meta", b)]), s[("le", b2)] <= s[("le", b)]))
            out.append(z3.Implies(z3.And(both, s[("le", b)] == s[("le", b2)]), s[("leader", b)] == s[("leader", b2)]))
    for q in range(c.layout.P + 1):
        for q2 in range(q + 1, c.layout.P + 1):
            both = z3.And(s[("c_start",)] <= q, q2 <= s[("c_latest",)], s[("c_le", q)] == s[("c_le", q2)])
            out.append(z3.Implies(both, s[("c_leader", q)] == s[("c_leader", q2)]))
        if q < c.layout.P:
            # the leader epoch rises by one exactly when the leader field changes
            both = z3.And(s[("c_start",)] <= q, q + 1 <= s[("c_latest",)])
            moved = s[("c_leader", q + 1)] != s[("c_leader", q)]
            out.append(z3.Implies(both, s[("c_le", q + 1)] == s[("c_le", q)] + z3.If(moved, 1, 0)))
    for m in range(c.M):
        ids = [s[("mnis", m, j)] for j in _brokers(c)]
        a = s[("ma", m)]
        ap = z3.Or(s[("mk", m)] == S.APREQ, s[("mk", m)] == S.APRESP)
        out.append(z3.Implies(ap, member(a, ids)))
        same_epoch = z3.And(N.bsel(c, s, "alive", a, F), N.bsel(c, s, "le", a, z3.IntVal(-1)) == s[("mle", m)],
                            s[("mbe", m)] == N.bsel(c, s, "rep", a, z3.IntVal(0)))
        out.append(z3.Implies(z3.And(ap, same_epoch), N.bsel(c, s, "leader", a, z3.IntVal(-1)) == a))
        older = z3.And(N.bsel(c, s, "alive", a, F), s[("mbe", m)] != N.bsel(c, s, "rep", a, z3.IntVal(0)))
        out.append(z3.Implies(z3.And(ap, older), s[("mle", m)] < N.bsel(c, s, "le", a, z3.IntVal(-1))))
        for q in range(c.layout.P + 1):
            held = z3.And(s[("c_start",)] <= q, q <= s[("c_latest",)], s[("c_le", q)] == s[("mle", m)])
            out.append(z3.Implies(z3.And(ap, held), s[("c_leader", q)] == a))
        fenced = N.bsel(c, s, "fenced", a, F)
        out.append(z3.Implies(z3.And(ap, fenced), s[("mle", m)] < partition(c, s)["le"]))
    return z3.And(out)


def unreplayed_records_shrink(c: Ctx, s: Sym) -> Any:
    """For the controller's leader b (alive): every held record of the current leader epoch that b
    has not replayed yet has an ISR containing the latest ISR, and its ISR ∪ ELR contains the
    latest ELR. Within a leader epoch only the leader's own AlterPartition adds ISR members, and
    the controller accepts it only at the latest partition epoch, which the leader has replayed
    (the request carries the partition epoch the leader had replayed when it sent it); fencing, controlled shutdown and unclean restart only
    remove members, moving them from the ISR to the ELR at most."""
    out = []
    reg = partition(c, s)
    latest_isr, latest_elr = reg["isr"], reg["elr"]
    for b in _brokers(c):
        for q in range(c.layout.P + 1):
            isr, elr = _rec(c, s, q)
            cond = z3.And(_controller_leader(c, s, b), s[("meta", b)] < q, q <= s[("c_latest",)],
                          s[("c_start",)] <= q, s[("c_le", q)] == reg["le"])
            out.append(z3.Implies(cond, z3.And(_subset(latest_isr, isr),
                                               _subset(latest_elr, [z3.Or(x, y) for x, y in zip(isr, elr)]))))
    return z3.And(out)


def alter_partition_answers(c: Ctx, s: Sym) -> Any:
    """An AlterPartition response without error answers with a
    record of the request's leader epoch, led by the sender, whose ISR is the requested one (the
    record the request wrote, one partition epoch after the request's, or the current one, of the
    request's partition epoch, when the request changed nothing); that record
    is the one of its partition epoch while the controller holds it (records never change)."""
    out = []
    for m in range(c.M):
        a = s[("ma", m)]
        ids = [s[("mnis", m, j)] for j in _brokers(c)]
        risr = [s[("mr_isr", m, j)] for j in _brokers(c)]
        ok = z3.And(s[("mk", m)] == S.APRESP, s[("merr", m)] == N.AP_NONE)
        out.append(z3.Implies(ok, z3.And(s[("mr_le", m)] == s[("mle", m)], s[("mr_leader", m)] == a,
                                         N.same_set(risr, ids), member(a, ids),
                                         z3.Or(s[("mr_pe", m)] == s[("moff", m)], s[("mr_pe", m)] == s[("moff", m)] + 1))))
        relr = [s[("mr_elr", m, j)] for j in _brokers(c)]
        for q in range(c.layout.P + 1):
            held = z3.And(ok, s[("mr_pe", m)] == q, s[("c_start",)] <= q, q <= s[("c_latest",)])
            isr, elr = _rec(c, s, q)
            out.append(z3.Implies(held, z3.And(N.same_set(risr, isr), N.same_set(relr, elr),
                                               s[("mr_le", m)] == s[("c_le", q)],
                                               s[("mr_leader", m)] == s[("c_leader", q)])))
    return z3.And(out)


def alter_partition_response_current(c: Ctx, s: Sym) -> Any:
    """An AlterPartition response without error to the controller's leader (alive, in the current
    leader epoch), for the ISR it still has pending: the latest ISR is within that ISR, and so is
    the latest ELR if that ISR has min ISR members. The response carries the record the request
    wrote (or the current one, equal to the request); later records only remove members, moving
    them to the ELR at most; a new proposal needs the pending one cleared first."""
    reg = partition(c, s)
    out = []
    for m in range(c.M):
        ids = [s[("mnis", m, j)] for j in _brokers(c)]
        for l in _brokers(c):
            resp = z3.And(s[("mk", m)] == S.APRESP, s[("merr", m)] == N.AP_NONE, s[("ma", m)] == l,
                          s[("alive", l)], s[("leader", l)] == l, s[("le", l)] == s[("mle", m)])
            pend = [s[("pend", l, j)] for j in _brokers(c)]
            cond = z3.And(resp, _controller_leader(c, s, l), s[("le", l)] == reg["le"],
                          s[("mr_pe", m)] >= s[("meta", l)], N.same_set(pend, ids))
            out.append(z3.Implies(cond, z3.And(_subset(reg["isr"], ids),
                                               z3.Implies(at_least(ids, c.p.min_isr), _subset(reg["elr"], ids)))))
            # once the pending ISR is cleared (by replaying the record), an answer that could
            # still apply is the leader's ISR itself, so a new proposal (ISR +- 1) differs from it
            out.append(z3.Implies(z3.And(resp, z3.Not(nonempty(pend)), s[("mr_pe", m)] >= s[("meta", l)]),
                                  N.same_set([s[("isr", l, j)] for j in _brokers(c)], ids)))
    return z3.And(out)


def leader_isr_recorded(c: Ctx, s: Sym) -> Any:
    """A live broker acting as leader has the ISR of the record of its partition epoch: the one
    held by the controller, and the one any AlterPartition answer of that partition epoch
    carries; two answers of one partition epoch carry the same record. A leader takes its ISR
    and partition epoch together, from the record it replays or from an answer carrying a
    record; records never change, and an answer copies the controller's record."""
    out = []
    ok = lambda m: z3.And(s[("mk", m)] == S.APRESP, s[("merr", m)] == N.AP_NONE)
    risr = lambda m: [s[("mr_isr", m, j)] for j in _brokers(c)]
    relr = lambda m: [s[("mr_elr", m, j)] for j in _brokers(c)]
    for l in _brokers(c):
        leads = z3.And(s[("alive", l)], s[("leader", l)] == l)
        isr = [s[("isr", l, j)] for j in _brokers(c)]
        for q in range(c.layout.P + 1):
            held = z3.And(s[("c_start",)] <= q, q <= s[("c_latest",)], s[("pe", l)] == q)
            out.append(z3.Implies(z3.And(leads, held), N.same_set(isr, _rec(c, s, q)[0])))
        for m in range(c.M):
            out.append(z3.Implies(z3.And(leads, ok(m), s[("mr_pe", m)] == s[("pe", l)]), N.same_set(isr, risr(m))))
    for m in range(c.M):
        for m2 in range(m + 1, c.M):
            same = z3.And(ok(m), ok(m2), s[("mr_pe", m)] == s[("mr_pe", m2)])
            out.append(z3.Implies(same, z3.And(N.same_set(risr(m), risr(m2)), N.same_set(relr(m), relr(m2)),
                                               s[("mr_le", m)] == s[("mr_le", m2)],
                                               s[("mr_leader", m)] == s[("mr_leader", m2)])))
    return z3.And(out)


def ap_unique(c: Ctx, s: Sym) -> Any:
    """No two AlterPartition messages (requests or responses) in flight come from the same sender
    incarnation at the same leader and partition epochs. A leader sends a proposal only with
    nothing pending and keeps it pending until the answer to it arrives (which consumes the
    response) or it replays a record (which moves its partition epoch on); the controller
    consumes the request when it answers; a restart takes a new broker epoch."""
    out = []
    ap = lambda m: z3.Or(s[("mk", m)] == S.APREQ, s[("mk", m)] == S.APRESP)
    for m in range(c.M):
        for m2 in range(m + 1, c.M):
            same = z3.And(ap(m), ap(m2), s[("ma", m)] == s[("ma", m2)], s[("mbe", m)] == s[("mbe", m2)],
                          s[("mle", m)] == s[("mle", m2)], s[("moff", m)] == s[("moff", m2)])
            out.append(z3.Not(same))
    return z3.And(out)


def ap_in_flight_pending(c: Ctx, s: Sym) -> Any:
    """An AlterPartition request or response in flight from a live sender's current incarnation
    (broker epoch its registration's), at the leader and partition epochs the sender still has,
    is from a leader that has exactly that ISR pending. The leader sends it with its epochs and
    sets the proposal pending; the pending ISR is cleared only by the answer to this very
    request (it compares the whole proposal, partition epoch included, and consumes the
    response) or by replaying a record, which moves the leader's partition epoch past the
    request's; the controller turns the request into its response; a restart changes the
    broker epoch. So the controller accepts a request (latest partition and leader epochs,
    which the sender has: message_domains) only while its sender has it pending."""
    out = []
    for m in range(c.M):
        a = s[("ma", m)]
        ids = [s[("mnis", m, j)] for j in _brokers(c)]
        ap = z3.Or(s[("mk", m)] == S.APREQ, s[("mk", m)] == S.APRESP)
        for l in _brokers(c):
            cond = z3.And(ap, a == l, s[("alive", l)], s[("mbe", m)] == s[("rep", l)],
                          s[("le", l)] == s[("mle", m)], s[("pe", l)] == s[("moff", m)])
            out.append(z3.Implies(cond, z3.And(s[("leader", l)] == l,
                                               N.same_set([s[("pend", l, j)] for j in _brokers(c)], ids))))
    return z3.And(out)


def leader_records_shrink(c: Ctx, s: Sym) -> Any:
    """For a live broker acting as leader: every held record of its leader epoch after its
    partition epoch has an ISR within the leader's ISR ∪ pending ISR, and an ELR too while the
    leader's ISR has min ISR members. Those records come from fencing, controlled shutdown or
    unclean restart (which only remove members, into the ELR at most, and the ELR is empty at
    the leader's record when its ISR has min ISR members: records_structural) or from accepting
    the leader's own pending proposal (at the leader's partition epoch, the latest then: the
    request carries it, ap_in_flight_pending); a leader with nothing pending has no request the
    controller could accept. Records of one leader epoch led by a live broker, from one past its
    partition epoch on, only shrink: the controller accepts a proposal only at the partition
    epoch the leader had when it sent it, which is at most the one it has replayed. A pending
    proposal keeps the leader (its ISR plus or minus another member)."""
    out = []
    for l in _brokers(c):
        leads = z3.And(s[("alive", l)], s[("leader", l)] == l)
        cover = [z3.Or(s[("isr", l, j)], s[("pend", l, j)]) for j in _brokers(c)]
        big = at_least([s[("isr", l, j)] for j in _brokers(c)], c.p.min_isr)
        for q in range(c.layout.P + 1):
            later = z3.And(leads, s[("c_start",)] <= q, q <= s[("c_latest",)], q > s[("pe", l)],
                           s[("c_le", q)] == s[("le", l)])
            qisr, qelr = _rec(c, s, q)
            out.append(z3.Implies(later, z3.And(_subset(qisr, cover), z3.Implies(big, _subset(qelr, cover)))))
            for q2 in range(q + 1, c.layout.P + 1):
                both = z3.And(s[("alive", l)], s[("c_leader", q)] == l, s[("c_start",)] <= q,
                              q2 <= s[("c_latest",)], q > s[("pe", l)], s[("c_le", q2)] == s[("c_le", q)])
                isr2, elr2 = _rec(c, s, q2)
                out.append(z3.Implies(both, z3.And(_subset(isr2, qisr),
                                                   _subset(elr2, [z3.Or(x, y) for x, y in zip(qisr, qelr)]))))
        out.append(z3.Implies(z3.And(leads, nonempty([s[("pend", l, j)] for j in _brokers(c)])), s[("pend", l, l)]))
    return z3.And(out)


def pending_not_accepted(c: Ctx, s: Sym) -> Any:
    """While an AlterPartition request, or an answer with an error, is in flight from a live
    leader that still has it pending (ap_in_flight_pending), the controller has not accepted the
    proposal: every held record of the leader's epoch after the request's partition epoch has an
    ISR within the leader's ISR (and an ELR too while that ISR has min ISR members). Records
    after it come from fencing, controlled shutdown or unclean restart, which only remove
    members (into the ELR at most); the controller adds members only by accepting a request at
    its partition epoch, and this leader sends no other while this one is pending; accepting
    this one turns it into an answer without error."""
    out = []
    for m in range(c.M):
        a = s[("ma", m)]
        kind = z3.Or(s[("mk", m)] == S.APREQ, z3.And(s[("mk", m)] == S.APRESP, s[("merr", m)] != N.AP_NONE))
        for l in _brokers(c):
            cond = z3.And(kind, a == l, s[("alive", l)], s[("mbe", m)] == s[("rep", l)],
                          s[("le", l)] == s[("mle", m)], s[("pe", l)] == s[("moff", m)])
            isr = [s[("isr", l, j)] for j in _brokers(c)]
            big = at_least(isr, c.p.min_isr)
            for q in range(c.layout.P + 1):
                later = z3.And(s[("c_start",)] <= q, q <= s[("c_latest",)], q > s[("moff", m)],
                               s[("c_le", q)] == s[("mle", m)])
                qisr, qelr = _rec(c, s, q)
                out.append(z3.Implies(z3.And(cond, later), z3.And(_subset(qisr, isr),
                                                                  z3.Implies(big, _subset(qelr, isr)))))
    return z3.And(out)


def leader_isr_covers(c: Ctx, s: Sym) -> Any:
    """The current leader's ISR ∪ pending ISR contains the controller's ISR, and its ELR too while
    the leader's ISR has min ISR members. A leader takes its ISR from the record it replays or
    from an answer carrying a record no older (unreplayed_records_shrink,
    alter_partition_response_current: later records of its leader epoch only shrink the ISR,
    moving members into the ELR at most); the controller adds a member only on the leader's own
    AlterPartition, at the latest partition epoch, and then the leader has that ISR pending
    (ap_in_flight_pending) until it replays the record or takes the answer. The ELR is non-empty
    only while the controller's ISR is below min ISR; its members left an ISR the leader knew,
    or the leader's ISR is itself below min ISR."""
    reg = partition(c, s)
    out = []
    for l in _brokers(c):
        cover = [z3.Or(s[("isr", l, j)], s[("pend", l, j)]) for j in _brokers(c)]
        big = at_least([s[("isr", l, j)] for j in _brokers(c)], c.p.min_isr)
        out.append(z3.Implies(_current_leader(c, s, l), z3.And(_subset(reg["isr"], cover),
                                                               z3.Implies(big, _subset(reg["elr"], cover)))))
    return z3.And(out)


def no_zombie_leader(c: Ctx, s: Sym) -> Any:
    """(No fencing of live brokers, `fences = 0`.) A live broker acting as leader is the current
    leader: the controller's leader, in its leader epoch. The controller moves leadership away
    only from a fenced or shut-down leader (the leader epoch rises exactly when the leader field
    is set), and without fencings of live brokers that leader is down; a restart forgets
    leadership and replays the latest record. With fencings, a fenced leader that is still up is
    a KIP-320 zombie, and this is not stated."""
    if c.p.fences != 0:
        return z3.BoolVal(True)
    return z3.And([z3.Implies(z3.And(s[("alive", b)], s[("leader", b)] == b), _current_leader(c, s, b))
                   for b in _brokers(c)])


def unreplayed_leader_stays(c: Ctx, s: Sym) -> Any:
    """(No fencing of live brokers, `fences = 0`.) A held record that a live broker b has not
    replayed yet and that names b leader is of the current leader epoch: leadership moves away
    from b only once b is fenced or shut down, so down, and a restart replays the latest record.
    (no_zombie_leader for the records b will replay.)"""
    if c.p.fences != 0:
        return z3.BoolVal(True)
    reg = partition(c, s)
    out = []
    for b in _brokers(c):
        for q in range(c.layout.P + 1):
            cond = z3.And(s[("alive", b)], s[("meta", b)] < q, s[("c_start",)] <= q, q <= s[("c_latest",)],
                          s[("c_leader", q)] == b)
            out.append(z3.Implies(cond, z3.And(reg["leader"] == b, s[("c_le", q)] == reg["le"])))
    return z3.And(out)


def _holders(c: Ctx, s: Sym) -> list[list[tuple[Any, Any, Any, Any]]]:
    """The (valid, offset, leader epoch, value) entries of each log, each Fetch response without
    error, and the exposed prefix, in offset order."""
    out = [[(k < s[("leo", i)], z3.IntVal(k), s[("lep", i, k)], s[("lval", i, k)]) for k in range(c.L)]
           for i in _brokers(c)]
    for m in range(c.M):
        ok = z3.And(s[("mk", m)] == S.FRESP, s[("merr", m)] == F_NONE)
        out.append([(z3.And(ok, x < s[("mrlen", m)]), s[("moff", m)] + x, s[("mrep", m, x)], s[("mrval", m, x)])
                    for x in range(c.L)])
    out.append([(k < s[("elen",)], z3.IntVal(k), s[("eep", k)], s[("eval", k)]) for k in range(c.L)])
    return out


def _entries(c: Ctx, s: Sym) -> list[tuple[Any, Any, Any, Any]]:
    """Every entry held in a log, a Fetch response without error, or the exposed prefix."""
    return [e for h in _holders(c, s) for e in h]


def _entry_pairs(c: Ctx, s: Sym, rule: Callable[[Any, Any], Any]) -> Any:
    """`rule` for every pair of (valid, offset, leader epoch, value) entries of `_entries`."""
    es = _entries(c, s)
    return z3.And([rule(es[x], es[y]) for x in range(len(es)) for y in range(x + 1, len(es))])


def epochs_reached(c: Ctx, s: Sym) -> Any:
    """No entry held anywhere (logs, Fetch responses without error, the exposed prefix) and no
    last fetched epoch of a Fetch request is of a leader epoch the controller has not reached: a
    leader writes in its own epoch, which a record gave it, and the latest record's leader epoch
    never decreases; every other copy and every last fetched epoch is taken from an entry."""
    le = partition(c, s)["le"]
    out = [z3.Implies(ok, ep <= le) for ok, _, ep, _ in _entries(c, s)]
    out += [z3.Implies(s[("mk", m)] == S.FREQ, s[("mlfe", m)] <= le) for m in range(c.M)]
    return z3.And(out)


def value_identity(c: Ctx, s: Sym) -> Any:
    """Two entries with the same value, wherever they are held (logs, Fetch responses, the
    exposed prefix), sit at the same offset with the same leader epoch. A value is produced once
    (the producer's next value only grows), at the end of the leader's log in its leader epoch;
    every other copy of it is made at the same offset (a Fetch response carries the leader's
    records from the fetch offset, a follower appends them at its LEO = that offset, the exposed
    prefix is a prefix of a leader's log); truncation and crashes only drop entries."""
    return _entry_pairs(c, s, lambda x, y: z3.Implies(z3.And(x[0], y[0], x[3] == y[3]),
                                                       z3.And(x[1] == y[1], x[2] == y[2])))


def fetch_positions(c: Ctx, s: Sym) -> Any:
    """A Fetch request of a follower's current incarnation (up or shut down cleanly) to the
    controller's leader in the latest leader epoch (the only requests that leader records) asks
    from an offset within the follower's log; the current leader's recorded LEO of a follower up
    or shut down cleanly, of its current incarnation or a member of the controller's ISR ∪ ELR,
    is within its log too. The follower sends its LEO; in that epoch its log changes only by the
    answer to its one request (fetch_unique), which truncates no lower than a position the leader
    recorded (truncation_keeps_common_prefix); a controlled shutdown keeps the log, and a member
    of ISR ∪ ELR that restarted did so after a clean shutdown (an unclean one removes it:
    KAFKA-15586). Requests of an older epoch or incarnation may ask past the log: the follower
    may have truncated since (acceptable_fetch_agrees covers the ones a leader would record)."""
    reg = partition(c, s)
    out = []
    for m in range(c.M):
        for j in _brokers(c):
            to_current = z3.And(s[("mb", m)] == reg["leader"], s[("mle", m)] == reg["le"])
            cond = z3.And(s[("mk", m)] == S.FREQ, s[("ma", m)] == j, _log_kept(s, j),
                          s[("mbe", m)] == s[("bepoch", j)], to_current)
            out.append(z3.Implies(cond, s[("moff", m)] <= s[("leo", j)]))
    for b in _brokers(c):
        for j in _brokers(c):
            if j == b:
                continue
            cond = z3.And(_current_leader(c, s, b), _log_kept(s, j),
                          z3.Or(s[("fep", b, j)] == s[("bepoch", j)], reg["isr"][j], reg["elr"][j]))
            out.append(z3.Implies(cond, s[("fleo", b, j)] <= s[("leo", j)]))
    return z3.And(out)


def hw_exposed(c: Ctx, s: Sym) -> Any:
    """Every broker's HW prefix of its log is a prefix of the exposed log (so its HW is at most
    the exposed length), and a Fetch response without error or with a diverging epoch carries an
    HW at most the exposed length. A leader exposes its HW prefix whenever it moves its HW
    (leader_progress); a follower takes min(the leader's HW, its log length) after appending the
    leader's records at the offsets they have in the leader's log, and truncation lowers its HW
    with its log; the exposed log never shrinks."""
    out = []
    elen = s[("elen",)]
    for i in _brokers(c):
        hw = s[("hw", i)]
        out.append(hw <= elen)
        out += [z3.Implies(k < hw, z3.And(s[("lep", i, k)] == s[("eep", k)], s[("lval", i, k)] == s[("eval", k)]))
                for k in range(c.L)]
    for m in range(c.M):
        cond = z3.And(s[("mk", m)] == S.FRESP, z3.Or(s[("merr", m)] == F_NONE, s[("merr", m)] == F_DIVERGING))
        out.append(z3.Implies(cond, s[("mhw", m)] <= elen))
    return z3.And(out)


def crash_count(c: Ctx, s: Sym) -> Any:
    """The crash counter is exactly the number of restarts (broker epochs start at 1 and rise by
    one at each restart) plus the brokers down now: every crash or controlled shutdown takes a
    live broker down and counts one, and only a down broker restarts."""
    return s[("crashes",)] == z3.Sum([s[("bepoch", i)] - 1 for i in _brokers(c)]) + count(
        [z3.Not(s[("alive", i)]) for i in _brokers(c)])


def clean_candidates_complete(c: Ctx, s: Sym) -> Any:
    """A member of the controller's ISR ∪ ELR that is down after a controlled shutdown holds the
    exposed prefix (candidate_completeness for the members not up). It held it when it shut down
    (a member then, up), a controlled shutdown keeps the log, a down broker is fenced so it
    joins no ISR, and the exposed prefix grows only to HWs the leader computes over its maximal
    ISR, which contains the ELR while the HW can move (leader_isr_covers), with recorded
    positions within that member's log (fetch_positions)."""
    reg = partition(c, s)
    return z3.And([z3.Implies(z3.And(z3.Or(reg["isr"][i], reg["elr"][i]), s[("clean", i)]), _exposed_in(c, s, i))
                   for i in _brokers(c)])


def lossless_candidates_complete(c: Ctx, s: Sym) -> Any:
    """(While no lossy crash has happened.) Every member of the latest record's ISR, ELR or
    LastKnownELR, up or down, holds the exposed prefix: candidate_completeness for the members
    that are down, and for the last known leader KIP-966 elects when ISR and ELR are empty. Only a
    lossy crash drops entries a down broker held; a member that leaves the ISR and ELR for the
    LastKnownELR held the prefix then, and the prefix does not grow while the ISR is below min
    ISR, which the LastKnownELR needs to be non-empty."""
    reg = partition(c, s)
    return z3.Implies(s[("lossy",)] == 0, z3.And([
        z3.Implies(z3.Or(reg["isr"][i], reg["elr"][i], reg["lke"][i]), _exposed_in(c, s, i)) for i in _brokers(c)]))


def last_known_leader(c: Ctx, s: Sym) -> Any:
    """(ELR on) A leaderless held record has an empty ISR (its members are unfenced, so one would
    be elected) and a LastKnownELR of one broker. While the latest record
    is leaderless with LastKnownELR {j}, every live broker in the
    leader epoch before the latest knows j as its leader: the record that emptied the ISR moved
    leadership from j to none, raising the leader epoch by one, records of one leader epoch name
    one leader, and no later record changes the leader epoch without electing a leader, which
    clears the LastKnownELR (maybeUpdateLastKnownLeader)."""
    reg = partition(c, s)
    out = []
    if c.p.elr:
        # ...and a leaderless record has one: the leader the record that emptied the ISR removed
        for q in range(c.layout.P + 1):
            held = z3.And(s[("c_start",)] <= q, q <= s[("c_latest",)], s[("c_leader", q)] == -1)
            lke = [s[("c_lke", q, j)] for j in range(c.n + 1)]
            out.append(z3.Implies(held, z3.And(z3.Not(z3.Or([s[("c_isr", q, j)] for j in _brokers(c)])),
                                               z3.Not(lke[c.n]), *[z3.Implies(lke[j], z3.Not(lke[k]))
                                                                  for j in range(c.n) for k in range(j + 1, c.n)],
                                               z3.Or(lke[:c.n]))))
    for j in _brokers(c):
        for b in _brokers(c):
            cond = z3.And(reg["leader"] == -1, reg["lke"][j], s[("alive", b)], s[("le", b)] == reg["le"] - 1)
            out.append(z3.Implies(cond, s[("leader", b)] == j))
        for q in range(c.layout.P + 1):
            cond = z3.And(reg["leader"] == -1, reg["lke"][j], s[("c_start",)] <= q, q <= s[("c_latest",)],
                          s[("c_le", q)] == reg["le"] - 1)
            out.append(z3.Implies(cond, s[("c_leader", q)] == j))
    return z3.And(out)


def leader_positions(c: Ctx, s: Sym) -> Any:
    """A live leader's recorded LEO of each follower is within its own log: it records a fetch
    offset only when it is at most its LEO (else OFFSET_OUT_OF_RANGE, not recorded), starts its
    epoch with every position unknown (-1), and never truncates its own log while it leads."""
    return z3.And([z3.Implies(z3.And(s[("alive", b)], s[("leader", b)] == b), s[("fleo", b, j)] <= s[("leo", b)])
                   for b in _brokers(c) for j in _brokers(c)])


def _will_apply(c: Ctx, s: Sym, m: int, f: int) -> Any:
    """Slot m holds a Fetch response that live follower f will apply: it follows the response's
    leader in its epoch and its LEO is the fetch offset (handle_fetch_response's `moved_on` is false)."""
    return z3.And(s[("mk", m)] == S.FRESP, s[("ma", m)] == f, s[("alive", f)], s[("leader", f)] == s[("mb", m)],
                  s[("le", f)] == s[("mle", m)], s[("leo", f)] == s[("moff", m)])


def truncation_keeps_position(c: Ctx, s: Sym) -> Any:
    """A diverging or OFFSET_OUT_OF_RANGE Fetch response from the current leader, in its leader
    epoch, to a follower that will apply it (it follows that leader in that epoch and its LEO is
    the fetch offset) truncates it no lower than the position the leader recorded for it (as in
    fetch_positions) nor, for a member of the controller's ISR ∪ ELR, below the exposed prefix.
    The leader computes the answer from its log and the request, which carries the follower's
    log (unchanged since); the follower keeps the longest prefix its log shares with the
    leader's, which contains every position the leader recorded (each a prefix the two logs
    shared, and the leader's log only grows in its epoch) and the exposed prefix both hold."""
    reg = partition(c, s)
    out = []
    for m in range(c.M):
        for f in _brokers(c):
            for l in _brokers(c):
                if f == l:
                    continue
                err = s[("merr", m)]
                cond = z3.And(_will_apply(c, s, m, f), s[("mb", m)] == l,
                              _current_leader(c, s, l), s[("le", l)] == s[("mle", m)],
                              z3.Or(err == F_DIVERGING, err == F_OUT_OF_RANGE))
                off = N.response_truncation(c, s, m, f)
                known = z3.Or(s[("fep", l, f)] == s[("bepoch", f)], reg["isr"][f], reg["elr"][f])
                out.append(z3.Implies(z3.And(cond, known), s[("fleo", l, f)] <= off))
                out.append(z3.Implies(z3.And(cond, z3.Or(reg["isr"][f], reg["elr"][f])), s[("elen",)] <= off))
    return z3.And(out)


def fetch_response_origin(c: Ctx, s: Sym) -> Any:
    """A Fetch response without error, diverging or OFFSET_OUT_OF_RANGE was built by its leader
    while it led in the response's leader epoch (KIP-320: another epoch gets FENCED or UNKNOWN,
    a broker not leading gets NOT_LEADER): while that leader is up, its leader epoch is at least
    the response's, and if equal it still leads (a leader leads until its epoch ends; a restart
    needs a fencing, which ends its epoch). Every Fetch response goes to a live follower: the
    leader answers only the follower's current incarnation, and going down drops the responses
    to a broker. Held records of the response's leader epoch name its leader (records of one
    leader epoch name one leader). While the leader is still in that epoch, an
    OFFSET_OUT_OF_RANGE response carries an LEO between its epoch start offset and its LEO now,
    and a response without error carries records that are its log's at their offsets (it built
    them from its log, which only grows while it leads)."""
    out = []
    for m in range(c.M):
        err = s[("merr", m)]
        served = z3.And(s[("mk", m)] == S.FRESP, z3.Or(err == F_NONE, err == F_DIVERGING, err == F_OUT_OF_RANGE))
        for l in _brokers(c):
            cond = z3.And(served, s[("mb", m)] == l, s[("alive", l)])
            out.append(z3.Implies(cond, z3.And(s[("le", l)] >= s[("mle", m)],
                                               z3.Implies(s[("le", l)] == s[("mle", m)], s[("leader", l)] == l))))
        out.append(z3.Implies(s[("mk", m)] == S.FRESP, N.bsel(c, s, "alive", s[("ma", m)], F)))
        for l in _brokers(c):
            now = z3.And(s[("mk", m)] == S.FRESP, s[("mb", m)] == l, s[("alive", l)], s[("le", l)] == s[("mle", m)])
            out.append(z3.Implies(z3.And(now, err == F_OUT_OF_RANGE),
                                  z3.And(s[("leso", l)] <= s[("mhw", m)], s[("mhw", m)] <= s[("leo", l)])))
            rec = [z3.Implies(x < s[("mrlen", m)], z3.And(*[z3.Implies(s[("moff", m)] + x == k, z3.And(
                s[("mrep", m, x)] == s[("lep", l, k)], s[("mrval", m, x)] == s[("lval", l, k)])) for k in range(c.L)]))
                for x in range(c.L)]
            out.append(z3.Implies(z3.And(now, err == F_NONE),
                                  z3.And(s[("moff", m)] >= 0, s[("moff", m)] + s[("mrlen", m)] <= s[("leo", l)], *rec)))
        for q in range(c.layout.P + 1):
            held = z3.And(served, s[("c_start",)] <= q, q <= s[("c_latest",)], s[("c_le", q)] == s[("mle", m)])
            out.append(z3.Implies(held, s[("c_leader", q)] == s[("mb", m)]))
    return z3.And(out)


def fetch_request_current(c: Ctx, s: Sym) -> Any:
    """A Fetch request from a live follower's current incarnation, in its current leader epoch,
    to the leader it follows, describes its log now: the fetch offset is its LEO and the last
    fetched epoch that of its last entry (-1 if empty; always -1 without KIP-101). The follower
    sends it from its log and has no other request or response of that epoch in flight, so
    nothing changes its log meanwhile (responses of other epochs are discarded; it does not
    produce while it follows)."""
    out = []
    for m in range(c.M):
        for j in _brokers(c):
            cond = z3.And(s[("mk", m)] == S.FREQ, s[("ma", m)] == j, s[("alive", j)],
                          s[("mbe", m)] == s[("bepoch", j)], s[("mle", m)] == s[("le", j)],
                          s[("mb", m)] == s[("leader", j)])
            out.append(z3.Implies(cond, z3.And(s[("moff", m)] == s[("leo", j)],
                                               s[("mlfe", m)] == N.last_fetched_epoch(c, s, j))))
    return z3.And(out)


def fetch_unique(c: Ctx, s: Sym) -> Any:
    """A follower has at most one Fetch message of its current incarnation and a given leader
    epoch in flight (a request of that broker epoch, or a response: responses only go to the
    current incarnation). The fetcher sends a Fetch only when it has none of that epoch in
    flight; the leader turns the request into one response; the follower consumes the response
    before sending the next."""
    out = []
    mine = lambda m: z3.Or(s[("mk", m)] == S.FRESP,
                           z3.And(s[("mk", m)] == S.FREQ,
                                  s[("mbe", m)] == N.bsel(c, s, "bepoch", s[("ma", m)], z3.IntVal(-1))))
    for m in range(c.M):
        for m2 in range(m + 1, c.M):
            out.append(z3.Not(z3.And(mine(m), mine(m2), s[("ma", m)] == s[("ma", m2)],
                                     s[("mle", m)] == s[("mle", m2)])))
    return z3.And(out)


def leader_log_epochs(c: Ctx, s: Sym) -> Any:
    """A live leader's log holds entries of its own leader epoch exactly from its leader epoch
    start offset on, and older epochs below it. Partition.makeLeader sets the start offset to the
    LEO when a new leader epoch begins, when every entry was written by an earlier epoch's
    leader (records of one leader epoch name one leader, and a leader leaves its epoch for good);
    while it leads it only appends entries of its epoch and never truncates. Every entry of a
    live broker's log, and of a Fetch response, is of a leader epoch at most the broker's (the
    response's): entries are written by the leader in its epoch and copied from a leader in the
    follower's epoch; a restart takes the latest leader epoch; so no entry is of a leader epoch
    past the controller's."""
    out = []
    for b in _brokers(c):
        leads = z3.And(s[("alive", b)], s[("leader", b)] == b)
        for k in range(c.L):
            has = z3.And(leads, k < s[("leo", b)])
            out.append(z3.Implies(has, z3.If(k >= s[("leso", b)], s[("lep", b, k)] == s[("le", b)],
                                             s[("lep", b, k)] < s[("le", b)])))
            out.append(z3.Implies(z3.And(s[("alive", b)], k < s[("leo", b)]), s[("lep", b, k)] <= s[("le", b)]))
            out.append(z3.Implies(k < s[("leo", b)], s[("lep", b, k)] <= partition(c, s)["le"]))
    for m in range(c.M):
        ok = z3.And(s[("mk", m)] == S.FRESP, s[("merr", m)] == F_NONE)
        out += [z3.Implies(z3.And(ok, x < s[("mrlen", m)]), s[("mrep", m, x)] <= s[("mle", m)]) for x in range(c.L)]
    return z3.And(out)


def epoch_entries_at_leader(c: Ctx, s: Sym) -> Any:
    """While a live broker leads its leader epoch, every entry of that epoch, wherever it is held
    (logs, Fetch responses, the exposed prefix), is in the leader's own log at the same offset
    with the same value. Only the leader of an epoch writes entries of it (at the end of its log);
    every copy is made at the same offset; the leader does not truncate while it leads."""
    out = []
    for l in _brokers(c):
        leads = z3.And(s[("alive", l)], s[("leader", l)] == l)
        for ok, off, ep, val_ in _entries(c, s):
            at = [z3.And(off == k, k < s[("leo", l)], s[("lep", l, k)] == ep, s[("lval", l, k)] == val_)
                  for k in range(c.L)]
            out.append(z3.Implies(z3.And(leads, ok, ep == s[("le", l)]), z3.Or(at) if at else F))
    return z3.And(out)


def epoch_unwritten(c: Ctx, s: Sym) -> Any:
    """No entry of a leader epoch exists before its leader has begun to lead it: while a record
    names broker b leader of epoch e and b, up, has not replayed it and is in an earlier epoch,
    no log, Fetch response or exposed prefix holds an entry of epoch e. A broker replays records
    in order and only a leader writes entries of its epoch; a restart replays the latest record,
    and fencing a leader (which a crash needs before the restart) moves leadership to a new epoch."""
    out = []
    entries = _entries(c, s)
    for q in range(c.layout.P + 1):
        for b in _brokers(c):
            cond = z3.And(s[("c_start",)] <= q, q <= s[("c_latest",)], s[("c_leader", q)] == b, s[("alive", b)],
                          s[("meta", b)] < q, s[("le", b)] < s[("c_le", q)])
            out.append(z3.Implies(cond, z3.And([z3.Not(z3.And(ok, ep == s[("c_le", q)])) for ok, _, ep, _ in entries])))
            # nor does a Fetch request name it as its last fetched epoch (its sender held one)
            out += [z3.Implies(cond, z3.Not(z3.And(s[("mk", m)] == S.FREQ, s[("moff", m)] > 0,
                                                    s[("mlfe", m)] == s[("c_le", q)]))) for m in range(c.M)]
    for m in range(c.M):
        for l in _brokers(c):
            # a request naming the epoch of the leader it asks as last fetched epoch was sent after
            # its sender copied entries of that epoch from that leader, whose log only grows
            at = z3.And(s[("mk", m)] == S.FREQ, s[("mb", m)] == l, s[("alive", l)], s[("leader", l)] == l,
                        s[("le", l)] == s[("mle", m)], s[("mlfe", m)] == s[("mle", m)])
            out.append(z3.Implies(at, s[("moff", m)] <= s[("leo", l)]))
    return z3.And(out)


def out_of_range_past_leader(c: Ctx, s: Sym) -> Any:
    """An OFFSET_OUT_OF_RANGE response from leader l in epoch e, to a follower that will apply it
    (it follows l in e and its LEO is the fetch offset), finds the follower's entries past the LEO
    l had when it answered all of epochs before e. The follower's log is unchanged since its
    request; entries of e sit in l's log (epoch_entries_at_leader), which was shorter; none is
    of an epoch past the follower's (leader_log_epochs)."""
    out = []
    for m in range(c.M):
        for f in _brokers(c):
            cond = z3.And(_will_apply(c, s, m, f), s[("merr", m)] == F_OUT_OF_RANGE)
            out += [z3.Implies(z3.And(cond, s[("mhw", m)] <= k, k < s[("leo", f)]), s[("lep", f, k)] < s[("mle", m)])
                    for k in range(c.L)]
    return z3.And(out)


def _agree(c: Ctx, s: Sym, a: int, b: int, p: Any) -> Any:
    """Brokers a's and b's logs both hold p entries and agree on them."""
    return z3.And(p <= s[("leo", a)], p <= s[("leo", b)],
                  *[z3.Implies(k < p, z3.And(s[("lep", a, k)] == s[("lep", b, k)], s[("lval", a, k)] == s[("lval", b, k)]))
                    for k in range(c.L)])


def positions_agree(c: Ctx, s: Sym) -> Any:
    """The current leader's recorded LEO of a follower it knows (as in fetch_positions) is a
    prefix both logs share: the leader records a fetch offset only when the request passed the
    KIP-101 check (the follower's last fetched epoch ends at or past the offset in the leader's
    log), so the two logs agree below it; the leader only appends, the follower only truncates
    to a common prefix (truncation_keeps_common_prefix)."""
    reg = partition(c, s)
    out = []
    for b in _brokers(c):
        for j in _brokers(c):
            if j != b:
                cond = z3.And(_current_leader(c, s, b), _log_kept(s, j),
                              z3.Or(s[("fep", b, j)] == s[("bepoch", j)], reg["isr"][j], reg["elr"][j]))
                out.append(z3.Implies(cond, _agree(c, s, b, j, s[("fleo", b, j)])))
    return z3.And(out)


def truncation_keeps_common_prefix(c: Ctx, s: Sym) -> Any:
    """A diverging or OFFSET_OUT_OF_RANGE response from leader l, still leading its epoch, to a
    follower that will apply it truncates the follower no lower than any prefix its log shares
    with l's (KIP-101: the follower keeps the longest common prefix). The follower's log is
    unchanged since its request; entries l appends later are of its epoch, which the follower's
    log holds only where l's does (epoch_entries_at_leader), so no common prefix grows. The same
    holds while l is down after leading that epoch, not yet fenced (the controller still names
    it): its log is as it was, or (a lossy crash) a prefix of it, which shares no longer prefix."""
    reg = partition(c, s)
    out = []
    for m in range(c.M):
        for f in _brokers(c):
            for l in _brokers(c):
                if f == l:
                    continue
                err = s[("merr", m)]
                cond = z3.And(_will_apply(c, s, m, f), s[("mb", m)] == l,
                              z3.Or(z3.And(s[("alive", l)], s[("leader", l)] == l, s[("le", l)] == s[("mle", m)]),
                                    z3.And(z3.Not(s[("alive", l)]), reg["leader"] == l, reg["le"] == s[("mle", m)])),
                              z3.Or(err == F_DIVERGING, err == F_OUT_OF_RANGE))
                off = N.response_truncation(c, s, m, f)
                out += [z3.Implies(z3.And(cond, _agree(c, s, f, l, z3.IntVal(p))), p <= off) for p in range(1, c.L + 1)]
    return z3.And(out)


def epoch_log_matching(c: Ctx, s: Sym) -> Any:
    """Two logs with an entry of the same leader epoch at the same offset agree on every entry up
    to it (Raft's log matching, by leader epoch): the epoch's leader writes each offset once, in
    order, after the prefix it holds; a follower appends a leader's records only at its LEO after
    a KIP-101 check that its last entry is the leader's; truncation and lossy crashes keep a
    prefix."""
    out = []
    for a in _brokers(c):
        for b in range(a + 1, c.n):
            for k in range(c.L):
                same = z3.And(k < s[("leo", a)], k < s[("leo", b)], s[("lep", a, k)] == s[("lep", b, k)])
                out.append(z3.Implies(same, _agree(c, s, a, b, z3.IntVal(k + 1))))
    return z3.And(out)


def acceptable_fetch_agrees(c: Ctx, s: Sym) -> Any:
    """A Fetch request the leader it names would accept now (it leads the request's epoch, the
    KIP-101 check finds no divergence, the offset is within its log, and the request is not from
    an older incarnation of an unfenced broker), from a follower that is
    up or shut down cleanly, sent by its current incarnation or while it is a member of ISR ∪
    ELR, asks from a prefix the two logs share: so whatever position a leader records is one."""
    reg = partition(c, s)
    out = []
    for m in range(c.M):
        for j in _brokers(c):
            for l in _brokers(c):
                if j == l:
                    continue
                none, _, _, _, _ = N.fetch_divergence(c, s, l, s[("moff", m)], s[("mlfe", m)])
                cond = z3.And(s[("mk", m)] == S.FREQ, s[("ma", m)] == j, s[("mb", m)] == l,
                              _log_kept(s, j),
                              z3.Or(s[("mbe", m)] == s[("bepoch", j)], reg["isr"][j], reg["elr"][j]),
                              _current_leader(c, s, l), s[("le", l)] == s[("mle", m)],
                              none, s[("moff", m)] <= s[("leo", l)])
                if c.r.stale_fetch_check:  # KAFKA-15221: refused from an older incarnation of an unfenced broker
                    cond = z3.And(cond, z3.Not(z3.And(z3.Not(s[("fenced", j)]), s[("rep", j)] > s[("mbe", m)])))
                out.append(z3.Implies(cond, _agree(c, s, j, l, s[("moff", m)])))
    return z3.And(out)


def recorded_follower_epoch(c: Ctx, s: Sym) -> Any:
    """A live follower whose position a live leader has recorded is in the leader's epoch or a
    later one: a leader starts each epoch with every position unknown (-1) and records only
    requests of its epoch; a follower's leader epoch only grows within an incarnation, and a
    restart (after the request) takes the latest leader epoch."""
    return z3.And([z3.Implies(z3.And(s[("alive", l)], s[("leader", l)] == l, s[("alive", j)],
                                     s[("fleo", l, j)] >= 0),
                              s[("le", j)] >= s[("le", l)])
                   for l in _brokers(c) for j in _brokers(c) if j != l])


def fetch_request_shape(c: Ctx, s: Sym) -> Any:
    """Every Fetch request asks from an offset at least 0 and names a last fetched epoch of -1
    exactly when it asks from offset 0 (always -1 without KIP-101), at most its leader epoch: a
    follower sends its LEO and the epoch of its last entry, which is at most its own leader
    epoch (leader_log_epochs)."""
    out = []
    for m in range(c.M):
        req = s[("mk", m)] == S.FREQ
        lfe, off = s[("mlfe", m)], s[("moff", m)]
        shape = z3.And((off == 0) == (lfe == -1), lfe <= s[("mle", m)]) if c.r.truncate_by_epoch else lfe == -1
        out.append(z3.Implies(req, z3.And(off >= 0, shape)))
    return z3.And(out)


def unled_epoch_requests_current(c: Ctx, s: Sym) -> Any:
    """Before the broker the controller named leader of the latest leader epoch has begun to lead
    it, a Fetch request of that epoch, from a follower up or shut down cleanly, of its current
    incarnation or a member of ISR ∪ ELR, still describes the follower's log (its LEO and last
    entry's epoch): only a response of that epoch, built by its leader while leading it, changes
    a follower's log in that epoch; a clean shutdown and the restart keep the log."""
    reg = partition(c, s)
    out = []
    for m in range(c.M):
        for j in _brokers(c):
            unled = z3.And([z3.Implies(s[("mb", m)] == l, z3.Not(z3.And(s[("alive", l)], s[("leader", l)] == l,
                                                                          s[("le", l)] == s[("mle", m)])))
                            for l in _brokers(c)])
            cond = z3.And(s[("mk", m)] == S.FREQ, s[("ma", m)] == j, s[("mle", m)] == reg["le"],
                          s[("mb", m)] == reg["leader"], _log_kept(s, j),
                          z3.Or(s[("mbe", m)] == s[("bepoch", j)], reg["isr"][j], reg["elr"][j]), unled)
            out.append(z3.Implies(cond, z3.And(s[("moff", m)] == s[("leo", j)],
                                               s[("mlfe", m)] == N.last_fetched_epoch(c, s, j))))
    return z3.And(out)


def alive_not_clean(c: Ctx, s: Sym) -> Any:
    """A live broker has no clean-shutdown marker, and a broker down with one is fenced: only a
    controlled shutdown writes it, fencing the broker as it goes down; only a restart removes it,
    and the broker stays fenced until then."""
    return z3.And([z3.And(z3.Implies(s[("alive", i)], z3.Not(s[("clean", i)])),
                          z3.Implies(s[("clean", i)], s[("fenced", i)])) for i in _brokers(c)])


def diverging_below_epoch(c: Ctx, s: Sym) -> Any:
    """A diverging Fetch response names an epoch (>= 0: a leader without any epoch up to the
    request's answers OFFSET_OUT_OF_RANGE instead) below its own leader epoch, ending at an offset
    of at least 0: a follower's entries of the leader's own epoch are in the leader's log
    (epoch_entries_at_leader), so a request whose last fetched epoch is the leader's ends within
    the leader's log and does not diverge."""
    return z3.And([z3.Implies(z3.And(s[("mk", m)] == S.FRESP, s[("merr", m)] == F_DIVERGING),
                              z3.And(0 <= s[("mde", m)], s[("mde", m)] < s[("mle", m)], s[("mdo", m)] >= 0))
                   for m in range(c.M)])


def truncation_keeps_exposed(c: Ctx, s: Sym) -> Any:
    """A diverging or OFFSET_OUT_OF_RANGE response does not truncate a follower that will apply it
    below the exposed prefix, if its log holds that prefix: the leader answered while it led the
    latest epoch (no zombie with fences = 0), holding the exposed prefix then, and the follower
    keeps the longest prefix its log shares with the leader's; what is exposed later is exposed
    by that leader (from its own log, which the follower's unchanged log shares no further) or by
    a later leader whose HW waits for the follower's position in the later epoch. Stated for
    responses of the latest leader epoch and for members of the controller's ISR ∪ ELR: with
    three leader epochs a leader of the latest may expose entries while a response of an earlier
    epoch truncates a follower outside ISR ∪ ELR below them (no candidate, so harmless)."""
    reg = partition(c, s)
    out = []
    for m in range(c.M):
        for f in _brokers(c):
            err = s[("merr", m)]
            cond = z3.And(_will_apply(c, s, m, f), z3.Or(err == F_DIVERGING, err == F_OUT_OF_RANGE),
                          _exposed_in(c, s, f), z3.Or(s[("mle", m)] == reg["le"], reg["isr"][f], reg["elr"][f]))
            out.append(z3.Implies(cond, s[("elen",)] <= N.response_truncation(c, s, m, f)))
    return z3.And(out)


def recorded_epochs(c: Ctx, s: Sym) -> Any:
    """A live leader has recorded a follower's position exactly when it holds a broker epoch for
    it, at least 1 and at most the follower's current one: it starts its epoch with (-1, -1) and
    records (fetch offset >= 0, the request's broker epoch), which a follower's incarnation sends."""
    out = []
    for l in _brokers(c):
        for j in _brokers(c):
            fl, fe = s[("fleo", l, j)], s[("fep", l, j)]
            out.append(z3.Implies(z3.And(s[("alive", l)], s[("leader", l)] == l),
                                  z3.And(fl >= -1, (fl >= 0) == (fe >= 1), fe <= s[("bepoch", j)],
                                         z3.Implies(fl < 0, fe == -1))))
    for m in range(c.M):
        out.append(z3.Implies(s[("mk", m)] == S.FREQ,
                              z3.And(s[("mbe", m)] >= 1, s[("mbe", m)] <= N.bsel(c, s, "bepoch", s[("ma", m)], z3.IntVal(-1)))))
    return z3.And(out)


def _acceptable_ap(c: Ctx, s: Sym, m: int, l: int) -> Any:
    """Slot m holds an AlterPartition request from the current leader l's incarnation, at its
    leader epoch and partition epoch, which is the latest: one the controller may accept."""
    return z3.And(s[("mk", m)] == S.APREQ, s[("ma", m)] == l, _current_leader(c, s, l),
                  s[("mbe", m)] == s[("bepoch", l)], s[("le", l)] == s[("mle", m)],
                  s[("pe", l)] == s[("moff", m)], s[("moff", m)] == s[("c_latest",)])


def ap_member_positions(c: Ctx, s: Sym) -> Any:
    """An AlterPartition request in flight from the current leader, for the ISR it still has
    pending, at the latest partition epoch, names for each proposed member other than itself a
    broker epoch which, if it is the member's current one and the member is not fenced (so the
    controller may accept it), comes with a recorded position within the member's log (member
    up or shut down cleanly). The leader proposes a member with
    the broker epoch it recorded with its position; a position recorded later for the same
    incarnation is within its log (fetch_positions), one of an older incarnation is a prefix
    the logs share (acceptable_fetch_agrees)."""
    out = []
    for m in range(c.M):
        for l in _brokers(c):
            cond = _acceptable_ap(c, s, m, l)
            for j in _brokers(c):
                if j == l:
                    continue
                named = z3.And(s[("mnis", m, j)], s[("mnie", m, j)] == s[("bepoch", j)], z3.Not(s[("fenced", j)]),
                               _log_kept(s, j))
                out.append(z3.Implies(z3.And(cond, named), s[("fleo", l, j)] <= s[("leo", j)]))
    return z3.And(out)


def ap_named_unfenced(c: Ctx, s: Sym) -> Any:
    """(No fencing of live brokers, `fences = 0`.) A live broker that an AlterPartition request the
    controller may accept adds to the leader's ISR, naming its current broker epoch, is not
    fenced: the leader names a member it adds
    only while the member is ISR-eligible (unfenced, that registration); a live broker is fenced
    again only by going down (a crash or a controlled shutdown), and its restart takes a new
    broker epoch. So the leader refuses the member's stale Fetch requests of older incarnations
    (KAFKA-15221) and what it recorded for it stays of this incarnation.

    With fencings of live brokers (`fences > 0`) it is stated while a Fetch request of an older
    incarnation of the member is in flight: timing assumption H2 lets the controller fence a live
    broker only when no such Fetch waits, and a new one is never sent (a restart changes the broker
    epoch the request names)."""
    if c.p.fences < 0:
        return z3.BoolVal(True)
    out = []
    for m in range(c.M):
        for l in _brokers(c):
            for j in _brokers(c):
                if j != l:
                    named = z3.And(_acceptable_ap(c, s, m, l), s[("mnis", m, j)], z3.Not(s[("isr", l, j)]),
                                   s[("mnie", m, j)] == s[("bepoch", j)], s[("alive", j)])
                    if c.p.fences > 0:
                        named = z3.And(named, _stale_fetch_in_flight(c, s, j))
                    out.append(z3.Implies(named, z3.Not(s[("fenced", j)])))
    return z3.And(out)


def _stale_fetch_in_flight(c: Ctx, s: Sym, j: int) -> Any:
    """A Fetch request of an older incarnation of broker j is in flight."""
    return z3.Or([z3.And(s[("mk", m)] == S.FREQ, s[("ma", m)] == j, s[("mbe", m)] < s[("bepoch", j)])
                  for m in range(c.M)])


def ap_added_named(c: Ctx, s: Sym) -> Any:
    """An AlterPartition request the controller may accept names its sender with the sender's
    broker epoch and every member it adds to the sender's ISR with a broker epoch >= 1: the leader
    adds a follower only after recording a position for it, with the fetching incarnation's
    broker epoch, and names members with the broker epochs it recorded (so the controller's
    KIP-903 check applies to every added member); it keeps a recorded position (>= 0) for them
    while it leads."""
    out = []
    for m in range(c.M):
        for l in _brokers(c):
            acc = _acceptable_ap(c, s, m, l)
            out.append(z3.Implies(acc, s[("mnie", m, l)] == s[("bepoch", l)]))
            for j in _brokers(c):
                if j != l:
                    out.append(z3.Implies(z3.And(acc, s[("mnis", m, j)], z3.Not(s[("isr", l, j)])),
                                          z3.And(s[("mnie", m, j)] >= 1, s[("fleo", l, j)] >= 0)))
    return z3.And(out)


def exposed_within_epoch(c: Ctx, s: Sym) -> Any:
    """The exposed prefix reaches past the current leader's epoch start offset only as far as its
    HW: when it begins to lead it holds the exposed prefix (a candidate), so the exposed length is
    at most its LEO, the start offset (Partition.makeLeader); afterwards only the current leader
    moves the exposed prefix, to its HW (no zombie leader with `fences = 0`)."""
    return z3.And([z3.Implies(_current_leader(c, s, l), z3.Or(s[("elen",)] <= s[("leso", l)],
                                                              s[("elen",)] <= s[("hw", l)]))
                   for l in _brokers(c)])


def ap_added_caught_up(c: Ctx, s: Sym) -> Any:
    """A member an AlterPartition request the controller may accept adds to the leader's ISR,
    named with its current broker epoch, has a recorded position of that incarnation, at least
    the leader's HW and (KIP-101's ISR rule) its epoch start offset:
    the leader proposes it only then (Partition.isFollowerInSync); the HW then counts it as a
    member of the maximal ISR, and its position only grows (the leader refuses the stale Fetch
    requests of its older incarnations, as it is not fenced: ap_named_unfenced)."""
    out = []
    for m in range(c.M):
        for l in _brokers(c):
            acc = _acceptable_ap(c, s, m, l)
            for j in _brokers(c):
                if j != l:
                    fl = s[("fleo", l, j)]
                    need = z3.And(fl >= s[("hw", l)], fl >= s[("leso", l)]) if c.r.check_leso else fl >= s[("hw", l)]
                    added = z3.And(acc, s[("mnis", m, j)], z3.Not(s[("isr", l, j)]),
                                   s[("mnie", m, j)] == s[("bepoch", j)])
                    out.append(z3.Implies(added, z3.And(need, s[("fep", l, j)] == s[("bepoch", j)])))
    return z3.And(out)


def fetch_offsets_monotone(c: Ctx, s: Sym) -> Any:
    """A Fetch request of a follower's incarnation to a live leader in its epoch asks from no lower
    than the position the leader recorded for that incarnation: the follower sends its LEO, which
    within an incarnation only grows except by truncation that keeps the recorded position
    (truncation_keeps_common_prefix), and it has one Fetch of an epoch in flight at a time."""
    out = []
    for m in range(c.M):
        for l in _brokers(c):
            for j in _brokers(c):
                if j != l:
                    cond = z3.And(s[("mk", m)] == S.FREQ, s[("ma", m)] == j, s[("mb", m)] == l,
                                  s[("alive", l)], s[("leader", l)] == l, s[("le", l)] == s[("mle", m)],
                                  s[("mbe", m)] == s[("bepoch", j)], s[("fep", l, j)] == s[("bepoch", j)])
                    out.append(z3.Implies(cond, s[("moff", m)] >= s[("fleo", l, j)]))
    return z3.And(out)


def ap_added_complete(c: Ctx, s: Sym) -> Any:
    """An AlterPartition request the controller would accept now (from its leader's registered
    incarnation, at the latest leader and partition epochs) names every member it adds to the
    controller's ISR with a broker epoch >= 1, and such a member, named with its current broker
    epoch and with its log kept, holds the exposed prefix, and if up is in the request's leader
    epoch or a later one. The leader adds a member only
    when its recorded position is at least its HW and epoch start offset (ap_added_caught_up),
    a prefix the two logs share (positions_agree) that covers the exposed prefix
    (exposed_within_epoch); while the request is in flight the exposed prefix grows only to the
    leader's HW, which counts the pending member, and the member keeps the common prefix. This
    is stated from the controller's side because the sender may crash, forgetting its pending
    ISR and positions, before the controller accepts its request."""
    reg = partition(c, s)
    out = []
    for m in range(c.M):
        for l in _brokers(c):
            acc = z3.And(s[("mk", m)] == S.APREQ, s[("ma", m)] == l, s[("mbe", m)] == s[("rep", l)],
                         reg["leader"] == l, reg["le"] == s[("mle", m)], s[("moff", m)] == s[("c_latest",)])
            for j in _brokers(c):
                if j != l:
                    added = z3.And(acc, s[("mnis", m, j)], z3.Not(reg["isr"][j]))
                    named = z3.And(added, s[("mnie", m, j)] == s[("bepoch", j)], _log_kept(s, j))
                    out.append(z3.Implies(added, s[("mnie", m, j)] >= 1))
                    out.append(z3.Implies(named, _exposed_in(c, s, j)))
                    # it fetched in the request's leader epoch (KIP-320), and a live incarnation's
                    # leader epoch only grows
                    out.append(z3.Implies(z3.And(named, s[("alive", j)]), s[("le", j)] >= s[("mle", m)]))
    return z3.And(out)


def acked_exposed(c: Ctx, s: Sym) -> Any:
    """An acked value is in the exposed prefix: a produce is acknowledged only when the leader's
    HW passes its offset, and the same step exposes the leader's log up to that HW (its prefix
    agrees with the exposed one: consistent_reads); the exposed prefix never shrinks."""
    out = []
    for v in range(c.layout.V):
        held = [z3.And(k < s[("elen",)], s[("eval", k)] == v) for k in range(c.L)]
        out.append(z3.Implies(s[("acked", v)], z3.Or(held) if held else F))
    return z3.And(out)


def pending_produce_in_log(c: Ctx, s: Sym) -> Any:
    """A pending produce names a live broker still leading in the produce's leader epoch, whose
    log holds the value at the produce's offset in that epoch: the leader appends the value at
    its LEO in its epoch and records the produce; it does not truncate while it leads, and a
    produce whose leader goes down or leaves the epoch fails (broker_actions.live_pending)."""
    out = []
    for v in range(c.layout.V):
        for l in _brokers(c):
            held = [z3.Implies(s[("hpoff", v)] == k, z3.And(k < s[("leo", l)], s[("lval", l, k)] == v,
                                                            s[("lep", l, k)] == s[("hple", v)]))
                    for k in range(c.L)]
            out.append(z3.Implies(z3.And(s[("hp", v)], s[("hpl", v)] == l),
                                  z3.And(s[("alive", l)], s[("leader", l)] == l, s[("le", l)] == s[("hple", v)],
                                         0 <= s[("hpoff", v)], s[("hpoff", v)] < c.L, *held)))
    return z3.And(out)


def log_epochs_monotone(c: Ctx, s: Sym) -> Any:
    """Leader epochs never decrease along a log, nor along a Fetch response's records, nor along
    the exposed prefix: a leader appends entries of its epoch, the highest it has seen in its
    log (leader_log_epochs), and a follower appends a response's records, which continue a
    prefix the two logs share; truncation and lossy crashes keep prefixes."""
    out = []
    for i in _brokers(c):
        out += [z3.Implies(k + 1 < s[("leo", i)], s[("lep", i, k)] <= s[("lep", i, k + 1)]) for k in range(c.L - 1)]
    for m in range(c.M):
        ok = z3.And(s[("mk", m)] == S.FRESP, s[("merr", m)] == F_NONE)
        out += [z3.Implies(z3.And(ok, x + 1 < s[("mrlen", m)]), s[("mrep", m, x)] <= s[("mrep", m, x + 1)])
                for x in range(c.L - 1)]
    out += [z3.Implies(k + 1 < s[("elen",)], s[("eep", k)] <= s[("eep", k + 1)]) for k in range(c.L - 1)]
    return z3.And(out)


def response_records_exposed(c: Ctx, s: Sym) -> Any:
    """A Fetch response without error carries, below its HW, the exposed entries at those
    offsets: the leader built it from its log, whose prefix up to its HW it had exposed; the
    exposed prefix only grows."""
    out = []
    for m in range(c.M):
        ok = z3.And(s[("mk", m)] == S.FRESP, s[("merr", m)] == F_NONE)
        for x in range(c.L):
            off = s[("moff", m)] + x
            below = z3.And(ok, x < s[("mrlen", m)], off < s[("mhw", m)])
            same = [z3.Implies(off == k, z3.And(s[("mrep", m, x)] == s[("eep", k)], s[("mrval", m, x)] == s[("eval", k)]))
                    for k in range(c.L)]
            out.append(z3.Implies(below, z3.And(off < s[("elen",)], *same)))
    return z3.And(out)


def served_follower_exposed(c: Ctx, s: Sym) -> Any:
    """A follower about to apply a Fetch response without error (it follows the response's leader
    in its epoch, its LEO the fetch offset) holds the exposed entries below the smaller of the
    response's HW and the fetch offset: the leader served the request after the KIP-101 check,
    so the follower's log agreed with the leader's below the fetch offset, and the leader's log
    below its HW was exposed; the follower's log is unchanged since."""
    out = []
    for m in range(c.M):
        for f in _brokers(c):
            cond = z3.And(_will_apply(c, s, m, f), s[("merr", m)] == F_NONE)
            upto = N.smin(s[("mhw", m)], s[("moff", m)])
            out += [z3.Implies(z3.And(cond, k < upto), z3.And(k < s[("elen",)], s[("lep", f, k)] == s[("eep", k)],
                                                             s[("lval", f, k)] == s[("eval", k)]))
                    for k in range(c.L)]
    return z3.And(out)


def epoch_offset_identity(c: Ctx, s: Sym) -> Any:
    """Two entries with the same offset and leader epoch, wherever they are held (logs, Fetch
    responses, the exposed prefix), have the same value: an epoch's leader writes each offset
    once in that epoch (it does not truncate while it leads, and leaves the epoch for good), and
    every copy keeps offset, epoch and value."""
    return _entry_pairs(c, s, lambda x, y: z3.Implies(z3.And(x[0], y[0], x[1] == y[1], x[2] == y[2]), x[3] == y[3]))


def value_epoch_order(c: Ctx, s: Sym) -> Any:
    """(No fencing of live brokers, `fences = 0`.) Of two entries held anywhere (logs, Fetch
    responses, the exposed prefix), the one with the smaller value has a leader epoch no larger:
    values are produced in increasing order (History.next_value), each by the leader of the
    latest leader epoch (no zombie leader), leader epochs only grow, and copies keep the epoch.
    With fencings a zombie leader may append a new value in its old epoch."""
    if c.p.fences != 0:
        return z3.BoolVal(True)
    ordered = lambda x, y: z3.Implies(z3.And(x[0], y[0], x[3] < y[3]), x[2] <= y[2])
    return _entry_pairs(c, s, lambda x, y: z3.And(ordered(x, y), ordered(y, x)))


def epoch_start_identity(c: Ctx, s: Sym) -> Any:
    """An epoch's entries start at the same offset wherever they are held: if a holder (log,
    Fetch response, exposed prefix) has an entry of epoch e after one of an older epoch, every
    entry of epoch e anywhere lies past that older one. The epoch's leader writes its entries
    from its epoch start offset on, and a copy of an entry of epoch e is made only onto a prefix
    that agrees with that leader's log (KIP-101), where the offsets below the start hold older
    epochs."""
    hs = _holders(c, s)
    out = []
    for x in _entries(c, s):
        for h in hs:
            for j in range(len(h)):
                for k in range(j + 1, len(h)):
                    cond = z3.And(x[0], h[j][0], h[k][0], h[k][2] == x[2], h[j][2] < x[2])
                    out.append(z3.Implies(cond, h[j][1] < x[1]))
    return z3.And(out)


def response_continues_log(c: Ctx, s: Sym) -> Any:
    """A Fetch response without error that its follower will apply (as in _will_apply) carries
    records whose first leader epoch is at least that of the follower's last entry: the request
    named that epoch and the follower's LEO (unchanged since, fetch_unique), and the leader
    found no divergence, so its log holds that epoch up to the fetch offset at least, and its
    later entries have epochs no smaller (KIP-101, LeaderEpochFileCache.endOffsetFor)."""
    out = []
    for m in range(c.M):
        for f in _brokers(c):
            cond = z3.And(_will_apply(c, s, m, f), s[("merr", m)] == F_NONE, s[("mrlen", m)] > 0)
            out.append(z3.Implies(z3.And(cond, s[("leo", f)] > 0), N.last_entry_epoch(c, s, f) <= s[("mrep", m, 0)]))
    return z3.And(out)


def response_log_matching(c: Ctx, s: Sym) -> Any:
    """Log matching across a Fetch response without error that its follower will apply: a log
    holding one of its records' leader epochs at that record's offset agrees with the follower's
    log below the fetch offset and with the response's records up to that one. The leader built the response from its log, which agreed with the
    follower's below the fetch offset (the request passed the KIP-101 check; acceptable_fetch_agrees),
    and any log holding an entry of the leader's at the same offset and epoch agrees with the
    leader's below it (epoch_log_matching); the follower's log is unchanged since."""
    out = []
    for m in range(c.M):
        for f in _brokers(c):
            cond = z3.And(_will_apply(c, s, m, f), s[("merr", m)] == F_NONE)
            for b in _brokers(c):
                if b == f:
                    continue
                for x in range(c.L):
                    for k in range(c.L):
                        same = z3.And(cond, x < s[("mrlen", m)], s[("moff", m)] + x == k, k < s[("leo", b)],
                                      s[("lep", b, k)] == s[("mrep", m, x)])
                        out.append(z3.Implies(same, _agree(c, s, f, b, s[("moff", m)])))
                        # and with the records up to that one
                        out += [z3.Implies(same, z3.And(s[("moff", m)] + y < s[("leo", b)], *[
                            z3.Implies(s[("moff", m)] + y == k2, z3.And(s[("lep", b, k2)] == s[("mrep", m, y)],
                                                                          s[("lval", b, k2)] == s[("mrval", m, y)]))
                            for k2 in range(c.L)])) for y in range(x)]
    return z3.And(out)


def response_epoch_start(c: Ctx, s: Sym) -> Any:
    """A Fetch response without error that its follower will apply, whose first record's leader
    epoch is above the follower's last entry's, starts that epoch: no entry of it, anywhere, lies
    below the fetch offset. The leader's log held the follower's last epoch just below the fetch
    offset and the record's epoch at it, and an epoch starts at one offset everywhere
    (epoch_start_identity)."""
    entries = _entries(c, s)
    out = []
    for m in range(c.M):
        for f in _brokers(c):
            first = s[("mrep", m, 0)]
            cond = z3.And(_will_apply(c, s, m, f), s[("merr", m)] == F_NONE, s[("mrlen", m)] > 0,
                          N.last_entry_epoch(c, s, f) < first)
            out += [z3.Implies(z3.And(cond, x[0], x[2] == first), s[("moff", m)] <= x[1]) for x in entries]
    return z3.And(out)


def candidates_remain(c: Ctx, s: Sym) -> Any:
    """(ELR on) |ISR ∪ ELR| >= min ISR - crashes + |members of ISR ∪ ELR down after a crash
    without a clean shutdown|. A member only leaves ISR ∪ ELR when an AlterPartition or a
    fencing leaves an ISR of at least min ISR (then ELR = ∅ and |ISR| >= min ISR bounds the
    right side, which is <= min ISR as no more brokers are down than crashed: well_formed), or
    when it re-registers after an unclean shutdown (KAFKA-15586): it was down and unclean, so
    both sides drop by one. A crash adds one to `crashes` and at most one down member; a
    controlled shutdown adds one to `crashes` and moves the member into the ELR unless the ISR
    stays at min ISR. So while fewer brokers crashed than min ISR, ISR ∪ ELR is never empty and
    the KIP-966 last-known-leader election (which elects the last leader, maybe without its
    unflushed committed records) never happens. Not stated with ELR off (no-elr) nor under an
    unclean election, which makes the ISR a single replica by design."""
    if not c.p.elr or c.p.unclean:
        return z3.BoolVal(True)
    reg = partition(c, s)
    union = [z3.Or(reg["isr"][j], reg["elr"][j]) for j in _brokers(c)]
    down = [z3.And(union[j], z3.Not(s[("alive", j)]), z3.Not(s[("clean", j)])) for j in _brokers(c)]
    return count(union) >= c.p.min_isr - s[("crashes",)] + count(down)


LEMMAS: dict[str, Formula] = {"elr_small": elr_small, "well_formed": well_formed,
                              "partition_epoch_replayed": partition_epoch_replayed,
                              "message_domains": message_domains, "candidates_remain": candidates_remain,
                              "records_structural": records_structural,
                              "unreplayed_records_shrink": unreplayed_records_shrink,
                              "alter_partition_answers": alter_partition_answers,
                              "alter_partition_response_current": alter_partition_response_current,
                              "ap_unique": ap_unique, "leader_isr_recorded": leader_isr_recorded,
                              "ap_in_flight_pending": ap_in_flight_pending,
                              "pending_not_accepted": pending_not_accepted,
                              "leader_records_shrink": leader_records_shrink,
                              "leader_isr_covers": leader_isr_covers,
                              "no_zombie_leader": no_zombie_leader, "value_identity": value_identity,
                              "fetch_positions": fetch_positions, "hw_exposed": hw_exposed,
                              "crash_count": crash_count, "clean_candidates_complete": clean_candidates_complete,
                              "leader_positions": leader_positions, "truncation_keeps_position": truncation_keeps_position,
                              "fetch_response_origin": fetch_response_origin,
                              "fetch_request_current": fetch_request_current, "fetch_unique": fetch_unique,
                              "leader_log_epochs": leader_log_epochs,
                              "epoch_entries_at_leader": epoch_entries_at_leader, "epoch_unwritten": epoch_unwritten,
                              "out_of_range_past_leader": out_of_range_past_leader,
                              "positions_agree": positions_agree,
                              "truncation_keeps_common_prefix": truncation_keeps_common_prefix,
                              "epoch_log_matching": epoch_log_matching,
                              "acceptable_fetch_agrees": acceptable_fetch_agrees,
                              "recorded_follower_epoch": recorded_follower_epoch,
                              "fetch_request_shape": fetch_request_shape,
                              "unled_epoch_requests_current": unled_epoch_requests_current,
                              "alive_not_clean": alive_not_clean, "diverging_below_epoch": diverging_below_epoch,
                              "truncation_keeps_exposed": truncation_keeps_exposed,
                              "recorded_epochs": recorded_epochs, "ap_member_positions": ap_member_positions,
                              "ap_named_unfenced": ap_named_unfenced, "ap_added_named": ap_added_named,
                              "exposed_within_epoch": exposed_within_epoch, "ap_added_caught_up": ap_added_caught_up,
                              "fetch_offsets_monotone": fetch_offsets_monotone, "ap_added_complete": ap_added_complete,
                              "acked_exposed": acked_exposed, "log_epochs_monotone": log_epochs_monotone,
                              "response_records_exposed": response_records_exposed,
                              "served_follower_exposed": served_follower_exposed,
                              "epoch_offset_identity": epoch_offset_identity,
                              "value_epoch_order": value_epoch_order,
                              "epoch_start_identity": epoch_start_identity,
                              "response_continues_log": response_continues_log,
                              "pending_produce_in_log": pending_produce_in_log,
                              "response_log_matching": response_log_matching,
                              "response_epoch_start": response_epoch_start, "epochs_reached": epochs_reached,
                              "lossless_candidates_complete": lossless_candidates_complete,
                              "unreplayed_leader_stays": unreplayed_leader_stays,
                              "last_known_leader": last_known_leader}
SUPPORT: dict[str, tuple[str, ...]] = {
    "structural": ("elr_small",),
    "candidate_completeness": ("well_formed", "partition_epoch_replayed", "message_domains", "elr_small", "structural",
                               "candidates_remain", "records_structural", "alter_partition_answers",
                               "alter_partition_response_current", "unreplayed_records_shrink", "leader_isr_recorded",
                               "ap_unique", "ap_in_flight_pending", "pending_not_accepted", "leader_records_shrink",
                               "leader_isr_covers", "no_zombie_leader", "value_identity", "fetch_positions",
                               "hw_exposed", "crash_count", "clean_candidates_complete", "leader_positions",
                               "truncation_keeps_position", "fetch_response_origin",
                               "fetch_request_current", "fetch_unique", "leader_log_epochs",
                               "epoch_entries_at_leader", "epoch_unwritten", "out_of_range_past_leader",
                               "positions_agree", "truncation_keeps_common_prefix", "epoch_log_matching",
                               "acceptable_fetch_agrees", "recorded_follower_epoch", "fetch_request_shape",
                               "unled_epoch_requests_current", "alive_not_clean", "diverging_below_epoch",
                               "truncation_keeps_exposed", "recorded_epochs", "ap_member_positions",
                               "ap_named_unfenced", "ap_added_named", "exposed_within_epoch",
                               "ap_added_caught_up", "fetch_offsets_monotone", "ap_added_complete",
                               "log_epochs_monotone", "response_records_exposed", "served_follower_exposed",
                               "epoch_offset_identity", "value_epoch_order", "epoch_start_identity",
                               "response_continues_log", "response_log_matching", "response_epoch_start",
                               "epochs_reached", "lossless_candidates_complete", "unreplayed_leader_stays",
                               "last_known_leader"),
    "candidates_remain": ("well_formed", "partition_epoch_replayed", "message_domains", "elr_small", "structural"),
    "well_formed": ("partition_epoch_replayed", "message_domains", "elr_small", "structural"),
    "partition_epoch_replayed": ("well_formed", "message_domains", "elr_small", "structural"),
    "quorum_superset": ("well_formed", "partition_epoch_replayed", "message_domains", "elr_small", "structural",
                        "records_structural", "alter_partition_answers", "alter_partition_response_current",
                        "unreplayed_records_shrink", "leader_isr_recorded", "ap_unique", "ap_in_flight_pending",
                        "pending_not_accepted", "leader_records_shrink", "leader_isr_covers"),
}
# the invariants that rest on candidate completeness: its strengthening, and it
for _name in ("leader_completeness", "log_matching", "consistent_reads", "no_acked_record_lost"):
    SUPPORT[_name] = SUPPORT["candidate_completeness"] + ("candidate_completeness",)
SUPPORT["leader_completeness"] += ("consistent_reads", "acked_exposed", "pending_produce_in_log")
SUPPORT["no_acked_record_lost"] += ("consistent_reads", "acked_exposed", "pending_produce_in_log")
QUANTIFIED: set[str] = set()


def formula(name: str) -> Formula:
    return INVARIANTS[name] if name in INVARIANTS else LEMMAS[name]


ENCODING = SimpleNamespace(
    name="replication",
    actions=N.actions,
    representatives=N.actions,  # brokers are not interchangeable (replica order elects)
    step=N.step,
    transition=N.transition,
    fresh=S.fresh,
    key_name=S.key_name,
    init=lambda ctx, sym: S.init_constraint(ctx.layout, sym, ctx.p),
    matches=S.matches,
    decode=S.decode,
    formula=formula,
    invariants=INVARIANTS,
    lemmas=LEMMAS,
    support=SUPPORT,
    quantified=QUANTIFIED,
    ghosts=None,
    concrete_action=N.concrete_action,
    has_conflict=lambda s: False,
)
