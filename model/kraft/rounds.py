"""Rounds: coarse steps made of the model's own actions, for the round search (checker/rounds.py).

A round is an exchange that KafkaRaftClient's poll loops finish between two events of interest:
- an election: the node's timers expire until it is Prospective (`ElectionTimeout`, or
  `FetchTimeout` for a follower), then its Vote requests to a chosen set of voters are delivered
  with their responses, pre-vote and standard vote alike, in id order (`SendVote` where a request
  did not fit in flight); the round counts only when the node ends as Leader, or when the set is
  empty (a node that stands and hears nothing);
- a catch-up: a leader's BeginQuorumEpoch to one node not yet following it (`SendBeginQuorumEpoch`
  if none is in flight; none to an observer), then that node's Fetch exchanges with it
  (`SendFetch` if none is in flight; an observer's first is `SendObserverFetch`, a round of its
  own) until the leader has heard the node's end offset at its own log end;
- one step of any other kind the model enables (a client append, AddVoter, RemoveVoter, a
  leader's resignation, a check-quorum or fetch timeout, a fault).
Messages a round does not deliver stay in flight (delayed, not lost). Every round is a sequence of
the model's `next_state` steps, so every state reached by rounds is a state the model reaches and
every violation found is a real trace; rounds skip interleavings (an election's messages are not
interleaved with other events, a retransmission is never sent), so a search by rounds proves
nothing about the states it skips.
"""
from __future__ import annotations

from itertools import combinations
from typing import Any, Callable, Iterator, Optional, Sequence

from model.kraft import actions as A
from model.kraft.rules import CANDIDATE, FOLLOWER, LEADER, PROSPECTIVE, UNRECORDED
from model.kraft.state import BQE_REQUEST, FETCH_REQUEST, FETCH_RESPONSE, VOTE_REQUEST, VOTE_RESPONSE, KraftState

Step = Callable[[KraftState, Any], Optional[KraftState]]
Round = tuple[tuple[Any, KraftState], ...]

# The kinds that are rounds of one step; the others are taken only inside elections and catch-ups.
SINGLE_KINDS = (A.ClientAppend, A.AddVoter, A.RemoveVoter, A.ResignAfterRemoval, A.CheckQuorumTimeout,
                A.FetchTimeout, A.Restart, A.DiskLoss, A.CutLink, A.HealLink, A.DropMessage, A.SendObserverFetch)
MAX_TIMERS = 3  # Resigned -> Unattached -> Prospective needs two; a follower's FetchTimeout one
MAX_FETCHES = 8  # Fetch exchanges in one catch-up (each appends at least one entry, max_log <= 8)


def _in_flight(s: KraftState, kind: int, src: int, dst: int) -> bool:
    return any(m.kind == kind and m.src == src and m.dst == dst for m in s.network)


class _Trail:
    """The steps of a round so far; `take` applies one and says whether the model enabled it."""

    def __init__(self, step: Step, s: KraftState) -> None:
        self.step = step
        self.state = s
        self.steps: list[tuple[Any, KraftState]] = []

    def take(self, action: Any) -> bool:
        t = self.step(self.state, action)
        if t is None:
            return False
        self.steps.append((action, t))
        self.state = t
        return True


def stand(step: Step, s: KraftState, node: int) -> Round | None:
    """The node's timers expire until it is Prospective or Candidate: the first steps of its
    every election, whoever answers (empty if it already is)."""
    trail = _Trail(step, s)
    for _ in range(MAX_TIMERS):
        role = trail.state.nodes[node].role
        if role in (PROSPECTIVE, CANDIDATE):
            return tuple(trail.steps)
        if not trail.take(A.FetchTimeout(node) if role == FOLLOWER else A.ElectionTimeout(node)):
            return None
    return None


def election(step: Step, s: KraftState, node: int, grantors: Sequence[int], stood: Round | None = None) -> Round | None:
    """The node stands (timers until Prospective: `stood`, computed once for every set of
    grantors) and hears from `grantors` only (KafkaRaftClient pollProspective/pollCandidate: a
    Vote request per voter, sent again where it did not fit in flight, each answered)."""
    if stood is None:
        stood = stand(step, s, node)
        if stood is None:
            return None
    trail = _Trail(step, stood[-1][1] if stood else s)
    trail.steps.extend(stood)
    for _ in range(2 * len(s.nodes) * len(grantors)):  # two phases, a send and a delivery each
        dst = next((m.dst for m in trail.state.network
                    if m.kind == VOTE_REQUEST and m.src == node and m.dst in grantors), None)
        if dst is None:
            waiting = trail.state.nodes[node]
            dst = next((g for g in grantors if waiting.votes and waiting.votes[g] == UNRECORDED), None)
            if dst is None or waiting.role not in (PROSPECTIVE, CANDIDATE) or not trail.take(A.SendVote(node, dst)):
                break
        if not trail.take(A.HandleVoteRequest(node, dst)):
            return None
        if _in_flight(trail.state, VOTE_RESPONSE, dst, node) and not trail.take(A.HandleVoteResponse(dst, node)):
            return None
    return tuple(trail.steps) or None


def catch_up(step: Step, s: KraftState, leader: int, node: int) -> Round | None:
    """The leader's BeginQuorumEpoch reaches the node (sent again if it did not fit in flight),
    which fetches until the leader holds its end offset at the leader's log end (KafkaRaftClient
    handleBeginQuorumEpochRequest, handleFetchRequest)."""
    trail = _Trail(step, s)
    epoch = s.nodes[leader].epoch
    following = s.nodes[node].leader == leader and s.nodes[node].epoch == epoch
    if not following and (_in_flight(s, BQE_REQUEST, leader, node) or trail.take(A.SendBeginQuorumEpoch(leader, node))):
        if not trail.take(A.HandleBeginQuorumEpochRequest(leader, node)):
            return None
    for _ in range(MAX_FETCHES):
        progressed = False
        if _in_flight(trail.state, FETCH_REQUEST, node, leader) or (
                not _in_flight(trail.state, FETCH_RESPONSE, leader, node) and trail.take(A.SendFetch(node))):
            if not trail.take(A.HandleFetchRequest(node, leader)):
                break
            if trail.state.nodes[node].log == trail.state.nodes[leader].log:
                break
            progressed = True
        if _in_flight(trail.state, FETCH_RESPONSE, leader, node):
            progressed = trail.take(A.HandleFetchResponse(leader, node))
        if not progressed:
            break
    return tuple(trail.steps) or None


def rounds(step: Step, actions: Sequence[Any], s: KraftState) -> Iterator[Round]:
    """Every round from s: single steps (in the model's action order), then elections (by node,
    then grantor sets by size and ids), then catch-ups (by leader, then node)."""
    for a in actions:
        if isinstance(a, SINGLE_KINDS):
            t = step(s, a)
            if t is not None:
                yield ((a, t),)
    n = len(s.nodes)
    for node, st in enumerate(s.nodes):
        if st.role == LEADER or st.observer:
            continue
        stood = stand(step, s, node)
        if stood is None:
            continue
        others = [j for j in range(n) if j != node]
        for size in range(len(others) + 1):
            for grantors in combinations(others, size):
                r = election(step, s, node, grantors, stood)
                if r is not None and (size == 0 or r[-1][1].nodes[node].role == LEADER):
                    yield r
    for leader, st in enumerate(s.nodes):
        if st.role != LEADER:
            continue
        for node in range(n):
            if node != leader:
                r = catch_up(step, s, leader, node)
                if r is not None:
                    yield r
