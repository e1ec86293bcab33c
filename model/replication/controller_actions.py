"""Controller actions: broker lifecycle and AlterPartition, writing partition-change records.

The controller is one state machine (the active KRaft controller); its metadata log is the
sequence of partition registrations, one per partition epoch.
"""
from __future__ import annotations

from model.replication import controller as rules
from model.replication.broker_actions import leader_progress
from model.replication.context import Context
from model.replication.records import BrokerRegistration, PartitionRegistration
from model.replication.state import AP_ERRORS, AlterPartitionRequest, AlterPartitionResponse, State, with_message, without_message


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
    if alive and ctx.r.no_fence_with_stale_fetch and any(
            r.follower == b and r.broker_epoch < reg.epoch for r in s.fetch_requests):
        return None  # timing assumption H2 (spec/replication.md)
    regs = set_registration(s, b, reg._replace(fenced=True))
    s = s._replace(controller=s.controller._replace(brokers=regs))
    if alive and ctx.p.fences >= 0:  # an unbounded budget keeps no count, so states differ less
        s = s._replace(history=s.history._replace(fences=s.history.fences + 1))
    change = rules.handle_broker_fenced(
        s.controller.partition, regs, b, min_isr=ctx.p.min_isr, elr_enabled=ctx.p.elr, unclean_election=ctx.p.unclean,
        reassignment_epoch_bump=ctx.r.reassignment_epoch_bump,
    )
    return write(s, ctx, change)


def unfence_broker(s: State, ctx: Context, b: int) -> State | None:
    """A fenced broker heartbeats again, caught up, and is unfenced (ReplicationControlManager.handleBrokerUnfenced)."""
    reg = s.controller.brokers[b]
    broker = s.brokers[b]
    if not reg.fenced or not broker.alive or reg.epoch != broker.epoch:
        return None
    regs = set_registration(s, b, reg._replace(fenced=False))
    s = s._replace(controller=s.controller._replace(brokers=regs))
    change = rules.handle_broker_unfenced(
        s.controller.partition, regs, b, min_isr=ctx.p.min_isr, elr_enabled=ctx.p.elr, unclean_election=ctx.p.unclean,
        reassignment_epoch_bump=ctx.r.reassignment_epoch_bump,
    )
    return write(s, ctx, change)


def handle_alter_partition(s: State, ctx: Context, req: AlterPartitionRequest) -> State | None:
    """The controller validates and applies an AlterPartition (ReplicationControlManager.alterPartition)."""
    s = s._replace(ap_requests=without_message(s.ap_requests, req))
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
    return written._replace(ap_responses=with_message(written.ap_responses, resp))


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
    return write(s, ctx, change)


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
    return None if t is None else t._replace(history=t.history._replace(reassignments=h.reassignments + 1))


__all__ = ["write", "set_registration", "fence_broker", "unfence_broker", "handle_alter_partition", "elect_leaders",
           "alter_partition_reassignments", "leader_progress"]
