"""A counterexample as one self-contained HTML page: a space-time diagram (one lane per process,
an arrow per message from its send to its delivery or to a cross where it was lost, faults
marked), the state at the selected step as tables per process with what changed highlighted, and
the broken property with its witness; a lasso's cycle is marked. Inline CSS and JS, no network.

The page is built from steps as `(action text or None, state JSON)`, so a trace read from an ITF
file draws like one just found; the model's `timeline` (model/*/timeline.py) says which lane an
action is on and who sends which message to whom.
"""
from __future__ import annotations

import ast
import html
import json
from pathlib import Path
from typing import Any, Sequence

from checker.traces.render import diff

Step = tuple["str | None", dict[str, Any]]

TEMPLATE = Path(__file__).with_name("page_template.html")


def parse_action(text: str) -> tuple[str, dict[str, Any]]:
    """An action repr (`HandleFetch(request=FetchRequest(follower=0, ...))`) as its kind and fields,
    nested calls as dicts; parsed, never evaluated. ("", {}) when it does not parse."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return "", {}

    def value(n: ast.AST) -> Any:
        if isinstance(n, ast.Call):
            return {k.arg: value(k.value) for k in n.keywords if k.arg}
        if isinstance(n, (ast.Tuple, ast.List)):
            return [value(e) for e in n.elts]
        if isinstance(n, ast.Constant):
            return n.value
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub) and isinstance(n.operand, ast.Constant):
            return -n.operand.value
        return None

    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        return "", {}
    fields = value(node)
    return node.func.id, fields if isinstance(fields, dict) else {}


def _changed_paths(before: Any, after: Any) -> list[str]:
    return [path for path, _, _ in diff(before, after)]


def page_data(steps: Sequence[Step], timeline: Any, *, title: str, meta: dict[str, Any],
              prop: dict[str, Any] | None = None, loop: int | None = None,
              recorded: Sequence[list[str] | None] = ()) -> dict[str, Any]:
    """Everything the page draws, as plain JSON. `recorded[i]`, when given and not None, names the
    variables step i's trace gave (a partial trace): the others show as not recorded."""
    states = [s for _, s in steps]
    lanes = timeline.lanes(states[0])
    rows: list[dict[str, Any]] = []
    arrows: list[dict[str, Any]] = []
    open_messages: dict[str, list[dict[str, Any]]] = {}  # identity -> arrows not yet delivered
    for i, (action, state) in enumerate(steps):
        kind, fields = parse_action(action) if action else ("", {})
        lane = timeline.action_lane(kind, fields) if kind else None
        if lane not in lanes:
            lane = None
        row = {"step": i, "action": action, "kind": kind, "lane": lane, "fault": kind in timeline.FAULTS,
               "changes": [] if i == 0 else _changed_paths(states[i - 1], state),
               "recorded": recorded[i] if i < len(recorded) else None,
               "instant": [{"from": a, "to": b, "label": label, "fault": fault} for a, b, label, fault in
                           (timeline.instant_arrows(kind, fields) if kind else [])]}
        rows.append(row)
        now = timeline.messages(state)
        before = timeline.messages(states[i - 1]) if i else []
        gone = [m for m in before if m not in now]
        new = [m for m in now if m not in before]
        for ident, src, dst, label in gone:
            pending = open_messages.get(ident)
            if not pending:
                continue
            arrow = pending.pop(0)
            arrow["to_step"] = i
            arrow["lost"] = kind == "DropMessage" or lane != dst
        for ident, src, dst, label in new:
            arrow = {"from_step": i, "from": src, "to": dst, "label": label, "to_step": None, "lost": False}
            arrows.append(arrow)
            open_messages.setdefault(ident, []).append(arrow)
    return {
        "title": title,
        "meta": _with_config_text(meta),
        "lanes": lanes,
        "rows": rows,
        "arrows": arrows,
        "views": timeline.views(states[0]),
        "states": states,
        "property": prop,
        "loop": loop,
    }


def _with_config_text(meta: dict[str, Any]) -> dict[str, Any]:
    """The meta with `config_text`, the config echo of the text reports: a value that stands for
    something else says what (`replication_factor=0 (every broker)`)."""
    from checker.config import ConfigError, config_text, load_definition

    if not isinstance(meta.get("config"), dict) or "model" not in meta:
        return meta
    try:
        definition = load_definition(str(meta["model"]))
    except ConfigError:  # a trace of a model this install does not have: its values as they are
        return meta
    return {**meta, "config_text": config_text(definition, meta["config"])}


def render_page(data: dict[str, Any]) -> str:
    """The page: the template with the data inlined (`</` escaped so no string ends the script)."""
    text = json.dumps(data, separators=(",", ":"), default=repr).replace("</", "<\\/")
    template = TEMPLATE.read_text()
    return (template.replace("__TITLE__", html.escape(data["title"]))
            .replace("__DATA__", text))


def trace_page(model: Any, trace: Sequence[tuple[Any, Any]], *, title: str, meta: dict[str, Any],
               invariant: str | None = None, description: str = "", kind: str = "invariant",
               loop: int | None = None) -> str:
    """The page of a trace of states (as the checker holds it) of `model`."""
    from checker.traces.render import witness

    steps = [(None if a is None else repr(a), model.to_json(s)) for a, s in trace]
    prop = None
    if invariant is not None:
        prop = {"name": invariant, "description": description, "kind": kind,
                "witness": witness(model, invariant, trace[-1][1]) if trace else ""}
    return render_page(page_data(steps, model.timeline, title=title, meta=meta, prop=prop, loop=loop))


def json_steps_page(model: Any, steps: Sequence[Step], *, title: str, meta: dict[str, Any],
                    prop: dict[str, Any] | None = None, loop: int | None = None) -> str:
    """The page of a trace read from a file: states as JSON (possibly partial: a variable a state
    does not give is shown as unknown)."""
    base = model.to_json(model.init_states()[0])
    full = []
    recorded: list[list[str] | None] = []
    last: dict[str, Any] = base
    for action, values in steps:
        state = {**last, **values}  # a variable the step does not give keeps its last value, marked
        last = state
        full.append((action, state))
        recorded.append(None if set(values) >= set(base) else sorted(values))
    return render_page(page_data(full, model.timeline, title=title, meta=meta, prop=prop, loop=loop,
                                 recorded=recorded))


def write_page(path: str, text: str, option: str = "--html") -> None:
    """Write a page; an unwritable path is bad input (one line, exit 2)."""
    from checker.config import ConfigError

    try:
        Path(path).write_text(text)
    except OSError as e:
        raise ConfigError(f"{option} {path}: {e.strerror or e}") from None
