"""Invariants (`always`) and reachability witnesses (`sometimes`) of the replication model.

"Committed" is the ghost `history.exposed`: the longest log prefix that was ever below the HW
of a broker acting as leader, i.e. what consumers could have read (the true, global HW).
"""
from __future__ import annotations

from model.interface import Property, always, sometimes
from model.replication.params import Params
from model.replication.broker_actions import waited_for
from model.replication.records import NO_LEADER
from model.replication.state import AP_ERRORS, F_DIVERGING, Broker, State

_AP_NONE = AP_ERRORS.index("NONE")


def _prefix(a: tuple, b: tuple) -> bool:
    return len(a) <= len(b) and b[: len(a)] == a


def current_leader(s: State) -> Broker | None:
    """The controller's leader, if it is up and has learnt that it leads in the current epoch."""
    reg = s.controller.partition
    if reg.leader == NO_LEADER:
        return None
    b = s.brokers[reg.leader]
    if b.alive and b.leader == reg.leader and b.leader_epoch == reg.leader_epoch:
        return b
    return None


def leader_completeness(s: State) -> bool:
    b = current_leader(s)
    if b is None:
        return True
    values = {e.value for e in b.log}
    return _prefix(s.history.exposed, b.log) and all(v in values for v in s.history.acked)


def candidate_completeness(s: State) -> bool:
    reg = s.controller.partition
    exposed = s.history.exposed
    for i in reg.isr + reg.elr:
        b = s.brokers[i]
        if b.alive and not _prefix(exposed, b.log):
            return False
    return True


def quorum_superset(min_isr: int):
    def check(s: State) -> bool:
        b = current_leader(s)
        if b is None:
            return True
        reg = s.controller.partition
        quorum = set(b.maximal_isr).union(waited_for(s, reg.leader, b))
        if not quorum.issuperset(reg.isr):
            return False
        return len(b.isr) < min_isr or quorum.issuperset(reg.elr)

    return check


def log_matching(s: State) -> bool:
    brokers = s.brokers
    for i in range(len(brokers)):
        a = brokers[i]
        for j in range(i + 1, len(brokers)):
            b = brokers[j]
            k = min(a.hw, b.hw)
            if a.log[:k] != b.log[:k]:
                return False
    return True


def consistent_reads(s: State) -> bool:
    exposed = s.history.exposed
    for i, b in enumerate(s.brokers):
        if b.alive and b.leader == i:
            readable = b.log[: b.hw]
            if not (_prefix(readable, exposed) or _prefix(exposed, readable)):
                return False
    return True


def no_acked_record_lost(min_isr: int):
    def check(s: State) -> bool:
        if s.history.lossy_crashes >= min_isr:
            return True  # not promised: min ISR replicas lost their unflushed data
        held = {e.value for b in s.brokers for e in b.log}
        return all(v in held for v in s.history.acked)

    return check


def structural(p: Params):
    def check(s: State) -> bool:
        reg = s.controller.partition
        replicas = set(reg.replicas)
        isr, elr = set(reg.isr), set(reg.elr)
        if not (isr <= replicas and elr <= replicas and not (isr & elr)):
            return False
        if len(isr) >= p.min_isr and elr:
            return False
        if any(s.controller.brokers[i].fenced for i in reg.isr if p.elr):
            return False
        if reg.leader != NO_LEADER and reg.leader not in isr:
            return False
        if not p.elr and not isr:
            return False
        log = s.controller.log
        return all(r.partition_epoch == log[0].partition_epoch + i for i, r in enumerate(log))

    return check


def _isr_expansion_proposed(s: State) -> bool:
    """A broker acting as leader has an AlterPartition pending that adds a follower (Partition.maybeExpandIsr)."""
    return any(b.alive and b.leader == i and any(f not in b.isr for f in b.pending) for i, b in enumerate(s.brokers))


def properties(p: Params) -> list[Property]:
    return [
        always("leader_completeness", leader_completeness,
               "the current leader holds every committed record and every acked value"),
        always("candidate_completeness", candidate_completeness,
               "every live member of the controller's ISR and ELR holds the committed log"),
        always("quorum_superset", quorum_superset(p.min_isr),
               "the replicas the leader's HW waits for (maximal ISR and caught-up eligible replicas) include "
               "the controller's ISR, and its ELR while the leader's ISR >= min ISR"),
        always("log_matching", log_matching, "two replicas agree below the smaller of their HWs"),
        always("consistent_reads", consistent_reads,
               "what a leader serves below its HW agrees with everything consumers read before"),
        always("no_acked_record_lost", no_acked_record_lost(p.min_isr),
               "an acked value stays on some replica while fewer than min ISR lossy crashes happened"),
        always("structural", structural(p),
               "ISR, ELR within replicas and disjoint; ELR empty at ISR >= min ISR; no fenced ISR member "
               "(ELR on); leader in ISR; ISR non-empty with ELR off; one record per partition epoch"),
        sometimes("record_acked", lambda s: bool(s.history.acked), "a produce is acknowledged"),
        sometimes("committed_then_leader_change",
                  lambda s: bool(s.history.exposed) and s.controller.partition.leader_epoch > s.history.exposed[-1].epoch,
                  "a record is committed and then the leader epoch moves on"),
        sometimes("elr_nonempty", lambda s: bool(s.controller.partition.elr), "the ELR has a member"),
        sometimes("isr_below_min", lambda s: len(s.controller.partition.isr) < p.min_isr,
                  "the ISR shrinks below min.insync.replicas"),
        sometimes("leaderless", lambda s: s.controller.partition.leader == NO_LEADER, "the partition has no leader"),
        sometimes("truncation", lambda s: any(r.error == F_DIVERGING for r in s.fetch_responses),
                  "a follower is told its log diverges (and truncates on receipt)"),
        sometimes("lossy_crash", lambda s: s.history.lossy_crashes > 0, "a broker loses its unflushed records"),
        sometimes("isr_expansion_proposed", _isr_expansion_proposed,
                  "a leader proposes adding a follower to the ISR (an expansion pending)"),
        sometimes("alter_partition_rejected", lambda s: any(r.error != _AP_NONE for r in s.ap_responses),
                  "the controller rejects an AlterPartition"),
        sometimes("broker_reregistered", lambda s: any(b.epoch > 1 for b in s.brokers),
                  "a broker restarts with a new broker epoch"),
    ]
