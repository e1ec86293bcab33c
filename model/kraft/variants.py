"""Protocol variants of the kraft model: each switches one Kafka 4.1 mechanism off (bug-catalogue.md)."""
from __future__ import annotations

from dataclasses import dataclass

from model.interface import Variant, rules_of

VARIANTS = (
    Variant("kafka-4.1", "Kafka 4.1 KRaft as released (kraft.version 1): every mechanism on"),
    Variant(
        "commit-by-count",
        "the leader's HW counts replicas only (no epoch-start condition) and a new leader writes no"
        " LeaderChange record: Raft's Figure 8, an entry of an earlier epoch committed by count is"
        " overwritten by a later leader that never had it (leader completeness)",
        expect="leader_completeness",
        bug_id="K1",
        reference="LeaderState.maybeUpdateHighWatermark; Raft thesis 3.6.2 (Figure 3.7)",
        preset="figure8",
        switches_off=("epoch_start_hw", "leader_change_record"),
    ),
    Variant(
        "vote-without-log-check",
        "voters grant (pre-)votes without comparing the requester's (last epoch, end offset) to their own",
        expect="leader_completeness",
        bug_id="K2",
        reference="KafkaRaftClient.handleVoteRequest; Raft 5.4.1",
        preset="elections",
        switches_off=("vote_log_check",),
    ),
    Variant(
        "vote-not-persisted",
        "a granted vote is not written to the quorum-state file before the reply; a restart forgets it",
        expect="election_safety",
        bug_id="K3",
        reference="QuorumState.unattachedAddVotedState (durableTransitionTo)",
        preset="restart",
        switches_off=("persist_vote",),
    ),
    Variant(
        "same-identity-after-disk-loss",
        "a voter that lost its disk rejoins as the same voter (no directory id, as in a static"
        " kraft.version 0 quorum) and votes with an empty log",
        expect="election_safety",
        bug_id="K4",
        reference="KIP-853 (ReplicaKey directory id, KafkaRaftClient.isValidVoterKey)",
        preset="disk-loss",
        switches_off=("directory_id",),
    ),
    Variant(
        "fetch-only-from-voters",
        "the leader refuses (INVALID_REQUEST) a Fetch from a replica outside its latest voter set:"
        " an availability variant, every safety invariant still holds; an observer never catches"
        " up, so it can never be added as a voter",
        expect="replica_catches_up_0",
        bug_id="K6",
        reference="KafkaRaftClient.handleFetchRequest (KIP-853: no membership check)",
        preset="reconfig",
        switches_off=("fetch_from_any",),
    ),
    Variant(
        "voter-change-before-hw",
        "a leader accepts AddVoter and RemoveVoter before an entry of its own epoch is committed"
        " (no HW yet): Raft's single-server change bug, two changes of different epochs whose new"
        " sets have disjoint majorities, so a committed entry is lost (leader completeness)",
        expect="leader_completeness",
        bug_id="K5",
        reference="KafkaRaftClient.handleAddVoterRequest, handleRemoveVoterRequest (KIP-853); raft-dev 2015",
        preset="voter-race",
        switches_off=("fence_previous_leaders",),
    ),
    Variant(
        "overlapping-voter-changes",
        "a leader accepts AddVoter and RemoveVoter while its last VotersRecord is uncommitted: two"
        " additions in a row leave the bootstrap set and the latest set with disjoint majorities, so"
        " an entry committed by the new one is missing from a leader the old one elects (leader"
        " completeness). A plausible mistake, not a historical Kafka bug",
        expect="leader_completeness",
        bug_id="K10",
        reference="AddVoterHandler, RemoveVoterHandler (last VotersRecord below the HW); Raft thesis 4.1",
        preset="two-additions",
        switches_off=("one_voter_change_at_a_time",),
    ),
    Variant(
        "no-pre-vote",
        "election and fetch timeouts go straight to Candidate with epoch + 1 (pre-KIP-996): an"
        " availability variant, every safety invariant still holds, but a voter cut off from a"
        " healthy leader stands in a later epoch and moves the leader's followers to it",
        expect="leader_not_disrupted",
        bug_id="K7",
        reference="KIP-996",
        preset="rejoin",
        switches_off=("pre_vote",),
    ),
    Variant(
        "no-check-quorum",
        "a leader never resigns for lack of fetches from a majority: an availability variant, every"
        " safety invariant still holds; a leader cut off from the majority keeps its role forever",
        expect="isolated_leader_resigns",
        bug_id="K8",
        reference="KIP-996; KAFKA-15489 (LeaderState check quorum)",
        preset="isolated-leader",
        switches_off=("check_quorum",),
    ),
    Variant(
        "no-pre-vote-no-check-quorum",
        "both KIP-996 mechanisms off (Raft as in KRaft before 3.9): an availability variant, every"
        " safety invariant still holds; a leader cut off from the majority keeps its role forever",
        expect="isolated_leader_resigns",
        bug_id="K9",
        reference="KIP-996",
        preset="isolated-leader",
        switches_off=("pre_vote", "check_quorum"),
    ),
)

VARIANT_NAMES = tuple(v.name for v in VARIANTS)


@dataclass(frozen=True)
class Protocol:
    """The switches the actions consult; all True is Kafka 4.1."""

    pre_vote: bool = True  # KIP-996: Prospective state and pre-vote before an epoch bump
    check_quorum: bool = True  # a leader without fetches from a majority resigns
    epoch_start_hw: bool = True  # the HW must pass the leader's epoch start offset
    leader_change_record: bool = True  # a new leader appends LeaderChange at its epoch start
    vote_log_check: bool = True  # grant only to a requester whose log is up to date
    persist_vote: bool = True  # a granted vote is persisted before the response
    directory_id: bool = True  # KIP-853: a replica with a new disk is a new replica, not the voter
    # KIP-853: no voter change before the leader has an HW (off in K5, a gate schedule row: the
    # search does not reach it; spec/kraft.md, "Dynamic voters")
    fence_previous_leaders: bool = True
    one_voter_change_at_a_time: bool = True  # KIP-853: no change while the last VotersRecord is uncommitted
    fetch_from_any: bool = True  # KIP-853: the leader serves a Fetch from any replica, voter or not

    @classmethod
    def of(cls, variant: str) -> "Protocol":
        """The switches of `variant`, from its `switches_off` in VARIANTS."""
        return rules_of(cls, VARIANTS, variant, "kraft")
