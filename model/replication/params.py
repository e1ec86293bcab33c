"""Configuration keys and presets of the replication model, and the derived parameters."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from model.interface import ConfigKey

CONFIG_KEYS = (
    ConfigKey("brokers", int, 3, "number of brokers", 1, 5),
    ConfigKey("replication_factor", int, 0, "the partition's first replicas are brokers 0..replication_factor-1; "
              "0: every broker (at most brokers)", 0, 5, special=((0, "every broker"),)),
    ConfigKey("reassignments", int, 0, "budget of partition reassignments an operator asks for "
              "(AlterPartitionReassignments), one at a time", 0, 3),
    ConfigKey("values", int, 1, "distinct values the producer writes (acks=all)", 0, 4),
    ConfigKey("max_leader_epoch", int, 1, "no partition change may raise the leader epoch above this", 0, 10),
    ConfigKey("max_partition_epoch", int, 3, "no partition change may raise the partition epoch above this", 0, 20),
    ConfigKey("crashes", int, 2, "budget of broker crashes and controlled shutdowns (lossy ones included)", 0, 5),
    ConfigKey("lossy_crashes", int, 1, "of those, crashes that lose the unflushed suffix of the log", 0, 5),
    ConfigKey("fences", int, 0, "budget of fencings of a live broker (lost heartbeats); -1: unbounded", -1, 5,
              special=((-1, "unbounded"),)),
    ConfigKey("losses", int, 1, "budget of messages the network loses; -1: unbounded", -1, 10,
              special=((-1, "unbounded"),)),
    ConfigKey("max_faults", int, 2, "budget of faults of every kind together: crashes, fencings of live brokers and "
              "lost messages (a kind with budget -1 is not counted); -1: no joint budget", -1, 15,
              special=((-1, "no joint budget"),)),
    ConfigKey("max_in_flight", int, 2, "messages in flight at once: Fetch and AlterPartition requests and responses", 1, 10),
    ConfigKey("min_insync_replicas", int, 2, "min.insync.replicas", 1, 5),
    ConfigKey("elr_enabled", bool, True, "eligible leader replicas (KIP-966)", None, None),
    ConfigKey("unclean_leader_election", bool, False, "unclean.leader.election.enable", None, None),
    ConfigKey("preferred_elections", bool, True, "the controller elects the preferred replica when it can "
              "(auto.leader.rebalance.enable, or ElectLeaders PREFERRED)", None, None),
    ConfigKey("controller_failovers", int, 0, "budget of controller failovers: with 1 or more the metadata log is "
              "replicated by a KRaft quorum, a controller write commits later (CommitMetadata) and a failover "
              "loses the writes not yet committed; 0: every write commits at once", 0, 3),
    ConfigKey("unclean_elect_leaders", bool, False, "an operator may ask for an unclean election of a leaderless "
              "partition (ElectLeaders UNCLEAN): acked records may be lost, by design", None, None),
)

_STALE_FETCH: Mapping[str, Any] = {
    "brokers": 2, "values": 1, "max_leader_epoch": 1, "max_partition_epoch": 2, "crashes": 1, "lossy_crashes": 1,
    "fences": 1, "losses": 1, "max_faults": -1, "max_in_flight": 3, "min_insync_replicas": 1,
}

PRESETS: Mapping[str, Mapping[str, Any]] = {
    "smoke": {"brokers": 2, "values": 1, "max_leader_epoch": 1, "max_partition_epoch": 2,
              "crashes": 1, "lossy_crashes": 1, "fences": 1, "losses": 1, "max_faults": -1,
              "max_in_flight": 2, "min_insync_replicas": 1},
    # smoke with a third message in flight: a stale Fetch can wait while a new one is served
    "stale-fetch": _STALE_FETCH,
    # stale-fetch on a KRaft quorum: a failover may forget an unfencing the leader has not read yet
    "stale-fetch-failover": {**_STALE_FETCH, "controller_failovers": 1},
    "default": {},
    # smoke with a second value: a leader can write over a record another replica still holds
    "two-values": {"brokers": 2, "values": 2, "max_leader_epoch": 1, "max_partition_epoch": 2,
                   "crashes": 1, "lossy_crashes": 1, "fences": 1, "losses": 1, "max_faults": -1, "max_in_flight": 2,
                   "min_insync_replicas": 1},
    # three leader epochs over three brokers, three values, two crashes, one message in flight:
    # a follower can hold an epoch its new leader never had. Preferred elections off: its two
    # partition epochs leave none after a failover (BFS never enables one), and so the proofs
    # run here (spec/proofs.md) encode the whole model
    "epoch-lookup": {"brokers": 3, "values": 3, "max_leader_epoch": 2, "max_partition_epoch": 2,
                     "crashes": 2, "lossy_crashes": 0, "fences": 0, "losses": 0, "max_faults": -1, "max_in_flight": 1,
                     "min_insync_replicas": 1, "preferred_elections": False},
    # two brokers, min ISR 2, one fencing and one (lossy) crash: the follower leaves the ISR, then
    # the last ISR member loses its unflushed records
    "last-replica-standing": {"brokers": 2, "values": 1, "max_leader_epoch": 2, "max_partition_epoch": 4,
                              "crashes": 1, "lossy_crashes": 1, "fences": 1, "losses": 0, "max_faults": -1, "max_in_flight": 2,
                              "min_insync_replicas": 2},
    # two fencings of live brokers and no crash: the leader loses and regains leadership while the
    # intermediate leader, fenced but alive, stays a zombie; three leader epochs, one value
    "zombie-leader": {"brokers": 3, "values": 1, "max_leader_epoch": 2, "max_partition_epoch": 3,
                      "crashes": 0, "lossy_crashes": 0, "fences": 2, "losses": 0, "max_faults": -1, "max_in_flight": 2,
                      "min_insync_replicas": 2},
    # three brokers, two values, one crash: a new leader writes value 1 at the offset where a
    # surviving ISR follower holds value 0 of the old epoch, and the follower must truncate it
    "three-replica-conflict": {"brokers": 3, "values": 2, "max_leader_epoch": 1, "max_partition_epoch": 2,
                               "crashes": 1, "lossy_crashes": 0, "fences": 0, "losses": 0, "max_faults": -1,
                               "max_in_flight": 2, "min_insync_replicas": 2},
    # two brokers, min ISR 2, two crashes that lose nothing: both leave ISR and ELR (unclean
    # restarts), and the last known leader (KIP-966 LastKnownELR) is elected, or an ELR member after a
    # controlled shutdown
    "last-known-leader": {"brokers": 2, "values": 1, "max_leader_epoch": 2, "max_partition_epoch": 6,
                          "crashes": 2, "lossy_crashes": 0, "fences": 0, "losses": 0, "max_faults": -1,
                          "max_in_flight": 2, "min_insync_replicas": 2},
    # the default before 2026-11-25: one crash (which may be lossy), no message loss; the replication
    # proofs run here (spec/proofs.md)
    "one-crash": {"crashes": 1, "losses": 0, "max_faults": -1},
    # two brokers, two reassignments, one crash that loses nothing: a replica is removed (and
    # deletes its log) and added back, or the leader moves off a removed replica; min ISR 1
    "reassignment": {"brokers": 2, "values": 1, "max_leader_epoch": 2, "max_partition_epoch": 4,
                     "crashes": 1, "lossy_crashes": 0, "fences": 0, "losses": 0, "max_faults": -1,
                     "max_in_flight": 2, "min_insync_replicas": 1, "reassignments": 2},
    # one crash, a lost heartbeat and a lost message, with no joint budget: past 8 million
    # states (not a five-minute run; see spec/replication.md)
    "faults": {"crashes": 1, "fences": 1, "losses": 1, "max_faults": -1},
    # the controller quorum under the partition: two brokers, min ISR 1, one crash and one
    # controller failover that loses the partition changes not yet committed
    "controller-failover": {"brokers": 2, "values": 1, "max_leader_epoch": 1, "max_partition_epoch": 3,
                            "crashes": 1, "lossy_crashes": 0, "fences": 0, "losses": 0, "max_faults": -1,
                            "max_in_flight": 2, "min_insync_replicas": 1, "controller_failovers": 1},
}


def clamps(c: Mapping[str, Any]) -> dict[str, tuple[Any, str]]:
    """The keys the model uses at another value than given, as Kafka does (ModelDefinition.clamps)."""
    out: dict[str, tuple[Any, str]] = {}
    if c["min_insync_replicas"] > c["brokers"]:
        out["min_insync_replicas"] = (c["brokers"], "Kafka caps it at the replication factor, brokers")
    return out


@dataclass(frozen=True)
class Params:
    """The configuration, as the actions read it."""

    n: int
    replication_factor: int  # of the first replica set, 1..n
    reassignments: int
    values: int
    max_leader_epoch: int
    max_partition_epoch: int
    crashes: int
    lossy_crashes: int
    fences: int
    losses: int
    max_faults: int
    max_in_flight: int
    min_isr: int  # effective: min(min.insync.replicas, replication factor)
    elr: bool
    unclean: bool
    preferred_elections: bool
    unclean_elect_leaders: bool
    controller_failovers: int = 0  # > 0: writes commit later, and failovers lose the uncommitted ones

    @classmethod
    def from_config(cls, c: Mapping[str, Any]) -> "Params":
        if c["lossy_crashes"] > c["crashes"]:  # a lossy crash is one of the crashes
            raise ValueError(f"lossy_crashes = {c['lossy_crashes']} is more than crashes = {c['crashes']} "
                             "(a lossy crash is one of the crashes; lower lossy_crashes too)")
        if c["replication_factor"] > c["brokers"]:
            raise ValueError(f"replication_factor = {c['replication_factor']} is more than brokers = {c['brokers']} "
                             "(each replica is on its own broker)")
        return cls(
            n=c["brokers"], replication_factor=c["replication_factor"] or c["brokers"],
            reassignments=c["reassignments"], values=c["values"], max_leader_epoch=c["max_leader_epoch"],
            max_partition_epoch=c["max_partition_epoch"], crashes=c["crashes"],
            lossy_crashes=c["lossy_crashes"], fences=c["fences"], losses=c["losses"],
            max_faults=c["max_faults"], max_in_flight=c["max_in_flight"],
            min_isr=min(c["min_insync_replicas"], c["brokers"]), elr=c["elr_enabled"],
            unclean=c["unclean_leader_election"], preferred_elections=c["preferred_elections"],
            unclean_elect_leaders=c["unclean_elect_leaders"], controller_failovers=c["controller_failovers"],
        )

    def fault_left(self, h: Any) -> bool:
        """The joint budget `max_faults` allows one more fault, given the history's counts."""
        return self.max_faults < 0 or h.crashes + h.fences + h.losses < self.max_faults
