"""When a KafkaRaftClient timer really expires: the cause that, with Kafka's timeouts much longer
than a round trip (eventual synchrony), makes it fire. The model's time is abstract, so its
timers may expire in any state where Kafka runs them; the liveness pass explores only timely
behaviours, in which a timer expires when its cause holds (as Raft's liveness argument assumes
with randomized timeouts), and that cause is also where the timer is fair."""
from __future__ import annotations

from model.kraft import rules
from model.kraft.network import link_cut
from model.kraft.rules import CANDIDATE, LEADER, PROSPECTIVE, RESIGNED, UNATTACHED
from model.kraft.state import KraftState


def leader_in_reach(s: KraftState, i: int) -> bool:
    """Some leader of an epoch at least i's is on an uncut link to i (it will reach i)."""
    n = s.nodes[i]
    return any(j != i and m.role == LEADER and m.epoch >= n.epoch and not link_cut(s, i, j)
               for j, m in enumerate(s.nodes))


def possible_votes(s: KraftState, i: int) -> int:
    """Votes nominee i holds or may still get: its own, and those of the voters on an uncut link
    that have not rejected it (an observer answers INVALID_VOTER_KEY, never a vote)."""
    votes = s.nodes[i].votes
    return 1 + sum(1 for j, m in enumerate(s.nodes) if j != i and votes[j] != rules.REJECTED
                   and votes[j] != rules.NOT_VOTER and not m.observer and not link_cut(s, i, j))


def election_stuck(s: KraftState, i: int) -> bool:
    """the node has no leader within reach and, if it stands, its election cannot be won any
    more (too many voters rejected it, cannot be reached or cannot vote)"""
    n = s.nodes[i]
    if n.role == RESIGNED:
        return True
    if n.role == UNATTACHED:
        return not leader_in_reach(s, i)
    if n.role in (PROSPECTIVE, CANDIDATE):
        if possible_votes(s, i) < rules.majority(len(n.votes) - n.votes.count(rules.NOT_VOTER)):
            return True
        return n.role == PROSPECTIVE and leader_in_reach(s, i)
    return False


def leader_out_of_reach(s: KraftState, i: int) -> bool:
    """the follower's leader is cut off from it or no longer leads its epoch"""
    n = s.nodes[i]
    if not 0 <= n.leader < len(s.nodes) or link_cut(s, i, n.leader):
        return True
    leader = s.nodes[n.leader]
    return leader.role != LEADER or leader.epoch != n.epoch


def supporters(s: KraftState, i: int, voters: int = -1) -> int:
    """Voters (of the set `voters`, all nodes by default) besides leader i, on an uncut link, in
    its epoch, that follow it or voted for it."""
    n = s.nodes[i]
    return sum(1 for j, m in enumerate(s.nodes)
               if j != i and voters >> j & 1 and not m.observer and m.epoch == n.epoch
               and (m.leader == i or m.voted == i) and not link_cut(s, i, j))


def quorum_silent(s: KraftState, i: int, voters: int) -> bool:
    """fewer than a majority of the voters of the leader's latest set (the leader included if it
    is one) can fetch from the leader"""
    return supporters(s, i, voters) + (voters >> i & 1) < rules.majority(bin(voters).count("1"))
