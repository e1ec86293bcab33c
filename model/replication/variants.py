"""Protocol variants: each switches one Kafka 4.1 safety mechanism off (bug-catalogue.md)."""
from __future__ import annotations

from dataclasses import dataclass

from model.interface import Variant, rules_of

VARIANTS = (
    Variant("kafka-4.1", "Kafka 4.1 as released: every safety mechanism on"),
    Variant(
        "truncate-to-hw",
        "a follower truncates its log to its own HW when it becomes a follower or restarts (pre-KIP-101)",
        expect="candidate_completeness",
        bug_id="R1",
        reference="KIP-101",
        switches_off=("truncate_by_epoch",),
    ),
    Variant(
        "truncate-to-hw-diverge",
        "R1's rules (truncate to the own HW, Fetch without a last fetched epoch) seen through log matching: "
        "a replica that dropped a committed record is elected and writes another at that offset, the old "
        "leader truncates only to its HW and keeps the first: the logs differ below both HWs",
        expect="log_matching",
        bug_id="R2",
        reference="KIP-101",
        preset="epoch-lookup",
        invariants=("log_matching",),
        switches_off=("truncate_by_epoch",),
    ),
    Variant(
        "hw-ignores-min-isr",
        "the leader advances the HW while the committed ISR is below min.insync.replicas",
        expect="candidate_completeness",
        bug_id="R12",
        reference="KIP-966 (strict min ISR)",
        switches_off=("strict_min_isr",),
    ),
    Variant(
        "no-broker-epoch-in-alter-partition",
        "the controller does not compare the ISR members' broker epochs in AlterPartition",
        expect="candidate_completeness",
        bug_id="R9",
        reference="KIP-903, KAFKA-14139",
        switches_off=("member_broker_epochs",),
    ),
    Variant(
        "epoch-lookup-first-larger",
        "OffsetsForLeaderEpoch answers (asked epoch, start of the next larger epoch) instead of (largest "
        "epoch <= asked, its end offset): a follower keeps a suffix of an epoch the leader never had (pre-KIP-279)",
        expect="log_matching",
        bug_id="R3",
        reference="KIP-279, LeaderEpochFileCache.endOffsetFor",
        preset="epoch-lookup",
        switches_off=("epoch_lookup_floor",),
    ),
    Variant(
        "isr-expand-without-leso",
        "the leader adds a follower to the ISR once its LEO reaches the HW, even below the leader epoch start offset",
        expect="candidate_completeness",
        bug_id="R5",
        reference="Partition.isFollowerInSync (leaderEpochStartOffsetOpt)",
        switches_off=("check_leso",),
    ),
    Variant(
        "record-fetch-on-divergence",
        "the leader records a follower's fetch offset even when it answers divergingEpoch",
        expect="candidate_completeness",
        bug_id="R6",
        reference="KAFKA-13141, Partition.fetchRecords",
        preset="two-values",
        switches_off=("skip_position_on_divergence",),
    ),
    Variant(
        "hw-without-maximal-isr",
        "the HW waits only for the committed ISR, not for a member an in-flight AlterPartition adds (pre-KIP-497)",
        expect="candidate_completeness",
        bug_id="R7",
        reference="KIP-497 (maximal ISR), Partition.maybeIncrementLeaderHW",
        preset="smoke",
        switches_off=("hw_maximal_isr",),
    ),
    Variant(
        "fenced-may-join-isr",
        "a fenced or shutting-down broker is ISR-eligible, at the leader and at the controller (pre-KIP-841)",
        expect="structural",
        bug_id="R8",
        reference="KIP-841, ReplicationControlManager.validateAlterPartitionData, Partition.isReplicaIsrEligible",
        preset="smoke",
        switches_off=("member_fenced_check",),
    ),
    Variant(
        "accept-stale-broker-epoch-fetch",
        "the leader takes a Fetch from a follower's previous incarnation (older broker epoch) as its position",
        expect="candidate_completeness",
        bug_id="R10",
        reference="KAFKA-15221, Replica.updateFetchStateOrThrow",
        preset="stale-fetch",
        switches_off=("stale_fetch_check",),
    ),
    Variant(
        "no-elr",
        "Kafka 3.x: eligible leader replicas off, the last ISR member stays in the ISR when it fails; it "
        "loses committed records in a crash, is re-elected and the others truncate to it (a configuration: elr_enabled = false)",
        expect="candidate_completeness",
        bug_id="R11",
        reference="KIP-966 (last replica standing)",
        preset="last-replica-standing",
        settings=(("elr_enabled", False),),
    ),
    Variant(
        "unclean-restart-keeps-elr",
        "a broker that restarts after an unclean shutdown stays in the ELR (and may enter it) and can be elected from it",
        expect="candidate_completeness",
        bug_id="R13",
        reference="KIP-966, KAFKA-15586, ReplicationControlManager.handleBrokerUncleanShutdown",
        switches_off=("unclean_shutdown_leaves_elr",),
    ),
    Variant(
        "unclean-election",
        "unclean.leader.election.enable = true: an out-of-sync replica may be elected and acked data is lost, "
        "by design (a configuration)",
        expect="candidate_completeness",
        bug_id="R17",
        reference="unclean.leader.election.enable, PartitionChangeBuilder (UNCLEAN election)",
        settings=(("unclean_leader_election", True),),
        preset="smoke",
    ),
    Variant(
        "elect-leaders-unclean",
        "an operator asks for an unclean election of a leaderless partition (ElectLeaders UNCLEAN, "
        "kafka-leader-election.sh --election-type unclean): a replica outside ISR and ELR is elected and acked "
        "data is lost, by design, with unclean.leader.election.enable off (a configuration)",
        expect="candidate_completeness",
        bug_id="R20",
        reference="ReplicationControlManager.electLeader (ElectionType.UNCLEAN), KIP-460",
        settings=(("unclean_elect_leaders", True),),
        preset="last-replica-standing",
    ),
    Variant(
        "no-current-epoch-in-fetch",
        "a Fetch carries no current leader epoch (pre-KIP-320): a follower still in an old epoch is served by "
        "its leader re-elected in a later one and counted toward the HW, then follows a zombie leader of an "
        "intermediate epoch, whose OFFSET_OUT_OF_RANGE truncates the committed record while it stays in the ISR",
        expect="candidate_completeness",
        bug_id="R4",
        reference="KIP-320, Partition.fetchRecords (FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH)",
        preset="zombie-leader",
        switches_off=("current_leader_epoch",),
    ),
    Variant(
        "hw-waits-for-ineligible",
        "the leader's HW waits for every caught-up replica outside the ISR, eligible or not (pre-KAFKA-15021): "
        "a follower the controller removed from the ISR when it was fenced or shut down keeps the HW below a "
        "new record, and the produce waits until it times out",
        expect="produce_completes",
        bug_id="R18",
        reference="KAFKA-15021, KAFKA-15109, Partition.maybeIncrementLeaderHW (isReplicaIsrEligible)",
        preset="smoke",
        switches_off=("hw_skips_ineligible",),
    ),
    Variant(
        "reassignment-keeps-leader-epoch",
        "removing a replica does not bump the leader epoch: a Fetch the removed replica sent before it "
        "deleted its log reaches the leader after the replica is added back, in the same leader epoch, and "
        "the leader takes its old offset as the new replica's position and adds the emptied replica to the ISR",
        expect="candidate_completeness",
        bug_id="R19",
        reference="PartitionChangeBuilder.triggerLeaderEpochBumpForReplicaReassignmentIfNeeded, Partition.makeLeader",
        preset="reassignment",
        switches_off=("reassignment_epoch_bump",),
    ),
    Variant(
        "reassignment-leaves-elr",
        "Kafka 4.1's rules with min.insync.replicas 2 (a configuration): a reassignment that removes a "
        "replica while the ISR it leaves is below min ISR puts the removed replica, which deletes its log, "
        "into the ELR (PartitionChangeBuilder.maybePopulateTargetElr draws the ELR from the old ISR and "
        "never looks at the target replicas), so the ELR names a broker that is not a replica",
        expect="structural",
        bug_id="H3",
        reference="PartitionChangeBuilder.maybePopulateTargetElr, completeReassignmentIfNeeded, found by kcheck",
        settings=(("min_insync_replicas", 2),),
        preset="reassignment",
    ),
    Variant(
        "response-before-metadata",
        "drops the timing assumption that a leader replays its AlterPartition's metadata record before "
        "the response: Partition.makeLeader at an equal partition epoch then clears a newer pending "
        "expansion, and the HW can pass a replica the controller is about to add",
        expect="candidate_completeness",
        bug_id="H1",
        reference="Partition.makeLeader (partition epoch >= local), found by kcheck",
        preset="smoke",
        switches_off=("metadata_before_response",),
    ),
    Variant(
        "alter-partition-response-before-commit",
        "the controller answers an AlterPartition as soon as it writes the change, before the KRaft quorum "
        "commits it: the leader acts on an ISR that a controller failover then forgets",
        expect="quorum_superset",
        bug_id="C1",
        reference="QuorumController.ControllerWriteEvent (the purgatory waits for the commit), renounce",
        preset="controller-failover",
        switches_off=("response_after_commit",),
    ),
    Variant(
        "replay-uncommitted-metadata",
        "brokers replay the active controller's partition-change records before the KRaft quorum commits "
        "them: a broker acts on a leader or ISR that a controller failover then forgets",
        expect="quorum_superset",
        bug_id="C2",
        reference="KafkaRaftClient (listeners see committed batches only), MetadataLoader",
        preset="controller-failover",
        switches_off=("replay_committed_only",),
    ),
    Variant(
        "read-uncommitted-registrations",
        "the leader reads broker registrations (fenced, broker epoch) from the active controller's "
        "uncommitted writes instead of its committed metadata image: it asks to add a restarted broker "
        "on an unfencing the quorum has not committed, a failover forgets the unfencing, and once the "
        "controller unfences the broker again it accepts the held request: the broker, which lost the "
        "acked record in its crash, joins the ISR",
        expect="candidate_completeness",
        bug_id="C3",
        reference="KRaftMetadataCache (brokers' metadata image: committed records only), Replica.updateFetchStateOrThrow",
        preset="stale-fetch-failover",
        switches_off=("committed_registrations",),
    ),
    Variant(
        "fence-with-stale-fetch-queued",
        "drops the timing assumption that a restarted broker is not fenced again while a Fetch from its "
        "previous incarnation still waits at the leader: Replica.updateFetchStateOrThrow checks the broker "
        "epoch only of unfenced brokers (getAliveBrokerEpoch), so the stale Fetch passes, the leader's HW "
        "counts the pending ISR member's old LEO, and the controller then adds the emptied replica",
        expect="candidate_completeness",
        bug_id="H2",
        reference="Replica.updateFetchStateOrThrow, KRaftMetadataCache.getAliveBrokerEpoch (KAFKA-15221 fix), found by kcheck",
        preset="stale-fetch",
        switches_off=("no_fence_with_stale_fetch",),
    ),
)


@dataclass(frozen=True)
class Rules:
    """The switches the actions consult; all True is Kafka 4.1."""

    truncate_by_epoch: bool = True  # KIP-101: never truncate to the HW; Fetch carries the last epoch
    strict_min_isr: bool = True  # KIP-966: no HW advance below min ISR
    member_broker_epochs: bool = True  # KIP-903: AlterPartition carries member broker epochs
    metadata_before_response: bool = True  # timing assumption H1, see spec/replication.md
    no_fence_with_stale_fetch: bool = True  # timing assumption H2, see spec/replication.md
    epoch_lookup_floor: bool = True  # KIP-279: answer (largest epoch <= asked, its end offset)
    check_leso: bool = True  # ISR expansion needs LEO >= leader epoch start offset
    skip_position_on_divergence: bool = True  # KAFKA-13141: no follower position on divergingEpoch
    hw_maximal_isr: bool = True  # KIP-497: the HW waits for the maximal ISR
    member_fenced_check: bool = True  # KIP-841: fenced / shutting-down brokers are ISR-ineligible
    stale_fetch_check: bool = True  # KAFKA-15221: a Fetch with an old broker epoch is refused
    unclean_shutdown_leaves_elr: bool = True  # KAFKA-15586: unclean shutdown removes from the ELR
    current_leader_epoch: bool = True  # KIP-320: a Fetch with another leader epoch is fenced
    hw_skips_ineligible: bool = True  # KAFKA-15021: the HW waits for no caught-up but ISR-ineligible replica
    reassignment_epoch_bump: bool = True  # a replica leaving the replica set bumps the leader epoch
    response_after_commit: bool = True  # the controller answers once the quorum commits the write
    replay_committed_only: bool = True  # brokers replay only committed metadata records
    committed_registrations: bool = True  # brokers read broker registrations from committed records

    @classmethod
    def of(cls, variant: str) -> "Rules":
        """The switches of `variant`, from its `switches_off` in VARIANTS."""
        return rules_of(cls, VARIANTS, variant, "replication")
