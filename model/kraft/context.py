"""What every KRaft action reads besides the state (`Context`: the parameters and the variant's
switches) and the voter-set queries on it: the lowest layer of the KRaft actions, below the
requests (model/kraft/requests.py), the role transitions (quorum.py), the client and the faults."""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property, lru_cache

from model.kraft import rules
from model.kraft.params import Params
from model.kraft.rules import GRANTED, NOT_VOTER, UNRECORDED
from model.kraft.state import KraftState, Node
from model.kraft.variants import Protocol


@dataclass(frozen=True)
class Context:
    """What every action reads besides the state: the parameters and the variant's switches."""

    p: Params
    proto: Protocol
    timely: bool = False  # timers expire only when their cause holds (model.kraft.timing)

    @cached_property
    def unbounded(self) -> "Context":
        """The same context without the in-flight bound (poll_sends sizes a batch with it)."""
        return replace(self, p=replace(self.p, max_in_flight=1 << 30))


def set_node(s: KraftState, i: int, node: Node) -> KraftState:
    nodes = s.nodes
    return tuple.__new__(KraftState, (nodes[:i] + (node,) + nodes[i + 1:],) + s[1:])


@lru_cache(maxsize=None)
def own_vote(n: int, i: int, voters: int) -> tuple[int, ...]:
    """A new EpochElection over a copy of the voter set (QuorumState.transitionToProspective,
    transitionToCandidate): every voter unrecorded but ourselves, granted; other nodes NOT_VOTER."""
    return tuple(GRANTED if j == i else UNRECORDED if voters >> j & 1 else NOT_VOTER for j in range(n))


def voters_of(c: Context, n: Node) -> int:
    """The voter set node n acts on: the last in its log, uncommitted included (lastVoterSet)."""
    if not c.p.dynamic:
        return c.p.bootstrap
    return rules.last_voter_set(n.log, c.p.bootstrap)[0]


def is_voter(c: Context, n: Node, i: int) -> bool:
    """QuorumState.isVoter: node i's key is in its own latest voter set (a new directory id is not)."""
    return not n.observer and bool(voters_of(c, n) >> i & 1)


def is_only_voter(c: Context, n: Node, i: int) -> bool:
    """QuorumState.isOnlyVoter: node i's key is the only one in its own latest voter set."""
    return is_voter(c, n, i) and voters_of(c, n) == 1 << i


def election(c: Context, n: Node, i: int) -> tuple[int, ...]:
    """Node i's new EpochElection over its latest voter set."""
    return own_vote(c.p.n, i, voters_of(c, n))
