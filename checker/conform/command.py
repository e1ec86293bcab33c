"""`kcheck conform`: drive the real Kafka code along the model's behaviours and compare, step by step.

Exit codes: 0 every step agreed (documented divergences named), 1 a difference or a refusal,
2 bad input (no JPype1, no Java, no class path, a variant the class path cannot represent),
3 interrupted or out of time.
"""
from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from typing import Any

from checker.cli.options import (EXIT_BAD_INPUT, EXIT_INCOMPLETE, EXIT_OK, EXIT_VIOLATION, nonnegative_int, positive_int, positive_seconds)
from checker.config import ConfigError, load_config, load_definition
from checker.conform import engine
from checker.conform.adapter import ACCEPTED, EXCEPTION, REFUSED, adapter_for
from checker.conform.jvm import ENV, resolve_classpath, start_jvm
from checker.provenance import model_source

SPEC = {"kraft": "spec/kraft.md, \"Conformance with the running code\"",
        "replication": "spec/replication.md, \"Conformance with Kafka's controller\""}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default="kraft", help="the model whose adapter to run (default: kraft)")
    parser.add_argument("--variant", help="the protocol variant (default: the one the class path represents)")
    parser.add_argument("--preset", action="append", default=[], metavar="PRESET",
                        help="a preset to walk; repeatable, walks go round them (default: every preset the"
                             " adapter supports)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override one config key of every preset; repeatable")
    parser.add_argument("--kafka-classpath", metavar="CP",
                        help=f"the Kafka jars: a directory with jars/ and lib/, a Kafka download's libs/, or"
                             f" a {':'.join(['JAR', 'DIR'])} list (default: env {ENV})")
    parser.add_argument("--walks", type=nonnegative_int, default=100, help="random walks to drive (default 100)")
    parser.add_argument("--depth", type=positive_int, default=30, help="steps per walk (default 30)")
    parser.add_argument("--seed", type=nonnegative_int, default=0, help="walk seed (default 0)")
    parser.add_argument("--swarm", action="store_true", help="swarm walks: each walk weights the action kinds")
    parser.add_argument("--steer", action="store_true",
                        help="steer the walks: each step prefers the action into the abstract cell the run's walks"
                             " entered least (walk w then depends on the walks before it)")
    parser.add_argument("--negative", action="store_true",
                        help="negative conformance: in every state a walk reaches, also offer the real code one"
                             " action the model refuses there (it must refuse it too); counts per case and action kind")
    parser.add_argument("--traces", nargs="+", metavar="TRACE", default=[],
                        help="also drive the real code along these ITF traces (e.g. traces/kraft/*.itf.json)")
    parser.add_argument("--simulate", type=nonnegative_int, default=0, metavar="N",
                        help="kraft: also run the real nodes under N seeded random simulations (--depth steps, seeds"
                             " --seed..) and check each recorded trace with the model, as kcheck replay does")
    parser.add_argument("--simulate-out", metavar="DIR",
                        help="write each simulation's ITF trace (sim-SEED.itf.json) into DIR for kcheck replay")
    parser.add_argument("--timeout", type=positive_seconds, metavar="SECONDS",
                        help="stop starting walks after this long (exit 3, with what was done)")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")
    parser.add_argument("--trace-out", metavar="FILE", help="write the behaviour up to the first difference (ITF)")


def run(args: argparse.Namespace) -> int:
    try:
        with engine.stop_at_step_boundaries():
            return _run(args)
    except ConfigError as e:
        print(f"kcheck: error: {' '.join(str(e).splitlines())}", flush=True, file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as e:  # thrown outside any part (setting up the real objects): still one verdict
        from checker.conform.adapter import exception_line
        line = exception_line(e)
        if args.json:
            print(json.dumps({"model": args.model, "result": "exception", "exception": line,
                              "parts": {"walks": "not run", "traces": "not run", "simulations": "not run"}}))
        else:
            print(f"EXCEPTION while setting up the run: {line}")
            print("VERDICT of the whole run: EXCEPTION (nothing was driven)")
        return EXIT_VIOLATION


def _run(args: argparse.Namespace) -> int:
    if args.walks == 0 and not args.traces and not args.simulate:
        raise ConfigError("nothing to drive: --walks 0, no --traces, no --simulate")
    if args.simulate and args.model != "kraft":
        raise ConfigError("--simulate runs the kraft nodes only (--model kraft)")
    from checker.outputs import check_outputs
    check_outputs(files=[("--trace-out", args.trace_out)], dirs=[("--simulate-out", args.simulate_out)],
                  inputs=[("a trace of --traces", t) for t in args.traces or []])
    definition = load_definition(args.model)
    jars = resolve_classpath(args.kafka_classpath)
    adapter_cls = adapter_for(args.model)
    start_jvm(args.kafka_classpath)
    module = importlib.import_module(adapter_cls.__module__)
    variant = args.variant
    if variant is None:
        pick = getattr(module, "default_variant", None)
        variant = pick() if pick is not None else None
    presets = args.preset or list(getattr(module, "PRESETS", definition.presets))
    models = []
    for preset in presets:
        rc = load_config(model=args.model, variant=variant, preset=preset, overrides=args.overrides)
        models.append((preset, rc, rc.build()))
    for preset, rc, model in models:
        adapter_cls(model)  # refuses (ConfigError) what the class path or the adapter cannot represent
    rc0 = models[0][1]
    report = engine.Report(args.model, rc0.variant, presets, args.seed, args.depth, args.swarm, args.steer)
    report.action_kinds = tuple(models[0][2].action_kinds)
    disabled: dict[str, set[str]] = {}
    for _, _, model in models:
        for kind, why in getattr(model, "disabled_actions", lambda: {})().items():
            disabled.setdefault(kind, set()).add(why)
    report.disabled = {k: "; ".join(sorted(v)) for k, v in disabled.items()
                       if all(k in getattr(m, "disabled_actions", lambda: {})() for _, _, m in models)}
    report.abstractions = adapter_cls(models[0][2]).abstractions()
    deadline = time.monotonic() + args.timeout if args.timeout else None
    interrupted_in: str | None = None
    trace_results = []
    if args.traces:
        trace_results = run_traces(args.traces, adapter_cls, report, args.model)
        interrupted_in = "traces" if report.interrupted else None
    if args.walks and report.first is None and not report.interrupted:
        engine.run_walks([(p, m) for p, _, m in models], adapter_cls, args.seed, args.walks, args.depth,
                         args.swarm, report, deadline, negative=args.negative, steer=args.steer)
        interrupted_in = interrupted_in or ("walks" if report.interrupted else None)
    report.traces = trace_results
    sim = None
    if args.simulate and report.first is None and not report.interrupted:
        from checker.conform import kraft_sim
        sim = kraft_sim.simulate(rc0.variant, args.simulate, args.depth, args.seed, args.simulate_out,
                                 stop=engine.stopping)
        report.interrupted = report.interrupted or bool(sim.get("interrupted"))
        interrupted_in = interrupted_in or ("simulations" if sim.get("interrupted") else None)
    parts = part_verdicts(args, report, trace_results, sim, interrupted_in)
    result = whole_verdict(parts, report)
    if args.trace_out and report.first is not None:
        _write_trace(args.trace_out, report, models)
    elif args.trace_out and sim is not None and sim["first_invalid"] is not None:
        from checker.traces import itf
        itf.write(args.trace_out, sim["first_invalid"]["document"])
    elif args.trace_out and any(t.get("document") for t in trace_results):
        from checker.traces import itf
        itf.write(args.trace_out, next(t["document"] for t in trace_results if t.get("document")))
    if args.json:
        out = report_json(report, jars)
        out["traces"] = [{k: v for k, v in t.items() if k != "document"} for t in trace_results]
        if sim is not None:
            out["simulation"] = {k: v for k, v in sim.items() if k != "first_invalid"}
            out["simulation"]["first_invalid"] = None if sim["first_invalid"] is None else {
                k: v for k, v in sim["first_invalid"].items() if k != "document"}
        out["result"], out["parts"] = result, parts
        print(json.dumps(out))
    else:
        print(report_text(report, jars))
        if sim is not None:
            print(simulation_text(sim))
        print(verdict_text(result, parts))
    return verdict_exit(result)


# A part's verdict: what it found. The whole run's `result` is its worst part: a Java exception
# (or the adapter's own), then a difference, then an interruption.
FINDINGS = ("exception", "difference")


def part_verdicts(args: argparse.Namespace, report: engine.Report, traces: list[dict[str, Any]],
                  sim: dict[str, Any] | None, interrupted_in: str | None) -> dict[str, str]:
    """Each part's own verdict: walks, traces, simulations ("not run" where the run did not ask
    for it or stopped before it)."""
    from checker.conform.adapter import EXCEPTION
    from checker.conform.traces import THREW

    first = report.first
    if not args.walks:
        walks = "not run"
    elif first is not None:
        walks = "exception" if first.difference.kind == EXCEPTION else "difference"
    elif interrupted_in == "walks":
        walks = "interrupted"
    elif interrupted_in == "traces":
        walks = "not run: interrupted before"
    else:
        walks = "agree" if report.behaviours else "no walks"
    if not args.traces:
        trace_verdict = "not run"
    elif any(t.get("result") == THREW for t in traces):
        trace_verdict = "exception"
    elif interrupted_in == "traces":
        trace_verdict = "interrupted"
    else:
        trace_verdict = "driven"  # each trace's outcome says where the real code parts from the bug
    if not args.simulate:
        sims = "not run"
    elif sim is None:
        sims = "not run: the walks " + ("were interrupted" if report.interrupted else "found a difference")
    elif sim["first_invalid"] is not None:
        sims = "exception" if sim["first_invalid"]["result"] == "exception" else "invalid"
    elif sim.get("interrupted"):
        sims = "interrupted"
    else:
        sims = "valid"
    return {"walks": walks, "traces": trace_verdict, "simulations": sims}


def whole_verdict(parts: dict[str, str], report: engine.Report) -> str:
    verdicts = set(parts.values())
    if "exception" in verdicts:
        return "exception"
    if verdicts & {"difference", "invalid"}:
        return "difference"
    if "interrupted" in verdicts or report.interrupted:
        return "interrupted"
    if verdicts & {"agree", "valid"}:
        return "agree"
    return "no walks"


def verdict_exit(result: str) -> int:
    if result in FINDINGS:
        return EXIT_VIOLATION
    if result == "interrupted":
        return EXIT_INCOMPLETE
    return EXIT_OK


def verdict_text(result: str, parts: dict[str, str]) -> str:
    return (f"VERDICT of the whole run: {result.upper()} (walks {parts['walks']}; traces {parts['traces']};"
            f" simulations {parts['simulations']})")


def run_traces(paths: list[str], adapter_cls: Any, report: engine.Report, model_name: str) -> list[dict[str, Any]]:
    """Drive the real code along each ITF trace (read against its own variant and config)."""
    from checker.conform import traces

    results = []
    for path in paths:
        if engine.stopping():
            report.interrupted = True
            break
        try:
            result = traces.drive_trace(path, adapter_cls, report, model_name)
        except engine.Stopped:
            report.interrupted = True
            break
        results.append(result)
    return results


def _write_trace(path: str, report: engine.Report, models: list) -> None:
    from checker.traces import itf

    out = report.first
    assert out is not None and out.difference is not None
    label = out.name
    model, rc = next(((m, rc) for p, rc, m in models if f"({p})" in label), (models[0][2], models[0][1]))
    if getattr(out, "model", None) is not None:
        model, rc = out.model, out.rc
    d = out.difference
    meta = itf.run_meta(rc, seed=report.seed, behaviour=label,
                        description=f"the real Kafka code parts from the model: {d.line()}",
                        difference=d.to_json())
    itf.write(path, itf.to_itf(model, out.trail, meta))


def report_json(report: engine.Report, jars: list[str]) -> dict[str, Any]:
    first = report.first
    return {
        "model": report.model, "variant": report.variant, "presets": report.presets, "seed": report.seed,
        "depth": report.depth, "swarm": report.swarm, "steer": report.steer, "behaviours": report.behaviours,
        "steps": report.steps,
        "seconds": round(report.seconds, 3), "steps_per_second": round(report.steps_per_second, 1),
        "action_counts": {k: report.counts[k] for k in report.action_kinds},
        "never_driven": report.never,
        "skipped": dict(report.skipped), "skip_reasons": report.skip_reasons,
        "known_divergences": dict(report.known),
        "negative": {k: {"offered": v["offered"], "refused": v["refused"], "answers": dict(v["answers"])}
                     for k, v in sorted(report.negative.items())},
        "negative_by_kind": engine.negative_by_kind(report.negative),
        "traces": report.traces,
        "interrupted": report.interrupted,
        "result": None,  # the whole run's verdict, set by _run with each part's beside it ("parts")
        "difference": None if first is None else {
            "behaviour": first.name, **first.difference.to_json(),
            "behaviour_so_far": [repr(a) for a, _ in first.trail[1:]]},
        "abstractions": report.abstractions,
        "classpath_jars": len(jars),
        "model_source": model_source().as_json(),
    }


def report_text(report: engine.Report, jars: list[str]) -> str:
    lines = [f"conformance of model {report.model}, variant {report.variant}, with the real code ({len(jars)} jars);"
             f" presets {', '.join(report.presets)}", f"model source: {model_source().text()}"]
    what = f"{report.behaviours} walks (seed {report.seed}, depth {report.depth}{', swarm' if report.swarm else ''}{', steered' if report.steer else ''})"
    lines.append(f"{what}: {report.steps:,} steps in {report.seconds:.1f} s ({report.steps_per_second:.0f} steps/s)")
    lines.append("action kinds driven: " + ", ".join(f"{k} {report.counts[k]:,}" for k in report.action_kinds
                                                     if report.counts[k]))
    never = report.never
    if never:
        lines.append("NEVER driven:")
        lines += [f"  {k}: {why}" for k, why in never.items()]
    if report.skipped:
        lines.append("draws the real code could not take (the walk drew another action): " +
                     ", ".join(f"{k} {n:,}" for k, n in sorted(report.skipped.items())))
    if report.negative:
        lines.append("negative conformance: offered what the model refuses, refused by the real code: " + ", ".join(
            f"{k} {v['refused']:,} of {v['offered']:,}" for k, v in sorted(report.negative.items())))
        lines.append("  by action kind: " + ", ".join(
            f"{k} {v['refused']:,} of {v['offered']:,} ({v['cases']} case{'s' if v['cases'] != 1 else ''})"
            for k, v in engine.negative_by_kind(report.negative).items()))
    if report.traces:
        lines.append("bug variants' traces (a bug's behaviour: the real code must part from it):")
        lines += [f"  {t['path']} ({t['variant']}, {t['steps']} steps): {t['outcome']}" for t in report.traces]
    lines.append(f"abstractions, where the model is coarser than the code (why: {SPEC.get(report.model, 'spec')};"
                 " --json has the reasons):")
    lines.append("  " + "; ".join(report.abstractions))
    for name, n in report.known.items():
        lines.append(f"documented divergence, {n} behaviour(s) ended there: {name}")
    first = report.first
    if first is not None:
        d = first.difference
        kind = {REFUSED: "REFUSED", EXCEPTION: "EXCEPTION", ACCEPTED: "ACCEPTED"}.get(d.kind, "DIFFERENCE")
        lines.append(f"{kind} in {first.name} at step {d.step} ({d.action}):")
        if d.kind == REFUSED:
            lines.append(f"  the real code: {d.reason}")
        elif d.kind in (EXCEPTION, ACCEPTED):
            lines.append(f"  {d.reason}")
        for key, (m, r) in sorted(d.keys.items()):
            lines.append(f"  {key}: model {json.dumps(m)}, real {json.dumps(r)}")
        lines.append("  behaviour so far:")
        lines += [f"    {i}. {a!r}" for i, (a, _) in enumerate(first.trail[1:], 1)]
    elif report.interrupted:
        lines.append(f"INCOMPLETE: interrupted after {report.behaviours} walks ({report.steps:,} steps);"
                     " every step so far agreed")
    elif report.behaviours == 0:
        lines.append("no walks" + (": only the traces above were driven" if report.traces else ""))
    else:
        lines.append(f"AGREE: every step of {report.behaviours} walks agreed with the real code" + (" (but for the documented divergences above)" if report.known else ""))
    return "\n".join(lines)


def simulation_text(sim: dict[str, Any]) -> str:
    """The other direction's lines: simulations of the real nodes, each replayed against the model."""
    counts = ", ".join(f"{k} {n:,}" for k, n in sorted(sim["action_counts"].items()))
    lines = [f"trace validation: {sim['runs']} simulations of the real nodes, {sim['steps']:,} steps"
             f" ({counts}); replayed against the model with --set "
             + " ".join(f"{k}={json.dumps(sim['config'][k])}" for k in ("max_epoch", "max_log", "max_in_flight"))]
    for name, n in sim.get("known", {}).items():
        lines.append(f"documented divergence, {n} simulation(s) ended there: {name}")
    bad = sim["first_invalid"]
    if bad is not None and bad["result"] == "exception":
        lines.append(f"EXCEPTION in simulation seed {bad['seed']} at step {bad['step']} ({bad['action']}):"
                     f" {bad['exception']}; --trace-out writes the states up to it")
    elif bad is not None:
        lines.append(f"TRACE INVALID: simulation seed {bad['seed']}: {bad['result']} at step {bad['step']}"
                     f" ({bad['action']}); --trace-out writes it for kcheck replay")
    elif sim.get("interrupted"):
        lines.append(f"INCOMPLETE: interrupted; {sim['valid']} of {sim['runs']} valid so far")
    else:
        lines.append(f"VALID: all {sim['runs']} recorded traces are behaviours of the model"
                     + (" (up to the documented divergences above)" if sim.get("known") else ""))
    return "\n".join(lines)
