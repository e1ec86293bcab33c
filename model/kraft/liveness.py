"""Liveness of the kraft model: which actions are fair (and where), the temporal properties, and
the actions a bound of the configuration blocks. spec/kraft.md ("Liveness") gives the Kafka
mechanism behind each fairness choice.

Time is abstract in the model, so a timer may expire in any state where Kafka has it running. A
timer is fair only where the real cause of its expiry holds (a leader out of reach, a majority
silent); elsewhere it may still expire, it is just not forced to.
"""
from __future__ import annotations

from dataclasses import replace
from itertools import combinations
from typing import Any, Callable

from model.interface import Fairness, Property, always_eventually, leads_to, timely_invariant, weak_fairness
from model.kraft import disruption, rules
from model.kraft.network import link_cut
from model.kraft.params import Params
from model.kraft.quorum import Context
from model.kraft.rules import FOLLOWER, LEADER, PROSPECTIVE
from model.kraft.state import KraftState
from model.kraft.variants import Protocol

# --- where the fair actions are forced ----------------------------------------------------------


def link_up(s: KraftState, a: Any) -> bool:
    """the link between sender and receiver is not cut"""
    return not link_cut(s, a.src, a.dst)


def not_following(s: KraftState, a: Any) -> bool:
    """the voter does not yet follow this leader in its epoch, and the link is up"""
    leader, voter = s.nodes[a.src], s.nodes[a.dst]
    return link_up(s, a) and not (voter.role == FOLLOWER and voter.leader == a.src and voter.epoch == leader.epoch)


DELIVERY = ("a request or response in flight on a live link arrives: TCP, and NetworkClient's"
            " request timeout and retry (RequestManager) resend what was lost on a broken connection")

FAIRNESS: tuple[Fairness, ...] = tuple(
    weak_fairness(kind, DELIVERY, link_up) for kind in (
        "HandleVoteRequest", "HandleVoteResponse", "HandleBeginQuorumEpochRequest",
        "HandleBeginQuorumEpochResponse", "HandleFetchRequest", "HandleFetchResponse")
) + (
    weak_fairness("SendFetch", "a follower's poll sends a Fetch whenever none is outstanding"
                  " (KafkaRaftClient.pollFollowerAsVoter, maybeSendFetchOrFetchSnapshot)"),
    weak_fairness("SendVote", "a Prospective or Candidate sends Vote to every voter it has no answer from on each"
                  " poll (maybeSendVoteRequests)"),
    weak_fairness("SendBeginQuorumEpoch", "the leader resends BeginQuorumEpoch on a timer to voters that have not"
                  " acknowledged its epoch (LeaderState.nonAcknowledgingVoters, beginQuorumEpochTimer)",
                  not_following),
    weak_fairness("ElectionTimeout", "the election timer runs in every state with no leader to follow"
                  " (Unattached, Prospective, Candidate, Resigned: EpochState.electionTimeoutMs) and is only"
                  " reset by leaving it; timely, it expires when no leader is in reach and the node's own"
                  " election is lost or cannot be won (timing.election_stuck)"),
    weak_fairness("FetchTimeout", "FollowerState's fetch timer is reset only by a successful fetch, so it"
                  " expires when the leader is out of reach (pollFollowerAsVoter; timing.leader_out_of_reach)"),
    weak_fairness("CheckQuorumTimeout", "LeaderState's check-quorum timer is reset only by fetches from a"
                  " majority, so it expires when a majority cannot fetch (pollLeader,"
                  " timeUntilCheckQuorumExpires; timing.quorum_silent)"),
)

# --- temporal properties ------------------------------------------------------------------------


def connected_majority(s: KraftState) -> bool:
    """Some majority of the voters (observers excluded) is pairwise connected."""
    if not s.cut_links and not any(n.observer for n in s.nodes):
        return True
    quorum = rules.majority(len(s.nodes))
    voters = [i for i, n in enumerate(s.nodes) if not n.observer]
    best = 0
    for i in voters:
        group = [i]
        for j in voters:
            if j != i and all(not link_cut(s, j, k) for k in group):
                group.append(j)
        best = max(best, len(group))
    return best >= quorum


def has_leader(s: KraftState, spares: int = 0) -> bool:
    """Some leader is followed, in its epoch, by enough voters of its latest voter set to make a
    majority of that set with it (itself counted only if it is one of them)."""
    bootstrap = (1 << (len(s.nodes) - spares)) - 1
    for i, n in enumerate(s.nodes):
        if n.role == LEADER:
            voters = rules.last_voter_set(n.log, bootstrap)[0]
            followers = sum(1 for j, m in enumerate(s.nodes) if j != i and voters >> j & 1
                            and m.role == FOLLOWER and m.leader == i and m.epoch == n.epoch)
            if followers + (voters >> i & 1) >= rules.majority(bin(voters).count("1")):
                return True
    return False


def leaderless(spares: int) -> Callable[[KraftState], bool]:
    return lambda s: not has_leader(s, spares) and connected_majority(s)


def leader_or_split(spares: int) -> Callable[[KraftState], bool]:
    return lambda s: has_leader(s, spares) or not connected_majority(s)


def isolated_leader(s: KraftState) -> bool:
    """Some leader cannot reach a majority of the voters (itself included) over uncut links."""
    if not s.cut_links and not any(n.observer for n in s.nodes):
        return False
    quorum = rules.majority(len(s.nodes))
    for i, n in enumerate(s.nodes):
        if n.role == LEADER:
            reach = sum(1 for j, m in enumerate(s.nodes) if j != i and not m.observer and not link_cut(s, i, j))
            if reach + 1 < quorum:
                return True
    return False


def behind(i: int) -> Callable[[KraftState], bool]:
    """Node i follows a leader that leads its epoch and whose HW is past i's log end."""
    def check(s: KraftState) -> bool:
        n = s.nodes[i]
        if n.role != FOLLOWER or not 0 <= n.leader < len(s.nodes):
            return False
        leader = s.nodes[n.leader]
        return leader.role == LEADER and leader.epoch == n.epoch and leader.hw > n.leo
    return check


def prospective(i: int) -> Callable[[KraftState], bool]:
    return lambda s: s.nodes[i].role == PROSPECTIVE


def properties(p: Params, proto: Protocol) -> list[Property]:
    """The temporal properties (a Prospective node exists only with pre-vote)."""
    out = [
        leads_to("leader_elected_eventually", leaderless(p.spares), leader_or_split(p.spares),
                 "a majority that can talk elects a leader that a majority follows (or the network splits"
                 " again)"),
        always_eventually("isolated_leader_resigns", lambda s: not isolated_leader(s),
                          "a leader cut off from a majority of the voters does not stay leader forever"
                          " (check-quorum, KIP-996)"),
    ]
    out.append(timely_invariant(
        "leader_not_disrupted", disruption.not_disrupted, disruption.watching,
        "a leader followed over uncut links by a majority that has fetched from it, with no election under"
        " way, keeps those followers until a fault strikes: a voter that rejoins does not depose it (pre-vote,"
        " KIP-996)"))
    for i in range(p.n if p.dynamic else 0):
        out.append(leads_to(f"replica_catches_up_{i}", behind(i), lambda s, i=i: not behind(i)(s),
                            f"node {i}, following a leader in its epoch, does not stay behind that leader's HW"
                            " forever: the leader serves its fetches, voter or observer (KIP-853)"))
    for i in range(p.voters if proto.pre_vote else 0):  # a spare stands only once added
        out.append(leads_to(f"prospective_resolves_{i}", prospective(i), lambda s, i=i: not prospective(i)(s),
                            f"voter {i} does not stay Prospective forever (KIP-996)"))
    return out


# --- bounds ---------------------------------------------------------------------------------------

BOUNDS = ("max_epoch", "max_log", "max_in_flight", "timeouts")


def lifted_contexts(c: Context) -> list[tuple[str, Context]]:
    """The context with bounds raised past anything a state holds: one at a time, then every
    combination of them, smallest first (a timeout that would also raise the epoch needs both
    `timeouts` and `max_epoch` lifted). A name joins the lifted bounds with '+'."""
    p = c.p
    lifted = {
        "max_epoch": {"max_epoch": p.max_epoch + 1},
        "max_log": {"max_log": p.max_log + 1},
        "max_in_flight": {"max_in_flight": p.max_in_flight + 1},
        "timeouts": {"timeouts": -1},
    }
    if p.timeouts < 0:
        del lifted["timeouts"]
    out = []
    for size in range(1, len(lifted) + 1):
        for names in combinations(lifted, size):
            changes = {k: v for name in names for k, v in lifted[name].items()}
            out.append(("+".join(names), replace(c, p=replace(p, **changes))))
    return out


def bound_blocked(step: Callable[[KraftState, Context, Any], Any], candidates: list[Any], s: KraftState,
                  c: Context) -> list[tuple[Any, str]]:
    """The candidate actions (disabled in s) that raising bounds would enable, each with the
    smallest set of bounds that does (see lifted_contexts)."""
    out = []
    lifted = lifted_contexts(c)
    for a in candidates:
        for name, ctx in lifted:
            if step(s, ctx, a) is not None:
                out.append((a, name))
                break
    return out


FAIR_KINDS = frozenset(f.action for f in FAIRNESS)
