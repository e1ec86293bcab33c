"""Dynamic voter sets in the kraft model (KIP-853): the pure rules against Kafka's own test cases
(KafkaRaftClientReconfigTest, VoterSetTest, LeaderStateTest, KafkaRaftClientTest), scripted runs
of AddVoter, RemoveVoter and a removed leader's resignation, the `reconfig` preset, and K5 (a
voter change before the leader has an HW) as a scripted loss of a committed entry."""
from __future__ import annotations

from typing import Any

import pytest

import model
from checker.search.run import explore
from model.kraft import actions as A
from model.kraft import rules
from model.kraft.properties import leader_completeness
from model.kraft.rules import (
    DUPLICATE_VOTER, FOLLOWER, GRANTED, LEADER, NONE, NOT_VOTER, REQUEST_TIMED_OUT, RESIGNED, UNATTACHED,
    UNRECORDED, VOTER_NOT_FOUND, VOTERS_BASE,
)

DEFINITION = model.definition("kraft")


def build(preset: str = "reconfig", variant: str = "kafka-4.1", **overrides: Any) -> Any:
    config = {k.name: k.default for k in DEFINITION.config_keys}
    config.update(DEFINITION.presets[preset])
    config.update(overrides)
    return DEFINITION.build(config, variant)


# --- pure rules ---------------------------------------------------------------------------------

def test_add_voter() -> None:
    """testAddVoter: an HW, the last VotersRecord committed, a new id, caught up: accepted."""
    assert rules.validate_add_voter(0b011, 2, hw=1, last_voters_offset=-1, caught_up=True) == NONE


def test_add_voter_without_fenced_previous_leaders() -> None:
    """testAddVoterWithoutFencedPreviousLeaders: no HW yet in the leader's epoch: REQUEST_TIMED_OUT;
    K5 (voter-change-before-hw) drops the check."""
    assert rules.validate_add_voter(0b011, 2, hw=-1, last_voters_offset=-1, caught_up=True) == REQUEST_TIMED_OUT
    assert rules.validate_add_voter(0b011, 2, hw=-1, last_voters_offset=-1, caught_up=True,
                                    fence_previous_leaders=False) == NONE


def test_add_voter_with_pending_add_voter() -> None:
    """testAddVoterWithPendingAddVoter: the last VotersRecord (offset 3) is not below the HW yet."""
    assert rules.validate_add_voter(0b011, 2, hw=3, last_voters_offset=3, caught_up=True) == REQUEST_TIMED_OUT
    assert rules.validate_add_voter(0b011, 2, hw=4, last_voters_offset=3, caught_up=True) == NONE
    # K10 (overlapping-voter-changes) drops the check
    assert rules.validate_add_voter(0b011, 2, hw=3, last_voters_offset=3, caught_up=True, one_at_a_time=False) == NONE


def test_add_voter_with_existing_voter() -> None:
    """testAddVoterWithExistingVoter: DUPLICATE_VOTER."""
    assert rules.validate_add_voter(0b111, 2, hw=1, last_voters_offset=-1, caught_up=True) == DUPLICATE_VOTER


def test_add_voter_with_lagging_new_voter() -> None:
    """testAddVoterWithLaggingNewVoter: the new voter has not reached the leader's log end."""
    assert rules.validate_add_voter(0b011, 2, hw=1, last_voters_offset=-1, caught_up=False) == REQUEST_TIMED_OUT


def test_remove_voter() -> None:
    """testRemoveVoter, testRemoveVoterIsLeader: any voter, the leader included."""
    assert rules.validate_remove_voter(0b111, 1, hw=1, last_voters_offset=-1) == NONE
    assert rules.validate_remove_voter(0b111, 0, hw=1, last_voters_offset=-1) == NONE


def test_remove_voter_with_none_voter_id_and_to_empty_voter_set() -> None:
    """testRemoveVoterWithNoneVoterId, testRemoveVoterToEmptyVoterSet: VOTER_NOT_FOUND."""
    assert rules.validate_remove_voter(0b011, 2, hw=1, last_voters_offset=-1) == VOTER_NOT_FOUND
    assert rules.validate_remove_voter(0b001, 0, hw=1, last_voters_offset=-1) == VOTER_NOT_FOUND


def test_remove_voter_without_fenced_previous_leaders() -> None:
    """testRemoveVoterWithoutFencedPreviousLeaders: REQUEST_TIMED_OUT."""
    assert rules.validate_remove_voter(0b111, 1, hw=-1, last_voters_offset=-1) == REQUEST_TIMED_OUT


def test_last_voter_set_follows_the_log_and_its_truncation() -> None:
    """VoterSetHistory: the last VotersRecord, uncommitted included; truncateNewEntries reverts it;
    without one, the bootstrap set (testFollowerReadsKRaftBootstrapRecords, the checkpoint's set)."""
    log = ((1, 0), (1, VOTERS_BASE + 0b111), (1, 1), (2, VOTERS_BASE + 0b110))
    assert rules.last_voter_set(log, 0b011) == (0b110, 3)
    assert rules.last_voter_set(log[:3], 0b011) == (0b111, 1)
    assert rules.last_voter_set(log[:1], 0b011) == (0b011, -1)
    assert rules.members(0b101) == [0, 2]


def test_an_election_counts_the_voters_it_started_with() -> None:
    """EpochElection over a copy of the voter set: a node outside it neither counts nor votes."""
    votes = (GRANTED, UNRECORDED, NOT_VOTER)
    assert not rules.is_vote_granted(votes)
    assert rules.is_vote_granted((GRANTED, GRANTED, NOT_VOTER))
    assert rules.is_vote_granted((GRANTED, NOT_VOTER, NOT_VOTER))
    assert rules.is_vote_rejected((GRANTED, rules.REJECTED, NOT_VOTER))


# --- scripted runs --------------------------------------------------------------------------------

def do(m: Any, s: Any, *actions: Any) -> Any:
    for a in actions:
        t = m.next_state(s, a)
        assert t is not None, f"{a} is not enabled"
        s = t
    return s


def elect_0(m: Any) -> Any:
    """Node 0 wins epoch 1 with node 1's votes; node 1 follows and fetches until the HW is 1."""
    s = do(m, m.init_states()[0], A.ElectionTimeout(0), A.HandleVoteRequest(0, 1), A.HandleVoteResponse(1, 0),
           A.HandleVoteRequest(0, 1), A.HandleVoteResponse(1, 0), A.HandleBeginQuorumEpochRequest(0, 1),
           A.HandleFetchRequest(1, 0), A.HandleFetchResponse(0, 1), A.HandleFetchRequest(1, 0),
           A.HandleFetchResponse(0, 1))
    assert s.nodes[0].role == LEADER and s.nodes[0].hw == 1 and s.nodes[1].role == FOLLOWER
    return s


def test_observers_do_not_stand() -> None:
    """testUnattachedAsObserverDoesNotBecomeProspectiveAfterElectionTimeout and
    testFollowerAsObserverDoesNotBecomeProspectiveAfterFetchTimeout: the spare node has no
    election or fetch timer, and finds the leader by fetching from a bootstrap voter."""
    m = build(max_in_flight=4)
    s = elect_0(m)
    assert m.next_state(s, A.ElectionTimeout(2)) is None
    s = do(m, s, A.HandleFetchRequest(1, 0), A.SendObserverFetch(2, 0), A.HandleFetchRequest(2, 0),
           A.HandleFetchResponse(0, 2))
    assert s.nodes[2].role == FOLLOWER and s.nodes[2].leader == 0
    assert m.next_state(s, A.FetchTimeout(2)) is None


def test_add_voter_needs_a_caught_up_observer_and_then_counts_it() -> None:
    """testAddVoter, testAddVoterWithLaggingNewVoter: AddVoter waits for the spare to reach the
    leader's log end; the new set (3 voters: majority 2) takes effect on append, uncommitted."""
    m = build(max_in_flight=4)
    s = do(m, elect_0(m), A.HandleFetchRequest(1, 0), A.SendObserverFetch(2, 0), A.HandleFetchRequest(2, 0))
    assert m.next_state(s, A.AddVoter(0, 2)) is None, "the spare has not fetched yet"
    s = do(m, s, A.HandleFetchResponse(0, 2), A.HandleFetchRequest(2, 0), A.HandleFetchResponse(0, 2),
           A.HandleFetchRequest(2, 0))
    assert s.nodes[0].end_offsets[2] == s.nodes[0].leo
    s = do(m, s, A.AddVoter(0, 2))
    assert s.nodes[0].log[-1] == (1, VOTERS_BASE + 0b111) and s.changes == 1
    assert m.next_state(s, A.RemoveVoter(0, 1)) is None, "the last VotersRecord is not committed"


def test_remove_voter_is_leader() -> None:
    """testRemoveVoterIsLeader and LeaderStateTest.testUpdateHighWatermarkQuorumRemovingLeaderFromVoterStates:
    the leader removes itself and keeps leading; the HW counts only the remaining voter, then the
    leader resigns in its epoch and, after its election timer, is an Unattached observer."""
    m = build(max_in_flight=4)
    s = do(m, elect_0(m), A.RemoveVoter(0, 0))
    assert s.nodes[0].role == LEADER and s.nodes[0].hw == 1, "not committed by the leader alone"
    assert m.next_state(s, A.ResignAfterRemoval(0)) is None
    s = do(m, s, A.HandleFetchRequest(1, 0), A.HandleFetchResponse(0, 1), A.HandleFetchRequest(1, 0))
    assert s.nodes[0].hw == 2, "node 1, the only voter left, holds the VotersRecord"
    s = do(m, s, A.ResignAfterRemoval(0))
    assert s.nodes[0].role == RESIGNED and s.nodes[0].epoch == 1
    s = do(m, s, A.ElectionTimeout(0))
    assert s.nodes[0].role == UNATTACHED and s.nodes[0].epoch == 2
    assert m.next_state(s, A.ElectionTimeout(0)) is None, "an observer now"
    assert m.next_state(s, A.SendObserverFetch(0, 1)) is not None


def test_the_reconfig_preset_holds_and_reaches_everything() -> None:
    r = explore(build(), workers=1)
    assert r.result == "ok" and r.distinct_states > 50_000
    assert r.unreached == [] and r.never_enabled == []


K5_CONFIG = dict(voters=4, spares=1, voter_changes=2, max_epoch=3, max_log=3, max_in_flight=12, faults=0,
                 timeouts=5)
# Ongaro's single-server change bug in Kafka's terms (raft-dev, 2015): leader 0 of epoch 1 adds
# node 4 before it has an HW; only 4 gets that VotersRecord. Leader 1 of epoch 2 (votes of 1, 2,
# 3) removes 0, also before its HW, and commits that record with 2 (a majority of {1, 2, 3}).
# Leader 0 resigns by check quorum and wins epoch 3 with 3 and 4, a majority of its own set
# {0, 1, 2, 3, 4}: 3 voted in epoch 2 but never fetched, so 0's log is more up to date than its.
K5_STEPS = [
    A.ElectionTimeout(0), A.HandleVoteRequest(0, 1), A.HandleVoteRequest(0, 2), A.HandleVoteResponse(1, 0),
    A.HandleVoteResponse(2, 0), A.HandleVoteRequest(0, 1), A.HandleVoteRequest(0, 2), A.HandleVoteResponse(1, 0),
    A.HandleVoteResponse(2, 0), A.HandleVoteRequest(0, 3),
    A.SendObserverFetch(4, 0), A.HandleFetchRequest(4, 0), A.HandleFetchResponse(0, 4),
    A.HandleFetchRequest(4, 0), A.HandleFetchResponse(0, 4), A.HandleFetchRequest(4, 0),
    A.AddVoter(0, 4),
    A.ElectionTimeout(1), A.HandleVoteRequest(1, 2), A.HandleVoteRequest(1, 3), A.HandleVoteResponse(2, 1),
    A.HandleVoteResponse(3, 1), A.HandleVoteRequest(1, 2), A.HandleVoteRequest(1, 3), A.HandleVoteResponse(2, 1),
    A.HandleVoteResponse(3, 1),
    A.RemoveVoter(1, 0),
    A.HandleBeginQuorumEpochRequest(1, 2), A.HandleFetchRequest(2, 1), A.HandleFetchResponse(1, 2),
    A.HandleFetchRequest(2, 1),
    A.CheckQuorumTimeout(0), A.ElectionTimeout(0), A.ElectionTimeout(0),
    A.HandleVoteRequest(0, 3), A.HandleVoteRequest(0, 4), A.HandleVoteResponse(3, 0), A.HandleVoteResponse(4, 0),
    A.HandleVoteRequest(0, 3), A.HandleVoteRequest(0, 4), A.HandleVoteResponse(3, 0), A.HandleVoteResponse(4, 0),
]


def test_k5_a_voter_change_before_the_hw_loses_a_committed_entry() -> None:
    """K5 with an added spare (the gate's round row finds two removals, on four voters): with the HW
    check off, the run above elects node 0 in epoch 3 without the entries leader 1 committed in
    epoch 2. Kafka 4.1 refuses the first AddVoter (no HW)."""
    m = build(variant="voter-change-before-hw", **K5_CONFIG)
    s = m.init_states()[0]
    for a in K5_STEPS:
        t = m.next_state(s, a)
        assert t is not None, f"{a} is not enabled in\n{m.summary(s)}"
        s = t
    assert s.nodes[0].role == LEADER and s.nodes[0].epoch == 3
    assert not leader_completeness(s)
    kafka = build(**K5_CONFIG)
    s = kafka.init_states()[0]
    for a in K5_STEPS[:K5_STEPS.index(A.AddVoter(0, 4))]:
        s = kafka.next_state(s, a)
        assert s is not None
    assert s.nodes[0].hw < 0 and kafka.next_state(s, A.AddVoter(0, 4)) is None


@pytest.mark.parametrize("preset", ["smoke", "default"])
def test_static_presets_list_the_voter_change_actions_as_off(preset: str) -> None:
    off = build(preset).disabled_actions()
    assert off["AddVoter"] == off["RemoveVoter"] == off["ResignAfterRemoval"] == "voter_changes = 0"
    assert "SendObserverFetch" in off


def test_k6_a_leader_serving_only_voters_stalls_a_removed_voter(capsys: pytest.CaptureFixture[str]) -> None:
    """K6 (fetch-only-from-voters): every invariant holds, but a voter the leader removed, an
    observer now, is refused its fetches forever: the liveness pass finds the lasso."""
    import json

    from checker.cli.commands import main

    r = explore(build(variant="fetch-only-from-voters"), workers=1)
    assert r.result == "ok" and "voter_added" in r.unreached, "no observer catches up, so none is added"
    assert main(["check", "--model", "kraft", "--variant", "fetch-only-from-voters", "--preset", "reconfig",
                 "--json", "--workers", "1"]) == 1
    v = json.loads(capsys.readouterr().out)["violation"]
    assert v["invariant"] == "replica_catches_up_0" and v["loop"] is not None
