"""The replication model behind the model interface: Init, the enabled actions, Next."""
from __future__ import annotations

from typing import Any, Mapping

from model.replication import actions as A
from model.replication import broker_actions, controller_actions, fault_actions, liveness, timeline
from model.replication.footprint import Footprints
from model.replication.context import Context
from model.replication.controller import reassigning
from model.replication.params import Params
from model.replication.properties import explanations, properties
from model.replication.records import NO_LEADER, BrokerRegistration, PartitionRegistration
from model.replication.state import (
    AP_ERRORS, FETCH_ERRORS, NO_FOLLOWER, UNKNOWN, Broker, Controller, History, State, compact,
)
from model.replication.variants import Rules


def _codes(names: tuple[str, ...]) -> str:
    return ", ".join(f"{i} {n}" for i, n in enumerate(names))


# The abbreviations and terse names of the JSON rendering, for the legend under a counterexample
# (self-explanatory names such as `fetch_requests` or `leader_epoch` are left out).
GLOSSARY = {
    "clean": "clean-shutdown marker on disk (written by a controlled shutdown)",
    "meta": "partition epoch of the last metadata record the broker replayed",
    "hw": "high watermark: the offset below which records are committed",
    "isr": "in-sync replicas",
    "pending": ("a leader's ISR proposed by an AlterPartition in flight (KIP-497); in history, "
                "the produce requests (acks=all) waiting in purgatory"),
    "leso": "leader epoch start offset: the leader's log end offset when its epoch began",
    "leo": "log end offset (a follower's: the fetch offset of its last Fetch)",
    "caught_up": "the follower reached the leader's log end offset since the leader last found it lagging",
    "elr": "eligible leader replicas (KIP-966)",
    "last_known_elr": "the last ELR member that was leader, kept when the ELR empties (KIP-966)",
    "recovering": "LeaderRecoveryState.RECOVERING: an unclean leader has not yet completed recovery",
    "ap_requests": "AlterPartition requests in flight, leader to controller",
    "ap_responses": "AlterPartition responses in flight, controller to leader",
    "diverging_epoch": "the leader epoch at which the follower's log diverges from the leader's (-1: none)",
    "error": f"a Fetch response's error: {_codes(FETCH_ERRORS)}; an AlterPartition response's: {_codes(AP_ERRORS)}",
    "exposed": "the longest log prefix ever below a leader's HW: what consumers could read",
    "acked": "values acknowledged to the producer (acks=all)",
}

_STEP = {
    A.FenceBroker: lambda s, c, a: controller_actions.fence_broker(s, c, a.broker),
    A.UnfenceBroker: lambda s, c, a: controller_actions.unfence_broker(s, c, a.broker),
    A.HandleAlterPartition: lambda s, c, a: controller_actions.handle_alter_partition(s, c, a.request),
    A.ReplayMetadata: lambda s, c, a: broker_actions.replay_metadata(s, c, a.broker),
    A.SendFetch: lambda s, c, a: broker_actions.send_fetch(s, c, a.follower),
    A.HandleFetch: lambda s, c, a: broker_actions.handle_fetch(s, c, a.request),
    A.HandleFetchResponse: lambda s, c, a: broker_actions.handle_fetch_response(s, c, a.response),
    A.ShrinkIsr: lambda s, c, a: broker_actions.shrink_isr(s, c, a.leader, a.follower),
    A.HandleAlterPartitionResponse: lambda s, c, a: broker_actions.handle_alter_partition_response(s, c, a.response),
    A.Produce: lambda s, c, a: broker_actions.produce(s, c, a.leader, a.value),
    A.ControlledShutdown: lambda s, c, a: fault_actions.controlled_shutdown(s, c, a.broker),
    A.Crash: lambda s, c, a: fault_actions.crash(s, c, a.broker),
    A.LossyCrash: lambda s, c, a: fault_actions.lossy_crash(s, c, a.broker, a.keep),
    A.Restart: lambda s, c, a: fault_actions.restart(s, c, a.broker),
    A.DropMessage: lambda s, c, a: fault_actions.drop_message(s, c, a.message),
    A.ElectLeaders: lambda s, c, a: controller_actions.elect_leaders(s, c, a.election),
    A.AlterPartitionReassignments: lambda s, c, a: controller_actions.alter_partition_reassignments(s, c, a.target),
    A.CommitMetadata: lambda s, c, a: controller_actions.commit_metadata(s, c),
    A.ControllerFailover: lambda s, c, a: controller_actions.controller_failover(s, c),
}

_COMMIT, _FAILOVER = A.CommitMetadata(), A.ControllerFailover()


def _targets(n: int) -> tuple[tuple[int, ...], ...]:
    """Every non-empty set of brokers, ascending, as a reassignment target."""
    return tuple(tuple(b for b in range(n) if mask >> b & 1) for mask in range(1, 1 << n))


def initial_state(p: Params) -> State:
    """Every broker registered and unfenced (epoch 1); brokers 0..replication_factor-1 are the
    replicas, broker 0 leads epoch 0 with a full ISR; empty logs."""
    replicas = tuple(range(p.replication_factor))
    reg = PartitionRegistration(replicas, replicas, (), (), 0, 0, 0, False)
    brokers = []
    for b in range(p.n):
        broker = Broker(True, 1, False, 0, (), 0, 0 if b in replicas else NO_LEADER, 0, 0, (), (), UNKNOWN, (), ())
        if b == 0:
            broker = broker._replace(isr=replicas, leso=0, followers=(NO_FOLLOWER,) * p.n, replicas=replicas)
        brokers.append(broker)
    controller = Controller(tuple(BrokerRegistration(1, False, False) for _ in range(p.n)), (reg,))
    return State(tuple(brokers), controller, (), (), (), (), History(0, (), (), (), 0, 0, 0, 0, 0, False))


class ReplicationModel:
    """Kafka 4.1 replication of one partition over N brokers (RF = N), with a variant switched in."""

    name = "replication"
    action_kinds = A.ACTION_KINDS

    def __init__(self, config: Mapping[str, Any], variant: str = "kafka-4.1", timely: bool = False) -> None:
        self.config = dict(config)
        self.variant = variant
        self.timely = timely
        self.params = Params.from_config(config)
        self.ctx = Context(self.params, Rules.of(variant))
        self.properties = properties(self.params) + liveness.properties(self.params)
        self.explanations = explanations(self.params)
        self.glossary = GLOSSARY
        self.fairness = liveness.FAIRNESS
        self.timeline = timeline
        self._lifted: list[tuple[str, ReplicationModel]] | None = None
        self._targets = _targets(self.params.n)
        # what each action reads and writes (model/replication/footprint.py), for the safety search only
        self.footprints = None if timely else Footprints(self)

    def bound_blocked(self, s: State) -> list[tuple[Any, str]]:
        """The fair actions disabled in s that raising one bound (max_leader_epoch,
        max_partition_epoch, max_in_flight) would enable, each with that bound. The fault budgets
        are not bounds: a fault that does not happen is a fair behaviour."""
        if self._lifted is None:
            self._lifted = []
            for name, q in liveness.lifted_params(self.params):
                m = ReplicationModel.__new__(ReplicationModel)
                m.params, m.ctx, m._targets = q, Context(q, self.ctx.r), self._targets
                self._lifted.append((name, m))
        # keyed by (kind, action): action values of different kinds may be equal tuples
        enabled = {(type(a), a) for a in self.actions(s)
                   if type(a).__name__ in liveness.FAIR_KINDS and self.next_state(s, a) is not None}
        out: list[tuple[Any, str]] = []
        for name, m in self._lifted:
            for a in m.actions(s):
                key = (type(a), a)
                if (key in enabled or type(a).__name__ not in liveness.FAIR_KINDS
                        or _STEP[type(a)](s, m.ctx, a) is None):
                    continue
                enabled.add(key)
                out.append((a, name))
        return out

    def init_states(self) -> list[State]:
        return [initial_state(self.params)]

    def actions(self, s: State) -> list[Any]:
        """Candidate actions in a fixed order; next_state applies each one's full guard."""
        p = self.params
        out: list[Any] = []
        regs = s.controller.brokers
        latest = broker_actions.replayable(s, self.ctx)
        room = s.in_flight() < p.max_in_flight
        h = s.history
        fault = p.fault_left(h)
        for b, broker in enumerate(s.brokers):
            if not regs[b].fenced:
                if not broker.alive or (fault and not 0 <= p.fences <= h.fences):
                    out.append(A.FenceBroker(b))
            elif broker.alive:
                out.append(A.UnfenceBroker(b))
            if not broker.alive:
                if regs[b].fenced:
                    out.append(A.Restart(b))
                continue
            if broker.meta < latest:
                out.append(A.ReplayMetadata(b))
            if broker.leader == b:
                if room and not broker.pending:
                    for f in broker.isr:
                        if f != b:
                            out.append(A.ShrinkIsr(b, f))
                if h.next_value < p.values:
                    out.append(A.Produce(b, h.next_value))
            elif broker.leader != UNKNOWN and room:
                out.append(A.SendFetch(b))
            if h.crashes < p.crashes and fault:
                out.append(A.ControlledShutdown(b))
                out.append(A.Crash(b))
                if h.lossy_crashes < p.lossy_crashes:
                    for keep in range(len(broker.log)):
                        out.append(A.LossyCrash(b, keep))
        for m in s.fetch_requests:
            out.append(A.HandleFetch(m))
        for m in s.fetch_responses:
            out.append(A.HandleFetchResponse(m))
        for m in s.ap_requests:
            out.append(A.HandleAlterPartition(m))
        for m in s.ap_responses:
            out.append(A.HandleAlterPartitionResponse(m))
        if fault and not 0 <= p.losses <= h.losses:
            for messages in (s.fetch_requests, s.fetch_responses, s.ap_requests, s.ap_responses):
                for m in messages:
                    out.append(A.DropMessage(m))
        if h.reassignments < p.reassignments:
            reg = s.controller.partition
            if not reassigning(reg):
                for target in self._targets:
                    if target != reg.replicas:
                        out.append(A.AlterPartitionReassignments(target))
        if s.controller.partition.leader_epoch < p.max_leader_epoch:
            if p.preferred_elections:
                out.append(A.ElectLeaders("PREFERRED"))
            if p.unclean_elect_leaders:
                out.append(A.ElectLeaders("UNCLEAN"))
        if s.controller.uncommitted:
            out.append(_COMMIT)
            if s.controller.failovers < p.controller_failovers:
                out.append(_FAILOVER)
        return out

    def disabled_actions(self) -> dict[str, str]:
        """Action kinds whose every guard needs a budget this configuration sets to 0."""
        p = self.params
        off: dict[str, str] = {}
        if p.losses == 0:
            off["DropMessage"] = "losses = 0"
        if p.crashes == 0:
            for kind in ("ControlledShutdown", "Crash", "LossyCrash", "Restart"):
                off[kind] = "crashes = 0"
            if p.fences == 0:
                off["FenceBroker"] = off["UnfenceBroker"] = "crashes = 0 and fences = 0"
        elif p.lossy_crashes == 0:
            off["LossyCrash"] = "lossy_crashes = 0"
        if p.max_faults == 0:
            for kind in ("ControlledShutdown", "Crash", "LossyCrash", "Restart", "DropMessage", "FenceBroker",
                         "UnfenceBroker"):
                off.setdefault(kind, "max_faults = 0")
        if p.values == 0:
            off["Produce"] = "values = 0"
        if p.reassignments == 0:
            off["AlterPartitionReassignments"] = "reassignments = 0"
        if p.controller_failovers == 0:
            off["CommitMetadata"] = off["ControllerFailover"] = "controller_failovers = 0"
        if not p.preferred_elections and not p.unclean_elect_leaders:
            off["ElectLeaders"] = "preferred_elections and unclean_elect_leaders false"
        elif p.max_leader_epoch < 2:
            # The first leader other than replicas[0] (or none) takes leader epoch 1 at least, so
            # an election on request needs epoch 2.
            off["ElectLeaders"] = "max_leader_epoch < 2"
        return off

    def next_state(self, s: State, action: Any) -> State | None:
        t = _STEP[type(action)](s, self.ctx, action)
        if t is not None and self.timely:
            if isinstance(action, A.DropMessage):
                t = liveness.resend_alter_partition(s, action.message, t)
            t = liveness.recompute_hw(t, self.ctx)
        return None if t is None else compact(t)

    def liveness_model(self) -> "ReplicationModel":
        """The timely model: the leader recomputes its HW after every step, as the next request
        that reaches it would make it do (liveness.recompute_hw), and a lost AlterPartition is
        sent again (liveness.resend_alter_partition)."""
        return ReplicationModel(self.config, self.variant, timely=True)

    reduction = "a follower replays a record that keeps its leader and leader epoch in the step that wrote it"

    @property
    def reduce_liveness(self) -> bool:
        """The reduction is sound for the temporal properties too (spec/replication.md, "Liveness":
        the replays it absorbs commute, change no temporal predicate but a follower's own
        `replays_latest_<b>` and no fairness condition, and are weakly fair: taken at once)."""
        return self.timely

    def reduce(self, s: State) -> State:
        """The checker's stutter reduction: absorb every follower replay that changes nothing but
        the follower's partition epoch (`broker_actions.follower_stutter`). Such replays commute
        with every other action and no property reads what they change (tests/test_reduction.py)."""
        latest = broker_actions.replayable(s, self.ctx)
        for b, x in enumerate(s.brokers):
            if x.alive and x.meta < latest and x.leader != b:
                break
        else:
            return s  # the common case: no follower has a record to replay
        t = broker_actions.absorb_follower_replays(s, self.ctx)
        return s if t is s else compact(t)

    def summary(self, s: State) -> str:
        """One short line for a graph node (kcheck graph): the controller's partition record, then
        each broker (L/F: the leader it knows is itself or not, its log's values, its HW)."""
        reg = s.controller.partition
        parts = [f"ctl L{reg.leader} e{reg.leader_epoch} isr{list(reg.isr)} elr{list(reg.elr)}"]
        if reg.replicas != tuple(range(len(s.brokers))) or reassigning(reg):
            parts[0] += f" replicas{list(reg.replicas)}"
            if reassigning(reg):
                parts[0] += f" -{list(reg.removing)} +{list(reg.adding)}"
        if s.controller.uncommitted:
            parts[0] += f" ({len(s.controller.uncommitted)} uncommitted)"
        for b, x in enumerate(s.brokers):
            if not x.alive:
                parts.append(f"b{b} down")
                continue
            role = "L" if x.leader == b else "F"
            parts.append(f"b{b} {role} log{[e.value for e in x.log]} hw{x.hw}")
        in_flight = len(s.fetch_requests) + len(s.fetch_responses) + len(s.ap_requests) + len(s.ap_responses)
        return " | ".join(parts) + (f" | {in_flight} msg" if in_flight else "")

    def abstraction(self, s: State) -> tuple:
        """A coarse protocol phase for `simulate --guided`: partition record, per-broker role, lag and log shape, leader's view, messages in flight."""
        reg = s.controller.partition
        regs = s.controller.brokers
        pe = reg.partition_epoch
        committed = s.history.exposed
        brokers: list[tuple] = []
        for b, x in enumerate(s.brokers):
            eligible = b in reg.isr or b in reg.elr
            holds = x.log[:len(committed)] == committed
            if not x.alive:
                brokers.append((0, regs[b].fenced, eligible, holds))
                continue
            role = 2 if x.leader == b else 1 if x.leader != UNKNOWN else 0
            lead: tuple = ()
            if role == 2:
                grow = 1 if any(f not in x.isr for f in x.pending) else 2 if x.pending else 0
                view = tuple((UNKNOWN if leo < 0 else (leo > x.hw) - (leo < x.hw),
                              leo > len(s.brokers[f].log) or not s.brokers[f].alive,
                              epoch == regs[f].epoch, f in x.isr or f in x.pending)
                             for f, (leo, epoch, _) in enumerate(x.followers) if f != b)
                lead = (grow, view)
            brokers.append((1, regs[b].fenced, eligible, holds, role, x.meta < pe, x.partition_epoch > x.meta, lead))
        fetches = tuple(sorted((m.broker_epoch == regs[m.follower].epoch, m.fetch_offset > len(s.brokers[m.follower].log))
                               for m in s.fetch_requests))
        messages = (len(s.fetch_responses), len(s.ap_requests), len(s.ap_responses))
        stale_alter = any(m.partition_epoch != pe for m in s.ap_requests)
        return (pe, len(reg.isr), tuple(brokers), fetches, messages, stale_alter, len(s.history.acked) > 0, len(committed))

    # The fingerprint is the tuple hash: states hold only ints, bools and tuples, whose hashes are
    # process-independent. The built-in itself, not a method that calls it: one call less for
    # every state the search generates.
    fingerprint = staticmethod(hash)

    def encode(self, s: State) -> bytes:
        return repr(_plain(s)).encode()

    def to_json(self, s: State) -> dict[str, Any]:
        out = _json(s)
        if not self.params.controller_failovers:  # the quorum's fields, always empty: left out
            for key in ("uncommitted", "failovers", "reverted"):
                del out["controller"][key]
        return out


def _plain(x: Any) -> Any:
    if isinstance(x, tuple):
        return tuple(_plain(v) for v in x)
    return x


def _json(x: Any) -> Any:
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return {k: _json(v) for k, v in zip(x._fields, x)}
    if isinstance(x, tuple):
        return [_json(v) for v in x]
    return x
