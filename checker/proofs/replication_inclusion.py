"""Is every step of the replication model a step of the every-size encoding (replication_param)?
Asked of Z3 over every state of a fixed-size domain, not of a sample: at N brokers each action
instance is derived from the model's Python (derive_replication.py) and Z3 looks for a
counterexample to

    Inv(P) & alpha(P, s) & wt(s) & guard_d(s) & ~crash_d(s)  =>  exists c. guard_p(P, c) & wt(s') & alpha(post_p(P, c), s')

where `s` ranges over replication_state's layout and `s'` is the derived successor, `P` over
every-size controller states on a universe of exactly N brokers (and, for min ISR >= 2, its min
sets: every subset of min ISR of them), `c` over the encoding's choices (a request's ISR becomes
N Boolean choices). `alpha` is what replication_param keeps of a state: the registrations'
fencing, and the latest partition record's ISR, ELR, leader and partition epoch, with the metadata
log's first held record; every broker is a replica, no reassignment and no write is pending (the
fixed-size layout has neither: replication_state). `wt` (the latest record's leader names a broker
or none) is assumed of `s` and checked of `s'`. The invariant is assumed only where an instance
needs it (nothing, then the proof's conjuncts). The model's actions that are not controller
events are the encoding's `BrokerStep` (the controller as it was, the log's start risen at most
to its end): the check derives them too, so a broker action that writes the controller is caught.

spec/proofs.md, "The replication encoding against the derived relation".
"""
from __future__ import annotations

import time
from typing import Any, Callable, Sequence

import z3

from checker.proofs import derive_replication as DR
from checker.proofs import replication_param as R
from checker.proofs.derive import Derived
from checker.proofs.param_inclusion import Inclusion, SizeReport, WorldStep, ground, node_of_value, show
from checker.proofs.replication_state import Layout, fresh
from checker.proofs.term import Sym
from model.replication.records import NO_LEADER

SIZES = (3,)  # brokers; 4 is not run: deriving the controller's rules at 4 brokers is some 8 times 3's


def latest(layout: Layout, s: Sym, key: str, *rest: int) -> Any:
    """The latest partition record's field `key` (replication_state's per-partition-epoch arrays)."""
    at = s[("c_latest",)]
    out = s[(key, 0, *rest)]
    for p in range(1, layout.P + 1):
        out = z3.If(at == p, s[(key, p, *rest)], out)
    return out


def well_typed(layout: Layout, s: Sym) -> Any:
    """The latest record's leader is a broker or none (an id alpha can name)."""
    lead = latest(layout, s, "c_leader")
    return z3.And(s[("c_start",)] <= s[("c_latest",)],
                  z3.Or(lead == NO_LEADER, z3.And(0 <= lead, lead < layout.n)))


def abstraction(layout: Layout, s: Sym, p: R.State, u: list[Any]) -> list[Any]:
    """The every-size state p holds what replication_param encodes of the fixed-size state s, at
    the brokers u (broker k is u[k]); the snapshots of pending writes are left free (none pend)."""
    lead = latest(layout, s, "c_leader")
    out = [p.log_start() == s[("c_start",)], p.pe() == s[("c_latest",)], p.nun() == 0,
           p.has_leader() == (lead != NO_LEADER),
           z3.Implies(lead != NO_LEADER, z3.Or([z3.And(lead == k, p.leader() == b) for k, b in enumerate(u)]))]
    for i, b in enumerate(u):
        out += [p.fenced(b) == s[("fenced", i)], p.replica(b), z3.Not(p.removing(b)), z3.Not(p.adding(b)),
                p.isr(b) == latest(layout, s, "c_isr", i), p.elr(b) == latest(layout, s, "c_elr", i)]
    return out


class BrokerWorldStep(WorldStep):
    """param_inclusion.WorldStep over brokers: a choice function over brokers is one Boolean
    constant per broker."""

    def func(self, label: str, *sorts: Any) -> Any:
        assert sorts == (R.Broker, R.B), sorts
        bits = [self.const(f"{label}_{k}") for k in range(len(self.u))]
        return lambda y: node_of_value(self.u, y, bits)


CONTROLLER_EVENTS = ("FenceBroker", "UnfenceBroker", "ControlledShutdown", "Restart")


def encoded(action: Any) -> tuple[str, tuple[int, ...]]:
    """The encoding's step for a derived action instance, and the brokers it names."""
    kind = type(action).__name__
    if kind in CONTROLLER_EVENTS:
        return kind, (action.broker,)
    if kind == "HandleAlterPartitionIn":
        return "HandleAlterPartition", ()
    return "BrokerStep", ()


def check(d: Derived, layout: Layout, pre: Sym, c: R.RCtx, min_isr: int, inv: Callable[[R.State], list[Any]],
          timeout_ms: int) -> tuple[str, str, float]:
    """Is every step of the derived instance `d` a step of the every-size encoding? (verdict, a
    counterexample's pre-state, seconds)."""
    t0 = time.perf_counter()
    u, qs, facts = R.world(layout.n, min_isr)
    values = {R.Broker: u, R.MinSet: qs} if qs else {R.Broker: u}
    g = lambda f: ground(f, values)  # noqa: E731
    p = R.fresh("P_")
    name, ids = encoded(d.action)
    assert d.step is not None
    st = BrokerWorldStep(name.replace("(", "_").replace(")", ""), p, u)
    tr = R.transition(c, p, name, st, tuple(u[k] for k in ids))
    post = d.step.post
    holds = z3.And(g(z3.And(tr.guard)), well_typed(layout, post), *abstraction(layout, post, tr.post, u))
    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    solver.add(facts, *(g(a) for a in R.axioms(c)), DR.domain(layout, pre), well_typed(layout, pre), d.step.guard,
               z3.Not(d.crash), *abstraction(layout, pre, p, u), *(g(f) for f in inv(p)),
               g(z3.ForAll(st.consts, z3.Not(holds))) if st.consts else z3.Not(holds))
    r = solver.check()
    seconds = time.perf_counter() - t0
    if r == z3.unsat:
        return "included", "", seconds
    if r == z3.sat:
        return "not included", show(solver.model(), pre, SHOWN), seconds
    return "unknown", solver.reason_unknown(), seconds


SHOWN = ("fenced", "alive", "c_start", "c_latest", "c_isr", "c_elr", "c_leader", "mk", "ma", "mnis")


def check_size(params: Any, variant: str, actions: Sequence[Any] | None = None, timeout_ms: int = 120_000,
               progress: Callable[[Inclusion], None] | None = None, cached: bool = False) -> SizeReport:
    """Derive each action instance at params.n brokers (every one, or `actions`) and check that
    its steps are the encoding's, assuming first nothing, then the proof's conjuncts; stops at
    the first instance not included. `cached`: the derivations are read from and kept in the
    derivation cache (derivation_cache.py)."""
    from checker.proofs import replication_next as N
    from checker.proofs.derivation_cache import Cache
    from model.replication.context import Context
    from model.replication.variants import Rules

    ctx = N.Ctx.of(params, variant)
    mctx = Context(params, Rules.of(variant))
    c = R.RCtx.of(params, Rules.of(variant))
    layout = ctx.layout
    pre = fresh(layout, "i_")
    dom = DR.domain(layout, pre)
    names = R.conjuncts(c)
    cache = Cache("replication", variant, (params, MAX_PATHS), dom) if cached else None
    rep = SizeReport(layout.n, unit="brokers")
    for a in N.actions(ctx) if actions is None else actions:
        make = (lambda a: lambda: DR.derive(mctx, layout, pre, a, dom, max_paths=MAX_PATHS))(a)
        d = make() if cache is None else cache.derive(a, make, pre)
        if d.step is None:
            res = Inclusion(a, "not derived", 0.0, d.seconds, d.paths, d.why)
        else:
            spent, tried = 0.0, []
            for tier, assumed in (("", []), ("all", names)):
                inv = (lambda assumed: lambda p: [R.formula(x)(c, p) for x in assumed])(assumed)
                verdict, detail, seconds = check(d, layout, pre, c, params.min_isr, inv, timeout_ms)
                spent += seconds
                if verdict == "included":
                    break
                tried.append(f"{'assuming nothing' if not tier else 'assuming the proof conjuncts'}: {verdict}"
                             + (f", {detail}" if detail else ""))
            res = Inclusion(a, verdict, spent, d.seconds, d.paths, "; ".join(reversed(tried)) if verdict != "included"
                            else "", tier)
        rep.results.append(res)
        if progress:
            progress(res)
        if res.verdict != "included":
            break
    return rep


MAX_PATHS = 40_000  # HandleFetch has 17,660 paths at 3 brokers on the domain (no invariant prunes them here)


# --- the record `kcheck prove --model replication --size any` reads ------------------------------

INCLUSION_FILES = ("term.py", "symbolic.py", "derive.py", "derive_replication.py", "replication_state.py",
                   "replication_next.py", "kraft_param.py", "replication_param.py", "param_inclusion.py",
                   "replication_inclusion.py")


def sources_digest() -> str:
    """SHA-256 of what an inclusion result depends on: the replication model's sources and the
    files that derive its relation, encode every size, and compare them."""
    from pathlib import Path

    from checker.provenance import digest, model_digest

    folder = Path(__file__).parent
    return model_digest("replication") + ":" + digest(folder, files=[folder / f for f in INCLUSION_FILES])[0]


def bounds(config: dict[str, Any]) -> dict[str, Any]:
    """The configuration's values the derived relation depends on, but the number of brokers."""
    return {k: v for k, v in sorted(config.items()) if k != "brokers"}


def record_entry(config: dict[str, Any], variant: str, reports: list[SizeReport]) -> dict[str, Any]:
    return {"sources": sources_digest(), "variant": variant, "bounds": bounds(config),
            "sizes": [rep.as_json() for rep in reports]}


def recorded(config: dict[str, Any], variant: str) -> dict[str, Any] | None:
    """The recorded inclusion for these sources, variant and bounds, if any
    (checker/proofs/checked_against.json)."""
    import json

    from checker.proofs.checked_against import RECORD

    try:
        entries = json.loads(RECORD.read_text()).get("inclusion", {}).get("replication", [])
    except (OSError, ValueError, AttributeError):
        return None
    now = sources_digest()
    for e in entries if isinstance(entries, list) else []:
        if (e.get("sources") == now and e.get("variant") == variant and e.get("bounds") == bounds(config)
                and [s["brokers"] for s in e.get("sizes", [])] == list(SIZES)):
            return e
    return None


def describe(entry: dict[str, Any], how: str) -> str:
    sizes = entry["sizes"]
    n = " and ".join(str(s["brokers"]) for s in sizes)
    count = sum(s["instances"] for s in sizes)
    assumed = ", assuming the proof's conjuncts where needed" if any(s["assumed"] for s in sizes) else ""
    return (f"every step of the model at {n} brokers is one of the every-size encoding's (the relation derived from "
            f"the model's Python at this configuration, {count} action instances, every one; Z3 over every state of "
            f"the domain{assumed}); not related: reassignments and controller failovers, which the fixed-size "
            f"layout does not hold; {how}")


def init_included(params: Any) -> str | None:
    """None when the model's initial state at params.n brokers is abstracted by an initial state
    of the encoding (replication_param.init, written by hand); else what differs."""
    from checker.proofs.replication_next import Ctx
    from checker.proofs.replication_state import init_constraint

    layout = Ctx.of(params, "kafka-4.1").layout
    u, qs, facts = R.world(layout.n, params.min_isr)
    values = {R.Broker: u, R.MinSet: qs} if qs else {R.Broker: u}
    sym, p = fresh(layout, "init_"), R.fresh("Pinit_")
    solver = z3.Solver()
    solver.add(facts, init_constraint(layout, sym, params), well_typed(layout, sym), *abstraction(layout, sym, p, u),
               ground(R.init(p), values))
    if solver.check() != z3.sat:
        return f"the model's initial state at {layout.n} brokers is not one of the encoding's (replication_param.init)"
    return None
