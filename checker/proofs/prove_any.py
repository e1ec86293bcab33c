"""`kcheck prove --size any`: for --model kraft, election safety, log matching and leader
completeness for every number of voters; for --model replication, replication_any.

The every-size encoding (checker/proofs/kraft_param.py) proves what spec/proofs.md, "Every
cluster size", lists; anything else asked of it is refused in one line (exit 2) rather than
answered for a fixed size under the name "any".
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, Callable

from checker.config import ConfigError
from checker.provenance import model_digest, model_source

ANY = "any"
EXIT = {"proved": 0, "cti": 1, "vacuous": 1, "unknown": 3}


def size(parse_int: Any) -> Any:
    """The --size type: `any`, or what parse_int accepts."""
    def parse(text: str) -> Any:
        if text.strip().lower() == ANY:
            return ANY
        try:
            return parse_int(text)
        except argparse.ArgumentTypeError as e:
            raise argparse.ArgumentTypeError(f"{e} (or `any`: every number of voters)") from None

    return parse


def _check_options(args: argparse.Namespace) -> None:
    for flag, on in (("--bmc", args.bmc), ("--trace-out", args.trace_out), ("--all-actions", args.all_actions)):
        if on:
            raise ConfigError(f"--size any proves by induction over every node at once; {flag} needs a fixed --size N")


def _encoding_covers(variant: str, c: Any, quiet: bool) -> dict[str, Any]:
    """Every transition of a sample of the model's states (BFS and walks of `default`, as
    tests/test_prove_any.py takes, with the run's variant and `stale_requests`, which the encoding
    follows) must be a step of the every-size encoding, or nothing is proved. Run on every proof,
    after the record is found in step: it was made on kafka-4.1, and a run's variant may differ."""
    from checker.config import load_config
    from checker.proofs import conformance, param_conformance

    if not quiet:
        print("kcheck: checking that every model step of a sample is a step of the every-size encoding",
              file=sys.stderr, flush=True)
    t0 = time.monotonic()
    stale = "true" if c.stale_requests else "false"
    model = load_config(model="kraft", preset="default", variant=variant,
                        overrides=["symmetry=false", f"stale_requests={stale}"]).build()
    states = conformance.sample(model, 300) + conformance.walk_sample(model, walks=30, depth=30, seed=3)
    report = param_conformance.check_transitions(model, states, c)
    seconds = time.monotonic() - t0
    if report.failures:
        first = " ".join(report.failures[0].split())[:300]
        raise ConfigError(f"the every-size kraft encoding does not cover the model's sources as they are now "
                          f"({report.transitions:,} transitions checked in {seconds:.1f} s): {first}; nothing is "
                          "proved (spec/proofs.md, \"Every cluster size\")")
    return {"how": f"follows the model (its sources, sha256 {model_digest('kraft')[:12]}, are those the encoding was"
                   f" checked against; a sample of this variant's steps re-checked: {report.transitions:,} transitions"
                   f" in {seconds:.1f} s)",
            "transitions": report.transitions}


def _refuse_edited(rc: Any, c: Any, conjuncts: list[str], reason: str, quiet: bool, timeout_s: float) -> None:
    """An edited model or encoding: ConfigError (exit 2, nothing proved), after looking at 3
    voters for a step of the edited model that the every-size encoding does not take
    (checker/proofs/param_inclusion.py), which the refusal names. Refused even when there is
    none: 4 voters, which the record also holds, are not checked here."""
    from checker.heartbeat import Heartbeat
    from checker.proofs import param_inclusion as PI

    if not quiet:
        print("kcheck: the sources are not those recorded: deriving the model's relation at 3 voters and looking for "
              "a step the every-size encoding does not take", file=sys.stderr, flush=True)

    def progress(r: Any) -> None:
        heartbeat.beat(f"{r.action!r}: {r.verdict}")
        if not quiet:
            print(f"kcheck: {r.line()}", file=sys.stderr, flush=True)

    n = PI.SIZES[0]
    why = PI.init_included(rc.definition, dict(rc.config), rc.variant, n)
    if why is not None:
        raise ConfigError(f"{reason}; at {n} voters: {why}")
    with Heartbeat("prove", None if quiet else sys.stderr) as heartbeat:
        rep = PI.run_sizes(dict(rc.config), rc.variant, c, conjuncts, (n,), progress,
                           max(1, int(timeout_s * 1000)))[0]
    bad = rep.failure
    if bad is None:
        ghosts = rep.as_json()["ghost_guards"]
        but = (f", but for the encoding's guards on its own ghosts ({', '.join(ghosts)}), which nothing relates to the "
               "model" if ghosts else "")
        raise ConfigError(f"{reason}; at {n} voters every step of the model as it is now is one of the every-size "
                          f"encoding's (Z3, {len(rep.results)} action instances){but}; at {PI.SIZES[-1]} voters "
                          "not checked (python -m checker.proofs.record checks both)")
    what = {"not included": "Z3 found a state of the domain where the model takes a step the encoding cannot take",
            "unknown": "Z3 gave no answer", "not derived": "the derivation could not follow the model"}[bad.verdict]
    detail = f" ({' '.join(bad.detail.split())[:400]})" if bad.detail else ""
    raise ConfigError(f"{reason}; at {n} voters the every-size encoding is not shown to take every step of the "
                      f"model's {bad.action!r} as it is now: {what}{detail}")


def _inclusion(rc: Any, c: Any, conjuncts: list[str]) -> dict[str, Any] | None:
    """The recorded Z3 inclusion of the model's relation at 3 and 4 voters in the every-size encoding,
    for these sources, this variant and configuration (None: not recorded for them)."""
    from checker.proofs import param_inclusion as PI

    entry = PI.recorded(dict(rc.config), rc.variant, c, conjuncts)
    return None if entry is None else {"how": PI.describe(entry, "recorded with these sources"), **entry}


def run(args: argparse.Namespace) -> int:
    from checker.cli.options import run_config
    from checker.proofs.kraft_param import PCtx
    from checker.proofs.kraft_param_inv import INVARIANTS, NOT_FOR_ANY_SIZE, conjuncts
    from checker.proofs.param_induction import prove_any
    from model.kraft.variants import Protocol

    _check_options(args)
    rc = run_config(args)  # the plugins are in force and the model is set (prove.run)
    from checker.proofs.changes import plugin_refusal

    plugin_refusal(args, rc)
    if args.timeout <= 0:
        raise ConfigError(f"--timeout must be positive, got {args.timeout}")
    if rc.model == "replication":
        from checker.proofs import replication_any

        report, lines, result = replication_any.run(args, rc, proving)
        print(json.dumps(report) if args.json else "\n".join(lines))
        return EXIT[result]
    if rc.model != "kraft":
        raise ConfigError(f"--size any has encodings for --model kraft and replication only; {rc.model} is proved "
                          "for fixed sizes")
    targets = list(args.invariant) or list(INVARIANTS)
    for name in targets:
        if name in NOT_FOR_ANY_SIZE:
            raise ConfigError(f"--size any proves {', '.join(INVARIANTS)} only; "
                              f"{name} is not proved for every size "
                              f"(spec/proofs.md says which invariants are proved for a fixed --size N)")
        if name not in INVARIANTS:
            raise ConfigError(f"unknown invariant {name!r} (--size any proves: {', '.join(INVARIANTS)})")
    config = dict(rc.config)
    if config.get("voter_changes", 0) or config.get("spares", 0):
        raise ConfigError("the any-size encoding has a static voter set; set voter_changes=0 and spares=0 "
                          "(spec/proofs.md, \"Every cluster size\")")
    c = PCtx(Protocol.of(rc.variant), stale_requests=bool(config["stale_requests"]))
    from checker.proofs.checked_against import refusal

    names = conjuncts(c, targets)
    reason = refusal("kraft", any_size=True)
    if reason is not None:
        _refuse_edited(rc, c, names, reason, args.quiet, args.timeout)
    encoding = _encoding_covers(rc.variant, c, args.quiet)
    encoding["inclusion"] = _inclusion(rc, c, names)
    lemmas = [n for n in names if n not in targets]

    o, wall = proving(args, lambda progress: prove_any(c, targets, timeout_s=args.timeout, progress=progress))
    one = _one_voter(args, rc, targets) if o.result == "proved" else None
    result = o.result if one is None or one["result"] == "proved" else one["result"]
    not_proved = list(NOT_FOR_ANY_SIZE)
    report: dict[str, Any] = {
        "model": "kraft", "variant": rc.variant, "preset": rc.preset, "voters": ANY, "mode": "induction",
        "invariants": targets, "lemmas": lemmas, "result": result, "queries": len(o.checks),
        "seconds": round(wall, 3), "solver_seconds": round(o.seconds, 3), "never_enabled": o.never_enabled,
        "reason": o.reason, "not_for_any_size": not_proved, "cti": None, "one_voter": one,
        "model_source": model_source().as_json(), "encoding_check": encoding}
    lines = [f"model:      kraft", f"model source: {model_source().text()}", f"variant:    {rc.variant}",
             f"encoding:   {encoding['how']}",
             "inclusion:  " + (encoding["inclusion"]["how"] if encoding["inclusion"] else
                               "not recorded for these sources, variant, configuration and invariants "
                               "(checker/proofs/param_inclusion.py)"),
             "voters:     any: 2 or more by the every-size encoding (nodes an uninterpreted sort; majorities "
             "quorums, any two of which share a member); 1 by the relation derived from the model (below)",
             f"invariants: {', '.join(targets)}", f"lemmas:     {', '.join(lemmas)}",
             f"result:     {result}" + (f" ({o.reason})" if o.reason else ""),
             f"queries:    {len(o.checks)}", f"seconds:    {wall:.2f} ({o.seconds:.2f} in Z3)"]
    if one is not None:
        lines.append(f"1 voter:    {one['result']} on the relation derived from the model, whose lone voter is Leader at its start "
                     f"and restart as the model's is, at this configuration's bounds ({one['bounds']}): "
                     f"{one['queries']} queries, {one['seconds']:.2f} s")
    if o.never_enabled:
        lines.append(f"never enabled under Inv: {', '.join(o.never_enabled)}")
    if o.result == "proved":
        lines.append(f"not proved for every size: {', '.join(not_proved)} (spec/proofs.md: which are "
                     "proved for fixed sizes)")
    if o.cti is not None:
        lines += _render_cti(o.cti)
        report["cti"] = {"conjunct": o.cti.conjunct, "action": o.cti.action, "nodes": o.cti.nodes,
                         "pre": o.cti.pre, "post": o.cti.post}
    print(json.dumps(report) if args.json else "\n".join(lines))
    return EXIT[result]


def _one_voter(args: argparse.Namespace, rc: Any, targets: list[str]) -> dict[str, Any]:
    """The targets for one voter, by the fixed-size induction on the relation derived from the
    model's Python: the every-size encoding starts from fresh nodes, where the model makes a lone
    voter Leader at once at its start and restart (spec/proofs.md, "A lone voter at its start, not
    encoded")."""
    from checker.proofs import derived
    from model.kraft.params import Params

    config = {**dict(rc.config), "voters": 1}
    ctx = derived.context(Params.from_config(config), rc.variant, lazy=True, cached=True)
    o, wall = proving(args, lambda progress: derived.prove(ctx, targets, timeout_s=args.timeout, progress=progress))
    bounds = ", ".join(f"{k}={config[k]}" for k in ("max_epoch", "max_log", "max_in_flight") if k in config)
    return {"result": o.result, "reason": o.reason, "queries": len(o.checks), "seconds": round(wall, 3),
            "bounds": bounds}


def proving(args: argparse.Namespace, prove: Callable[[Callable[[Any], None]], Any]) -> tuple[Any, float]:
    """prove(progress) with a heartbeat and, unless --quiet, a line per query on stderr: its outcome
    and the wall seconds."""
    from checker.heartbeat import Heartbeat

    def progress(ch: Any) -> None:
        heartbeat.beat(f"{ch.what}: {ch.answer}")
        if not args.quiet:
            print(f"kcheck: {ch.what}: {ch.answer} ({ch.seconds:.2f}s)", file=sys.stderr, flush=True)

    t0 = time.monotonic()
    with Heartbeat("prove", None if args.quiet else sys.stderr) as heartbeat:
        out = prove(progress)
    return out, time.monotonic() - t0


def _render_cti(cti: Any) -> list[str]:
    from checker.proofs.param_induction import render

    names = ", ".join(x["id"] for x in cti.pre["node"])
    if cti.action is None:
        return ["", f"the initial state violates {cti.conjunct} (a model with {cti.nodes} nodes: {names}):",
                *render(cti.pre)]
    quorums = "; ".join("{" + ", ".join(q) + "}" for q in cti.pre["quorums"])
    return ["", f"counterexample to induction: {cti.conjunct} is not preserved by {cti.action}",
            f"  a finite model Z3 found: {cti.nodes} nodes ({names}); quorums {quorums or 'none'}",
            "  0. a state satisfying Inv (not necessarily reachable)", *render(cti.pre),
            f"  1. {cti.action} (the lines that changed)", *_changed(render(cti.pre), render(cti.post)),
            f"  {cti.conjunct} holds before step 1 and fails after it"]


def _changed(before: list[str], after: list[str]) -> list[str]:
    old = set(before)
    return [x for x in after if x not in old] or ["     (nothing encoded changed)"]
