"""Witnesses that the every-size invariant constrains no action out of existence: one run of the
encoding from a given initial state, over three nodes, that takes every action. Each step's
choices are fixed by a model of its guard (and the next steps', so that the run goes on), which
keeps every state of the run a given one; an action is enabled in some Inv state when Z3 finds a
model of Inv (Q written out) and its guard in the state before it. Used where Z3 finds no model
of Inv & guard over free functions in the time (leader completeness's lemmas)."""
from __future__ import annotations

from typing import Any, Callable, Iterator

import z3

from checker.proofs import kraft_param as K
from checker.proofs.param_conformance import world
from model.kraft.rules import CANDIDATE, FOLLOWER, LEADER, PROSPECTIVE, RESIGNED, UNATTACHED

A, B, C = 0, 1, 2  # the run's nodes
LOOKAHEAD = 1  # steps whose guards a step's choices must leave satisfiable


Expect = Callable[[K.State, list[Any]], Any]


def _role(x: int, role: int, quiet: tuple[str, ...] = ()) -> Expect:
    """After the step, node x has the role, and has sent none of the `quiet` requests on its own
    (a new role's sends are choices; the run sends them as steps of their own)."""
    return lambda s, u: z3.And(s.role(u[x]) == role, *[z3.Not(s.msg(k, "present")(u[x], y)) for k in quiet
                                                      for y in u if not y.eq(u[x])])


def run_plan(c: K.PCtx) -> list[tuple[str, tuple[int, ...], Expect | None]]:
    """The run: a elected (through a pre-vote when the variant has one), b following it and
    fetching, every kind of message dropped once, the timeouts and faults, a BeginQuorumEpoch
    answered, a's check-quorum timeout last; with what a step must bring about where its choices
    could do otherwise."""
    candidate = _role(A, CANDIDATE, ("vreq",))
    elect = ([("ElectionTimeout", (A,), _role(A, PROSPECTIVE, ("vreq",))), ("SendVote", (A, B), None),
              ("HandleVoteRequest", (A, B), None), ("HandleVoteResponse", (B, A), candidate)]
             if c.proto.pre_vote else [("ElectionTimeout", (A,), candidate)])
    return elect + [(name, ids, expect) for name, ids, expect in (
        ("SendVote", (A, C), None), ("DropMessage(VoteRequest)", (A, C), None), ("SendVote", (A, C), None),
        ("HandleVoteRequest", (A, C), None), ("DropMessage(VoteResponse)", (C, A), None),
        ("SendVote", (A, B), None), ("HandleVoteRequest", (A, B), None),
        ("HandleVoteResponse", (B, A), _role(A, LEADER, ("bqe",))),
        ("ClientAppend", (A,), None), ("SendBeginQuorumEpoch", (A, C), None),
        ("DropMessage(BeginQuorumEpochRequest)", (A, C), None),
        ("SendBeginQuorumEpoch", (A, B), None), ("HandleBeginQuorumEpochRequest", (A, B), _role(B, FOLLOWER, ("freq",))),
        ("SendFetch", (B,), None), ("DropMessage(FetchRequest)", (B, A), None), ("SendFetch", (B,), None),
        ("HandleFetchRequest", (B, A), None), ("DropMessage(FetchResponse)", (A, B), None), ("SendFetch", (B,), None),
        ("HandleFetchRequest", (B, A), None), ("HandleFetchResponse", (A, B), _role(B, FOLLOWER, ("freq",))),
        ("FetchTimeout", (B,), None), ("Restart", (C,), None),
        # a voter answers BeginQuorumEpoch only when fenced, an observer (a lost disk's new
        # directory, KIP-853) always: variants without directory ids stop here
        ("DiskLoss", (C,), None), ("SendBeginQuorumEpoch", (A, C), None), ("HandleBeginQuorumEpochRequest", (A, C), None),
        ("DropMessage(BeginQuorumEpochResponse)", (C, A), None), ("SendBeginQuorumEpoch", (A, C), None),
        ("HandleBeginQuorumEpochRequest", (A, C), None), ("HandleBeginQuorumEpochResponse", (C, A), None),
        ("CheckQuorumTimeout", (A,), None))]


def _closed(s: K.State, fix: Callable[[Any], Any], nodes: list[Any]) -> K.State:
    """s with each field one term over placeholder arguments, `fix` applied, the world's nodes
    distinct, and simplified: an application substitutes its arguments (no chain of the run's
    earlier states is rebuilt)."""
    apart = [(a == b, z3.BoolVal(False)) for a in nodes for b in nodes if not a.eq(b)]
    out = {}
    for name, (args, _) in K.SIGNATURE.items():
        xs = [z3.Const(f"arg{k}_{name}", a) for k, a in enumerate(args)]
        body = z3.simplify(z3.substitute(z3.simplify(fix(s.f[name](*xs))), *apart))
        out[name] = (lambda xs, body: lambda *a: z3.substitute(body, *[
            (x, y if z3.is_expr(y) else z3.IntVal(y)) for x, y in zip(xs, a)]) if xs else body)(xs, body)
    return K.State(out)


def _fixed(model: z3.ModelRef, decls: list[Any], world_terms: list[Any]) -> Callable[[Any], Any]:
    """Substitutes the model's values for a step's choices (constants and functions of nodes),
    each node or quorum as the world's constant it is (a model's own values mean nothing to
    another solver)."""
    named = [(model.eval(w, model_completion=True), w) for w in world_terms]

    def back(v: Any) -> Any:
        return next((w for val, w in named if val.eq(v)), v)

    consts, funcs = [], []
    for d in decls:
        if d.arity() == 0:
            consts.append((d(), back(model.eval(d(), model_completion=True))))
            continue
        xs = [z3.Var(k, d.domain(k)) for k in range(d.arity())]
        interp = model[d] if any(d.eq(x) for x in model.decls()) else None
        if interp is None:  # unconstrained: any function will do
            funcs.append((d, _default(d.range(), world_terms)))
            continue
        body = back(interp.else_value())
        for entry in interp.as_list()[:-1]:
            body = z3.If(z3.And([x == back(v) for x, v in zip(xs, entry[:-1])]), back(entry[-1]), body)
        funcs.append((d, body))
    return lambda t: z3.substitute_funs(z3.substitute(t, *consts), *funcs) if funcs else z3.substitute(t, *consts)


def _default(sort: Any, world_terms: list[Any]) -> Any:
    if sort == z3.BoolSort():
        return z3.BoolVal(False)
    if sort == z3.IntSort():
        return z3.IntVal(0)
    return next(w for w in world_terms if w.sort() == sort)


class RunBlocked(Exception):
    """The run cannot take its next step (its plan does not fit the variant)."""


def stale_vote_plan(c: K.PCtx) -> list[tuple[str, tuple[int, ...], Expect | None]]:
    """A branch of the run, taken where a leads epoch 1 with entries c never got: a resigns by
    check-quorum, and c, in a's next epoch, asks a for its pre-vote and vote. Kafka refuses them
    (c's log is behind); a variant whose voters do not compare logs elects c, and its CTI lies
    here. Only where the variant has pre-vote and check-quorum (else the branch is not taken)."""
    if not (c.proto.pre_vote and c.proto.check_quorum):
        return []
    return [("CheckQuorumTimeout", (A,), _role(A, RESIGNED)), ("ElectionTimeout", (A,), _role(A, UNATTACHED)),
            ("ElectionTimeout", (A,), _role(A, PROSPECTIVE, ("vreq",))), ("SendVote", (A, C), None),
            ("HandleVoteRequest", (A, C), None), ("ElectionTimeout", (C,), _role(C, PROSPECTIVE, ("vreq",))),
            ("SendVote", (C, A), None), ("HandleVoteRequest", (C, A), None),
            ("HandleVoteResponse", (A, C), _role(C, CANDIDATE, ("vreq",))), ("SendVote", (C, A), None),
            ("HandleVoteRequest", (C, A), None), ("HandleVoteResponse", (A, C), _role(C, LEADER, ("bqe",)))]


FORK = ("FetchTimeout", (B,))  # the step of run_plan after which stale_vote_plan branches off


def run_states(c: K.PCtx) -> Iterator[tuple[str, str, K.State, list[Any], Any, tuple[Any, ...]]]:
    """Each step of the run, then of its branch: (action, action with its nodes, the given state
    before it, the facts of the run's world, its guard there, its node arguments). A plan that
    does not fit the variant ends where it blocks; RunBlocked is raised after both were taken."""
    nodes, quorums, facts = world(3)
    plan = run_plan(c)
    fork = next(k for k, (name, ids, _) in enumerate(plan) if (name, ids) == FORK) + 1
    branch: list[K.State] = []
    blocked = []
    try:
        yield from _walk(c, K.initial_state(), plan, nodes, facts, quorums, fork, branch, "w")
    except RunBlocked as e:
        blocked.append(str(e))
    tail = stale_vote_plan(c)
    if branch and tail:
        try:
            yield from _walk(c, branch[0], tail, nodes, facts, quorums, -1, [], "wb")
        except RunBlocked as e:
            blocked.append(str(e))
    if blocked:
        raise RunBlocked("; ".join(blocked))


def _walk(c: K.PCtx, s: K.State, plan: list[tuple[str, tuple[int, ...], Expect | None]], nodes: list[Any],
          facts: Any, quorums: list[Any], fork: int, branch: list[K.State], tag: str
          ) -> Iterator[tuple[str, str, K.State, list[Any], Any, tuple[Any, ...]]]:
    """The steps of one plan from s (the state before step `fork` kept in `branch`); `tag` names
    its steps' choices apart from another plan's."""
    fns = {n: f for n, _, f in K.ACTIONS}
    for k, (name, ids, _) in enumerate(plan):
        if k == fork:
            branch.append(s)
        steps, t, wanted = [], s, []
        for j, (nm, ix, expect) in enumerate(plan[k:k + LOOKAHEAD + 1]):
            st = K.Step(f"{tag}{k}_{j}_{nm.replace('(', '_').replace(')', '')}", t)
            t = fns[nm](t, c, st, *(nodes[x] for x in ix))
            steps.append((st, t))
            wanted += [expect(t, nodes)] if expect is not None else []
        label = f"{name}({', '.join('abc'[x] for x in ids)})"
        yield name, label, s, [facts], z3.And(steps[0][0].guard), tuple(nodes[x] for x in ids)
        solver = z3.Solver()
        solver.set("timeout", 60_000)
        if solver.check(facts, *wanted, *[g for st, _ in steps for g in st.guard]) != z3.sat:
            raise RunBlocked(f"the witness run cannot take {label} and the {len(steps) - 1} steps after it")
        s = _closed(steps[0][1], _fixed(solver.model(), steps[0][0].choices, nodes + quorums), nodes)
