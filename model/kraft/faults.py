"""Faults: crash-restarts (with or without the disk), message loss, network partitions.

A crash and the restart that follows are one step: a node that is down is indistinguishable
from one that takes no step while its messages are lost or held, which the other actions
already allow.
"""
from __future__ import annotations

from model.kraft import quorum as Q
from model.kraft.network import cut, drop_addressed_to, find, heal, remove
from model.kraft.quorum import Context, restart_process
from model.kraft.state import KraftState, fresh_node


def may_fault(s: KraftState, c: Context, used: int, budget: int) -> bool:
    """Both the kind's budget and the budget of all faults together have room."""
    return used < budget and s.faults < c.p.faults


def restart(s: KraftState, c: Context, i: int) -> KraftState | None:
    """Node i crashes and restarts with its disk (QuorumState.initialize): the role comes back
    from the quorum-state file and the log (rules.initial_election_state); the HW, the election
    tallies and the leader's view of its followers are lost. A vote that was never written
    (vote-not-persisted) is forgotten. A voter alone in its voter set is Leader at once
    (KafkaRaftClient.initialize): not taken where that Leader would pass the bounds."""
    if not may_fault(s, c, s.restarts, c.p.restarts):
        return None
    if Q.restart_beyond_bounds(c, i, Q.restored_node(s, c, i)):
        return None
    return restart_process(s._replace(restarts=s.restarts + 1), c, i)


def disk_loss(s: KraftState, c: Context, i: int) -> KraftState | None:
    """Node i crashes, its disk is replaced and formatted, and it restarts: empty log, no
    quorum-state file (epoch 0). With KIP-853 (kraft.version 1) the new disk has a new
    directory id, so the replica is no longer the voter (id, old directory id): it is an
    observer, cannot vote or stand, and does not count toward the HW until an operator adds it
    back (not modelled). In same-identity-after-disk-loss it is the same voter again (alone in
    its voter set, Leader at once: not taken where that Leader would pass the bounds)."""
    n = s.nodes[i]
    if n.observer or not may_fault(s, c, s.disk_losses, c.p.disk_losses):
        return None
    node = fresh_node(observer=c.proto.directory_id)
    if Q.restart_beyond_bounds(c, i, node):
        return None
    s = drop_addressed_to(s._replace(disk_losses=s.disk_losses + 1), i)
    return Q.restart(s, c, i, node)


def drop_message(s: KraftState, c: Context, kind: int, src: int, dst: int) -> KraftState | None:
    """The network loses a message in flight."""
    if not may_fault(s, c, s.losses, c.p.losses):
        return None
    m = find(s, kind, src, dst)
    return None if m is None else remove(s, m)._replace(losses=s.losses + 1)


def cut_link(s: KraftState, c: Context, a: int, b: int) -> KraftState | None:
    """The network partitions a from b: messages between them, in flight or sent later, are
    held until the link heals (or lost, by DropMessage)."""
    link = (min(a, b), max(a, b))
    if a == b or link in s.cut_links or not may_fault(s, c, s.cuts, c.p.partitions):
        return None
    return cut(s, link)._replace(cuts=s.cuts + 1)


def heal_link(s: KraftState, c: Context, a: int, b: int) -> KraftState | None:
    """The partition between a and b heals."""
    link = (min(a, b), max(a, b))
    if link not in s.cut_links:
        return None
    return heal(s, link)
