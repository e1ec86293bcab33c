"""`kcheck simulate`: seeded random walks, in one process, a process pool, or on Spark.

    kcheck simulate [CONFIG.toml] [--model M] [--variant V] [--preset P] [--set K=V]... [--invariant NAME]...
                    [--walks N] [--depth D] [--seed S] [--swarm] [--guided [--rounds R] [--corpus K] [--cells abstract|state [--novelty]]]
                    [--engine local|spark] [--processes P] [--master URL] [--partitions P]
                    [--json] [--trace-out FILE] [--no-shrink] [--quiet]

Exit codes: 0 no violation found; 1 a violation (each broken invariant's walk, shrunk, printed);
2 bad input (one line on stderr). Walk w of seed s takes the same path on every engine, so the
result is the same for any --processes / --partitions / cluster (see docs/simulate.md).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any, Callable, Iterator

from checker import stop
from checker.config import ConfigError, RunConfig, clamp_note, config_text, load_definition
from checker.provenance import model_source
from checker.walks.guided import DEFAULT_CORPUS, DEFAULT_ROUNDS, RoundInfo, run_guided
from checker.traces.render import render_text, trace_json
from checker.walks.shrink import shrink_walk
from checker.walks.walker import DISTINCT_MODES, OUTCOMES, ModelSpec, RoundPlan, Summary, Violation, Walker, summarize, walker_for

EXIT_OK, EXIT_VIOLATION, EXIT_BAD_INPUT = 0, 1, 2
DEFAULT_WALKS, DEFAULT_DEPTH, DEFAULT_SEED = 1000, 100, 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `kcheck simulate` (the shared config options come from checker.cli)."""
    from checker.cli.options import add_config_arguments, nonnegative_int, positive_int, process_count, spark_conf_pair

    add_config_arguments(parser)
    parser.add_argument("--invariant", dest="invariants", action="append", default=[], metavar="NAME",
                        help="check only this invariant (repeatable; default: every invariant)")
    parser.add_argument("--walks", type=positive_int, default=DEFAULT_WALKS, metavar="N",
                        help=f"number of random walks; with --guided, per round (default {DEFAULT_WALKS})")
    parser.add_argument("--depth", type=positive_int, default=DEFAULT_DEPTH, metavar="D",
                        help=f"maximum steps per walk (default {DEFAULT_DEPTH}); with --guided, after its start")
    parser.add_argument("--seed", type=nonnegative_int, default=DEFAULT_SEED, metavar="S",
                        help=f"the run's seed; walk w's RNG is seeded from (S, w) (default {DEFAULT_SEED})")
    parser.add_argument("--swarm", action="store_true",
                        help="swarm mode: each walk draws its own per-action-kind weights")
    parser.add_argument("--guided", action="store_true",
                        help="guided search: rounds of walks, each round's walks starting from rarely "
                             "reached abstract cells of the earlier rounds (docs/simulate.md)")
    parser.add_argument("--rounds", type=positive_int, metavar="R",
                        help=f"--guided: at most R rounds of --walks walks (default {DEFAULT_ROUNDS}); "
                             "the search stops after the first round with a violation")
    parser.add_argument("--corpus", type=positive_int, metavar="K",
                        help=f"--guided: start points drawn per round (default {DEFAULT_CORPUS}, at most --walks)")
    parser.add_argument("--cells", choices=("abstract", "state"),
                        help="--guided: a cell is a state's abstract protocol phase (default) or the state "
                             "itself, so every distinct state visited is kept as a start point (small "
                             "configurations: memory grows with the distinct states)")
    parser.add_argument("--novelty", action="store_true",
                        help="--guided --cells state: every step prefers an action leading to a state not "
                             "yet found (each step computes every successor, as BFS does)")
    parser.add_argument("--engine", choices=("local", "spark"),
                        help="local (default) or spark (the default with --master or under spark-submit)")
    parser.add_argument("--processes", type=process_count, metavar="P",
                        help="local engine: a pool of P worker processes (default 1: this process)")
    parser.add_argument("--master", metavar="URL",
                        help="spark engine: local[*] (default; under spark-submit, its --master), "
                             "local[N] or spark://host:port")
    parser.add_argument("--partitions", type=positive_int, metavar="P",
                        help="spark engine: number of partitions (default 4 x the default parallelism)")
    parser.add_argument("--conf", action="append", type=spark_conf_pair, metavar="KEY=VALUE",
                        help="spark engine: a Spark property for the session this run starts, e.g."
                             " spark.executor.memory=2g (repeatable)")
    parser.add_argument("--distinct", choices=DISTINCT_MODES, default="exact",
                        help="count distinct states across walks exactly (default; memory grows with "
                             "them), estimate them with HyperLogLog (0.81%% std. error, 16 KiB), or not")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.add_argument("--trace-out", metavar="FILE",
                        help="write the shortest shrunk counterexample as an ITF trace (JSON) to FILE, if any")
    parser.add_argument("--html", metavar="FILE",
                        help="draw the shortest shrunk counterexample, if any, as an HTML page (docs/visual.md)")
    parser.add_argument("--out", metavar="DIR",
                        help="write the results as Parquet tables in DIR, new or empty: a row per walk, per "
                             "violation (its trace beside it) and the run's (docs/simulate.md, 'Results as data')")
    parser.add_argument("--no-shrink", action="store_true", help="report violating walks as found, unshrunk")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register `simulate` on an argparse subparsers object (checker.cli uses `add_arguments`)."""
    parser = subparsers.add_parser("simulate", help="random walks, locally or on Spark",
                                   description="random walks, locally or on Spark")
    add_arguments(parser)
    return parser


# --- engines ---------------------------------------------------------------------------------------

ProgressFn = Callable[[int, int, float], None]  # walks done, steps done, seconds


def _chunks(walks: int, size: int) -> Iterator[range]:
    for start in range(0, walks, size):
        yield range(start, min(start + size, walks))


def _run_chunk(job: tuple) -> Summary:
    spec, seed, ids, depth, swarm, distinct, plan, rows = job
    return summarize(spec.build(), seed, ids, depth, swarm, distinct, plan=plan, rows=rows)


def _plugins() -> list[dict[str, str]]:
    """The plugins in force (file, SHA-256): what the walks ran besides the built-in model."""
    from checker import plugin

    return plugin.provenance()


def run_local(spec: ModelSpec, seed: int, walks: int, depth: int, *, swarm: bool = False,
              processes: int = 1, distinct: str = "exact", progress: ProgressFn | None = None,
              model: Any = None, plan: RoundPlan | None = None, walker: Walker | None = None,
              pool: Any = None, rows: bool = False) -> tuple[Summary, int | None]:
    """Walks 0..walks-1 in this process, or in a pool of `processes` (blocks of walk ids).
    Returns the Summary and the number of distinct states (exact, estimated or None, by `distinct`).
    `plan`: one guided round (checker.walks.guided); `walker` / `pool`: reused across rounds.
    `rows`: the Summary keeps a WalkRow per walk (`--out`)."""
    start = time.monotonic()
    total = Summary(rows=[] if rows else None)
    last = start
    if processes <= 1:
        walker = walker or walker_for(model if model is not None else spec.build(), distinct)
        for ids in _chunks(walks, 100):
            total.merge(summarize(walker.model, seed, ids, depth, swarm, walker=walker, plan=plan, rows=rows))
            now = time.monotonic()
            if progress is not None and now - last >= 1.0:
                progress(total.walks, total.steps, now - start)
                last = now
        return total, total.distinct_states()[0]
    import multiprocessing

    size = max(1, min(500, walks // (processes * 8) or 1))
    jobs = [(spec, seed, ids, depth, swarm, distinct, plan, rows) for ids in _chunks(walks, size)]
    owned = pool is None
    if owned:
        pool = multiprocessing.get_context().Pool(processes)
    try:
        for s in pool.imap_unordered(_run_chunk, jobs):
            total.merge(s)
            now = time.monotonic()
            if progress is not None and now - last >= 1.0:
                progress(total.walks, total.steps, now - start)
                last = now
    finally:
        if owned:
            pool.close()
            pool.join()
    return total, total.distinct_states()[0]


def _progress_printer(engine: str, total: int) -> ProgressFn:
    def report(walks: int, steps: int, seconds: float) -> None:
        rate = steps / seconds if seconds > 0 else 0.0
        print(f"kcheck: simulate ({engine}): {walks:,}/{total:,} walks, {steps:,} steps, {rate:,.0f} steps/s, "
              f"{seconds:.0f}s", file=sys.stderr, flush=True)

    return report


# --- the command -----------------------------------------------------------------------------------


def _check_options(args: argparse.Namespace) -> str:
    under_spark_submit = "PYSPARK_GATEWAY_PORT" in os.environ
    engine = args.engine or ("spark" if args.master or under_spark_submit else "local")
    if engine == "local":
        for option, value in (("--master", args.master), ("--partitions", args.partitions), ("--conf", args.conf)):
            if value is not None:
                raise ConfigError(f"{option} needs --engine spark")
    elif args.processes is not None:
        raise ConfigError("--processes is for --engine local; with spark use --partitions")
    else:
        from checker.cli.options import spark_confs

        spark_confs(args.conf)  # a key given two values: bad input before anything starts
    if not args.guided:
        for option, value in (("--rounds", args.rounds), ("--corpus", args.corpus), ("--cells", args.cells)):
            if value is not None:
                raise ConfigError(f"{option} needs --guided")
    if args.novelty and (not args.guided or args.cells != "state"):
        raise ConfigError("--novelty needs --guided --cells state")
    from checker.outputs import check_outputs, plugin_inputs

    from checker.walks.results import check_out_dir

    check_outputs(files=[("--trace-out", args.trace_out), ("--html", args.html)], dirs=[("--out", args.out)],
                  inputs=[("the config file", args.config_file), *plugin_inputs(args.plugins)])
    check_out_dir(args.out)
    return engine


def _round_printer(engine: str) -> Callable[[RoundInfo], None]:
    def report(i: RoundInfo) -> None:
        start = f"corpus {i.corpus}" if i.corpus else "initial states"
        print(f"kcheck: simulate ({engine}, guided): round {i.round + 1}/{i.rounds} from {start}: {i.walks:,} walks, "
              f"{i.steps:,} steps, {i.cells:,} cells (+{i.new_cells:,}), "
              f"{i.violations} invariant(s) broken, {i.seconds:.0f}s", file=sys.stderr, flush=True)

    return report


def _guided_local(args: argparse.Namespace, spec: ModelSpec, model: Any, processes: int,
                  on_round: Callable[[RoundInfo], None] | None) -> tuple[Summary, int | None, dict]:
    """Guided rounds on the local engine: one walker (its caches) or one pool for every round."""
    walker = walker_for(model, args.distinct) if processes <= 1 else None
    pool = None
    if processes > 1:
        import multiprocessing

        pool = multiprocessing.get_context().Pool(processes)
    try:
        summary, info = run_guided(
            lambda plan, n: run_local(spec, args.seed, n, args.depth, swarm=args.swarm, processes=processes,
                                      distinct=args.distinct, model=model, plan=plan, walker=walker,
                                      pool=pool, rows=bool(args.out))[0],
            args.seed, args.rounds or DEFAULT_ROUNDS, args.walks, corpus=args.corpus or DEFAULT_CORPUS,
            progress=on_round, state_cells=args.cells == "state", novelty=args.novelty)
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    return summary, summary.distinct_states()[0], info


def _run_spark(args: argparse.Namespace, spec: ModelSpec, progress: ProgressFn | None,
               on_round: Callable[[RoundInfo], None] | None = None,
               out: tuple | None = None) -> tuple[Summary, int, str, float, dict | None]:
    """Walks (or guided rounds) on Spark; the seconds returned exclude starting and stopping the session.
    A stop (Ctrl-C, SIGTERM) cancels the jobs and ends it with KeyboardInterrupt (checker/stop.py)."""
    from checker.walks.spark import SparkUnavailable, guarded

    try:
        with guarded():
            result = _on_spark(args, spec, progress, on_round, out)
    except SparkUnavailable as e:
        stop.check()  # or a stop failed the job
        raise ConfigError(str(e)) from None
    stop.check()
    return result


def _on_spark(args: argparse.Namespace, spec: ModelSpec, progress: ProgressFn | None,
              on_round: Callable[[RoundInfo], None] | None,
              out: tuple | None = None) -> tuple[Summary, int, str, float, dict | None]:
    from checker.cli.options import spark_confs
    from checker.walks.spark import _active_context, count_distinct, default_log_path, run_spark, spark_session

    info = None
    owned = _active_context() is None
    session = spark_session(args.master, conf=spark_confs(args.conf))  # None: local[*], or spark-submit's --master
    master = session.sparkContext.master  # an active context (e.g. a test's) is reused as is
    try:
        stop.check()  # a stop while the session started
        if not args.quiet and owned:
            print(f"kcheck: simulate: Spark {session.version} on {master}; JVM log in {default_log_path()}",
                  file=sys.stderr, flush=True)
        start = time.monotonic()
        sc = session.sparkContext
        if args.guided:
            kept: list = []
            exact = args.distinct == "exact"
            summary, info = run_guided(
                lambda plan, n: run_spark(sc, spec, args.seed, n, args.depth, swarm=args.swarm,
                                          partitions=args.partitions, distinct=args.distinct, plan=plan,
                                          fingerprints=kept if exact else None, out=out)[0],
                args.seed, args.rounds or DEFAULT_ROUNDS, args.walks, corpus=args.corpus or DEFAULT_CORPUS,
                progress=on_round, state_cells=args.cells == "state", novelty=args.novelty)
            distinct = count_distinct(sc, kept, args.partitions) if exact else summary.distinct_states()[0]
        else:
            summary, distinct = run_spark(sc, spec, args.seed, args.walks, args.depth,
                                          swarm=args.swarm, partitions=args.partitions,
                                          distinct=args.distinct, progress=progress, out=out)
        seconds = time.monotonic() - start
    finally:
        if owned:
            session.stop()
    return summary, distinct, master, seconds, info


def _violation_report(model: Any, v: Violation, count: int, first: int, shrink: bool,
                      walks_per_round: int | None = None) -> tuple[dict[str, Any], list]:
    stats: dict[str, Any] = {}
    if shrink:
        trace = shrink_walk(model, v.init_index, v.actions, v.invariant, stats=stats)
    else:
        from checker.walks.walker import replay

        trace = replay(model, v.init_index, v.actions)
    description = next((p.description for p in model.properties if p.name == v.invariant), "")
    return {
        "invariant": v.invariant,
        "description": description,
        "walk_id": v.walk_id,
        "violating_walks": count,
        "first_walk_id": first,  # the smallest violating walk id: walks 0..first find it
        "round": v.walk_id // walks_per_round if walks_per_round else 0,  # guided: walk ids are round-major
        "length": v.length,
        "shrunk_length": len(trace) - 1,
        "shortest": bool(stats.get("minimal", False)),  # the bounded BFS proved no shorter trace exists
        "trace": trace_json(model, trace),
    }, trace


def simulate(args: argparse.Namespace) -> tuple[dict[str, Any], list[tuple[dict, list]], Any]:
    """Run the simulation named by `args`; returns (JSON report, [(violation, trace)], model)."""
    from checker.cli.options import run_config

    engine = _check_options(args)
    rc: RunConfig = run_config(args)
    spec = ModelSpec.of(rc.model, rc.config, rc.variant, args.invariants)
    model = spec.build()
    progress = None if args.quiet else _progress_printer(engine, args.walks)
    on_round = None if args.quiet else _round_printer(engine)
    start = time.monotonic()
    info = None
    out = None  # --out: (folder, the columns every walk row shares)
    if args.out:
        from checker.walks.results import model_source_digest, simulation_id, walk_columns

        source = model_source_digest(rc.model)
        rid = simulation_id(rc, args, _plugins(), source)
        out = (os.path.join(os.path.abspath(args.out), "walks"), walk_columns(rid, args.seed, rc.model, rc.preset, rc.variant, source))
    if engine == "local":
        processes = args.processes or 1
        if args.guided:
            summary, distinct, info = _guided_local(args, spec, model, processes, on_round)
        else:
            summary, distinct = run_local(spec, args.seed, args.walks, args.depth, swarm=args.swarm,
                                          processes=processes, distinct=args.distinct, progress=progress,
                                          model=model, rows=bool(args.out))
        where = f"local ({processes} process{'es' if processes > 1 else ''})"
        walk_seconds = time.monotonic() - start
    else:
        summary, distinct, master, walk_seconds, info = _run_spark(args, spec, progress, on_round, out)
        where = f"spark ({master})"
    found = [_violation_report(model, v, summary.violating_walks[v.invariant],
                               summary.first_violating_walk[v.invariant], not args.no_shrink,
                               args.walks if args.guided else None)
             for v in summary.sorted_violations()]
    seconds = time.monotonic() - start
    sometimes = [p.name for p in model.properties if p.kind == "sometimes"]
    report = {
        "model": rc.model,
        "variant": rc.variant,
        "preset": rc.preset,
        "config_file": rc.file,
        "config": dict(rc.config),
        "clamped": rc.clamped,
        "plugins": _plugins(),
        "invariants": [p.name for p in model.properties if p.kind == "always"],  # the ones checked
        "invariants_selected": bool(args.invariants),
        "engine": engine,
        "where": where,
        "seed": args.seed,
        "walks": summary.walks,
        "depth": args.depth,
        "swarm": args.swarm,
        "guided": args.guided,
        "guided_search": None if info is None else {
            "rounds": info["rounds"],  # rounds run (the search stops after the first round with a violation)
            "rounds_requested": args.rounds or DEFAULT_ROUNDS,
            "walks_per_round": info["walks_per_round"],
            "corpus": info["corpus"],  # start points drawn per round after round 0
            "cells": info["cells"],  # cells reached (with "cells_mode" "state": distinct states)
            "cells_mode": args.cells or "abstract",
            "novelty": args.novelty,
            "violation_round": info["violation_round"],
        },
        "result": "violation" if found else "ok",
        "violations": [r for r, _ in found],
        "steps": summary.steps,
        "outcomes": {k: summary.outcomes.get(k, 0) for k in OUTCOMES},
        "action_counts": {k: summary.action_counts.get(k, 0) for k in model.action_kinds}
        | {k: v for k, v in sorted(summary.action_counts.items()) if k not in model.action_kinds},
        "depth_histogram": {str(d): n for d, n in sorted(summary.depth_histogram.items())},
        "sometimes_reached": [n for n in sometimes if n in summary.sometimes_reached],
        "unreached": [n for n in sometimes if n not in summary.sometimes_reached],
        "distinct_states": distinct,
        "distinct_states_method": {"exact": "exact", "hll": "hyperloglog", "none": "none"}[args.distinct],
        "distinct_states_error": round(summary.sketch.relative_error, 6) if summary.sketch else 0.0,
        "walks_per_second": round(summary.walks / walk_seconds, 1) if walk_seconds > 0 else 0.0,
        "steps_per_second": round(summary.steps / walk_seconds, 1) if walk_seconds > 0 else 0.0,
        "walk_seconds": round(walk_seconds, 3),  # the walks alone (no Spark start-up, no shrinking)
        "seconds": round(seconds, 3),  # everything: Spark start-up and shrinking included
        "model_source": model_source().as_json(),
    }
    if out is not None:
        from checker.walks.results import command_line, write_simulation

        write_simulation(args.out, report, found, model, rid, source, command_line(args),
                         summary.rows if engine == "local" else None)
    return report, found, model


def _distinct_text(report: dict[str, Any]) -> str:
    method, n = report["distinct_states_method"], report["distinct_states"]
    if method == "exact":
        return f"{n:,} (exact)"
    if method == "hyperloglog":
        return f"~{n:,} (HyperLogLog estimate, relative std. error {100 * report['distinct_states_error']:.2f}%)"
    return "not counted (--distinct none)"


def _text(report: dict[str, Any], found: list, model: Any) -> str:
    def names(items: list[str]) -> str:
        return ", ".join(items) if items else "none"

    hist = report["depth_histogram"]
    lines = [
        f"model:            {report['model']}",
        f"model source:     {model_source().text()}",
        f"variant:          {report['variant']}",
        *[f"plugin:           {p['file']} (sha256 {p['sha256'][:16]})" for p in report["plugins"]],
        f"config:           " + config_text(load_definition(report["model"]), report["config"])
        + clamp_note(report["clamped"]),
        *([f"invariants:       {', '.join(report['invariants'])} (--invariant)"] if report["invariants_selected"] else []),
        f"engine:           {report['where']}",
        f"seed:             {report['seed']}" + (" (swarm)" if report["swarm"] else ""),
        f"walks:            {report['walks']:,} of depth <= {report['depth']}",
        *([f"guided:           {g['rounds']} of {g['rounds_requested']} round(s) of {g['walks_per_round']:,} walks, "
           f"corpus {g['corpus']}, {g['cells']:,} {'states' if g['cells_mode'] == 'state' else 'cells'} reached"
           + (" (novelty)" if g["novelty"] else "")]
          if (g := report["guided_search"]) else []),
        f"result:           {report['result']}",
        f"steps:            {report['steps']:,}",
        "walk ends:        " + ", ".join(f"{k} {v:,}" for k, v in report["outcomes"].items()),
        f"depths:           min {min(map(int, hist))}, max {max(map(int, hist))}" if hist else "depths:           -",
        "distinct states:  " + _distinct_text(report),
        f"seconds:          {report['seconds']:.2f}",
        f"walks/s, steps/s: {report['walks_per_second']:,.0f}, {report['steps_per_second']:,.0f}",
        f"unreached:        {names(report['unreached'])}",
        "action counts:    " + " ".join(f"{k}={v:,}" for k, v in report["action_counts"].items()),
    ]
    for r, trace in found:
        shortest = ", shortest possible" if r["shortest"] else ""
        lines.append("")
        lines.append(f"counterexample: invariant {r['invariant']} violated by walk {r['walk_id']} "
                     f"({r['violating_walks']:,} violating walk(s), the first walk {r['first_walk_id']}); "
                     f"{r['length']} steps, shrunk to {r['shrunk_length']}{shortest}")
        lines.append(render_text(model, trace, r["invariant"], r["description"]))
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """`kcheck simulate`: 0 no violation found, 1 violation, 2 bad input (one line on stderr)."""
    try:
        report, found, model = simulate(args)
        if (args.trace_out or args.html) and found:
            from checker.traces import itf
            from checker.view.page import trace_page, write_page

            best, trace = min(found, key=lambda rt: (rt[0]["shrunk_length"], rt[0]["invariant"]))
            meta = {"model": report["model"], "variant": report["variant"], "preset": report["preset"],
                    "config": report["config"], "invariant": best["invariant"],
                    "description": best["description"], "seed": report["seed"], "walk_id": best["walk_id"]}
            if args.trace_out:
                itf.write(args.trace_out, itf.to_itf(model, trace, meta))
            if args.html:
                write_page(args.html, trace_page(
                    model, trace, title=f"{report['model']} {report['variant']}: {best['invariant']} violated"
                    f" (walk {best['walk_id']}, seed {report['seed']})", meta=meta, invariant=best["invariant"],
                    description=best["description"]))
        elif args.html:
            print(f"kcheck: no counterexample: {args.html} not written", file=sys.stderr)
    except ConfigError as e:
        print(f"kcheck: error: {' '.join(str(e).splitlines())}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.json:
        print(json.dumps(report))
    else:
        print(_text(report, found, model))
    if not found:
        for name in report["unreached"]:
            print(f"kcheck: WARNING: sometimes-property {name} was never reached by these walks", file=sys.stderr)
    return EXIT_VIOLATION if found else EXIT_OK
