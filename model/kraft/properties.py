"""The kraft model's properties: safety invariants (`always`) and reachability witnesses
(`sometimes`), each a plain pure predicate over a state. Sources: bug-catalogue.md invariant 8,
protocol-rules.md section 7, the Raft paper (5.2 election safety, 5.3 log matching, 5.4 leader
completeness)."""
from __future__ import annotations

from model.interface import Property, always, sometimes
from model.kraft import rules
from model.kraft.params import Params
from model.kraft.rules import (
    CANDIDATE, FOLLOWER, GRANTED, LEADER, NO_ID, PROSPECTIVE, RESIGNED, UNATTACHED,
)
from model.kraft.state import (
    CHECK_QUORUM_RESIGN, DATA, ELECTED_AFTER_RESTART, LEADER_CHANGE, TRUNCATED, KraftState, Node,
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


def log_matching(s: KraftState) -> bool:
    """Two logs with an entry of the same epoch at the same offset are identical up to it."""
    logs = [n.log for n in s.nodes]
    for a in range(len(logs)):
        for b in range(a + 1, len(logs)):
            x, y = logs[a], logs[b]
            for k in range(min(len(x), len(y)) - 1, -1, -1):
                if x[k][0] == y[k][0]:
                    if x[:k + 1] != y[:k + 1]:
                        return False
                    break
    return True


def committed_kept(p: Params):  # type: ignore[no-untyped-def]
    """No two entries are ever committed at one offset, and while fewer than a majority of the
    voters lost their disks, every committed entry is still held by at least
    majority - (disks lost) replicas (it was on a majority when committed)."""
    quorum = rules.majority(p.n)

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
        always("election_safety", election_safety, "at most one leader per epoch (Raft 5.2)"),
        always("leader_completeness", leader_completeness,
               "every leader holds every entry committed in an earlier epoch (Raft 5.4)"),
        always("log_matching", log_matching,
               "logs with the same (offset, epoch) entry agree up to it (Raft 5.3)"),
        always("committed_kept", committed_kept(p),
               "committed entries are never replaced, and stay on a majority minus the disks lost"),
        always("leader_hw_monotonic", leader_hw_monotonic,
               "the HW never decreases on a leader and stays within its log"),
        always("state_sanity", state_sanity(p, proto), "role/state structure and bounds"),
        always("no_fatal_error", no_fatal_error, "no Kafka IllegalStateException/KafkaException path is hit"),
        sometimes("leader_elected", lambda s: any(n.role == LEADER for n in s.nodes), "some voter is leader"),
    ]
    if proto.pre_vote and p.n > 1:
        out.append(sometimes(
            "prevote_lost",
            lambda s: any(n.role == PROSPECTIVE and rules.is_vote_rejected(n.votes) for n in s.nodes),
            "a Prospective's pre-vote was rejected by a majority"))
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
    return out
