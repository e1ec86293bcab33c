"""The kraft model's state: voters, network, fault budgets and ghost history.

Every field is an int, a bool or a tuple of those (never None or str), so equal states have equal
reprs and equal built-in hashes in every process. Node ids are 0..N-1; -1 means "none/unknown".
"""
from __future__ import annotations

from typing import NamedTuple

from model.kraft.rules import LEADER, NO_ID, UNATTACHED, VOTERS_BASE, members
from model.tuples import fast_fields, fast_replace

# Log entry kinds: the LeaderChange control record a new leader appends, and a client record.
LEADER_CHANGE, DATA = 0, 1
KIND_NAMES = ("LeaderChange", "Data")

Entry = tuple[int, int]  # (epoch, kind); kind >= rules.VOTERS_BASE: a VotersRecord (KIP-853)


def kind_name(kind: int) -> str:
    """LeaderChange, Data, or Voters[ids] for a VotersRecord."""
    if kind >= VOTERS_BASE:
        return "Voters" + str(members(kind - VOTERS_BASE))
    return KIND_NAMES[kind]


@fast_replace
class Node(NamedTuple):
    """One voter process: QuorumState (role), its persisted election state and its log.

    Persisted (quorum-state file, log): epoch, leader, voted (when vote_persisted), log.
    In memory only, lost on restart: role, hw and the role data (votes, epoch_start,
    end_offsets, fetched)."""

    role: int  # UNATTACHED .. RESIGNED (rules.ROLE_NAMES)
    epoch: int
    leader: int  # ElectionState.leaderId; NO_ID if unknown
    voted: int  # ElectionState.votedKey; NO_ID if none
    log: tuple[Entry, ...]
    hw: int  # high watermark; NO_ID if unknown
    # Prospective/Candidate: EpochElection, one vote state per voter; () otherwise
    votes: tuple[int, ...]
    # Leader: LeaderState.epochStartOffset and the voters' known end offsets; -1 / () otherwise
    epoch_start: int
    end_offsets: tuple[int, ...]
    fetched: bool  # Follower: FollowerState.hasFetchedFromLeader
    observer: bool  # lost its disk and came back with a new directory id: not a voter (KIP-853)
    vote_persisted: bool  # False only in vote-not-persisted, between a grant and the next write

    @property
    def leo(self) -> int:
        return len(self.log)

    @property
    def is_leader(self) -> bool:
        return self.role == LEADER


def fresh_node(observer: bool = False) -> Node:
    """A newly formatted node: no quorum-state file (epoch 0), an empty log, Unattached."""
    return Node(UNATTACHED, 0, NO_ID, NO_ID, (), NO_ID, (), NO_ID, (), False, observer, True)


# --- Messages -------------------------------------------------------------------------------
# Every message starts with (kind, src, dst). At most one message of an RPC (request or its
# response) is in flight per (requester, responder) pair, as RequestManager allows one
# outstanding request per destination. A request whose sender has since reset its connections
# (role change, restart) is still processed by its receiver but has live=False: its response
# would be ignored ("no longer needed"), so none is sent.

VOTE_REQUEST, VOTE_RESPONSE, BQE_REQUEST, BQE_RESPONSE, FETCH_REQUEST, FETCH_RESPONSE = range(6)
MESSAGE_NAMES = (
    "VoteRequest",
    "VoteResponse",
    "BeginQuorumEpochRequest",
    "BeginQuorumEpochResponse",
    "FetchRequest",
    "FetchResponse",
)
REQUESTS = (VOTE_REQUEST, BQE_REQUEST, FETCH_REQUEST)


@fast_fields
class VoteRequest(NamedTuple):
    """VoteRequestData from a Prospective (pre_vote) or Candidate to a voter."""

    kind: int
    src: int
    dst: int
    live: bool
    epoch: int  # replicaEpoch
    last_epoch: int  # lastOffsetEpoch
    last_offset: int  # lastOffset (the log end offset)
    pre_vote: bool


@fast_fields
class VoteResponse(NamedTuple):
    """VoteResponseData: the voter's epoch and leader, an error code, voteGranted."""

    kind: int
    src: int
    dst: int
    epoch: int
    leader: int
    error: int
    granted: bool


@fast_fields
class BeginQuorumEpochRequest(NamedTuple):
    """BeginQuorumEpochRequestData from the leader (src) of `epoch` to a voter."""

    kind: int
    src: int
    dst: int
    live: bool
    epoch: int


@fast_fields
class BeginQuorumEpochResponse(NamedTuple):
    """BeginQuorumEpochResponseData. Only error responses are modelled: a NONE response only
    acknowledges (LeaderState.addAcknowledgementFrom), which nothing in the model reads."""

    kind: int
    src: int
    dst: int
    epoch: int
    leader: int
    error: int


@fast_fields
class FetchRequest(NamedTuple):
    """FetchRequestData from a follower (src) to its leader (dst)."""

    kind: int
    src: int
    dst: int
    live: bool
    epoch: int  # currentLeaderEpoch
    fetch_offset: int  # the follower's log end offset
    last_fetched_epoch: int
    observer: bool  # the sender's replica key is not a voter's (new directory id)


@fast_fields
class FetchResponse(NamedTuple):
    """FetchResponseData: current leader and epoch, error, divergingEpoch, records, HW."""

    kind: int
    src: int
    dst: int
    epoch: int
    leader: int
    error: int
    diverging_epoch: int  # -1 when not diverging
    diverging_offset: int
    records: tuple[Entry, ...]
    hw: int  # -1 when the leader has none


Message = VoteRequest | VoteResponse | BeginQuorumEpochRequest | BeginQuorumEpochResponse | FetchRequest | FetchResponse


def rpc_of(kind: int) -> int:
    """The RPC a message kind belongs to: its request kind."""
    return kind - kind % 2


# --- Ghost history (never read by the protocol, only by the properties) -------------------------

NO_EVENT, TRUNCATED, CHECK_QUORUM_RESIGN, ELECTED_AFTER_RESTART, PRE_VOTE_LOST, REMOVED_LEADER_RESIGNED = range(6)
EVENT_NAMES = ("", "truncated", "check_quorum_resign", "elected_after_restart", "pre_vote_lost",
               "removed_leader_resigned")

FATAL_TRUNCATE_BELOW_HW = 1  # leader requested truncation below the HW: KafkaException
FATAL_NON_MONOTONIC_HW = 2  # FollowerState.updateHighWatermark went backwards
FATAL_NAMES = ("", "truncate_below_hw", "non_monotonic_hw")


@fast_replace
class History(NamedTuple):
    """Ghost variables for the properties."""

    elected: tuple[tuple[int, int], ...]  # every (epoch, leader) ever elected, sorted
    committed: tuple[tuple[int, int, int, int], ...]  # (offset, epoch, kind, commit epoch), sorted
    leader_hws: tuple[tuple[int, int], ...]  # (epoch, largest HW its leader exposed), sorted
    fatal: tuple[tuple[int, int], ...]  # (node, FATAL_*) Kafka exceptions for lost committed data, a set
    last_event: int  # what the last step did, for reachability witnesses (EVENT_NAMES)
    # Timely model only (model.kraft.disruption); () in the safety model, so symmetry ignores them.
    watch: tuple[int, ...] = ()  # (leader, epoch, supporters' bitmask) of a settled healthy leader
    disrupted: tuple[int, ...] = ()  # (leader, epoch, voter) once a watched supporter left it: sticky


@fast_replace
class KraftState(NamedTuple):
    nodes: tuple[Node, ...]
    network: tuple[Message, ...]  # messages in flight, sorted (a set)
    cut_links: tuple[tuple[int, int], ...]  # (a, b) with a < b: messages between them are held
    restarts: int  # fault budgets used
    disk_losses: int
    cuts: int
    losses: int
    timers: int  # timer expirations so far (counted only when the config bounds them)
    history: History
    changes: int = 0  # voter set changes so far (AddVoter, RemoveVoter: budget voter_changes)

    @property
    def faults(self) -> int:
        """Fault events so far, of every kind."""
        return self.restarts + self.disk_losses + self.cuts + self.losses


def initial_state(voters: int) -> KraftState:
    """Every voter freshly formatted: epoch 0, Unattached, empty log; nothing in flight."""
    return KraftState(
        tuple(fresh_node() for _ in range(voters)), (), (), 0, 0, 0, 0, 0, History((), (), (), (), NO_EVENT)
    )
