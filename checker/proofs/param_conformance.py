"""The every-size encoding (kraft_param) against the Python model: every transition the model
takes, from a sample of its states, is a step of the encoding (the over-approximation a proof for
every size rests on). A state is read into the encoding over a universe of exactly its nodes."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import z3

from checker.proofs import kraft_param as K
from checker.proofs.term import conjunction, eq_value
from model.kraft.rules import GRANTED, NO_ID, REJECTED, last_epoch, majority
from model.kraft.state import MESSAGE_NAMES

KIND = {"VoteRequest": "vreq", "VoteResponse": "vresp", "BeginQuorumEpochRequest": "bqe",
        "BeginQuorumEpochResponse": "bqer", "FetchRequest": "freq", "FetchResponse": "fresp"}


@dataclass
class Report:
    transitions: int = 0
    kinds: set[str] = field(default_factory=set)
    failures: list[str] = field(default_factory=list)


def world(n: int) -> tuple[list[Any], list[Any], Any]:
    """n distinct nodes, the quorums of the model's majorities of them (every subset of majority
    size), and the facts that make them the only elements of the two sorts."""
    from itertools import combinations

    nodes = [z3.Const(f"u{k}", K.Node) for k in range(n)]
    subsets = list(combinations(range(n), majority(n)))
    qs = [z3.Const(f"uq{k}", K.Quorum) for k in range(len(subsets))]
    x, q = z3.Const("x", K.Node), z3.Const("q", K.Quorum)
    facts = [z3.ForAll([x], z3.Or([x == u for u in nodes])), z3.ForAll([q], z3.Or([q == w for w in qs]))]
    if n > 1:
        facts.append(z3.Distinct(*nodes))
    if len(qs) > 1:
        facts.append(z3.Distinct(*qs))
    for w, members in zip(qs, subsets):
        facts += [K.member(u, w) == (k in members) for k, u in enumerate(nodes)]
    return nodes, qs, z3.And(facts)


def matches(s: K.State, py: Any, u: list[Any]) -> list[Any]:
    """The encoded fields of `s` equal those of the Python state `py` (ghosts left free), as a list
    of equalities and facts."""
    out = []
    for k, nd in enumerate(py.nodes):
        i = u[k]
        out += [eq_value(s.role(i), nd.role), eq_value(s.epoch(i), nd.epoch), eq_value(s.has_leader(i), nd.leader != NO_ID),
                eq_value(s.has_voted(i), nd.voted != NO_ID), eq_value(s.persisted(i), nd.vote_persisted),
                eq_value(s.observer(i), nd.observer), eq_value(s.lle(i), last_epoch(nd.log)), eq_value(s.fetched(i), nd.fetched),
                eq_value(s.len(i), len(nd.log))]
        out += [eq_value(s.log(i, k), entry[0]) for k, entry in enumerate(nd.log)]
        if nd.leader != NO_ID:
            out.append(eq_value(s.leader(i), u[nd.leader]))
        if nd.voted != NO_ID:
            out.append(eq_value(s.voted(i), u[nd.voted]))
        for j, end in enumerate(nd.end_offsets):  # a leader's (LeaderState), else ()
            out.append(eq_value(s.eo(i, u[j]), end))
        for j in range(len(py.nodes)):
            out.append(eq_value(s.granted(i, u[j]), bool(nd.votes) and nd.votes[j] == GRANTED))
            out.append(eq_value(s.rejected(i, u[j]), bool(nd.votes) and nd.votes[j] == REJECTED))
    committed = py.history.committed
    out += [z3.And(s.committed(off, ep), s.cce(off, ep) == ce) for off, ep, _, ce in committed]
    k, x = z3.Int("k"), z3.Int("x")
    out.append(z3.ForAll([k, x], z3.Implies(s.committed(k, x), z3.Or(
        [z3.And(k == off, x == ep) for off, ep, _, _ in committed]))))
    held = {(KIND[MESSAGE_NAMES[m.kind]], m.src, m.dst): m for m in py.network}
    for kind, fields in K.MESSAGES.items():
        for a in range(len(py.nodes)):
            for b in range(len(py.nodes)):
                m = held.get((kind, a, b))
                out.append(eq_value(s.msg(kind, "present")(u[a], u[b]), m is not None))
                if m is None:
                    continue
                for f in fields:
                    term = s.msg(kind, f)(u[a], u[b])
                    if f in ("rstart", "rlen", "agree"):  # the records' place in the leader's log: ghosts
                        continue
                    if kind == "vreq" and f in ("lle", "leo"):
                        out.append(eq_value(term, m.last_epoch if f == "lle" else m.last_offset))
                        continue
                    if f == "fo":
                        out.append(eq_value(term, m.fetch_offset))
                    elif f == "lfe":
                        out.append(eq_value(term, m.last_fetched_epoch))
                    elif f == "div":
                        out.append(eq_value(term, m.diverging_epoch >= 0))
                        if m.diverging_epoch < 0 and m.error == 0:
                            out += _records(s, u[a], u[b], m.records)
                    elif f == "has_leader":
                        out.append(eq_value(term, m.leader != NO_ID))
                    elif f == "leader":
                        if m.leader != NO_ID:
                            out.append(eq_value(term, u[m.leader]))
                    elif f == "pre":
                        out.append(eq_value(term, m.pre_vote))
                    else:
                        out.append(eq_value(term, getattr(m, f)))
    return out


def _records(s: K.State, a: Any, b: Any, records: tuple) -> list[Any]:
    """The response's records are its ghost log from rstart to rlen."""
    start, rlog = s.msg("fresp", "rstart")(a, b), s.msg("fresp", "rlog")
    return [s.msg("fresp", "rlen")(a, b) == start + len(records)] + [
        eq_value(rlog(a, b, start + k), entry[0]) for k, entry in enumerate(records)]


def _name(a: Any) -> tuple[str, tuple[int, ...]]:
    kind = type(a).__name__
    if kind == "DropMessage":
        return f"DropMessage({a.message})", (a.src, a.dst)
    return kind, tuple(x for x in a if isinstance(x, int))


def check_transitions(model: Any, states: list[Any], c: K.PCtx) -> Report:
    """Each (s, a, t) the model takes from the states is a step of the encoding."""
    rep = Report()
    pre, _ = K.fresh("p_")
    pre = pre.memoized()
    worlds: dict[int, tuple[list[Any], list[Any], Any]] = {}  # one per size, so the memos' arguments recur
    steps: dict[str, K.Transition] = {}
    for s in dict.fromkeys(states):  # a state the sample holds twice has its transitions checked once
        n = len(s.nodes)
        if n not in worlds:
            worlds[n] = world(n)
        u, _, facts = worlds[n]
        solver = None  # one per state, s's match asserted once (building terms is half the cost)
        for a in model.actions(s):
            t = model.next_state(s, a)
            if t is None:
                continue
            name, ids = _name(a)
            rep.transitions += 1
            rep.kinds.add(name.split("(")[0])
            if solver is None:
                solver = z3.Solver()
                solver.set("timeout", 20_000)
                solver.add(facts, conjunction(matches(pre, s, u)))
            if name in K.UNCHANGED:
                step = matches(pre, t, u)
            else:
                if name not in steps:
                    built = K.transition(c, pre, name)
                    steps[name] = K.Transition(built.name, built.args, built.guard, built.post.memoized())
                tr = steps[name]
                step = [*(x == u[k] for x, k in zip(tr.args, ids)), *tr.guard, *matches(tr.post, t, u)]
            solver.push()
            solver.add(conjunction(step))
            ok = solver.check()
            solver.pop()
            if ok != z3.sat:
                rep.failures.append(f"{a!r} from {s!r}: {ok}")
    return rep
