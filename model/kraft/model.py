"""The kraft model behind the model interface: Init, the enabled actions (in a fixed order), Next."""
from __future__ import annotations

from typing import Any, Callable, Iterator, Mapping

from model.kraft import actions as A
from model.kraft import client, disruption, faults, rounds, timeline
from model.kraft import liveness
from model.kraft import quorum as Q
from model.kraft.params import Params
from model.kraft.properties import explanations, properties
from model.kraft.quorum import Context
from model.kraft.rules import (
    CANDIDATE, ERROR_NAMES, FOLLOWER, GRANTED, LEADER, NO_ID, PROSPECTIVE, ROLE_NAMES, UNATTACHED, UNRECORDED,
)
from model.kraft.state import (
    EVENT_NAMES, FATAL_NAMES, FETCH_RESPONSE, MESSAGE_NAMES, NO_EVENT, VOTE_REQUEST, VOTE_RESPONSE,
    KraftState, initial_state, kind_name,
)
from model.kraft.footprint import Footprints
from model.kraft.symmetry import canonical_key
from model.kraft.variants import Protocol

VOTE_NAMES = ("unrecorded", "granted", "rejected", "not a voter")

Step = Callable[[KraftState, Context, Any], "KraftState | None"]

_STEP: dict[type, Step] = {
    A.ElectionTimeout: lambda s, c, a: client.election_timeout(s, c, a.node),
    A.FetchTimeout: lambda s, c, a: client.fetch_timeout(s, c, a.node),
    A.CheckQuorumTimeout: lambda s, c, a: client.check_quorum_timeout(s, c, a.node),
    A.ClientAppend: lambda s, c, a: client.client_append(s, c, a.node),
    A.SendVote: lambda s, c, a: client.send_vote(s, c, a.src, a.dst),
    A.SendBeginQuorumEpoch: lambda s, c, a: client.send_begin_quorum_epoch(s, c, a.src, a.dst),
    A.SendFetch: lambda s, c, a: client.send_fetch(s, c, a.src),
    A.Restart: lambda s, c, a: faults.restart(s, c, a.node),
    A.DiskLoss: lambda s, c, a: faults.disk_loss(s, c, a.node),
    A.CutLink: lambda s, c, a: faults.cut_link(s, c, a.a, a.b),
    A.HealLink: lambda s, c, a: faults.heal_link(s, c, a.a, a.b),
    A.DropMessage: lambda s, c, a: faults.drop_message(s, c, A.MESSAGE_KIND[a.message], a.src, a.dst),
    A.SendObserverFetch: lambda s, c, a: client.send_observer_fetch(s, c, a.src, a.dst),
    A.AddVoter: lambda s, c, a: client.add_voter(s, c, a.leader, a.node),
    A.RemoveVoter: lambda s, c, a: client.remove_voter(s, c, a.leader, a.node),
    A.ResignAfterRemoval: lambda s, c, a: client.resign_after_removal(s, c, a.node),
}
for _kind, _action in A.HANDLE_ACTION.items():
    _STEP[_action] = (lambda kind: lambda s, c, a: client.deliver(s, c, kind, a.src, a.dst))(_kind)


class KraftModel:
    """The KRaft metadata quorum of Kafka 4.1 over N static voters, with a variant switched in."""

    name = "kraft"
    action_kinds = A.ACTION_KINDS

    def __init__(self, config: Mapping[str, Any], variant: str = "kafka-4.1", timely: bool = False) -> None:
        self.config = dict(config)
        self.variant = variant
        self.params = Params.from_config(config)
        self.ctx = Context(self.params, Protocol.of(variant), timely)
        # what each action reads and writes (model/kraft/footprint.py), for the safety search only
        self.footprints = None if timely else Footprints(self)
        # Nodes are interchangeable while every one is a bootstrap voter; with voter changes the
        # renaming also covers the member sets inside VotersRecord entries (model.kraft.symmetry).
        self.symmetric = self.params.symmetry and self.params.spares == 0
        self.properties = properties(self.params, self.ctx.proto) + liveness.properties(self.params, self.ctx.proto)
        self.explanations = explanations(self.params, self.ctx.proto)
        self.glossary = GLOSSARY
        self.fairness = liveness.FAIRNESS
        self.timeline = timeline

    def liveness_model(self) -> "KraftModel":
        """The timely model (timers expire only when their cause holds: model.kraft.timing) without
        the symmetry reduction (fairness is per voter: the graph must not mix the voters up)."""
        return KraftModel({**self.config, "symmetry": False}, self.variant, timely=True)

    def bound_blocked(self, s: KraftState) -> list[tuple[Any, str]]:
        """The fair actions disabled in s that raising one bound (max_epoch, max_log,
        max_in_flight, timeouts) would enable, each with that bound."""
        if s.history.last_event != NO_EVENT:
            s = s._replace(history=s.history._replace(last_event=NO_EVENT))
        candidates = [a for a in self.actions(s)
                      if type(a).__name__ in liveness.FAIR_KINDS and _STEP[type(a)](s, self.ctx, a) is None]
        return liveness.bound_blocked(lambda t, c, a: _STEP[type(a)](t, c, a), candidates, s, self.ctx)

    def init_states(self) -> list[KraftState]:
        return [Q.initialize(initial_state(self.params.n), self.ctx)]

    def actions(self, s: KraftState) -> list[Any]:
        """Candidate actions in a fixed order; next_state applies each one's full guard."""
        p, proto = self.params, self.ctx.proto
        out: list[Any] = []
        changes = s.changes < p.voter_changes
        for i, n in enumerate(s.nodes):
            role = n.role
            if role == FOLLOWER:
                if not n.observer:
                    out.append(A.FetchTimeout(i))
                out.append(A.SendFetch(i))
            elif role == LEADER:
                if proto.check_quorum:
                    out.append(A.CheckQuorumTimeout(i))
                if n.leo < p.max_log:
                    out.append(A.ClientAppend(i))
                for j in range(p.n):
                    if j != i:
                        out.append(A.SendBeginQuorumEpoch(i, j))
                if p.dynamic:
                    if changes and n.leo < p.max_log:
                        for j in range(p.n):
                            out.append(A.AddVoter(i, j) if j != i else A.RemoveVoter(i, i))
                            if j != i:
                                out.append(A.RemoveVoter(i, j))
                    out.append(A.ResignAfterRemoval(i))
            elif p.dynamic and role == UNATTACHED and not Q.is_voter(self.ctx, n, i):
                for j in range(p.voters):
                    if j != i:
                        out.append(A.SendObserverFetch(i, j))
            elif not n.observer:
                out.append(A.ElectionTimeout(i))
                if role == PROSPECTIVE or role == CANDIDATE:
                    for j, v in enumerate(n.votes):
                        if v == UNRECORDED and j != i:
                            out.append(A.SendVote(i, j))
            if s.restarts < p.restarts and s.faults < p.faults:
                out.append(A.Restart(i))
            if s.disk_losses < p.disk_losses and s.faults < p.faults and not n.observer:
                out.append(A.DiskLoss(i))
        for m in s.network:
            out.append(A.HANDLE_ACTION[m.kind](m.src, m.dst))
        if s.losses < p.losses and s.faults < p.faults:
            for m in s.network:
                out.append(A.DropMessage(MESSAGE_NAMES[m.kind], m.src, m.dst))
        may_cut = s.cuts < p.partitions and s.faults < p.faults
        if s.cut_links or may_cut:
            for a in range(p.n):
                for b in range(a + 1, p.n):
                    if (a, b) in s.cut_links:
                        out.append(A.HealLink(a, b))
                    elif may_cut:
                        out.append(A.CutLink(a, b))
        return out

    def disabled_actions(self) -> dict[str, str]:
        """Fault action kinds whose every guard needs a budget this configuration sets to 0."""
        p = self.params
        off: dict[str, str] = {}
        for kinds, budget, name in ((("Restart",), p.restarts, "restarts"), (("DiskLoss",), p.disk_losses, "disk_losses"),
                                    (("DropMessage",), p.losses, "losses"),
                                    (("CutLink", "HealLink"), p.partitions, "partitions")):
            for kind in kinds:
                if budget == 0:
                    off[kind] = f"{name} = 0"
                elif p.faults == 0:
                    off[kind] = "faults = 0"
        if p.voter_changes == 0:
            for kind in ("AddVoter", "RemoveVoter", "ResignAfterRemoval"):
                off[kind] = "voter_changes = 0"
        if not p.dynamic:
            off["SendObserverFetch"] = "voter_changes = 0 and spares = 0"
        return off

    def next_state(self, s: KraftState, action: Any) -> KraftState | None:
        if s.history.last_event != NO_EVENT:
            s = s._replace(history=s.history._replace(last_event=NO_EVENT))
        t = _STEP[type(action)](s, self.ctx, action)
        if t is not None and self.ctx.timely:
            return disruption.track(s, action, t)
        return t

    def rounds(self, s: KraftState) -> Iterator[tuple[tuple[Any, KraftState], ...]]:
        """Coarse steps made of this model's own steps, for the round search (model.kraft.rounds)."""
        return rounds.rounds(self.next_state, self.actions(s), s)

    def summary(self, s: KraftState) -> str:
        """One short line for a graph node (kcheck graph): each voter's role, epoch and log length,
        the messages in flight, the cut links."""
        parts = [f"v{i} {ROLE_NAMES[n.role][0]}{n.epoch} log{n.leo}" for i, n in enumerate(s.nodes)]
        if s.network:
            parts.append(f"{len(s.network)} msg")
        if s.cut_links:
            parts.append("cut " + ",".join(f"{a}-{b}" for a, b in s.cut_links))
        return " | ".join(parts)

    def abstraction(self, s: KraftState) -> tuple:
        """A coarse protocol phase for `simulate --guided`: voters (sorted, ids dropped) by role, term lag, vote, log epochs vs the top term, HW, votes; messages by kind and end roles."""
        top = max(n.epoch for n in s.nodes)
        nodes = tuple(sorted(
            (n.role, top - n.epoch, n.voted != NO_ID, n.vote_persisted, n.leader != NO_ID, n.observer,
             tuple(top - e for e, _ in n.log), len(n.log) - n.hw if n.hw >= 0 else -1,
             sum(v == GRANTED for v in n.votes))
            for n in s.nodes))
        messages = []
        for m in s.network:
            flag = (m.pre_vote if m.kind == VOTE_REQUEST else m.granted if m.kind == VOTE_RESPONSE
                    else bool(m.records) if m.kind == FETCH_RESPONSE else False)
            src, dst = s.nodes[m.src], s.nodes[m.dst]
            messages.append((m.kind, flag, top - m.epoch, src.role, dst.role, dst.voted != NO_ID))
        return (top, nodes, tuple(sorted(messages)), len(s.history.committed),
                (s.restarts, s.disk_losses, s.cuts, s.losses))

    def fingerprint(self, s: KraftState) -> int:
        """The tuple hash (of the representative with symmetry on): states hold only ints, bools
        and tuples, whose hashes are process-independent."""
        return hash(canonical_key(s, plain=False, masks=self.params.dynamic)) if self.symmetric else hash(s)

    def encode(self, s: KraftState) -> bytes:
        """Canonical bytes: the repr of the state (NamedTuples of ints, bools and tuples), or with
        symmetry on, of the plain tuples of its least renaming of the voters (symmetry)."""
        if self.symmetric:
            return repr(canonical_key(s, masks=self.params.dynamic)).encode()
        return repr(s).encode()

    def to_json(self, s: KraftState) -> dict[str, Any]:
        return state_json(s)


# The terse names of the JSON rendering, for the legend under a counterexample.
GLOSSARY = {
    "voted": "the voter this node granted its standard vote to in its epoch (-1: none)",
    "hw": "high watermark: the offset below which entries are committed",
    "votes": "a Prospective's or Candidate's election, one state per voter",
    "epoch_start": "the leader's epoch start offset (its log end offset when elected)",
    "end_offsets": "the leader's view of each voter's log end offset, from its fetches",
    "fetched": "a follower has fetched from the leader in this state",
    "observer": "lost its disk and came back with a new directory id: not a voter any more (KIP-853)",
    "vote_persisted": "the granted vote is on disk (false only in vote-not-persisted, before the write)",
    "live": "the sender still waits for the response (false after it reset its connections)",
    "pre_vote": "a Prospective's pre-vote (KIP-996), which raises no epoch",
    "last_epoch": "the epoch of the sender's last log entry",
    "last_offset": "the sender's log end offset",
    "diverging_epoch": "the epoch at which the follower's log diverges from the leader's (-1: none)",
    "diverging_offset": "the end offset of that epoch on the leader",
    "committed": "every entry ever below a leader's HW, with the epoch in which it was first committed",
    "leader_hws": "the largest HW each epoch's leader exposed",
    "fatal": "a Kafka exception path hit because committed data was lost",
    "last_event": "what the last step did, for the reachability witnesses",
}


def _entries(log: tuple[tuple[int, int], ...]) -> list[dict[str, Any]]:
    return [{"epoch": e, "kind": kind_name(k)} for e, k in log]


def state_json(s: KraftState) -> dict[str, Any]:
    """A readable JSON rendering: role, message and error names instead of codes."""
    nodes = []
    for i, n in enumerate(s.nodes):
        nodes.append({
            "id": i,
            "role": ROLE_NAMES[n.role],
            "epoch": n.epoch,
            "leader": n.leader,
            "voted": n.voted,
            "log": _entries(n.log),
            "hw": n.hw,
            "votes": [VOTE_NAMES[v] for v in n.votes],
            "epoch_start": n.epoch_start,
            "end_offsets": list(n.end_offsets),
            "fetched": n.fetched,
            "observer": n.observer,
            "vote_persisted": n.vote_persisted,
        })
    network = []
    for m in s.network:
        d: dict[str, Any] = {"message": MESSAGE_NAMES[m.kind]}
        for field, value in zip(m._fields[1:], m[1:]):
            if field == "error":
                d[field] = ERROR_NAMES.get(value, value)
            elif field == "records":
                d[field] = _entries(value)
            else:
                d[field] = value
        network.append(d)
    h = s.history
    return {
        "nodes": nodes,
        "network": network,
        "cut_links": [list(link) for link in s.cut_links],
        "restarts": s.restarts,
        "disk_losses": s.disk_losses,
        "cuts": s.cuts,
        "losses": s.losses,
        "timers": s.timers,
        "history": {
            "elected": [{"epoch": e, "leader": leader} for e, leader in h.elected],
            "committed": [{"offset": o, "epoch": e, "kind": kind_name(k), "commit_epoch": c}
                          for o, e, k, c in h.committed],
            "leader_hws": [{"epoch": e, "hw": hw} for e, hw in h.leader_hws],
            "fatal": [{"node": node, "error": FATAL_NAMES[code]} for node, code in h.fatal],
            "last_event": EVENT_NAMES[h.last_event],
        },
    }
