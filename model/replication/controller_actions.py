"""Controller actions: broker lifecycle and AlterPartition, writing partition-change records.

The controller is one state machine (the active KRaft controller); its metadata log is the
sequence of partition registrations, one per partition epoch. With controller_failovers > 0 the
log is replicated by a KRaft quorum: each event's write is a batch that commits later
(`commit_metadata`), its answers wait for the commit, and a failover loses what is not committed
(`controller_failover`).
"""
from __future__ import annotations

from model.replication import controller as rules
from model.replication import network
from model.replication.broker_actions import leader_progress
from model.replication.context import Context
from model.replication.records import BrokerRegistration, PartitionRegistration
from model.replication.state import (
    AP_ERRORS, AlterPartitionRequest, AlterPartitionResponse, Batch, FetchRequest, State,
)


def write(s: State, ctx: Context, reg: PartitionRegistration | None) -> State | None:
    """Append a partition-change record; None when it would pass the configured epoch bounds."""
    if reg is None:
        return s
    if reg.leader_epoch > ctx.p.max_leader_epoch or reg.partition_epoch > ctx.p.max_partition_epoch:
        return None
    prev = s.controller.partition
    if (reg.replicas != prev.replicas and set(reg.replicas) != set(prev.replicas) and not rules.reassigning(reg)
            and not reg.recovering and not set(reg.replicas) <= set(reg.isr)):  # a reassignment ends, at once or later
        s = s._replace(history=s.history._replace(reassigned_out_of_sync=True))
    return s._replace(controller=s.controller._replace(log=s.controller.log + (reg,)))


def settle(before: State, s: State, ctx: Context, responses: tuple[AlterPartitionResponse, ...] = ()) -> State:
    """The end of a controller event (QuorumController.ControllerWriteEvent): what it wrote from
    `before` becomes one uncommitted batch, and its answers wait in the purgatory until the
    batch commits, or until every batch already pending commits when it wrote nothing
    (DeferredEventQueue.highestPendingOffset). With no quorum, everything commits at once."""
    c0, c = before.controller, s.controller
    if ctx.p.controller_failovers and (c.brokers != c0.brokers or c.log[-1] != c0.log[-1]):
        s = s._replace(controller=c._replace(uncommitted=c.uncommitted + (Batch(c0.brokers, c0.log[-1], ()),)))
        c = s.controller
    if responses and c.uncommitted and ctx.r.response_after_commit:
        last = c.uncommitted[-1]
        held = c.uncommitted[:-1] + (last._replace(responses=last.responses + responses),)
        return s._replace(controller=c._replace(uncommitted=held))
    return network.send_all(s, responses)


def commit_metadata(s: State, ctx: Context) -> State | None:
    """The quorum commits the oldest pending batch (KafkaRaftClient's high watermark passes it;
    QuorumController.handleCommit completes the purgatory's events up to its offset)."""
    c = s.controller
    if not c.uncommitted:
        return None
    first = c.uncommitted[0]
    return network.send_all(s._replace(controller=c._replace(uncommitted=c.uncommitted[1:])), first.responses)


def controller_failover(s: State, ctx: Context) -> State | None:
    """The active controller loses leadership with writes not yet committed; the new one knows
    only committed records (QuorumController.renounce: revertToSnapshot(lastCommittedOffset),
    purgatory.failAll(NotControllerException)). Each answer waiting in the purgatory becomes
    NOT_CONTROLLER, and the broker sends its request again to the new controller
    (NodeToControllerRequestThread.handleResponse: requestQueue.putFirst)."""
    c = s.controller
    if not c.uncommitted or c.failovers >= ctx.p.controller_failovers:
        return None
    first = c.uncommitted[0]
    keep = first.partition.partition_epoch
    log = tuple(r for r in c.log if r.partition_epoch <= keep) or (first.partition,)
    requests = tuple(r.request for batch in c.uncommitted for r in batch.responses)
    controller = c._replace(brokers=first.brokers, log=log, uncommitted=(), failovers=c.failovers + 1,
                            reverted=c.reverted or c.log[-1] != first.partition)
    return network.send_all(s._replace(controller=controller), requests)


def set_registration(s: State, b: int, reg: BrokerRegistration) -> tuple[BrokerRegistration, ...]:
    regs = list(s.controller.brokers)
    regs[b] = reg
    return tuple(regs)


def fence_broker(s: State, ctx: Context, b: int) -> State | None:
    """The controller fences broker b whose heartbeats stopped (ReplicationControlManager.handleBrokerFenced)."""
    reg = s.controller.brokers[b]
    alive = s.brokers[b].alive
    if reg.fenced or (alive and (0 <= ctx.p.fences <= s.history.fences or not ctx.p.fault_left(s.history))):
        return None
    if alive and ctx.r.no_fence_with_stale_fetch and network.exists(
            s, FetchRequest, lambda r: r.follower == b and r.broker_epoch < reg.epoch):
        return None  # timing assumption H2 (spec/replication.md)
    before = s
    regs = set_registration(s, b, reg._replace(fenced=True))
    s = s._replace(controller=s.controller._replace(brokers=regs))
    if alive and ctx.p.fences >= 0:  # an unbounded budget keeps no count, so states differ less
        s = s._replace(history=s.history._replace(fences=s.history.fences + 1))
    change = rules.handle_broker_fenced(
        s.controller.partition, regs, b, min_isr=ctx.p.min_isr, elr_enabled=ctx.p.elr, unclean_election=ctx.p.unclean,
        reassignment_epoch_bump=ctx.r.reassignment_epoch_bump,
    )
    t = write(s, ctx, change)
    return None if t is None else settle(before, t, ctx)


def unfence_broker(s: State, ctx: Context, b: int) -> State | None:
    """A fenced broker heartbeats again, caught up, and is unfenced (ReplicationControlManager.handleBrokerUnfenced)."""
    reg = s.controller.brokers[b]
    broker = s.brokers[b]
    if not reg.fenced or not broker.alive or reg.epoch != broker.epoch:
        return None
    before = s
    regs = set_registration(s, b, reg._replace(fenced=False))
    s = s._replace(controller=s.controller._replace(brokers=regs))
    change = rules.handle_broker_unfenced(
        s.controller.partition, regs, b, min_isr=ctx.p.min_isr, elr_enabled=ctx.p.elr, unclean_election=ctx.p.unclean,
        reassignment_epoch_bump=ctx.r.reassignment_epoch_bump,
    )
    t = write(s, ctx, change)
    return None if t is None else settle(before, t, ctx)


def handle_alter_partition(s: State, ctx: Context, req: AlterPartitionRequest) -> State | None:
    """The controller validates and applies an AlterPartition (ReplicationControlManager.alterPartition)."""
    s = network.receive(s, req)
    before = s
    current = s.controller.partition
    error, change = rules.alter_partition(
        current, s.controller.brokers, broker_id=req.leader, broker_epoch=req.broker_epoch,
        leader_epoch=req.leader_epoch, partition_epoch=req.partition_epoch, new_isr=req.new_isr,
        recovering=req.recovering, min_isr=ctx.p.min_isr, elr_enabled=ctx.p.elr,
        check_member_epochs=ctx.r.member_broker_epochs, check_member_fenced=ctx.r.member_fenced_check,
        reassignment_epoch_bump=ctx.r.reassignment_epoch_bump,
    )
    written = write(s, ctx, change)
    if written is None:
        return None
    answer = (written.controller.partition,) if error == "NONE" else ()
    resp = AlterPartitionResponse(req.leader, req, AP_ERRORS.index(error), answer)
    return settle(before, written, ctx, (resp,))


def elect_leaders(s: State, ctx: Context, election: str) -> State | None:
    """The controller elects on request (ReplicationControlManager.electLeader): PREFERRED from
    the auto.leader.rebalance.enable task or kafka-leader-election.sh, UNCLEAN from an operator.
    An answer other than NONE writes nothing: the step is not taken."""
    if not (ctx.p.preferred_elections if election == rules.PREFERRED else ctx.p.unclean_elect_leaders):
        return None
    error, change = rules.elect_leader_request(
        s.controller.partition, s.controller.brokers, election, min_isr=ctx.p.min_isr, elr_enabled=ctx.p.elr,
        reassignment_epoch_bump=ctx.r.reassignment_epoch_bump)
    if error != rules.NONE:
        return None
    t = write(s, ctx, change)
    return None if t is None else settle(s, t, ctx)


def alter_partition_reassignments(s: State, ctx: Context, target: tuple[int, ...]) -> State | None:
    """An operator asks for the partition's replicas to become `target` (kafka-reassign-partitions.sh,
    ReplicationControlManager.alterPartitionReassignments); one reassignment at a time."""
    h = s.history
    reg = s.controller.partition
    if h.reassignments >= ctx.p.reassignments or rules.reassigning(reg) or target == reg.replicas:
        return None
    error, change = rules.alter_partition_reassignment(
        reg, s.controller.brokers, target, min_isr=ctx.p.min_isr, elr_enabled=ctx.p.elr,
        reassignment_epoch_bump=ctx.r.reassignment_epoch_bump)
    if error != rules.NONE or change is None:
        return None
    t = write(s, ctx, change)
    return None if t is None else settle(s, t._replace(history=t.history._replace(reassignments=h.reassignments + 1)), ctx)


__all__ = ["write", "settle", "commit_metadata", "controller_failover", "set_registration", "fence_broker", "unfence_broker", "handle_alter_partition", "elect_leaders",
           "alter_partition_reassignments", "leader_progress"]
