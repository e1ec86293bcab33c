"""The page of an ITF document: the trace replayed against its model (checker/traces/replay.py)
and drawn by checker/view/page.py, with the model's witness of the broken property."""
from __future__ import annotations

from typing import Any

from checker.traces import itf
from checker.traces.render import witness
from checker.traces.replay import VALID, model_for, replay
from checker.view.page import json_steps_page


def document_page(doc: dict[str, Any], model: Any, rc: Any, title: str | None = None) -> str:
    """The page of an ITF document read against `model` (built from `rc`): its property is the
    trace's own (#meta.invariant), with the model's witness when the replay pins the last state."""
    model = model_for(doc, model)
    steps = itf.steps(doc)
    meta = dict(doc.get("#meta", {}))
    name = meta.get("invariant")
    loop = doc.get("loop") if isinstance(doc.get("loop"), int) else None
    prop = None
    if isinstance(name, str) and name:
        said = ""
        outcome = replay(model, steps, loop=loop)  # the witness needs the model's state
        if outcome.result == VALID and len(outcome.final_states) == 1:
            said = witness(model, name, outcome.final_states[0])
        kind = meta.get("property_kind") or ("invariant" if meta.get("kind", "safety") == "safety" else "liveness")
        prop = {"name": name, "description": str(meta.get("description", "")), "kind": kind, "witness": said}
    if title is None:
        title = f"{rc.model} {rc.variant}: " + (f"{name} violated" if prop else f"a trace of {len(steps) - 1} step(s)")
    meta.update({"model": rc.model, "variant": rc.variant, "preset": rc.preset, "config": dict(rc.config)})
    return json_steps_page(model, steps, title=title, meta=meta, prop=prop, loop=loop)
