"""`kcheck gate`: run a matrix of (model, variant, configuration, expectation) rows, as a CI gate.

    kcheck gate [GATE.toml] [--junit FILE] [--markdown FILE] [--jobs N] [--only ROW]...
                [--traces DIR | --write-traces DIR] [--json] [--quiet]

A row passes when the exhaustive search ends as expected: a "holds" row must end "ok"; a bug row
must end "violation" of exactly the expected invariant (a bug variant that passes means the
checker went blind: FAIL). A row that hits its `max_states` is "incomplete" and fails.
Exit codes: 0 every row passes; 1 a row fails; 2 bad input (one line, before anything runs);
3 interrupted. The gate file format and the outputs are described in docs/gate.md.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
import xml.etree.ElementTree as ET
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from checker.config import ConfigError, RunConfig, load_config, read_toml
from checker.provenance import model_source
from checker.search.schedule import kind_of

EXIT_OK, EXIT_FAIL, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 3
HOLDS = "holds"
REFERENCE_VARIANT = "kafka-4.1"  # every model's first variant: the protocol as released
ROW_KEYS = ("name", "model", "variant", "preset", "config", "set", "expect", "invariants", "max_states", "workers",
            "liveness", "may_miss", "schedule", "refused_at", "rounds", "plugin")
REQUIRED_KEYS = ("name", "model", "variant", "expect")


def default_gate_file() -> Path:
    """The repo's own gate file: spec/gate.toml next to the checker package (a checkout or an
    editable install), else the copy installed with the package (checker/gate/gate/gate.toml)."""
    here = Path(__file__).resolve().parent
    repo = here.parent.parent / "spec" / "gate.toml"
    return repo if repo.is_file() else here / "gate.toml"


# ---------------------------------------------------------------------------------------------
# The gate file


@dataclass(frozen=True)
class Row:
    """One validated row. Plain data (picklable), so a worker process can rebuild its model."""

    name: str
    model: str
    variant: str
    preset: str
    config_file: str | None  # absolute path, or None
    overrides: tuple[tuple[str, Any], ...]
    expect: str  # "holds" or an invariant name
    max_states: int | None
    workers: int | None  # None: the gate's default
    invariants: tuple[str, ...] = ()  # the invariants checked (empty: all); default the Variant's
    bug_id: str = ""
    variant_description: str = ""
    config_label: str = ""  # the preset, as written in the reports (+ file, + overrides)
    liveness: bool = True  # run the liveness pass after a safety pass that ends ok
    # sometimes-properties and action kinds a "holds" row may leave unreached / never enabled;
    # any other one fails the row (a search that no longer reaches them checks less)
    may_miss: tuple[str, ...] = ()
    # a schedule row replays these actions (reprs) instead of searching (checker/search/schedule.py)
    schedule: tuple[str, ...] = ()
    refused_at: int | None = None  # a "holds" schedule row: the step Kafka 4.1 must refuse (from 1)
    # a round row searches by the model's rounds (checker/search/rounds.py) to this many rounds
    rounds: int | None = None
    # plugin files (absolute) whose variants and properties the row checks (checker/plugin.py)
    plugins: tuple[str, ...] = ()

    @property
    def is_bug(self) -> bool:
        return self.expect != HOLDS

    def run_config(self) -> RunConfig:
        from checker import plugin

        plugin.activate(self.plugins)  # this row's plugins, and no other row's
        return load_config(model=self.model, variant=self.variant, preset=self.preset,
                           path=self.config_file, overrides=dict(self.overrides))


def _where(path: Path, index: int, table: Mapping[str, Any]) -> str:
    name = table.get("name")
    label = f"row {index + 1}" + (f" ({name})" if isinstance(name, str) and name else "")
    return f"gate file {path}: {label}"


def _string(table: Mapping[str, Any], key: str, where: str) -> str | None:
    value = table.get(key)
    if value is not None and (not isinstance(value, str) or not value):
        raise ConfigError(f"{where}: {key!r} must be a non-empty string, got {value!r}")
    return value


def _positive(table: Mapping[str, Any], key: str, where: str) -> int | None:
    value = table.get(key)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ConfigError(f"{where}: {key!r} must be a positive integer, got {value!r}")
    return value


def _typed_overrides(overrides: Mapping[str, Any], definition: Any, where: str) -> None:
    """A row's `set` values are TOML values, typed as in a config file: `brokers = "3"` is a
    string, not the number a `--set brokers=3` would parse it as."""
    types = {k.name: k.type for k in definition.config_keys}
    for key, value in overrides.items():
        if isinstance(value, str) and types.get(key, str) is not str:
            written = value.strip().lower() if types[key] is bool else value.strip()
            raise ConfigError(f"{where}: set: key {key!r} must be a{'n integer' if types[key] is int else ' boolean'},"
                              f" got the string {value!r} (write set = {{{key} = {written}}}, without quotes)")


def _config_label(preset: str, config_file: str | None, overrides: Mapping[str, Any]) -> str:
    label = preset
    if config_file:
        label += f" + {os.path.basename(config_file)}"
    if overrides:
        label += " + " + " ".join(f"{k}={json.dumps(v)}" for k, v in overrides.items())
    return label


def parse_row(path: Path, index: int, table: Any) -> tuple[Row, RunConfig, RunConfig]:
    """Validate one `[[row]]` table: its keys, and its model/variant/preset/config via checker.config."""
    if not isinstance(table, dict):
        raise ConfigError(f"gate file {path}: row {index + 1} must be a table ([[row]]), got {table!r}")
    where = _where(path, index, table)
    unknown = [k for k in table if k not in ROW_KEYS]
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (allowed: {', '.join(ROW_KEYS)})")
    missing = [k for k in REQUIRED_KEYS if k not in table]
    if missing:
        raise ConfigError(f"{where}: missing key {missing[0]!r} (required: {', '.join(REQUIRED_KEYS)})")
    name, model, variant, expect = (_string(table, k, where) for k in REQUIRED_KEYS)
    preset = _string(table, "preset", where) or "default"
    config = _string(table, "config", where)
    config_file = str((path.parent / config).resolve()) if config else None
    overrides = table.get("set", {})
    if not isinstance(overrides, dict):
        raise ConfigError(f"{where}: 'set' must be a table of config keys, e.g. set = {{brokers = 2}}")
    max_states, workers = _positive(table, "max_states", where), _positive(table, "workers", where)
    from checker.cli.options import MAX_PROCESSES

    if workers is not None and workers > MAX_PROCESSES:
        raise ConfigError(f"{where}: 'workers' must be at most {MAX_PROCESSES} (as for kcheck check --workers),"
                          f" got {workers}")
    liveness = table.get("liveness", True)
    if not isinstance(liveness, bool):
        raise ConfigError(f"{where}: 'liveness' must be true or false, got {liveness!r}")
    may_miss = table.get("may_miss", [])
    if not isinstance(may_miss, list) or not all(isinstance(n, str) for n in may_miss):
        raise ConfigError(f"{where}: 'may_miss' must be a list of sometimes-property and action names, got {may_miss!r}")
    schedule = table.get("schedule", [])
    if "schedule" in table:
        if not isinstance(schedule, list) or not schedule or not all(isinstance(a, str) and a.strip() for a in schedule):
            raise ConfigError(f"{where}: 'schedule' must be a non-empty list of actions, e.g. [\"ElectionTimeout(node=0)\"]")
        searched = [k for k in ("max_states", "workers", "may_miss", "liveness") if k in table]
        if searched:
            raise ConfigError(f"{where}: {searched[0]!r} does not apply to a schedule row (it replays its schedule, "
                              "it does not search)")
        liveness = False
    rounds = _positive(table, "rounds", where)
    if rounds is not None:
        if schedule:
            raise ConfigError(f"{where}: a row has a 'schedule' or 'rounds', not both")
        if "workers" in table or table.get("liveness") is True:
            key = "workers" if "workers" in table else "liveness"
            raise ConfigError(f"{where}: {key!r} does not apply to a round row (one process, invariants only)")
        liveness = False
    plugins = _plugins(path, table, where)
    refused_at = _positive(table, "refused_at", where)
    if refused_at is not None and (not schedule or expect != HOLDS or refused_at > len(schedule)):
        raise ConfigError(f"{where}: 'refused_at' applies to a \"holds\" schedule row, and must name one of its steps")
    try:
        from checker import plugin

        plugin.activate(plugins)
        rc = load_config(model=model, variant=variant, preset=preset, path=config_file, overrides=overrides)
        built = rc.build()
        # The same preset/file/overrides under Kafka 4.1, without what a configuration variant forces
        base = load_config(model=model, variant=rc.definition.variants[0].name, preset=preset,
                           path=config_file, overrides=overrides)
    except ConfigError as e:
        raise ConfigError(f"{where}: {e}") from None
    _typed_overrides(overrides, rc.definition, where)
    invariants = [p.name for p in built.properties if p.kind == "always" or p.temporal]
    unknown_steps = [a for a in schedule if kind_of(a) not in built.action_kinds]
    if unknown_steps:
        raise ConfigError(f"{where}: schedule: {unknown_steps[0]!r} is not an action of model {model} "
                          f"(actions: {', '.join(built.action_kinds)})")
    if rounds is not None and not hasattr(built, "rounds"):
        raise ConfigError(f"{where}: model {model} defines no rounds, so 'rounds' does not apply")
    if (schedule or rounds is not None) and expect != HOLDS and expect not in [
            p.name for p in built.properties if p.kind == "always"]:
        raise ConfigError(f"{where}: a {'schedule' if schedule else 'round'} row expects \"holds\" or an invariant"
                          f" (not a temporal property), got {expect!r}")
    if expect != HOLDS and expect not in invariants:
        raise ConfigError(f"{where}: expect {expect!r} is not an invariant of model {model} "
                          f"(expect \"holds\" or one of: {', '.join(invariants)}; temporal properties count too)")
    declared = next(v for v in rc.definition.variants if v.name == variant)
    checked = _checked_invariants(table, declared, invariants, str(expect), where)
    row = Row(name=str(name), model=str(model), variant=str(variant), preset=preset, config_file=config_file,
              overrides=tuple(overrides.items()), expect=str(expect), max_states=max_states, workers=workers,
              invariants=checked, bug_id=declared.bug_id, variant_description=declared.description,
              config_label=_config_label(preset, config, overrides), liveness=liveness, may_miss=tuple(may_miss),
              schedule=tuple(schedule), refused_at=refused_at, rounds=rounds, plugins=plugins)
    missable = ({p.name for p in built.properties if p.kind == "sometimes" or p.temporal}
                | set(built.action_kinds))
    unknown_miss = [n for n in may_miss if n not in missable]
    if unknown_miss:
        raise ConfigError(f"{where}: may_miss: {unknown_miss[0]!r} is neither a sometimes-property, a temporal"
                          f" property nor an action of model {model}")
    if may_miss and expect != HOLDS:
        raise ConfigError(f"{where}: may_miss applies to rows that expect \"holds\"")
    if not liveness and expect in [p.name for p in built.properties if p.temporal]:
        raise ConfigError(f"{where}: expect {expect!r} is a temporal property, but the row sets liveness = false")
    return row, rc, base


def _plugins(path: Path, table: Mapping[str, Any], where: str) -> tuple[str, ...]:
    """The row's `plugin`: a file, or a list of files, relative to the gate file."""
    given = table.get("plugin", [])
    files = [given] if isinstance(given, str) else given
    if not isinstance(files, list) or not all(isinstance(f, str) and f for f in files):
        raise ConfigError(f"{where}: 'plugin' must be a file name or a list of them, got {given!r}")
    return tuple(str((path.parent / f).resolve()) for f in files)


def _checked_invariants(table: Mapping[str, Any], declared: Any, known: Sequence[str], expect: str,
                        where: str) -> tuple[str, ...]:
    """The row's `invariants`, else the variant's own (`Variant.invariants`: a story another
    invariant would pre-empt, e.g. R2's log_matching); empty means every invariant."""
    names = table.get("invariants", getattr(declared, "invariants", ()))
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        raise ConfigError(f"{where}: 'invariants' must be a list of invariant names, got {names!r}")
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ConfigError(f"{where}: invariants: {unknown[0]!r} is not an invariant (invariants: {', '.join(known)})")
    if names and expect != HOLDS and expect not in names:
        raise ConfigError(f"{where}: expect {expect!r} is not among the invariants checked ({', '.join(names)})")
    return tuple(names)


def _identity(rc: RunConfig, row: Row) -> tuple[Any, ...]:
    """What a row checks, however it is spelled: the model, every resolved config value and the
    plugins (whose properties a bug row's Kafka 4.1 row must hold too)."""
    return rc.model, tuple(sorted(rc.config.items())), tuple(sorted(row.plugins))


def _check_matrix(path: Path, rows: Sequence[Row], configs: Sequence[RunConfig], bases: Sequence[RunConfig]) -> None:
    """Unique names, no run twice, and a kafka-4.1 "holds" row on the configuration of every bug row
    (its preset, file and overrides; a configuration variant's forced keys, e.g. ELR off, aside)."""
    seen_names: dict[str, int] = {}
    seen_runs: dict[tuple[Any, ...], str] = {}
    holds_configs = set()
    for index, (row, rc) in enumerate(zip(rows, configs)):
        if row.name in seen_names:
            raise ConfigError(f"gate file {path}: duplicate row name {row.name!r} (rows {seen_names[row.name] + 1}"
                              f" and {index + 1})")
        seen_names[row.name] = index
        run = (row.variant, row.invariants, row.schedule, row.rounds) + _identity(rc, row)
        if run in seen_runs:
            raise ConfigError(f"gate file {path}: rows {seen_runs[run]!r} and {row.name!r} check the same model, "
                              f"variant and configuration; keep one")
        seen_runs[run] = row.name
        if row.variant == REFERENCE_VARIANT and not row.is_bug:
            holds_configs.add((row.schedule, row.rounds) + _identity(rc, row))
    for row, base in zip(rows, bases):
        if row.is_bug and (row.schedule, row.rounds) + _identity(base, row) not in holds_configs:
            raise ConfigError(
                f"gate file {path}: bug row {row.name!r} has no {REFERENCE_VARIANT} \"holds\" row of model "
                f"{row.model} on the same configuration ({row.config_label}); add one, e.g. [[row]] "
                f"name = \"{row.model}-{REFERENCE_VARIANT}-{row.preset}\", model = \"{row.model}\", "
                f"variant = \"{REFERENCE_VARIANT}\", preset = \"{row.preset}\", expect = \"holds\""
                + (" and the same schedule" if row.schedule else "")
                + (f" and rounds = {row.rounds}" if row.rounds else "")
                + (" and the same plugin" if row.plugins else ""))


def _shared_schedule(path: Path, index: int, table: Any, tables: Sequence[Any]) -> Any:
    """A row whose `schedule` is a string takes the schedule of the row of that name (the Kafka 4.1
    row of a bug's schedule, written once)."""
    if not isinstance(table, dict) or not isinstance(table.get("schedule"), str):
        return table
    name = table["schedule"]
    other = next((t for t in tables if isinstance(t, dict) and t.get("name") == name), None)
    if other is None or not isinstance(other.get("schedule"), list):
        raise ConfigError(f"{_where(path, index, table)}: schedule = {name!r} names no row with a list of actions")
    return {**table, "schedule": other["schedule"]}


def load_gate(path: str | os.PathLike[str]) -> list[Row]:
    """Every row of a gate file, validated (raises ConfigError with one line naming the problem)."""
    path = Path(path)
    table = read_toml(str(path))
    extra = [k for k in table if k != "row"]
    if extra:
        raise ConfigError(f"gate file {path}: unknown top-level key {extra[0]!r} (a gate file is a list of [[row]] tables)")
    tables = table.get("row")
    if not isinstance(tables, list) or not tables:
        raise ConfigError(f"gate file {path}: no rows (add [[row]] tables; see docs/gate.md)")
    parsed = [parse_row(path, i, _shared_schedule(path, i, t, tables)) for i, t in enumerate(tables)]
    rows, configs, bases = ([p[i] for p in parsed] for i in range(3))
    _check_matrix(path, rows, configs, bases)  # type: ignore[arg-type]
    return rows


def select(rows: Sequence[Row], only: Sequence[str]) -> list[Row]:
    """The rows named by --only (in the file's order), or all; an unknown name is bad input."""
    if not only:
        return list(rows)
    names = {r.name for r in rows}
    for name in only:
        if name not in names:
            raise ConfigError(f"--only {name}: no such row (rows: {', '.join(r.name for r in rows)})")
    return [r for r in rows if r.name in set(only)]


# ---------------------------------------------------------------------------------------------
# Running one row (in this process or a worker)


@dataclass
class Outcome:
    """What one row's search found. Plain data: it travels back from a worker process."""

    name: str
    outcome: str  # "ok" | "violation" | "incomplete" | "error"
    distinct_states: int = 0
    states_generated: int = 0
    depth: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # of this row's process (not of --workers children): timing under load
    invariant: str | None = None
    trace_length: int | None = None  # steps of the counterexample
    unreached: list[str] = field(default_factory=list)
    never_enabled: list[str] = field(default_factory=list)
    interrupted: bool = False
    error: str | None = None
    itf: str | None = None  # the counterexample as ITF text, when traces were asked for
    text: str | None = None  # its human rendering
    kind: str = "safety"  # of the violation: "safety" or "liveness" (a lasso)
    liveness: str | None = None  # the liveness pass: None (not run), "ok", "violation", "unreached", "incomplete"
    liveness_states: int = 0
    cut_by_bound: int = 0  # fair cycles that exist only because of a bound (never violations)
    unreached_antecedents: list[str] = field(default_factory=list)  # leads_to whose P never held
    refused_at: int | None = None  # a schedule row: the step its model did not enable (from 1)
    refused: str = ""  # that step's action
    plugins: list[dict[str, str]] = field(default_factory=list)  # the row's plugin files and their SHA-256


def trace_meta(row: Row, rc: RunConfig, invariant: str, description: str) -> dict[str, Any]:
    from checker import plugin

    meta = {"model": row.model, "variant": row.variant, "preset": row.preset, "config": dict(rc.config),
            "invariant": invariant, "description": description, "bug_id": row.bug_id}
    if row.plugins:  # the trace's variant or invariant comes from these files: `kcheck replay --plugin`
        meta["plugins"] = [{"file": os.path.basename(p["file"]), "sha256": p["sha256"]} for p in plugin.provenance()]
    return meta


def trace_text(row: Row, rc: RunConfig, model: Any, trace: Sequence[Any], invariant: str, description: str,
               loop: int | None = None, rounds_taken: int = 0) -> str:
    """The human rendering written next to an ITF trace: a short header, then the protocol log
    (with `loop`, a lasso: the liveness property's counterexample)."""
    from checker.traces.render import render_text

    bug = f"{row.bug_id} " if row.bug_id else ""
    config = " ".join(f"{k}={json.dumps(v)}" for k, v in rc.config.items())
    if loop is None:
        what = f"invariant {invariant} violated after {len(trace) - 1} step(s)"
        if row.schedule:
            what += " of the row's schedule (replayed, not found by a search)"
        elif row.rounds:
            what += f", found by the round search ({rounds_taken} round(s) of the model's rounds)"
    elif loop == len(trace) - 1:
        what = f"liveness property {invariant} violated: {loop} step(s), then the last state repeats forever"
    else:
        what = (f"liveness property {invariant} violated: {loop} step(s), then a cycle of {len(trace) - 1 - loop}"
                " step(s) repeats forever")
    header = [f"{bug}{row.model} {row.variant} (preset {row.preset}): {row.variant_description}",
              f"config: {config}", what, ""]
    return "\n".join(header) + "\n" + render_text(model, trace, invariant, description, loop=loop) + "\n"


def _liveness(row: Row, rc: RunConfig, model: Any, out: Outcome, want_traces: bool) -> None:
    """The liveness pass of a row whose safety pass ended ok (when its model has temporal
    properties): its outcome, and a lasso (or a timely invariant's trace) as the row's counterexample."""
    from checker.search.liveness import check_liveness, temporal_properties

    if not temporal_properties(model):
        return
    if not row.liveness:
        out.liveness = "off"
        return
    live = check_liveness(model, max_states=row.max_states)
    out.liveness, out.liveness_states = live.result, live.states
    out.cut_by_bound = sum(o.fair_sets for o in live.outcomes if o.result == "ok")  # none was genuine
    out.unreached_antecedents = [o.name for o in live.outcomes if o.result == "unreached"]
    if live.result == "incomplete":
        out.outcome = "incomplete"
    bad = live.violation
    if bad is None or bad.counterexample is None:
        return
    out.outcome, out.kind, out.invariant = "violation", "liveness", bad.name
    trace, loop = bad.counterexample
    out.trace_length = len(trace) - 1
    if want_traces and row.is_bug and bad.name == row.expect:
        from checker.traces import itf

        meta = trace_meta(row, rc, bad.name, bad.description)
        meta["kind"] = "liveness"
        meta["property_kind"] = bad.kind
        out.itf = itf.dumps(itf.to_itf(model, trace, meta, loop=loop))
        out.text = trace_text(row, rc, model, trace, bad.name, bad.description, loop=loop)


def _run_schedule(row: Row, rc: RunConfig, model: Any, want_traces: bool) -> Outcome:
    """A schedule row: its actions replayed (checker/search/schedule.py) instead of a search."""
    from checker.search.schedule import replay_schedule

    run = replay_schedule(model, row.schedule)
    steps = len(run.trace) - 1
    out = Outcome(row.name, "violation" if run.violated else "ok", len(run.trace), steps, steps,
                  refused_at=run.refused_at, refused=run.refused)
    if run.violated is not None:
        invariant, description = run.violated
        out.invariant, out.trace_length = invariant, steps
        if want_traces and row.is_bug and invariant == row.expect:
            from checker.traces import itf

            meta = trace_meta(row, rc, invariant, description)
            meta["schedule"] = True
            out.itf = itf.dumps(itf.to_itf(model, run.trace, meta))
            out.text = trace_text(row, rc, model, run.trace, invariant, description)
    return out


def run_row(row: Row, workers: int, want_traces: bool) -> Outcome:
    """Explore one row's model; never raises (an exception becomes outcome "error")."""
    from checker.search.run import explore

    from checker import plugin

    start, cpu = time.perf_counter(), time.process_time()
    try:
        from checker.selection import select_invariants

        rc = row.run_config()
        model = select_invariants(rc.build(), row.invariants)
        if row.schedule:
            out = _run_schedule(row, rc, model, want_traces)
            out.seconds, out.cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
            out.plugins = plugin.provenance() if row.plugins else []
            return out
        if row.rounds:  # breadth first over the model's rounds (checker/search/rounds.py); no liveness pass
            from checker.search.rounds import round_search

            r = round_search(model, row.rounds, max_states=row.max_states)
        else:
            r = explore(model, max_states=row.max_states, workers=workers)
        out = Outcome(row.name, r.result, r.distinct_states, r.states_generated, r.depth,
                      unreached=list(r.unreached), never_enabled=list(r.never_enabled), interrupted=r.interrupted)
        if r.result == "ok" and not row.rounds:
            _liveness(row, rc, model, out, want_traces)
        if r.violation is not None:
            trace, invariant = r.violation["trace"], r.violation["invariant"]
            out.invariant, out.trace_length = invariant, len(trace) - 1
            if want_traces and row.is_bug and invariant == row.expect:
                from checker.traces import itf

                meta = trace_meta(row, rc, invariant, r.violation["description"])
                taken = r.violation.get("rounds")
                if taken is not None:
                    meta["rounds"] = taken
                out.itf = itf.dumps(itf.to_itf(model, trace, meta))
                out.text = trace_text(row, rc, model, trace, invariant, r.violation["description"],
                                      rounds_taken=taken or 0)
    except KeyboardInterrupt:
        out = Outcome(row.name, "incomplete", interrupted=True)
    except Exception as e:  # a broken model fails its row, not the whole gate
        last = traceback.extract_tb(e.__traceback__)[-1]
        message = " ".join(str(e).split())  # one line, for the table, Markdown and JUnit
        out = Outcome(row.name, "error",
                      error=f"{type(e).__name__}: {message} ({os.path.basename(last.filename)}:{last.lineno})")
    out.seconds, out.cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
    out.plugins = plugin.provenance() if row.plugins else []
    return out


# ---------------------------------------------------------------------------------------------
# Verdicts and traces


@dataclass
class Verdict:
    row: Row
    outcome: Outcome
    passed: bool
    reason: str  # why it failed, or a one-line summary when it passed
    notes: list[str] = field(default_factory=list)  # vacuity warnings of a passing "holds" row


def vacuity(row: Row, unreached: Sequence[str], never_enabled: Sequence[str]) -> list[str]:
    """What a "holds" row's search missed beyond its may_miss, one phrase each."""
    return ([f"sometimes-property {p} never reached" for p in unreached if p not in row.may_miss]
            + [f"action {a} never enabled" for a in never_enabled if a not in row.may_miss])


def judge(row: Row, out: Outcome) -> Verdict:
    """Does the outcome match the row's expectation?"""
    steps = f"after {out.trace_length} step(s)"
    if out.outcome == "error":
        return Verdict(row, out, False, f"error: {out.error}")
    if out.interrupted:
        return Verdict(row, out, False, "interrupted before the space was exhausted")
    if out.outcome == "incomplete":
        return Verdict(row, out, False, f"incomplete: stopped at max_states {row.max_states} before the "
                                        "space was exhausted")
    if row.schedule:
        return _judge_schedule(row, out, steps)
    if not row.is_bug:
        if out.outcome == "violation":
            return Verdict(row, out, False, f"expected to hold, but invariant {out.invariant} is violated {steps}")
        unreached_antecedents = [p for p in out.unreached_antecedents if p not in row.may_miss]
        if unreached_antecedents:
            return Verdict(row, out, False, "vacuous liveness: the antecedent of "
                           + ", ".join(unreached_antecedents) + " holds in no reachable state")
        missed = vacuity(row, out.unreached, out.never_enabled)
        if out.outcome == "ok" and missed:
            return Verdict(row, out, False, "vacuous: " + ", ".join(missed) + " (not in the row's may_miss)")
        notes = [f"sometimes-property {p} never reached (may_miss)" for p in out.unreached]
        notes += [f"action {a} never enabled (may_miss)" for a in out.never_enabled]
        notes += [f"the antecedent of {p} holds in no reachable state (may_miss)" for p in out.unreached_antecedents]
        if out.liveness == "ok" and out.cut_by_bound:
            notes.append(f"{out.cut_by_bound:,} fair cycle(s) cut by a bound (not violations)")
        if out.liveness == "off":
            notes.append("temporal properties not checked (liveness = false)")
        what = "every invariant and temporal property holds" if out.liveness == "ok" else "every invariant holds"
        if row.rounds:
            what += (f" in every state within {row.rounds} rounds" if out.depth >= row.rounds
                     else f" (every state reachable by rounds, {out.depth} deep)")
        return Verdict(row, out, True, what, notes)
    if out.outcome == "ok":
        return Verdict(row, out, False, f"expected a violation of {row.expect}, but every invariant holds: "
                                        "the checker went blind to this bug")
    if out.invariant != row.expect:
        return Verdict(row, out, False, f"expected a violation of {row.expect}, but {out.invariant} "
                                        f"is violated first ({steps})")
    return Verdict(row, out, True, f"{row.expect} violated {steps}")


def _judge_schedule(row: Row, out: Outcome, steps: str) -> Verdict:
    """A schedule row: the variant follows its schedule to the expected violation; Kafka 4.1
    refuses a step of it, or follows all of it with every invariant holding."""
    refused = f"step {out.refused_at} of {len(row.schedule)}, {out.refused}, is not enabled"
    if out.outcome == "violation":
        if row.is_bug and out.invariant == row.expect:
            return Verdict(row, out, True, f"{row.expect} violated {steps} of the schedule")
        if row.is_bug:
            return Verdict(row, out, False, f"expected a violation of {row.expect}, but {out.invariant} is violated "
                                            f"first ({steps} of the schedule)")
        return Verdict(row, out, False, f"expected to hold, but invariant {out.invariant} is violated {steps} of "
                                        "the schedule")
    if row.is_bug:
        why = refused if out.refused_at is not None else "it ran to its end with every invariant holding"
        return Verdict(row, out, False, f"expected the schedule to violate {row.expect}, but {why}")
    if row.refused_at is not None and out.refused_at != row.refused_at:
        got = f"step {out.refused_at} is refused" if out.refused_at is not None else "no step is refused"
        return Verdict(row, out, False, f"expected step {row.refused_at} of the schedule to be refused, but {got}")
    if out.refused_at is not None:
        return Verdict(row, out, True, f"the schedule is refused: {refused}")
    return Verdict(row, out, True, "the schedule runs to its end with every invariant holding")


def trace_paths(root: str, row: Row) -> tuple[Path, Path]:
    """DIR/<model>/<variant>.itf.json and its rendering DIR/<model>/<variant>.txt."""
    folder = Path(root) / row.model
    return folder / f"{row.variant}.itf.json", folder / f"{row.variant}.txt"


def _first_difference(expected: str, actual: str) -> str:
    """Where two ITF texts first differ: the step (state index), else the header."""
    try:
        old, new = json.loads(expected), json.loads(actual)
    except ValueError:
        return "the checked-in file is not valid JSON"
    old_states = old.get("states", []) if isinstance(old, dict) else []
    new_states = new.get("states", []) if isinstance(new, dict) else []
    for i, (a, b) in enumerate(zip(old_states, new_states)):
        if a != b:
            actions = [s.get("mbt::actionTaken") if isinstance(s, dict) else None for s in (a, b)]
            if actions[0] != actions[1]:
                return f"first difference at step {i} (checked in: {actions[0]}, regenerated: {actions[1]})"
            both = isinstance(a, dict) and isinstance(b, dict)
            changed = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k)) if both else []
            return f"first difference at step {i}" + (f" (in {', '.join(changed)})" if changed else "")
    if len(old_states) != len(new_states):
        return (f"the checked-in trace has {len(old_states) - 1} step(s), the regenerated one "
                f"{len(new_states) - 1}; first difference at step {min(len(old_states), len(new_states))}")
    return "the states agree; the header (vars or #meta) or the formatting differs"


def compare_trace(verdict: Verdict, root: str) -> None:
    """--traces: a passing bug row also needs its checked-in ITF trace, byte for byte."""
    row, out = verdict.row, verdict.outcome
    if not verdict.passed or not row.is_bug or out.itf is None:
        return
    itf_path, _ = trace_paths(root, row)
    regenerate = "regenerate with kcheck gate --write-traces DIR (see docs/gate.md)"
    try:
        checked_in = itf_path.read_bytes().decode("utf-8", errors="replace")
    except FileNotFoundError:
        verdict.passed, verdict.reason = False, f"trace {itf_path} is missing; {regenerate}"
        return
    except OSError as e:
        verdict.passed, verdict.reason = False, f"trace {itf_path}: cannot read: {e.strerror or e}"
        return
    if checked_in != out.itf:
        verdict.passed = False
        verdict.reason = (f"the counterexample differs from the checked-in trace {itf_path}: "
                          f"{_first_difference(checked_in, out.itf)}; {regenerate}")


def write_trace(verdict: Verdict, root: str) -> list[Path]:
    """--write-traces: the ITF trace and its rendering of a passing bug row."""
    out = verdict.outcome
    if not verdict.passed or out.itf is None or out.text is None:
        return []
    itf_path, text_path = trace_paths(root, verdict.row)
    try:
        itf_path.parent.mkdir(parents=True, exist_ok=True)
        itf_path.write_text(out.itf, encoding="utf-8", newline="\n")
        text_path.write_text(out.text, encoding="utf-8", newline="\n")
    except OSError as e:  # the row's search is fine, but its deliverable is not there: fail it
        verdict.passed, verdict.reason = False, f"cannot write the trace {itf_path}: {e.strerror or e}"
        return []
    return [itf_path, text_path]


# ---------------------------------------------------------------------------------------------
# Scheduling


def _row_workers(row: Row) -> int:
    """The row's `workers`, else 1. A parallel search finds a shortest counterexample too, but which
    one (and the counts of its last level) depends on the number of processes: one process makes
    every report and trace the same on any machine and for any --jobs (which uses the cores)."""
    return row.workers if row.workers is not None else 1


def run_rows(rows: Sequence[Row], jobs: int, want_traces: bool,
             started: Callable[[Row], None], finished: Callable[[Row, Outcome], None]) -> list[Outcome]:
    """Run every row, `jobs` at a time in worker processes (jobs 1: in this process).
    The outcomes come back in the rows' order whatever order they finish in."""
    if jobs <= 1 or len(rows) <= 1:
        outcomes = []
        for row in rows:
            started(row)
            out = run_row(row, _row_workers(row), want_traces)
            finished(row, out)
            outcomes.append(out)
            if out.interrupted:
                raise KeyboardInterrupt
        return outcomes
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    results: dict[int, Outcome] = {}
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(rows)), mp_context=context, initializer=_row_process,
                               initargs=(os.getpid(),))
    try:
        queue = list(enumerate(rows))
        running: dict[Future[Outcome], int] = {}
        while queue or running:
            while queue and len(running) < jobs:  # submit as slots free, so "started" is true
                i, row = queue.pop(0)
                started(row)
                try:
                    running[pool.submit(run_row, row, _row_workers(row), want_traces)] = i
                except RuntimeError as e:  # BrokenProcessPool: an earlier worker died
                    results[i] = Outcome(row.name, "error", error=f"worker processes unavailable: {e}")
                    finished(row, results[i])
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in sorted(done, key=lambda f: running[f]):
                i = running.pop(future)
                try:
                    out = future.result()
                except Exception as e:  # the worker died (e.g. killed by the OOM killer)
                    out = Outcome(rows[i].name, "error", error=f"worker process failed: {type(e).__name__}: {e}")
                results[i] = out
                finished(rows[i], out)
                if out.interrupted:
                    raise KeyboardInterrupt
    except KeyboardInterrupt:
        # The rows still running are cut short, not waited for: their outcomes would not be reported.
        processes = list((getattr(pool, "_processes", None) or {}).values())
        for proc in processes:
            proc.terminate()
        for proc in processes:
            proc.join()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return [results[i] for i in range(len(rows))]


def _row_process(parent: int) -> None:
    """A row process: Ctrl-C and SIGTERM are the gate's to handle (it ends the rows); the kernel
    ends it when the gate dies, even by SIGKILL (checker.search.parallel)."""
    import signal

    from checker.search.parallel import die_with_parent

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    die_with_parent(parent)


# ---------------------------------------------------------------------------------------------
# Reports


COLUMNS = ("row", "bug id", "model", "variant", "preset", "expected", "outcome", "result", "distinct states",
           "seconds", "counterexample length")


def _outcome_text(out: Outcome) -> str:
    if out.outcome == "violation":
        return f"violation {out.invariant}"
    if out.interrupted:
        return "incomplete (interrupted)"
    if out.refused_at is not None:
        return f"refused at step {out.refused_at}"
    return out.outcome


def table_cells(v: Verdict) -> list[str]:
    out = v.outcome
    return [v.row.name, v.row.bug_id or "-", v.row.model, v.row.variant, v.row.config_label,
            ("holds" if not v.row.is_bug else f"violation {v.row.expect}")
            + (f" (checking only {', '.join(v.row.invariants)})" if v.row.invariants else ""), _outcome_text(out),
            "pass" if v.passed else "FAIL", f"{out.distinct_states:,}", f"{out.seconds:.1f}",
            "-" if out.trace_length is None else str(out.trace_length)]


def summary_line(verdicts: Sequence[Verdict], seconds: float | None = None) -> str:
    failed = sum(1 for v in verdicts if not v.passed)
    verdict = "every row passes" if not failed else f"{failed} row(s) FAIL"
    timing = f" in {seconds:.0f} s" if seconds is not None else ""
    return f"gate: {len(verdicts)} row(s){timing}: {verdict}"


def text_report(verdicts: Sequence[Verdict], seconds: float) -> str:
    """The table on stdout, then the reason of every failure and the notes of passing rows."""
    header = ["row", "expected", "outcome", "result", "states", "seconds", "cex"]
    body = [[c[0], c[5], c[6], c[7], c[8], c[9], c[10]] for c in map(table_cells, verdicts)]
    widths = [max(len(r[i]) for r in [header] + body) for i in range(len(header))]
    right = {4, 5, 6}
    lines = ["  ".join(cell.rjust(w) if i in right else cell.ljust(w) for i, (cell, w) in enumerate(zip(r, widths)))
             .rstrip() for r in [header] + body]
    details = [f"FAIL {v.row.name}: {v.reason}" for v in verdicts if not v.passed]
    details += [f"note {v.row.name}: {note}" for v in verdicts for note in v.notes]
    return "\n".join([f"model source: {model_source().text()}", ""] + lines + ([""] + details if details else [])
                     + ["", summary_line(verdicts, seconds)])


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown_report(verdicts: Sequence[Verdict]) -> str:
    """A Markdown table, one line per row; no timestamps (the seconds column is the only timing)."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(_md_cell(c) for c in table_cells(v)) + " |" for v in verdicts]
    failures = [f"- **{_md_cell(v.row.name)}** FAIL: {_md_cell(v.reason)}" for v in verdicts if not v.passed]
    notes = [f"- {_md_cell(v.row.name)}: {'; '.join(v.notes)}" for v in verdicts if v.notes]
    if notes:
        notes.insert(0, "Gaps of passing \"holds\" rows (a pass may be vacuous there):")
    sections = [section for section in (failures, notes) if section]
    return "\n".join([f"Model source: `{model_source().path}` (sha256 `{model_source().sha256}`)", ""] + lines
                     + [line for section in sections for line in [""] + section] + ["", summary_line(verdicts)]) + "\n"


def junit_report(verdicts: Sequence[Verdict], gate_file: str) -> bytes:
    """JUnit XML: one testsuite, one testcase per row, a <failure> for each failing row."""
    failures = sum(1 for v in verdicts if not v.passed)
    total = sum(v.outcome.seconds for v in verdicts)
    suite = ET.Element("testsuite", name="kcheck gate", tests=str(len(verdicts)), failures=str(failures),
                       errors="0", skipped="0", time=f"{total:.3f}")
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(properties, "property", name="gate_file", value=gate_file)
    source = model_source()
    ET.SubElement(properties, "property", name="model_source", value=source.path)
    ET.SubElement(properties, "property", name="model_source_sha256", value=source.sha256)
    for v in verdicts:
        case = ET.SubElement(suite, "testcase", classname=f"kcheck.gate.{v.row.model}", name=v.row.name,
                             time=f"{v.outcome.seconds:.3f}")
        cells = dict(zip(COLUMNS, table_cells(v)))
        summary = "; ".join(f"{k}: {cells[k]}" for k in ("variant", "preset", "expected", "outcome",
                                                          "distinct states", "counterexample length"))
        if not v.passed:
            ET.SubElement(case, "failure", message=v.reason, type="GateFailure").text = summary
        ET.SubElement(case, "system-out").text = "\n".join([summary] + v.notes)
    ET.indent(suite)
    return ET.tostring(suite, encoding="utf-8", xml_declaration=True) + b"\n"


def schedule(verdicts: Sequence[Verdict], seconds: float, jobs: int) -> dict[str, Any]:
    """Where a gate run's wall time went: its longest row (the critical path: no number of jobs ends
    sooner) and the rows' seconds in all, which `jobs` processes need at least a `jobs`-th of."""
    longest = max(verdicts, key=lambda v: v.outcome.seconds, default=None)
    total = sum(v.outcome.seconds for v in verdicts)
    slowest = longest.outcome.seconds if longest else 0.0
    lanes = max(1, min(jobs, len(verdicts)))
    return {"jobs": jobs, "wall_seconds": round(seconds, 3), "rows_seconds": round(total, 3),
            "longest_row": longest.row.name if longest else None, "longest_seconds": round(slowest, 3),
            "least_wall_seconds": round(max(slowest, total / lanes), 3)}


def schedule_line(s: dict[str, Any]) -> str:
    return (f"critical path: {s['longest_row']} ({s['longest_seconds']:.1f} s); the rows took {s['rows_seconds']:.1f} s"
            f" in all, so {s['jobs']} job(s) need at least {s['least_wall_seconds']:.1f} s; this run took"
            f" {s['wall_seconds']:.1f} s")


def json_report(verdicts: Sequence[Verdict], gate_file: str, seconds: float,
                unfinished: Sequence[str] | None = None, jobs: int | None = None) -> dict[str, Any]:
    """The --json object; `unfinished`: the rows an interruption cut short or never started
    (then `interrupted` is true and `rows` holds only those that finished)."""
    rows = []
    for v in verdicts:
        out = asdict(v.outcome)
        out.pop("itf"), out.pop("text")
        rows.append({"name": v.row.name, "bug_id": v.row.bug_id, "model": v.row.model, "variant": v.row.variant,
                     "preset": v.row.preset, "config_file": v.row.config_file, "set": dict(v.row.overrides),
                     "configuration": v.row.config_label, "expect": v.row.expect,
                     "invariants": list(v.row.invariants), "rounds": v.row.rounds,
                     "passed": v.passed, "reason": v.reason, "notes": v.notes, **out})
    return {"gate_file": gate_file, "rows": rows, "passed": sum(v.passed for v in verdicts),
            "failed": sum(not v.passed for v in verdicts), "seconds": round(seconds, 3),
            "model_source": model_source().as_json(),
            "interrupted": unfinished is not None, "unfinished": list(unfinished or []),
            **({"schedule": schedule(verdicts, seconds, jobs)} if jobs is not None and unfinished is None else {})}


# ---------------------------------------------------------------------------------------------
# The command


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from checker.cli.options import process_count

    parser.add_argument("gate_file", nargs="?", metavar="GATE.toml",
                        help=f"the gate file (default: the repo's {default_gate_file()})")
    parser.add_argument("--junit", metavar="FILE", help="write a JUnit XML report to FILE")
    parser.add_argument("--markdown", metavar="FILE", help="write a Markdown table to FILE")
    parser.add_argument("--jobs", type=process_count, default=1, metavar="N",
                        help="run N rows at once, each in its own process (default 1)")
    parser.add_argument("--only", action="append", default=[], metavar="ROW",
                        help="run only this row (repeatable); the gate file is still validated whole")
    traces = parser.add_mutually_exclusive_group()
    traces.add_argument("--traces", metavar="DIR",
                        help="a bug row also fails when its counterexample differs from DIR/<model>/<variant>.itf.json")
    traces.add_argument("--write-traces", metavar="DIR",
                        help="write each bug row's counterexample to DIR/<model>/<variant>.itf.json and .txt")
    parser.add_argument("--html-dir", metavar="DIR",
                        help="write each bug row's counterexample as a page, DIR/<model>/<variant>.html (docs/visual.md)")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout instead of the table")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


def _gate_path(args: argparse.Namespace) -> Path:
    if args.gate_file:
        return Path(args.gate_file)
    path = default_gate_file()
    if not path.is_file():
        raise ConfigError(f"no GATE.toml given and the default gate file {path} does not exist; give its path")
    return path


def _check_outputs(args: argparse.Namespace, rows: Sequence[Row], gate_path: Path) -> None:
    """Bad output paths and trace-file collisions are bad input, found before anything runs."""
    from checker.outputs import check_outputs, plugin_inputs

    check_outputs(files=[("--junit", args.junit), ("--markdown", args.markdown)],
                  dirs=[("--write-traces", args.write_traces), ("--html-dir", args.html_dir)],
                  inputs=[("the gate file", str(gate_path)), ("--traces", args.traces),
                          # every row's, not only the selected rows': each is the user's file
                          *plugin_inputs(sorted({p for r in load_gate(gate_path) for p in r.plugins}))])
    if args.traces and not os.path.isdir(args.traces):
        raise ConfigError(f"--traces {args.traces}: no such directory (create it with --write-traces {args.traces})")
    if args.traces or args.write_traces:
        try:
            import checker.traces.itf  # noqa: F401
        except ImportError as e:
            raise ConfigError(f"traces need checker/traces/itf.py, which cannot be imported: {e}") from None
        owners: dict[tuple[str, str], str] = {}
        for row in rows:
            if row.is_bug:
                key = (row.model, row.variant)
                if key in owners:
                    raise ConfigError(f"rows {owners[key]!r} and {row.name!r} would share the trace file "
                                      f"{row.model}/{row.variant}.itf.json; keep one bug row per variant")
                owners[key] = row.name


def _write(path: str, data: str | bytes, option: str) -> None:
    try:
        with open(path, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
    except OSError as e:
        raise ConfigError(f"{option} {path}: cannot write: {e.strerror or e}") from e


class _Reporter:
    """Judges each row as it finishes (with its trace check or write) and prints progress lines."""

    def __init__(self, args: argparse.Namespace, total: int) -> None:
        self.args, self.total = args, total
        self.stream = None if args.quiet else sys.stderr
        self.index: dict[str, int] = {}
        self.verdicts: dict[str, Verdict] = {}

    def say(self, text: str) -> None:
        if self.stream:
            print(f"gate: {text}", file=self.stream, flush=True)

    def started(self, row: Row) -> None:
        self.index[row.name] = len(self.index) + 1
        self.say(f"[{self.index[row.name]}/{self.total}] {row.name}: started")

    def finished(self, row: Row, out: Outcome) -> None:
        v = self.verdicts[row.name] = judge(row, out)
        if self.args.traces:
            compare_trace(v, self.args.traces)
        elif self.args.write_traces:
            for written in write_trace(v, self.args.write_traces):
                self.say(f"wrote {written}")
        if self.args.html_dir and v.passed and row.is_bug and out.itf:
            self.say(f"wrote {write_page_of(v, self.args.html_dir)}")
        self.say(f"[{self.index[row.name]}/{self.total}] {row.name}: {_outcome_text(out)}, "
                 f"{out.distinct_states:,} states, {out.seconds:.1f} s: {'pass' if v.passed else 'FAIL'}")


def write_page_of(v: Verdict, root: str) -> Path:
    """A bug row's counterexample as a page, root/<model>/<variant>.html."""
    from checker.view.document import document_page
    from checker.view.page import write_page

    row = v.row
    doc = json.loads(v.outcome.itf or "{}")
    rc = row.run_config()
    title = f"{row.bug_id + ' ' if row.bug_id else ''}{row.model} {row.variant} (preset {row.preset}): " \
            f"{v.outcome.invariant} violated"
    path = Path(root) / row.model / f"{row.variant}.html"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ConfigError(f"--html-dir {root}: cannot write: {e.strerror or e}") from e
    write_page(str(path), document_page(doc, rc.build(), rc, title), "--html-dir")
    return path


def run(args: argparse.Namespace) -> int:
    from checker.search.checkpoint import scratch

    path = _gate_path(args)
    rows = select(load_gate(path), args.only)
    _check_outputs(args, rows, path)
    reporter = _Reporter(args, len(rows))
    start = time.perf_counter()
    try:
        with scratch("kcheck-gate-"):
            run_rows(rows, args.jobs, bool(args.traces or args.write_traces or args.html_dir), reporter.started,
                     reporter.finished)
    except KeyboardInterrupt:
        # The rows that finished, labelled partial; the others are named, never counted.
        seconds = time.perf_counter() - start
        ran = [v for row in rows if (v := reporter.verdicts.get(row.name)) and not v.outcome.interrupted]
        unfinished = [row.name for row in rows if row.name not in {v.row.name for v in ran}]
        if args.json:
            print(json.dumps(json_report(ran, str(path), seconds, unfinished)))
        elif ran:
            print(text_report(ran, seconds))
        print(f"kcheck: gate interrupted: a partial result, {len(ran)} of {len(rows)} row(s) finished"
              + (f" (not finished: {', '.join(unfinished)})" if unfinished else "")
              + "; no --junit or --markdown report written", file=sys.stderr)
        return EXIT_INTERRUPTED
    seconds = time.perf_counter() - start

    verdicts = [reporter.verdicts[row.name] for row in rows]  # the gate file's order
    reporter.say(schedule_line(schedule(verdicts, seconds, args.jobs)))
    if args.json:
        print(json.dumps(json_report(verdicts, str(path), seconds, jobs=args.jobs)))
    else:
        print(text_report(verdicts, seconds))
    if args.markdown:
        _write(args.markdown, markdown_report(verdicts), "--markdown")
    if args.junit:
        _write(args.junit, junit_report(verdicts, str(path)), "--junit")
    return EXIT_OK if all(v.passed for v in verdicts) else EXIT_FAIL
