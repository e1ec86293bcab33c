"""The requests a KRaft node sends (maybeSendVoteRequests, maybeSendBeginQuorumEpochRequests,
maybeSendFetchOrFetchSnapshot): each an action of its own, and what a role transition's first poll
sends (quorum.poll_sends)."""
from __future__ import annotations

from model.kraft import network, rules
from model.kraft.context import Context, voters_of
from model.kraft.network import in_flight, link_cut, send
from model.kraft.rules import CANDIDATE, FOLLOWER, LEADER, PROSPECTIVE
from model.kraft.state import (BQE_REQUEST, FETCH_REQUEST, VOTE_REQUEST, BeginQuorumEpochRequest, FetchRequest,
                               KraftState, VoteRequest)


def room(s: KraftState, c: Context) -> bool:
    return network.count(s) < c.p.max_in_flight


def send_vote(s: KraftState, c: Context, i: int, j: int) -> KraftState | None:
    """Nominee i sends a Vote request to voter j (maybeSendVoteRequests: to unrecorded voters
    while the election can still be won; buildVoteRequest: preVote iff Prospective)."""
    n = s.nodes[i]
    if n.role not in (PROSPECTIVE, CANDIDATE) or j == i or n.votes[j] != rules.UNRECORDED:
        return None
    if rules.is_vote_rejected(n.votes) or not room(s, c) or in_flight(s, VOTE_REQUEST, i, j):
        return None
    if link_cut(s, i, j):
        return None
    end = rules.end_offset(n.log)
    return send(s, VoteRequest(VOTE_REQUEST, i, j, True, n.epoch, end.epoch, end.offset, n.role == PROSPECTIVE))


def send_begin_quorum_epoch(s: KraftState, c: Context, i: int, j: int) -> KraftState | None:
    """Leader i sends BeginQuorumEpoch to voter j (maybeSendBeginQuorumEpochRequests, resent
    on a timer to every voter)."""
    n = s.nodes[i]
    if n.role != LEADER or j == i or not room(s, c) or in_flight(s, BQE_REQUEST, i, j) or link_cut(s, i, j):
        return None
    if not voters_of(c, n) >> j & 1:
        return None  # to the voters of its latest set only
    return send(s, BeginQuorumEpochRequest(BQE_REQUEST, i, j, True, n.epoch))


def send_fetch(s: KraftState, c: Context, i: int) -> KraftState | None:
    """Follower i fetches from its leader (maybeSendFetchOrFetchSnapshot, buildFetchRequest:
    current leader epoch, fetch offset = LEO, last fetched epoch)."""
    n = s.nodes[i]
    if n.role != FOLLOWER or not room(s, c) or in_flight(s, FETCH_REQUEST, i, n.leader) or link_cut(s, i, n.leader):
        return None
    end = rules.end_offset(n.log)
    return send(s, FetchRequest(FETCH_REQUEST, i, n.leader, True, n.epoch, end.offset, end.epoch, n.observer))
