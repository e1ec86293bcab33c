"""Bounded model checking of a symbolic encoding (KRaft, replication): Init(s0) & Next(s0, s1) & ... & Next(sk-1, sk)
& not P(sk), for k = 0..K, incrementally. A satisfying assignment is a counterexample of k
steps; it is replayed through the Python model (so a trace the model does not take is an
encoding bug, reported as such) and returned as [(action or None, state), ...], ready for
checker.traces.render and checker.traces.itf. "ok" means no violation within K steps, nothing more.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import z3

from checker import stop
from checker.proofs.induction import encoding_of, interruptible

VIOLATION, OK, UNKNOWN, INTERRUPTED = "violation", "ok", "unknown", "interrupted"


class EncodingDrift(Exception):
    """A symbolic counterexample the Python model does not take: the encoding is wrong."""


@dataclass
class BmcOutcome:
    result: str
    depth: int  # the largest depth fully checked
    seconds: float
    invariant: str = ""
    trace: list[tuple[Any, Any]] = field(default_factory=list)
    reason: str = ""  # why "unknown": a timeout, or the model raising after `depth` steps
    per_depth: list[float] = field(default_factory=list)


def replay(model: Any, acts: Sequence[Any]) -> list[tuple[Any, Any]]:
    """The Python model's trace for this action sequence (EncodingDrift if an action is not
    enabled where the encoding said it was)."""
    s = model.init_states()[0]
    trace: list[tuple[Any, Any]] = [(None, s)]
    for a in acts:
        t = model.next_state(s, a)
        if t is None:
            raise EncodingDrift(f"the encoding takes {a!r} where the model does not (after {len(trace) - 1} steps)")
        trace.append((a, t))
        s = t
    return trace


def _abstracts(enc: Any, lay: Any, m: z3.ModelRef, sym: Any, py: Any) -> bool:
    """The model's state `py` has the found state `sym` as its abstraction: the layout keeps less
    than the state (KRaft's history keeps an epoch's first leader and a conflict flag), so a
    decoded state can differ from the model's where both abstract to the same."""
    s = z3.Solver()
    s.add(enc.matches(lay, sym, py))
    s.add([sym.f[k] == m.eval(sym.f[k], model_completion=True) for k in sym.keys()])
    return s.check() == z3.sat


def bmc(ctx: Any, model: Any, targets: Sequence[str], depth: int, timeout_s: float = 600.0,
        progress: Callable[[int, float], None] | None = None) -> BmcOutcome:
    """Look for a violation of the targets within `depth` steps. A stop ends it with the result
    "interrupted" and the depth checked until then."""
    out = BmcOutcome(OK, -1, 0.0)
    t_start = time.monotonic()

    def interrupted() -> BmcOutcome:
        out.result, out.seconds = INTERRUPTED, time.monotonic() - t_start
        return out

    return interruptible(lambda: _bmc(ctx, model, targets, depth, timeout_s, progress, out), interrupted)


def _bmc(ctx: Any, model: Any, targets: Sequence[str], depth: int, timeout_s: float,
         progress: Callable[[int, float], None] | None, out: BmcOutcome) -> BmcOutcome:
    enc = encoding_of(ctx)
    fresh, formula = enc.fresh, enc.formula
    lay = ctx.layout
    acts = enc.actions(ctx)
    t_begin = time.monotonic()
    solver = z3.Solver()
    solver.set("ctrl_c", False)  # a stop is `interruptible`'s, not an "unknown"
    states = [fresh(lay, "b0_")]
    sels: list[Any] = []
    solver.add(enc.init(ctx, states[0]))
    # the relation once, over template variables, then renamed per step
    tpl_pre, tpl_post, tpl_sel = fresh(lay, "tp_"), fresh(lay, "tq_"), z3.Int("t_sel")
    rel = enc.transition(ctx, tpl_pre, tpl_post, acts, tpl_sel)
    # a derived relation says nothing of a step where the model raises: such a state is looked for too
    raises, raising = enc.crash(ctx, tpl_pre, acts) if hasattr(enc, "crash") else (z3.BoolVal(False), [])
    stop.check()  # building the relation takes seconds: a request a Z3 callback swallowed
    # the budget is the solver's: deriving the relation (minutes on a cold derivation cache) is not in it
    t_start = time.monotonic()
    for k in range(depth + 1):
        t0 = time.monotonic()
        remaining = timeout_s - (t0 - t_start)
        if remaining <= 0:
            out.result = UNKNOWN
            out.reason = f"the time limit (--timeout {timeout_s:g} s) ran out before depth {k}"
            break
        if k > 0:
            nxt = fresh(lay, f"b{k}_")
            sel = z3.Int(f"sel{k}")
            pairs = [(tpl_pre.f[key], states[-1].f[key]) for key in tpl_pre.keys()]
            pairs += [(tpl_post.f[key], nxt.f[key]) for key in tpl_post.keys()] + [(tpl_sel, sel)]
            solver.add(z3.substitute(rel, *pairs))
            states.append(nxt)
            sels.append(sel)
        # step k raises: the last state's successor is the model's only where it does not
        before = [(tpl_pre.f[key], states[-2].f[key]) for key in tpl_pre.keys()] if k > 0 else []
        raised = z3.substitute(raises, *before) if before else z3.BoolVal(False)
        bad = z3.Or([z3.Not(formula(n)(ctx, states[-1])) for n in targets] + [raised])
        solver.set("timeout", max(1, int(remaining * 1000)))
        r = solver.check(bad)
        stop.check()  # a query cancelled by a stop is not "unknown"
        out.per_depth.append(time.monotonic() - t0)
        if progress:
            progress(k, out.per_depth[-1])
        if r == z3.unknown:
            out.result = UNKNOWN
            out.reason = (f"Z3 gave no answer at depth {k}: {solver.reason_unknown()} "
                          f"({remaining:.0f} s of the time limit, --timeout {timeout_s:g} s, were left)")
            break
        if r == z3.sat:
            m = solver.model()
            taken = [enc.concrete_action(ctx, acts[m.eval(sel, model_completion=True).as_long()], m, states[x])
                     for x, sel in enumerate(sels)]
            if z3.is_true(m.eval(raised, model_completion=True)):  # first: the last successor is not the model's
                which = [repr(a) for a, c in raising
                         if z3.is_true(m.eval(z3.substitute(c, *before), model_completion=True))]
                out.result, out.depth = UNKNOWN, k - 1
                out.reason = (f"the model raises in {', '.join(which[:3])} after {k - 1} step(s)"
                              + (f" ({', '.join(map(repr, taken[:-1]))})" if k > 1 else ""))
                break
            trace = replay(model, taken)
            epochs = range(0, getattr(ctx.p, "max_epoch", 0) + 2)
            for (_, py), sym in zip(trace, states):
                if py != enc.decode(lay, m, sym, epochs) and not _abstracts(enc, lay, m, sym, py):
                    raise EncodingDrift(f"the encoding's state after {taken[:len(trace)]} differs from the model's")
            broken = [p.name for p in model.properties if p.kind == "always" and not p.predicate(trace[-1][1])]
            out.result, out.trace = VIOLATION, trace
            out.invariant = next((n for n in targets if n in broken), broken[0] if broken else targets[0])
            out.depth = k
            break
        solver.add(z3.Not(bad))  # unsatisfiable: a fact of every deeper query
        out.depth = k
    out.seconds = time.monotonic() - t_begin
    return out
