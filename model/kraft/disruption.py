"""Disruption of a healthy leader, the harm pre-vote prevents (KIP-996; catalogue K7), as ghost
state of the timely model.

A voter cut off from its leader times out; without pre-vote it stands at once in a later epoch,
and when it reaches a voter that follows the leader it moves that voter to its epoch: the leader
loses its majority though nothing was wrong with it. With pre-vote (Kafka 4.1) the voter first
asks whether it could win, and a follower that has fetched from its leader says no
(FollowerState.canGrantVote), so no election starts.

The ghost `watch` records a leader that is healthy and settled (`settled_support`); every later
step keeps its supporters unless a fault strikes (a fault clears the watch). A step that takes
a watched supporter away sets the sticky `disrupted`. Only the timely model runs this: with
abstract time a follower's fetch timer may expire while its leader answers, which Kafka's
timeouts (much longer than a round trip) rule out.
"""
from __future__ import annotations

from typing import Any

from model.kraft import rules
from model.kraft.network import link_cut
from model.kraft.rules import CANDIDATE, FOLLOWER, GRANTED, LEADER, PROSPECTIVE
from model.kraft.state import VOTE_REQUEST, VOTE_RESPONSE, KraftState

# Faults, and the operator's voter changes (a new voter set is a new majority to watch).
FAULTS = frozenset({"Restart", "DiskLoss", "CutLink", "DropMessage", "AddVoter", "RemoveVoter", "ResignAfterRemoval"})


def settled_support(s: KraftState) -> tuple[int, ...]:
    """(leader, epoch, bitmask of its supporters) when a leader is healthy and settled, else ().

    Healthy: the voters that follow it in its epoch, have fetched from it
    (FollowerState.hasFetchedFromLeader) and are on uncut links to it make a majority with it.
    Settled: no election that could depose it is under way: no Candidate, no node or message in a
    later epoch (a pre-vote request aside: it moves nobody), and no pre-vote grant held by a
    Prospective or in flight (a grant given before the voter's first fetch is a real race in
    Kafka, not a disruption of a settled leader)."""
    nodes = s.nodes
    for leader, n in enumerate(nodes):
        if n.role != LEADER:
            continue
        epoch, mask, count = n.epoch, 0, 1
        for j, m in enumerate(nodes):
            if (j != leader and not m.observer and m.role == FOLLOWER and m.leader == leader and m.epoch == epoch
                    and m.fetched and not link_cut(s, leader, j)):
                mask |= 1 << j
                count += 1
        if count < rules.majority(len(nodes)):
            continue
        for j, m in enumerate(nodes):
            if m.epoch > epoch or m.role == CANDIDATE:
                return ()
            if m.role == PROSPECTIVE and any(v == GRANTED for k, v in enumerate(m.votes) if k != j):
                return ()
        for msg in s.network:
            if msg.kind == VOTE_REQUEST and msg.pre_vote:
                continue
            if msg.epoch > epoch or (msg.kind == VOTE_RESPONSE and msg.granted):
                return ()
        return (leader, epoch, mask)
    return ()


def lost_supporter(watch: tuple[int, ...], s: KraftState) -> int:
    """The watched leader if it no longer leads its epoch, else a watched supporter that no longer
    follows it there, else -1."""
    leader, epoch, mask = watch
    n = s.nodes[leader]
    if n.role != LEADER or n.epoch != epoch:
        return leader
    for j, m in enumerate(s.nodes):
        if mask >> j & 1 and not (m.role == FOLLOWER and m.leader == leader and m.epoch == epoch):
            return j
    return -1


def track(s: KraftState, action: Any, t: KraftState) -> KraftState:
    """The ghost after the step s -action-> t (t computed with s's ghost unchanged)."""
    h = t.history
    if h.disrupted:
        return t
    watch = h.watch
    if type(action).__name__ in FAULTS:
        watch = ()
    elif watch:
        lost = lost_supporter(watch, t)
        if lost >= 0:
            return t._replace(history=h._replace(watch=(), disrupted=(watch[0], watch[1], lost)))
    watch = settled_support(t) or watch
    return t if watch == h.watch else t._replace(history=h._replace(watch=watch))


def not_disrupted(s: KraftState) -> bool:
    return not s.history.disrupted


def watching(s: KraftState) -> bool:
    return bool(s.history.watch)


def witness(s: KraftState) -> str:
    """Who deserted the watched leader, for the end of a counterexample."""
    if not s.history.disrupted:
        return ""
    leader, epoch, lost = s.history.disrupted
    n = s.nodes[lost]
    if lost == leader:
        return (f"leader {leader} of epoch {epoch}, followed by a majority that had fetched from it, no longer leads"
                f" (it is {rules.ROLE_NAMES[n.role]} in epoch {n.epoch}) though no fault struck")
    return (f"voter {lost} had fetched from leader {leader} of epoch {epoch} and now is {rules.ROLE_NAMES[n.role]}"
            f" in epoch {n.epoch}, though no fault struck and leader {leader} still had its majority")
