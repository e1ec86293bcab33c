"""Recorded behaviours for `kcheck conform --traces`: the catalogued bug variants' ITF traces.

A bug variant's trace is a behaviour its model allows and Kafka's does not; driven on the real
code, the real code must part from it at the step the bug needs. The outcome names that step: the
real code refused it, or took it and ended elsewhere. A trace whose variant the class path cannot
represent (pre-vote on jars that predate KIP-996) is reported as such, never as agreement.
"""
from __future__ import annotations

from typing import Any, Iterator

from checker.traces import itf
from checker.config import ConfigError
from checker.conform import engine
from checker.conform.adapter import EXCEPTION, REFUSED, compare
from checker.traces.replay import trace_config

FOLLOWED = "followed"    # the real code took every step and matched every state
PARTED = "parted"        # refused a step, or took it and differs
THREW = "exception"      # the real code threw: a finding of its own (kcheck conform exits 1), not a parting
UNREPRESENTABLE = "unrepresentable"


def behaviour(model: Any, doc: dict[str, Any], path: str) -> tuple[Any, Iterator[engine.Step]]:
    """The model's first state and its steps along the trace: at each step the successor by the
    named action whose JSON is the trace's next state."""
    states = itf.steps(doc)
    first = model.init_states()[0]
    if model.to_json(first) != states[0][1]:
        raise ConfigError(f"trace {path} does not start in the model's initial state")

    reduce = getattr(model, "reduce", None)

    def steps() -> Iterator[engine.Step]:
        s = first
        for index, (action_text, values) in enumerate(states[1:], 1):
            for a in model.actions(s):
                if action_text and repr(a) != action_text:
                    continue
                t = model.next_state(s, a)
                if t is None:
                    continue
                # a trace the checker wrote holds its reduced states (`--no-reduce` off: spec/replication.md)
                if model.to_json(t) == values or (reduce is not None and model.to_json(reduce(t)) == values):
                    break
            else:
                raise ConfigError(f"trace {path}: step {index} ({action_text}) is not a step of its model")
            yield s, a, t
            s = t if model.to_json(t) == values else reduce(t)

    return first, steps()


def drive_trace(path: str, adapter_cls: Any, report: engine.Report, model_name: str) -> dict[str, Any]:
    """Drive the real code along the trace at `path`; a dict: path, variant, steps, outcome, step, action, detail."""
    doc = itf.load(path)
    rc = trace_config(doc, path)
    if rc.model != model_name:
        raise ConfigError(f"trace {path} is of model {rc.model}, not {model_name}")
    result: dict[str, Any] = {"path": path, "variant": rc.variant, "steps": len(itf.steps(doc)) - 1}
    model = rc.build()
    try:
        adapter = getattr(adapter_cls, "for_trace", adapter_cls)(model)
    except ConfigError as e:
        result.update(result=UNREPRESENTABLE, outcome=f"not driven: {e}")
        return result
    first, steps = behaviour(model, doc, path)
    scratch = engine.Report(rc.model, rc.variant, [rc.preset])  # a trace's steps are not the walks' counts
    lasso = isinstance(doc.get("loop"), int)
    try:
        out = engine.drive(adapter, path, steps, first, scratch)
        moved: dict[str, Any] = {}
        if out.difference is None and lasso and hasattr(adapter, "let_time_pass"):
            # a lasso's loop repeats forever: then time passes, and every timer of the real nodes expires
            last = out.trail[-1][1]
            try:
                adapter.let_time_pass()
                moved = compare(adapter.abstract(last), adapter.observe())
            except Exception as e:  # a Java exception while time passes: a finding, named
                from checker.conform.adapter import Difference, exception_line
                out.difference = Difference(EXCEPTION, out.steps + 1, "time passes (the lasso's forever)", {},
                                            exception_line(e))
    finally:
        adapter.close()
    d = out.difference
    if d is None and moved:
        result.update(result=PARTED, step=out.steps, action="time passes (the lasso's forever)",
                      outcome=f"the real code takes all {out.steps} steps, but not the loop forever: when time passes, "
                      + "; ".join(f"{k} {m!r} -> {r!r}" for k, (m, r) in sorted(moved.items())))
    elif d is None:
        result.update(result=FOLLOWED, outcome=f"the real code takes all {out.steps} steps of the bug's behaviour"
                      + (" and its loop forever (time passing changes nothing)" if lasso else ""))
    elif d.kind == EXCEPTION:
        result.update(result=THREW, step=d.step, action=d.action,
                      outcome=f"EXCEPTION at step {d.step} ({d.action}): {d.reason}")
        result["behaviour_so_far"] = [repr(a) for a, _ in out.trail[1:]]
        # the trace up to the step that threw, for --trace-out (not printed with --json)
        result["document"] = {**doc, "states": doc["states"][:d.step + 1],
                              "#meta": {**doc.get("#meta", {}), "description": f"{path} up to step {d.step}, where"
                                        f" {d.reason}"}}
        result["document"].pop("loop", None)
    else:
        what = f"refuses step {d.step} ({d.action}): {d.reason}" if d.kind == REFUSED else \
            f"parts at step {d.step} ({d.action}): " + "; ".join(
                f"{k} model {m!r}, real {r!r}" for k, (m, r) in sorted(d.keys.items()))
        result.update(result=PARTED, step=d.step, action=d.action, outcome="the real code " + what)
    return result
