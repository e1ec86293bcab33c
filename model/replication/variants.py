"""Protocol variants: each switches one Kafka 4.1 safety mechanism off (bug-catalogue.md)."""
from __future__ import annotations

from dataclasses import dataclass

from model.interface import Variant

VARIANTS = (
    Variant("kafka-4.1", "Kafka 4.1 as released: every safety mechanism on"),
    Variant(
        "truncate-to-hw",
        "a follower truncates its log to its own HW when it becomes a follower or restarts (pre-KIP-101)",
        expect="candidate_completeness",
        bug_id="R1",
        reference="KIP-101",
    ),
    Variant(
        "hw-ignores-min-isr",
        "the leader advances the HW while the committed ISR is below min.insync.replicas",
        expect="candidate_completeness",
        bug_id="R12",
        reference="KIP-966 (strict min ISR)",
    ),
    Variant(
        "no-broker-epoch-in-alter-partition",
        "the controller does not compare the ISR members' broker epochs in AlterPartition",
        expect="candidate_completeness",
        bug_id="R9",
        reference="KIP-903, KAFKA-14139",
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
    ),
)


@dataclass(frozen=True)
class Rules:
    """The switches the actions consult; all True is Kafka 4.1."""

    truncate_by_epoch: bool = True  # KIP-101: never truncate to the HW
    strict_min_isr: bool = True  # KIP-966: no HW advance below min ISR
    member_broker_epochs: bool = True  # KIP-903: AlterPartition carries member broker epochs
    metadata_before_response: bool = True  # timing assumption H1, see spec/replication.md
    no_fence_with_stale_fetch: bool = True  # timing assumption H2, see spec/replication.md

    @classmethod
    def of(cls, variant: str) -> "Rules":
        return {
            "kafka-4.1": cls(),
            "truncate-to-hw": cls(truncate_by_epoch=False),
            "hw-ignores-min-isr": cls(strict_min_isr=False),
            "no-broker-epoch-in-alter-partition": cls(member_broker_epochs=False),
            "response-before-metadata": cls(metadata_before_response=False),
            "fence-with-stale-fetch-queued": cls(no_fence_with_stale_fetch=False),
        }[variant]
