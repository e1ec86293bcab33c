"""Pure KRaft decision functions, each a transcription of one Kafka 4.1 rule (raft module).

These take plain ints and tuples and return plain values, so they can be checked case by case
against Kafka's own unit tests (tests/test_kraft_rules.py) and against an external conformance
suite. Nothing here knows about the model's state layout.

Conventions: an offset or epoch that is not known is -1 (Kafka's Optional.empty / -1 sentinel);
a log is a tuple of entries whose first element is the entry's epoch; offsets are 0-based.
"""
from __future__ import annotations

from typing import NamedTuple, Sequence

# Kafka's Errors codes (org.apache.kafka.common.protocol.Errors) used by the raft RPCs.
NONE = 0
NOT_LEADER_OR_FOLLOWER = 6
REQUEST_TIMED_OUT = 7
INVALID_REQUEST = 42
FENCED_LEADER_EPOCH = 74
UNKNOWN_LEADER_EPOCH = 75
INVALID_VOTER_KEY = 125
DUPLICATE_VOTER = 126
VOTER_NOT_FOUND = 127
ERROR_NAMES = {
    NONE: "NONE",
    NOT_LEADER_OR_FOLLOWER: "NOT_LEADER_OR_FOLLOWER",
    INVALID_REQUEST: "INVALID_REQUEST",
    FENCED_LEADER_EPOCH: "FENCED_LEADER_EPOCH",
    UNKNOWN_LEADER_EPOCH: "UNKNOWN_LEADER_EPOCH",
    INVALID_VOTER_KEY: "INVALID_VOTER_KEY",
    REQUEST_TIMED_OUT: "REQUEST_TIMED_OUT",
    DUPLICATE_VOTER: "DUPLICATE_VOTER",
    VOTER_NOT_FOUND: "VOTER_NOT_FOUND",
}

# Roles (the EpochState implementations of QuorumState).
UNATTACHED, PROSPECTIVE, CANDIDATE, LEADER, FOLLOWER, RESIGNED = range(6)
ROLE_NAMES = ("Unattached", "Prospective", "Candidate", "Leader", "Follower", "Resigned")

# Vote states of a voter in an EpochElection (raft/internals/EpochElection.VoterState.State), and
# NOT_VOTER for a node outside the voter set the election was started with (KIP-853).
UNRECORDED, GRANTED, REJECTED, NOT_VOTER = 0, 1, 2, 3

NO_ID = -1  # no leader, no vote, unknown offset or epoch


class OffsetAndEpoch(NamedTuple):
    """org.apache.kafka.raft.OffsetAndEpoch: compared epoch first, then offset."""

    offset: int
    epoch: int


# --- Logs (ReplicatedLog, KafkaMetadataLog / KafkaRaftLog, LeaderEpochFileCache) -------------


def last_epoch(log: Sequence[tuple[int, ...]]) -> int:
    """ReplicatedLog.lastFetchedEpoch: the epoch of the last entry; 0 for an empty log."""
    return log[-1][0] if log else 0


def end_offset(log: Sequence[tuple[int, ...]]) -> OffsetAndEpoch:
    """KafkaRaftClient.endOffset: (log end offset, last fetched epoch)."""
    return OffsetAndEpoch(len(log), last_epoch(log))


def epoch_entries(log: Sequence[tuple[int, ...]]) -> list[tuple[int, int]]:
    """The leader-epoch cache of a log: (epoch, start offset) for each epoch that has entries.

    Kafka assigns a cache entry when a batch of a new epoch is appended and removes entries on
    truncation (LeaderEpochFileCache.assign / truncateFromEnd), so for a log without snapshots
    the cache is exactly the epoch changes of the entries."""
    out: list[tuple[int, int]] = []
    for offset, entry in enumerate(log):
        if not out or out[-1][0] != entry[0]:
            out.append((entry[0], offset))
    return out


def end_offset_for_epoch(log: Sequence[tuple[int, ...]], epoch: int) -> OffsetAndEpoch:
    """ReplicatedLog.endOffsetForEpoch (KafkaMetadataLog over UnifiedLog.endOffsetForEpoch).

    LeaderEpochFileCache.endOffsetFor(requested, LEO): the largest epoch <= requested and the
    start offset of the first larger epoch, or the LEO when requested is the latest epoch; if the
    requested epoch is below every cached epoch, (requested, start of the first epoch). When the
    cache has no answer (requested epoch undefined or above the latest, or an empty cache), the
    metadata log falls back to (LEO, lastFetchedEpoch)."""
    entries = epoch_entries(log)
    leo = len(log)
    if epoch >= 0 and entries:
        if entries[-1][0] == epoch:
            return OffsetAndEpoch(leo, epoch)
        higher = next((e for e in entries if e[0] > epoch), None)
        if higher is not None:
            floor = [e for e in entries if e[0] <= epoch]
            if not floor:
                return OffsetAndEpoch(higher[1], epoch)
            return OffsetAndEpoch(higher[1], floor[-1][0])
    return OffsetAndEpoch(leo, last_epoch(log))


class ValidOffsetAndEpoch(NamedTuple):
    """org.apache.kafka.raft.ValidOffsetAndEpoch without snapshots: VALID or DIVERGING."""

    valid: bool
    offset_and_epoch: OffsetAndEpoch


def validate_offset_and_epoch(
    log: Sequence[tuple[int, ...]], fetch_offset: int, last_fetched_epoch: int
) -> ValidOffsetAndEpoch:
    """ReplicatedLog.validateOffsetAndEpoch (log start offset 0, no snapshots).

    Offset 0 is always valid. Otherwise look up endOffsetForEpoch(lastFetchedEpoch): if that
    epoch is not the one asked for, or it ends before the fetch offset, the fetcher diverges and
    the answer is the (epoch, end offset) it must truncate to."""
    if fetch_offset == 0:
        return ValidOffsetAndEpoch(True, OffsetAndEpoch(0, 0))
    found = end_offset_for_epoch(log, last_fetched_epoch)
    if found.epoch != last_fetched_epoch or found.offset < fetch_offset:
        return ValidOffsetAndEpoch(False, found)
    return ValidOffsetAndEpoch(True, OffsetAndEpoch(fetch_offset, last_fetched_epoch))


def truncation_offset(log: Sequence[tuple[int, ...]], diverging: OffsetAndEpoch) -> int:
    """ReplicatedLog.truncateToEndOffset: where a follower truncates on a diverging epoch.

    Epoch 0 (the primordial epoch): min(diverging end offset, LEO). Otherwise look up the local
    end offset of the diverging epoch: if the local log has that epoch, min of the two end
    offsets; else the local end of the largest smaller epoch."""
    if diverging.epoch == 0:
        return min(diverging.offset, len(log))
    local = end_offset_for_epoch(log, diverging.epoch)
    if local.epoch == diverging.epoch:
        return min(local.offset, diverging.offset)
    return local.offset


# --- Voting (KafkaRaftClient.handleVoteRequest, EpochState.canGrantVote) ---------------------


def is_log_up_to_date(
    candidate_last_epoch: int, candidate_end_offset: int, local: OffsetAndEpoch
) -> bool:
    """handleVoteRequest: the requester's (last epoch, end offset) compared to ours with
    OffsetAndEpoch.compareTo (epoch first, then offset) must be >= 0."""
    return (candidate_last_epoch, candidate_end_offset) >= (local.epoch, local.offset)


def validate_vote_request(
    replica_id: int,
    replica_epoch: int,
    last_epoch_: int,
    last_offset: int,
    pre_vote: bool,
    local_epoch: int,
) -> int:
    """handleVoteRequest's checks before any state change, in Kafka's order.

    1. INVALID_REQUEST if the last offset or last epoch is negative, or the last epoch is
       illegal: >= the replica epoch for a standard vote (a candidate bumped its epoch), > it
       for a pre-vote (a prospective did not).
    2. validateVoterOnlyRequest: FENCED_LEADER_EPOCH if the replica epoch is below ours,
       INVALID_REQUEST if the replica id is negative.
    Returns NONE when the request may proceed (the voter-key check comes after the epoch bump)."""
    illegal_epoch = last_epoch_ > replica_epoch if pre_vote else last_epoch_ >= replica_epoch
    if last_offset < 0 or last_epoch_ < 0 or illegal_epoch:
        return INVALID_REQUEST
    if replica_epoch < local_epoch:
        return FENCED_LEADER_EPOCH
    if replica_id < 0:
        return INVALID_REQUEST
    return NONE


def unattached_or_prospective_can_grant_vote(
    leader: int,
    voted: int,
    candidate: int,
    up_to_date: bool,
    pre_vote: bool,
    voted_directory: int = NO_ID,
    candidate_directory: int = NO_ID,
) -> bool:
    """QuorumState.unattachedOrProspectiveCanGrantVote.

    Pre-vote: grant iff the log is up to date. Standard vote: if already voted, grant only to
    the same replica (no log check): same id, and the vote has no directory id or the same one
    (ReplicaKey; NO_ID = ReplicaKey.NO_DIRECTORY_ID); else if a leader is known, reject; else
    grant iff up to date. The model's voters keep one directory id each, so it passes none."""
    if pre_vote:
        return up_to_date
    if voted != NO_ID:
        return voted == candidate and (voted_directory == NO_ID or voted_directory == candidate_directory)
    if leader != NO_ID:
        return False
    return up_to_date


def can_grant_vote(
    role: int,
    leader: int,
    voted: int,
    has_fetched_from_leader: bool,
    candidate: int,
    up_to_date: bool,
    pre_vote: bool,
    voted_directory: int = NO_ID,
    candidate_directory: int = NO_ID,
) -> bool:
    """EpochState.canGrantVote for each role (Kafka 4.1, KIP-996).

    LeaderState: never. CandidateState and ResignedState: a pre-vote if up to date, a standard
    vote never. FollowerState: a pre-vote only if up to date and it has not fetched successfully
    from its leader in this state; a standard vote never. UnattachedState, ProspectiveState:
    unattached_or_prospective_can_grant_vote."""
    if role == LEADER:
        return False
    if role in (CANDIDATE, RESIGNED):
        return pre_vote and up_to_date
    if role == FOLLOWER:
        return pre_vote and not has_fetched_from_leader and up_to_date
    return unattached_or_prospective_can_grant_vote(
        leader, voted, candidate, up_to_date, pre_vote, voted_directory, candidate_directory)


def majority(voters: int) -> int:
    """EpochElection.majoritySize: voters / 2 + 1."""
    return voters // 2 + 1


def is_vote_granted(votes: tuple[int, ...]) -> bool:
    """EpochElection.isVoteGranted: granted votes reach a majority of the election's voters (own
    vote included)."""
    return votes.count(GRANTED) >= (len(votes) - votes.count(NOT_VOTER)) // 2 + 1


def is_vote_rejected(votes: tuple[int, ...]) -> bool:
    """EpochElection.isVoteRejected: even if every unrecorded voter granted, no majority."""
    voters = len(votes) - votes.count(NOT_VOTER)
    return voters - votes.count(REJECTED) < voters // 2 + 1


def record_vote(votes: tuple[int, ...], voter: int, granted: bool) -> tuple[int, ...]:
    """EpochElection.recordVote: set one voter's state (idempotent)."""
    v = GRANTED if granted else REJECTED
    return votes[:voter] + (v,) + votes[voter + 1:]


# --- Leader high watermark (LeaderState.maybeUpdateHighWatermark) -----------------------------


def leader_high_watermark(
    end_offsets: Sequence[int], epoch_start_offset: int, current_hw: int, count_only: bool = False
) -> int:
    """LeaderState.maybeUpdateHighWatermark: the new HW, or current_hw if it does not move.

    Sort the voters' end offsets (the leader's own included; unknown = -1 sorts last) in
    descending order and take index voters/2: the largest offset a majority holds. It becomes
    the HW only if it is > the leader's epoch start offset (a record of the leader's own epoch,
    its LeaderChange, is committed) and > the current HW (never decreases).
    count_only drops the epoch-start condition (Raft Figure 8: commitment by counting replicas)."""
    ordered = sorted(end_offsets, reverse=True)
    candidate = ordered[len(ordered) // 2]
    if candidate < 0:
        return current_hw
    if not count_only and candidate <= epoch_start_offset:
        return current_hw
    if current_hw >= 0 and candidate <= current_hw:
        return current_hw
    return candidate


def follower_high_watermark(leader_hw: int, local_end_offset: int) -> int:
    """KafkaRaftClient.updateFollowerHighWatermark: min(leader's HW, own LEO); -1 if the leader
    sent none."""
    if leader_hw < 0:
        return NO_ID
    return min(local_end_offset, leader_hw)


# --- Request validation at the receiver -------------------------------------------------------


def validate_leader_only_request(request_epoch: int, local_epoch: int, is_leader: bool) -> int:
    """KafkaRaftClient.validateLeaderOnlyRequest (Fetch): FENCED_LEADER_EPOCH if the request
    epoch is older, UNKNOWN_LEADER_EPOCH if newer, NOT_LEADER_OR_FOLLOWER if not the leader."""
    if request_epoch < local_epoch:
        return FENCED_LEADER_EPOCH
    if request_epoch > local_epoch:
        return UNKNOWN_LEADER_EPOCH
    if not is_leader:
        return NOT_LEADER_OR_FOLLOWER
    return NONE


def validate_fetch_request(fetch_offset: int, last_fetched_epoch: int, current_leader_epoch: int) -> int:
    """KafkaRaftClient.handleFetchRequest: INVALID_REQUEST on a negative fetch offset or last
    fetched epoch, or a last fetched epoch above the request's current leader epoch."""
    if fetch_offset < 0 or last_fetched_epoch < 0 or last_fetched_epoch > current_leader_epoch:
        return INVALID_REQUEST
    return NONE


def validate_voter_only_request(remote_id: int, request_epoch: int, local_epoch: int) -> int:
    """KafkaRaftClient.validateVoterOnlyRequest (Vote, BeginQuorumEpoch, EndQuorumEpoch)."""
    if request_epoch < local_epoch:
        return FENCED_LEADER_EPOCH
    if remote_id < 0:
        return INVALID_REQUEST
    return NONE


# --- Responses (KafkaRaftClient.maybeHandleCommonResponse, maybeTransition) -------------------

IGNORE = 0  # the response is stale: handled, nothing changes
TRANSITION = 1  # maybeTransition(leader, epoch), then handled
FOLLOW = 2  # same epoch, a leader we did not know: become its follower, continue if NONE
HANDLED = 3  # handled without a state change (e.g. INVALID_VOTER_KEY)
CONTINUE = 4  # not handled: the RPC-specific handler goes on


def common_response_outcome(
    error: int, response_leader: int, response_epoch: int, local_epoch: int, local_leader: int
) -> int:
    """maybeHandleCommonResponse, in Kafka's order: an older epoch or UNKNOWN_LEADER_EPOCH is
    ignored; a newer epoch, FENCED_LEADER_EPOCH or NOT_LEADER_OR_FOLLOWER leads to
    maybeTransition; the same epoch naming a leader we did not know makes us its follower;
    INVALID_VOTER_KEY is handled; anything else goes to the RPC's own handling."""
    if response_epoch < local_epoch or error == UNKNOWN_LEADER_EPOCH:
        return IGNORE
    if response_epoch > local_epoch or error in (FENCED_LEADER_EPOCH, NOT_LEADER_OR_FOLLOWER):
        return TRANSITION
    if response_leader != NO_ID and local_leader == NO_ID:
        return FOLLOW
    if error == INVALID_VOTER_KEY:
        return HANDLED
    return CONTINUE


def has_consistent_leader(
    epoch: int, leader: int, local_id: int, local_epoch: int, local_leader: int, is_leader: bool
) -> bool:
    """KafkaRaftClient.hasConsistentLeader: a message naming us leader must find us leader; in
    our own epoch a named leader must be the one we know (or one of them unknown)."""
    if leader != NO_ID and leader == local_id:
        return is_leader
    return epoch != local_epoch or leader == NO_ID or local_leader == NO_ID or leader == local_leader


# --- Restart (QuorumState.initialize) -----------------------------------------------------------


class InitialElection(NamedTuple):
    """The role a replica starts in, from its quorum-state file and its log."""

    role: int
    epoch: int
    leader: int
    voted: int


def initial_election_state(
    local_id: int, stored_epoch: int, stored_leader: int, stored_voted: int, log_last_epoch: int
) -> InitialElection:
    """QuorumState.initialize, in Kafka's order: a stored epoch below the log's last epoch gives
    Unattached in the log's epoch; a stored leader that is us gives Resigned (we must not vote
    again in that epoch, nor reuse its offsets); a stored vote for us gives Candidate; a stored
    leader gives Follower (its endpoints are known: static voter set); else Unattached, with the
    stored vote if any."""
    if stored_epoch < log_last_epoch:
        return InitialElection(UNATTACHED, log_last_epoch, NO_ID, NO_ID)
    if stored_leader == local_id:
        return InitialElection(RESIGNED, stored_epoch, local_id, NO_ID)
    if stored_voted == local_id:
        return InitialElection(CANDIDATE, stored_epoch, NO_ID, local_id)
    if stored_leader != NO_ID:
        return InitialElection(FOLLOWER, stored_epoch, stored_leader, stored_voted)
    return InitialElection(UNATTACHED, stored_epoch, NO_ID, stored_voted)


# --- Voter sets (KIP-853: VoterSet, VoterSetHistory, AddVoterHandler, RemoveVoterHandler) -----
# A voter set is a bitmask of node ids. A VotersRecord is a log entry whose kind is
# VOTERS_BASE + its voter set; the bootstrap set (the checkpoint written by `kafka-storage format`)
# stands before offset 0, committed.

VOTERS_BASE = 2


def voters_entry_set(kind: int) -> int:
    """The voter set a log entry's kind carries, or -1 for a LeaderChange or data entry."""
    return kind - VOTERS_BASE if kind >= VOTERS_BASE else -1


def last_voter_set(log: Sequence[tuple[int, int]], bootstrap: int) -> tuple[int, int]:
    """KRaftControlRecordStateMachine.lastVoterSet and its offset: the last VotersRecord in the
    log, uncommitted included (VoterSetHistory.lastValue), else the bootstrap set at offset -1.
    Truncating the log drops later entries (truncateNewEntries), so the set reverts with it."""
    for offset in range(len(log) - 1, -1, -1):
        if log[offset][1] >= VOTERS_BASE:
            return log[offset][1] - VOTERS_BASE, offset
    return bootstrap, -1


def members(voters: int) -> list[int]:
    """The ids in a voter set."""
    return [j for j in range(voters.bit_length()) if voters >> j & 1]


def validate_voter_change(hw: int, last_voters_offset: int, fence_previous_leaders: bool = True,
                          one_at_a_time: bool = True) -> int:
    """The checks AddVoterHandler.handleAddVoterRequest and RemoveVoterHandler.handleRemoveVoterRequest
    share, in Kafka's order: REQUEST_TIMED_OUT while the leader has no HW (no entry of its epoch is
    committed yet, so an uncommitted change of an earlier leader may still win: Ongaro's
    single-server change fix), and while the last VotersRecord is not committed.
    fence_previous_leaders=False drops the first check, and a leader without an HW then takes the
    last VotersRecord for committed (catalogue K5); one_at_a_time=False drops the second (K10)."""
    if hw < 0:
        if fence_previous_leaders:
            return REQUEST_TIMED_OUT
        return NONE
    if one_at_a_time and last_voters_offset >= hw:
        return REQUEST_TIMED_OUT
    return NONE


def validate_add_voter(voters: int, new_voter: int, hw: int, last_voters_offset: int, caught_up: bool,
                       fence_previous_leaders: bool = True, one_at_a_time: bool = True) -> int:
    """AddVoterHandler.handleAddVoterRequest after the leader-only checks: the shared checks,
    DUPLICATE_VOTER when the id is already a voter, and REQUEST_TIMED_OUT unless the new voter
    fetches as an observer and has reached the leader's log end (LeaderState.isReplicaCaughtUp)."""
    error = validate_voter_change(hw, last_voters_offset, fence_previous_leaders, one_at_a_time)
    if error != NONE:
        return error
    if voters >> new_voter & 1:
        return DUPLICATE_VOTER
    if not caught_up:
        return REQUEST_TIMED_OUT
    return NONE


def validate_remove_voter(voters: int, voter: int, hw: int, last_voters_offset: int,
                          fence_previous_leaders: bool = True, one_at_a_time: bool = True) -> int:
    """RemoveVoterHandler.handleRemoveVoterRequest after the leader-only checks: the shared checks,
    then VOTER_NOT_FOUND when the id is not a voter or is the last one (VoterSet.removeVoter)."""
    error = validate_voter_change(hw, last_voters_offset, fence_previous_leaders, one_at_a_time)
    if error != NONE:
        return error
    if not voters >> voter & 1 or voters == 1 << voter:
        return VOTER_NOT_FOUND
    return NONE
