"""The actions of one voter's KafkaRaftClient: its timers, the requests it sends, and its
handlers for requests and responses.

Each function is one action: its guard first (return None when the action is not enabled in
this state, which includes the model's bounds), then its effect, returning the new state.
Handlers take the message they deliver; `i` is the node acting or receiving.
"""
from __future__ import annotations

from model.kraft import quorum as Q
from model.kraft import rules, timing
from model.kraft.requests import room, send_begin_quorum_epoch, send_fetch, send_vote  # noqa: F401 (client.send_*)
from model.kraft.network import find, in_flight, link_cut, remove, send
from model.kraft.quorum import Context, set_node
from model.kraft.rules import (
    CANDIDATE, FENCED_LEADER_EPOCH, FOLLOWER, INVALID_REQUEST, INVALID_VOTER_KEY, LEADER, NO_ID, NONE, PROSPECTIVE,
    RESIGNED, UNATTACHED,
)
from model.kraft.state import (
    BQE_REQUEST, BQE_RESPONSE, CHECK_QUORUM_RESIGN, DATA, PRE_VOTE_LOST, REMOVED_LEADER_RESIGNED,
    FATAL_NON_MONOTONIC_HW, FATAL_TRUNCATE_BELOW_HW, FETCH_REQUEST, FETCH_RESPONSE, TRUNCATED,
    VOTE_REQUEST, VOTE_RESPONSE, BeginQuorumEpochRequest, BeginQuorumEpochResponse, FetchRequest,
    FetchResponse, KraftState, Node, VoteRequest, VoteResponse,
)


def fatal(s: KraftState, i: int, code: int) -> KraftState:
    """Kafka would throw here (KafkaException, IllegalArgumentException) because committed data
    was lost: record it (ghost; the no_fatal_error property fails)."""
    h = s.history
    return s._replace(history=h._replace(fatal=tuple(sorted(set(h.fatal) | {(i, code)}))))


def inconsistent_leader(s: KraftState, c: Context, i: int) -> KraftState:
    """hasConsistentLeader failed: KafkaRaftClient throws IllegalStateException from poll, the
    raft thread's fatal fault handler exits the process, and (in the model) it starts again
    from its disk at once. Reachable in Kafka 4.1 when a replica with a new disk learns that
    its old incarnation leads the current epoch; with two leaders in one epoch, election
    safety has failed first."""
    return Q.restart_process(s, c, i)


# --- Timers (KafkaRaftClient.poll*) -------------------------------------------------------------


def timer_may_expire(s: KraftState, c: Context) -> bool:
    """The config's budget of timer expirations (key `timeouts`, -1 = no bound) has room."""
    return c.p.timeouts < 0 or s.timers < c.p.timeouts


def expired(s: KraftState | None, c: Context) -> KraftState | None:
    """Count a timer expiration against a bounded budget (no counter without a bound, so the
    unbounded space has no extra states)."""
    if s is None or c.p.timeouts < 0:
        return s
    return s._replace(timers=s.timers + 1)


def election_timeout(s: KraftState, c: Context, i: int) -> KraftState | None:
    """Voter i's election timer expires (pollUnattachedAsVoter, pollProspective, pollCandidate,
    pollResigned).

    Unattached -> Prospective; Candidate -> Prospective (also after its backoff);
    Prospective (timed out before a majority answered) -> Follower of the leader it knew, else
    Unattached in the same epoch; Resigned -> Unattached in epoch + 1 (4.1: QuorumState's
    Resigned transitions). Without pre-vote (pre-KIP-996) Unattached, Candidate and Resigned
    become Candidate in epoch + 1."""
    n = s.nodes[i]
    if n.role != RESIGNED and not Q.is_voter(c, n, i):
        return None  # observers have no election timer (electionTimeoutMs = Long.MAX_VALUE)
    if not timer_may_expire(s, c) or (c.timely and not timing.election_stuck(s, i)):
        return None
    return expired(_election_timeout(s, c, i, n), c)


def _election_timeout(s: KraftState, c: Context, i: int, n: Node) -> KraftState | None:
    """election_timeout's effect, per role."""
    if not c.proto.pre_vote:
        if n.role == RESIGNED and not Q.is_voter(c, n, i):  # a leader that removed itself
            return Q.become_unattached(s, c, i, n.epoch + 1) if n.epoch < c.p.max_epoch else None
        if n.role in (UNATTACHED, CANDIDATE, RESIGNED) and _may_stand(c, n, i):
            return Q.become_candidate(s, c, i)
        return None
    if n.role in (UNATTACHED, CANDIDATE):
        if _lone_voter_beyond_bounds(c, n, i):
            return None
        return Q.become_prospective(s, c, i)
    if n.role == PROSPECTIVE:
        return prospective_transition_after_election_loss(s, c, i)
    if n.role == RESIGNED and n.epoch < c.p.max_epoch:
        return Q.become_unattached(s, c, i, n.epoch + 1)
    return None


def prospective_transition_after_election_loss(s: KraftState, c: Context, i: int) -> KraftState:
    """Prospective i gives up its pre-vote (KafkaRaftClient.prospectiveTransitionAfterElectionLoss):
    Follower of the leader it knew in its epoch, else Unattached in the same epoch."""
    n = s.nodes[i]
    if n.leader != NO_ID:
        return Q.become_follower(s, c, i, n.epoch, n.leader)
    return Q.become_unattached(s, c, i, n.epoch)


def _lone_voter_beyond_bounds(c: Context, n: Node, i: int) -> bool:
    """Voter i is alone in its set, so standing makes it Leader at once (its own vote is a
    majority), and that would pass the epoch bound or its LeaderChange record would not fit."""
    return rules.is_vote_granted(Q.election(c, n, i)) and (n.epoch >= c.p.max_epoch or not Q.can_become_leader(c, n))


def _may_stand(c: Context, n: Node, i: int) -> bool:
    """Without pre-vote, voter i may become Candidate in epoch + 1 within the bounds (a lone
    voter's leadership included)."""
    return n.epoch < c.p.max_epoch and not _lone_voter_beyond_bounds(c, n, i)


def fetch_timeout(s: KraftState, c: Context, i: int) -> KraftState | None:
    """Follower i's fetch timer expires (pollFollowerAsVoter): Prospective (without pre-vote,
    Candidate in epoch + 1). Observers keep fetching (from bootstrap servers: not modelled)."""
    n = s.nodes[i]
    if n.role != FOLLOWER or not Q.is_voter(c, n, i) or not timer_may_expire(s, c):
        return None
    if c.timely and not timing.leader_out_of_reach(s, i):
        return None
    if not c.proto.pre_vote:
        return expired(Q.become_candidate(s, c, i), c) if _may_stand(c, n, i) else None
    if _lone_voter_beyond_bounds(c, n, i):
        return None
    return expired(Q.become_prospective(s, c, i), c)


def check_quorum_timeout(s: KraftState, c: Context, i: int) -> KraftState | None:
    """Leader i's check-quorum timer expires: no fetch from a majority of the voters within
    1.5 x the fetch timeout (LeaderState.timeUntilCheckQuorumExpires), so pollLeader resigns.
    Time is abstract, so the timer may expire whenever fetches could have been late; it never
    expires with a single voter."""
    n = s.nodes[i]
    if n.role != LEADER or not c.proto.check_quorum or not timer_may_expire(s, c):
        return None
    voters = Q.voters_of(c, n)
    if voters & (voters - 1) == 0:
        return None  # a single voter
    if c.timely and not timing.quorum_silent(s, i, voters):
        return None
    s = expired(Q.become_resigned(s, c, i), c)
    return s._replace(history=s.history._replace(last_event=CHECK_QUORUM_RESIGN))


def client_append(s: KraftState, c: Context, i: int) -> KraftState | None:
    """A client appends a record at leader i (KafkaRaftClient.prepareAppend/schedule, flushed by
    pollLeader): LeaderState.updateLocalState may move the HW."""
    n = s.nodes[i]
    if n.role != LEADER or n.leo >= c.p.max_log:
        return None
    log = n.log + ((n.epoch, DATA),)
    end_offsets = n.end_offsets[:i] + (len(log),) + n.end_offsets[i + 1:]
    s = set_node(s, i, n._replace(log=log, end_offsets=end_offsets))
    return Q.update_leader_hw(s, c, i)


# --- Requests sent ------------------------------------------------------------------------------


def send_observer_fetch(s: KraftState, c: Context, i: int, j: int) -> KraftState | None:
    """An observer that knows no leader fetches from bootstrap voter j (pollUnattachedCommon,
    maybeSendFetchToAnyBootstrap); the answer names the leader (NOT_LEADER_OR_FOLLOWER or
    FENCED_LEADER_EPOCH with the current epoch and leader), which it then follows. Only in
    configurations with voter changes or spares (a lost disk's observer learns the leader from
    BeginQuorumEpoch)."""
    n = s.nodes[i]
    if not c.p.dynamic or n.role != UNATTACHED or Q.is_voter(c, n, i) or j == i or not c.p.bootstrap >> j & 1:
        return None
    if not room(s, c) or in_flight(s, FETCH_REQUEST, i, j) or link_cut(s, i, j):
        return None
    end = rules.end_offset(n.log)
    return send(s, FetchRequest(FETCH_REQUEST, i, j, True, n.epoch, end.offset, end.epoch, n.observer))


def _respond(s: KraftState, request_live: bool, response: object) -> KraftState:
    """Reply to a request unless its sender no longer expects the response."""
    return send(s, response) if request_live else s  # type: ignore[arg-type]


# --- Common handling ----------------------------------------------------------------------------


def maybe_transition(s: KraftState, c: Context, i: int, leader: int, epoch: int) -> KraftState:
    """KafkaRaftClient.maybeTransition: learn a higher epoch (Follower of its leader if known,
    else Unattached) or the unknown leader of our epoch; an inconsistent leader is fatal."""
    n = s.nodes[i]
    if not rules.has_consistent_leader(epoch, leader, i, n.epoch, n.leader, n.role == LEADER):
        return inconsistent_leader(s, c, i)
    if epoch > n.epoch:
        if leader != NO_ID:
            return Q.become_follower(s, c, i, epoch, leader)
        return Q.become_unattached(s, c, i, epoch)
    if leader != NO_ID and n.leader == NO_ID:
        return Q.become_follower(s, c, i, epoch, leader)
    return s


def handle_common_response(
    s: KraftState, c: Context, i: int, error: int, leader: int, epoch: int, follow_poll: bool = True
) -> tuple[KraftState, bool]:
    """KafkaRaftClient.maybeHandleCommonResponse: (new state, handled). follow_poll=False: a
    node that starts following here polls after the caller has handled the response (a Fetch
    response's records are appended first, then the next Fetch goes out)."""
    n = s.nodes[i]
    outcome = rules.common_response_outcome(error, leader, epoch, n.epoch, n.leader)
    if outcome == rules.IGNORE or outcome == rules.HANDLED:
        return s, True
    if outcome == rules.TRANSITION:
        return maybe_transition(s, c, i, leader, epoch), True
    if outcome == rules.FOLLOW:
        if leader == i:
            return inconsistent_leader(s, c, i), True
        return Q.become_follower(s, c, i, epoch, leader, poll=follow_poll), error != NONE
    return s, False


# --- Vote ---------------------------------------------------------------------------------------


def handle_vote_request(s: KraftState, c: Context, m: VoteRequest) -> KraftState | None:
    """Voter m.dst handles a Vote request (KafkaRaftClient.handleVoteRequest).

    Validation (rules.validate_vote_request) may answer INVALID_REQUEST or FENCED_LEADER_EPOCH
    with no state change. A higher epoch makes the voter Unattached in that epoch first, for a
    pre-vote too. A replica that is not the voter the request names (a new directory id)
    answers INVALID_VOTER_KEY. Otherwise it grants per EpochState.canGrantVote, and a granted
    standard vote is recorded (durably) before the response."""
    i = m.dst
    s = remove(s, m)
    n = s.nodes[i]
    error = rules.validate_vote_request(m.src, m.epoch, m.last_epoch, m.last_offset, m.pre_vote, n.epoch)
    if error != NONE:
        return _respond(s, m.live, VoteResponse(VOTE_RESPONSE, i, m.src, n.epoch, n.leader, error, False))
    if m.epoch > n.epoch:
        s = Q.become_unattached(s, c, i, m.epoch)
        n = s.nodes[i]
    if n.observer:
        return _respond(s, m.live, VoteResponse(VOTE_RESPONSE, i, m.src, n.epoch, n.leader, INVALID_VOTER_KEY, False))
    up_to_date = not c.proto.vote_log_check or rules.is_log_up_to_date(
        m.last_epoch, m.last_offset, rules.end_offset(n.log))
    granted = rules.can_grant_vote(n.role, n.leader, n.voted, n.fetched, m.src, up_to_date, m.pre_vote)
    if granted and not m.pre_vote and n.role in (UNATTACHED, PROSPECTIVE) and n.voted == NO_ID:
        s = Q.add_voted_state(s, c, i, m.src)
        n = s.nodes[i]
    return _respond(s, m.live, VoteResponse(VOTE_RESPONSE, i, m.src, n.epoch, n.leader, NONE, granted))


def handle_vote_response(s: KraftState, c: Context, m: VoteResponse) -> KraftState | None:
    """Nominee m.dst handles a Vote response (KafkaRaftClient.handleVoteResponse): common
    handling first; then a Prospective or Candidate records the vote and moves forward on a
    majority (maybeTransitionForward: Prospective -> Candidate, Candidate -> Leader). A
    rejection that loses the election (maybeHandleElectionLoss) moves a Prospective on at once,
    in the same poll; a Candidate backs off, which its election timer stands for."""
    i = m.dst
    s = remove(s, m)
    s, handled = handle_common_response(s, c, i, m.error, m.leader, m.epoch)
    if handled or m.error != NONE:
        return s
    n = s.nodes[i]
    if n.role not in (PROSPECTIVE, CANDIDATE):
        return s  # a Leader ignores late votes
    votes = rules.record_vote(n.votes, m.src, m.granted)
    n = n._replace(votes=votes)
    if m.granted and rules.is_vote_granted(votes):
        if n.role == PROSPECTIVE:
            if n.epoch >= c.p.max_epoch:
                return None  # bound: no epoch beyond max_epoch
            return Q.become_candidate(set_node(s, i, n), c, i)
        if not Q.can_become_leader(c, n):
            return None  # bound: the LeaderChange record would not fit
        return Q.become_leader(set_node(s, i, n), c, i)
    s = set_node(s, i, n)
    if not m.granted and n.role == PROSPECTIVE and rules.is_vote_rejected(votes):
        s = prospective_transition_after_election_loss(s, c, i)
        return s._replace(history=s.history._replace(last_event=PRE_VOTE_LOST))
    return s


# --- BeginQuorumEpoch ---------------------------------------------------------------------------


def handle_begin_quorum_epoch_request(s: KraftState, c: Context, m: BeginQuorumEpochRequest) -> KraftState | None:
    """Voter m.dst handles BeginQuorumEpoch from leader m.src (handleBeginQuorumEpochRequest):
    an older epoch is answered FENCED_LEADER_EPOCH; else maybeTransition to the leader (also on a
    replica with a new directory id, which then answers INVALID_VOTER_KEY)."""
    i = m.dst
    s = remove(s, m)
    n = s.nodes[i]
    error = rules.validate_voter_only_request(m.src, m.epoch, n.epoch)
    if error != NONE:
        return _respond(s, m.live, BeginQuorumEpochResponse(BQE_RESPONSE, i, m.src, n.epoch, n.leader, error))
    after = maybe_transition(s, c, i, m.src, m.epoch)
    consistent = rules.has_consistent_leader(m.epoch, m.src, i, n.epoch, n.leader, n.role == LEADER)
    if not n.observer or not consistent:
        return after
    # isValidVoterKey: the request names the voter (id, old directory id), not this replica. The
    # answer carries the epoch and leader it now knows and goes out before its next poll's Fetch.
    t = after.nodes[i]
    answer = BeginQuorumEpochResponse(BQE_RESPONSE, i, m.src, t.epoch, t.leader, INVALID_VOTER_KEY)
    return maybe_transition(_respond(s, m.live, answer), c, i, m.src, m.epoch)


def handle_begin_quorum_epoch_response(s: KraftState, c: Context, m: BeginQuorumEpochResponse) -> KraftState | None:
    """Leader m.dst handles an error response to BeginQuorumEpoch
    (handleBeginQuorumEpochResponse): the common handling learns the newer epoch."""
    i = m.dst
    s = remove(s, m)
    s, _ = handle_common_response(s, c, i, m.error, m.leader, m.epoch)
    return s


# --- Fetch --------------------------------------------------------------------------------------


def handle_fetch_request(s: KraftState, c: Context, m: FetchRequest) -> KraftState | None:
    """Leader m.dst handles a Fetch from m.src (handleFetchRequest, tryCompleteFetchRequest).

    Errors from validateLeaderOnlyRequest carry no records. A fetch offset and last fetched
    epoch that do not match the leader's log get the diverging (epoch, end offset) and no
    records, and do not count as the follower's progress. A valid fetch returns the records from
    the fetch offset and, from a voter, records its end offset (LeaderState.updateReplicaState),
    which may move the HW. Long polls are not modelled (an empty answer comes at once)."""
    i = m.dst
    s = remove(s, m)
    n = s.nodes[i]
    error = rules.validate_fetch_request(m.fetch_offset, m.last_fetched_epoch, m.epoch)
    if error == NONE:
        error = rules.validate_leader_only_request(m.epoch, n.epoch, n.role == LEADER)
    if error == NONE and not c.proto.fetch_from_any and (m.observer or not Q.voters_of(c, n) >> m.src & 1):
        error = INVALID_REQUEST  # K6: a leader that serves only the voters of its latest set
    if error != NONE:
        return _respond(s, m.live, FetchResponse(FETCH_RESPONSE, i, m.src, n.epoch, n.leader, error,
                                                 NO_ID, NO_ID, (), NO_ID))
    valid = rules.validate_offset_and_epoch(n.log, m.fetch_offset, m.last_fetched_epoch)
    if not valid.valid:
        div = valid.offset_and_epoch
        return _respond(s, m.live, FetchResponse(FETCH_RESPONSE, i, m.src, n.epoch, n.leader, NONE,
                                                 div.epoch, div.offset, (), n.hw))
    if not m.observer:
        ends = n.end_offsets[:m.src] + (m.fetch_offset,) + n.end_offsets[m.src + 1:]
        s = Q.update_leader_hw(set_node(s, i, n._replace(end_offsets=ends)), c, i)
        n = s.nodes[i]
    return _respond(s, m.live, FetchResponse(FETCH_RESPONSE, i, m.src, n.epoch, n.leader, NONE, NO_ID, NO_ID,
                                             n.log[m.fetch_offset:], n.hw))


def handle_fetch_response(s: KraftState, c: Context, m: FetchResponse) -> KraftState | None:
    """Follower m.dst handles a Fetch response (handleFetchResponse): common handling first; a
    diverging epoch truncates the log (ReplicatedLog.truncateToEndOffset; below the HW Kafka
    throws); else the records are appended and the HW becomes min(leader HW, LEO). Either way
    the fetch succeeded (FollowerState.resetFetchTimeoutForSuccessfulFetch)."""
    i = m.dst
    s = remove(s, m)
    s, handled = handle_common_response(s, c, i, m.error, m.leader, m.epoch, follow_poll=m.error != NONE)
    if handled or m.error != NONE:
        return s
    n = s.nodes[i]
    assert n.role == FOLLOWER and n.leader == m.src, (n, m)  # followerStateOrThrow
    if m.diverging_epoch >= 0:
        if n.hw >= 0 and m.diverging_offset < n.hw:
            return fatal(s, i, FATAL_TRUNCATE_BELOW_HW)
        cut = rules.truncation_offset(n.log, rules.OffsetAndEpoch(m.diverging_offset, m.diverging_epoch))
        s = set_node(s, i, n._replace(log=n.log[:cut], fetched=True))
        if cut < n.leo:
            s = s._replace(history=s.history._replace(last_event=TRUNCATED))
        return Q.poll_sends(s, c, i)
    log = n.log + m.records
    hw = n.hw
    if m.hw >= 0 and c.p.follower_hw:
        hw = rules.follower_high_watermark(m.hw, len(log))
        if n.hw >= 0 and hw < n.hw:
            return fatal(s, i, FATAL_NON_MONOTONIC_HW)
    return Q.poll_sends(set_node(s, i, n._replace(log=log, hw=hw, fetched=True)), c, i)


HANDLERS = {
    VOTE_REQUEST: handle_vote_request,
    VOTE_RESPONSE: handle_vote_response,
    BQE_REQUEST: handle_begin_quorum_epoch_request,
    BQE_RESPONSE: handle_begin_quorum_epoch_response,
    FETCH_REQUEST: handle_fetch_request,
    FETCH_RESPONSE: handle_fetch_response,
}


def deliver(s: KraftState, c: Context, kind: int, src: int, dst: int) -> KraftState | None:
    """Deliver the message of this kind from src to dst, if one is in flight."""
    m = find(s, kind, src, dst)
    if m is None:
        return None
    return HANDLERS[kind](s, c, m)  # type: ignore[operator]


# --- Voter changes (KIP-853) ---------------------------------------------------------------------


def _append_voters(s: KraftState, c: Context, i: int, voters: int) -> KraftState:
    """LeaderState.appendVotersRecord: the VotersRecord goes into the leader's log and the new set
    takes effect at once, uncommitted (updateLocalState with the latest set)."""
    n = s.nodes[i]
    log = n.log + ((n.epoch, rules.VOTERS_BASE + voters),)
    end_offsets = n.end_offsets[:i] + (len(log),) + n.end_offsets[i + 1:]
    s = set_node(s, i, n._replace(log=log, end_offsets=end_offsets))._replace(changes=s.changes + 1)
    return Q.update_leader_hw(s, c, i)


def add_voter(s: KraftState, c: Context, i: int, j: int) -> KraftState | None:
    """Leader i accepts AddVoter for node j (KafkaRaftClient.handleAddVoterRequest,
    AddVoterHandler): rules.validate_add_voter passes (an HW of its own epoch, the last
    VotersRecord committed, j not a voter, j fetching as an observer and caught up with the
    leader's log end), then it appends the latest set plus j. The answer waits for the commit;
    a request that fails a check changes nothing, so it is not an action here."""
    n = s.nodes[i]
    if n.role != LEADER or j == i or s.changes >= c.p.voter_changes or n.leo >= c.p.max_log:
        return None
    voters, offset = rules.last_voter_set(n.log, c.p.bootstrap)
    caught_up = not s.nodes[j].observer and n.end_offsets[j] == n.leo
    if rules.validate_add_voter(voters, j, n.hw, offset, caught_up, c.proto.fence_previous_leaders,
                                c.proto.one_voter_change_at_a_time) != NONE:
        return None
    return _append_voters(s, c, i, voters | 1 << j)


def remove_voter(s: KraftState, c: Context, i: int, j: int) -> KraftState | None:
    """Leader i accepts RemoveVoter for voter j, itself included (KafkaRaftClient.handleRemoveVoterRequest,
    RemoveVoterHandler): rules.validate_remove_voter passes, then it appends the latest set
    without j. A leader that removed itself keeps leading until the record commits (its HW now
    counts the remaining voters only), then resigns (resign_after_removal)."""
    n = s.nodes[i]
    if n.role != LEADER or s.changes >= c.p.voter_changes or n.leo >= c.p.max_log:
        return None
    voters, offset = rules.last_voter_set(n.log, c.p.bootstrap)
    if rules.validate_remove_voter(voters, j, n.hw, offset, c.proto.fence_previous_leaders,
                                   c.proto.one_voter_change_at_a_time) != NONE:
        return None
    return _append_voters(s, c, i, voters & ~(1 << j))


def resign_after_removal(s: KraftState, c: Context, i: int) -> KraftState | None:
    """A leader whose own removal is committed resigns (RemoveVoterHandler.highWatermarkUpdated
    calls LeaderState.requestResign; the next pollLeader transitions to Resigned in its epoch).
    After its election timeout it is Unattached in the next epoch, an observer."""
    n = s.nodes[i]
    if n.role != LEADER:
        return None
    voters, offset = rules.last_voter_set(n.log, c.p.bootstrap)
    if voters >> i & 1 or offset >= n.hw:
        return None
    s = Q.become_resigned(s, c, i)
    return s._replace(history=s.history._replace(last_event=REMOVED_LEADER_RESIGNED))
