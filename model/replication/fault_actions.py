"""Faults: crashes (clean, unclean, lossy), restarts with a new broker epoch, message loss."""
from __future__ import annotations

from model.replication import broker_actions, network
from model.replication import controller as rules
from model.replication.broker_actions import apply_registration, set_broker
from model.replication.context import Context
from model.replication.controller_actions import set_registration, write
from model.replication.records import BrokerRegistration
from model.replication.state import UNKNOWN, AlterPartitionResponse, FetchRequest, FetchResponse, State


def _go_down(s: State, b: int, clean: bool) -> State:
    """Broker b's process stops: its connections die, so messages addressed to it are lost.

    Only the disk survives (broker epoch, clean-shutdown marker, log, HW checkpoint); the rest is
    reset so that crashes differing only in lost memory are one state (restart rebuilds it)."""
    broker = s.brokers[b]._replace(
        alive=False, clean=clean, meta=UNKNOWN, leader=UNKNOWN, leader_epoch=UNKNOWN, partition_epoch=UNKNOWN,
        isr=(), pending=(), leso=UNKNOWN, followers=(), replicas=(),
    )
    brokers = set_broker(s, b, broker)
    h = s.history
    s = s._replace(brokers=brokers, history=broker_actions.live_pending(h._replace(crashes=h.crashes + 1), brokers))
    s = network.lose(s, FetchRequest, lambda m: m.leader == b)
    s = network.lose(s, FetchResponse, lambda m: m.follower == b)
    return network.lose(s, AlterPartitionResponse, lambda m: m.leader == b)


def _may_go_down(s: State, ctx: Context, b: int) -> bool:
    """b is up, and both the crash budget and the joint fault budget allow one more."""
    return s.brokers[b].alive and s.history.crashes < ctx.p.crashes and ctx.p.fault_left(s.history)


def controlled_shutdown(s: State, ctx: Context, b: int) -> State | None:
    """Broker b shuts down cleanly (ReplicationControlManager.handleBrokerInControlledShutdown, then fenced)."""
    if not _may_go_down(s, ctx, b) or s.controller.uncommitted:
        return None  # the broker stops once its records commit: one step, taken while nothing is pending
    reg = s.controller.brokers[b]
    shutting = set_registration(s, b, reg._replace(in_controlled_shutdown=True))
    change = rules.handle_broker_in_controlled_shutdown(
        s.controller.partition, shutting, b, min_isr=ctx.p.min_isr, elr_enabled=ctx.p.elr, unclean_election=ctx.p.unclean,
        reassignment_epoch_bump=ctx.r.reassignment_epoch_bump,
    )
    s = write(s, ctx, change)
    if s is None:
        return None
    regs = set_registration(s, b, BrokerRegistration(reg.epoch, True, False))
    s = s._replace(controller=s.controller._replace(brokers=regs))
    return _go_down(s, b, clean=True)


def crash(s: State, ctx: Context, b: int) -> State | None:
    """Broker b dies without a controlled shutdown; its log survives (flushed or in the page cache)."""
    if not _may_go_down(s, ctx, b):
        return None
    return _go_down(s, b, clean=False)


def lossy_crash(s: State, ctx: Context, b: int, keep: int) -> State | None:
    """Broker b dies and loses the unflushed suffix of its log: only `keep` records survive."""
    broker = s.brokers[b]
    h = s.history
    if not _may_go_down(s, ctx, b) or h.lossy_crashes >= ctx.p.lossy_crashes:
        return None
    if keep >= len(broker.log):
        return None
    s = s._replace(
        brokers=set_broker(s, b, broker._replace(log=broker.log[:keep], hw=min(broker.hw, keep))),
        history=h._replace(lossy_crashes=h.lossy_crashes + 1),
    )
    return _go_down(s, b, clean=False)


def restart(s: State, ctx: Context, b: int) -> State | None:
    """Broker b restarts and re-registers with a new broker epoch, fenced (ClusterControlManager.registerBroker).

    An unclean shutdown (no clean-shutdown marker) is handled at registration (KAFKA-18635).
    The broker then publishes the metadata image it caught up to, which holds its registration.
    """
    broker = s.brokers[b]
    reg = s.controller.brokers[b]
    if broker.alive or not reg.fenced:
        return None  # the old registration's session must have expired
    if s.controller.uncommitted:
        return None  # the registration is answered once committed: taken as one step after the pending writes
    epoch = broker.epoch + 1
    regs = set_registration(s, b, BrokerRegistration(epoch, True, False))
    s = s._replace(controller=s.controller._replace(brokers=regs))
    if not broker.clean:
        change = rules.handle_broker_unclean_shutdown(
            s.controller.partition, regs, b, min_isr=ctx.p.min_isr, elr_enabled=ctx.p.elr,
            unclean_election=ctx.p.unclean, remove_from_elr=ctx.r.unclean_shutdown_leaves_elr,
            reassignment_epoch_bump=ctx.r.reassignment_epoch_bump,
        )
        s = write(s, ctx, change)
        if s is None:
            return None
    log = broker.log
    if not ctx.r.truncate_by_epoch:
        log = log[: broker.hw]  # variant truncate-to-hw (R1): recovery truncates to the checkpointed HW
    latest = s.controller.partition
    broker = broker._replace(
        alive=True, epoch=epoch, clean=False, meta=latest.partition_epoch, log=log, hw=min(broker.hw, len(log)),
        leader=UNKNOWN, leader_epoch=UNKNOWN, partition_epoch=UNKNOWN, isr=(), pending=(), leso=UNKNOWN, followers=(),
        replicas=(),
    )
    broker = apply_registration(broker, b, latest, ctx)
    return s._replace(brokers=set_broker(s, b, broker))


def drop_message(s: State, ctx: Context, m: object) -> State | None:
    """The network loses a message in flight."""
    if 0 <= ctx.p.losses <= s.history.losses or not ctx.p.fault_left(s.history):
        return None
    if ctx.p.losses >= 0:  # an unbounded budget keeps no count, so states differ less
        s = s._replace(history=s.history._replace(losses=s.history.losses + 1))
    return network.receive(s, m) if network.holds(s, m) else None
