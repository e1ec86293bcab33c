"""Invariants (`always`) and reachability witnesses (`sometimes`) of the replication model.

"Committed" is the ghost `history.exposed`: the longest log prefix that was ever below the HW
of a broker acting as leader, i.e. what consumers could have read (the true, global HW).
"""
from __future__ import annotations

from model.interface import Property, always, sometimes
from model.replication.params import Params
from model.replication.broker_actions import waited_for
from model.replication.controller import reassigning
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


def _isr_expanded(s: State) -> bool:
    """The controller has accepted an AlterPartition that adds a follower to the ISR its leader
    knows (ReplicationControlManager.alterPartition; the answer is still in flight)."""
    return any(r.error == _AP_NONE and not set(r.registration[0].isr) <= set(s.brokers[r.leader].isr)
               for r in s.ap_responses)


# What each invariant reads (Property.reads): none reads the messages in flight, so a successor
# that only sends, loses or discards a message is not checked again (a third of the states).
_ALL = ("brokers", "controller", "history")


def properties(p: Params) -> list[Property]:
    return [
        always("leader_completeness", leader_completeness,
               "the current leader holds every committed record and every acked value", reads=_ALL),
        always("candidate_completeness", candidate_completeness,
               "every live member of the controller's ISR and ELR holds the committed log", reads=_ALL),
        always("quorum_superset", quorum_superset(p.min_isr),
               "the replicas the leader's HW waits for (maximal ISR and caught-up eligible replicas) include "
               "the controller's ISR, and its ELR while the leader's ISR >= min ISR", reads=("brokers", "controller")),
        always("log_matching", log_matching, "two replicas agree below the smaller of their HWs", reads=("brokers",)),
        always("consistent_reads", consistent_reads,
               "what a leader serves below its HW agrees with everything consumers read before",
               reads=("brokers", "history")),
        always("no_acked_record_lost", no_acked_record_lost(p.min_isr),
               "an acked value stays on some replica while fewer than min ISR lossy crashes happened",
               reads=("brokers", "history")),
        always("structural", structural(p),
               "ISR, ELR within replicas and disjoint; ELR empty at ISR >= min ISR; no fenced ISR member "
               "(ELR on); leader in ISR; ISR non-empty with ELR off; one record per partition epoch",
               reads=("controller",)),
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
        sometimes("isr_expanded", _isr_expanded,
                  "the controller accepts an AlterPartition that adds a follower to the ISR"),
        sometimes("alter_partition_rejected", lambda s: any(r.error != _AP_NONE for r in s.ap_responses),
                  "the controller rejects an AlterPartition"),
        sometimes("broker_reregistered", lambda s: any(b.epoch > 1 for b in s.brokers),
                  "a broker restarts with a new broker epoch"),
    ] + _recovery_witness(p) + _reassignment_properties(p) + _quorum_witnesses(p)


def _quorum_witnesses(p: Params) -> list[Property]:
    """Declared where the metadata log is replicated by a KRaft quorum (`controller_failovers` > 0)."""
    if p.controller_failovers == 0:
        return []
    return [
        sometimes("answer_held", lambda s: any(b.responses for b in s.controller.uncommitted),
                  "an AlterPartition answer waits in the controller's purgatory for its write to commit"),
        sometimes("failover_lost_write", lambda s: s.controller.failovers > 0,
                  "a controller failover forgets a write the quorum had not committed"),
        sometimes("failover_reverted_partition", lambda s: s.controller.reverted,
                  "a controller failover forgets a partition-change record"),
        sometimes("writes_queued", lambda s: len(s.controller.uncommitted) >= 2,
                  "two controller writes wait for the quorum to commit them"),
    ]


_NEW_LEADER_ELECTED = AP_ERRORS.index("NEW_LEADER_ELECTED")


def _replica_removed(s: State) -> bool:
    """A live broker outside the replicas, up to date with the metadata, has deleted its log."""
    reg = s.controller.partition
    return any(b.alive and b.meta == reg.partition_epoch and i not in reg.replicas and not b.log
               for i, b in enumerate(s.brokers))


def removed_replica_never_leads(s: State) -> bool:
    """No live broker outside the controller's replicas acts as leader in the current leader epoch."""
    reg = s.controller.partition
    return all(not b.alive or b.leader != i or b.leader_epoch != reg.leader_epoch or i in reg.replicas
               for i, b in enumerate(s.brokers))


def _reassignment_properties(p: Params) -> list[Property]:
    """Declared where the operator may reassign the partition (`reassignments` > 0)."""
    if p.reassignments == 0:
        return []
    return [
        always("removed_replica_never_leads", removed_replica_never_leads,
               "no broker outside the replicas acts as leader in the current leader epoch",
               reads=("brokers", "controller")),
        always("reassignment_completes_in_sync", lambda s: not s.history.reassigned_out_of_sync,
               "a reassignment ends only with every target replica in the ISR (unclean elections aside)",
               reads=("history",)),
        sometimes("reassigning", lambda s: reassigning(s.controller.partition),
                  "a reassignment is in progress: replicas are being added or removed"),
        sometimes("replica_removed", _replica_removed,
                  "a broker removed from the replicas has deleted its log"),
        sometimes("leader_moved_by_reassignment", lambda s: any(r.error == _NEW_LEADER_ELECTED for r in s.ap_responses),
                  "an AlterPartition completes a reassignment that removes its leader (NEW_LEADER_ELECTED)"),
    ]


def _recovery_witness(p: Params) -> list[Property]:
    """`leader_recovering`, declared where an unclean election is within the budget: with
    unclean.leader.election on, or an operator's ElectLeaders UNCLEAN, or with ELR on and a crash for
    every replica (the ISR and the ELR empty only once their last members restart uncleanly; then
    the last known leader is elected)."""
    if not (p.unclean or p.unclean_elect_leaders or (p.elr and p.crashes >= p.n)):
        return []
    return [sometimes("leader_recovering", lambda s: s.controller.partition.recovering,
                      "a leader elected uncleanly is RECOVERING (KIP-704); with unclean.leader.election off, "
                      "the last known leader (KIP-966)")]


# --- Witnesses: what breaks an invariant in a state, named concretely ------------------------

def _entry(e) -> str:  # type: ignore[no-untyped-def]
    return f"value {e.value} (leader epoch {e.epoch})"


def _gap(s: State, log: tuple, broker: str) -> str:
    """The first committed record (history.exposed) that `log` lacks or holds differently."""
    exposed = s.history.exposed
    for i, e in enumerate(exposed):
        if i >= len(log) or log[i] != e:
            what = "acked" if e.value in s.history.acked else "committed"
            if i >= len(log):
                return (f"value {e.value} {what} at offset {i} (leader epoch {e.epoch}) is missing from {broker} "
                        f"(its log ends at offset {len(log)})")
            return (f"value {e.value} {what} at offset {i} (leader epoch {e.epoch}) is missing from {broker}, "
                    f"which holds {_entry(log[i])} there")
    return ""


def _leader_completeness_witness(s: State) -> str:
    b = current_leader(s)
    if b is None:
        return ""
    who = f"broker {s.controller.partition.leader}, the current leader"
    gap = _gap(s, b.log, who)
    if gap:
        return gap
    values = {e.value for e in b.log}
    for v in s.history.acked:
        if v not in values:
            return f"value {v} acked is missing from {who}"
    return ""


def _candidate_completeness_witness(s: State) -> str:
    reg = s.controller.partition
    for kind, members in (("ISR", reg.isr), ("ELR", reg.elr)):
        for i in members:
            b = s.brokers[i]
            if b.alive:
                gap = _gap(s, b.log, f"broker {i}, a live member of the controller's {kind} {list(members)}")
                if gap:
                    return gap
    return ""


def _quorum_superset_witness(min_isr: int):  # type: ignore[no-untyped-def]
    def explain(s: State) -> str:
        b = current_leader(s)
        if b is None:
            return ""
        reg = s.controller.partition
        waits = waited_for(s, reg.leader, b)
        quorum = set(b.maximal_isr).union(waits)
        seen = (f"leader broker {reg.leader}'s HW waits for (maximal ISR {list(b.maximal_isr)}, "
                f"caught-up eligible {list(waits)})")
        for i in reg.isr:
            if i not in quorum:
                return f"broker {i} is in the controller's ISR {list(reg.isr)} but not among the replicas {seen}"
        if len(b.isr) >= min_isr:
            for i in reg.elr:
                if i not in quorum:
                    return (f"broker {i} is in the controller's ELR {list(reg.elr)} but not among the replicas {seen},"
                            f" while the leader's ISR {list(b.isr)} has min ISR ({min_isr}) members")
        return ""

    return explain


def _log_matching_witness(s: State) -> str:
    brokers = s.brokers
    for i in range(len(brokers)):
        for j in range(i + 1, len(brokers)):
            a, b = brokers[i], brokers[j]
            k = min(a.hw, b.hw)
            for o in range(k):
                x = a.log[o] if o < len(a.log) else None
                y = b.log[o] if o < len(b.log) else None
                if x != y:
                    def held(e) -> str:  # type: ignore[no-untyped-def]
                        return "nothing" if e is None else _entry(e)
                    return (f"brokers {i} and {j} disagree at offset {o}, below both their HWs ({a.hw} and {b.hw}): "
                            f"broker {i} holds {held(x)}, broker {j} {held(y)}")
    return ""


def _consistent_reads_witness(s: State) -> str:
    exposed = s.history.exposed
    for i, b in enumerate(s.brokers):
        if b.alive and b.leader == i:
            readable = b.log[: b.hw]
            if _prefix(readable, exposed) or _prefix(exposed, readable):
                continue
            o = next(k for k in range(min(len(readable), len(exposed))) if readable[k] != exposed[k])
            return (f"leader broker {i} serves {_entry(readable[o])} at offset {o}, below its HW {b.hw}, "
                    f"where consumers read {_entry(exposed[o])}")
    return ""


def _no_acked_record_lost_witness(min_isr: int):  # type: ignore[no-untyped-def]
    def explain(s: State) -> str:
        if s.history.lossy_crashes >= min_isr:
            return ""
        held = {e.value for b in s.brokers for e in b.log}
        for v in s.history.acked:
            if v not in held:
                at = next((f" at offset {o}" for o, e in enumerate(s.history.exposed) if e.value == v), "")
                ends = ", ".join(f"broker {i} at {len(b.log)}" for i, b in enumerate(s.brokers))
                return (f"value {v} acked{at} is on no broker's log (logs end: {ends}), "
                        f"after {s.history.lossy_crashes} lossy crash(es), fewer than min ISR {min_isr}")
        return ""

    return explain


def structural_problem(p: Params, s: State) -> str:
    """What breaks `structural` in `s`, named concretely; "" when it holds."""
    reg = s.controller.partition
    where = f"the controller's partition record (partition epoch {reg.partition_epoch})"
    replicas = set(reg.replicas)
    for name, members in (("ISR", reg.isr), ("ELR", reg.elr)):
        for i in members:
            if i not in replicas:
                return f"broker {i} is in the {name} {list(members)} of {where} but not a replica {list(reg.replicas)}"
    for i in reg.isr:
        if i in reg.elr:
            return f"broker {i} is in both the ISR {list(reg.isr)} and the ELR {list(reg.elr)} of {where}"
    if len(reg.isr) >= p.min_isr and reg.elr:
        return (f"the ELR {list(reg.elr)} of {where} is not empty while its ISR {list(reg.isr)} has min ISR "
                f"({p.min_isr}) members")
    if p.elr:
        for i in reg.isr:
            if s.controller.brokers[i].fenced:
                return f"broker {i} is fenced but in the ISR {list(reg.isr)} of {where}"
    if reg.leader != NO_LEADER and reg.leader not in reg.isr:
        return f"leader broker {reg.leader} is not in the ISR {list(reg.isr)} of {where}"
    if not p.elr and not reg.isr:
        return f"the ISR of {where} is empty, with ELR off"
    log = s.controller.log
    for i, r in enumerate(log):
        if r.partition_epoch != log[0].partition_epoch + i:
            return (f"the controller's metadata log holds partition epoch {r.partition_epoch} where "
                    f"{log[0].partition_epoch + i} belongs")
    return ""


def explanations(p: Params) -> dict:  # type: ignore[type-arg]
    """Per invariant, a pure `explain(state) -> str` naming the broker, offset, value or epoch
    that breaks it in `state` ("" when it cannot tell): the end of a counterexample's text."""
    return {
        "leader_completeness": _leader_completeness_witness,
        "candidate_completeness": _candidate_completeness_witness,
        "quorum_superset": _quorum_superset_witness(p.min_isr),
        "log_matching": _log_matching_witness,
        "consistent_reads": _consistent_reads_witness,
        "no_acked_record_lost": _no_acked_record_lost_witness(p.min_isr),
        "structural": lambda s: structural_problem(p, s),
    }
