"""The kraft model's properties: safety invariants (`always`) and reachability witnesses
(`sometimes`), each a plain pure predicate over a state. Sources: bug-catalogue.md invariant 8,
protocol-rules.md section 7, the Raft paper (5.2 election safety, 5.3 log matching, 5.4 leader
completeness)."""
from __future__ import annotations

from model.interface import Property, always, sometimes
from model.kraft import disruption, rules
from model.kraft.params import Params
from model.kraft.rules import (
    CANDIDATE, FOLLOWER, GRANTED, LEADER, NO_ID, PROSPECTIVE, RESIGNED, UNATTACHED, VOTERS_BASE,
)
from model.kraft.state import (
    CHECK_QUORUM_RESIGN, DATA, ELECTED_AFTER_RESTART, LEADER_CHANGE, PRE_VOTE_LOST, REMOVED_LEADER_RESIGNED, TRUNCATED,
    KraftState, Node,
    kind_name,
)
from model.kraft.variants import Protocol


def election_safety(s: KraftState) -> bool:
    """At most one leader is ever elected in an epoch (ghost: every (epoch, leader) elected)."""
    epochs = [e for e, _ in s.history.elected]
    return len(epochs) == len(set(epochs))


def leader_completeness(s: KraftState) -> bool:
    """Every leader holds every entry committed in an earlier epoch (Raft 5.4). An entry counts
    as committed from the first time a leader's HW passed it (ghost History.committed)."""
    committed = s.history.committed
    if not committed:
        return True
    for n in s.nodes:
        if n.role != LEADER:
            continue
        for offset, epoch, _, commit_epoch in committed:
            if commit_epoch < n.epoch and (offset >= n.leo or n.log[offset][0] != epoch):
                return False
    return True


def log_mismatch(s: KraftState) -> tuple[int, int, int] | None:
    """The first voters a < b and offset k at which both hold an entry of the same epoch while
    their logs differ up to it, or None."""
    logs = [n.log for n in s.nodes]
    for a in range(len(logs)):
        for b in range(a + 1, len(logs)):
            x, y = logs[a], logs[b]
            for k in range(min(len(x), len(y)) - 1, -1, -1):
                if x[k][0] == y[k][0]:
                    if x[:k + 1] != y[:k + 1]:
                        return a, b, k
                    break
    return None


def log_matching(s: KraftState) -> bool:
    """Two logs with an entry of the same epoch at the same offset are identical up to it."""
    return log_mismatch(s) is None


def least_quorum(p: Params) -> int:
    """The majority of the smallest voter set the configuration allows (a RemoveVoter shrinks it)."""
    return rules.majority(max(1, p.voters - p.voter_changes))


def committed_kept(p: Params):  # type: ignore[no-untyped-def]
    """No two entries are ever committed at one offset, and while fewer than a majority of the
    voters lost their disks, every committed entry is still held by at least
    majority - (disks lost) replicas (it was on a majority when committed). With voter changes
    the majority is that of the smallest voter set the budget allows."""
    quorum = least_quorum(p)

    def check(s: KraftState) -> bool:
        committed = s.history.committed
        if not committed:
            return True
        offsets = [c[0] for c in committed]
        if len(offsets) != len(set(offsets)):
            return False
        if s.disk_losses >= quorum:
            return True
        need = quorum - s.disk_losses
        for offset, epoch, _, _ in committed:
            held = sum(1 for n in s.nodes if offset < n.leo and n.log[offset][0] == epoch)
            if held < need:
                return False
        return True

    return check


def leader_hw_monotonic(s: KraftState) -> bool:
    """The HW never decreases on a leader (LeaderState.maybeUpdateHighWatermark only moves it
    forward): every leader's HW is the largest its epoch ever exposed (ghost
    History.leader_hws), and it stays within its log.

    Across epochs the HW may look lower for a while: a new leader starts with no HW and, in the
    commit-by-count variant (K1), may expose one below its predecessor's. That symptom is left to
    leader_completeness and committed_kept, which catch the data loss it leads to (Raft
    Figure 8), so the K1 counterexample is the one bug-catalogue.md names."""
    hws = dict(s.history.leader_hws)
    for n in s.nodes:
        if n.role == LEADER:
            if n.hw > n.leo or n.hw < hws.get(n.epoch, NO_ID):
                return False
    return True


def state_sanity(p: Params, proto: Protocol):  # type: ignore[no-untyped-def]
    """Structural invariants of each role (QuorumState, EpochState) and of the bounds."""

    def node_ok(i: int, n: Node) -> bool:
        if n.epoch < rules.last_epoch(n.log) or not (NO_ID <= n.hw <= n.leo) or n.epoch > p.max_epoch:
            return False
        if n.observer and n.role not in (UNATTACHED, FOLLOWER):
            return False
        if n.role in (PROSPECTIVE, CANDIDATE):
            if len(n.votes) != p.n or n.votes[i] != GRANTED:
                return False
            if n.role == CANDIDATE and (n.voted != i or n.leader != NO_ID):
                return False
        elif n.votes:
            return False
        if n.role == LEADER:
            if n.leader != i or len(n.end_offsets) != p.n or n.end_offsets[i] != n.leo:
                return False
            if proto.leader_change_record and n.log[n.epoch_start] != (n.epoch, LEADER_CHANGE):
                return False
        elif n.end_offsets or n.epoch_start != NO_ID:
            return False
        if n.role == FOLLOWER and n.leader in (NO_ID, i):
            return False
        if n.role == RESIGNED and n.leader != i:
            return False
        if n.role == UNATTACHED and n.leader != NO_ID:
            return False
        return True

    def check(s: KraftState) -> bool:
        if len(s.network) > p.max_in_flight or len(s.nodes) != p.n:
            return False
        return all(node_ok(i, n) for i, n in enumerate(s.nodes))

    return check


def no_fatal_error(s: KraftState) -> bool:
    """No node reached a path where Kafka throws (inconsistent leader, truncation below the HW,
    a follower HW going back)."""
    return not s.history.fatal


def properties(p: Params, proto: Protocol) -> list[Property]:
    """The property list of one configuration and variant. A `sometimes` property the
    configuration or variant makes unreachable (a zero budget, no pre-vote...) is left out."""
    out = [
        always("election_safety", election_safety, "at most one leader per epoch (Raft 5.2)", reads=("history",)),
        always("leader_completeness", leader_completeness,
               "every leader holds every entry committed in an earlier epoch (Raft 5.4)", reads=("nodes", "history")),
        always("log_matching", log_matching,
               "logs with the same (offset, epoch) entry agree up to it (Raft 5.3)", reads=("nodes",)),
        always("committed_kept", committed_kept(p),
               "committed entries are never replaced, and stay on a majority minus the disks lost",
               reads=("nodes", "history", "disk_losses")),
        always("leader_hw_monotonic", leader_hw_monotonic,
               "the HW never decreases on a leader and stays within its log", reads=("nodes", "history")),
        always("state_sanity", state_sanity(p, proto), "role/state structure and bounds", reads=("nodes", "network")),
        always("no_fatal_error", no_fatal_error, "no Kafka IllegalStateException/KafkaException path is hit",
               reads=("history",)),
        sometimes("leader_elected", lambda s: any(n.role == LEADER for n in s.nodes), "some voter is leader"),
    ]
    if proto.pre_vote and p.n > 1:
        out.append(sometimes(
            "prevote_lost",
            lambda s: s.history.last_event == PRE_VOTE_LOST,
            "a Prospective left at once when a majority rejected its pre-vote"))
    if proto.check_quorum and p.n > 1:
        out.append(sometimes(
            "resigned_by_check_quorum", lambda s: s.history.last_event == CHECK_QUORUM_RESIGN,
            "a leader resigned when its check-quorum timer expired"))
    if p.max_log >= (2 if proto.leader_change_record else 1) and p.n > 0:
        out.append(sometimes(
            "entry_committed", lambda s: any(c[2] == DATA for c in s.history.committed),
            "a client record is committed"))
    if p.max_epoch >= 2 and p.n > 1 and p.max_log >= 1:
        out.append(sometimes(
            "truncation", lambda s: s.history.last_event == TRUNCATED,
            "a follower truncated its log on a diverging epoch"))
    if p.restarts + p.disk_losses > 0 and p.faults > 0:
        out.append(sometimes(
            "election_after_restart", lambda s: s.history.last_event == ELECTED_AFTER_RESTART,
            "a leader was elected after a restart"))
    if p.voter_changes > 0:
        out += _voter_change_witnesses(p)
    return out


def _committed_sets(s: KraftState) -> list[int]:
    return [kind - VOTERS_BASE for _, _, kind, _ in s.history.committed if kind >= VOTERS_BASE]


def _voter_change_witnesses(p: Params) -> list[Property]:
    """Reachability of each step of a voter change (KIP-853), declared when the budget allows one."""
    out = [
        sometimes("voter_removed", lambda s: any(v & p.bootstrap != p.bootstrap for v in _committed_sets(s)),
                  "a VotersRecord without a bootstrap voter is committed"),
        sometimes("removed_leader_resigned", lambda s: s.history.last_event == REMOVED_LEADER_RESIGNED,
                  "a leader resigned once its own removal was committed"),
    ]
    if p.spares > 0:
        out.append(sometimes("voter_added", lambda s: any(v & ~p.bootstrap for v in _committed_sets(s)),
                             "a VotersRecord with a spare node as a voter is committed"))
        out.append(sometimes("added_voter_elected",
                             lambda s: any(x >= p.voters for _, x in s.history.elected),
                             "a node added as a voter is elected leader"))
    return out


# --- Witnesses: what breaks an invariant in a state, named concretely ------------------------

def _election_safety_witness(s: KraftState) -> str:
    leaders: dict[int, list[int]] = {}
    for e, leader in s.history.elected:
        leaders.setdefault(e, []).append(leader)
    for e, ids in sorted(leaders.items()):
        if len(ids) > 1:
            return f"voters {' and '.join(map(str, ids))} were both elected leader in epoch {e}"
    return ""


def _leader_completeness_witness(s: KraftState) -> str:
    for i, n in enumerate(s.nodes):
        if n.role != LEADER:
            continue
        for offset, epoch, kind, commit_epoch in s.history.committed:
            if commit_epoch < n.epoch and (offset >= n.leo or n.log[offset][0] != epoch):
                held = (f"its log ends at offset {n.leo}" if offset >= n.leo
                        else f"it holds an entry of epoch {n.log[offset][0]} there")
                return (f"the {kind_name(kind)} entry of epoch {epoch} committed at offset {offset} (in epoch "
                        f"{commit_epoch}) is missing from voter {i}, the leader of epoch {n.epoch}: {held}")
    return ""


def _log_matching_witness(s: KraftState) -> str:
    found = log_mismatch(s)
    if found is None:
        return ""
    a, b, k = found
    x, y = s.nodes[a].log, s.nodes[b].log
    o = next(j for j in range(k + 1) if x[j] != y[j])
    return (f"voters {a} and {b} both hold an entry of epoch {x[k][0]} at offset {k} but "
            f"differ at offset {o}: voter {a} holds {kind_name(x[o][1])} of epoch {x[o][0]}, "
            f"voter {b} {kind_name(y[o][1])} of epoch {y[o][0]}")


def _committed_kept_witness(p: Params):  # type: ignore[no-untyped-def]
    quorum = least_quorum(p)

    def explain(s: KraftState) -> str:
        committed = s.history.committed
        seen: dict[int, tuple[int, int, int, int]] = {}
        for c in committed:
            if c[0] in seen:
                d = seen[c[0]]
                return (f"two entries were committed at offset {c[0]}: one of epoch {d[1]} (in epoch {d[3]}) "
                        f"and one of epoch {c[1]} (in epoch {c[3]})")
            seen[c[0]] = c
        if s.disk_losses >= quorum:
            return ""
        need = quorum - s.disk_losses
        for offset, epoch, kind, _ in committed:
            holders = [i for i, n in enumerate(s.nodes) if offset < n.leo and n.log[offset][0] == epoch]
            if len(holders) < need:
                on = f"voter(s) {', '.join(map(str, holders))}" if holders else "no voter"
                return (f"the {kind_name(kind)} entry of epoch {epoch} committed at offset {offset} is held by {on}, "
                        f"fewer than the {need} a majority ({quorum}) minus {s.disk_losses} disk(s) lost requires")
        return ""

    return explain


def _leader_hw_monotonic_witness(s: KraftState) -> str:
    hws = dict(s.history.leader_hws)
    for i, n in enumerate(s.nodes):
        if n.role == LEADER:
            if n.hw > n.leo:
                return f"voter {i}, the leader of epoch {n.epoch}, has HW {n.hw} past its log end offset {n.leo}"
            if n.hw < hws.get(n.epoch, NO_ID):
                return (f"voter {i}, the leader of epoch {n.epoch}, has HW {n.hw}, below the HW "
                        f"{hws[n.epoch]} it exposed before")
    return ""


def _state_sanity_witness(p: Params, proto: Protocol):  # type: ignore[no-untyped-def]
    def node(i: int, n: Node) -> str:
        role = rules.ROLE_NAMES[n.role]
        v = f"voter {i} ({role}, epoch {n.epoch})"
        if n.epoch < rules.last_epoch(n.log):
            return f"{v} holds an entry of the later epoch {rules.last_epoch(n.log)}"
        if not (NO_ID <= n.hw <= n.leo):
            return f"{v} has HW {n.hw} outside its log (log end offset {n.leo})"
        if n.epoch > p.max_epoch:
            return f"{v} is past max_epoch {p.max_epoch}"
        if n.observer and n.role not in (UNATTACHED, FOLLOWER):
            return f"{v} is an observer (it lost its disk) but not Unattached or Follower"
        if n.role in (PROSPECTIVE, CANDIDATE):
            if len(n.votes) != p.n or n.votes[i] != GRANTED:
                return f"{v} does not count its own vote (votes {list(n.votes)})"
            if n.role == CANDIDATE and (n.voted != i or n.leader != NO_ID):
                return f"{v} voted for {n.voted} and knows leader {n.leader}"
        elif n.votes:
            return f"{v} keeps an election's votes"
        if n.role == LEADER:
            if n.leader != i or len(n.end_offsets) != p.n or n.end_offsets[i] != n.leo:
                return f"{v} has leader {n.leader} and end offsets {list(n.end_offsets)} (its LEO is {n.leo})"
            if proto.leader_change_record and n.log[n.epoch_start] != (n.epoch, LEADER_CHANGE):
                return f"{v} has no LeaderChange entry of its epoch at its epoch start offset {n.epoch_start}"
        elif n.end_offsets or n.epoch_start != NO_ID:
            return f"{v} keeps a leader's epoch start offset {n.epoch_start} or end offsets {list(n.end_offsets)}"
        if n.role == FOLLOWER and n.leader in (NO_ID, i):
            return f"{v} follows leader {n.leader}"
        if n.role == RESIGNED and n.leader != i:
            return f"{v} has resigned but names leader {n.leader}"
        if n.role == UNATTACHED and n.leader != NO_ID:
            return f"{v} is Unattached but knows leader {n.leader}"
        return ""

    def explain(s: KraftState) -> str:
        if len(s.network) > p.max_in_flight:
            return f"{len(s.network)} messages are in flight, past max_in_flight {p.max_in_flight}"
        if len(s.nodes) != p.n:
            return f"{len(s.nodes)} nodes where the configuration has {p.n} voters"
        return next((x for x in (node(i, n) for i, n in enumerate(s.nodes)) if x), "")

    return explain


def _no_fatal_error_witness(s: KraftState) -> str:
    what = {1: "was told to truncate below its HW (KafkaException)",
            2: "saw its HW go backwards (IllegalStateException)"}
    return "; ".join(f"voter {node} " + what.get(code, f"hit fatal error {code}") for node, code in s.history.fatal)


def explanations(p: Params, proto: Protocol) -> dict:  # type: ignore[type-arg]
    """Per invariant, a pure `explain(state) -> str` naming the voter, offset or epoch that breaks
    it in `state` ("" when it cannot tell): the end of a counterexample's text."""
    return {
        "election_safety": _election_safety_witness,
        "leader_completeness": _leader_completeness_witness,
        "log_matching": _log_matching_witness,
        "committed_kept": _committed_kept_witness(p),
        "leader_hw_monotonic": _leader_hw_monotonic_witness,
        "state_sanity": _state_sanity_witness(p, proto),
        "no_fatal_error": _no_fatal_error_witness,
        "leader_not_disrupted": disruption.witness,
    }
