"""Broker-side actions: metadata replay, the fetch protocol, ISR changes and produce.

Each function is one action: guard first (return None when not enabled), then the effect.
They follow core/src/main/scala/kafka/cluster/Partition.scala and the fetcher threads.
"""
from __future__ import annotations

from model.replication import network
from model.replication.context import Context
from model.replication.partition import (
    OFFSET_OUT_OF_RANGE,
    can_expand_isr,
    fetch_divergence,
    follower_truncation,
    leader_hw,
    out_of_range_truncation,
)
from model.replication.records import NO_LEADER, BrokerRegistration, LogEntry, PartitionRegistration
from model.replication.state import (
    AP_ERRORS,
    F_DIVERGING,
    F_FENCED,
    F_NONE,
    F_NOT_LEADER,
    F_OUT_OF_RANGE,
    F_UNKNOWN,
    NO_FOLLOWER,
    UNKNOWN,
    AlterPartitionRequest,
    AlterPartitionResponse,
    Broker,
    FetchRequest,
    FetchResponse,
    FollowerState,
    History,
    IsrMember,
    Pending,
    State,
)

_INELIGIBLE = AP_ERRORS.index("INELIGIBLE_REPLICA")
_AP_NONE = AP_ERRORS.index("NONE")


def set_broker(s: State, b: int, broker: Broker) -> tuple[Broker, ...]:
    brokers = list(s.brokers)
    brokers[b] = broker
    return tuple(brokers)


def last_epoch(log: tuple[LogEntry, ...]) -> int:
    return log[-1].epoch if log else UNKNOWN


def live_pending(history: History, brokers: tuple[Broker, ...]) -> History:
    """Drop produce requests whose leader crashed or lost its epoch: they fail, never ack."""
    if not history.pending:
        return history  # nothing waits (most states): no tuple to rebuild
    keep = tuple(
        p for p in history.pending
        if brokers[p.leader].alive and brokers[p.leader].leader == p.leader
        and brokers[p.leader].leader_epoch == p.leader_epoch
    )
    return history if keep == history.pending else history._replace(pending=keep)


def registrations(s: State, ctx: Context | None) -> tuple[BrokerRegistration, ...]:
    """The registrations a broker reads: its metadata image, which holds committed records only
    (KRaftMetadataCache); variant C3 reads the active controller's, uncommitted writes included."""
    if ctx is None or ctx.r.committed_registrations:
        return s.controller.committed_brokers
    return s.controller.brokers


def isr_eligible(s: State, follower: int, fetched_broker_epoch: int, ctx: Context | None = None) -> bool:
    """Partition.isReplicaIsrEligible: unfenced, not shutting down, broker epoch as registered."""
    reg = registrations(s, ctx)[follower]
    return not reg.fenced and not reg.in_controlled_shutdown and reg.epoch == fetched_broker_epoch


def isr_eligible_without_fencing(s: State, follower: int, fetched_broker_epoch: int, ctx: Context | None = None) -> bool:
    """Variant R8 (pre-KIP-841): only the broker epoch is compared, fenced and shutting-down brokers qualify."""
    return registrations(s, ctx)[follower].epoch == fetched_broker_epoch


def eligible(s: State, ctx: Context, follower: int, fetched_broker_epoch: int) -> bool:
    if ctx.r.member_fenced_check:
        return isr_eligible(s, follower, fetched_broker_epoch, ctx)
    return isr_eligible_without_fencing(s, follower, fetched_broker_epoch, ctx)


def waited_for(s: State, b: int, lb: Broker, ctx: Context | None = None) -> tuple[int, ...]:
    """Replicas outside the maximal ISR that the HW waits for: caught up and ISR-eligible
    (Partition.maybeIncrementLeaderHW, shouldWaitForReplicaToJoinIsr)."""
    leo = len(lb.log)
    maximal = lb.maximal_isr
    check = isr_eligible if ctx is None or ctx.r.member_fenced_check else isr_eligible_without_fencing
    if ctx is not None and not ctx.r.hw_skips_ineligible:  # variant R18 (pre-KAFKA-15021)
        return tuple(f for f, (f_leo, _, recent) in enumerate(lb.followers)
                     if f != b and f not in maximal and (recent or f_leo == leo))
    return tuple(
        f for f, (f_leo, f_epoch, recent) in enumerate(lb.followers)
        if f != b and f not in maximal and (recent or f_leo == leo) and check(s, f, f_epoch, ctx)
    )


def leader_progress(s: State, ctx: Context, b: int) -> State:
    """Partition.maybeIncrementLeaderHW, then complete delayed produces and note what consumers can read."""
    lb = s.brokers[b]
    if not lb.alive or lb.leader != b:
        return s
    leo = len(lb.log)
    if lb.hw >= leo:
        hw = lb.hw  # leader_hw never passes the leader's LEO: nothing to compute (the common case)
    else:
        if ctx.r.hw_maximal_isr:
            maximal, caught_up = lb.maximal_isr, waited_for(s, b, lb, ctx)
        else:  # variant R7 (pre-KIP-497): the committed ISR only, a pending expansion is not waited for
            maximal, caught_up = lb.isr, ()
        min_isr = effective_min_isr(ctx, lb)
        hw = leader_hw(
            hw=lb.hw, leader_leo=leo, isr=lb.isr, maximal_isr=maximal, min_isr=min_isr, leader_id=b,
            follower_leo={f: lb.followers[f].leo for f in range(len(s.brokers)) if f != b},
            caught_up_eligible=caught_up, strict_min_isr=ctx.r.strict_min_isr,
        )
    h = s.history
    if hw != lb.hw:
        s = s._replace(brokers=set_broker(s, b, lb._replace(hw=hw)))
        h = complete_produces(h, b, lb.leader_epoch, hw, maximal, min_isr)
    h = expose(h, lb.log, hw)
    return s if h is s.history else s._replace(history=h)


def complete_produces(h: History, b: int, leader_epoch: int, hw: int, maximal: tuple[int, ...],
                      min_isr: int) -> History:
    """Partition.checkEnoughReplicasReachOffset for the produces leader b (in `leader_epoch`)
    holds below its new HW: acked when the maximal ISR has min ISR members, else failed with
    NOT_ENOUGH_REPLICAS_AFTER_APPEND; either way no longer pending."""
    done = [p for p in h.pending if p.leader == b and p.leader_epoch == leader_epoch and p.offset < hw]
    if not done:
        return h
    acked = h.acked
    if len(maximal) >= min_isr:
        acked = tuple(sorted(acked + tuple(p.value for p in done)))
    return h._replace(pending=tuple(p for p in h.pending if p not in done), acked=acked)


def expose(h: History, log: tuple[LogEntry, ...], hw: int) -> History:
    """What consumers can read: a leader's log below its HW, when it extends the longest
    prefix ever exposed (a readable log that contradicts it leaves it as it is)."""
    if hw <= len(h.exposed):
        return h  # nothing readable is new
    readable = log[:hw]
    if len(readable) > len(h.exposed) and readable[: len(h.exposed)] == h.exposed:
        return h._replace(exposed=readable)
    return h


def produced(h: History, p: Pending) -> History:
    """The produce request `p` waits in purgatory; the producer's next value follows."""
    return h._replace(next_value=p.value + 1, pending=h.pending + (p,))


def effective_min_isr(ctx: Context, lb: Broker) -> int:
    """Partition.effectiveMinIsr: min.insync.replicas, at most the leader's replica count."""
    return min(ctx.p.min_isr, len(lb.replicas))


def become_leader(broker: Broker, b: int, reg: PartitionRegistration, n: int) -> Broker:
    """Partition.makeLeader: a new leader epoch starts at the local LEO and forgets followers' state;
    updateAssignmentAndIsr forgets the state of a replica that left the replica set."""
    if reg.leader_epoch > broker.leader_epoch or broker.leader != b:
        return broker._replace(
            leader=b, leader_epoch=reg.leader_epoch, partition_epoch=reg.partition_epoch, isr=reg.isr,
            pending=(), leso=len(broker.log), followers=(NO_FOLLOWER,) * n, replicas=reg.replicas,
        )
    followers = broker.followers
    if reg.replicas != broker.replicas:
        followers = tuple(x if f in reg.replicas else NO_FOLLOWER for f, x in enumerate(followers))
    return broker._replace(partition_epoch=reg.partition_epoch, isr=reg.isr, pending=(), followers=followers,
                           replicas=reg.replicas)


def become_follower(broker: Broker, reg: PartitionRegistration, ctx: Context) -> Broker:
    """Partition.makeFollower: follow the new leader; KIP-101 leaves truncation to the fetcher."""
    new_epoch = reg.leader_epoch > broker.leader_epoch
    broker = broker._replace(
        leader=reg.leader, leader_epoch=reg.leader_epoch, partition_epoch=reg.partition_epoch,
        isr=(), pending=(), leso=UNKNOWN, followers=(), replicas=(),
    )
    if new_epoch and not ctx.r.truncate_by_epoch:
        broker = broker._replace(log=broker.log[: broker.hw])  # variant truncate-to-hw (R1)
    return broker


def stop_replica(broker: Broker, reg: PartitionRegistration) -> Broker:
    """ReplicaManager.applyDelta, LocalReplicaChanges.deletes: a broker no longer among the
    replicas stops its fetcher and deletes its log; added back, it starts from an empty log."""
    return broker._replace(
        log=(), hw=0, leader=NO_LEADER, leader_epoch=UNKNOWN, partition_epoch=reg.partition_epoch,
        isr=(), pending=(), leso=UNKNOWN, followers=(), replicas=(),
    )


def apply_registration(broker: Broker, b: int, reg: PartitionRegistration, ctx: Context) -> Broker:
    """ReplicaManager.applyDelta for one partition: ignore records older than the local partition epoch."""
    if reg.partition_epoch < broker.partition_epoch:
        return broker
    if b not in reg.replicas:
        return stop_replica(broker, reg)
    if reg.leader == b:
        return become_leader(broker, b, reg, ctx.p.n)
    return become_follower(broker, reg, ctx)


def replayable(s: State, ctx: Context) -> int:
    """The partition epoch brokers may replay up to: the last committed record (KafkaRaftClient
    hands its listeners committed batches only), the latest when every write commits at once."""
    if not ctx.r.replay_committed_only:
        return s.controller.log[-1].partition_epoch
    return s.controller.committed_epoch


def replay_metadata(s: State, ctx: Context, b: int) -> State | None:
    """Broker b replays the next partition-change record of the metadata log (KRaft metadata publisher)."""
    broker = s.brokers[b]
    if not broker.alive or broker.meta >= replayable(s, ctx):
        return None
    reg = s.controller.record(broker.meta + 1)
    broker = apply_registration(broker._replace(meta=broker.meta + 1), b, reg, ctx)
    brokers = set_broker(s, b, broker)
    s = s._replace(brokers=brokers, history=live_pending(s.history, brokers))
    return leader_progress(s, ctx, b)


def follower_stutter(s: State, b: int, ctx: Context) -> bool:
    """Broker b's next metadata record keeps the leader and leader epoch it follows (ISR, ELR or
    epoch-only change): `Partition.makeFollower` then changes only its partition epoch and
    `ReplicaManager.applyLocalFollowersDelta` leaves its fetcher alone, so the replay is a stutter."""
    x = s.brokers[b]
    if not x.alive or x.leader == b or x.meta >= replayable(s, ctx):
        return False
    reg = s.controller.record(x.meta + 1)
    return reg.leader == x.leader and reg.leader_epoch == x.leader_epoch and b in reg.replicas


def absorb_follower_replays(s: State, ctx: Context) -> State:
    """Replay every stuttering record at once (`follower_stutter`), for the checker's reduction."""
    for b in range(len(s.brokers)):
        while follower_stutter(s, b, ctx):
            t = replay_metadata(s, ctx, b)
            assert t is not None  # a stutter is a replay, which is enabled
            s = t
    return s


def send_fetch(s: State, ctx: Context, f: int) -> State | None:
    """Follower f's fetcher sends a Fetch to the leader it knows (ReplicaFetcherThread.buildFetch)."""
    fb = s.brokers[f]
    leader = fb.leader
    if not fb.alive or leader == NO_LEADER or leader == f or not s.brokers[leader].alive:
        return None
    if network.count(s) >= ctx.p.max_in_flight:
        return None
    if network.exists(s, FetchRequest, lambda r: r.follower == f and r.broker_epoch == fb.epoch
                      and r.leader_epoch == fb.leader_epoch):
        return None  # one fetch at a time per fetcher
    if network.exists(s, FetchResponse, lambda r: r.follower == f and r.leader_epoch == fb.leader_epoch):
        return None
    # before KIP-101 (variant R1/R2) a Fetch carried no last fetched epoch: no divergence check
    fetched_epoch = last_epoch(fb.log) if ctx.r.truncate_by_epoch else UNKNOWN
    req = FetchRequest(f, leader, fb.epoch, fb.leader_epoch, len(fb.log), fetched_epoch)
    return network.send(s, req)


def _fetch_error(req: FetchRequest, error: int) -> FetchResponse:
    return FetchResponse(req.follower, req.leader, req.leader_epoch, req.fetch_offset, error, UNKNOWN, UNKNOWN, (), UNKNOWN)


def handle_fetch(s: State, ctx: Context, req: FetchRequest) -> State | None:
    """The leader serves a follower's Fetch (Partition.fetchRecords, updateFollowerFetchState, maybeExpandIsr)."""
    lb = s.brokers[req.leader]
    if not lb.alive:
        return None
    s = network.receive(s, req)
    f = req.follower
    if lb.leader != req.leader:
        resp = _fetch_error(req, F_NOT_LEADER)
    elif ctx.r.current_leader_epoch and req.leader_epoch < lb.leader_epoch:  # KIP-320 (variant R4)
        resp = _fetch_error(req, F_FENCED)
    elif ctx.r.current_leader_epoch and req.leader_epoch > lb.leader_epoch:
        resp = _fetch_error(req, F_UNKNOWN)
    elif f not in lb.replicas:  # Partition.followerReplicaOrThrow: not (or not yet) a replica
        resp = _fetch_error(req, F_UNKNOWN)
    else:
        diverging = fetch_divergence(
            lb.log, (lb.leader_epoch, lb.leso), fetch_offset=req.fetch_offset,
            last_fetched_epoch=req.last_fetched_epoch, floor_epoch=ctx.r.epoch_lookup_floor,
        )
        if diverging == OFFSET_OUT_OF_RANGE or (diverging is None and req.fetch_offset > len(lb.log)):
            # UnifiedLog.read past the LEO, or no end offset for the last fetched epoch; the
            # response carries the LEO the fetcher's ListOffsets would get (fetchOffsetAndTruncate)
            resp = FetchResponse(f, req.leader, req.leader_epoch, req.fetch_offset, F_OUT_OF_RANGE,
                                 UNKNOWN, UNKNOWN, (), len(lb.log))
        elif diverging is not None:  # KAFKA-13141: the follower's position is not recorded
            resp = FetchResponse(f, req.leader, req.leader_epoch, req.fetch_offset, F_DIVERGING,
                                 diverging[0], diverging[1], (), lb.hw)
            if not ctx.r.skip_position_on_divergence:  # variant R6
                s = _record_position(s, ctx, req)
        elif ctx.r.stale_fetch_check and _stale_broker_epoch(s, ctx, f, req.broker_epoch):
            resp = _fetch_error(req, F_NOT_LEADER)
        else:
            resp = FetchResponse(f, req.leader, req.leader_epoch, req.fetch_offset, F_NONE, UNKNOWN, UNKNOWN,
                                 lb.log[req.fetch_offset:], lb.hw)
            s = _record_position(s, ctx, req)
    fb = s.brokers[f]
    if fb.alive and fb.epoch == req.broker_epoch:  # else the sender's connection died with it
        s = network.send(s, resp)
    return leader_progress(s, ctx, req.leader)


def _record_position(s: State, ctx: Context, req: FetchRequest) -> State:
    """Partition.updateFollowerFetchState, then maybeExpandIsr."""
    lb = s.brokers[req.leader]
    f = req.follower
    followers = list(lb.followers)
    caught_up = followers[f].caught_up or req.fetch_offset >= len(lb.log)  # Replica.lastCaughtUpTimeMs
    followers[f] = FollowerState(req.fetch_offset, req.broker_epoch, caught_up)
    s = s._replace(brokers=set_broker(s, req.leader, lb._replace(followers=tuple(followers))))
    return _maybe_expand_isr(s, ctx, req.leader, f)


def _stale_broker_epoch(s: State, ctx: Context, f: int, broker_epoch: int) -> bool:
    """Replica.updateFetchStateOrThrow (KAFKA-15221): a fetch older than f's unfenced registration is refused."""
    reg = registrations(s, ctx)[f]
    return broker_epoch != UNKNOWN and not reg.fenced and reg.epoch > broker_epoch


def _maybe_expand_isr(s: State, ctx: Context, b: int, f: int) -> State:
    """Partition.maybeExpandIsr: propose ISR + f when f is caught up and eligible (KIP-497, KIP-903)."""
    lb = s.brokers[b]
    leo, broker_epoch, _ = lb.followers[f]
    if f in lb.isr or network.count(s) + 1 >= ctx.p.max_in_flight:
        return s  # no room beside the fetch response: the leader tries again on f's next fetch
    if not can_expand_isr(follower_leo=leo, leader_hw=lb.hw, leso=lb.leso,
                          eligible=eligible(s, ctx, f, broker_epoch), pending=bool(lb.pending),
                          check_leso=ctx.r.check_leso):
        return s
    proposed = tuple(sorted(lb.isr + (f,)))
    return _send_alter_partition(s, b, lb, proposed)


def _send_alter_partition(s: State, b: int, lb: Broker, proposed: tuple[int, ...]) -> State:
    """Partition.submitAlterPartition: the proposal carries every member's broker epoch (KIP-903)."""
    members = tuple(IsrMember(i, lb.epoch if i == b else lb.followers[i].broker_epoch) for i in proposed)
    req = AlterPartitionRequest(b, lb.epoch, lb.leader_epoch, lb.partition_epoch, members, False)
    return network.send(s._replace(brokers=set_broker(s, b, lb._replace(pending=proposed))), req)


def shrink_isr(s: State, ctx: Context, b: int, f: int) -> State | None:
    """Leader b drops follower f, not caught up within replica.lag.time.max.ms (Partition.maybeShrinkIsr)."""
    lb = s.brokers[b]
    if not lb.alive or lb.leader != b or f not in lb.isr or f == b or lb.pending:
        return None
    if lb.followers[f].leo >= len(lb.log) or network.count(s) >= ctx.p.max_in_flight:
        return None  # a follower at the leader's LEO is never out of sync
    followers = list(lb.followers)
    followers[f] = followers[f]._replace(caught_up=False)  # its last caught-up time is now too old
    lb = lb._replace(followers=tuple(followers))
    return _send_alter_partition(s, b, lb, tuple(i for i in lb.isr if i != f))


def handle_fetch_response(s: State, ctx: Context, resp: FetchResponse) -> State | None:
    """Follower processes a Fetch response: append, or truncate on a diverging epoch (AbstractFetcherThread)."""
    fb = s.brokers[resp.follower]
    if not fb.alive:
        return None
    s = network.receive(s, resp)
    if fb.leader != resp.leader or fb.leader_epoch != resp.leader_epoch or len(fb.log) != resp.fetch_offset:
        return _fetch_again(s, ctx, resp.follower)  # the fetch state moved on: the response is discarded
    if resp.error == F_DIVERGING:
        offset, _ = follower_truncation(fb.log, diverging_epoch=resp.diverging_epoch,
                                        diverging_end_offset=resp.diverging_end_offset)
        fb = fb._replace(log=fb.log[:offset], hw=min(fb.hw, offset))
    elif resp.error == F_OUT_OF_RANGE:
        offset = out_of_range_truncation(follower_leo=len(fb.log), leader_end_offset=resp.hw)
        fb = fb._replace(log=fb.log[:offset], hw=min(fb.hw, offset))
    elif resp.error == F_NONE:
        log = fb.log + resp.records
        fb = fb._replace(log=log, hw=min(resp.hw, len(log)))
    else:
        return _fetch_again(s, ctx, resp.follower)
    return _fetch_again(s._replace(brokers=set_broker(s, resp.follower, fb)), ctx, resp.follower)


def _fetch_again(s: State, ctx: Context, f: int) -> State:
    """The fetcher loop builds its next Fetch as soon as it has processed a response (AbstractFetcherThread.doWork)."""
    t = send_fetch(s, ctx, f)
    return s if t is None else t


def handle_alter_partition_response(s: State, ctx: Context, resp: AlterPartitionResponse) -> State | None:
    """Leader handles the controller's answer (Partition.handleAlterPartitionUpdate / handleAlterPartitionError)."""
    lb = s.brokers[resp.leader]
    if not lb.alive:
        return None
    if (ctx.r.metadata_before_response and resp.error == _AP_NONE
            and lb.meta < resp.registration[0].partition_epoch <= replayable(s, ctx)):
        return None  # timing assumption: the leader replays the record before the response (spec); only a committed one
    s = network.receive(s, resp)
    proposed = tuple(i for i, _ in resp.request.new_isr)
    req = resp.request
    if (lb.leader != resp.leader or lb.pending != proposed or lb.leader_epoch != req.leader_epoch
            or lb.partition_epoch != req.partition_epoch):
        return s  # not the proposal in flight: Kafka compares the whole PendingPartitionChange
    if resp.error == _INELIGIBLE:
        lb = lb._replace(pending=())  # the controller says it was not applied: back to the committed ISR
    elif resp.error == _AP_NONE:
        reg = resp.registration[0]
        if reg.leader_epoch != lb.leader_epoch or reg.partition_epoch < lb.partition_epoch:
            return s
        lb = lb._replace(isr=reg.isr, partition_epoch=reg.partition_epoch, pending=())
    else:
        return s  # stays pending until new metadata arrives
    s = s._replace(brokers=set_broker(s, resp.leader, lb))
    return leader_progress(s, ctx, resp.leader)


def produce(s: State, ctx: Context, b: int, value: int) -> State | None:
    """A producer (acks=all) appends `value` at leader b (Partition.appendRecordsToLeader)."""
    lb = s.brokers[b]
    h = s.history
    if not lb.alive or lb.leader != b or value != h.next_value or value >= ctx.p.values:
        return None
    if len(lb.isr) < effective_min_isr(ctx, lb):
        return None  # NOT_ENOUGH_REPLICAS: rejected, nothing written
    offset = len(lb.log)
    lb = lb._replace(log=lb.log + (LogEntry(lb.leader_epoch, value),))
    h = produced(h, Pending(value, b, lb.leader_epoch, offset))
    s = s._replace(brokers=set_broker(s, b, lb), history=h)
    return leader_progress(s, ctx, b)


__all__ = [
    "replayable", "replay_metadata", "follower_stutter", "absorb_follower_replays", "send_fetch", "handle_fetch", "handle_fetch_response", "shrink_isr",
    "handle_alter_partition_response", "produce", "leader_progress", "apply_registration",
]
