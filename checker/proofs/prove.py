"""`kcheck prove`: Z3 proofs over the symbolic encoding of a model (checker/proofs/).

  kcheck prove [CONFIG.toml] [--model kraft|replication] [--variant NAME] [--preset NAME] [--set K=V]...
               [--size N] [--invariant NAME]... [--bmc K] [--timeout S] [--all-actions] [--derive] [--json]
               [--trace-out FILE]

Without --bmc: induction. The invariants (default for kraft: election_safety, log_matching and
leader_completeness; for replication: structural) and their lemmas (spec/proofs.md) must hold initially and be preserved by
every action; a failure prints the counterexample to induction (CTI) as a state and the action
that breaks the named conjunct. With --bmc K: bounded model checking to depth K; a violation is
printed as a trace and written to --trace-out as ITF.

Exit codes as `kcheck check`: 0 proved (or, with --bmc, no violation within K steps); 1 a CTI,
a BMC violation, or a vacuous proof; 2 bad input; 3 unknown (a Z3 timeout or incompleteness,
never reported as proved) or interrupted (Ctrl-C, SIGTERM: the queries answered until then).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from typing import Any, Sequence

from checker.config import ConfigError, RunConfig
from checker.proofs.changes import plugin_change, plugin_refusal
from checker.proofs.encodings import _encoding
from checker.provenance import model_source

EXIT = {"proved": 0, "ok": 0, "cti": 1, "violation": 1, "vacuous": 1, "unknown": 3, "interrupted": 3}


class _Label:
    """The step-0 label of a rendered CTI (render_text prints repr of the action)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


MAX_SIZE = 7  # the largest size measured (minutes per proof); past it a run may go on for hours


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from checker.cli.options import (_int_at_least, add_config_arguments, positive_int as _positive_int, positive_seconds)

    add_config_arguments(parser)
    from checker.proofs import prove_any

    parser.add_argument("--size", type=prove_any.size(_int_at_least(1, "positive", MAX_SIZE)), metavar="N",
                        help="number of voters (kraft) or brokers (replication); overrides the config's "
                             f"`voters` / `brokers`; up to {MAX_SIZE}, beyond BFS's range; `any`: every number of "
                             "voters (kraft) or brokers (replication: structural; checker/proofs/prove_any.py)")
    parser.add_argument("--invariant", action="append", default=[], metavar="NAME",
                        help="an invariant to prove (repeatable; default: election_safety, log_matching,"
                             " leader_completeness for kraft; structural for replication)")
    parser.add_argument("--bmc", type=_positive_int, metavar="K", help="bounded model checking to depth K")
    parser.add_argument("--timeout", type=positive_seconds, default=120.0, metavar="S",
                        help="seconds per Z3 query (induction) or in all (BMC, deriving not counted); past it: unknown, exit 3")
    parser.add_argument("--all-actions", action="store_true",
                        help="check every action instance, not one per orbit of voter renamings")
    parser.add_argument("--derive", action="store_true",
                        help="replication, induction at a fixed size: prove on the relation derived from the "
                             "model's Python even where its sources are those the hand-written encoding was checked "
                             "against (an edited model always is; kraft always is, --bmc too)")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.add_argument("--trace-out", metavar="FILE", help="with --bmc: write a violation as an ITF trace")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


# per model: the config key --size sets, and what its symbolic encoding provides
_SIZE_KEY = {"kraft": "voters", "replication": "brokers"}


def _provable_lemmas(model: str) -> list[str]:
    """Lemmas `--invariant` also accepts (replication: each lemma with a strengthening of its own)."""
    if model != "replication":
        return []
    from checker.proofs.replication_inv import LEMMAS, SUPPORT

    return [n for n in LEMMAS if n in SUPPORT]


# Action kinds a symbolic encoding leaves out: a configuration must switch them off
# (the model's `disabled_actions`), or a proof would be of another model.
_UNENCODED = {"replication": ("ElectLeaders", "AlterPartitionReassignments"),
              "kraft": ("AddVoter", "RemoveVoter", "SendObserverFetch")}
_SWITCH_OFF = {  # action -> the settings that disable it
    "ElectLeaders": ("preferred_elections=false", "unclean_elect_leaders=false"),
    "AlterPartitionReassignments": ("reassignments=0",),
    "AddVoter": ("voter_changes=0",), "RemoveVoter": ("voter_changes=0",),
    "SendObserverFetch": ("voter_changes=0", "spares=0")}


def _setup(args: argparse.Namespace) -> tuple[RunConfig, Any, Any, list[str]]:
    from checker.cli.options import run_config

    rc = run_config(args)
    if rc.model not in _SIZE_KEY:
        raise ConfigError(f"kcheck prove encodes --model {' and '.join(_SIZE_KEY)}; {rc.model} has no symbolic encoding")
    if args.timeout <= 0:
        raise ConfigError(f"--timeout must be positive, got {args.timeout}")
    Ctx, Params, invariants, default_targets = _encoding(rc.model)
    config = dict(rc.config)
    if args.size is not None:
        config[_SIZE_KEY[rc.model]] = args.size
    targets = list(args.invariant) or list(default_targets)
    lemmas = _provable_lemmas(rc.model)
    for name in targets:
        if name not in invariants and name not in lemmas:
            also = f"; lemmas: {', '.join(lemmas)}" if lemmas else ""
            raise ConfigError(f"unknown invariant {name!r} ({rc.model} invariants: {', '.join(invariants)}{also})")
    change = plugin_change(rc)
    try:
        ctx = Ctx.of(Params.from_config(config), rc.variant if change is None else change.base)
        model = rc.definition.build(config, rc.variant)
    except ValueError as e:  # the model rejects this combination of keys
        raise ConfigError(f"model {rc.model} rejects this configuration: {e}") from e
    off = dict(getattr(model, "disabled_actions", dict)())
    missing = [k for k in _UNENCODED.get(rc.model, ()) if k not in off]
    if missing:
        how = " ".join(f"--set {kv}" for kv in dict.fromkeys(kv for k in missing for kv in _SWITCH_OFF[k]))
        raise ConfigError(f"the {rc.model} encoding has no {', '.join(missing)}, which this configuration enables; "
                          f"switch it off with {how} (spec/proofs.md, \"What is encoded\")")
    if getattr(model.params, "replication_factor", None) not in (None, model.params.n):
        raise ConfigError(f"the {rc.model} encoding makes every broker a replica; leave replication_factor at 0 "
                          f"(spec/proofs.md, \"What is encoded\")")
    return rc, ctx, model, targets


_INIT_BY = {"kraft": "derived from quorum.initialize on kraft_state's formatted state (derived.initial)",
            "replication": "replication_state.init_constraint, the model's initial_state"}


def _init_follows(rc: RunConfig, ctx: Any, config: dict[str, Any]) -> None:
    """The derived relation's Init (_INIT_BY) is refused (exit 2) unless it holds of the model's
    initial states as `init_states` makes them now (an edit or a plugin may change them: a
    plugin's own `init_states` is followed by no derivation), and of no other state."""
    import z3

    from checker.proofs.induction import encoding_of

    enc = encoding_of(ctx)
    model = rc.definition.build({**config, "symmetry": False} if rc.model == "kraft" else config, rc.variant)
    starts = model.init_states()  # a plugin's: with its replaced decisions in force
    sym = enc.fresh(ctx.layout, "i_")
    from checker.proofs.derived import NotDerived

    try:
        init = enc.init(ctx, sym)
    except NotDerived as e:  # quorum.initialize raises, or the stand-ins cannot follow it
        raise ConfigError(f"the derived relation's Init could not be made: {e}; nothing is proved") from e
    same = [enc.matches(ctx.layout, sym, s0) for s0 in starts]
    for claim, want, what in [(z3.And(init, m), z3.sat, "an initial state of the model is not one of the encoding's")
                              for m in same] + [(z3.And(init, z3.Not(z3.Or(same))), z3.unsat,
                                                 "the encoding's Init has a state the model does not start in")]:
        solver = z3.Solver()
        solver.add(claim)
        if solver.check() != want:
            raise ConfigError(f"the derived relation's Init ({_INIT_BY[rc.model]}) is not the "
                              f"model's initial state as it is now: {what}; nothing is proved (spec/proofs.md, "
                              "\"Deriving the relation from the model\")")


def _encoding_follows(rc: RunConfig) -> dict[str, Any]:
    """The encoding is of the model's sources as they are: refused (ConfigError, exit 2, nothing
    proved) unless they are those it was checked against (checker/proofs/checked_against.py)."""
    from checker.proofs.checked_against import follows, refusal

    reason = refusal(rc.model, any_size=False)
    if reason is not None:
        raise ConfigError(reason)
    return follows(rc.model)


def _encoding_text(encoding: dict[str, Any]) -> str:
    if encoding["how"] == "derived":
        return (f"derived from the model's Python (sources sha256 {encoding['model_sha256'][:12]}): "
                f"{encoding['actions']} action instances in {encoding['derivation_seconds']:.1f} s "
                f"({encoding['derived_by']}{_cached_text(encoding)}); invariants and lemmas written by hand")
    return (f"follows the model (its sources, sha256 {encoding['model_sha256'][:12]}, are those the encoding"
            " was checked against)")


def _cached_text(encoding: dict[str, Any]) -> str:
    n = encoding.get("cached", 0)
    return f"; {n} of them read from the derivation cache, {encoding['cache']}" if n else ""


def _not_recorded(rc: RunConfig) -> bool:
    """The sources differ from those the hand-written encoding was checked against: an edited
    model, proved on the relation derived from it instead of refused."""
    from checker.proofs.checked_against import refusal

    return refusal(rc.model, any_size=False) is not None


_DERIVED_BY = {"kraft": "checker/proofs/derive.py", "replication": "checker/proofs/derive_replication.py, "
                                                                     "under the invariant"}


def _derived_encoding(model: str) -> dict[str, Any]:
    """The `encoding_check` object of a proof on the derived relation (filled in as it runs)."""
    from checker.provenance import model_digest

    return {"how": "derived", "model_sha256": model_digest(model), "derived_by": _DERIVED_BY[model], "actions": 0,
            "derivation_seconds": 0.0, "paths": 0}


def _derive_lazily(args: argparse.Namespace, rc: RunConfig, ctx: Any, change: Any = None, model: Any = None,
                   targets: Sequence[str] = ()) -> Any:
    """The context whose relation is derived from the model's Python, each action instance when
    the induction first needs it (a progress line per instance); for replication, under the
    inductive invariant of `targets`. With a plugin's `change`, of its base variant's rules with the
    change in force: its replaced decisions (put in force around the induction, where the
    derivation runs) and its `next_state`."""
    from checker.proofs import derived

    step = None
    if change is not None and change.next_state is not None:
        base = model.base_model
        step = lambda s, a, own: change.next_state(base, s, a, own)  # noqa: E731

    made: list[Any] = []

    def progress(d: Any) -> None:
        if not args.quiet:
            what = "derived" if d.step is not None else f"not derived ({d.why})"
            kept = made and made[0].cache is not None and repr(d.action) in made[0].cache.hits
            how = "read from the derivation cache" if kept else f"{d.seconds:.2f}s"
            print(f"kcheck: {what} {d.action!r}: {d.paths} paths ({how})", file=sys.stderr, flush=True)

    if rc.model == "replication":
        from checker.proofs import derived_replication

        made.append(derived_replication.context(ctx.p, rc.variant if change is None else change.base, targets,
                                                progress=progress, lazy=True, step=step, cached=change is None))
    else:
        made.append(derived.context(ctx.p, rc.variant if change is None else change.base, progress=progress,
                                    lazy=True, step=step, cached=change is None))
    return made[0]


def _derivation_done(ctx: Any, encoding: dict[str, Any]) -> None:
    ds = [d for d in ctx.derived.values()]
    encoding.update({"actions": len(ds), "derivation_seconds": round(ctx.seconds, 3),
                     "paths": sum(d.paths for d in ds)})
    if ctx.cache is not None:  # what was read back rather than derived, and from where
        encoding.update({"cached": len(ctx.cache.hits), "cache": str(ctx.cache.where)})


def _render(model: Any, trace: list[tuple[Any, Any]], invariant: str | None = None) -> str:
    from checker.traces.render import render_text

    try:
        return render_text(model, trace, invariant)
    except Exception:  # a CTI state outside the model's domains (no lemma bounds it)
        return "\n".join(f"  {k}. {a!r}: {s!r}" for k, (a, s) in enumerate(trace))


def run(args: argparse.Namespace) -> int:
    from checker.cli.options import activate_plugins

    activate_plugins(args)  # with one plugin, the model it extends
    if args.model is None and args.config_file is None:
        args.model = "kraft"  # the default model of `kcheck prove`
    if args.derive and args.size == "any":
        raise ConfigError("--derive: the relation is derived from the model at a fixed size only (not with --size any)")
    if args.size == "any":
        from checker.proofs import prove_any

        return prove_any.run(args)
    rc, ctx, model, targets = _setup(args)
    if args.derive and args.bmc and rc.model != "kraft":
        raise ConfigError("--derive --bmc: the replication relation is derived under the proof's invariant, for "
                          "induction only; its --bmc runs on the hand-written encoding")
    plugin_refusal(args, rc)
    change = plugin_change(rc)
    if args.trace_out and not args.bmc:
        raise ConfigError("--trace-out needs --bmc (a CTI is not a trace from the initial state)")
    from checker.outputs import check_outputs

    check_outputs(files=[("--trace-out", args.trace_out)], inputs=[("the config file", args.config_file)])
    # kraft: always the relation derived from the model's Python; replication: where its sources
    # are not the recorded ones, or asked (its derivation under the invariant takes minutes)
    derive = rc.model == "kraft" or (not args.bmc and (args.derive or change is not None or _not_recorded(rc)))
    encoding = _derived_encoding(rc.model) if derive else _encoding_follows(rc)
    size_key = _SIZE_KEY[rc.model]
    from checker import plugin

    report: dict[str, Any] = {"model": rc.model, "variant": rc.variant, "preset": rc.preset,
                              "config": {**dict(rc.config), size_key: ctx.n}, "invariants": targets,
                              "model_source": model_source().as_json(), "plugins": plugin.provenance(),
                              "encoding_check": encoding}
    if derive:
        ctx = _derive_lazily(args, rc, ctx, change, model, targets)
    with (model.decisions() if change is not None else contextlib.nullcontext()):  # where the derivation runs
        if derive:
            _init_follows(rc, ctx, {**dict(rc.config), size_key: ctx.n})
        if args.bmc:
            text = _run_bmc(args, rc, ctx, model, targets, report)
        else:
            text = _run_induction(args, ctx, model, targets, report)
    if derive:
        _derivation_done(ctx, encoding)
    text = text.replace("voters:     ", f"{size_key + ':':<12}", 1)
    header = f"\nmodel source: {model_source().text()}\n"
    if plugin.active():
        header += f"plugin:     {plugin.header_line()}\n"
    text = text.replace("\n", f"{header}encoding:   {_encoding_text(encoding)}\n", 1)
    if args.json:
        print(json.dumps(report))
    else:
        print(text)
    return EXIT[report["result"]]


def _run_induction(args: argparse.Namespace, ctx: Any, model: Any, targets: list[str], report: dict[str, Any]) -> str:
    from checker.traces.render import trace_json
    from checker.proofs.induction import conjuncts_for, prove

    from checker.heartbeat import Heartbeat

    def progress(c: Any) -> None:
        heartbeat.beat(f"{c.what}: {c.answer}")
        if not args.quiet:
            print(f"kcheck: {c.what}: {c.answer} ({c.seconds:.2f}s)", file=sys.stderr, flush=True)

    t0 = time.monotonic()
    if getattr(ctx, "derived", None) is not None:
        from checker.proofs.derived import prove
    with Heartbeat("prove", None if args.quiet else sys.stderr) as heartbeat:  # a query may take minutes
        o = prove(ctx, targets, timeout_s=args.timeout, symmetric=not args.all_actions, progress=progress)
    wall = time.monotonic() - t0
    from checker.proofs.induction import encoding_of

    lemmas = [n for n in conjuncts_for(targets, encoding_of(ctx).support) if n not in targets]
    report.update({"mode": "induction", "result": o.result, "lemmas": lemmas, "queries": len(o.checks),
                   "seconds": round(wall, 3), "solver_seconds": round(o.seconds, 3),
                   "never_enabled": o.never_enabled, "reason": o.reason, "cti": None})
    lines = [f"model:      {report['model']}", f"variant:    {report['variant']}",
             f"voters:     {ctx.n}", f"invariants: {', '.join(targets)}",
             f"lemmas:     {', '.join(lemmas) or 'none'}", f"result:     {o.result}" + (f" ({o.reason})" if o.reason else ""),
             f"queries:    {len(o.checks)}", f"seconds:    {wall:.2f} ({o.seconds:.2f} in Z3)"]
    if o.never_enabled:
        lines.append(f"never enabled under Inv: {', '.join(o.never_enabled)}")
    if o.cti is not None:
        cti = o.cti
        label = _Label("a state satisfying Inv (not necessarily reachable)")
        trace = [(label, cti.pre)] if cti.action is None else [(label, cti.pre), (cti.action, cti.post)]
        try:
            steps = trace_json(model, [(None, cti.pre)] + ([(cti.action, cti.post)] if cti.action else []))
        except Exception:  # a CTI state outside the model's domains (no lemma bounds it)
            steps = [{"action": None, "state": repr(cti.pre)}] + (
                [{"action": repr(cti.action), "state": repr(cti.post)}] if cti.action else [])
        report["cti"] = {"conjunct": cti.conjunct, "action": None if cti.action is None else repr(cti.action),
                         "trace": steps}
        if cti.action is None:
            lines += ["", f"the initial state violates {cti.conjunct}:", _render(model, [(_Label('initial state'), cti.pre)])]
        else:
            lines += ["", f"counterexample to induction: {cti.conjunct} is not preserved by {cti.action!r}",
                      _render(model, trace, None),
                      f"  {cti.conjunct} holds before step 1 and fails after it"]
            if cti.ghosts:
                lines.append(f"  ghosts of state 0, at epochs 0..{ctx.p.max_epoch}:")
                lines += [f"     {k}: {v}" for k, v in cti.ghosts.items()]
                report["cti"]["ghosts"] = cti.ghosts
    return "\n".join(lines)


def _run_bmc(args: argparse.Namespace, rc: RunConfig, ctx: Any, model: Any, targets: list[str],
             report: dict[str, Any]) -> str:
    from checker.traces import itf
    from checker.traces.render import trace_json
    from checker.proofs.bmc import EncodingDrift, bmc

    from checker.heartbeat import Heartbeat

    def progress(k: int, seconds: float) -> None:
        heartbeat.beat(f"depth {k} checked")
        if not args.quiet:
            print(f"kcheck: depth {k} checked ({seconds:.2f}s)", file=sys.stderr, flush=True)

    try:
        with Heartbeat("prove --bmc", None if args.quiet else sys.stderr) as heartbeat:  # a depth may take minutes
            o = bmc(ctx, model, targets, args.bmc, timeout_s=args.timeout, progress=progress)
    except EncodingDrift as e:
        raise ConfigError(f"internal error: the symbolic encoding drifted from the model: {e}") from e
    report.update({"mode": "bmc", "result": o.result, "bound": args.bmc, "depth_checked": o.depth,
                   "seconds": round(o.seconds, 3), "violation": None, "reason": o.reason or None})
    lines = [f"model:      {report['model']}", f"variant:    {report['variant']}", f"voters:     {ctx.n}",
             f"invariants: {', '.join(targets)}", f"bmc bound:  {args.bmc}",
             f"result:     {o.result}" + {"ok": " (no violation within the bound)",
                                              "interrupted": " (stopped: no violation up to the depth checked)"}.get(o.result, "")
             + (f" ({o.reason})" if o.reason else ""),
             f"depth checked: {o.depth}", f"seconds:    {o.seconds:.2f}"]
    if o.trace:
        report["violation"] = {"invariant": o.invariant, "trace": trace_json(model, o.trace)}
        lines += ["", f"counterexample: invariant {o.invariant} violated after {len(o.trace) - 1} step(s)",
                  _render(model, o.trace, o.invariant)]
        if args.trace_out:
            doc = itf.to_itf(model, o.trace, itf.run_meta(rc, invariant=o.invariant, engine="bmc"))
            itf.write(args.trace_out, doc)
    return "\n".join(lines)
