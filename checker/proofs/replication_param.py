"""The replication model's controller for every number of brokers: a Z3 encoding with brokers an
uninterpreted sort and the partition's replicas, ISR and ELR predicates over it, in which the
structural invariants (properties.structural) are proved by induction (replication_any).

What is encoded (spec/proofs.md, "The structural invariants for every number of brokers"):
- the controller's state that the structural invariants read: each broker's registration
  (fenced), the partition's replicas, ISR, ELR, leader and reassignment (removing and adding
  replicas), its partition epoch, the partition epochs the metadata log holds (first to last:
  the log is consecutive by construction) and, with controller failovers, the state before each
  uncommitted write;
- the actions that change it, each as controller.py decides: FenceBroker, UnfenceBroker,
  ControlledShutdown, Restart (its unclean-shutdown handling), HandleAlterPartition, ElectLeaders,
  AlterPartitionReassignments, CommitMetadata, ControllerFailover; every other action leaves it
  as it is but may forget metadata records (model.state.compact).
- min ISR as a cardinality: |S| >= min ISR holds when S contains one of the "min sets", an
  uninterpreted sort whose members are the sets of min ISR brokers (every one has two members or
  more: min ISR >= 2); min ISR 1 is "S is not empty", exactly.

Over-approximated, so that a proof here is a proof of the model (each model step is a step here;
replication_any checks that on a sample of the model's states before it proves):
- an AlterPartition request is any request the controller's validation accepts (who sent it,
  when, and from what leader state is the data plane's, not encoded);
- an election elects any valid replica, not the first in replica order; the last-known-leader
  rule (KIP-966) may elect any acceptable replica once ISR and ELR are empty;
- a record the rules would write may be left out only when it changes no encoded field (it then
  changes a field not encoded: leader epoch, recovery state, LastKnownELR);
- the budgets (crashes, fencings, epochs, failovers) and a broker's liveness and clean-shutdown
  marker are free choices.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Any, Callable

import z3

# a state as callables, field(args) -> term; a step's choices and guard; its arguments, guard and post-state
from checker.proofs.kraft_param import State, Step, Transition
from model.replication.controller import ONLINE, PREFERRED, UNCLEAN

Broker = z3.DeclareSort("RBroker")
MinSet = z3.DeclareSort("RMinSet")
in_min = z3.Function("r_in_min", Broker, MinSet, z3.BoolSort())
B, I = z3.BoolSort(), z3.IntSort()

# the state's fields: name -> (argument sorts, result sort)
SIGNATURE: dict[str, tuple[tuple[Any, ...], Any]] = {
    "fenced": ((Broker,), B), "replica": ((Broker,), B), "isr": ((Broker,), B), "elr": ((Broker,), B),
    "removing": ((Broker,), B), "adding": ((Broker,), B),
    "has_leader": ((), B), "leader": ((), Broker), "pe": ((), I), "log_start": ((), I),
    # with controller failovers: the writes not yet committed, oldest first, each as the controller's
    # state before it (state.Batch); `nun` of them
    "nun": ((), I)}
SNAPSHOT = ("fenced", "replica", "isr", "elr", "removing", "adding", "has_leader", "leader", "pe")
SIGNATURE.update({f"snap_{f}": ((I, *SIGNATURE[f][0]), SIGNATURE[f][1]) for f in SNAPSHOT})


@dataclass(frozen=True)
class RCtx:
    """What the transitions read besides the state: the configuration's switches and the variant's."""

    elr: bool = True
    unclean: bool = False  # unclean.leader.election.enable
    min1: bool = False  # min ISR 1 ("not empty"); else min ISR >= 2 through the min sets
    preferred_elections: bool = True
    unclean_elect_leaders: bool = False
    member_fenced_check: bool = True  # KIP-841 (variant fenced-may-join-isr drops it)
    unclean_shutdown_leaves_elr: bool = True  # KAFKA-15586 (variant unclean-restart-keeps-elr)
    reassignments: bool = False  # reassignments > 0
    failovers: bool = False  # controller_failovers > 0: writes commit later, a failover reverts the rest

    @classmethod
    def of(cls, params: Any, rules: Any) -> "RCtx":
        return cls(elr=params.elr, unclean=params.unclean, min1=params.min_isr <= 1,
                   preferred_elections=params.preferred_elections, unclean_elect_leaders=params.unclean_elect_leaders,
                   member_fenced_check=rules.member_fenced_check,
                   unclean_shutdown_leaves_elr=rules.unclean_shutdown_leaves_elr,
                   reassignments=params.reassignments > 0, failovers=params.controller_failovers > 0)


def world(n: int, min_isr: int) -> tuple[list[Any], list[Any], Any]:
    """n distinct brokers, for min ISR >= 2 the min sets (every subset of min ISR of them; none
    for min ISR 1), and the facts that make them the only elements of the two sorts."""
    u = [z3.Const(f"rb{k}", Broker) for k in range(n)]
    x, q = z3.Const("x", Broker), z3.Const("q", MinSet)
    facts = [z3.ForAll([x], z3.Or([x == b for b in u]))]
    qs: list[Any] = []
    if n > 1:
        facts.append(z3.Distinct(*u))
    if min_isr >= 2:
        subsets = list(combinations(range(n), min_isr))
        qs = [z3.Const(f"rq{k}", MinSet) for k in range(len(subsets))]
        facts.append(z3.ForAll([q], z3.Or([q == w for w in qs])))
        if len(qs) > 1:
            facts.append(z3.Distinct(*qs))
        for w, members in zip(qs, subsets):
            facts += [in_min(b, w) == (k in members) for k, b in enumerate(u)]
    return u, qs, z3.And(facts)


def fresh(prefix: str) -> State:
    return State({name: z3.Function(f"{prefix}{name}", *args, res) for name, (args, res) in SIGNATURE.items()})


def _x() -> Any:
    return z3.Const("x", Broker)


def empty(p: Callable[[Any], Any]) -> Any:
    x = _x()
    return z3.ForAll([x], z3.Not(p(x)))


def same(p: Callable[[Any], Any], q: Callable[[Any], Any]) -> Any:
    x = _x()
    return z3.ForAll([x], p(x) == q(x))


def big(c: RCtx, p: Callable[[Any], Any]) -> Any:
    """|p| >= min ISR: p is not empty (min ISR 1), or holds a min set."""
    if c.min1:
        return z3.Not(empty(p))
    q, x = z3.Const("q", MinSet), _x()
    return z3.Exists([q], z3.ForAll([x], z3.Implies(in_min(x, q), p(x))))


def axioms(c: RCtx) -> list[Any]:
    """Every min set has two members or more (min ISR >= 2); none are needed for min ISR 1."""
    if c.min1:
        return []
    q, a, b = z3.Const("q", MinSet), z3.Const("a", Broker), z3.Const("b", Broker)
    return [z3.ForAll([q], z3.Exists([a, b], z3.And(a != b, in_min(a, q), in_min(b, q))))]


# --- PartitionChangeBuilder over predicates (controller.partition_change) -----------------------


def partition_change(s: State, c: RCtx, st: Step, active: Any, acceptable: Callable[[Any], Any], election: str,
                     target_isr: Callable[[Any], Any], unclean_broker: Any = None,
                     target: Callable[[Any], Any] | None = None) -> State:
    """The registration after PartitionChangeBuilder.build and merge, when `active` (the handler
    examines the partition) and the step writes the record; else the registration as it is.
    `target`: a new reassignment's target replicas (alterPartitionReassignments), else the
    registration's reassignment, if any, goes on."""
    x = _x()
    if target is None:
        t_replicas, t_removing, t_adding = s.replica, s.removing, s.adding
    else:  # controller.reassignment_replicas: replicas = target + removing
        def t_replicas(y: Any) -> Any:
            return z3.Or(target(y), s.replica(y))

        def t_removing(y: Any) -> Any:
            return z3.And(s.replica(y), z3.Not(target(y)))

        def t_adding(y: Any) -> Any:
            return z3.And(target(y), z3.Not(s.replica(y)))
    # completeReassignmentIfNeeded (controller.maybe_complete_reassignment)
    def isr_left(y: Any) -> Any:
        return z3.And(target_isr(y), z3.Not(t_removing(y)))

    def left(y: Any) -> Any:
        return z3.And(t_replicas(y), z3.Not(t_removing(y)))

    removing_some = z3.Not(empty(t_removing))
    completes = z3.And(z3.Or(removing_some, z3.Not(empty(t_adding))),
                       z3.Or(z3.Not(removing_some), z3.And(z3.Not(empty(isr_left)), z3.Not(empty(left)))),
                       z3.ForAll([x], z3.Implies(left(x), isr_left(x))))

    def t_isr(y: Any) -> Any:
        return z3.If(completes, isr_left(y), target_isr(y))

    def new_replicas(y: Any) -> Any:
        return z3.If(completes, left(y), t_replicas(y))
    # maybePopulateTargetElr, with effective min ISR min(min ISR, |replicas|) (the replicas before the change)
    eff_big = z3.Or(big(c, t_isr), z3.ForAll([x], z3.Implies(s.replica(x), t_isr(x))))
    if c.elr:
        def t_elr(y: Any) -> Any:
            keep = [z3.Not(eff_big), z3.Or(s.elr(y), s.isr(y)), z3.Not(t_isr(y))]
            if unclean_broker is not None:
                keep.append(y != unclean_broker)
            return z3.And(keep)
    else:
        t_elr = s.elr
    t_isr_empty = empty(t_isr)

    def valid(r: Any) -> Any:
        return z3.And(z3.Or(t_isr(r), z3.And(t_isr_empty, t_elr(r))), acceptable(r))

    # tryElection: 0 the leader stays, 1 a valid replica wins, 2 an unclean winner, 3 no leader
    w, outcome = st.const("winner", Broker), st.const("outcome", I)
    keep = z3.And(s.has_leader(), valid(s.leader()))
    some_valid = z3.Exists([x], z3.And(new_replicas(x), valid(x)))  # a winner is looked for in replica order
    last_known = z3.And(t_isr_empty, empty(t_elr)) if c.elr else z3.BoolVal(False)
    st.require(z3.And(0 <= outcome, outcome <= 3))
    st.require(z3.Implies(outcome == 0, keep))
    # PREFERRED may pass over a valid leader for replicas[0]; ONLINE and UNCLEAN keep it
    st.require(z3.Implies(outcome == 1, z3.And(new_replicas(w), valid(w),
                                               *([] if election == PREFERRED else [z3.Not(keep)]))))
    st.require(z3.Implies(outcome == 2, z3.And(z3.Not(keep), z3.Not(some_valid), new_replicas(w), acceptable(w),
                                               z3.Or(last_known, z3.BoolVal(election == UNCLEAN)))))
    st.require(z3.Implies(outcome == 3, z3.And(z3.Not(keep), z3.Not(some_valid))))
    # the leader field is written when the winner differs from the leader (NO_LEADER included)
    moved = z3.Or(z3.And(outcome == 3, s.has_leader()),
                  z3.And(z3.Or(outcome == 1, outcome == 2), z3.Not(z3.And(s.has_leader(), w == s.leader()))))
    from_elr = z3.And(outcome == 1, moved, t_elr(w))  # an ELR winner becomes the sole ISR member
    unclean = z3.And(outcome == 2, moved)

    def isr2(y: Any) -> Any:
        return z3.If(from_elr, y == w, t_isr(y))

    def new_isr(y: Any) -> Any:
        if c.elr:
            written = isr2(y)
        else:  # with ELR off the ISR is never written empty
            written = z3.If(empty(isr2), s.isr(y), isr2(y))
        return z3.If(unclean, y == w, written)

    def new_elr(y: Any) -> Any:
        if not c.elr:
            return z3.BoolVal(False)
        return z3.And(z3.Not(unclean), t_elr(y), z3.Not(z3.And(from_elr, y == w)))

    new_has = z3.If(moved, outcome != 3, s.has_leader())
    new_leader = z3.If(z3.And(moved, outcome != 3), w, s.leader())
    written = st.const("written")
    st.require(z3.Implies(written, active))
    # a record is left out only where the builder finds no change (changeRecordIsNoOp) or the
    # handler does not examine the partition
    st.require(z3.Implies(z3.And(active, z3.Not(written)),
                          z3.And(same(new_isr, s.isr), same(new_elr, s.elr), z3.Not(moved),
                                 same(new_replicas, s.replica), z3.Not(completes),
                                 same(t_removing, s.removing), same(t_adding, s.adding))))
    return s.with_(
        isr=lambda y: z3.If(written, new_isr(y), s.isr(y)),
        elr=lambda y: z3.If(written, new_elr(y), s.elr(y)),
        replica=lambda y: z3.If(written, new_replicas(y), s.replica(y)),
        removing=lambda y: z3.If(written, z3.And(z3.Not(completes), t_removing(y)), s.removing(y)),
        adding=lambda y: z3.If(written, z3.And(z3.Not(completes), t_adding(y)), s.adding(y)),
        has_leader=lambda: z3.If(written, new_has, s.has_leader()),
        leader=lambda: z3.If(written, new_leader, s.leader()),
        pe=lambda: s.pe() + z3.If(written, 1, 0))


def _set(fn: Callable[[Any], Any], b: Any, v: Any) -> Callable[[Any], Any]:
    return lambda y: z3.If(y == b, v, fn(y))


def _broker_change(s: State, c: RCtx, st: Step, active: Any, b: Any, *, remove: Any = None, add: Any = None,
                   unclean_broker: Any = None) -> State:
    """ReplicationControlManager.generateLeaderAndIsrUpdates for the partition."""
    gone = [g for g in (remove, unclean_broker) if g is not None]

    def acceptable(r: Any) -> Any:
        ok = z3.And(z3.Not(s.fenced(r)), *[r != g for g in gone])
        return z3.Or(r == add, ok) if add is not None else ok

    def t_isr(r: Any) -> Any:
        return z3.And(s.isr(r), *[r != g for g in gone])

    return partition_change(s, c, st, active, acceptable, UNCLEAN if c.unclean else ONLINE, t_isr, unclean_broker)


# --- The actions --------------------------------------------------------------------------------


def fence_broker(s: State, c: RCtx, st: Step, b: Any) -> State:
    """ReplicationControlManager.handleBrokerFenced (controller_actions.fence_broker)."""
    st.require(z3.Not(s.fenced(b)))
    s = s.with_(fenced=_set(s.fenced, b, z3.BoolVal(True)))
    return _broker_change(s, c, st, s.isr(b), b, remove=b)


def unfence_broker(s: State, c: RCtx, st: Step, b: Any) -> State:
    """ReplicationControlManager.handleBrokerUnfenced (controller_actions.unfence_broker)."""
    st.require(s.fenced(b))
    s = s.with_(fenced=_set(s.fenced, b, z3.BoolVal(False)))
    return _broker_change(s, c, st, z3.Not(s.has_leader()), b, add=b)


def controlled_shutdown(s: State, c: RCtx, st: Step, b: Any) -> State:
    """ReplicationControlManager.handleBrokerInControlledShutdown, then fenced (fault_actions.controlled_shutdown)."""
    st.require(s.nun() == 0)  # taken once the pending writes commit
    t = _broker_change(s, c, st, s.isr(b), b, remove=b)
    return t.with_(fenced=_set(t.fenced, b, z3.BoolVal(True)))


def restart(s: State, c: RCtx, st: Step, b: Any) -> State:
    """ClusterControlManager.registerBroker, fenced, with ReplicationControlManager.handleBrokerUncleanShutdown
    when the broker left no clean-shutdown marker (fault_actions.restart)."""
    st.require(s.fenced(b))
    st.require(s.nun() == 0)  # answered once the pending writes commit
    clean = st.const("clean")
    if c.elr and c.unclean_shutdown_leaves_elr:
        return _broker_change(s, c, st, z3.And(z3.Not(clean), z3.Or(s.isr(b), s.elr(b))), b, unclean_broker=b)
    return _broker_change(s, c, st, z3.And(z3.Not(clean), s.isr(b)), b, remove=b)


def handle_alter_partition(s: State, c: RCtx, st: Step) -> State:
    """ReplicationControlManager.alterPartition: any request, refused (no record) or one its
    validation accepts (controller.validate_alter_partition); the target ISR is the request's."""
    x = _x()
    req, accepted = st.func("new_isr", Broker, B), st.const("accepted")
    valid = [s.has_leader(), req(s.leader()),  # the sender is the leader, in its ISR (INVALID_REQUEST)
             z3.ForAll([x], z3.Implies(req(x), s.replica(x)))]
    if c.member_fenced_check:  # KIP-841: INELIGIBLE_REPLICA
        valid.append(z3.ForAll([x], z3.Implies(req(x), z3.Not(s.fenced(x)))))
    st.require(z3.Implies(accepted, z3.And(valid)))
    return partition_change(s, c, st, accepted, lambda r: z3.Not(s.fenced(r)), UNCLEAN if c.unclean else ONLINE, req)


def elect_leaders(election: str) -> Callable[[State, RCtx, Step], State]:
    def step(s: State, c: RCtx, st: Step) -> State:
        """ReplicationControlManager.electLeader (controller_actions.elect_leaders)."""
        if election == UNCLEAN:
            st.require(z3.Not(s.has_leader()))
        return partition_change(s, c, st, z3.BoolVal(True), lambda r: z3.Not(s.fenced(r)), election, s.isr)
    return step


def alter_partition_reassignments(s: State, c: RCtx, st: Step) -> State:
    """ReplicationControlManager.alterPartitionReassignments (controller.alter_partition_reassignment):
    any non-empty target while no reassignment is in progress; refused (no record) where the
    election would ask LeaderAcceptor about a replica being added (UNKNOWN_SERVER_ERROR)."""
    x = _x()
    target, accepted = st.func("target", Broker, B), st.const("accepted")
    st.require(z3.Not(empty(target)))
    st.require(z3.ForAll([x], z3.And(z3.Not(s.removing(x)), z3.Not(s.adding(x)))))
    return partition_change(s, c, st, accepted, lambda r: z3.Not(s.fenced(r)), ONLINE, s.isr, target=target)


def snapshot(s: State, k: Any) -> State:
    """The controller's state saved as the k-th uncommitted write's "before" (its log start 0)."""
    f: dict[str, Callable[..., Any]] = {name: (lambda name: lambda *a: getattr(s, f"snap_{name}")(k, *a))(name)
                                        for name in SNAPSHOT}
    return s.with_(**f, log_start=lambda: z3.IntVal(0))


def commit_metadata(s: State, c: RCtx, st: Step) -> State:
    """The quorum commits the oldest pending write (controller_actions.commit_metadata)."""
    st.require(s.nun() > 0)
    shifted = {f"snap_{f}": (lambda f: lambda k, *a: getattr(s, f"snap_{f}")(k + 1, *a))(f) for f in SNAPSHOT}
    return s.with_(**shifted, nun=lambda: s.nun() - 1)


def controller_failover(s: State, c: RCtx, st: Step) -> State:
    """The next controller knows the committed records only: the state before the oldest pending
    write (controller_actions.controller_failover; the failover budget is a free choice)."""
    st.require(s.nun() > 0)
    first = snapshot(s, z3.IntVal(0))
    keep = first.pe()
    return first.with_(log_start=lambda: z3.If(s.log_start() <= keep, s.log_start(), keep), nun=lambda: z3.IntVal(0),
                       **{f"snap_{f}": getattr(s, f"snap_{f}") for f in SNAPSHOT})


def other(s: State, c: RCtx, st: Step) -> State:
    """A broker's step, a crash or a lost message: the controller's state is as it was."""
    return s


# name, the function, whether it takes a broker, and when the configuration enables it
ACTIONS: list[tuple[str, Callable[..., State], bool, Callable[[RCtx], bool]]] = [
    ("FenceBroker", fence_broker, True, lambda c: True),
    ("UnfenceBroker", unfence_broker, True, lambda c: True),
    ("ControlledShutdown", controlled_shutdown, True, lambda c: True),
    ("Restart", restart, True, lambda c: True),
    ("HandleAlterPartition", handle_alter_partition, False, lambda c: True),
    ("ElectLeaders(PREFERRED)", elect_leaders(PREFERRED), False, lambda c: c.preferred_elections),
    ("ElectLeaders(UNCLEAN)", elect_leaders(UNCLEAN), False, lambda c: c.unclean_elect_leaders),
    ("AlterPartitionReassignments", alter_partition_reassignments, False, lambda c: c.reassignments),
    ("CommitMetadata", commit_metadata, False, lambda c: c.failovers),
    ("ControllerFailover", controller_failover, False, lambda c: c.failovers),
    ("BrokerStep", other, False, lambda c: True),
]
# the controller events whose writes wait for the quorum (controller_actions.settle)
SETTLED = frozenset({"FenceBroker", "UnfenceBroker", "HandleAlterPartition", "ElectLeaders(PREFERRED)",
                     "ElectLeaders(UNCLEAN)", "AlterPartitionReassignments"})
# the model's actions that write no controller state
BROKER_STEPS = frozenset({"ReplayMetadata", "SendFetch", "HandleFetch", "HandleFetchResponse", "ShrinkIsr",
                          "HandleAlterPartitionResponse", "Produce", "Crash", "LossyCrash", "DropMessage"})


def transition(c: RCtx, pre: State, name: str, st: Step | None = None, args: tuple[Any, ...] | None = None) -> Transition:
    """The step `name` from `pre`: its arguments, guard and post-state, with the metadata log's
    compaction (any prefix but the latest record may be forgotten, model.state.compact). `st`
    makes the choices (default: a fresh Step); `args`: the broker it takes (default: a constant)."""
    fn, takes = next((f, t) for n, f, t, _ in ACTIONS if n == name)
    tag = name.replace("(", "_").replace(")", "")
    st = Step(tag, pre) if st is None else st
    if args is None:
        args = (st.const("b", Broker),) if takes else ()
    post = fn(pre, c, st, *args)
    if c.failovers and name in SETTLED:
        post = _settle(pre, post, st)
    start = st.const("log_start", I)
    st.require(z3.And(post.log_start() <= start, start <= post.pe()))
    return Transition(name, args, st.guard, post.with_(log_start=lambda: start))


def _settle(pre: State, post: State, st: Step) -> State:
    """A write becomes an uncommitted batch holding the state before it (controller_actions.settle)
    when the event changed the controller: always where an encoded field changed, and maybe where
    none did (a broker epoch or a leader epoch moved)."""
    wrote = st.const("batched")
    same_all = z3.And(*[same(getattr(post, f), getattr(pre, f)) for f in ("fenced", "replica", "isr", "elr",
                                                                          "removing", "adding")],
                      post.has_leader() == pre.has_leader(), post.leader() == pre.leader(), post.pe() == pre.pe())
    st.require(z3.Or(wrote, same_all))
    n = pre.nun()
    saved = {f"snap_{f}": (lambda f: lambda k, *a: z3.If(z3.And(wrote, k == n), getattr(pre, f)(*a),
                                                          getattr(pre, f"snap_{f}")(k, *a)))(f) for f in SNAPSHOT}
    return post.with_(**saved, nun=lambda: n + z3.If(wrote, 1, 0))


def enabled(c: RCtx) -> list[str]:
    return [n for n, _, _, on in ACTIONS if on(c)]


def init(s: State) -> Any:
    """model.initial_state: the first replicas form the ISR, the first of them leads, every
    broker registered and unfenced, partition epoch 0, the log holding it alone."""
    x = _x()
    return z3.And(s.has_leader(), s.replica(s.leader()), s.pe() == 0, s.log_start() == 0, s.nun() == 0,
                  z3.ForAll([x], z3.And(s.isr(x) == s.replica(x), z3.Not(s.elr(x)), z3.Not(s.fenced(x)),
                                        z3.Not(s.removing(x)), z3.Not(s.adding(x)))))


# --- The structural invariants (properties.structural), one conjunct each -----------------------


def _isr_in_replicas(c: RCtx, s: State) -> Any:
    x = _x()
    return z3.ForAll([x], z3.Implies(s.isr(x), s.replica(x)))


def _elr_in_replicas(c: RCtx, s: State) -> Any:
    x = _x()
    return z3.ForAll([x], z3.Implies(s.elr(x), s.replica(x)))


def _isr_elr_disjoint(c: RCtx, s: State) -> Any:
    x = _x()
    return z3.ForAll([x], z3.Not(z3.And(s.isr(x), s.elr(x))))


def _elr_empty_at_min_isr(c: RCtx, s: State) -> Any:
    return z3.Implies(big(c, s.isr), empty(s.elr))


def _isr_unfenced(c: RCtx, s: State) -> Any:
    x = _x()
    return z3.ForAll([x], z3.Implies(s.isr(x), z3.Not(s.fenced(x))))


def _leader_in_isr(c: RCtx, s: State) -> Any:
    return z3.Implies(s.has_leader(), s.isr(s.leader()))


def _isr_not_empty(c: RCtx, s: State) -> Any:
    return z3.Not(empty(s.isr))


def _metadata_log(c: RCtx, s: State) -> Any:
    return z3.And(0 <= s.log_start(), s.log_start() <= s.pe())


def _one_elr_without_isr(c: RCtx, s: State) -> Any:
    a, b = z3.Const("a", Broker), z3.Const("b", Broker)
    return z3.Implies(empty(s.isr), z3.ForAll([a, b], z3.Implies(z3.And(s.elr(a), s.elr(b)), a == b)))


def _reassignment_in_replicas(c: RCtx, s: State) -> Any:
    x = _x()
    return z3.ForAll([x], z3.And(z3.Implies(z3.Or(s.removing(x), s.adding(x)), s.replica(x)),
                                 z3.Not(z3.And(s.removing(x), s.adding(x)))))


def _no_reassignment(c: RCtx, s: State) -> Any:
    x = _x()
    return z3.ForAll([x], z3.And(z3.Not(s.removing(x)), z3.Not(s.adding(x))))


def _no_uncommitted(c: RCtx, s: State) -> Any:
    return s.nun() == 0


def _snapshots(c: RCtx, s: State) -> Any:
    """Each pending write's "before" satisfies the invariant (it was a state of the controller)."""
    k = z3.Int("k")
    view = snapshot(s, k)
    parts = [formula(n)(c, view) for n in conjuncts(c) if n != "snapshots"]
    return z3.And(s.nun() >= 0, z3.ForAll([k], z3.Implies(z3.And(0 <= k, k < s.nun()), z3.And(parts))))


# name -> (formula, when it is part of `structural` for the configuration, what it says)
INVARIANTS: dict[str, tuple[Callable[[RCtx, State], Any], Callable[[RCtx], bool], str]] = {
    "isr_in_replicas": (_isr_in_replicas, lambda c: True, "ISR ⊆ replicas"),
    "elr_in_replicas": (_elr_in_replicas, lambda c: True, "ELR ⊆ replicas"),
    "isr_elr_disjoint": (_isr_elr_disjoint, lambda c: True, "ISR ∩ ELR = ∅"),
    "elr_empty_at_min_isr": (_elr_empty_at_min_isr, lambda c: True, "|ISR| >= min ISR ⇒ ELR = ∅"),
    "isr_unfenced": (_isr_unfenced, lambda c: c.elr, "no fenced broker in the ISR (ELR on)"),
    "leader_in_isr": (_leader_in_isr, lambda c: True, "the leader is in the ISR"),
    "isr_not_empty": (_isr_not_empty, lambda c: not c.elr, "the ISR is not empty (ELR off)"),
    "metadata_log": (_metadata_log, lambda c: True, "the metadata log holds the latest partition epoch"),
}
# lemmas the conjuncts need to be inductive: name -> (formula, when, what it says)
LEMMAS: dict[str, tuple[Callable[[RCtx, State], Any], Callable[[RCtx], bool], str]] = {
    "one_elr_without_isr": (_one_elr_without_isr, lambda c: c.min1 and c.elr,
                            "min ISR 1: an empty ISR leaves at most one ELR member"),
    "reassignment_in_replicas": (_reassignment_in_replicas, lambda c: c.reassignments,
                                 "the removing and adding replicas are disjoint replicas"),
    "no_reassignment": (_no_reassignment, lambda c: not c.reassignments,
                        "reassignments = 0: no replica is being removed or added"),
    "no_uncommitted": (_no_uncommitted, lambda c: not c.failovers,
                       "controller_failovers = 0: every write commits at once"),
    "snapshots": (_snapshots, lambda c: c.failovers,
                  "controller failovers: the state saved before each uncommitted write satisfies the rest"),
}


def conjuncts(c: RCtx) -> list[str]:
    return [n for n, (_, on, _) in {**INVARIANTS, **LEMMAS}.items() if on(c)]


def formula(name: str) -> Callable[[RCtx, State], Any]:
    return {**INVARIANTS, **LEMMAS}[name][0]
