"""`kcheck mutate`: make small mistakes in a model's protocol code, one at a time, and see which
of them the gate's Kafka 4.1 rows notice (docs/mutate.md)."""
from __future__ import annotations

import argparse
import dataclasses
import fnmatch
import json
import random
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from checker.config import ConfigError, load_config
from checker.provenance import model_source

EXIT_OK, EXIT_SURVIVORS, EXIT_INTERRUPTED = 0, 1, 3


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from checker.cli.options import _int_at_least, default_workers, positive_seconds, process_count
    from checker.gate.gate import default_gate_file
    from checker.gate.mutation.operators import OPERATORS

    parser.add_argument("--model", default="replication", help="the model to mutate (default: replication)")
    parser.add_argument("--gate", metavar="FILE",
                        help=f"the gate file whose kafka-4.1 rows of the model judge the mutants (default: {default_gate_file()})")
    parser.add_argument("--presets", metavar="P1,P2",
                        help="judge by Kafka 4.1 on these presets instead of the gate's rows (in this order)")
    parser.add_argument("--only", action="append", default=[], metavar="PATTERN",
                        help="only mutants whose id matches this glob, e.g. '*:leader_hw:*' (repeatable)")
    parser.add_argument("--operator", action="append", default=[], choices=OPERATORS,
                        help="only mutants of this operator (repeatable)")
    parser.add_argument("--sample", type=_int_at_least(1, "positive"), metavar="N",
                        help="a seeded random sample of N mutants")
    parser.add_argument("--seed", type=int, default=0, help="the sample's seed (default 0)")
    parser.add_argument("--baseline", metavar="REPORT.json",
                        help="a full run's --json report: run only mutants it lists as killed, each on the row "
                             "that killed it; exit 1 if one survives (the CI check)")
    parser.add_argument("--max-kill-seconds", type=positive_seconds, default=30.0, metavar="SECONDS",
                        help="with --baseline: only mutants the baseline killed within this time (default 30)")
    parser.add_argument("--budget", type=positive_seconds, default=600.0, metavar="SECONDS",
                        help="time budget per mutant, all rows together (default 600)")
    parser.add_argument("--jobs", type=process_count, default=default_workers(), metavar="N",
                        help="mutants run at once, one process each (default: the cores available)")
    parser.add_argument("--engine", choices=("local", "spark"), default="local",
                        help="run the mutants on a local process pool (default) or on Spark")
    parser.add_argument("--master", metavar="URL", help="Spark master (default local[*]); implies --engine spark")
    parser.add_argument("--judgements", metavar="FILE",
                        help="judgements on known survivors (default: mutants.toml beside the gate file)")
    parser.add_argument("--no-liveness", action="store_true",
                        help="no liveness pass for the survivors (no availability mutants)")
    parser.add_argument("--list", action="store_true", help="list the mutants (id, location, change) and stop")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout instead of the text")
    parser.add_argument("--markdown", metavar="FILE", help="also write a Markdown report to FILE")
    parser.add_argument("--no-matrix", action="store_true", help="text output without the kill matrix")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


def _rows(args: argparse.Namespace, gate_path: Path) -> list[Any]:
    from checker.gate.gate import Row, load_gate

    if args.presets:
        rows = []
        for preset in [p.strip() for p in args.presets.split(",") if p.strip()]:
            load_config(model=args.model, variant="kafka-4.1", preset=preset)  # bad names are bad input
            rows.append(Row(f"{args.model}-kafka-4.1-{preset}", args.model, "kafka-4.1", preset, None, (), "holds",
                            None, None, config_label=preset))
        if not rows:
            raise ConfigError("--presets: no preset given")
        return rows
    rows = [r for r in load_gate(gate_path) if r.model == args.model and r.variant == "kafka-4.1" and not r.is_bug]
    if not rows:
        raise ConfigError(f"{gate_path}: no kafka-4.1 row of model {args.model} to judge mutants by (use --presets)")
    return rows


def _select(args: argparse.Namespace, mutants: list[Any]) -> list[Any]:
    chosen = mutants
    if args.only:
        chosen = [m for m in chosen if any(fnmatch.fnmatchcase(m.id, p) for p in args.only)]
        if not chosen:
            raise ConfigError(f"--only {' '.join(args.only)}: no mutant of model {args.model} matches "
                              "(kcheck mutate --list shows them)")
    if args.operator:
        chosen = [m for m in chosen if m.operator in args.operator]
    if args.sample is not None and args.sample < len(chosen):
        picked = set(random.Random(args.seed).sample(range(len(chosen)), args.sample))
        chosen = [m for i, m in enumerate(chosen) if i in picked]
    return chosen


def _check_outputs(args: argparse.Namespace, gate_path: Path, judgement_path: Path) -> None:
    from checker.gate.gate import load_gate
    from checker.outputs import check_outputs, plugin_inputs

    plugins = [] if args.presets else sorted({p for r in load_gate(gate_path) for p in r.plugins})
    check_outputs(files=[("--markdown", args.markdown)],
                  inputs=[("the gate file", None if args.presets else str(gate_path)),
                          ("the judgements file", str(judgement_path) if judgement_path.is_file() else None),
                          ("the baseline report", args.baseline), *plugin_inputs(plugins)])


def _spark(args: argparse.Namespace) -> Any:
    if args.engine != "spark" and not args.master:
        return None
    from checker.walks.spark import SparkUnavailable, spark_session

    try:
        return spark_session(args.master, app_name="kcheck-mutate")
    except SparkUnavailable as e:
        raise ConfigError(str(e)) from None


def _say(args: argparse.Namespace) -> Any:
    if args.quiet:
        return lambda text: None
    return lambda text: print(f"mutate: {text}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    from checker.search.checkpoint import scratch
    from checker.config import load_definition
    from checker.gate.gate import default_gate_file
    from checker.gate.mutation import judgements as J
    from checker.gate.mutation.analysis import ReferenceFails, all_mutants, analyse, target_of
    from checker.gate.mutation.imports import package_of
    from checker.gate.mutation.report import markdown, text, to_json

    load_definition(args.model)  # an unknown model is bad input
    if args.gate and args.presets:
        raise ConfigError("--gate and --presets exclude each other: with --presets the mutants are judged by"
                          " those presets' rows, and the gate file would be ignored")
    gate_path = Path(args.gate) if args.gate else default_gate_file()
    if not args.presets and not gate_path.is_file():
        raise ConfigError(f"--gate {gate_path}: no such file")
    judgement_path = Path(args.judgements) if args.judgements else J.default_path(gate_path)
    if args.judgements and not judgement_path.is_file():
        raise ConfigError(f"--judgements {judgement_path}: no such file")
    judgements = J.load(judgement_path) if judgement_path.is_file() else []
    _check_outputs(args, gate_path, judgement_path)
    target = target_of(args.model)
    mutants = all_mutants(target)
    if args.list:
        for m in _select(args, mutants):
            print(f"{m.id}\t{m.location}\t{m.before} -> {m.after}")
        return EXIT_OK
    rows = _rows(args, gate_path)
    if args.baseline:
        with scratch("kcheck-mutate-"):
            return _run_baseline(args, target, mutants, rows)
    chosen = _select(args, mutants)
    spark = _spark(args)
    say = _say(args)
    say(f"model {args.model}: {len(chosen)} of {len(mutants)} mutant(s), rows: {', '.join(r.name for r in rows)}")
    engine = "spark" if spark is not None else "local"
    try:
        with scratch("kcheck-mutate-"):
            a = analyse(target, rows, chosen, jobs=args.jobs, engine=engine, spark=spark, budget=args.budget,
                        liveness=not args.no_liveness, say=say, reference_liveness=bool(args.presets))
    except ReferenceFails as e:
        raise ConfigError(str(e)) from None
    applied, stale = J.match(judgements, {m.id: m for m in mutants}, package_of(args.model))
    report = to_json(a, applied, stale, str(gate_path) if not args.presets else f"presets {args.presets}")
    if args.markdown:
        _write(args.markdown, markdown(report))
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        sys.stdout.write(text(report, matrix=not args.no_matrix))
    if a.interrupted:
        return EXIT_INTERRUPTED
    return EXIT_SURVIVORS if report["summary"]["unexplained"] else EXIT_OK


def _write(path: str, data: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(data)
    except OSError as e:
        raise ConfigError(f"--markdown {path}: cannot write: {e.strerror or e}") from e


def _load_baseline(path: str, model: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as e:
        raise ConfigError(f"--baseline {path}: cannot read: {e.strerror or e}") from None
    except ValueError as e:
        raise ConfigError(f"--baseline {path}: not JSON: {e}") from None
    if not isinstance(data, dict) or not isinstance(data.get("mutants"), list) or not isinstance(data.get("rows"), list):
        raise ConfigError(f"--baseline {path}: not a kcheck mutate --json report (no 'mutants' and 'rows' lists)")
    if data.get("model") != model:
        raise ConfigError(f"--baseline {path}: a report on model {data.get('model')!r}, not {model!r} (use --model)")
    return data


def _run_baseline(args: argparse.Namespace, target: Any, mutants: Sequence[Any], rows: Sequence[Any]) -> int:
    """The CI check: mutants the full run killed must still be killed by the row that killed them."""
    from checker.gate.mutation.analysis import BLOWUP, SLACK, kill_task, run_tasks

    data = _load_baseline(args.baseline, args.model)
    say = _say(args)
    current = {m.id: m for m in mutants}
    by_row = {r.name: r for r in rows}
    states = {r["name"]: r.get("kafka_states") for r in data["rows"] if isinstance(r, dict)}
    # what Kafka 4.1 itself never reaches on a row, as the full run recorded it
    misses = {r["name"]: tuple(r.get("kafka_unreached") or ()) + tuple(r.get("kafka_never_enabled") or ())
              for r in data["rows"] if isinstance(r, dict)}
    by_row = {name: dataclasses.replace(r, may_miss=tuple(dict.fromkeys(r.may_miss + misses.get(name, ()))))
              for name, r in by_row.items()}
    killed, skipped = [], []
    for entry in data["mutants"]:
        if not isinstance(entry, dict) or entry.get("status") != "killed" or not isinstance(entry.get("killed_by"), dict):
            continue
        m, row = current.get(entry.get("id")), by_row.get(entry["killed_by"].get("row"))
        recorded = (entry.get("before"), entry.get("after"), entry.get("source_line", m.source_line if m else None))
        if m is None or (m.before, m.after, m.source_line) != recorded:
            skipped.append(f"{entry.get('id')}: the mutant changed since the baseline")
        elif row is None:
            skipped.append(f"{entry.get('id')}: row {entry['killed_by'].get('row')} is not in the gate any more")
        elif entry["killed_by"].get("outcome") == "incomplete":
            skipped.append(f"{entry.get('id')}: its search outgrew the row, which is no longer a kill")
        elif float(entry["killed_by"].get("seconds") or 0) <= args.max_kill_seconds:
            killed.append((m, row, entry["killed_by"]))
    if args.only or args.operator:
        keep = {m.id for m in _select(argparse.Namespace(**{**vars(args), "sample": None}), [m for m, _, _ in killed])}
        killed = [k for k in killed if k[0].id in keep]
    if args.sample is not None and args.sample < len(killed):
        picked = set(random.Random(args.seed).sample(range(len(killed)), args.sample))
        killed = [k for i, k in enumerate(killed) if i in picked]
    for line in skipped:
        say(f"skipped: {line}")
    if not killed:
        raise ConfigError(f"--baseline {args.baseline}: no killed mutant of it can be run against this model and gate")
    say(f"{len(killed)} mutant(s) the baseline kills, each on its killing row")
    caps = {name: (BLOWUP * n + SLACK if isinstance(n, int) else None) for name, n in states.items()}
    tasks = [(kill_task, (target, m, [row], caps, args.budget)) for m, row, _ in killed]
    spark = _spark(args)
    start = time.perf_counter()
    lost: list[str] = []
    results = []
    interrupted = False
    try:
        for index, (mid, attempts, status, seconds) in run_tasks(tasks, args.jobs, "spark" if spark else "local", spark):
            m, row, was = killed[index]
            a = attempts[-1] if attempts else None
            now = f"{a.invariant or a.outcome} ({a.steps} steps)" if a is not None and not a.passed else "survived"
            line = (f"{m.location} {m.id}: baseline {was.get('property') or was.get('outcome')} on {row.name}; "
                    f"now {status}: {now}, {seconds:.1f} s")
            results.append({"id": mid, "row": row.name, "status": status, "seconds": round(seconds, 2),
                            "baseline": was.get("property") or was.get("outcome"),
                            "now": (a.invariant or a.outcome) if a is not None and not a.passed else None})
            say(line)
            if status != "killed":
                lost.append(line)
    except KeyboardInterrupt:  # the mutants run so far, labelled partial; the others are not counted
        interrupted = True
    seconds = time.perf_counter() - start
    if args.json:
        print(json.dumps({"model": args.model, "model_source": model_source().as_json(), "baseline": args.baseline,
                          "mutants": results, "skipped": skipped,
                          "lost": len(lost), "seconds": round(seconds, 1), "interrupted": interrupted,
                          "not_run": len(killed) - len(results)}, indent=1))
    else:
        print(f"model source: {model_source().text()}")
        for line in lost:
            print(f"NOT KILLED: {line}")
        print(f"{len(results) - len(lost)} of {len(results)} mutant(s) the baseline kills are still killed "
              f"({len(skipped)} skipped: changed, or no longer a kill), {seconds:.1f} s"
              + (f"; INTERRUPTED, a partial result: {len(killed) - len(results)} of {len(killed)} not run"
                 if interrupted else ""))
    if interrupted:
        return EXIT_INTERRUPTED
    return EXIT_SURVIVORS if lost else EXIT_OK
