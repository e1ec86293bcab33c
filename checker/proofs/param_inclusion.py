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
choice functions (the subsets of a poll's requests) are, over the N nodes, N Boolean choices each;
quantifiers over nodes and quorums are written out over the N nodes (`ground`). Inv(P) is
assumed only where needed (`tiers`: nothing, election safety's lemmas, those and six on logs and
fetches, the proof's conjuncts): a
state of the fixed-size domain no run reaches (two leaders of one epoch) may take a step the
encoding does not, and every encoding state a run reaches satisfies the invariant the proof
proves. The encoding's one ghost a guard reads (`Step.require_ghost`: a diverging Fetch
response's truncation keeps the `agree` entries the leader's answer fixed) has no counterpart in
the model; it is related to the model by `agreement`, a bound on `agree` that every action
instance is shown to keep and that makes the guard hold (`agreement_kept`). What the encoding
keeps of a state (`abstraction`) covers every field of kraft_param.SIGNATURE but the ghosts (a
test asserts it), so an effect of the model the encoding does not make shows as a difference."""
from __future__ import annotations

import dataclasses
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
from model.kraft.rules import CANDIDATE, GRANTED, LEADER, NO_ID, PROSPECTIVE, REJECTED, UNRECORDED
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
        # the voter set is every node: an election records each voter as unrecorded, granted or
        # rejected, never NOT_VOTER (which would shrink its majority: at 4 voters, with one marked
        # NOT_VOTER, a majority of 2 of the 3 it counts, where 4 voters need 3)
        election = z3.Or(s[("role", i)] == PROSPECTIVE, s[("role", i)] == CANDIDATE)
        out += [z3.Implies(election, z3.And(s[("votes", i, j)] >= UNRECORDED, s[("votes", i, j)] <= REJECTED))
                for j in range(n)]
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
                p.lle(x) == D.last_epoch(layout, s, i),
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
    queries in seconds where the quantified invariant left it without an answer. Iterative: a
    derived term nests If-terms thousands deep."""
    memo: dict[int, Any] = {}
    stack = [(t, False)]
    while stack:
        x, expanded = stack.pop()
        key = x.get_id()
        if key in memo:
            continue
        if z3.is_quantifier(x):
            memo[key] = _instances(x, values)
        elif z3.is_app(x) and x.num_args():
            kids = x.children()
            if not expanded:
                stack.append((x, True))
                stack.extend((k, False) for k in kids if k.get_id() not in memo)
                continue
            new = [memo[k.get_id()] for k in kids]
            memo[key] = x if all(a.eq(b) for a, b in zip(kids, new)) else x.decl()(*new)
        else:
            memo[key] = x
    return memo[t.get_id()]


def _instances(q: Any, values: dict[Any, list[Any]]) -> Any:
    sorts = [q.var_sort(k) for k in range(q.num_vars())]
    fin = {k for k, srt in enumerate(sorts) if srt in values}
    keep = [z3.FreshConst(sorts[k], q.var_name(k)) for k in range(len(sorts)) if k not in fin]
    parts = []
    for combo in itertools.product(*[values[sorts[k]] if k in fin else [None] for k in range(len(sorts))]):
        kept = iter(keep)
        args = [x if x is not None else next(kept) for x in combo]
        parts.append(ground(z3.substitute_vars(q.body(), *reversed(args)), values))
    body = z3.And(parts) if q.is_forall() else z3.Or(parts)
    return body if not keep else (z3.ForAll(keep, body) if q.is_forall() else z3.Exists(keep, body))


class WorldStep(K.Step):
    """kraft_param.Step whose choice functions over Node are, over the nodes u, one Boolean
    constant per node (a function's value everywhere, so that `ForAll` may range over it), and
    whose choices named in `witness` are the terms given there (a ghost's value fixed by the
    model's step, `WITNESSES`)."""

    def __init__(self, name: str, pre: K.State, u: list[Any], witness: dict[str, Any] | None = None) -> None:
        super().__init__(name, pre)
        self.u = u
        self.consts: list[Any] = []
        self.ghost_guards: list[Any] = []
        self.witness = witness or {}

    def require_ghost(self, c: Any) -> None:
        self.ghost_guards.append(c)

    def const(self, label: str, sort: Any = K.B) -> Any:
        if label in self.witness:
            return self.witness[label]
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


# --- the ghost `agree`, related to the model --------------------------------------------------------
#
# HandleFetchRequest chooses `agree`, a bound under which the follower's and the leader's logs agree;
# HandleFetchResponse's truncation keeps at least that many entries (its ghost guard). The model
# truncates to rules.truncation_offset: at most the diverging end offset, and at most the entries of
# the follower's log whose epoch is at most the diverging epoch. While such a response is in flight,
# `agreement` bounds `agree` by both, so the guard holds of the model's truncation. Every action
# instance keeps the relation (`agreement_kept`), the initial states have it (no message is in
# flight), and HandleFetchRequest sets `agree` to the bound (`WITNESSES`).

# the conjuncts the relation's queries assume beside election safety's lemmas (each a conjunct of
# the proof of every invariant; without log_sorted Z3 finds an unsorted log breaking the guard)
AGREE_LEMMAS = ("log_matching", "log_sorted", "log_bounds", "fetch_requests", "fetch_responses", "one_fetch")


def diverging(s: Sym, f: int, l: int) -> Any:
    """A Fetch response from l to f is in flight that truncates f's log when handled: no error, a
    diverging epoch, the epoch f is in."""
    return z3.And(s[("st", FETCH_REQUEST, f, l)] == RESPONSE, s[("merror", FETCH_REQUEST, f, l)] == 0,
                  s[("div_epoch", FETCH_REQUEST, f, l)] >= 0, s[("mepoch", FETCH_REQUEST, f, l)] == s[("epoch", f)])


def agree_bound(layout: Layout, s: Sym, f: int, l: int) -> Any:
    """What f keeps of its log on that response (rules.truncation_offset): at most the diverging end
    offset and at most its entries of an epoch up to the diverging one."""
    div_epoch, div_offset = s[("div_epoch", FETCH_REQUEST, f, l)], s[("div_offset", FETCH_REQUEST, f, l)]
    held = z3.Sum([z3.If(z3.And(k < s[("leo", f)], s[("lep", f, k)] <= div_epoch), 1, 0) for k in range(layout.L)])
    return z3.If(held < div_offset, held, div_offset)


def agreement(layout: Layout, s: Sym, p: K.State, u: list[Any]) -> list[Any]:
    """The ghost `agree` of every diverging response in flight is at most what its follower keeps."""
    return [z3.Implies(diverging(s, f, l), p.msg("fresp", "agree")(u[l], u[f]) <= agree_bound(layout, s, f, l))
            for f, l in layout.pairs()]


def _agree_witness(layout: Layout, pre: Sym, post: Sym, ids: tuple[int, ...]) -> dict[str, Any]:
    f, l = ids
    return {"agree": z3.If(diverging(post, f, l), agree_bound(layout, post, f, l), pre[("leo", f)])}


# the encoding's choices of a ghost, per action: the model's step fixes them (the bound above where
# the answer diverges; elsewhere the follower's whole log, above every entry the two logs share)
WITNESSES: dict[str, Callable[[Layout, Sym, Sym, tuple[int, ...]], dict[str, Any]]] = {
    "HandleFetchRequest": _agree_witness}


SIZES = (3, 4)  # an odd and an even number of voters: majorities of 2 of 3 and 3 of 4


@dataclass
class Inclusion:
    action: Any
    verdict: str  # "included", "not included", "unknown", "not derived"
    seconds: float  # Z3's
    derive_seconds: float
    paths: int = 0
    detail: str = ""
    assumed: str = ""  # "": no invariant needed; else the name of the tier of lemmas assumed
    ghost_guards: int = 0  # the encoding's guards on its own ghosts in this instance
    agree: str = ""  # "kept": `agreement` shown kept (and the ghost guards held); "": not asked

    def line(self) -> str:
        """One progress line: the instance, its verdict and what it cost."""
        return (f"{self.action!r}: {self.verdict} ({self.paths} paths, {self.derive_seconds:.1f} s deriving, "
                f"{self.seconds:.1f} s in Z3)" + (f" {self.detail}" if self.detail else ""))


@dataclass
class SizeReport:
    n: int
    results: list[Inclusion] = field(default_factory=list)
    unit: str = "voters"  # what n counts: "voters" (kraft) or "brokers" (replication)

    @property
    def failure(self) -> Inclusion | None:
        return next((r for r in self.results if r.verdict != "included"), None)

    def as_json(self) -> dict[str, Any]:
        """The figures a record keeps: `assumed` names the tiers assumed (AGREE, where the ghost's
        relation was asked); `ghost_guards`, the actions with guards on the encoding's ghosts that
        no relation ties to the model."""
        return {self.unit: self.n, "instances": len(self.results),
                "derive_seconds": round(sum(r.derive_seconds for r in self.results), 1),
                "z3_seconds": round(sum(r.seconds for r in self.results), 1),
                "assumed": sorted({r.assumed for r in self.results if r.assumed}
                                  | ({AGREE} if any(r.agree for r in self.results) else set())),
                "ghost_guards": sorted({_name(r.action)[0] for r in self.results if r.ghost_guards and not r.agree})}


AGREE = "agree"  # the tier `agreement_kept` assumes


def _query(d: D.Derived, layout: Layout, pre: Sym, c: K.PCtx, names: list[str], extra: list[Any],
           p: K.State, u: list[Any], values: dict[Any, list[Any]]) -> list[Any]:
    """The premises every query shares (a pre-state of the domain, well typed, where the model takes
    the step without raising; an every-size state abstracting it that satisfies `names`), and `extra`."""
    from checker.proofs.kraft_param_inv import formula

    g = lambda f: ground(f, values)  # noqa: E731
    return [g(K.quorum_axiom()), D.domain(layout, pre), well_typed(layout, pre), d.step.guard, z3.Not(d.crash),
            *abstraction(layout, pre, p, u), *(g(formula(x)(c, p)) for x in names), *extra]


def _encoding_step(d: D.Derived, layout: Layout, pre: Sym, c: K.PCtx, p: K.State, u: list[Any],
                   label: str) -> tuple[K.State | None, WorldStep | None]:
    """The encoding's step of the same action instance from p (None, None: an action the encoding
    takes as no change, kraft_param.UNCHANGED), its choices named by `label`."""
    name, ids = _name(d.action)
    if name in K.UNCHANGED:
        return None, None
    fn = next(f for nm, _, f in K.ACTIONS if nm == name)
    witness = WITNESSES[name](layout, pre, d.step.post, ids) if name in WITNESSES else {}
    st = WorldStep(label + name.replace("(", "_").replace(")", ""), p, u, witness)
    return fn(p, c, st, *(u[k] for k in ids)), st


def check(d: D.Derived, layout: Layout, pre: Sym, c: K.PCtx, names: list[str],
          timeout_ms: int) -> tuple[str, str, float, int]:
    """Is every step of the derived action instance `d` a step of the every-size encoding (but
    for its guards on ghosts, `require_ghost`, which `agreement_kept` asks of)? (verdict, a
    counterexample's pre-state, seconds, the number of ghost guards), assuming the conjuncts
    `names` of the every-size state."""
    t0 = time.perf_counter()
    u, qs, facts = world(layout.n)
    values = {K.Node: u, K.Quorum: qs}
    p, _ = K.fresh("P_")
    query = [facts, *_query(d, layout, pre, c, names, [], p, u, values)]
    post = d.step.post
    ppost, st = _encoding_step(d, layout, pre, c, p, u, "")
    if st is None:
        query.append(z3.Not(z3.And(well_typed(layout, post), *abstraction(layout, post, p, u))))
    else:
        holds = z3.And(ground(z3.And(st.guard), values), well_typed(layout, post), *abstraction(layout, post, ppost, u))
        query.append(z3.ForAll(st.consts, z3.Not(holds)) if st.consts else z3.Not(holds))
    verdict, detail = _solve(query, layout, pre, _name(d.action)[1], timeout_ms)
    return verdict, detail, time.perf_counter() - t0, 0 if st is None else len(st.ghost_guards)


def agreement_kept(d: D.Derived, layout: Layout, pre: Sym, c: K.PCtx, names: list[str],
                   timeout_ms: int) -> tuple[str, str, float]:
    """Does every step of the encoding that matches the model's (as `check` asks) keep `agreement`
    and meet the encoding's guards on its ghosts, from a pre-state that has the relation? Z3 is
    asked for a matching step that breaks either (no quantifier: the choices are free). With
    `check`'s step, this gives one that meets every guard and keeps the relation.
    (verdict: "kept", "not kept" or "unknown"; a counterexample's pre-state; seconds)."""
    t0 = time.perf_counter()
    u, qs, facts = world(layout.n)
    values = {K.Node: u, K.Quorum: qs}
    p, _ = K.fresh("A_")
    query = [facts, *_query(d, layout, pre, c, names, agreement(layout, pre, p, u), p, u, values)]
    post = d.step.post
    ppost, st = _encoding_step(d, layout, pre, c, p, u, "a_")
    if st is None:
        query += [*abstraction(layout, post, p, u), z3.Not(z3.And(agreement(layout, post, p, u)))]
    else:
        ghosts = [ground(x, values) for x in st.ghost_guards]
        query += [ground(z3.And(st.guard), values), well_typed(layout, post), *abstraction(layout, post, ppost, u),
                  z3.Not(z3.And(ghosts + agreement(layout, post, ppost, u)))]
    verdict, detail = _solve(query, layout, pre, _name(d.action)[1], timeout_ms)
    return {"included": "kept", "not included": "not kept"}.get(verdict, verdict), detail, time.perf_counter() - t0


def _solve(query: list[Any], layout: Layout, pre: Sym, ids: tuple[int, ...], timeout_ms: int) -> tuple[str, str]:
    """("included" when the query has no model, "not included" with a model's pre-state, "unknown"
    with Z3's reason). A query Z3 does not answer in a quarter of `timeout_ms` is asked again split
    into cases (`_cases`; HandleFetchResponse's: no answer in 2 minutes whole, about 10 s a case
    split)."""
    def solver(ms: int, *extra: Any) -> z3.Solver:
        # a fresh solver per case: after an unknown, an incremental one left cases unanswered that
        # a fresh one answers in seconds
        out = z3.Solver()
        out.set("timeout", ms)
        out.add(*query, *extra)
        return out

    s = solver(max(1, timeout_ms // 4))
    r = s.check()
    if r == z3.unknown:  # split into cases, each with the full timeout
        r = z3.unsat
        for case in _cases(layout, pre, ids):
            s = solver(timeout_ms, case)
            answer = s.check()
            if answer == z3.sat:
                return "not included", show(s.model(), pre)
            if answer == z3.unknown:
                r = z3.unknown
                break
    if r == z3.unsat:
        return "included", ""
    if r == z3.sat:
        return "not included", show(s.model(), pre)
    return "unknown", s.reason_unknown()


def _cases(layout: Layout, pre: Sym, ids: tuple[int, ...]) -> Any:
    """The cases a query is split into: the role of the node the action changes (the last it
    names) and, where it names two, whether a Fetch response from the first to it carries no
    error and whether it diverges (what HandleFetchResponse's branches turn on)."""
    me = ids[-1]
    flags = []
    if len(ids) == 2 and ids[0] != me:
        flags = [pre[("merror", FETCH_REQUEST, me, ids[0])] == 0, pre[("div_epoch", FETCH_REQUEST, me, ids[0])] >= 0]
    for role in range(6):
        for bits in itertools.product((True, False), repeat=len(flags)):
            yield z3.And(pre[("role", me)] == role, *(f if b else z3.Not(f) for f, b in zip(flags, bits)))


SHOWN = ("role", "epoch", "leo", "lep", "leader", "voted", "st", "live", "mepoch", "last_epoch", "last_offset",
         "granted", "votes", "merror", "div_epoch", "div_offset")


def show(m: z3.ModelRef, pre: Sym, fields: Sequence[str] = SHOWN) -> str:
    """A counterexample's pre-state: the named fields Z3's model fixes, at most 40."""
    out = []
    for k in pre.keys():
        if k[0] in fields:
            v = m.eval(pre[k], model_completion=False)
            if not z3.eq(v, pre[k]):
                out.append(f"{'_'.join(map(str, k))}={v}")
    return " ".join(out[:40])


TIER_NAMES = {"": "assuming nothing", "election_safety": "assuming election safety's lemmas",
              AGREE: "assuming election safety's lemmas and six on logs and fetches",
              "all": "assuming the proof's conjuncts"}


def tiers(c: K.PCtx, conjuncts: list[str]) -> list[tuple[str, list[str]]]:
    """The invariants an instance's check may assume, tried in turn: none; election safety's
    lemmas; those and AGREE_LEMMAS (what `agreement_kept` assumes); all the proof's conjuncts
    (each only as far as the proof proves them)."""
    from checker.proofs.kraft_param_inv import conjuncts as support

    out: list[tuple[str, list[str]]] = [("", [])]
    election = [x for x in support(c, ["election_safety"]) if x in conjuncts]
    if election:
        out.append(("election_safety", election))
    logs = election + [x for x in AGREE_LEMMAS if x in conjuncts and x not in election]
    if len(logs) > len(election):
        out.append((AGREE, logs))
    if set(conjuncts) - set(logs):
        out.append(("all", list(conjuncts)))
    return out


def check_size(mctx: Any, layout: Layout, c: K.PCtx, actions: Sequence[Any], conjuncts: list[str],
               timeout_ms: int = 120_000, progress: Callable[[Inclusion], None] | None = None,
               step: Any = None, variant: str | None = None) -> SizeReport:
    """Derive each action instance at layout.n voters and check that its steps are the encoding's,
    assuming the fewest of `conjuncts` (`tiers`), and that they keep `agreement`; stops at the
    first instance not included. `variant`: the derivations are read from and kept in the
    derivation cache (never with a plugin's `step`)."""
    from checker.proofs.derivation_cache import Cache

    pre = fresh(layout, "i_")
    dom = D.domain(layout, pre)
    cache = Cache("kraft", variant, mctx.p, dom) if variant is not None and step is None else None
    agree_names = dict(tiers(c, conjuncts)).get(AGREE)
    rep = SizeReport(layout.n)
    for a in actions:
        make = (lambda a: lambda: D.derive(mctx, layout, pre, a, dom, step))(a)
        d = make() if cache is None else cache.derive(a, make, pre)
        if d.step is None:
            res = Inclusion(a, "not derived", 0.0, d.seconds, d.paths, d.why)
        else:
            spent, tried = 0.0, []
            for tier, names in tiers(c, conjuncts):
                verdict, detail, seconds, ghosts = check(d, layout, pre, c, names, timeout_ms)
                spent += seconds
                if verdict == "included":
                    break
                tried.append(f"{TIER_NAMES[tier]}: {verdict}" + (f", {detail}" if detail else ""))
            kept = ""
            if verdict == "included" and agree_names is not None:
                kept, detail, seconds = agreement_kept(d, layout, pre, c, agree_names, timeout_ms)
                spent += seconds
                if kept != "kept":
                    verdict = "not included" if kept == "not kept" else "unknown"
                    tried = [f"the ghost agree's relation to the model ({TIER_NAMES[AGREE]}): {kept}"
                             + (f", {detail}" if detail else "")]
                    kept = ""
            res = Inclusion(a, verdict, spent, d.seconds, d.paths, "; ".join(reversed(tried)) if verdict != "included"
                            else "", tier, ghosts, kept)
        rep.results.append(res)
        if progress:
            progress(res)
        if res.verdict != "included":
            break
    return rep


# --- the check `kcheck prove --size any` runs (or reads from the record) -------------------------

INCLUSION_FILES = ("term.py", "kraft_state.py", "kraft_ctx.py", "symbolic.py", "derive.py", "kraft_param.py",
                   "kraft_param_inv.py", "param_conformance.py", "param_inclusion.py")


def sources_digest() -> str:
    """SHA-256 of what an inclusion result depends on: the kraft model's sources and the files
    that derive its relation, encode every size, and compare them."""
    from pathlib import Path

    from checker.provenance import digest, model_digest

    folder = Path(__file__).parent
    return model_digest("kraft") + ":" + digest(folder, files=[folder / f for f in INCLUSION_FILES])[0]


def bounds(config: dict[str, Any]) -> dict[str, Any]:
    """The configuration's values the derived relation depends on, but the number of voters."""
    from model.kraft.params import Params

    p = Params.from_config({**config, "voters": 3})
    return {k: v for k, v in dataclasses.asdict(p).items() if k not in ("n", "symmetry")}


def run_sizes(config: dict[str, Any], variant: str, c: K.PCtx, conjuncts: list[str], sizes: Sequence[int] = SIZES,
              progress: Callable[[Inclusion], None] | None = None, timeout_ms: int = 120_000) -> list[SizeReport]:
    """check_size at each number of voters, one action instance per orbit of voter renamings
    (induction.representatives), with the configuration's bounds; stops at the first failure."""
    from checker.proofs.induction import representatives
    from checker.proofs.kraft_ctx import Ctx
    from model.kraft.params import Params
    from model.kraft.quorum import Context
    from model.kraft.variants import Protocol

    out = []
    for n in sizes:
        p = Params.from_config({**config, "voters": n})
        ctx = Ctx.of(p, variant)
        rep = check_size(Context(p, Protocol.of(variant)), ctx.layout, c, representatives(ctx), conjuncts,
                         timeout_ms, progress, variant=variant)
        out.append(rep)
        if rep.failure is not None:
            break
    return out


def record_entry(config: dict[str, Any], variant: str, c: K.PCtx, reports: list[SizeReport],
                 conjuncts: list[str]) -> dict[str, Any]:
    """What the record keeps of an inclusion: the sources, variant and bounds it holds for, and the
    conjuncts it assumed (a proof whose conjuncts include them may read it)."""
    named = dict(tiers(c, conjuncts))
    assumed = sorted({x for rep in reports for t in rep.as_json()["assumed"] for x in named[t]})
    return {"sources": sources_digest(), "variant": variant, "stale_requests": c.stale_requests,
            "bounds": bounds(config), "sizes": [rep.as_json() for rep in reports], "assumed": assumed}


def recorded(config: dict[str, Any], variant: str, c: K.PCtx, conjuncts: list[str]) -> dict[str, Any] | None:
    """The recorded inclusion for these sources, variant, bounds and a subset of the proof's
    conjuncts, if any (checker/proofs/checked_against.json)."""
    import json

    from checker.proofs.checked_against import RECORD

    try:
        entries = json.loads(RECORD.read_text()).get("inclusion", {}).get("kraft", [])
    except (OSError, ValueError, AttributeError):
        return None
    now = sources_digest()
    for e in entries if isinstance(entries, list) else []:
        if (e.get("sources") == now and e.get("variant") == variant and e.get("stale_requests") == c.stale_requests
                and e.get("bounds") == bounds(config) and set(e.get("assumed", [])) <= set(conjuncts)
                and [s["voters"] for s in e.get("sizes", [])] in (list(SIZES), list(SIZES[:1]))):
            return e
    return None


def describe(entry: dict[str, Any], how: str) -> str:
    sizes = entry["sizes"]
    n = " and ".join(str(s["voters"]) for s in sizes)
    count = sum(s["instances"] for s in sizes)
    assumed = f", assuming {len(entry['assumed'])} of the proof's conjuncts where needed" if entry["assumed"] else ""
    ghosts = sorted({g for s in sizes for g in s["ghost_guards"]})
    but = (f"; not related to the model: the encoding's guards on its own ghosts in {', '.join(ghosts)}, which rest on "
           "the sample check" if ghosts else "")
    if not ghosts and any(AGREE in s["assumed"] for s in sizes):
        but = ("; the encoding's ghost `agree`, which a truncation's guard reads, is bounded by the model's state by a "
               "relation every step keeps")
    return (f"every step of the model at {n} voters is one of the every-size encoding's (the relation derived from "
            f"the model's Python at this configuration's bounds, {count} action instances, one per orbit of voter "
            f"renamings; Z3 over every state of the domain{assumed}){but}; {how}")


def init_included(definition: Any, config: dict[str, Any], variant: str, n: int) -> str | None:
    """None when every initial state of the model at n voters is abstracted by an initial state of
    the encoding (kraft_param.init, written by hand) related to it by `agreement`, and well typed;
    else what differs."""
    from checker.proofs import kraft_state
    from model.kraft.params import Params

    layout = Layout.of(Params.from_config({**config, "voters": n}))
    model = definition.build({**config, "voters": n, "symmetry": False}, variant)
    u, qs, facts = world(n)
    for s0 in model.init_states():
        sym = fresh(layout, "init_")
        p, _ = K.fresh("Pinit_")
        solver = z3.Solver()
        solver.add(facts, kraft_state.matches(layout, sym, s0), well_typed(layout, sym),
                   *abstraction(layout, sym, p, u), *agreement(layout, sym, p, u),
                   ground(K.init(p), {K.Node: u, K.Quorum: qs}))
        if solver.check() != z3.sat:
            return f"an initial state of the model at {n} voters is not one of the encoding's (kraft_param.init)"
    return None
