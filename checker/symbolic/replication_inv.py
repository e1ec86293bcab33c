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

from checker.symbolic import replication_next as N
from checker.symbolic import replication_state as S
from checker.symbolic.replication_next import Ctx, maximal_isr, member, nonempty, partition, waited_for
from checker.symbolic.term import Sym, at_least, count
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
# lemmas both need); candidate_completeness is not inductive with these lemmas (spec/proofs.md)
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
    from checker.symbolic.term import at_most

    return at_most(partition(c, s)["elr"], 1)


def well_formed(c: Ctx, s: Sym) -> Any:
    """Domains and bookkeeping every action keeps: logs hold at most the values produced
    (0 <= HW <= LEO <= next value <= values), entries carry a leader epoch in 0..max_leader_epoch
    and a produced value; the controller holds records c_start..c_latest within 0..max partition
    epoch, each with a leader in -1..n-1 and a leader epoch in 0..max_leader_epoch, leader
    epochs not decreasing along the records, and a live broker's leader epoch at most that of
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
                                           s[("c_le", q)] <= p.max_leader_epoch, s[("c_le", q)] <= reg["le"])))
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
    """Every held record has an empty ELR when its ISR has min ISR members and its leader (if
    any) in its ISR (each record was the latest when written, and `structural` held for it then;
    records never change). A live broker knows the leader and leader epoch of the last record it
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
    for b in _brokers(c):
        out.append(z3.Implies(z3.And(s[("alive", b)], s[("leader", b)] == b), s[("isr", b, b)]))
        for q in range(c.layout.P + 1):
            seen = z3.And(s[("alive", b)], s[("meta", b)] == q, s[("c_start",)] <= q)
            out.append(z3.Implies(seen, z3.And(s[("le", b)] == s[("c_le", q)], s[("leader", b)] == s[("c_leader", q)])))
        for q in range(c.layout.P + 1):
            held = z3.And(s[("c_start",)] <= q, q <= s[("c_latest",)])
            out.append(z3.Implies(z3.And(held, s[("alive", b)], s[("le", b)] == s[("c_le", q)]),
                                  s[("leader", b)] == s[("c_leader", q)]))
    for q in range(c.layout.P + 1):
        for q2 in range(q + 1, c.layout.P + 1):
            both = z3.And(s[("c_start",)] <= q, q2 <= s[("c_latest",)], s[("c_le", q)] == s[("c_le", q2)])
            out.append(z3.Implies(both, s[("c_leader", q)] == s[("c_leader", q2)]))
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
                              "alter_partition_response_current": alter_partition_response_current}
SUPPORT: dict[str, tuple[str, ...]] = {
    "structural": ("elr_small",),
    "candidate_completeness": ("well_formed", "partition_epoch_replayed", "message_domains", "elr_small", "structural",
                               "candidates_remain"),
    "candidates_remain": ("well_formed", "partition_epoch_replayed", "message_domains", "elr_small", "structural"),
    "well_formed": ("partition_epoch_replayed", "message_domains", "elr_small", "structural"),
    "partition_epoch_replayed": ("well_formed", "message_domains", "elr_small", "structural"),
    "quorum_superset": ("well_formed", "partition_epoch_replayed", "message_domains", "elr_small", "structural",
                        "records_structural", "alter_partition_answers", "alter_partition_response_current",
                        "unreplayed_records_shrink"),
}
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
