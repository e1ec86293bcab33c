"""The pure KRaft rules (model/kraft/rules.py) against Kafka's own raft unit tests.

Each case names the Kafka test method (apache/kafka, raft/src/test/java/org/apache/kafka/raft/)
whose assertion it restates. Directory ids are ints here (-1 = ReplicaKey.NO_DIRECTORY_ID).
"""
from __future__ import annotations

import pytest

from model.kraft import rules as R
from model.kraft.rules import (
    CANDIDATE, FENCED_LEADER_EPOCH, FOLLOWER, GRANTED, INVALID_REQUEST, INVALID_VOTER_KEY, LEADER, NO_ID,
    NONE, NOT_LEADER_OR_FOLLOWER, PROSPECTIVE, REJECTED, RESIGNED, UNATTACHED, UNKNOWN_LEADER_EPOCH,
    UNRECORDED, OffsetAndEpoch,
)

U, G, X = UNRECORDED, GRANTED, REJECTED


def log_of(*batches: tuple[int, int]) -> tuple[tuple[int, int], ...]:
    """A log from (count, epoch) batches, as MockLogTest.appendBatch builds it."""
    return tuple((epoch, 1) for count, epoch in batches for _ in range(count))


# --- EpochState.canGrantVote -------------------------------------------------------------------
# (source, role, leader, voted, fetched, candidate, up_to_date, pre_vote, expected)
GRANT_CASES = [
    ("UnattachedStateTest.testGrantVoteWithoutVotedKey", UNATTACHED, NO_ID, NO_ID, False, 1, True, False, True),
    ("UnattachedStateTest.testGrantVoteWithoutVotedKey", UNATTACHED, NO_ID, NO_ID, False, 1, False, False, False),
    ("UnattachedStateTest.testGrantVoteWithoutVotedKey", UNATTACHED, NO_ID, NO_ID, False, 2, True, True, True),
    ("UnattachedStateTest.testGrantVoteWithoutVotedKey", UNATTACHED, NO_ID, NO_ID, False, 2, False, True, False),
    ("UnattachedStateTest.testGrantVoteWithLeader", UNATTACHED, 3, NO_ID, False, 1, True, True, True),
    ("UnattachedStateTest.testGrantVoteWithLeader", UNATTACHED, 3, NO_ID, False, 1, False, True, False),
    ("UnattachedStateTest.testGrantVoteWithLeader", UNATTACHED, 3, NO_ID, False, 1, True, False, False),
    ("UnattachedStateTest.testGrantVoteWithLeader", UNATTACHED, 3, NO_ID, False, 3, True, False, False),
    ("UnattachedStateTest.testCanGrantVoteWithVotedKey", UNATTACHED, NO_ID, 1, False, 1, False, False, True),
    ("UnattachedStateTest.testCanGrantVoteWithVotedKey", UNATTACHED, NO_ID, 1, False, 1, True, False, True),
    ("UnattachedStateTest.testCanGrantVoteWithVotedKey", UNATTACHED, NO_ID, 1, False, 2, True, False, False),
    ("UnattachedStateTest.testCanGrantVoteWithVotedKey", UNATTACHED, NO_ID, 1, False, 2, True, True, True),
    ("UnattachedStateTest.testCanGrantVoteWithVotedKey", UNATTACHED, NO_ID, 1, False, 2, False, True, False),
    ("ProspectiveStateTest.testGrantVote", PROSPECTIVE, NO_ID, NO_ID, False, 1, True, False, True),
    ("ProspectiveStateTest.testGrantVote", PROSPECTIVE, NO_ID, NO_ID, False, 1, False, True, False),
    ("ProspectiveStateTest.testGrantVoteWithVotedKey", PROSPECTIVE, NO_ID, 1, False, 1, False, False, True),
    ("ProspectiveStateTest.testGrantVoteWithVotedKey", PROSPECTIVE, NO_ID, 1, False, 2, True, False, False),
    ("ProspectiveStateTest.testGrantVoteWithVotedKey", PROSPECTIVE, NO_ID, 1, False, 2, True, True, True),
    ("ProspectiveStateTest.testGrantVoteWithLeader", PROSPECTIVE, 3, NO_ID, False, 1, True, False, False),
    ("ProspectiveStateTest.testGrantVoteWithLeader", PROSPECTIVE, 3, NO_ID, False, 1, True, True, True),
    ("CandidateStateTest.testGrantVote", CANDIDATE, NO_ID, 0, False, 1, True, True, True),
    ("CandidateStateTest.testGrantVote", CANDIDATE, NO_ID, 0, False, 1, False, True, False),
    ("CandidateStateTest.testGrantVote", CANDIDATE, NO_ID, 0, False, 1, True, False, False),
    ("FollowerStateTest.testPreVoteIfHasNotFetchedFromLeaderYet", FOLLOWER, 3, NO_ID, False, 1, True, True, True),
    ("FollowerStateTest.testPreVoteIfHasNotFetchedFromLeaderYet", FOLLOWER, 3, NO_ID, False, 1, False, True, False),
    ("FollowerStateTest.testPreVoteIfHasNotFetchedFromLeaderYet", FOLLOWER, 3, NO_ID, False, 1, True, False, False),
    ("FollowerStateTest.testGrantVoteAfterSuccessfulFetchFromLeader", FOLLOWER, 3, NO_ID, True, 1, True, True, False),
    ("FollowerStateTest.testGrantVoteAfterSuccessfulFetchFromLeader", FOLLOWER, 3, NO_ID, True, 1, True, False, False),
    ("ResignedStateTest.testGrantVote", RESIGNED, 0, NO_ID, False, 1, True, True, True),
    ("ResignedStateTest.testGrantVote", RESIGNED, 0, NO_ID, False, 1, False, True, False),
    ("ResignedStateTest.testGrantVote", RESIGNED, 0, NO_ID, False, 1, True, False, False),
    ("LeaderStateTest.testGrantVote", LEADER, 0, 0, False, 1, True, True, False),
    ("LeaderStateTest.testGrantVote", LEADER, 0, 0, False, 1, True, False, False),
]


@pytest.mark.parametrize("source,role,leader,voted,fetched,candidate,up_to_date,pre_vote,expected", GRANT_CASES)
def test_can_grant_vote(source, role, leader, voted, fetched, candidate, up_to_date, pre_vote, expected):
    assert R.can_grant_vote(role, leader, voted, fetched, candidate, up_to_date, pre_vote) is expected, source


@pytest.mark.parametrize("voted_dir,candidate_dir,expected", [
    (7, 7, True),  # same id, same directory
    (7, 8, False),  # same id, another directory (ReplicaKey.of(votedKey.id(), Uuid.randomUuid()))
    (7, NO_ID, False),  # same id, no directory (ReplicaKey.NO_DIRECTORY_ID)
    (NO_ID, 8, True),  # the vote was recorded without a directory id
])
def test_standard_vote_to_voted_replica_compares_directory_ids(voted_dir, candidate_dir, expected):
    """UnattachedStateTest.testCanGrantVoteWithVotedKey (the voted ReplicaKey, directory id included;
    ProspectiveStateTest.testCanGrantVoteWithoutDirectoryId for a vote recorded without one)."""
    assert R.can_grant_vote(UNATTACHED, NO_ID, 1, False, 1, False, False, voted_dir, candidate_dir) is expected
    assert R.can_grant_vote(UNATTACHED, NO_ID, 1, False, 1, True, True, voted_dir, candidate_dir) is True


# --- handleVoteRequest validation ------------------------------------------------------------------
# (source, replica_id, replica_epoch, last_epoch, last_offset, pre_vote, local_epoch, expected)
VOTE_REQUEST_CASES = [
    ("KafkaRaftClientTest.testInvalidVoteRequest (negative offset)", 1, 6, 0, -5, False, 5, INVALID_REQUEST),
    ("KafkaRaftClientTest.testInvalidVoteRequest (negative epoch)", 1, 6, -1, 0, False, 5, INVALID_REQUEST),
    ("KafkaRaftClientTest.testInvalidVoteRequest (last epoch = replica epoch)", 1, 6, 6, 0, False, 5, INVALID_REQUEST),
    ("KafkaRaftClientPreVoteTest.testInvalidPreVoteRequest (negative offset)", 1, 5, 0, -5, True, 5, INVALID_REQUEST),
    ("KafkaRaftClientPreVoteTest.testInvalidPreVoteRequest (negative epoch)", 1, 5, -1, 0, True, 5, INVALID_REQUEST),
    ("KafkaRaftClientPreVoteTest.testInvalidPreVoteRequest (last epoch > replica epoch)", 1, 5, 6, 0, True, 5,
     INVALID_REQUEST),
    ("KafkaRaftClientTest.testHandleInvalidVoteRequestWithOlderEpoch", 1, 1, 0, 1, False, 2, FENCED_LEADER_EPOCH),
    ("KafkaRaftClientPreVoteTest.testHandleInvalidPreVoteRequestWithOlderEpoch", 1, 1, 0, 1, True, 2,
     FENCED_LEADER_EPOCH),
    ("KafkaRaftClientPreVoteTest.testLeaderRejectPreVoteRequestOnSameEpoch (valid, rejected later)", 1, 2, 2, 1, True,
     2, NONE),
    ("KafkaRaftClientTest.testHandleValidVoteRequestAsFollower", 1, 3, 2, 1, False, 2, NONE),
]


@pytest.mark.parametrize(
    "source,replica_id,replica_epoch,last_epoch,last_offset,pre_vote,local_epoch,expected", VOTE_REQUEST_CASES)
def test_validate_vote_request(source, replica_id, replica_epoch, last_epoch, last_offset, pre_vote, local_epoch,
                               expected):
    got = R.validate_vote_request(replica_id, replica_epoch, last_epoch, last_offset, pre_vote, local_epoch)
    assert got == expected, source


@pytest.mark.parametrize("candidate,local,expected", [
    ((2, 1), OffsetAndEpoch(5, 1), True),  # a larger last epoch wins whatever the offsets
    ((1, 5), OffsetAndEpoch(5, 1), True),  # equal logs are up to date
    ((1, 4), OffsetAndEpoch(5, 1), False),  # KafkaRaftClientPreVoteTest.testRejectPreVoteIfRemoteLogIsNotUpToDate
    ((0, 9), OffsetAndEpoch(1, 1), False),  # a smaller last epoch loses whatever the offsets
])
def test_is_log_up_to_date(candidate, local, expected):
    """KafkaRaftClient.handleVoteRequest: OffsetAndEpoch.compareTo, epoch first."""
    assert R.is_log_up_to_date(candidate[0], candidate[1], local) is expected


# --- EpochElection ---------------------------------------------------------------------------------
# (source, votes, granted, rejected)
TALLY_CASES = [
    ("CandidateStateTest.testSingleNodeQuorum", (G,), True, False),
    ("CandidateStateTest.testTwoNodeQuorumVoteRejected", (G, X), False, True),
    ("CandidateStateTest.testTwoNodeQuorumVoteGranted", (G, G), True, False),
    ("CandidateStateTest.testThreeNodeQuorumVoteGranted (one pending)", (G, U, U), False, False),
    ("CandidateStateTest.testThreeNodeQuorumVoteGranted", (G, G, U), True, False),
    ("CandidateStateTest.testThreeNodeQuorumVoteRejected (one rejection)", (G, X, U), False, False),
    ("CandidateStateTest.testThreeNodeQuorumVoteRejected", (G, X, X), False, True),
    ("ProspectiveStateTest.testThreeNodeQuorumVoteGranted", (U, G, G), True, False),
    ("ProspectiveStateTest.testTwoNodeQuorumVoteRejected", (X, G), False, True),
]


@pytest.mark.parametrize("source,votes,granted,rejected", TALLY_CASES)
def test_election_tally(source, votes, granted, rejected):
    assert R.is_vote_granted(votes) is granted, source
    assert R.is_vote_rejected(votes) is rejected, source


def test_record_vote_is_idempotent():
    """ProspectiveStateTest.testConsecutiveGrant / testCanChangePreVote: recording sets one voter."""
    votes = R.record_vote((G, U, U), 1, True)
    assert votes == (G, G, U) and R.record_vote(votes, 1, True) == votes
    assert R.record_vote(votes, 1, False) == (G, X, U)  # a pre-vote may change


# --- LeaderState.maybeUpdateHighWatermark ------------------------------------------------------
# (source, end offsets (leader first), epoch start offset, current HW, expected HW)
HW_CASES = [
    ("LeaderStateTest.testUpdateHighWatermarkQuorumSizeOne (at epoch start)", (15,), 15, NO_ID, NO_ID),
    ("LeaderStateTest.testUpdateHighWatermarkQuorumSizeOne", (16,), 15, NO_ID, 16),
    ("LeaderStateTest.testUpdateHighWatermarkQuorumSizeOne (advance)", (20,), 15, 16, 20),
    ("LeaderStateTest.testUpdateHighWatermarkQuorumSizeTwo (no follower offset)", (13, NO_ID), 10, NO_ID, NO_ID),
    ("LeaderStateTest.testUpdateHighWatermarkQuorumSizeTwo (follower at epoch start)", (13, 10), 10, NO_ID, NO_ID),
    ("LeaderStateTest.testUpdateHighWatermarkQuorumSizeTwo", (13, 11), 10, NO_ID, 11),
    ("LeaderStateTest.testUpdateHighWatermarkQuorumSizeTwo (advance)", (13, 13), 10, 11, 13),
    ("LeaderStateTest.testUpdateHighWatermarkQuorumSizeThree (no followers)", (15, NO_ID, NO_ID), 10, NO_ID, NO_ID),
    ("LeaderStateTest.testUpdateHighWatermarkQuorumSizeThree (one at start)", (15, 10, NO_ID), 10, NO_ID, NO_ID),
    ("LeaderStateTest.testUpdateHighWatermarkQuorumSizeThree (both at start)", (15, 10, 10), 10, NO_ID, NO_ID),
    ("LeaderStateTest.testUpdateHighWatermarkQuorumSizeThree", (15, 10, 15), 10, NO_ID, 15),
    ("LeaderStateTest.testUpdateHighWatermarkQuorumSizeThree (leader ahead)", (20, 10, 15), 10, 15, 15),
    ("LeaderStateTest.testUpdateHighWatermarkQuorumSizeThree (advance)", (20, 20, 15), 10, 15, 20),
    ("LeaderStateTest.testNonMonotonicHighWatermarkUpdate", (10, 10), 0, NO_ID, 10),
    ("LeaderStateTest.testNonMonotonicHighWatermarkUpdate (follower went back)", (10, 5), 0, 10, 10),
]


@pytest.mark.parametrize("source,ends,start,current,expected", HW_CASES)
def test_leader_high_watermark(source, ends, start, current, expected):
    assert R.leader_high_watermark(ends, start, current) == expected, source


def test_commit_by_count_ignores_the_epoch_start():
    """The commit-by-count variant (K1) drops exactly the epoch-start condition."""
    assert R.leader_high_watermark((13, 10), 10, NO_ID) == NO_ID
    assert R.leader_high_watermark((13, 10), 10, NO_ID, count_only=True) == 10
    assert R.leader_high_watermark((13, 10), 10, 11, count_only=True) == 11  # still never decreases


@pytest.mark.parametrize("leader_hw,leo,expected", [(5, 3, 3), (2, 3, 2), (NO_ID, 3, NO_ID)])
def test_follower_high_watermark(leader_hw, leo, expected):
    """KafkaRaftClient.updateFollowerHighWatermark: min(leader HW, LEO), nothing without a leader HW."""
    assert R.follower_high_watermark(leader_hw, leo) == expected


# --- Logs: endOffsetForEpoch, validateOffsetAndEpoch, truncateToEndOffset ------------------------

MOCK_LOG = log_of((5, 1), (10, 1), (5, 3), (10, 4))


@pytest.mark.parametrize("epoch,expected", [
    (0, OffsetAndEpoch(0, 0)), (1, OffsetAndEpoch(15, 1)), (2, OffsetAndEpoch(15, 1)),
    (3, OffsetAndEpoch(20, 3)), (4, OffsetAndEpoch(30, 4)), (5, OffsetAndEpoch(30, 4)),
])
def test_end_offset_for_epoch(epoch, expected):
    """MockLogTest.testEndOffsetForEpoch."""
    assert R.end_offset_for_epoch(MOCK_LOG, epoch) == expected


def test_end_offset_for_epoch_of_an_empty_log():
    """ReplicatedLog.lastFetchedEpoch is 0 for an empty log ("primordial epoch")."""
    assert R.end_offset_for_epoch((), 3) == OffsetAndEpoch(0, 0)
    assert R.last_epoch(()) == 0 and R.end_offset(()) == OffsetAndEpoch(0, 0)


# (source, log, fetch offset, last fetched epoch, valid, answer)
VALIDATE_CASES = [
    ("MockLogTest.testValidateEpochGreaterThanLastKnownEpoch", log_of((1, 1)), 1, 2, False, OffsetAndEpoch(1, 1)),
    ("MockLogTest.testValidateOffsetGreatThanEndOffset", log_of((1, 1)), 2, 1, False, OffsetAndEpoch(1, 1)),
    ("MockLogTest.testValidateOffsetLessThanLEO", log_of((10, 1), (10, 2)), 11, 1, False, OffsetAndEpoch(10, 1)),
    ("MockLogTest.testValidateValidEpochAndOffset", log_of((5, 1)), 4, 1, True, OffsetAndEpoch(4, 1)),
    ("KafkaRaftClientTest.testLeaderImmediatelySendsDivergingEpoch", log_of((3, 1), (3, 3), (3, 5)), 6, 2, False,
     OffsetAndEpoch(3, 1)),
    ("ReplicatedLog.validateOffsetAndEpoch (offset 0 always valid)", log_of((2, 3)), 0, 0, True, OffsetAndEpoch(0, 0)),
]


@pytest.mark.parametrize("source,log,offset,epoch,valid,answer", VALIDATE_CASES)
def test_validate_offset_and_epoch(source, log, offset, epoch, valid, answer):
    got = R.validate_offset_and_epoch(log, offset, epoch)
    assert (got.valid, got.offset_and_epoch) == (valid, answer), source


# (source, follower log, diverging (offset, epoch), truncation offset)
TRUNCATE_CASES = [
    ("KafkaRaftClientTest.testFollowerLogReconciliation", log_of((3, 3)), OffsetAndEpoch(2, 3), 2),
    ("ReplicatedLog.truncateToEndOffset (primordial epoch)", log_of((3, 1)), OffsetAndEpoch(1, 0), 1),
    ("ReplicatedLog.truncateToEndOffset (primordial epoch beyond LEO)", log_of((2, 1)), OffsetAndEpoch(5, 0), 2),
    ("ReplicatedLog.truncateToEndOffset (epoch unknown locally)", log_of((2, 1), (2, 2)), OffsetAndEpoch(3, 3), 4),
    ("ReplicatedLog.truncateToEndOffset (smaller local epoch)", log_of((2, 1), (1, 3)), OffsetAndEpoch(5, 2), 2),
    ("KafkaRaftClientTest.testLeaderImmediatelySendsDivergingEpoch (follower side)", log_of((3, 1), (4, 2)),
     OffsetAndEpoch(3, 1), 3),
]


@pytest.mark.parametrize("source,log,diverging,expected", TRUNCATE_CASES)
def test_truncation_offset(source, log, diverging, expected):
    assert R.truncation_offset(log, diverging) == expected, source


# --- Leader-only requests and responses ------------------------------------------------------------

@pytest.mark.parametrize("request_epoch,local_epoch,is_leader,expected", [
    (4, 5, True, FENCED_LEADER_EPOCH),
    (6, 5, True, UNKNOWN_LEADER_EPOCH),
    (5, 5, False, NOT_LEADER_OR_FOLLOWER),
    (5, 5, True, NONE),
])
def test_validate_leader_only_request(request_epoch, local_epoch, is_leader, expected):
    """KafkaRaftClient.validateLeaderOnlyRequest."""
    assert R.validate_leader_only_request(request_epoch, local_epoch, is_leader) == expected


@pytest.mark.parametrize("offset,last_epoch,current_epoch,expected", [
    (-1, 0, 1, INVALID_REQUEST), (0, -1, 1, INVALID_REQUEST), (3, 2, 1, INVALID_REQUEST), (3, 1, 1, NONE),
])
def test_validate_fetch_request(offset, last_epoch, current_epoch, expected):
    """KafkaRaftClient.handleFetchRequest (KafkaRaftClientTest.testInvalidFetchRequest)."""
    assert R.validate_fetch_request(offset, last_epoch, current_epoch) == expected


@pytest.mark.parametrize("error,leader,epoch,local_epoch,local_leader,expected", [
    (NONE, 1, 4, 5, NO_ID, R.IGNORE),  # an older epoch is stale
    (UNKNOWN_LEADER_EPOCH, 1, 5, 5, 1, R.IGNORE),
    (NONE, 1, 6, 5, 2, R.TRANSITION),  # a newer epoch
    (FENCED_LEADER_EPOCH, 1, 5, 5, 1, R.TRANSITION),
    (NOT_LEADER_OR_FOLLOWER, 1, 5, 5, 1, R.TRANSITION),
    (NONE, 1, 5, 5, NO_ID, R.FOLLOW),  # KafkaRaftClientTest.testVoteResponseIgnoredAfterBecomingFollower path
    (INVALID_VOTER_KEY, NO_ID, 5, 5, NO_ID, R.HANDLED),
    (NONE, 1, 5, 5, 1, R.CONTINUE),
])
def test_common_response_outcome(error, leader, epoch, local_epoch, local_leader, expected):
    """KafkaRaftClient.maybeHandleCommonResponse, in its order."""
    assert R.common_response_outcome(error, leader, epoch, local_epoch, local_leader) == expected


@pytest.mark.parametrize("epoch,leader,local_epoch,local_leader,is_leader,expected", [
    (5, 0, 5, NO_ID, False, False),  # names us leader but we are not (local id 0)
    (5, 0, 5, 0, True, True),
    (5, 2, 5, 1, False, False),  # another leader of our epoch
    (6, 2, 5, 1, False, True),
    (5, 2, 5, NO_ID, False, True),
])
def test_has_consistent_leader(epoch, leader, local_epoch, local_leader, is_leader, expected):
    """KafkaRaftClient.hasConsistentLeader (local id 0)."""
    assert R.has_consistent_leader(epoch, leader, 0, local_epoch, local_leader, is_leader) is expected


# --- QuorumState.initialize --------------------------------------------------------------------
# (source, stored epoch, stored leader, stored vote, log last epoch, expected (role, epoch, leader, voted))
INIT_CASES = [
    ("QuorumStateTest.testInitializePrimordialEpoch", 0, NO_ID, NO_ID, 0, (UNATTACHED, 0, NO_ID, NO_ID)),
    ("QuorumStateTest.testInitializeAsUnattached", 5, NO_ID, NO_ID, 0, (UNATTACHED, 5, NO_ID, NO_ID)),
    ("QuorumStateTest.testInitializeAsFollower", 5, 1, NO_ID, 0, (FOLLOWER, 5, 1, NO_ID)),
    ("QuorumStateTest.testInitializeVotedAndLeaderAreSame", 5, 1, 1, 0, (FOLLOWER, 5, 1, 1)),
    ("QuorumStateTest.testInitializeVotedAndLeaderAreDifferent", 5, 1, 2, 0, (FOLLOWER, 5, 1, 2)),
    ("QuorumStateTest.testInitializeAsVotedNoLeader", 5, NO_ID, 2, 0, (UNATTACHED, 5, NO_ID, 2)),
    ("QuorumStateTest.testInitializeAsResignedCandidate", 5, NO_ID, 0, 0, (CANDIDATE, 5, NO_ID, 0)),
    ("QuorumStateTest.testInitializeAsResignedLeader", 5, 0, NO_ID, 0, (RESIGNED, 5, 0, NO_ID)),
    ("QuorumState.initialize (stored epoch below the log's)", 2, 0, 0, 3, (UNATTACHED, 3, NO_ID, NO_ID)),
]


@pytest.mark.parametrize("source,epoch,leader,voted,log_epoch,expected", INIT_CASES)
def test_initial_election_state(source, epoch, leader, voted, log_epoch, expected):
    assert tuple(R.initial_election_state(0, epoch, leader, voted, log_epoch)) == expected, source
