"""The disruption ghost of the KRaft timely model (model/kraft/disruption.py): when a leader is
watched, what clears the watch, and what counts as deserting it."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from model.kraft import actions as A  # noqa: E402
from model.kraft import disruption  # noqa: E402
from model.kraft.rules import CANDIDATE, FOLLOWER, GRANTED, LEADER, PROSPECTIVE, UNRECORDED  # noqa: E402
from model.kraft.state import VOTE_REQUEST, VOTE_RESPONSE, VoteRequest, VoteResponse, initial_state  # noqa: E402


def healthy(fetched: bool = True):
    """Leader 0 of epoch 1; voter 1 follows it (fetched or not); voter 2 is Unattached in epoch 1."""
    s = initial_state(3)
    leader = s.nodes[0]._replace(role=LEADER, epoch=1, leader=0, voted=0, log=((1, 0),), epoch_start=0,
                                 end_offsets=(1, 1, -1))
    follower = s.nodes[1]._replace(role=FOLLOWER, epoch=1, leader=0, voted=0, log=((1, 0),), fetched=fetched)
    return s._replace(nodes=(leader, follower, s.nodes[2]._replace(epoch=1)))


def test_a_leader_followed_by_a_majority_that_fetched_is_watched():
    assert disruption.settled_support(healthy()) == (0, 1, 0b010)


def test_no_watch_before_the_first_fetch_or_over_a_cut_link():
    assert disruption.settled_support(healthy(fetched=False)) == ()
    assert disruption.settled_support(healthy()._replace(cut_links=((0, 1),))) == ()


def test_no_watch_while_an_election_is_under_way():
    s = healthy()
    candidate = s._replace(nodes=s.nodes[:2] + (s.nodes[2]._replace(role=CANDIDATE, epoch=2, voted=2),))
    assert disruption.settled_support(candidate) == ()
    later = s._replace(nodes=s.nodes[:2] + (s.nodes[2]._replace(epoch=2),))
    assert disruption.settled_support(later) == ()
    holding = s._replace(nodes=s.nodes[:2] + (s.nodes[2]._replace(role=PROSPECTIVE, votes=(GRANTED, UNRECORDED,
                                                                                              GRANTED)),))
    assert disruption.settled_support(holding) == ()
    grant = VoteResponse(VOTE_RESPONSE, 1, 2, 1, 0, 0, True)
    assert disruption.settled_support(s._replace(network=(grant,))) == ()
    pre_vote = VoteRequest(VOTE_REQUEST, 2, 1, True, 2, 0, 0, True)  # moves nobody
    assert disruption.settled_support(s._replace(network=(pre_vote,))) == (0, 1, 0b010)
    vote = pre_vote._replace(pre_vote=False)
    assert disruption.settled_support(s._replace(network=(vote,))) == ()


def test_a_supporter_that_leaves_disrupts_and_a_fault_clears_the_watch():
    s = healthy()
    watched = disruption.track(s, A.SendFetch(1), s)
    assert watched.history.watch == (0, 1, 0b010) and disruption.not_disrupted(watched)
    gone = watched._replace(nodes=(watched.nodes[0], watched.nodes[1]._replace(role=0, epoch=2, leader=-1),
                                   watched.nodes[2]))
    after = disruption.track(watched, A.HandleVoteRequest(2, 1), gone)
    assert after.history.disrupted == (0, 1, 1) and not disruption.not_disrupted(after)
    assert "voter 1 had fetched from leader 0 of epoch 1" in disruption.witness(after)
    restarted = disruption.track(watched, A.Restart(1), gone)
    assert restarted.history.watch == () and restarted.history.disrupted == ()


def test_the_leader_leaving_its_epoch_disrupts_too():
    s = disruption.track(healthy(), A.SendFetch(1), healthy())
    resigned = s._replace(nodes=(s.nodes[0]._replace(role=5),) + s.nodes[1:])
    after = disruption.track(s, A.HandleFetchResponse(1, 0), resigned)
    assert after.history.disrupted == (0, 1, 0)
    assert "leader 0 of epoch 1" in disruption.witness(after) and "no longer leads" in disruption.witness(after)
