"""`kcheck replay`: validate a trace (ITF JSON) step by step against a model, as TLA+ trace
validation does.

    kcheck replay TRACE [--model M] [--variant V] [--preset P] [--set K=V]...
                        [--max-candidates N] [--gap N] [--json] [--quiet]

Step 0 must match an initial state; each later state must match a successor, by an enabled
action (followed, for a model with a stutter reduction, by the replays `kcheck check` absorbs),
of a state the trace can be in at the step before (the trace's `mbt::actionTaken`, when
given, is the only action tried). A state may give only some variables, and a record only some
fields: replay keeps the set of model states consistent with the trace so far ("candidates"),
so the rest is searched for.
With --gap N, up to N unrecorded actions may come before each step's action (a log that does
not record every event).

Exit codes: 0 valid; 1 invalid (the first step that does not follow is reported with its
differences from the nearest legal successor); 2 bad input (one line on stderr); 3 incomplete
(more than --max-candidates states match a step: never reported as valid).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from checker.traces import itf
from checker.cli.options import nonnegative_int, positive_int
from checker.config import (DEFAULT_MODEL, ConfigError, RunConfig, clamp_note, config_text, load_config,
                            load_definition)
from checker.provenance import model_source
from checker.traces.render import ABSENT, change_text, diff, witness
from checker.search.schedule import kind_of, squeeze

EXIT_VALID, EXIT_INVALID, EXIT_BAD_INPUT, EXIT_INCOMPLETE = 0, 1, 2, 3
DEFAULT_MAX_CANDIDATES = 200_000
VALID, INVALID, INCOMPLETE = "valid", "invalid", "incomplete"

Step = tuple[str | None, dict[str, Any]]  # (action repr or None: any action, {variable: value})


@dataclass
class Outcome:
    """What `replay` found. `failed_step` is the first step that does not follow (invalid) or
    whose candidates exceed the limit (incomplete); `differences` are (path, successor value,
    trace value) against the nearest legal successor, `nearest_action` the action producing it
    (None at step 0, where it is an initial state)."""

    result: str
    steps: int  # transitions in the trace (its states minus one)
    checked: int = 0  # transitions that followed (all of them when valid)
    failed_step: int | None = None
    action: str | None = None  # the trace's action at failed_step, if it names one
    action_enabled: bool | None = None  # whether that action is enabled in some candidate
    nearest_action: str | None = None
    differences: list[tuple[str, Any, Any]] = field(default_factory=list)
    max_candidates_seen: int = 0  # the largest candidate set on the way
    final_candidates: int = 0
    broken_invariants: list[str] = field(default_factory=list)  # broken in every final candidate
    # per broken invariant, the model's concrete witness when every final candidate gives the same
    witnesses: dict[str, str] = field(default_factory=dict)
    final_states: list[Any] = field(default_factory=list, repr=False)  # the final candidates
    seconds: float = 0.0
    loop: int | None = None  # a lasso's loop index (the trace's `loop`)
    cycle_closed: bool | None = None  # whether the last state can be the state at `loop`
    unfair: list[str] = field(default_factory=list)  # why the lasso's cycle is not fair, if it is not


def model_variables(model: Any) -> list[str]:
    """The variable names of the model's states: the keys of `to_json`."""
    return list(model.to_json(model.init_states()[0]))


def covers(model_value: Any, trace_value: Any) -> bool:
    """Whether the trace's value describes the model's: equal, except that a trace record (JSON
    object) may leave fields out (unknown). Lists match element by element, same length."""
    if model_value == trace_value:  # the common case, at C speed
        return True
    if isinstance(trace_value, dict):
        return isinstance(model_value, dict) and all(
            k in model_value and covers(model_value[k], v) for k, v in trace_value.items())
    if isinstance(trace_value, list):
        return (isinstance(model_value, list) and len(model_value) == len(trace_value)
                and all(covers(m, t) for m, t in zip(model_value, trace_value)))
    return False


def project(model_value: Any, trace_value: Any) -> Any:
    """The model's value cut down to the fields the trace gives, for diffing against it."""
    if isinstance(model_value, dict) and isinstance(trace_value, dict):
        return {k: project(model_value[k], v) for k, v in trace_value.items() if k in model_value}
    if isinstance(model_value, list) and isinstance(trace_value, list) and len(model_value) == len(trace_value):
        return [project(m, t) for m, t in zip(model_value, trace_value)]
    return model_value


def _matches(state_json: Mapping[str, Any], values: Mapping[str, Any]) -> bool:
    for name, value in values.items():
        if not covers(state_json[name], value):
            return False
    return True


def replay(model: Any, steps: Sequence[Step], max_candidates: int = DEFAULT_MAX_CANDIDATES,
           progress: Callable[[int, int], None] | None = None, progress_every: float = 5.0,
           gap: int = 0, loop: int | None = None) -> Outcome:
    """Check `steps` against `model`; see the module docstring. `progress(step, candidates)` is
    called about every `progress_every` seconds during long steps. With `gap` N, up to N
    unrecorded actions (any) may happen before each recorded step's action, as when a log
    records only some events. With `loop` (a lasso: a liveness counterexample) the last state
    must also be one the trace can be in at step `loop`, so that the cycle closes.

    Candidates are deduplicated by the state value itself, not by `model.encode`: a model with
    symmetry reduction encodes a state up to a renaming of its nodes, while a trace names them."""
    start = time.perf_counter()
    outcome = Outcome(INVALID, steps=len(steps) - 1)
    to_json, actions, next_state = model.to_json, model.actions, model.next_state
    reduce = getattr(model, "reduce", None)  # a step of `kcheck check` may include absorbed replays

    action0, values0 = steps[0]
    candidates: dict[Any, None] = {}
    for s in model.init_states():
        for u in _forms(s, reduce):
            if _matches(to_json(u), values0):
                candidates[u] = None
    if not candidates:
        outcome.failed_step, outcome.action = 0, action0
        _nearest(model, [(None, s) for s in model.init_states()], values0, outcome)
        outcome.seconds = time.perf_counter() - start
        return outcome
    if len(candidates) > max_candidates:
        return _incomplete(outcome, 0, action0, len(candidates), start)
    outcome.max_candidates_seen = len(candidates)
    outcome.loop = loop
    at_loop = candidates if loop == 0 else None

    next_report = start + progress_every
    for index in range(1, len(steps)):
        named, values = steps[index]
        kind = kind_of(named) if named is not None else None
        wanted = squeeze(named) if named is not None else None
        following: dict[Any, None] = {}
        seen: set[Any] = set()
        enabled = False
        work = 0
        base = candidates
        if gap:
            base = _unrecorded(model, candidates, gap, max_candidates)
            if len(base) > max_candidates:
                return _incomplete(outcome, index, named, len(base), start)
            outcome.max_candidates_seen = max(outcome.max_candidates_seen, len(base))
        for c in base:
            for a in actions(c):
                if named is not None and (type(a).__name__ != kind or squeeze(repr(a)) != wanted):
                    continue
                t = next_state(c, a)
                if t is None:
                    continue
                enabled = True
                for u in _forms(t, reduce):
                    if u in seen:  # many candidates share successors; to_json is the costly part
                        continue
                    seen.add(u)
                    if _matches(to_json(u), values):
                        following[u] = None
                        if len(following) > max_candidates:
                            return _incomplete(outcome, index, named, len(following), start)
            work += 1
            if progress is not None and not work & 0x3FF:
                now = time.perf_counter()
                if now >= next_report:
                    next_report = now + progress_every
                    progress(index, len(base))
        if not following:
            outcome.failed_step, outcome.action = index, named
            outcome.action_enabled = enabled if named is not None else None
            tried = [(a, c) for c in base for a in actions(c)
                     if named is None or not enabled or squeeze(repr(a)) == wanted]
            _nearest(model, tried, values, outcome)
            outcome.seconds = time.perf_counter() - start
            return outcome
        candidates = following
        outcome.max_candidates_seen = max(outcome.max_candidates_seen, len(candidates))
        outcome.checked = index
        if index == loop:
            at_loop = candidates
        if progress is not None and time.perf_counter() >= next_report:  # many short steps are long too
            next_report = time.perf_counter() + progress_every
            progress(index, len(candidates))

    if at_loop is not None and loop != len(steps) - 1:
        closing = {c: None for c in candidates if c in at_loop}
        outcome.cycle_closed = bool(closing)
        if not closing:
            outcome.failed_step, outcome.action = len(steps) - 1, steps[-1][0]
            outcome.seconds = time.perf_counter() - start
            return outcome
        candidates = closing
    elif at_loop is not None:
        outcome.cycle_closed = True
    if at_loop is not None and loop is not None and len(at_loop) == 1:
        outcome.unfair = _cycle_unfairness(model, next(iter(at_loop)), steps[loop + 1:])
        if outcome.unfair:
            outcome.failed_step = len(steps) - 1
            outcome.seconds = time.perf_counter() - start
            return outcome
    outcome.result = VALID
    outcome.final_candidates = len(candidates)
    always = [p for p in model.properties if p.kind in ("always", "timely_invariant")]
    outcome.broken_invariants = [p.name for p in always if all(not p.predicate(s) for s in candidates)]
    outcome.final_states = list(candidates)
    for name in outcome.broken_invariants:
        said = {witness(model, name, s) for s in candidates}
        if len(said) == 1 and "" not in said:
            outcome.witnesses[name] = said.pop()
    outcome.seconds = time.perf_counter() - start
    return outcome


def _cycle_unfairness(model: Any, first: Any, steps: Sequence[Step]) -> list[str]:
    """A lasso's cycle, followed from its (only) state at `loop` by the actions the trace names,
    judged by the model's fairness (checker.search.liveness.unfair_in_cycle); nothing when a step names
    no action or several states match."""
    from checker.search.liveness import unfair_in_cycle

    cycle: list[tuple[Any, Any]] = [(None, first)]
    state = first
    reduce = getattr(model, "reduce", None)
    for named, values in steps:
        if named is None:
            return []
        matches = [u for a in model.actions(state) if squeeze(repr(a)) == squeeze(named)
                   for t in [model.next_state(state, a)] if t is not None
                   for u in _forms(t, reduce) if _matches(model.to_json(u), values)]
        if len(matches) != 1:
            return []
        action = next(a for a in model.actions(state) if squeeze(repr(a)) == squeeze(named))
        state = matches[0]
        cycle.append((action, state))
    return unfair_in_cycle(model, cycle)


def _forms(state: Any, reduce: Callable[[Any], Any] | None) -> tuple[Any, ...]:
    """A successor as `next_state` gives it and, when the model has a stutter reduction and it
    changes the state, as `kcheck check` stores it: a trace may record either."""
    r = state if reduce is None else reduce(state)
    return (state,) if r == state else (state, r)


def _unrecorded(model: Any, candidates: dict[Any, None], gap: int, limit: int) -> dict[Any, None]:
    """The candidates and every state up to `gap` actions after them (stops past `limit`)."""
    reach = dict(candidates)
    frontier = list(candidates)
    for _ in range(gap):
        following = []
        for s in frontier:
            for a in model.actions(s):
                t = model.next_state(s, a)
                if t is not None and t not in reach:
                    reach[t] = None
                    following.append(t)
                    if len(reach) > limit:
                        return reach
        frontier = following
    return reach


def _incomplete(outcome: Outcome, index: int, action: str | None, count: int, start: float) -> Outcome:
    outcome.result, outcome.failed_step, outcome.action = INCOMPLETE, index, action
    outcome.max_candidates_seen = max(outcome.max_candidates_seen, count)
    outcome.seconds = time.perf_counter() - start
    return outcome


def _nearest(model: Any, tried: Sequence[tuple[Any, Any]], values: Mapping[str, Any], outcome: Outcome) -> None:
    """Fill `nearest_action`/`differences` from the (action, state) pair whose successor (or, with
    action None, the state itself) differs from `values` in the fewest leaves; the first wins ties."""
    best: list[tuple[str, Any, Any]] | None = None
    reduce = getattr(model, "reduce", None)
    for action, state in tried:
        t = state if action is None else model.next_state(state, action)
        if t is None:
            continue
        for u in _forms(t, reduce):
            js = model.to_json(u)
            changes = list(diff({k: project(js[k], v) for k, v in values.items()}, dict(values)))
            if best is None or len(changes) < len(best):
                best, outcome.nearest_action = changes, None if action is None else repr(action)
                if not changes:
                    break
        if best == []:
            break
    outcome.differences = best or []


# --- the command ----------------------------------------------------------------------------------


def plugin_provenance() -> list[dict[str, str]]:
    """The plugins in force (file, SHA-256): the trace was read against the model they extend."""
    from checker import plugin

    return plugin.provenance()


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """The model a trace is read against: the trace's own, unless these say otherwise."""
    parser.add_argument("--model", help="the model (default: the trace's #meta.model, else replication)")
    parser.add_argument("--variant", help="the protocol variant (default: the trace's, else Kafka 4.1)")
    parser.add_argument("--preset", help="build the config on this preset instead of the trace's #meta.config")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override one config key; repeatable; wins over the trace's config and --preset")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `kcheck replay`."""
    parser.add_argument("trace", metavar="TRACE", help="an ITF trace (JSON), e.g. written by --trace-out")
    add_model_arguments(parser)
    from checker.cli.options import add_plugin_argument

    add_plugin_argument(parser)  # a trace of a plugin's variant, or checked with its invariants
    parser.add_argument("--max-candidates", type=positive_int, default=DEFAULT_MAX_CANDIDATES, metavar="N",
                        help="give up (incomplete, exit 3) when more than N model states match a step "
                             f"(default {DEFAULT_MAX_CANDIDATES:,})")
    parser.add_argument("--gap", type=nonnegative_int, default=0, metavar="N",
                        help="up to N unrecorded actions may happen before each step's action, for traces "
                             "that record only some events (default 0: every action is recorded)")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.add_argument("--html", metavar="FILE", help="draw the trace as an HTML page, with the replay's verdict"
                        " (docs/visual.md)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


def model_for(doc: Mapping[str, Any], model: Any) -> Any:
    """The model a trace is replayed against: for a timely invariant's counterexample, the model's
    liveness model (its ghost state says what the invariant watches; timers expire only when
    their cause holds), else the model itself."""
    meta = doc.get("#meta", {})
    if isinstance(meta, Mapping) and meta.get("property_kind") == "timely_invariant":
        own = getattr(model, "liveness_model", None)
        if own is not None:
            return own()
    return model


def trace_config(doc: Mapping[str, Any], path: str, model: str | None = None, variant: str | None = None,
                 preset: str | None = None, overrides: Sequence[str] = ()) -> RunConfig:
    """The configuration to replay under: the trace's `#meta` (model, variant, preset, config),
    each overridden by the arguments. The trace's config applies only when the model is the
    trace's and no `preset` is given; `overrides` (KEY=VALUE) always apply last."""
    meta = itf.meta_of(doc)
    selectors = {}
    for key in ("model", "variant", "preset"):
        value = meta.get(key)
        if value is not None and not isinstance(value, str):
            raise ConfigError(f"trace {path}: #meta.{key} must be a string, got {json.dumps(value)}")
        selectors[key] = value
    config = meta.get("config", {})
    if not isinstance(config, dict):
        raise ConfigError(f"trace {path}: #meta.config must be an object of config keys")
    model_name = model if model is not None else selectors["model"]
    same_model = model is None or model == selectors["model"]
    base: dict[str, Any] = dict(config) if same_model and preset is None else {}
    if base and variant is not None and variant != selectors["variant"]:
        # A configuration variant (e.g. ELR off) forces keys; replayed under another variant, those
        # keys take that variant's values (its preset's), not the ones the trace's variant forced.
        for key, _ in _settings(model_name, selectors["variant"]):
            base.pop(key, None)
    try:
        rc = load_config(model=model_name,
                         variant=variant if variant is not None else (selectors["variant"] if same_model else None),
                         preset=preset if preset is not None else (selectors["preset"] if same_model else None),
                         overrides=base)
    except ConfigError as e:
        if base and str(e).startswith("override "):
            raise ConfigError(f"trace {path}: #meta.config: {e}; --preset P ignores the trace's config") from None
        raise
    if overrides:
        rc = load_config(model=rc.model, variant=rc.variant, preset=rc.preset,
                         overrides=[f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in base.items()]
                         + list(overrides))
    return rc


def _settings(model: str | None, variant: str | None) -> tuple[tuple[str, Any], ...]:
    """The config values `variant` of `model` forces (none when either is unknown)."""
    try:
        definition = load_definition(model or DEFAULT_MODEL)
    except ConfigError:
        return ()
    found = [v for v in definition.variants if v.name == variant]
    return tuple(getattr(found[0], "settings", ())) if found else ()


def check_variables(steps: Sequence[Step], doc: Mapping[str, Any], variables: Sequence[str], path: str,
                    model: str) -> None:
    """A ConfigError naming the first variable the model does not have."""
    known = set(variables)
    listed = [v for v in doc.get("vars") or [] if not v.startswith("mbt::")]
    for name in listed:
        if name not in known:
            raise ConfigError(f"trace {path}: vars: unknown variable {name!r} for model {model} "
                              f"(variables: {', '.join(variables)})")
    for i, (_, values) in enumerate(steps):
        for name in values:
            if name not in known:
                raise ConfigError(f"trace {path}: state {i}: unknown variable {name!r} for model {model} "
                                  f"(variables: {', '.join(variables)})")


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    return {int: "an integer", str: "a string", list: "an array", dict: "an object"}.get(type(value), "null")


def type_error(model_value: Any, trace_value: Any, path: str) -> str | None:
    """Where the trace's value has another JSON kind than the model's (a string for an integer,
    an integer for a boolean, ...), or a field the model's record lacks: bad input, not a step
    that does not follow. Only what the model's value shows is checked: the elements of an
    empty list are not. The walk follows the model's value, so its depth bounds the recursion."""
    if _json_kind(model_value) != _json_kind(trace_value):
        return f"{path}: expected {_json_kind(model_value)}, got {_json_kind(trace_value)} {json.dumps(trace_value)[:40]}"
    if isinstance(model_value, dict):
        for k, v in trace_value.items():
            if k not in model_value:
                return f"{path}: no field {k!r} (fields: {', '.join(model_value)})"
            found = type_error(model_value[k], v, f"{path}.{k}")
            if found:
                return found
    elif isinstance(model_value, list) and model_value:
        for i, v in enumerate(trace_value):  # a tuple's fields by position, a list's by its first element
            found = type_error(model_value[i] if i < len(model_value) else model_value[0], v, f"{path}[{i}]")
            if found:
                return found
    return None


def check_types(steps: Sequence[Step], example: Mapping[str, Any], path: str) -> None:
    """A ConfigError naming the first trace value whose kind the model's `example` state contradicts."""
    for i, (_, values) in enumerate(steps):
        for name, value in values.items():
            found = type_error(example[name], value, name)
            if found:
                raise ConfigError(f"trace {path}: state {i}: {found}")


def report_json(path: str, rc: RunConfig, o: Outcome, max_candidates: int, gap: int = 0) -> dict[str, Any]:
    """The `--json` object."""
    return {
        "trace": path,
        "model": rc.model,
        "variant": rc.variant,
        "preset": rc.preset,
        "config": dict(rc.config),
        "clamped": rc.clamped,
        "plugins": plugin_provenance(),
        "result": o.result,
        "steps": o.steps,
        "checked_steps": o.checked,
        "failed_step": o.failed_step,
        "action": o.action,
        "action_enabled": o.action_enabled,
        "nearest_action": o.nearest_action,
        "differences": [_difference(p, old, new) for p, old, new in o.differences],
        "max_candidates_seen": o.max_candidates_seen,
        "max_candidates": max_candidates,
        "gap": gap,
        "final_candidates": o.final_candidates,
        "broken_invariants": o.broken_invariants,
        "witnesses": o.witnesses,
        "loop": o.loop,
        "cycle_closed": o.cycle_closed,
        "unfair": o.unfair,
        "seconds": round(o.seconds, 3),
        "model_source": model_source().as_json(),
    }


def _difference(path: str, successor: Any, trace: Any) -> dict[str, Any]:
    """A difference as JSON; a side is left out when the item is absent there."""
    out: dict[str, Any] = {"path": path}
    if successor is not ABSENT:
        out["successor"] = successor
    if trace is not ABSENT:
        out["trace"] = trace
    return out


def report_text(path: str, rc: RunConfig, o: Outcome, max_candidates: int,
                rc_kinds: Sequence[str] | None = None, gap: int = 0) -> str:
    """The text report: the run's header, the result, and for an invalid trace why
    (`rc_kinds`, the model's action kinds, lets it say when the trace names an unknown one)."""
    lines = [
        f"trace:    {path} ({o.steps} step{'s' if o.steps != 1 else ''})",
        f"model:    {rc.model}",
        f"model source: {model_source().text()}",
        f"variant:  {rc.variant}",
        *[f"plugin:   {p['file']} (sha256 {p['sha256'][:16]})" for p in plugin_provenance()],
        f"preset:   {rc.preset}",
        "config:   " + config_text(rc.definition, rc.config) + clamp_note(rc.clamped),
    ]
    if o.result == VALID:
        lines.append(f"result:   valid: {o.steps} step{'s' if o.steps != 1 else ''}")
        if o.final_candidates > 1:
            lines.append(f"  {o.final_candidates:,} model states match the last step")
        for name in o.broken_invariants:
            why = o.witnesses.get(name)
            lines.append(f"  the last state breaks invariant {name}" + (f": {why}" if why else ""))
        if o.loop is not None:
            lines.append(f"  a lasso: the last state is the state at step {o.loop}"
                         + (" (it repeats forever)" if o.loop == o.steps else f", so steps {o.loop + 1}..{o.steps}"
                            " can repeat forever"))
        return "\n".join(lines)
    step = o.failed_step
    if o.result == INCOMPLETE:
        lines.append(f"result:   incomplete: more than {max_candidates:,} model states match step {step} "
                     "(raise --max-candidates, give more variables" + (", lower --gap)" if gap else ")"))
        return "\n".join(lines)
    if o.unfair:
        lines.append(f"result:   invalid: the lasso's cycle (steps {(o.loop or 0) + 1}..{o.steps}) is not a fair"
                     " behaviour of this model:")
        lines.extend(f"  {why}" for why in o.unfair)
        return "\n".join(lines)
    if o.cycle_closed is False:
        lines.append(f"result:   invalid: the lasso does not close: no state the trace can be in at its last step"
                     f" ({step}) is one it can be in at step {o.loop} (its loop)")
        return "\n".join(lines)
    lines.append(f"result:   invalid: step {step} does not follow" if step else
                 "result:   invalid: step 0 is not an initial state")
    if step:
        lines.append(f"  step {step}: {o.action if o.action is not None else '(no action named: any action)'}")
        if o.action is not None and o.action_enabled:
            lines.append("  the action is enabled, but its successor differs from the trace's state in "
                         "(successor -> trace):")
        else:
            if o.action is not None:
                kind = kind_of(o.action)
                unknown = rc_kinds is not None and kind not in rc_kinds
                lines.append(f"  the action is not enabled in any state the trace can be in after step {step - 1}"
                             + (f" (or up to {gap} unrecorded actions later)" if gap else "")
                             + (f" (the model has no action {kind})" if unknown else ""))
            else:
                lines.append("  no enabled action leads to the trace's state")
            if o.nearest_action is None:
                lines.append("  no action is enabled there at all: the trace cannot go on")
            else:
                lines.append(f"  nearest legal successor, by {o.nearest_action}, differs in (successor -> trace):")
    else:
        lines.append("  nearest initial state; it differs in (initial state -> trace):")
    for path_, old, new in o.differences:
        lines.append("    " + change_text(path_, old, new))
    if step and o.nearest_action is not None and not o.differences:
        lines.append("    nothing: that action leads to exactly the trace's state (the trace names another)")
    return "\n".join(lines)


def _write_html(path: str, trace: str, doc: Mapping[str, Any], rc: RunConfig, model: Any,
                steps: Sequence[Step], outcome: Outcome) -> None:
    """The trace's page, its property the replay's verdict: the invariant it breaks (with the
    model's witness when the last state is known), or the step that does not follow."""
    from checker.view.page import json_steps_page, write_page

    meta = dict(doc.get("#meta", {}))
    meta.update({"model": rc.model, "variant": rc.variant, "preset": rc.preset, "config": dict(rc.config)})
    prop = None
    if outcome.result == VALID and outcome.broken_invariants:
        name = outcome.broken_invariants[0]
        described = {p.name: p.description for p in model.properties}
        prop = {"name": name, "description": described.get(name, ""), "kind": "invariant",
                "witness": outcome.witnesses.get(name, "")}
        title = f"{trace}: valid under {rc.variant}, {name} violated"
    elif outcome.result == VALID:
        title = f"{trace}: valid under {rc.variant}"
    else:
        title = f"{trace}: {outcome.result} under {rc.variant}" + (
            f" at step {outcome.failed_step}" if outcome.failed_step is not None else "")
    loop = doc.get("loop")
    write_page(path, json_steps_page(model, steps, title=title, meta=meta, prop=prop,
                                     loop=loop if isinstance(loop, int) else None))
    print(f"kcheck: wrote {path}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    """`kcheck replay`: 0 valid, 1 invalid, 2 bad input, 3 incomplete."""
    from checker.cli.options import activate_plugins
    from checker.heartbeat import Heartbeat
    from checker.outputs import check_outputs, plugin_inputs

    check_outputs(files=[("--html", args.html)], inputs=[("the trace", args.trace), *plugin_inputs(args.plugins)])
    activate_plugins(args)
    with Heartbeat(f"replay: reading {args.trace}", None if args.quiet else sys.stderr):  # a large trace
        doc = itf.load(args.trace)
        rc = trace_config(doc, args.trace, args.model, args.variant, args.preset, args.overrides)
        model = model_for(doc, rc.build())
        steps = itf.steps(doc)
    if not any(values for _, values in steps):  # "valid" would claim a check that did not happen
        raise ConfigError(f"trace {args.trace}: no state gives any variable: nothing to check")
    check_variables(steps, doc, model_variables(model), args.trace, rc.model)
    check_types(steps, model.to_json(model.init_states()[0]), args.trace)

    def progress(step: int, candidates: int) -> None:
        print(f"kcheck: replay: step {step}/{len(steps) - 1}, {candidates:,} candidate states",
              file=sys.stderr, flush=True)

    outcome = replay(model, steps, args.max_candidates, None if args.quiet else progress, gap=args.gap,
                     loop=doc.get("loop"))
    if args.html:
        _write_html(args.html, args.trace, doc, rc, model, steps, outcome)
    if args.json:
        print(json.dumps(report_json(args.trace, rc, outcome, args.max_candidates, args.gap)))
    else:
        print(report_text(args.trace, rc, outcome, args.max_candidates, list(model.action_kinds), args.gap))
    return {VALID: EXIT_VALID, INVALID: EXIT_INVALID}.get(outcome.result, EXIT_INCOMPLETE)
