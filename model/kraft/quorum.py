"""Role transitions of one voter: QuorumState's transitionTo* methods and KafkaRaftClient's
onBecome* follow-ups. Roles change only here; each function asserts that the transition is one
QuorumState allows (an AssertionError is a bug in the model, as an IllegalStateException would
be in Kafka).

Every transition except the two vote grants resets the node's connections (resetConnections).
Durable transitions write the election state (epoch, leader, voted) to the quorum-state file,
which the model keeps as the node's epoch/leader/voted fields themselves.
"""
from __future__ import annotations

from model.kraft import network, requests, rules
from model.kraft.context import Context, election, is_only_voter, is_voter, set_node, voters_of
from model.kraft.network import drop_addressed_to, reset_connections
from model.kraft.rules import (
    CANDIDATE, FOLLOWER, LEADER, NO_ID, PROSPECTIVE, RESIGNED, UNATTACHED,
)
from model.kraft.state import (
    ELECTED_AFTER_RESTART, LEADER_CHANGE, History, KraftState, Node,
)


def _role_change(s: KraftState, c: Context, i: int, node: Node) -> KraftState:
    if not c.p.follower_hw and node.role != LEADER and node.hw != NO_ID:
        node = node._replace(hw=NO_ID)  # only leaders hold an HW in this configuration
    return reset_connections(set_node(s, i, node), i, c.p.stale_requests)


def poll_sends(s: KraftState, c: Context, i: int) -> KraftState:
    """The requests node i's next poll sends in its (new) role: a nominee's Vote requests to its
    unrecorded voters (maybeSendVoteRequests), a new leader's BeginQuorumEpoch to every voter
    (its timer starts expired), a follower's Fetch to its leader. A batch goes out whole when the
    network bound has room for all of it, else not at all, so no voter is favoured by its id;
    the Send* actions then send the requests one by one, in any order (they also retry lost
    requests)."""
    n = s.nodes[i]
    if n.role in (PROSPECTIVE, CANDIDATE):
        send_one = requests.send_vote
    elif n.role == LEADER:
        send_one = requests.send_begin_quorum_epoch
    elif n.role == FOLLOWER:
        return requests.send_fetch(s, c, i) or s
    else:
        return s
    unbounded = c.unbounded
    t = s
    for j in range(c.p.n):
        if j != i:
            t = send_one(t, unbounded, i, j) or t
    if network.count(t) > c.p.max_in_flight:
        return s  # the whole batch does not fit
    return t


def become_unattached(s: KraftState, c: Context, i: int, epoch: int, leader: int = NO_ID) -> KraftState:
    """QuorumState.transitionToUnattached: a higher epoch, or a lost election as Prospective in the
    same epoch (the vote of that epoch is kept so we cannot vote twice). The HW is kept."""
    n = s.nodes[i]
    assert epoch > n.epoch or (epoch == n.epoch and n.role == PROSPECTIVE), (n, epoch)
    voted = n.voted if epoch == n.epoch else NO_ID
    node = n._replace(role=UNATTACHED, epoch=epoch, leader=leader, voted=voted, votes=(),
                      epoch_start=NO_ID, end_offsets=(), fetched=False, vote_persisted=True)
    return _role_change(s, c, i, node)


def add_voted_state(s: KraftState, c: Context, i: int, candidate: int) -> KraftState:
    """QuorumState.unattachedAddVotedState / prospectiveAddVotedState: grant our one standard vote
    of this epoch. Durable (the reply waits for the write) unless the variant skips the write.
    A Prospective starts a fresh ProspectiveState: its pre-vote tally restarts. No reset."""
    n = s.nodes[i]
    assert n.role in (UNATTACHED, PROSPECTIVE) and n.voted == NO_ID and candidate != i, (n, candidate)
    assert not n.observer
    votes = election(c, n, i) if n.role == PROSPECTIVE else n.votes
    node = n._replace(voted=candidate, votes=votes, vote_persisted=c.proto.persist_vote)
    return set_node(s, i, node)


def become_prospective(s: KraftState, c: Context, i: int) -> KraftState:
    """QuorumState.transitionToProspective (memory only: epoch, leader and vote unchanged), then
    onBecomeProspective: a single voter is at once a Candidate."""
    n = s.nodes[i]
    assert c.proto.pre_vote and is_voter(c, n, i) and n.role in (UNATTACHED, FOLLOWER, CANDIDATE), n
    node = n._replace(role=PROSPECTIVE, votes=election(c, n, i), epoch_start=NO_ID, end_offsets=(),
                      fetched=False)
    s = _role_change(s, c, i, node)
    if rules.is_vote_granted(node.votes):
        return become_candidate(s, c, i)
    return poll_sends(s, c, i)


def become_candidate(s: KraftState, c: Context, i: int) -> KraftState:
    """QuorumState.transitionToCandidate: epoch + 1, vote for ourselves (durable), then
    onBecomeCandidate: a single voter is at once Leader. With pre-vote only a Prospective may
    become Candidate, unless the node is the only voter (checkValidTransitionToCandidate);
    without it (pre-KIP-996) any non-leader voter may."""
    n = s.nodes[i]
    allowed = (PROSPECTIVE,) if c.proto.pre_vote else (UNATTACHED, FOLLOWER, CANDIDATE, RESIGNED)
    if c.proto.pre_vote and is_only_voter(c, n, i):
        allowed = (UNATTACHED, PROSPECTIVE, FOLLOWER, CANDIDATE, RESIGNED)
    assert is_voter(c, n, i) and n.role in allowed and n.epoch < c.p.max_epoch, n
    node = n._replace(role=CANDIDATE, epoch=n.epoch + 1, leader=NO_ID, voted=i, votes=election(c, n, i),
                      epoch_start=NO_ID, end_offsets=(), fetched=False, vote_persisted=True)
    s = _role_change(s, c, i, node)
    if rules.is_vote_granted(node.votes):
        return become_leader(s, c, i)
    return poll_sends(s, c, i)


def can_become_leader(c: Context, n: Node) -> bool:
    """The model's bound: the LeaderChange record must fit in the log."""
    return not c.proto.leader_change_record or n.leo < c.p.max_log


def become_leader(s: KraftState, c: Context, i: int) -> KraftState:
    """QuorumState.transitionToLeader (the epoch start offset is the LEO; no HW yet), then
    KafkaRaftClient.onBecomeLeader: LeaderState.appendStartOfEpochControlRecords appends the
    LeaderChange record of the new epoch (flushed at once in the model)."""
    n = s.nodes[i]
    assert n.role == CANDIDATE and rules.is_vote_granted(n.votes) and can_become_leader(c, n), n
    log = n.log + ((n.epoch, LEADER_CHANGE),) if c.proto.leader_change_record else n.log
    end_offsets = tuple(len(log) if j == i else NO_ID for j in range(c.p.n))
    node = n._replace(role=LEADER, leader=i, log=log, hw=NO_ID, votes=(), epoch_start=n.leo,
                      end_offsets=end_offsets, fetched=False)
    s = _role_change(s, c, i, node)
    h = s.history
    event = ELECTED_AFTER_RESTART if s.restarts + s.disk_losses > 0 else h.last_event
    s = s._replace(history=h._replace(elected=elect(h, n.epoch, i), last_event=event))
    return poll_sends(update_leader_hw(s, c, i), c, i)


def become_follower(s: KraftState, c: Context, i: int, epoch: int, leader: int, poll: bool = True) -> KraftState:
    """QuorumState.transitionToFollower: a leader of a higher epoch, or the leader of our epoch
    we did not know (not from Follower or Leader of that epoch). The vote of the same epoch is
    kept; the HW is kept; FollowerState starts with hasFetchedFromLeader = false. Durable."""
    n = s.nodes[i]
    assert leader != i and leader != NO_ID, (n, leader)
    assert epoch > n.epoch or (epoch == n.epoch and n.role not in (FOLLOWER, LEADER)), (n, epoch)
    voted = n.voted if epoch == n.epoch else NO_ID
    node = n._replace(role=FOLLOWER, epoch=epoch, leader=leader, voted=voted, votes=(),
                      epoch_start=NO_ID, end_offsets=(), fetched=False, vote_persisted=True)
    s = _role_change(s, c, i, node)
    return poll_sends(s, c, i) if poll else s


def become_resigned(s: KraftState, c: Context, i: int) -> KraftState:
    """QuorumState.transitionToResigned (memory only): a leader gives up its epoch; ResignedState
    has no HW. KafkaRaftClient.transitionToResigned resets the connections."""
    n = s.nodes[i]
    assert n.role == LEADER, n
    node = n._replace(role=RESIGNED, hw=NO_ID, epoch_start=NO_ID, end_offsets=())
    return _role_change(s, c, i, node)


def restart(s: KraftState, c: Context, i: int, node: Node) -> KraftState:
    """KafkaRaftClient.initialize after a restart: QuorumState.initialize gave `node`; a
    Candidate runs onBecomeCandidate (a single voter is at once Leader); a voter alone in its
    latest voter set that is not a Candidate then stands at once (stands_at_start) and is Leader
    in epoch + 1. The fault actions are not taken where that Leader would pass the model's
    bounds (restart_beyond_bounds)."""
    s = _role_change(s, c, i, node)
    if node.role == CANDIDATE and rules.is_vote_granted(node.votes) and can_become_leader(c, node):
        return become_leader(s, c, i)
    if stands_at_start(c, node, i) and may_stand_at_start(c, node):
        return become_candidate(s, c, i)
    return poll_sends(s, c, i)


def restart_beyond_bounds(c: Context, i: int, node: Node) -> bool:
    """Node i restarting as `node` (QuorumState.initialize) would be Leader at once in Kafka (a
    restored Candidate whose own vote is a majority, or stands_at_start), but the model's bounds
    cannot hold that Leader (its epoch, its LeaderChange record): the model has no such restart,
    as a lone voter's ElectionTimeout is not taken there either."""
    if node.role == CANDIDATE and rules.is_vote_granted(node.votes):
        return not can_become_leader(c, node)
    return stands_at_start(c, node, i) and not may_stand_at_start(c, node)


def initialize(s: KraftState, c: Context) -> KraftState:
    """Every node's first KafkaRaftClient.initialize, on its freshly formatted disk:
    QuorumState.initialize finds no quorum-state file (Unattached in epoch 0); a voter alone in
    the bootstrap voter set then stands at once (stands_at_start) and is Leader of epoch 1 with
    its LeaderChange record before any other step. Where that record would not fit (max_log 0)
    the model keeps it Unattached: the real node's Leader is beyond the bounds."""
    for i in range(c.p.n):
        n = s.nodes[i]
        if stands_at_start(c, n, i) and may_stand_at_start(c, n):
            s = become_candidate(s, c, i)
    return s


def stands_at_start(c: Context, n: Node, i: int) -> bool:
    """KafkaRaftClient.initialize, its last step ("When there is only a single voter, become
    candidate immediately"): quorum.isOnlyVoter() && !quorum.isCandidate() runs
    transitionToCandidate (epoch + 1, from any role but Leader, with pre-vote too: no
    Prospective), whose onBecomeCandidate makes the node Leader at once (its own vote is a
    majority). A restored Candidate that onBecomeCandidate already made Leader is left out: Kafka
    would call transitionToCandidate on that Leader and throw (QuorumState: "Cannot transition to
    Candidate ... already a Leader")."""
    return is_only_voter(c, n, i) and n.role not in (CANDIDATE, LEADER)


def may_stand_at_start(c: Context, n: Node) -> bool:
    """The model's bounds: the new epoch within max_epoch, the LeaderChange record within max_log."""
    return n.epoch < c.p.max_epoch and can_become_leader(c, n)


def update_leader_hw(s: KraftState, c: Context, i: int) -> KraftState:
    """LeaderState.maybeUpdateHighWatermark after an end offset changed; a new HW commits the
    entries below it (ghost: History.committed, History.leader_hws)."""
    n = s.nodes[i]
    ends = n.end_offsets
    if c.p.dynamic:  # only the voters of the leader's latest set count, itself only if one of them
        ends = tuple(ends[j] for j in rules.members(voters_of(c, n)))
    hw = rules.leader_high_watermark(ends, n.epoch_start, n.hw, not c.proto.epoch_start_hw)
    if hw == n.hw:
        return s
    s = set_node(s, i, n._replace(hw=hw))
    return s._replace(history=commit(s.history, n.log, hw, n.epoch))


def elect(h: History, epoch: int, leader: int) -> tuple[tuple[int, int], ...]:
    """Ghost: (epoch, leader) joins every leader ever elected."""
    return tuple(sorted(set(h.elected) | {(epoch, leader)}))


def commit(h: History, log: tuple, hw: int, epoch: int) -> History:
    """Ghost: every entry below a leader's HW is committed; remember the first epoch that
    committed it, and the largest HW each epoch's leader exposed."""
    known = {(off, ep) for off, ep, _, _ in h.committed}
    new = [(off, log[off][0], log[off][1], epoch) for off in range(hw) if (off, log[off][0]) not in known]
    committed = tuple(sorted(h.committed + tuple(new))) if new else h.committed
    hws = dict(h.leader_hws)
    hws[epoch] = max(hw, hws.get(epoch, NO_ID))
    return h._replace(committed=committed, leader_hws=tuple(sorted(hws.items())))


def restored_node(s: KraftState, c: Context, i: int) -> Node:
    """QuorumState.initialize: node i's role, epoch, leader and vote from its quorum-state file
    and its log (rules.initial_election_state); the HW and the role data are lost."""
    n = s.nodes[i]
    stored_vote = NO_ID if n.observer or not n.vote_persisted else n.voted  # a new disk holds no vote
    init = rules.initial_election_state(i, n.epoch, n.leader, stored_vote, rules.last_epoch(n.log))
    if not is_voter(c, n, i) and not (init.role == FOLLOWER and voters_of(c, n) >> init.leader & 1):
        # a non-voter never stands or leads; it follows the leader it knew when its voter set
        # gives that leader's endpoints (QuorumState.initialize), else it comes back Unattached
        init = rules.InitialElection(rules.UNATTACHED, n.epoch, NO_ID, stored_vote)
    votes = election(c, n, i) if init.role == CANDIDATE else ()
    return Node(init.role, init.epoch, init.leader, init.voted, n.log, NO_ID, votes, NO_ID, (), False,
                n.observer, True)


def restart_process(s: KraftState, c: Context, i: int) -> KraftState:
    """Node i's process starts again from its disk (see restart)."""
    return restart(drop_addressed_to(s, i), c, i, restored_node(s, c, i))
