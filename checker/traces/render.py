"""Counterexamples for people and for tools.

`render_text` reads like a protocol log: step 0 prints the initial state in full, then one
numbered line per action (its repr, valid Python: `Fetch(follower=2)`) followed by only the
variables that changed, diffed down to the leaf path (`brokers[2].log: [] -> [{"epoch": 1, "value": 0}]`;
an element appended to or removed from a non-empty list shows as `log[3]: + {"epoch": 2, ...}` or
`fetch_requests[0]: - {...}`).
After the log, one `legend:` line per term of the model's `glossary` that the printed trace uses
(a field name of its initial state or of a change), and the final line names the broken
invariant and, when the model can tell (its `explanations`), the concrete witness in the last
state: `invariant X is violated in the state after step N (description): value 0 acked at
offset 0 is missing from broker 1, ...`.
`trace_json` is the machine form: a list of `{action: repr or null, state: to_json(state)}`.
"""
from __future__ import annotations

import json
from typing import Any, Iterator, Sequence

from model.interface import Model

Trace = Sequence[tuple[Any, Any]]  # (action or None for the initial state, state)

WIDE = 100  # a top-level variable longer than this prints one line per element at step 0
SHORT = 60  # a list change this short prints whole (`isr: [0, 1] -> [0]`), not per element


def value_text(value: Any) -> str:
    """A value as compact JSON text, as it appears in traces."""
    return json.dumps(value, default=repr)


def _child_path(path: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


class _Absent:
    """The missing side of an added or removed dict key or list element."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()


def _is_subsequence(short: list[Any], long: list[Any]) -> list[int] | None:
    """The indices of `long` not matched by `short` taken in order, or None if `short` is not a
    subsequence of `long`."""
    extra, i = [], 0
    for j, item in enumerate(long):
        if i < len(short) and short[i] == item:
            i += 1
        else:
            extra.append(j)
    return extra if i == len(short) else None


def diff(before: Any, after: Any, path: str = "") -> Iterator[tuple[str, Any, Any]]:
    """(path, old, new) for each leaf that differs; ABSENT marks an added or removed item.

    Dicts are diffed key by key, lists of equal length element by element; a non-empty list that
    only gained (or only lost) elements, and does not print in SHORT characters, yields one added (removed) item per element, at its
    index in the longer list; anything else that differs is one change at `path`."""
    if before == after:
        return
    if isinstance(before, dict) and isinstance(after, dict):
        for key in list(before) + [k for k in after if k not in before]:
            yield from diff(before.get(key, ABSENT), after.get(key, ABSENT), _child_path(path, key))
    elif isinstance(before, list) and isinstance(after, list) and before and after:
        if len(before) == len(after):
            for i, (b, a) in enumerate(zip(before, after)):
                yield from diff(b, a, _child_path(path, i))
            return
        if len(value_text(before)) + len(value_text(after)) <= SHORT:
            yield path, before, after
            return
        if len(before) < len(after):
            added = _is_subsequence(before, after)
            if added is not None:
                for i in added:
                    yield _child_path(path, i), ABSENT, after[i]
                return
        else:
            removed = _is_subsequence(after, before)
            if removed is not None:
                for i in removed:
                    yield _child_path(path, i), before[i], ABSENT
                return
        yield path, before, after
    else:
        yield path, before, after


def change_text(path: str, old: Any, new: Any) -> str:
    """One line of a diff: `path: old -> new`, `path: + new` (added), `path: - old` (removed)."""
    if old is ABSENT:
        return f"{path}: + {value_text(new)}"
    if new is ABSENT:
        return f"{path}: - {value_text(old)}"
    return f"{path}: {value_text(old)} -> {value_text(new)}"


def _state_lines(state_json: dict[str, Any], indent: str) -> list[str]:
    lines = []
    for name, value in state_json.items():
        text = value_text(value)
        if len(text) > WIDE and isinstance(value, (list, dict)) and value:
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                lines.append(f"{indent}{_child_path(name, key)}: {value_text(item)}")
        else:
            lines.append(f"{indent}{name}: {text}")
    return lines


def _names(value: Any, out: set[str]) -> None:
    """Every field name (dict key) in a JSON value, at any depth."""
    if isinstance(value, dict):
        for key, item in value.items():
            out.add(str(key))
            _names(item, out)
    elif isinstance(value, list):
        for item in value:
            _names(item, out)


def _path_names(path: str) -> set[str]:
    """The field names along a diff path: `brokers[0].followers[1].leo` -> brokers, followers, leo."""
    out = set()
    for part in path.split("."):
        name = part.split("[", 1)[0]
        if name:
            out.add(name)
    return out


def legend_lines(model: Model, used: set[str]) -> list[str]:
    """One `legend: name = meaning` line per entry of the model's optional `glossary` whose name
    the trace uses, in the glossary's order."""
    glossary = getattr(model, "glossary", None) or {}
    return [f"legend: {name} = {meaning}" for name, meaning in glossary.items() if name in used]


def witness(model: Model, invariant: str, state: Any) -> str:
    """The model's concrete explanation of why `invariant` fails in `state` ("" if it has none)."""
    explain = (getattr(model, "explanations", None) or {}).get(invariant)
    return explain(state) if explain is not None else ""


def render_text(model: Model, trace: Trace, invariant: str | None = None, description: str = "",
                loop: int | None = None) -> str:
    """A trace as a numbered protocol log; names the broken invariant at the end when given.
    With `loop` the trace is a lasso (a liveness counterexample): the steps after `loop` lead
    back to the state after step `loop` and repeat forever; when there are none, that last
    state repeats forever (it stutters: no fair action is enabled there)."""
    lines: list[str] = []
    previous: dict[str, Any] | None = None
    width = len(str(len(trace) - 1))
    pad = " " * (width + 4)
    used: set[str] = set()
    for step, (action, state) in enumerate(trace):
        current = model.to_json(state)
        if previous is None:
            label = "initial state" if action is None else repr(action)
            lines.append(f"  {step:>{width}}. {label}")
            lines.extend(_state_lines(current, pad))
            _names(current, used)
        else:
            if loop is not None and step == loop + 1:
                lines.append(f"  --- cycle: steps {loop + 1}..{len(trace) - 1} lead back to the state after step {loop}"
                             " and repeat forever ---")
            lines.append(f"  {step:>{width}}. {action!r}")
            changes = list(diff(previous, current))
            for path, old, new in changes:
                lines.append(pad + change_text(path, old, new))
                used |= _path_names(path)
                _names(old, used)
                _names(new, used)
            if not changes:
                lines.append(f"{pad}(no visible change)")
        previous = current
    lines.extend("  " + line for line in legend_lines(model, used))
    if invariant is not None and loop is not None:
        why = f" ({description})" if description else ""
        if loop == len(trace) - 1:
            how = f"the state after step {loop} repeats forever: no fair action is enabled there"
        else:
            how = f"steps {loop + 1}..{len(trace) - 1} repeat forever, every fair action treated fairly"
        lines.append(f"  liveness property {invariant} is violated: {how}{why}")
    elif invariant is not None:
        why = f" ({description})" if description else ""
        what = witness(model, invariant, trace[-1][1]) if trace else ""
        lines.append(f"  invariant {invariant} is violated in the state after step {len(trace) - 1}{why}"
                     + (f": {what}" if what else ""))
    return "\n".join(lines)


def trace_json(model: Model, trace: Trace) -> list[dict[str, Any]]:
    """A trace as JSON-able data: [{action: repr(action) or None, state: to_json(state)}, ...]."""
    return [
        {"action": None if action is None else repr(action), "state": model.to_json(state)}
        for action, state in trace
    ]
