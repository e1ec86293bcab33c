"""Liveness of the replication model: which actions are fair (and where), the temporal
properties, and the fair actions a bound of the configuration blocks. spec/replication.md
("Liveness") gives the Kafka mechanism behind each fairness choice.

Only healing actions are fair: message delivery, fetching, metadata replay, unfencing, the
leader's ISR shrink and the controller's detection of a dead broker. Faults (Crash, LossyCrash,
ControlledShutdown, DropMessage, the fencing of a *live* broker) never are, and neither is
Restart nor Produce: Kafka's guarantees are stated for brokers that never come back and for
clients that stop writing, so a behaviour in which a crashed broker stays down forever is fair.
"""
from __future__ import annotations

from dataclasses import replace
from itertools import combinations
from typing import Any, Callable

from model.interface import Fairness, Property, leads_to, strong_fairness, weak_fairness
from model.replication import network
from model.replication.broker_actions import leader_progress
from model.replication.context import Context
from model.replication.params import Params
from model.replication.properties import current_leader
from model.replication.state import AlterPartitionRequest, AlterPartitionResponse, State

# --- where the fair actions are forced ----------------------------------------------------------


def broker_down(s: State, a: Any) -> bool:
    """the broker is down (its heartbeats stopped), not a live broker losing its heartbeats"""
    return not s.brokers[a.broker].alive


def follower_cannot_catch_up(s: State, a: Any) -> bool:
    """the follower is down or does not follow this leader in its leader epoch, so no fetch of it
    will reach the leader's LEO"""
    f, lb = s.brokers[a.follower], s.brokers[a.leader]
    return not f.alive or f.leader != a.leader or f.leader_epoch != lb.leader_epoch


DELIVERY = ("a request or response in flight reaches its live receiver: TCP delivers it, and a"
            " broken connection is resent by NetworkClient's request timeout and retry (the"
            " fetcher's next Fetch, NodeToControllerRequestThread for AlterPartition)")

FAIRNESS: tuple[Fairness, ...] = tuple(
    weak_fairness(kind, DELIVERY)
    for kind in ("HandleFetch", "HandleFetchResponse", "HandleAlterPartition", "HandleAlterPartitionResponse")
) + (
    weak_fairness("SendFetch", "a follower's fetcher thread sends its next Fetch as soon as none is outstanding"
                  " (AbstractFetcherThread.doWork, maybeFetch; ReplicaFetcherThread.buildFetch)"),
    weak_fairness("ReplayMetadata", "every live broker keeps fetching the metadata log from the KRaft quorum and"
                  " publishes each batch (BrokerMetadataPublisher -> ReplicaManager.applyDelta)"),
    weak_fairness("CommitMetadata", "the KRaft quorum keeps replicating the active controller's writes and"
                  " commits them (KafkaRaftClient: the leader's high watermark advances once a majority of voters"
                  " fetched them)"),
    weak_fairness("UnfenceBroker", "a live fenced broker keeps sending BrokerHeartbeat; once caught up the"
                  " controller unfences it (BrokerHeartbeatManager.calculateNextBrokerState,"
                  " ReplicationControlManager.handleBrokerUnfenced)"),
    weak_fairness("FenceBroker", "a broker that stopped heartbeating is fenced when its session expires"
                  " (broker.session.timeout.ms: BrokerHeartbeatManager.findOneStaleBroker,"
                  " QuorumController's fencing of stale brokers); the fencing of a live broker is a fault",
                  broker_down),
    strong_fairness("ShrinkIsr", "the leader's ISR-expiration task runs every replica.lag.time.max.ms / 2 and"
                    " drops an ISR member not caught up within replica.lag.time.max.ms"
                    " (ReplicaManager.maybeShrinkIsr, Partition.maybeShrinkIsr, getOutOfSyncReplicas)",
                    follower_cannot_catch_up),
)

FAIR_KINDS = frozenset(f.action for f in FAIRNESS)
FAULT_KINDS = ("Crash", "LossyCrash", "ControlledShutdown", "DropMessage", "FenceBroker")

# --- the timely model -----------------------------------------------------------------------------


def recompute_hw(s: State, ctx: Context) -> State:
    """Every broker acting as leader recomputes its HW (`leader_progress`). Kafka recomputes it
    only when something reaches the partition (Partition.maybeIncrementLeaderHW from a follower
    fetch, an append, makeLeader, an AlterPartition answer), not when a broker registration
    changes; a waiting producer's retry after request.timeout.ms is such an append. The liveness
    pass explores only behaviours in which that next trigger comes before anything else."""
    for b, x in enumerate(s.brokers):
        if x.alive and x.leader == b:
            s = leader_progress(s, ctx, b)
    return s


def resend_alter_partition(s: State, message: Any, t: State) -> State:
    """The loss of an AlterPartition request or response, in the timely model: the connection to
    the controller broke and NodeToControllerRequestThread sends the request again (AlterPartition
    has no retry deadline: AlterPartitionManager). `t` is the state after the loss (its count
    kept); the request is back in flight."""
    if isinstance(message, AlterPartitionRequest):
        request = message
    elif isinstance(message, AlterPartitionResponse):
        request = message.request
        if not s.brokers[request.leader].alive:
            return t  # the sender is gone with its connection
    else:
        return t
    return network.send(t, request)


# --- temporal properties ------------------------------------------------------------------------


def holds_value(s: State, b: int, v: int) -> bool:
    return any(e.value == v for e in s.brokers[b].log)


def acked_on_live_isr(p: Params, v: int) -> Callable[[State], bool]:
    """Value v is on every live member of the controller's ISR, or min ISR replicas lost their
    unflushed records (then Kafka promises nothing, as in `no_acked_record_lost`)."""
    def q(s: State) -> bool:
        if s.history.lossy_crashes >= p.min_isr:
            return True
        return all(holds_value(s, b, v) for b in s.controller.partition.isr if s.brokers[b].alive)

    return q


def produce_waits(p: Params) -> Callable[[State], bool]:
    """A produce request waits in purgatory while the controller's ISR has min ISR members."""
    return lambda s: bool(s.history.pending) and len(s.controller.partition.isr) >= p.min_isr


def live_candidate(s: State) -> bool:
    """Some live broker is in the controller's ISR or ELR."""
    reg = s.controller.partition
    return any(s.brokers[b].alive for b in reg.isr + reg.elr)


def leaderless(s: State) -> bool:
    """No broker acts as the controller's leader, and a live ISR or ELR member could."""
    return current_leader(s) is None and live_candidate(s)


def live_fenced(b: int) -> Callable[[State], bool]:
    return lambda s: s.brokers[b].alive and s.controller.brokers[b].fenced


def behind_metadata(b: int) -> Callable[[State], bool]:
    return lambda s: s.brokers[b].alive and s.brokers[b].meta < s.controller.committed_epoch


def properties(p: Params) -> list[Property]:
    """The temporal properties (one per value and per broker where they name one)."""
    out = [
        leads_to("produce_completes", produce_waits(p), lambda s: not produce_waits(p)(s),
                 "a produce request (acks=all) does not wait forever while the ISR has min.insync.replicas"
                 " members: it is acked or fails (NOT_ENOUGH_REPLICAS_AFTER_APPEND, leader change); one that"
                 " waits forever is what Kafka reports as REQUEST_TIMED_OUT (DelayedProduce expiry)"),
        leads_to("leader_elected", leaderless, lambda s: not leaderless(s),
                 "a partition with a live ISR or ELR member gets a leader that acts as one (KIP-966)"),
    ]
    for v in range(p.values):
        out.append(leads_to(f"acked_{v}_on_live_isr", lambda s, v=v: v in s.history.acked, acked_on_live_isr(p, v),
                            f"once value {v} is acked, every live ISR member holds it (unless min ISR replicas"
                            " lost unflushed records)"))
    for b in range(p.n):
        out.append(leads_to(f"unfenced_{b}", live_fenced(b), lambda s, f=live_fenced(b): not f(s),
                            f"broker {b}, live and fenced, is unfenced (or goes down)"))
        out.append(leads_to(f"replays_latest_{b}", behind_metadata(b), lambda s, f=behind_metadata(b): not f(s),
                            f"broker {b}, live, replays the latest partition record (or goes down)"))
    return out


# --- bounds ---------------------------------------------------------------------------------------

BOUNDS = ("max_leader_epoch", "max_partition_epoch", "max_in_flight")


def lifted_params(p: Params) -> list[tuple[str, Params]]:
    """The parameters with bounds raised past anything a state holds: one at a time, then every
    combination, smallest first (an election record raises both epochs, so it may need both). A
    name joins the lifted bounds with '+'."""
    lifted = {
        "max_leader_epoch": {"max_leader_epoch": p.max_leader_epoch + 1},
        "max_partition_epoch": {"max_partition_epoch": p.max_partition_epoch + 1},
        "max_in_flight": {"max_in_flight": p.max_in_flight + 1},
    }
    out = []
    for size in range(1, len(lifted) + 1):
        for names in combinations(lifted, size):
            changes = {k: v for name in names for k, v in lifted[name].items()}
            out.append(("+".join(names), replace(p, **changes)))
    return out
