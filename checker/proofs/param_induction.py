"""Induction over the every-size KRaft encoding (kraft_param): the checks of induction.py
(Init => C, Init & Inv satisfiable, each action enabled in some Inv state, Inv & step => C')
with the quorum axiom, and CTIs read back from Z3's finite model of a failed query.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Sequence

import z3

from checker.proofs import kraft_param as K
from checker.proofs.induction import CTI, PROVED, UNKNOWN, VACUOUS, Check, Outcome, sat_answer
from checker.proofs.kraft_param_inv import (LC_LEMMAS, assumed, conjuncts, definitions, formula, initial_witness,
                                            written_out)
from model.kraft.rules import ERROR_NAMES, ROLE_NAMES


@dataclass
class ParamCounterexample:
    """A CTI: a finite cluster (its nodes), the state before and after the action, in words."""

    conjunct: str
    action: str | None  # None: the initial state fails
    nodes: int
    pre: dict[str, Any]
    post: dict[str, Any]


SEEDS = 4
FIRST_EVERY_SIZE = frozenset(LC_LEMMAS) | {"leader_completeness"}


class _Query:
    """A solver call tried with up to SEEDS random seeds, each with an equal share of the time.
    Z3's search on these quantified queries depends on the ids of the terms it is given, and those
    depend on every term the process made before (another proof, a test run earlier): a query
    answered in 0.02 s in one process can time out in another. Another seed is another search;
    only when none answers is the query unknown."""

    def __init__(self, ms: int) -> None:
        self.ms = ms
        self._solver: z3.Solver | None = None

    def check(self, *fs: Any) -> Any:
        r = z3.unknown
        for seed in range(SEEDS):
            s = z3.Solver()
            s.set("timeout", max(1, self.ms // SEEDS), "random_seed", seed)
            r = s.check(*fs)
            if r != z3.unknown:
                break
        self._solver = s
        return r

    def model(self) -> z3.ModelRef:
        assert self._solver is not None
        return self._solver.model()


def _answer(r: Any) -> str:
    return "holds" if r == z3.unsat else "fails" if r == z3.sat else "unknown"


def recorder(out: Outcome, progress: Callable[[Check], None] | None) -> Callable[..., str]:
    """record(what, z3 answer, start time[, answer in words]): a query's Check added to `out` and
    handed to `progress`; its answer in words."""
    def record(what: str, r: Any, t0: float, answer: str | None = None) -> str:
        ch = Check(what, answer or _answer(r), time.monotonic() - t0)
        out.checks.append(ch)
        if progress:
            progress(ch)
        return ch.answer

    return record


def action_names() -> list[str]:
    return [name for name, _, _ in K.ACTIONS]


def prove_any(c: K.PCtx, targets: Sequence[str], timeout_s: float = 60.0,
              progress: Callable[[Check], None] | None = None, only: Sequence[str] | None = None) -> Outcome:
    """Prove that the targets and their lemmas are inductive for every number of voters: in two
    layers when leader completeness is among them, its lemmas over election safety's and log
    matching's, which are inductive by themselves (a CTI of theirs is found with their lemmas
    alone, where Z3 finds models fastest)."""
    names = conjuncts(c, list(targets))
    base = [x for x in names if x not in FIRST_EVERY_SIZE]
    if not base or len(base) == len(names):
        return _prove(c, names, (), timeout_s, progress, only, {})
    runs: dict[K.PCtx, list[Any]] = {}  # the witness run, taken once for both layers
    first = _prove(c, base, (), timeout_s, progress, only, runs)
    if first.result != PROVED:
        return first
    second = _prove(c, names, base, timeout_s, progress, only, runs)
    second.checks[:0] = first.checks
    second.never_enabled = sorted(set(first.never_enabled) | set(second.never_enabled))
    return second


def _prove(c: K.PCtx, names: list[str], proved: Sequence[str], timeout_s: float,
           progress: Callable[[Check], None] | None, only: Sequence[str] | None,
           runs: dict[K.PCtx, list[Any]]) -> Outcome:
    """Init => C, Inv & step => C' for the conjuncts not in `proved` (already shown inductive by
    themselves: hypotheses here), Init & Inv satisfiable and each action enabled for all of them."""
    # With fetch_responses in Inv, HandleFetchResponse appends the response's log as it is
    # (append_justified checks that this is the model's append in every Inv state): Z3 does not
    # close entry_start over the model's shifted offsets (spec/proofs.md).
    c = replace(c, append_as_response="fetch_responses" in names)
    out = Outcome(PROVED, names)  # its cti a ParamCounterexample
    ms = max(1, int(timeout_s * 1000))
    pre, _ = K.fresh("s_")
    inv = {x: formula(x)(c, pre) for x in names}
    axiom = K.quorum_axiom()
    record = recorder(out, progress)

    defs = definitions(names, pre)
    for x in (x for x in names if x not in proved):
        s = _Query(ms)
        t0 = time.monotonic()
        r = s.check(axiom, *defs, K.init(pre), z3.Not(inv[x]))
        if record(f"Init => {x}", r, t0) == "fails":
            d = decode(s.model(), pre)
            out.result, out.cti = CTI, ParamCounterexample(x, None, d["nodes"], d, d)
            return out
        if r == z3.unknown:
            out.result, out.reason = UNKNOWN, f"Init => {x}: z3 unknown"
            return out
    s = _Query(ms)
    t0 = time.monotonic()
    # a model in one given initial state first (found at once where Z3 finds none over free
    # functions in the time: leader completeness's lemmas), then over free functions
    r = _Query(ms).check(axiom, *initial_witness(c, names))
    if r != z3.sat:
        r = s.check(axiom, *defs, K.init(pre), *inv.values())
    if record("Init & Inv satisfiable", r, t0, sat_answer(r)) != "satisfiable":
        out.result, out.reason = VACUOUS, "Init & Inv is unsatisfiable (or unknown): nothing would be proved"
        return out
    if c.append_as_response:
        what = "Inv => HandleFetchResponse's append is the response's log"
        t0 = time.monotonic()
        answer = record(what, append_justified(c, pre, [*defs, *inv.values()], ms), t0)
        if answer != "holds":
            out.result, out.reason = UNKNOWN, f"{what}: z3 {'sat' if answer == 'fails' else answer}; nothing is proved"
            return out
    unknown: list[str] = []
    run = witnessed(c, names, ms, runs)
    for name in (only if only is not None else action_names()):
        tr = K.transition(c, pre, name)
        label = f"{name}({', '.join(str(a).split('!')[1] for a in tr.args)})"
        t0 = time.monotonic()
        step_defs = definitions(names, pre, tr.post)
        r = z3.sat if name in run else _Query(min(ms, 20_000)).check(
            small_world(pre), axiom, *step_defs, *inv.values(), *tr.guard)
        if r != z3.sat:  # no witness among three voters: ask about every size
            r = _Query(ms).check(axiom, *step_defs, *inv.values(), *tr.guard)
        enabled = "enabled" if r == z3.sat else "never enabled" if r == z3.unsat else "unknown"
        where = f" (a state of a run over three nodes, before its step {run[name][0].label})" if name in run else ""
        record(f"{label} enabled in some Inv state{where}", r, t0, enabled)
        if enabled == "never enabled":
            out.never_enabled.append(label)
            continue
        if enabled == "unknown":
            unknown.append(f"{label} enabled")
            continue
        for x in (x for x in names if x not in proved):
            goal = z3.Not(formula(x)(c, tr.post))
            # conjuncts of the post-state this one's query assumes (kraft_param_inv.ASSUMES: each
            # is proved for this step by a query of its own, in an order with no cycle)
            hyps = [*step_defs, *inv.values(), *tr.guard, *(formula(y)(c, tr.post) for y in assumed(x, names))]
            t0 = time.monotonic()
            # a CTI among three voters (a sat answer over every size is hard for Z3) and the
            # query over every size; a fresh solver each (incremental solving is slower here).
            # Leader completeness's lemmas are asked over every size first, where Z3 answers
            # nearly all of them unsat at once.
            small, s = _Query(min(ms, 10_000)), _Query(ms)
            if x in FIRST_EVERY_SIZE:
                r = s.check(axiom, *hyps, goal)
                if r != z3.unsat and small.check(small_world(pre), axiom, *hyps, goal) == z3.sat:
                    s, r = small, z3.sat
            else:
                r = small.check(small_world(pre), axiom, *hyps, goal)
                if r == z3.sat:
                    s = small
                else:
                    r = s.check(axiom, *hyps, goal)
            cti = None
            if r == z3.unknown and name in run:  # in the run's given states, where Z3 decides at once
                cti = run_cti(c, names, x, name, run[name], min(ms, 10_000))
                r = z3.sat if cti is not None else r
            if record(f"Inv & {label} => {x}'", r, t0) == "fails" and cti is not None:
                out.result, out.cti = CTI, cti
                return out
            if r == z3.sat:
                # its ghosts are shown where leader completeness's lemmas, hence defs, constrain them
                out.result, out.cti = CTI, _counterexample(s.model(), x, name, tr.args, pre, tr.post, bool(defs))
                return out
            if r == z3.unknown:
                unknown.append(f"{label} => {x}'")
    if unknown:
        out.result, out.reason = UNKNOWN, "z3 unknown on " + ", ".join(unknown[:5])
    return out


@dataclass
class RunStep:
    """A step of param_witness's run taken from an Inv state: where the action is enabled, and
    where a CTI of its is looked for when Z3 answers neither way over every size."""

    label: str
    state: K.State
    facts: list[Any]
    args: tuple[Any, ...]


def witnessed(c: K.PCtx, names: list[str], ms: int,
              runs: dict[K.PCtx, list[Any]] | None = None) -> dict[str, list[RunStep]]:
    """The actions taken in some Inv state of param_witness's run (Z3 finds a model of Inv, Q
    written out, and the action's guard in the state before it), with those steps; `runs` keeps
    the run for the next caller with the same c (one proof's two layers)."""
    runs = {} if runs is None else runs
    if c not in runs:
        runs[c] = _run(c)
    found: dict[str, list[RunStep]] = {}
    for name, label, s, facts, guard, args in runs[c]:
        if _Query(ms).check(K.quorum_axiom(), *facts, guard, *(formula(x)(c, s) for x in names)) == z3.sat:
            found.setdefault(name, []).append(RunStep(label, s, facts, args))
    return found


def _run(c: K.PCtx) -> list[tuple[str, str, K.State, list[Any], Any, tuple[Any, ...]]]:
    """param_witness's run for c, each step with its state (taking it is some 13 s)."""
    from checker.proofs.param_witness import RunBlocked, run_states

    steps = []
    try:
        for step in run_states(c):
            written_out(step[2])
            steps.append(step)
    except RunBlocked:  # the variant leaves the run's plan: the actions after it are asked of Z3 as before
        pass
    return steps


def run_cti(c: K.PCtx, names: list[str], x: str, name: str, steps: list[RunStep],
            ms: int) -> ParamCounterexample | None:
    """A CTI of x in a given Inv state of the run, where it takes `name`: its Inv, its guard and x
    failing after it have a model."""
    fn = next(f for n, _, f in K.ACTIONS if n == name)
    for k, w in enumerate(steps):
        st = K.Step(f"cti{k}_{name.replace('(', '_').replace(')', '')}", w.state)
        post = written_out(fn(w.state, c, st, *w.args))
        q = _Query(ms)
        if q.check(K.quorum_axiom(), *w.facts, *(formula(y)(c, w.state) for y in names), *st.guard,
                   z3.Not(formula(x)(c, post))) == z3.sat:
            return _counterexample(q.model(), x, name, w.args, w.state, post, True)
    return None


def _counterexample(model: z3.ModelRef, x: str, name: str, args: tuple[Any, ...], pre: K.State, post: K.State,
                    ghosts: bool) -> ParamCounterexample:
    """The CTI of x by `name` that the model gives: its arguments by node name, both states decoded."""
    named = ", ".join(f"{a}={_node_name(model, v)}" for a, v in zip(K.ARG_NAMES[len(args)], args))
    pre_d, post_d = decode(model, pre, ghosts), decode(model, post, ghosts)
    return ParamCounterexample(x, f"{name}({named})", pre_d["nodes"], pre_d, post_d)


def append_justified(c: K.PCtx, pre: K.State, inv: list[Any], ms: int) -> Any:
    """Z3's answer to: some Inv state and step of HandleFetchResponse where the log appended as the
    response's log differs, below the new log end, from the model's (the follower's log, then the
    records from rstart at its end). unsat: the two are one step wherever Inv holds, so proving the
    induction with the first proves it for the model's."""
    model_like = K.transition(replace(c, append_as_response=False), pre, "HandleFetchResponse")
    direct = K.transition(replace(c, append_as_response=True), pre, "HandleFetchResponse")
    x, k = z3.Const("x", K.Node), z3.Int("k")
    differ = z3.Exists([x, k], z3.And(0 <= k, k < model_like.post.len(x),
                                      model_like.post.log(x, k) != direct.post.log(x, k)))
    # the same step: both transitions name their arguments and choices alike, so their guards are one
    assert len(model_like.guard) == len(direct.guard) and all(a.eq(b) for a, b in zip(model_like.guard, direct.guard))
    return _Query(ms).check(K.quorum_axiom(), *inv, *model_like.guard, differ)


def small_world(s: K.State) -> Any:
    """Three voters, their three majorities of two, epochs 0..4 in the ghost history, empty
    logs: where an action's enabledness is looked for first (a sat answer with quantifiers over every size is
    hard for Z3; a witness among three voters is a witness)."""
    a, b, c = (z3.Const(f"w_{x}", K.Node) for x in "abc")
    qs = [z3.Const(f"w_q{k}", K.Quorum) for k in range(3)]
    x, q, e, y = z3.Const("x", K.Node), z3.Const("q", K.Quorum), z3.Int("e"), z3.Const("y", K.Node)
    majorities = [(a, b), (b, c), (a, c)]
    return z3.And(
        z3.Distinct(a, b, c), z3.Distinct(*qs),
        z3.ForAll([x], z3.Or(x == a, x == b, x == c)), z3.ForAll([q], z3.Or([q == w for w in qs])),
        *[z3.ForAll([x], K.member(x, w) == z3.Or(x == p1, x == p2)) for w, (p1, p2) in zip(qs, majorities)],
        z3.ForAll([x, e, y], z3.Implies(s.vote_hist(x, e, y), z3.And(0 <= e, e <= 4))),
        z3.ForAll([e, y], z3.Implies(s.elected(e, y), z3.And(0 <= e, e <= 4))),
        # empty logs (Z3 finds no model with quantified logs in time; a CTI with entries is
        # looked for over every size after this)
        z3.ForAll([x], s.len(x) == 0), z3.ForAll([x, y], s.msg("fresp", "rlen")(x, y) == 0))


# --- Reading a finite model back --------------------------------------------------------------

_NAMES: dict[str, str] = {}
LOG_SHOWN = 12  # a CTI's logs are shown up to this many entries (their epochs)


def _node_name(model: z3.ModelRef, t: Any) -> str:
    """n0, n1, ...: a node of the finite model by its index in Z3's universe."""
    val = model.eval(t, model_completion=True)
    universe = model.get_universe(K.Node) or []
    for k, u in enumerate(universe):
        if val.eq(u):
            return f"n{k}"
    return str(val)


def decode(model: z3.ModelRef, s: K.State, ghosts: bool = False) -> dict[str, Any]:
    """The state in words over the model's finite universe of nodes: each node's fields, the
    messages in flight, the ghost votes and elections (at the epochs the state mentions); with
    `ghosts`, leader completeness's too: each elected epoch's start and largest HW, and each
    node's acknowledgements (unconstrained, so left out, where no lemma of theirs is asked)."""
    universe = list(model.get_universe(K.Node) or [])
    ev = lambda t: model.eval(t, model_completion=True)  # noqa: E731
    name = {k: f"n{k}" for k in range(len(universe))}

    def nid(t: Any) -> str:
        val = ev(t)
        return next((name[k] for k, u in enumerate(universe) if val.eq(u)), str(val))

    nodes = []
    epochs: set[int] = set()
    for k, u in enumerate(universe):
        role = ev(s.role(u)).as_long()
        ep = ev(s.epoch(u)).as_long()
        epochs.add(ep)
        d = {"id": name[k], "role": ROLE_NAMES[role] if 0 <= role < len(ROLE_NAMES) else str(role), "epoch": ep,
             "leader": nid(s.leader(u)) if z3.is_true(ev(s.has_leader(u))) else None,
             "voted": nid(s.voted(u)) if z3.is_true(ev(s.has_voted(u))) else None,
             "vote_persisted": z3.is_true(ev(s.persisted(u))), "observer": z3.is_true(ev(s.observer(u))),
             "last_log_epoch": ev(s.lle(u)).as_long(), "fetched": z3.is_true(ev(s.fetched(u))),
             "log": [ev(s.log(u, z3.IntVal(k))).as_long() for k in range(min(ev(s.len(u)).as_long(), LOG_SHOWN))],
             "granted": [name[j] for j, w in enumerate(universe) if z3.is_true(ev(s.granted(u, w)))],
             "rejected": [name[j] for j, w in enumerate(universe) if z3.is_true(ev(s.rejected(u, w)))]}
        nodes.append(d)
    network = []
    for kind, fields in K.MESSAGES.items():
        for a, ua in enumerate(universe):
            for b, ub in enumerate(universe):
                if not z3.is_true(ev(s.msg(kind, "present")(ua, ub))):
                    continue
                msg: dict[str, Any] = {"message": K.MESSAGE_NAMES[kind], "src": name[a], "dst": name[b]}
                for f in fields:
                    val = ev(s.msg(kind, f)(ua, ub))
                    if f == "leader":
                        continue
                    if f == "has_leader":
                        msg["leader"] = nid(s.msg(kind, "leader")(ua, ub)) if z3.is_true(val) else None
                    elif f == "error":
                        msg["error"] = ERROR_NAMES.get(val.as_long(), val.as_long())
                    elif z3.is_bool(val):
                        msg[f] = z3.is_true(val)
                    else:
                        msg[f] = val.as_long()
                        if f == "epoch":
                            epochs.add(val.as_long())
                if kind == "fresp" and not msg["div"] and msg["error"] == "NONE":
                    ln = min(max(ev(s.msg(kind, "rlen")(ua, ub)).as_long(), 0), LOG_SHOWN)
                    msg["rlog"] = [ev(s.msg(kind, "rlog")(ua, ub, z3.IntVal(k))).as_long() for k in range(ln)]
                network.append(msg)
    span = sorted({x for ep in epochs for x in (ep - 1, ep, ep + 1) if x >= 0})
    votes = [{"voter": name[a], "epoch": ep, "for": name[b]} for a, ua in enumerate(universe) for ep in span
             for b, ub in enumerate(universe) if z3.is_true(ev(s.vote_hist(ua, ep, ub)))]
    elected = [{"epoch": ep, "leader": name[b]} for ep in span for b, ub in enumerate(universe)
               if z3.is_true(ev(s.elected(ep, ub)))]
    quorums = []
    for qu in model.get_universe(K.Quorum) or []:
        quorums.append([name[j] for j, w in enumerate(universe) if z3.is_true(ev(K.member(w, qu)))])
    out = {"nodes": len(universe), "node": nodes, "network": network, "vote_hist": votes, "elected": elected,
           "quorums": quorums}
    if ghosts:
        out["hw"] = [{"epoch": ep, "start": ev(s.estart(ep)).as_long(), "hw": ev(s.chw(ep)).as_long()}
                     for ep in sorted({v["epoch"] for v in elected})]
        out["acks"] = [{"node": name[a], "epoch": ep, "up_to": ev(s.ack(ua, ep)).as_long()}
                       for a, ua in enumerate(universe) for ep in span if ev(s.ack(ua, ep)).as_long() > 0]
    return out


def render(d: dict[str, Any]) -> list[str]:
    """A decoded state as lines, one per node and message (the layout of render.render_text)."""
    lines = []
    for x in d["node"]:
        extra = []
        if x["granted"] or x["rejected"]:
            extra.append(f"votes granted {{{', '.join(x['granted'])}}} rejected {{{', '.join(x['rejected'])}}}")
        if not x["vote_persisted"]:
            extra.append("vote not persisted")
        if x["observer"]:
            extra.append("observer")
        lines.append(f"     {x['id']}: {x['role']} epoch={x['epoch']} leader={x['leader'] or '-'} "
                     f"voted={x['voted'] or '-'} last_log_epoch={x['last_log_epoch']}"
                     + (f" log={x['log']}" if x.get("log") else "")
                     + (f" ({'; '.join(extra)})" if extra else ""))
    for msg in d["network"]:
        fields = ", ".join(f"{k}={v}" for k, v in msg.items() if k not in ("message", "src", "dst"))
        lines.append(f"     in flight: {msg['message']} {msg['src']} -> {msg['dst']} ({fields})")
    if d["vote_hist"]:
        lines.append("     ghost votes: " + ", ".join(f"{v['voter']} for {v['for']} in epoch {v['epoch']}"
                                                      for v in d["vote_hist"]))
    if d["elected"]:
        lines.append("     elected: " + ", ".join(f"{v['leader']} in epoch {v['epoch']}" for v in d["elected"]))
    if d.get("hw"):
        lines.append("     ghost HWs: " + ", ".join(f"epoch {v['epoch']} from offset {v['start']}: "
                                                    + (str(v["hw"]) if v["hw"] >= 0 else "none") for v in d["hw"]))
    if d.get("acks"):
        lines.append("     ghost acknowledgements: " + ", ".join(f"{v['node']} up to {v['up_to']} in epoch {v['epoch']}"
                                                               for v in d["acks"]))
    return lines
