"""The every-size KRaft encoding (kraft_param) against the relation derived from the model's
Python (derive.py), by Z3 over every state of the domain at a fixed number of voters.

`--size any` proves its invariant of kraft_param, an over-approximation written by hand. That
proof is of the model when every step the model takes is a step of the encoding. Here that is
shown at N voters, not on a sample: for every action instance derived at N voters, every
pre-state of the fixed-size domain (kraft_state's layout, ids in range) and every every-size
state P that abstracts it (`abstraction`, over a universe of exactly N nodes) and satisfies the
every-size invariant, whenever the model takes the step and does not raise, some choice of the
encoding's free constants makes its step from P enabled and its successor abstract the model's:

    Inv(P) & alpha(P, s) & guard_d(s) & ~crash_d(s)  =>  exists c. guard_p(P, c) & alpha(post_p(P, c), post_d(s))

Z3 is asked for a counterexample: a model of the left side and `ForAll c. ~(...)`. The encoding's
choice functions (the subsets of a poll's requests) are, over the N nodes, N Boolean choices each.
Inv(P) is asked because the encoding reads its own ghosts (a diverging response's `agree`); by
induction every encoding state reached satisfies it. What the encoding keeps of a state
(`abstraction`) covers every field of kraft_param.SIGNATURE but the ghosts (a test asserts it),
so an effect of the model the encoding does not make shows as a difference."""
from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import z3

from checker.proofs import derive as D
from checker.proofs import kraft_param as K
from checker.proofs.kraft_state import EMPTY, REQUEST, RESPONSE, Layout, fresh
from checker.proofs.param_conformance import _name, world
from checker.proofs.term import Sym
from model.kraft.rules import CANDIDATE, GRANTED, LEADER, NO_ID, PROSPECTIVE, REJECTED
from model.kraft.state import BQE_REQUEST, FETCH_REQUEST, VOTE_REQUEST

# the every-size message kinds of a fixed-size slot (rpc, requester, responder): request, response
KINDS = {VOTE_REQUEST: ("vreq", "vresp"), BQE_REQUEST: ("bqe", "bqer"), FETCH_REQUEST: ("freq", "fresp")}
# kraft_param fields that no transition's guard reads and no property of the model states
GHOSTS = ("vote_hist", "elected", "equorum", "estart", "eleader", "ack", "chw", "cq",
          "fresp.rstart", "fresp.rlen", "fresp.agree", "fresp.rlog")
# fields every-size's abstraction sets only where the fixed-size state has them (below): listed for
# the coverage test
ABSTRACTED = tuple(k for k in K.SIGNATURE if k not in GHOSTS) + ("fresp.rlog",)


def node_of(u: list[Any], t: Any) -> Any:
    """The node a fixed-size id term names (ids in range, `in_range`)."""
    out = u[-1]
    for k in range(len(u) - 2, -1, -1):
        out = z3.If(t == k, u[k], out)
    return out


def in_range(n: int, t: Any, none: bool = True) -> Any:
    return z3.And(t >= (NO_ID if none else 0), t < n)


def well_typed(layout: Layout, s: Sym) -> Any:
    """What every state the model's runs reach has and the layout does not say: ids name voters
    (or none), epochs are not negative. Assumed of a pre-state and checked of its successors,
    so it holds along every run (the initial states have it)."""
    n, out = layout.n, []
    for i in range(n):
        leo = s[("leo", i)]
        out += [in_range(n, s[("leader", i)]), in_range(n, s[("voted", i)]), s[("epoch", i)] >= 0]
        out += [z3.Implies(k < leo, s[("lep", i, k)] >= 0) for k in range(layout.L)]
    for r in KINDS:
        for a, b in layout.pairs():
            st = s[("st", r, a, b)]
            out += [z3.Implies(st != EMPTY, s[("mepoch", r, a, b)] >= 0),
                    z3.Implies(st == RESPONSE, in_range(n, s[("mleader", r, a, b)]))]
            if r == VOTE_REQUEST:
                out.append(z3.Implies(st == REQUEST, s[("last_epoch", r, a, b)] >= 0))
            if r == FETCH_REQUEST:
                out.append(z3.Implies(st == REQUEST, s[("lfe", r, a, b)] >= 0))
                out += [z3.Implies(z3.And(st == RESPONSE, k < s[("rec_len", r, a, b)]), s[("rec_ep", r, a, b, k)] >= 0)
                        for k in range(layout.L)]
    out += [s[("cmt_ep", k)] >= NO_ID for k in range(layout.L)]
    return z3.And(out)


def _last_epoch(layout: Layout, s: Sym, i: int) -> Any:
    out: Any = z3.IntVal(0)  # rules.last_epoch: 0 for an empty log
    for k in range(layout.L):
        out = z3.If(s[("leo", i)] == k + 1, s[("lep", i, k)], out)
    return out


def abstraction(layout: Layout, s: Sym, p: K.State, u: list[Any]) -> list[Any]:
    """The every-size state p keeps what kraft_param encodes of the fixed-size state s (ghosts
    left free), at the nodes u (node k is voter k): kraft_param's reading of a model state
    (param_conformance.matches), stated over kraft_state's variables."""
    n, L, out = layout.n, layout.L, []
    node = lambda t: node_of(u, t)  # noqa: E731
    for i in range(n):
        x = u[i]
        role, leader, voted, leo = s[("role", i)], s[("leader", i)], s[("voted", i)], s[("leo", i)]
        out += [p.role(x) == role, p.epoch(x) == s[("epoch", i)], p.has_leader(x) == (leader != NO_ID),
                z3.Implies(leader != NO_ID, p.leader(x) == node(leader)), p.has_voted(x) == (voted != NO_ID),
                z3.Implies(voted != NO_ID, p.voted(x) == node(voted)), p.persisted(x) == s[("vpers", i)],
                p.observer(x) == s[("observer", i)], p.fetched(x) == s[("fetched", i)], p.len(x) == leo,
                p.lle(x) == _last_epoch(layout, s, i),
                # the ghost start of an epoch is its leader's LeaderState.epochStartOffset
                z3.Implies(role == LEADER, p.estart(s[("epoch", i)]) == s[("estart", i)])]
        out += [z3.Implies(k < leo, p.log(x, k) == s[("lep", i, k)]) for k in range(L)]
        election = z3.Or(role == PROSPECTIVE, role == CANDIDATE)
        for j in range(n):
            v = s[("votes", i, j)]
            out += [p.granted(x, u[j]) == z3.And(election, v == GRANTED),
                    p.rejected(x, u[j]) == z3.And(election, v == REJECTED),
                    z3.Implies(role == LEADER, p.eo(x, u[j]) == s[("end", i, j)])]
    for r, (req, resp) in KINDS.items():
        for a, b in layout.pairs():
            st = s[("st", r, a, b)]
            out += [p.msg(req, "present")(u[a], u[b]) == (st == REQUEST),
                    p.msg(resp, "present")(u[b], u[a]) == (st == RESPONSE)]
            f = lambda name: s[(name, r, a, b)]  # noqa: E731
            q = lambda field_: p.msg(req, field_)(u[a], u[b])  # noqa: E731
            request = [q("live") == f("live"), q("epoch") == f("mepoch")]
            if req == "vreq":
                request += [q("pre") == f("pre_vote"), q("lle") == f("last_epoch"), q("leo") == f("last_offset")]
            elif req == "freq":
                request += [q("observer") == f("fobs"), q("fo") == f("fetch_offset"), q("lfe") == f("lfe")]
            out.append(z3.Implies(st == REQUEST, z3.And(request)))
            if resp is None:
                continue
            w = lambda field_: p.msg(resp, field_)(u[b], u[a])  # noqa: E731
            leader = f("mleader")
            response = [w("epoch") == f("mepoch"), w("error") == f("merror"), w("has_leader") == (leader != NO_ID),
                        z3.Implies(leader != NO_ID, w("leader") == node(leader))]
            if resp == "vresp":
                response.append(w("granted") == f("granted"))
            elif resp == "fresp":
                div = f("div_epoch") >= 0
                response.append(w("div") == div)
                # the records are the response's ghost log from rstart to rlen
                start, n_rec = w("rstart"), f("rec_len")
                records = [w("rlen") == start + n_rec] + [
                    z3.Implies(k < n_rec, p.msg("fresp", "rlog")(u[b], u[a], start + k) == s[("rec_ep", r, a, b, k)])
                    for k in range(L)]
                response.append(z3.Implies(z3.And(z3.Not(div), f("merror") == 0), z3.And(records)))
            out.append(z3.Implies(st == RESPONSE, z3.And(response)))
    # the commit history: the entry first committed at each offset and its commit epoch; no other
    # entry at an offset where none is, nor at another offset where no conflict is flagged
    kk, xx = z3.Int("k"), z3.Int("x")
    conflict, only = s[("cmt_conflict",)], []
    for k in range(L):
        ep = s[("cmt_ep", k)]
        out.append(z3.Implies(ep != NO_ID, z3.And(p.committed(k, ep), p.cce(k, ep) == s[("cmt_at", k)])))
        only.append(z3.And(kk == k, ep != NO_ID, z3.Or(xx == ep, conflict)))
    out.append(z3.ForAll([kk, xx], z3.Implies(p.committed(kk, xx), z3.Or(only))))
    return out


def ground(t: Any, values: dict[Any, list[Any]]) -> Any:
    """t with every quantifier over a finite sort (values: sort -> its elements) written out as
    the conjunction (disjunction) of its instances: over N nodes, Z3 answers the inclusion
    queries in seconds where the quantified invariant left it without an answer."""
    memo: dict[int, Any] = {}

    def walk(t: Any) -> Any:
        key = t.get_id()
        if key in memo:
            return memo[key]
        if z3.is_quantifier(t):
            sorts = [t.var_sort(k) for k in range(t.num_vars())]
            fin = [k for k, srt in enumerate(sorts) if srt in values]
            keep = [z3.FreshConst(sorts[k], t.var_name(k)) for k in range(len(sorts)) if k not in fin]
            choices = [values[sorts[k]] if k in fin else [None] for k in range(len(sorts))]
            parts = []
            for combo in itertools.product(*choices):
                kept = iter(keep)
                args = [x if x is not None else next(kept) for x in combo]
                parts.append(walk(z3.substitute_vars(t.body(), *reversed(args))))
            body = z3.And(parts) if t.is_forall() else z3.Or(parts)
            out = body if not keep else (z3.ForAll(keep, body) if t.is_forall() else z3.Exists(keep, body))
        elif z3.is_app(t) and t.num_args() and z3.is_bool(t) and t.decl().kind() in _CONNECTIVES:
            out = t.decl()(*[walk(a) for a in t.children()])
        elif z3.is_app(t) and t.decl().kind() == z3.Z3_OP_ITE:
            out = z3.If(walk(t.arg(0)), walk(t.arg(1)), walk(t.arg(2)))
        else:
            out = t
        memo[key] = out
        return out

    return walk(t)


_CONNECTIVES = (z3.Z3_OP_AND, z3.Z3_OP_OR, z3.Z3_OP_NOT, z3.Z3_OP_IMPLIES, z3.Z3_OP_EQ, z3.Z3_OP_XOR)


class WorldStep(K.Step):
    """kraft_param.Step whose choice functions over Node are, over the nodes u, one Boolean
    constant per node (a function's value everywhere, so that `ForAll` may range over it)."""

    def __init__(self, name: str, pre: K.State, u: list[Any]) -> None:
        super().__init__(name, pre)
        self.u = u
        self.consts: list[Any] = []

    def const(self, label: str, sort: Any = K.B) -> Any:
        c = super().const(label, sort)
        self.consts.append(c)
        return c

    def func(self, label: str, *sorts: Any) -> Any:
        assert sorts == (K.Node, K.B), sorts
        bits = [self.const(f"{label}_{k}") for k in range(len(self.u))]
        return lambda y: node_of_value(self.u, y, bits)


def node_of_value(u: list[Any], y: Any, bits: list[Any]) -> Any:
    out = bits[-1]
    for k in range(len(u) - 2, -1, -1):
        out = z3.If(y == u[k], bits[k], out)
    return out


@dataclass
class Inclusion:
    action: Any
    verdict: str  # "included", "not included", "unknown", "not derived"
    seconds: float
    derive_seconds: float
    paths: int = 0
    detail: str = ""


@dataclass
class Report:
    n: int
    results: list[Inclusion] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        bad = [r for r in self.results if r.verdict != "included"]
        return "included" if not bad else bad[0].verdict


def check(d: D.Derived, layout: Layout, pre: Sym, c: K.PCtx, inv: Callable[[K.State], list[Any]],
          timeout_ms: int) -> tuple[str, str, float]:
    """Is every step of the derived action instance `d` a step of the every-size encoding?"""
    t0 = time.perf_counter()
    u, qs, facts = world(layout.n)
    values = {K.Node: u, K.Quorum: qs}
    g = lambda f: ground(f, values)  # noqa: E731
    p, _ = K.fresh("P_")
    name, ids = _name(d.action)
    s = z3.Solver()
    s.set("timeout", timeout_ms)
    s.add(facts, g(K.quorum_axiom()), D.domain(layout, pre), well_typed(layout, pre), d.step.guard, z3.Not(d.crash),
          *abstraction(layout, pre, p, u), *(g(f) for f in inv(p)))
    post = d.step.post
    if name in K.UNCHANGED:
        s.add(z3.Not(z3.And(abstraction(layout, post, p, u))))
    else:
        arity, fn = next((a, f) for nm, a, f in K.ACTIONS if nm == name)
        st = WorldStep(name.replace("(", "_").replace(")", ""), p, u)
        ppost = fn(p, c, st, *(u[k] for k in ids))
        holds = g(z3.And(*st.guard, well_typed(layout, post), *abstraction(layout, post, ppost, u)))
        s.add(z3.ForAll(st.consts, z3.Not(holds)) if st.consts else z3.Not(holds))
    r = s.check()
    seconds = time.perf_counter() - t0
    if r == z3.unsat:
        return "included", "", seconds
    if r == z3.sat:
        return "not included", _show(s.model(), layout, pre), seconds
    return "unknown", s.reason_unknown(), seconds


def _show(m: z3.ModelRef, layout: Layout, pre: Sym) -> str:
    out = []
    for k in pre.keys():
        if k[0] in ("role", "epoch", "leo", "lep", "leader", "voted", "st", "live", "mepoch", "last_epoch",
                    "last_offset", "granted", "votes"):
            v = m.eval(pre[k], model_completion=False)
            if not z3.eq(v, pre[k]):
                out.append(f"{'_'.join(map(str, k))}={v}")
    return " ".join(out[:40])


def includes(mctx: Any, layout: Layout, c: K.PCtx, actions: Sequence[Any], inv: Callable[[K.State], list[Any]],
             timeout_ms: int = 120_000, progress: Callable[[Inclusion], None] | None = None,
             step: Any = None) -> Report:
    """Derive each action instance at layout.n voters and check its steps are the encoding's."""
    pre = fresh(layout, "i_")
    dom = D.domain(layout, pre)
    rep = Report(layout.n)
    for a in actions:
        d = D.derive(mctx, layout, pre, a, dom, step)
        if d.step is None:
            res = Inclusion(a, "not derived", 0.0, d.seconds, d.paths, d.why)
        else:
            verdict, detail, seconds = check(d, layout, pre, c, inv, timeout_ms)
            res = Inclusion(a, verdict, seconds, d.seconds, d.paths, detail)
        rep.results.append(res)
        if progress:
            progress(res)
    return rep
