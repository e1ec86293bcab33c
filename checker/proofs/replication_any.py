"""`kcheck prove --model replication --size any`: the structural invariants of the partition's
controller state for every number of brokers (and every min ISR >= 2, or min ISR 1), by induction
over the every-size encoding (replication_param), after a check that the encoding covers the
model's steps from a sample of its states.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

import z3

from checker.proofs import replication_param as R
from checker.proofs.induction import CTI, PROVED, UNKNOWN, VACUOUS, Check, Outcome, sat_answer
from checker.proofs.param_induction import ParamCounterexample as Counterexample, _Query, recorder
from checker.proofs.term import conjunction, eq_value
from model.replication.records import NO_LEADER



@dataclass
class Report:
    transitions: int = 0
    solved: int = 0  # of them, the distinct controller steps asked of Z3
    kinds: set[str] = field(default_factory=set)
    failures: list[str] = field(default_factory=list)


def matches(s: R.State, py: Any, u: list[Any]) -> Any:
    """The encoded fields of `s` equal the controller's in the Python state `py`."""
    c = py.controller
    out = [eq_value(s.log_start(), c.log[0].partition_epoch), eq_value(s.nun(), len(c.uncommitted)),
           *_registrations(s, c.brokers, c.partition, u)]
    for k, batch in enumerate(c.uncommitted):
        out += _registrations(R.snapshot(s, z3.IntVal(k)), batch.brokers, batch.partition, u)
    return conjunction(out)


def _registrations(s: R.State, brokers: tuple[Any, ...], reg: Any, u: list[Any]) -> list[Any]:
    out = [eq_value(s.pe(), reg.partition_epoch), eq_value(s.has_leader(), reg.leader != NO_LEADER)]
    if reg.leader != NO_LEADER:
        out.append(eq_value(s.leader(), u[reg.leader]))
    for b, r in enumerate(brokers):
        out += [eq_value(s.fenced(u[b]), r.fenced), eq_value(s.replica(u[b]), b in reg.replicas),
                eq_value(s.isr(u[b]), b in reg.isr), eq_value(s.elr(u[b]), b in reg.elr),
                eq_value(s.removing(u[b]), b in reg.removing), eq_value(s.adding(u[b]), b in reg.adding)]
    return out


def unencoded(py: Any) -> str:
    """What of the Python state's controller the encoding cannot represent; "" when nothing."""
    c = py.controller
    if any(r.partition_epoch != c.log[0].partition_epoch + k for k, r in enumerate(c.log)):
        return "a metadata log with a gap in its partition epochs"
    if any(r.in_controlled_shutdown for r in c.brokers):
        return "a registration in controlled shutdown"
    return ""


def _projection(py: Any) -> tuple[Any, ...]:
    """The controller's fields the encoding holds, but the metadata log's first partition epoch."""
    c = py.controller

    def fields(brokers: tuple[Any, ...], reg: Any) -> tuple[Any, ...]:
        return (tuple(r.fenced for r in brokers), frozenset(reg.replicas), frozenset(reg.isr), frozenset(reg.elr),
                frozenset(reg.removing), frozenset(reg.adding), reg.leader, reg.partition_epoch)

    return (fields(c.brokers, c.partition), *(fields(b.brokers, b.partition) for b in c.uncommitted))


def _unchanged(s: Any, t: Any) -> bool:
    """R.other's relation: the encoded fields as they were, the log's start risen at most to its end."""
    start, after = s.controller.log[0].partition_epoch, t.controller.log[0].partition_epoch
    return _projection(s) == _projection(t) and start <= after <= t.controller.partition.partition_epoch


def _name(a: Any) -> tuple[str, tuple[int, ...]]:
    kind = type(a).__name__
    if kind == "ElectLeaders":
        return f"ElectLeaders({a.election})", ()
    if kind in R.BROKER_STEPS:
        return "BrokerStep", ()
    if kind in ("FenceBroker", "UnfenceBroker", "ControlledShutdown", "Restart"):
        return kind, (a.broker,)
    return kind, ()


def check_transitions(model: Any, states: list[Any], c: R.RCtx) -> Report:
    """Each (s, a, t) the model takes from the states is a step of the encoding."""
    rep = Report()
    pre = R.fresh("p_").memoized()  # the same few states are matched again and again: terms made once
    done: set[Any] = set()  # the controller steps checked: most transitions repeat one (the data plane differs)
    worlds: dict[int, tuple[list[Any], list[Any], Any]] = {}
    steps: dict[str, R.Transition] = {}
    names = {n for n, _, _, _ in R.ACTIONS}
    m = model.params.min_isr
    for s in states:
        n = len(s.brokers)
        if n not in worlds:
            worlds[n] = R.world(n, m)
        u, _, facts = worlds[n]
        for a in model.actions(s):
            t = model.next_state(s, a)
            if t is None:
                continue
            rep.transitions += 1
            name, ids = _name(a)
            rep.kinds.add(name)
            why = unencoded(s) or unencoded(t)
            if why or name not in names:
                rep.failures.append(f"{a!r} reaches {why or 'an action the encoding does not have'}")
                continue
            if name == "BrokerStep":  # the step's relation, evaluated on the two states (most of a sample)
                if not _unchanged(s, t):
                    rep.failures.append(f"{a!r} from {s.controller!r} changes the controller's encoded state")
                continue
            key = (name, ids, _projection(s), s.controller.log[0].partition_epoch, _projection(t),
                   t.controller.log[0].partition_epoch)
            if key in done:
                continue
            done.add(key)
            rep.solved += 1
            if name not in steps:
                built = R.transition(c, pre, name)
                steps[name] = R.Transition(built.name, built.args, built.guard, built.post.memoized())
            tr = steps[name]
            solver = z3.Solver()
            solver.set("timeout", 20_000)
            binds = [x == u[k] for x, k in zip(tr.args, ids)]
            solver.add(facts, *binds, matches(pre, s, u), *tr.guard, matches(tr.post, t, u))
            ok = solver.check()  # asserted, not assumed: Z3 checks assumptions more slowly
            if ok != z3.sat:
                rep.failures.append(f"{a!r} from {s.controller!r}: {ok}")
    return rep


def prove(c: R.RCtx, timeout_s: float = 60.0, progress: Callable[[Check], None] | None = None) -> Outcome:
    """Init => C, Init & Inv satisfiable, each action enabled in some Inv state, Inv & step => C'."""
    names = R.conjuncts(c)
    out = Outcome(PROVED, names)
    ms = max(1, int(timeout_s * 1000))
    pre = R.fresh("s_")
    inv = {x: R.formula(x)(c, pre) for x in names}
    ax = R.axioms(c)
    record = recorder(out, progress)

    for x in names:
        q, t0 = _Query(ms), time.monotonic()
        r = q.check(*ax, R.init(pre), z3.Not(inv[x]))
        if record(f"Init => {x}", r, t0) == "fails":
            d = decode(q.model(), pre)
            out.result, out.cti = CTI, Counterexample(x, None, d["brokers"], d, d)
            return out
        if r == z3.unknown:
            out.result, out.reason = UNKNOWN, f"Init => {x}: z3 unknown"
            return out
    t0 = time.monotonic()
    r = _Query(ms).check(*ax, R.init(pre), *inv.values())
    if record("Init & Inv satisfiable", r, t0, sat_answer(r)) != "satisfiable":
        out.result, out.reason = VACUOUS, "Init & Inv is unsatisfiable (or unknown): nothing would be proved"
        return out
    unknown: list[str] = []
    for name in R.enabled(c):
        tr = R.transition(c, pre, name)
        label = f"{name}({', '.join(str(a).split('!')[1] for a in tr.args)})" if tr.args else name
        t0 = time.monotonic()
        r = _Query(ms).check(*ax, *inv.values(), *tr.guard)
        enabled = "enabled" if r == z3.sat else "never enabled" if r == z3.unsat else "unknown"
        record(f"{label} enabled in some Inv state", r, t0, enabled)
        if enabled != "enabled":
            (out.never_enabled if enabled == "never enabled" else unknown).append(label)
            continue
        for x in names:
            q, t0 = _Query(ms), time.monotonic()
            r = q.check(*ax, *inv.values(), *tr.guard, z3.Not(R.formula(x)(c, tr.post)))
            if record(f"Inv & {label} => {x}'", r, t0) == "fails":
                # Z3's model does not evaluate the post-state's quantified terms: ask again with the
                # post-state written out as functions of their own, and read those
                post, defs = written_out(tr.post)
                query = [*ax, *inv.values(), *tr.guard, *defs, z3.Not(R.formula(x)(c, post))]
                q = _smallest(query, ms)
                if q is None:
                    out.result, out.reason = UNKNOWN, f"{label} => {x}': a CTI Z3 could not write out"
                    return out
                model = q.model()
                pre_d, post_d = decode(model, pre), decode(model, post)
                args = ", ".join(f"b={_broker(model, a)}" for a in tr.args)
                out.result = CTI
                out.cti = Counterexample(x, f"{name}({args})" if args else name, pre_d["brokers"], pre_d, post_d)
                return out
            if r == z3.unknown:
                unknown.append(f"{label} => {x}'")
    if unknown:
        out.result, out.reason = UNKNOWN, "z3 unknown on " + ", ".join(unknown[:5])
    return out


def _smallest(query: list[Any], ms: int) -> _Query | None:
    """A solved query whose model has as few brokers (and min sets) as Z3 finds, up to six, so a
    CTI reads easily; else one over any size; None if none answers sat."""
    x, q = z3.Const("x", R.Broker), z3.Const("q", R.MinSet)
    for n in range(1, 7):
        u = [z3.Const(f"small_b{k}", R.Broker) for k in range(n)]
        w = [z3.Const(f"small_q{k}", R.MinSet) for k in range(n)]
        bound = [z3.ForAll([x], z3.Or([x == b for b in u])), z3.ForAll([q], z3.Or([q == m for m in w]))]
        solved = _Query(min(ms, 5_000))
        if solved.check(*query, *bound) == z3.sat:
            return solved
    solved = _Query(ms)
    return solved if solved.check(*query) == z3.sat else None


def written_out(s: R.State) -> tuple[R.State, list[Any]]:
    """Fresh functions for a state's fields, and the constraints that they equal its terms."""
    t = R.fresh("post_")
    defs = []
    for name, (sorts, _) in R.SIGNATURE.items():
        xs = [z3.Const(f"x{k}", sort) for k, sort in enumerate(sorts)]
        eq = getattr(t, name)(*xs) == getattr(s, name)(*xs)
        defs.append(z3.ForAll(xs, eq) if xs else eq)
    return t, defs


def _broker(model: z3.ModelRef, t: Any) -> str:
    val = model.eval(t, model_completion=True)
    for k, u in enumerate(model.get_universe(R.Broker) or []):
        if val.eq(u):
            return f"b{k}"
    return str(val)


def decode(model: z3.ModelRef, s: R.State) -> dict[str, Any]:
    """The controller's state in words over the model's finite universe of brokers."""
    universe = list(model.get_universe(R.Broker) or [])
    ev = lambda t: model.eval(t, model_completion=True)  # noqa: E731

    def members(fn: Callable[[Any], Any]) -> list[str]:
        return [f"b{k}" for k, u in enumerate(universe) if z3.is_true(ev(fn(u)))]

    mins = [[f"b{k}" for k, u in enumerate(universe) if z3.is_true(ev(R.in_min(u, q)))]
            for q in model.get_universe(R.MinSet) or []]
    return {"brokers": len(universe), "replicas": members(s.replica), "isr": members(s.isr), "elr": members(s.elr),
            "fenced": members(s.fenced), "removing": members(s.removing), "adding": members(s.adding),
            "leader": _broker(model, s.leader()) if z3.is_true(ev(s.has_leader())) else None,
            "partition_epoch": ev(s.pe()).as_long(), "log_start": ev(s.log_start()).as_long(),
            "pending_writes": ev(s.nun()).as_long(), "min_sets": mins}


def render(d: dict[str, Any]) -> list[str]:
    def show(xs: list[str]) -> str:
        return "{" + ", ".join(xs) + "}"

    return [f"     partition: leader={d['leader'] or '-'} replicas={show(d['replicas'])} ISR={show(d['isr'])} "
            f"ELR={show(d['elr'])} partition epoch {d['partition_epoch']} (log from {d['log_start']})",
            f"     fenced: {show(d['fenced'])}"] + (
        [f"     reassignment: removing {show(d['removing'])}, adding {show(d['adding'])}"]
        if d["removing"] or d["adding"] else []) + (
        [f"     uncommitted controller writes: {d['pending_writes']}"] if d["pending_writes"] else [])


def render_cti(cti: Counterexample, min1: bool) -> list[str]:
    names = f"{cti.nodes} brokers"
    if cti.action is None:
        return ["", f"the initial state violates {cti.conjunct} ({names}):", *render(cti.pre)]
    mins = ("min ISR 1" if min1 else "min sets " + ("; ".join(
        "{" + ", ".join(q) + "}" for q in cti.pre["min_sets"]) or "none"))
    before, after = render(cti.pre), render(cti.post)
    changed = [x for x in after if x not in set(before)] or ["     (nothing encoded changed)"]
    return ["", f"counterexample to induction: {cti.conjunct} is not preserved by {cti.action}",
            f"  a finite model Z3 found: {names}; {mins}",
            "  0. a state satisfying Inv (not necessarily reachable)", *before,
            f"  1. {cti.action} (the lines that changed)", *changed,
            f"  {cti.conjunct} holds before step 1 and fails after it"]


# --- `kcheck prove --model replication --size any` ----------------------------------------------

# the sample's second configuration raises the epoch bounds and the fault budgets, which the
# encoding leaves free, so that the rarer controller steps (elections on request; restarts where
# the run's configuration has no crash) are taken
_RAISED = {"max_leader_epoch": 4, "max_partition_epoch": 8, "crashes": 1, "fences": 1}


def _raised(config: dict[str, Any]) -> dict[str, Any]:
    """The configuration with _RAISED's floors (a negative budget, unbounded, stays) and no joint
    fault budget."""
    out = {k: v if config[k] < 0 else max(v, config[k]) for k, v in _RAISED.items()}
    return {**config, **out, "max_faults": -1}


def encoding_covers(rc: Any, c: R.RCtx, quiet: bool) -> dict[str, Any]:
    """Every transition of a sample of the model's states, in the run's configuration and in it with
    the epoch bounds and fault budgets raised, is a step of the encoding, and each step the configuration enables is
    among them; else nothing is proved (ConfigError)."""
    import sys

    from checker.config import ConfigError, load_config
    from checker.proofs import conformance

    if not quiet:
        print("kcheck: checking that every model step of a sample is a step of the every-size encoding",
              file=sys.stderr, flush=True)
    t0 = time.monotonic()
    config = dict(rc.config)
    model = load_config(model="replication", variant=rc.variant,
                        overrides=[f"{k}={str(v).lower()}" for k, v in config.items()]).build()
    wide = load_config(model="replication", variant=rc.variant,
                       overrides=[f"{k}={str(v).lower()}" for k, v in _raised(config).items()]).build()
    report = check_transitions(model, conformance.sample(model, 300)
                               + conformance.walk_sample(model, walks=30, depth=30, seed=3), c)
    more = check_transitions(wide, conformance.walk_sample(wide, walks=40, depth=40, seed=5), c)
    transitions = report.transitions + more.transitions
    solved = report.solved + more.solved
    failures = report.failures + more.failures
    missing = [n for n in R.enabled(c) if n not in report.kinds | more.kinds]
    if missing:  # rarer steps: walks until each is taken (the walks are cheap; each such state is checked)
        found = check_transitions(wide, _states_taking(wide, set(missing), walks=400, depth=60, seed=7), c)
        transitions += found.transitions
        solved += found.solved
        failures += found.failures
        missing = [n for n in missing if n not in found.kinds]
    seconds = time.monotonic() - t0
    where = f"{transitions:,} transitions ({solved:,} distinct controller steps) checked in {seconds:.1f} s"
    if failures:
        first = " ".join(failures[0].split())[:300]
        raise ConfigError(f"the every-size replication encoding does not cover the model's sources as they are "
                          f"now ({where}): {first}; nothing is proved (spec/proofs.md, \"Every cluster size\")")
    if missing:
        raise ConfigError(f"the sample ({where}) took no step of {', '.join(missing)}: that part of the every-size "
                          "encoding is unchecked against the model; nothing is proved")
    from checker.provenance import model_digest

    return {"how": f"follows the model (its sources, sha256 {model_digest('replication')[:12]}, are those the "
                   f"encoding was checked against; a sample of this configuration's steps re-checked: {where}, every"
                   " encoded action among them)", "transitions": transitions,
            "distinct_steps": solved}


def _states_taking(model: Any, kinds: set[str], walks: int, depth: int, seed: int) -> list[Any]:
    """States of seeded random walks from which the model takes a step of one of `kinds`, at most a
    few per kind."""
    import random

    rng = random.Random(seed)
    out: list[Any] = []
    seen: dict[str, int] = {}
    for _ in range(walks):
        s = model.init_states()[0]
        for _ in range(depth):
            succ = []
            for a in model.actions(s):
                t = model.next_state(s, a)
                if t is None:
                    continue
                name = _name(a)[0]
                if name in kinds and seen.get(name, 0) < 5:
                    seen[name] = seen.get(name, 0) + 1
                    out.append(s)
                succ.append(t)
            if not succ:
                break
            s = rng.choice(succ)
        if len(seen) == len(kinds) and min(seen.values()) >= 5:
            break
    return out


def _inclusion(rc: Any) -> dict[str, Any] | None:
    """The recorded Z3 inclusion of the model's relation at 3 brokers in the every-size encoding,
    for these sources, this variant and configuration (None: not recorded for them)."""
    from checker.proofs import replication_inclusion as RI

    entry = RI.recorded(dict(rc.config), rc.variant)
    return None if entry is None else {"how": RI.describe(entry, "recorded with these sources"), **entry}


def run(args: Any, rc: Any, proving: Callable[..., tuple[Outcome, float]]) -> tuple[dict[str, Any], list[str], str]:
    """The proof the arguments ask for: its JSON report, its lines of text and its result
    (prove_any prints them; `proving` runs a proof with its progress lines)."""
    from checker.config import ConfigError
    from checker.provenance import model_source
    from model.replication.params import Params
    from model.replication.variants import Rules

    config = dict(rc.config)
    params = Params.from_config(config)
    c = R.RCtx.of(params, Rules.of(rc.variant))
    structural = R.conjuncts(c)
    for name in args.invariant:
        if name != "structural" and name not in structural:
            raise ConfigError(f"--size any proves structural only (its conjuncts: {', '.join(structural)}) for "
                              f"--model replication; {name} is proved for a fixed --size N (spec/proofs.md)")
    from checker.proofs.checked_against import refusal

    reason = refusal("replication", any_size=True)  # a sample check never licenses a proof
    if reason is not None:
        raise ConfigError(reason)
    encoding = encoding_covers(rc, c, args.quiet)
    encoding["inclusion"] = _inclusion(rc)

    o, wall = proving(args, lambda progress: prove(c, timeout_s=args.timeout, progress=progress))
    lemmas = [n for n in structural if n in R.LEMMAS]
    mins = "min ISR 1" if c.min1 else "every min ISR of 2 or more (min sets of that many brokers)"
    report: dict[str, Any] = {
        "model": "replication", "variant": rc.variant, "preset": rc.preset, "brokers": "any",
        "min_isr": 1 if c.min1 else ">=2", "mode": "induction", "invariants": ["structural"],
        "conjuncts": [n for n in structural if n not in R.LEMMAS], "lemmas": lemmas, "result": o.result,
        "queries": len(o.checks), "seconds": round(wall, 3), "solver_seconds": round(o.seconds, 3),
        "never_enabled": o.never_enabled, "reason": o.reason, "cti": None,
        "model_source": model_source().as_json(), "encoding_check": encoding}
    lines = ["model:      replication", f"model source: {model_source().text()}", f"variant:    {rc.variant}",
             f"encoding:   {encoding['how']}",
             "inclusion:  " + (encoding["inclusion"]["how"] if encoding["inclusion"] else
                               "not recorded for these sources, variant and configuration "
                               "(checker/proofs/replication_inclusion.py)"),
             f"brokers:    any (an uninterpreted sort; replicas, ISR and ELR predicates over it); {mins}",
             "invariants: structural (" + ", ".join(report["conjuncts"]) + ")",
             f"lemmas:     {', '.join(lemmas) or 'none'}",
             f"result:     {o.result}" + (f" ({o.reason})" if o.reason else ""),
             f"queries:    {len(o.checks)}", f"seconds:    {wall:.2f} ({o.seconds:.2f} in Z3)"]
    if o.never_enabled:
        lines.append(f"never enabled under Inv: {', '.join(o.never_enabled)}")
    if o.result == "proved":
        lines.append("not proved for every size: the data plane's invariants (spec/proofs.md: which are proved "
                     "for fixed sizes)")
    if o.cti is not None:
        lines += render_cti(o.cti, c.min1)
        report["cti"] = {"conjunct": o.cti.conjunct, "action": o.cti.action, "brokers": o.cti.nodes,
                         "pre": o.cti.pre, "post": o.cti.post}
    return report, lines, o.result
