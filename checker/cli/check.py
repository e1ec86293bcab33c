"""`kcheck check`: the exhaustive search of one configuration, its report and its outputs."""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable

from checker import stop
from checker.search.common import Progress, Result
from checker.search.run import explore
from checker.config import ConfigError, RunConfig, clamp_note
from checker.outputs import check_outputs, plugin_inputs, same_file
from checker.provenance import model_source
from checker.traces.render import render_text, trace_json
from checker.selection import select_invariants
from checker.cli.options import (EXIT_INCOMPLETE, EXIT_OK, EXIT_VIOLATION, _config_text, _positive_int,
                                 add_config_arguments, default_workers, nonnegative_int, positive_seconds, process_count,
                                 progress_printer, run_config, spark_conf_pair, spark_confs, with_timeout)

# ---------------------------------------------------------------------------------------------
# kcheck check


def _check_arguments(parser: argparse.ArgumentParser) -> None:
    add_config_arguments(parser)
    parser.add_argument("--max-states", type=_positive_int, metavar="N",
                        help="stop after N distinct states; the result is then 'incomplete' (exit 3)")
    parser.add_argument("--invariant", dest="invariants", action="append", default=[], metavar="NAME",
                        help="check only this invariant (repeatable; default: every invariant)")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.add_argument("--trace-out", metavar="FILE",
                        help="write the counterexample as an ITF trace (JSON) to FILE, if any; see docs/traces.md")
    parser.add_argument("--html", metavar="FILE",
                        help="draw the counterexample, if any, as an HTML page (docs/visual.md)")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 (result 'vacuous') if a sometimes-property is unreached or an action never enabled")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    parser.add_argument("--workers", type=process_count, metavar="N", default=None,
                        help="processes that explore in parallel (default: the cores available, at most 4;"
                             " with --resume, the run's own)")
    parser.add_argument("--timeout", type=positive_seconds, metavar="SECONDS",
                        help="stop the whole run after SECONDS, as Ctrl-C does: partial result, exit 3")
    runs = parser.add_mutually_exclusive_group()
    runs.add_argument("--run-dir", metavar="DIR",
                      help="keep the search's files in DIR (a new or empty directory) and checkpoint it between"
                           " levels, so that an interrupted run can go on with --resume DIR (docs/performance.md)")
    runs.add_argument("--resume", metavar="DIR",
                      help="go on with the run in DIR from its last checkpoint, with its configuration;"
                           " it ends as the uninterrupted run would")
    parser.add_argument("--checkpoint-every", type=positive_seconds, metavar="SECONDS",
                        help="with --run-dir or --resume: checkpoint at the end of a level once SECONDS have"
                             " passed since the last one (default 60)")
    parser.add_argument("--memory-states", type=_positive_int, metavar="N", default=MEMORY_STATES,
                        help="states of one BFS level that each worker keeps in memory; the rest wait on disk"
                             f" (default {MEMORY_STATES:,})")
    parser.add_argument("--engine", choices=("local", "spark"), default="local",
                        help="local (default: forked worker processes) or spark: the search level by level on"
                             " a Spark cluster (docs/performance.md)")
    parser.add_argument("--master", metavar="URL",
                        help="spark engine: local[*] (default) or spark://host:port")
    parser.add_argument("--partitions", type=_positive_int, metavar="P",
                        help="spark engine: partitions of the fingerprint space (default: the default parallelism on a "
                             "local master, 4 x it on a cluster)")
    parser.add_argument("--driver-level", type=nonnegative_int, metavar="N", default=None,
                        help="spark engine: a BFS level of at most N states is expanded on the driver instead of"
                             " by a Spark job (default 5,000; 0: every level on Spark)")
    parser.add_argument("--conf", action="append", type=spark_conf_pair, metavar="KEY=VALUE",
                        help="spark engine: a Spark property for the session this run starts, e.g."
                             " spark.executor.pyspark.memory=512m (repeatable; docs/performance.md)")
    parser.add_argument("--out", metavar="DIR",
                        help="spark engine: write per-level and per-action counts and the run's row as Parquet"
                             " tables in DIR, new or empty (docs/simulate.md, 'Results as data')")
    parser.add_argument("--no-reduce", dest="reduce", action="store_false",
                        help="explore every state the model's actions give, without its stutter reduction"
                             " (see docs/cli.md)")
    parser.add_argument("--por", dest="por", action="store_true", default=False,
                        help="partial-order reduction: expand an ample set of independent actions instead of every"
                             " enabled one (one process; see docs/cli.md)")
    parser.add_argument("--no-por", dest="por", action="store_false",
                        help="explore every enabled action (the default)")
    parser.add_argument("--rounds", type=_positive_int, metavar="N",
                        help="search breadth first over the model's rounds (coarse steps made of its own actions)"
                             " to N rounds instead of over single actions: deeper stories, no verdict on the"
                             " interleavings rounds skip (docs/cli.md)")
    parser.add_argument("--no-liveness", dest="liveness", action="store_false",
                        help="skip the liveness pass (temporal properties under fairness; see docs/liveness.md)")
    parser.add_argument("--liveness-max-states", type=_positive_int, metavar="N", default=LIVENESS_MAX_STATES,
                        help="skip the liveness pass, with a warning, when the safety pass or the liveness graph"
                             f" passes N states (default {LIVENESS_MAX_STATES:,})")


def _variant_note(rc: RunConfig, result: str) -> str:
    """For a bug variant that passed on another preset than its own: where its bug is expected."""
    declared = next((v for v in rc.definition.variants if v.name == rc.variant), None)
    if result != "ok" or declared is None or declared.expect == "holds" or rc.preset == declared.preset:
        return ""
    return (f"variant {rc.variant}'s bug is expected to break {declared.expect} on preset {declared.preset},"
            f" not on {rc.preset}: try --preset {declared.preset}")


MEMORY_STATES = 1_000_000  # a level's queue per worker past which states wait on disk: a few hundred MB
LIVENESS_MAX_STATES = 1_000_000  # the pass keeps its whole graph: a few minutes and a few hundred MB


def _liveness_pass(args: argparse.Namespace, model: Any, r: Result) -> tuple[Any, str]:
    """The liveness pass after a safety pass that explored everything: (result or None, why
    it was skipped). Past `--liveness-max-states` the pass is skipped, not incomplete: the
    safety verdict stands, and a warning (with --strict, result `vacuous`) says so."""
    from checker.search.liveness import check_liveness, temporal_properties

    if not temporal_properties(model):
        return None, ""
    if not args.liveness:
        return None, "--no-liveness"
    if getattr(args, "rounds", None):
        return None, "--rounds (the pass needs every reachable state)"
    if r.result != "ok":
        return None, "the safety pass did not end ok"
    limit = args.liveness_max_states
    if r.distinct_states > limit:
        return None, (f"the safety pass explored {r.distinct_states:,} states, more than --liveness-max-states"
                      f" {limit:,}")
    progress = None if args.quiet else (lambda text: print(f"kcheck: {text}", file=sys.stderr, flush=True))
    cap = limit if args.max_states is None else min(limit, args.max_states)
    live = check_liveness(model, max_states=cap, progress=progress, reduce=getattr(args, "reduce", True))
    if live.result == "incomplete" and not live.interrupted and cap == limit and cap != args.max_states:
        return None, f"the liveness graph passed --liveness-max-states {limit:,} states"
    return live, ""


def _expected_states(args: argparse.Namespace, rc: RunConfig) -> int | None:
    """The states this run is expected to find, said before a long one (checker/search/expected.py)."""
    from checker.search.expected import announcement, whole_run_states
    from model import compiled

    # a reduced search (--por) explores fewer states than the whole run's, by an amount not known before
    whole = whole_run_states(rc, args.reduce) if args.rounds is None and not args.por else None
    if whole is None:
        return None
    if args.max_states is not None and args.max_states < whole:
        return args.max_states
    if not args.quiet and args.engine == "local" and not args.resume:  # a resumed run's progress lines say it
        said = announcement(rc, whole, compiled=any(m.startswith("model.") for m in compiled.in_use()))
        if said:
            print(f"kcheck: {said}", file=sys.stderr, flush=True)
    return whole


def check_report(rc: RunConfig, model: Any, r: Result, result: str, live: Any = None) -> dict[str, Any]:
    """The `--json` object of a check."""
    out: dict[str, Any] = {
        "model": rc.model,
        "variant": rc.variant,
        "preset": rc.preset,
        "config_file": rc.file,
        "config": dict(rc.config),
        "clamped": rc.clamped,
        "plugins": _plugins(),
        "result": result,
        "invariants": [p.name for p in model.properties if p.kind == "always"],
        "distinct_states": r.distinct_states,
        "states_generated": r.states_generated,
        "depth": r.depth,
        "seconds": round(r.seconds, 3),
        "states_per_second": round(r.states_per_second, 1),
        "workers": r.workers,
        "reduction": r.reduction,
        "partial_order": r.por,  # None without --por (checker/search/por.py)
        "unreached": r.unreached,
        "never_enabled": r.never_enabled,
        "disabled_by_config": r.disabled,
        "action_counts": r.action_counts,
        "max_states": r.max_states,
        # a stop in the liveness pass stops the run as one in the safety pass does
        "interrupted": r.interrupted or (live is not None and live.interrupted),
        "violation": None,
        "model_source": model_source().as_json(),
    }
    if r.violation is not None:
        out["violation"] = {
            "kind": "safety",
            "invariant": r.violation["invariant"],
            "description": r.violation["description"],
            "trace": trace_json(model, r.violation["trace"]),
        }
    out["liveness"] = None
    if live is not None:
        from checker.search.liveness import liveness_report

        out["liveness"] = liveness_report(live)
        bad = live.violation
        if bad is not None and bad.counterexample is not None:
            trace, loop = bad.counterexample
            out["violation"] = {
                "kind": "liveness",
                "invariant": bad.name,
                "property_kind": bad.kind,
                "description": bad.description,
                "trace": trace_json(model, trace),
                "loop": loop,
            }
    return out


def _por_text(por: dict[str, Any]) -> str:
    """What --por did: how many expanded states took an ample set, and what the full search settled."""
    text = f"ample sets at {por['reduced']:,} of {por['expanded']:,} states expanded"
    if por.get("settled_by_full_search"):
        text += (f"; the reduced search ({por['reduced_distinct_states']:,} states) left "
                 f"{', '.join(por['settled_by_full_search'])}: the figures above are the full search's")
    return text


def _plugins() -> list[dict[str, str]]:
    """The plugins in force (file, SHA-256): what the run checked besides the built-in model."""
    from checker import plugin

    return plugin.provenance()


def _summary(report: dict[str, Any], model: Any, r: Result, live: Any = None) -> str:
    def names(items: list[str]) -> str:
        return ", ".join(items) if items else "none"

    result = report["result"]
    if report["interrupted"]:
        result += " (interrupted)"
    elif report["result"] == "incomplete":
        result += f" (stopped at --max-states {r.max_states}; unexplored queue: {r.queue:,})"
    elif report.get("variant_note"):
        result += f" ({report['variant_note']})"
    lines = [
        f"model:            {report['model']}",
        f"model source:     {model_source().text()}",
        f"variant:          {report['variant']}",
    ] + [f"plugin:           {p['file']} (sha256 {p['sha256'][:16]})" for p in report.get("plugins") or []] + [
        f"preset:           {report['preset']}" + (f" + {report['config_file']}" if report["config_file"] else ""),
        f"config:           {_config_text(report['config'], report['model'])}{clamp_note(report['clamped'])}",
        f"result:           {result}",
        f"distinct states:  {r.distinct_states:,}",
        f"states generated: {r.states_generated:,}",
        f"depth:            {r.depth}" + (f" rounds (--rounds {report['rounds']}: a search by rounds, not by"
                                                 " single actions)" if report.get("rounds") else ""),
        f"seconds:          {r.seconds:.2f}",
        f"states/s:         {r.states_per_second:,.0f} ({r.workers} worker{'s' if r.workers > 1 else ''})",
        f"reduction:        {r.reduction or 'none'}",
    ] + ([f"partial order:    {_por_text(r.por)}"] if r.por is not None else []) + [
        f"unreached:        {names(r.unreached)}",
        f"never enabled:    {names(r.never_enabled)}",
        f"off by config:    {names([f'{k} ({why})' for k, why in r.disabled.items()])}",
        "action counts:    " + " ".join(f"{k}={v:,}" for k, v in r.action_counts.items()),
    ]
    if live is not None:
        from checker.search.liveness import liveness_lines

        lines.extend(liveness_lines(live))
    elif report["liveness_skipped"]:
        lines.append(f"liveness:         skipped ({report['liveness_skipped']})")
    if r.violation is not None:
        steps = len(r.violation["trace"]) - 1
        lines.append("")
        lines.append(f"counterexample: invariant {r.violation['invariant']} violated after {steps} step(s)")
        lines.append(render_text(model, r.violation["trace"], r.violation["invariant"], r.violation["description"]))
    bad = live.violation if live is not None else None
    if bad is not None and bad.path is not None:
        lines.append("")
        lines.append(f"counterexample: {bad.kind.replace('_', ' ')} {bad.name} violated after {len(bad.path) - 1}"
                     " step(s), in a behaviour where timers expire only when their cause holds")
        lines.append(render_text(model, bad.path, bad.name, bad.description))
    if bad is not None and bad.lasso is not None:
        lasso = bad.lasso
        lines.append("")
        cycle = len(lasso.trace) - 1 - lasso.loop
        shape = ("the last state repeats forever" if lasso.stutter else f"a cycle of {cycle} step(s) repeats forever")
        lines.append(f"counterexample: liveness property {bad.name} ({bad.kind}) violated: a fair behaviour of"
                     f" {lasso.loop} step(s), then {shape}")
        lines.append(render_text(model, lasso.trace, bad.name, bad.description, loop=lasso.loop))
    return "\n".join(lines)


def _resumed_config(args: argparse.Namespace) -> None:
    """`--resume DIR` with no configuration options: take the run's own (model, variant, preset,
    configuration, invariants, reduction and workers) from its checkpoint."""
    from checker.search import checkpoint

    cp = checkpoint.read(Path(args.resume)) if Path(args.resume).is_dir() else None
    if cp is None:
        return  # explore says what is wrong with the directory
    ident = cp.identity
    if "config" not in ident:
        raise ConfigError(f"--resume {args.resume}: the run there was not started by kcheck check and records no"
                          " configuration; go on with it the way it was started (bench/bench_check.py --resume)")
    if ident.get("plugins") and not args.plugins:
        files = " ".join(f"--plugin {p.get('file')}" for p in ident["plugins"] if isinstance(p, dict))
        raise ConfigError(f"--resume {args.resume}: the run there checked plugin code; go on with it with {files}")
    if not (args.config_file or args.model or args.variant or args.preset or args.overrides):
        args.model, args.variant, args.preset = ident.get("model"), ident.get("variant"), ident.get("preset")
        args.overrides = [f"{k}={json.dumps(v)}" for k, v in ident.get("config", {}).items()]
    if not args.invariants:
        args.invariants = list(ident.get("selected", []))
    if args.reduce and ident.get("reduce") is False:
        args.reduce = False
    if args.workers is None:
        args.workers = cp.workers


def _check_engine_options(args: argparse.Namespace) -> None:
    if args.engine == "local":
        for option, value in (("--master", args.master), ("--partitions", args.partitions), ("--out", args.out),
                              ("--driver-level", args.driver_level), ("--conf", args.conf)):
            if value is not None:
                raise ConfigError(f"{option} needs --engine spark")
    else:
        spark_confs(args.conf)  # a key given two values: bad input before anything starts
        for option, value in (("--resume", args.resume), ("--workers", args.workers)):
            if value is not None:
                raise ConfigError(f"{option} is for --engine local" + ("; with spark use --partitions"
                                                                      if option == "--workers" else ""))


def _explore_on_spark(args: argparse.Namespace, rc: RunConfig, progress: Callable[[Progress], None] | None,
                      out: tuple[str, str] | None = None) -> Result:
    """The search on Spark (checker/search/spark_bfs.py), in a session started for it or the active one."""
    from checker.search.spark_bfs import explore_spark
    from checker.walks.spark import SparkUnavailable, _active_context, default_log_path, guarded, spark_session
    from checker.walks.walker import ModelSpec

    spec = ModelSpec.of(rc.model, rc.config, rc.variant, args.invariants)
    try:
        with guarded():  # a stop: the search's partial result (checker/search/spark_bfs.py), no Py4J traceback
            owned = _active_context() is None
            session = spark_session(args.master, app_name="kcheck-check", conf=spark_confs(args.conf))
            try:
                stop.check()  # a stop while the session started
                args.spark_master = session.sparkContext.master  # --out's run row names it
                if not args.quiet and owned:
                    print(f"kcheck: check: Spark {session.version} on {session.sparkContext.master}; JVM log in"
                          f" {default_log_path()}", file=sys.stderr, flush=True)
                return explore_spark(session.sparkContext, spec, max_states=args.max_states,
                                     partitions=args.partitions, run_dir=args.run_dir, reduce=args.reduce,
                                     progress=progress, out=out, **({} if args.driver_level is None else
                                                                    {"driver_level": args.driver_level}))
            finally:
                if owned:
                    session.stop()
    except SparkUnavailable as e:
        stop.check()  # or a stop failed the job
        raise ConfigError(str(e)) from None


def _por_options(args: argparse.Namespace) -> None:
    """--por: the one-process search only, and only on the model's own actions (a plugin may change
    what an action reads, which the model's footprints do not say)."""
    if not args.por:
        return
    for option, given in (("--engine spark", args.engine == "spark"),
                          ("--workers", args.workers is not None and args.workers > 1),
                          ("--run-dir", args.run_dir is not None), ("--resume", args.resume is not None),
                          ("--rounds", args.rounds is not None), ("--plugin", bool(args.plugins))):
        if given:
            raise ConfigError(f"--por does not apply with {option}: the reduced search runs in one process, without"
                              " checkpoints, on the model's own actions (use --no-por)")


def _rounds_options(args: argparse.Namespace) -> None:
    if args.rounds is None:
        return
    for option, given in (("--engine spark", args.engine == "spark"), ("--workers", args.workers is not None),
                          ("--run-dir", args.run_dir is not None), ("--resume", args.resume is not None)):
        if given:
            raise ConfigError(f"{option} does not apply to --rounds (the round search runs in one process,"
                              " without checkpoints)")


def _search_by_rounds(args: argparse.Namespace, model: Any) -> Result:
    """kcheck check --rounds N: checker/search/rounds.py."""
    from checker.search.rounds import NoRounds, RoundProgress, round_search

    def report(p: RoundProgress) -> None:
        print(f"kcheck: {p.distinct_states:,} distinct, round {p.depth}, queue {p.queue:,}, {p.seconds:.0f}s",
              file=sys.stderr, flush=True)

    try:
        return round_search(model, args.rounds, max_states=args.max_states, progress=None if args.quiet else report)
    except NoRounds as e:
        raise ConfigError(f"--rounds: {e}; search it by single actions (without --rounds)") from None


CHECKPOINT_EVERY = 60.0  # seconds between checkpoints: a few seconds of writing an hour at most


def _run_check(args: argparse.Namespace) -> int:
    _check_engine_options(args)
    if args.checkpoint_every is not None and not (args.run_dir or args.resume):
        raise ConfigError("--checkpoint-every needs --run-dir DIR or --resume DIR: without a run directory"
                          " there are no checkpoints")
    _rounds_options(args)
    if args.resume:
        _resumed_config(args)
    _por_options(args)
    if args.workers is None and args.engine == "local" and args.rounds is None:
        args.workers = 1 if args.por else default_workers()
    rc = run_config(args)
    check_outputs(files=[("--trace-out", args.trace_out), ("--html", args.html)], dirs=[("--out", args.out)],
                  inputs=[("the config file", args.config_file), ("the run directory", args.run_dir or args.resume),
                          *plugin_inputs(args.plugins)])
    out = None
    if args.out:
        from checker.walks.results import check_out_dir, model_source_digest, run_id

        check_out_dir(args.out)
        if args.run_dir and same_file(args.out, args.run_dir):
            raise ConfigError(f"--out {args.out}: is also --run-dir: give the tables a folder of their own")
        source = model_source_digest(rc.model)
        out = (os.path.abspath(args.out), run_id({"model": rc.model, "variant": rc.variant, "preset": rc.preset,
                                 "config": dict(rc.config), "plugins": [p["sha256"] for p in _plugins()],
                                 "source": source, "invariants": sorted(args.invariants), "reduce": args.reduce,
                                 "max_states": args.max_states}))
    model = select_invariants(rc.build(), args.invariants)
    total = _expected_states(args, rc)
    progress = None if args.quiet else progress_printer(sys.stderr, total)
    run_dir = args.run_dir or args.resume
    identity = {"model": rc.model, "variant": rc.variant, "preset": rc.preset, "config": dict(rc.config),
                "selected": sorted(args.invariants)}
    if args.plugins:  # a resumed run must check the same plugin code
        identity["plugins"] = _plugins()
    if args.rounds is not None:
        r = _search_by_rounds(args, model)
    elif args.engine == "spark":
        r = _explore_on_spark(args, rc, progress, out)
    else:
        try:
            r = explore(model, max_states=args.max_states, progress=progress, workers=args.workers,
                        reduce=args.reduce, run_dir=run_dir, resume=bool(args.resume), identity=identity,
                        checkpoint_every=args.checkpoint_every or CHECKPOINT_EVERY, keep=args.memory_states,
                        por=args.por)
        except OSError as e:  # the run directory (or $TMPDIR) cannot hold the search's files
            where = f"--run-dir {run_dir}" if run_dir else "the temporary directory ($TMPDIR)"
            raise ConfigError(f"cannot keep the search's files in {where}: {e.strerror or e}"
                              + (f" ({e.filename})" if e.filename else "")) from None
    live, skipped = _liveness_pass(args, model, r)
    result = r.result
    if result == "ok" and live is not None and live.result != "ok":
        result = {"unreached": "vacuous"}.get(live.result, live.result)
    limited = skipped.startswith("the ") and "--liveness-max-states" in skipped
    if result == "ok" and args.strict and (r.unreached or r.never_enabled or limited):
        result = "vacuous"
    report = check_report(rc, model, r, result, live)
    if run_dir and report["interrupted"]:  # resuming redoes the liveness pass, which keeps no checkpoint
        print(f"kcheck: the run can go on from its last checkpoint: kcheck check --resume {run_dir}",
              file=sys.stderr, flush=True)
    report["rounds"] = args.rounds
    report["liveness_skipped"] = skipped
    report["variant_note"] = _variant_note(rc, result)
    if out is not None:
        from checker.walks.results import CHECK_RUN, command_line, write_table

        write_table(os.path.join(args.out, "run"), CHECK_RUN, [(
            out[1], command_line(args), "spark", f"spark ({getattr(args, 'spark_master', '?')})", rc.model, rc.variant, rc.preset,
            json.dumps(dict(rc.config), sort_keys=True), source, json.dumps(_plugins()), result,
            r.distinct_states, r.states_generated, r.depth, round(r.seconds, 3))])
    if args.json:
        print(json.dumps(report))
    else:
        print(_summary(report, model, r, live))
    if r.result == "ok":
        for name in r.unreached:
            print(f"kcheck: WARNING: sometimes-property {name} was never reached: the pass may be vacuous",
                  file=sys.stderr)
        for kind in r.never_enabled:
            print(f"kcheck: WARNING: action {kind} was never enabled", file=sys.stderr)
        if limited:
            print(f"kcheck: WARNING: the temporal properties were not checked: {skipped}", file=sys.stderr)

    if args.trace_out and r.violation is not None:
        from checker.traces import itf

        meta = itf.run_meta(rc, invariant=r.violation["invariant"], description=r.violation["description"])
        itf.write(args.trace_out, itf.to_itf(model, r.violation["trace"], meta))
    elif args.trace_out and live is not None and live.violation is not None and live.violation.counterexample:
        from checker.traces import itf

        bad = live.violation
        trace, loop = bad.counterexample
        meta = itf.run_meta(rc, invariant=bad.name, description=bad.description, kind="liveness",
                            property_kind=bad.kind)
        itf.write(args.trace_out, itf.to_itf(model, trace, meta, loop=loop))
    if args.html:
        _write_html(args.html, rc, model, r, live)

    return {"ok": EXIT_OK, "violation": EXIT_VIOLATION, "vacuous": EXIT_VIOLATION}.get(result, EXIT_INCOMPLETE)


def _write_html(path: str, rc: RunConfig, model: Any, r: Result, live: Any) -> None:
    """The counterexample's page (checker/view/page.py), or a note that there is none."""
    from checker.view.page import trace_page, write_page

    meta = {"model": rc.model, "variant": rc.variant, "preset": rc.preset, "config": dict(rc.config)}
    title = f"{rc.model} {rc.variant}"
    if r.violation is not None:
        v = r.violation
        page = trace_page(model, v["trace"], title=f"{title}: {v['invariant']} violated", meta=meta,
                          invariant=v["invariant"], description=v["description"])
    elif live is not None and live.violation is not None and live.violation.counterexample:
        bad = live.violation
        trace, loop = bad.counterexample
        page = trace_page(model, trace, title=f"{title}: {bad.name} violated", meta=meta, invariant=bad.name,
                          description=bad.description, kind=bad.kind, loop=loop)
    else:
        print(f"kcheck: no counterexample: {path} not written", file=sys.stderr)
        return
    write_page(path, page)
    print(f"kcheck: wrote {path}", file=sys.stderr)


run = with_timeout(_run_check)
add_arguments = _check_arguments
