"""Traces in the Informal Trace Format (ITF), the JSON interchange format of Apalache and Quint.

A document is `{"#meta": {...}, "vars": [...], "states": [...]}`; each state is an object
`{"#meta": {"index": i}, "mbt::actionTaken": ..., "<var>": <value>, ...}` with one key per
variable of `model.to_json(state)`. Values are encoded as ITF expressions:

  JSON object      -> ITF record (the same object); an object with a key starting with `#`
                      (which a record cannot have) -> `{"#map": [[key, value], ...]}`
  list / tuple     -> JSON array (an ITF sequence)
  int              -> JSON number; outside +-(2^53 - 1) -> `{"#bigint": "<decimal>"}`
  str, bool        -> themselves
  None             -> `{"#unserializable": "None"}` (ITF has no null; this is the only
                      `#unserializable` value kcheck reads back)

Decoding (`from_itf`) inverts this exactly and also reads what other tools write:
`#set` and `#tup` become lists, `#map` a dict when every key is a string (else a list of
[key, value] pairs), `#bigint` an int.

The action that led to a state is recorded as Quint's model-based-testing variable
`mbt::actionTaken`: the action's repr (`Fetch(follower=2)`), `"init"` in the initial state (as
Quint writes it; an action repr always has parentheses, so it cannot clash). It is listed in
`vars` like Quint does. Replay reads it as "the action to try"; a state without it (or with
`""`) means any action. Other `mbt::` keys are carried along and ignored.
"""
from __future__ import annotations

import json
from typing import Any, Mapping

from checker import limits
from checker.config import ConfigError, parse_decimal
from checker.traces.render import Trace, render_text

ACTION_KEY = "mbt::actionTaken"
INIT_ACTION = "init"
FORMAT_DESCRIPTION = "https://apalache-mc.org/docs/adr/015adr-trace.html"
MAX_SAFE = 2**53 - 1  # the largest integer every JSON reader holds exactly
NONE = {"#unserializable": "None"}
WIDTH = 100  # `dumps` prints a value on one line when it fits in this many columns
TAGS = ("#set", "#tup", "#map", "#bigint", "#unserializable")


class ItfError(ValueError):
    """A value or document that is not ITF as kcheck reads it; `str` names the path in it."""


# --- values ---------------------------------------------------------------------------------------


def encode_value(value: Any) -> Any:
    """A plain JSON value (as `to_json` returns) as an ITF expression."""
    if value is None:
        return dict(NONE)
    if isinstance(value, bool) or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value if -MAX_SAFE <= value <= MAX_SAFE else {"#bigint": str(value)}
    if isinstance(value, (list, tuple)):
        return [encode_value(v) for v in value]
    if isinstance(value, Mapping):
        if all(isinstance(k, str) and not k.startswith("#") for k in value):
            return {k: encode_value(v) for k, v in value.items()}
        return {"#map": [[encode_value(k), encode_value(v)] for k, v in value.items()]}
    raise ItfError(f"cannot encode {type(value).__name__} {value!r} in ITF (no floats or objects)")


def from_itf(value: Any, path: str = "") -> Any:
    """One ITF expression decoded to plain JSON (raises ItfError naming `path` for bad input)."""
    if isinstance(value, bool) or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):  # json reads 1e3 and 1.0 as floats; ITF integers are exact
        if value.is_integer() and abs(value) <= MAX_SAFE:
            return int(value)
        raise ItfError(f"{path or 'value'}: {value!r} is not an integer (ITF has no floats)")
    if isinstance(value, list):
        return [from_itf(v, f"{path}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        tags = [k for k in value if isinstance(k, str) and k.startswith("#")]
        if not tags:
            return {k: from_itf(v, f"{path}.{k}" if path else k) for k, v in value.items()}
        return _tagged(value, tags, path or "value")
    if value is None:
        raise ItfError(f"{path or 'value'}: null is not an ITF value (kcheck writes None as {json.dumps(NONE)})")
    raise ItfError(f"{path or 'value'}: {value!r} is not an ITF value")


def _tagged(value: dict[str, Any], tags: list[str], path: str) -> Any:
    tag = tags[0]
    if len(value) != 1:
        raise ItfError(f"{path}: an object with {tag} must have no other key, got {sorted(value)}")
    body = value[tag]
    if tag in ("#set", "#tup"):
        if not isinstance(body, list):
            raise ItfError(f"{path}: {tag} must hold an array")
        return [from_itf(v, f"{path}[{i}]") for i, v in enumerate(body)]
    if tag == "#map":
        if not isinstance(body, list) or not all(isinstance(p, list) and len(p) == 2 for p in body):
            raise ItfError(f"{path}: #map must hold an array of [key, value] pairs")
        pairs = [(from_itf(k, f"{path}[{i}].key"), from_itf(v, f"{path}[{i}].value")) for i, (k, v) in enumerate(body)]
        if all(isinstance(k, str) for k, _ in pairs):
            return dict(pairs)
        return [[k, v] for k, v in pairs]
    if tag == "#bigint":
        if not isinstance(body, str):
            raise ItfError(f"{path}: #bigint must hold a decimal string")
        try:
            return parse_decimal(body)  # ASCII digits only, as for --set
        except ValueError:
            raise ItfError(f"{path}: #bigint {body!r} is not a decimal integer") from None
    if tag == "#unserializable":
        if body == NONE["#unserializable"]:
            return None
        raise ItfError(f"{path}: cannot compare the unserializable value {body!r} (kcheck only reads \"None\")")
    raise ItfError(f"{path}: unknown ITF tag {tag!r} (known: {', '.join(TAGS)})")


# --- documents ------------------------------------------------------------------------------------


def to_itf(model: Any, trace: Trace, meta: Mapping[str, Any], loop: int | None = None) -> dict[str, Any]:
    """A trace [(action or None, state), ...] as an ITF document; `meta` goes into `#meta`
    (after `format`, `format-description` and `source`, which it may not override). A lasso
    (liveness counterexample) has a top-level `loop`: the index of the state its last state
    equals, so that the steps after `loop` repeat forever (`loop` = the last index: the last
    state repeats forever, with no step)."""
    header = {"format": "ITF", "format-description": FORMAT_DESCRIPTION, "source": "kcheck"}
    header.update({k: v for k, v in meta.items() if k not in header})
    states: list[dict[str, Any]] = []
    variables: list[str] = []
    for index, (action, state) in enumerate(trace):
        values = model.to_json(state)
        if not variables:
            variables = list(values)
        item: dict[str, Any] = {"#meta": {"index": index},
                                ACTION_KEY: INIT_ACTION if action is None else repr(action)}
        for name, value in values.items():
            item[name] = encode_value(value)
        states.append(item)
    doc: dict[str, Any] = {"#meta": header, "vars": variables + [ACTION_KEY], "states": states}
    if loop is not None:
        doc["loop"] = loop
    return doc


def run_meta(rc: Any, **extra: Any) -> dict[str, Any]:
    """The `#meta` of a run of RunConfig `rc`: model, variant, preset, config, then `extra`
    (e.g. invariant, description, seed) in the order given."""
    meta: dict[str, Any] = {"model": rc.model, "variant": rc.variant, "preset": rc.preset,
                            "config": dict(rc.config)}
    meta.update(extra)
    return meta


def _format(value: Any, indent: int, levels: int) -> str:
    """Compact JSON when it fits in WIDTH columns at this indent (or `levels` is 0), else one
    item per line, each formatted with one level less: a change to a state then shows in a
    diff as one changed line per top-level element or field of a variable."""
    text = json.dumps(value, separators=(", ", ": "))
    if levels <= 0 or len(text) + indent <= WIDTH or not isinstance(value, (list, dict)) or not value:
        return text
    pad, inner = " " * indent, " " * (indent + 1)
    if isinstance(value, dict):
        items = [f"{inner}{json.dumps(k)}: {_format(v, indent + 1, levels - 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    items = [f"{inner}{_format(v, indent + 1, levels - 1)}" for v in value]
    return "[\n" + ",\n".join(items) + f"\n{pad}]"


def dumps(doc: Mapping[str, Any]) -> str:
    """The document as stable, diff-friendly text: keys in their given order, one line per
    state variable, and a long variable one line per element or field (deeper values compact);
    ASCII only, a trailing newline. The same document always gives the same bytes."""
    lines = ["{"]
    keys = list(doc)
    for i, key in enumerate(keys):
        comma = "," if i < len(keys) - 1 else ""
        value = doc[key]
        if key == "states" and isinstance(value, list) and value:
            lines.append(f' {json.dumps(key)}: [')
            for j, state in enumerate(value):
                lines.append(_format_state(state, j < len(value) - 1))
            lines.append(f" ]{comma}")
        else:
            lines.append(f" {json.dumps(key)}: {_format(value, 1, 2)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _format_state(state: Any, more: bool) -> str:
    tail = "," if more else ""
    if not isinstance(state, dict) or not state:
        return f"  {json.dumps(state)}{tail}"
    items = [f"   {json.dumps(k)}: {_format(v, 3, 1)}" for k, v in state.items()]
    return "  {\n" + ",\n".join(items) + f"\n  }}{tail}"


def write(path: str, doc: Mapping[str, Any], option: str = "--trace-out") -> None:
    """Write `dumps(doc)` to `path`; a ConfigError (one line, naming `option`) if it cannot."""
    try:
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(dumps(doc))
    except OSError as e:
        raise ConfigError(f"{option} {path}: cannot write: {e.strerror or e}") from e


def load(path: str) -> dict[str, Any]:
    """Read and validate an ITF file; every problem is a ConfigError naming the file.

    Checks: the file exists and is JSON; the top level is an object with a non-empty `states`
    array; `#meta`, when present, is an object; `vars`, when present, is an array of strings;
    each state is an object whose `#meta.index`, when present, is its position, whose
    `mbt::actionTaken`, when present, is a string, whose keys are listed in `vars` (when
    given), and whose every value decodes (`from_itf`). States may give only some variables.
    Returns the document as read."""
    where = f"trace {path}"
    try:
        with open(path, "rb") as f:
            raw = f.read(limits.MAX_TRACE_BYTES + 1)  # one byte more tells a file over the limit
    except FileNotFoundError:
        raise ConfigError(f"{where}: no such file") from None
    except IsADirectoryError:
        raise ConfigError(f"{where}: is a directory, not an ITF file") from None
    except OSError as e:
        raise ConfigError(f"{where}: cannot read: {e.strerror or e}") from None
    limits.check_json_text(raw, where)  # before the parser and from_itf recurse
    try:
        doc = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ConfigError(f"{where}: not UTF-8 text: {e}") from None
    except json.JSONDecodeError as e:
        raise ConfigError(f"{where}: not JSON: {e}") from None
    try:
        validate(doc)
    except ItfError as e:
        raise ConfigError(f"{where}: {e}") from None
    return doc  # type: ignore[no-any-return]


def validate(doc: Any) -> None:
    """Raise ItfError (one line) unless `doc` is an ITF document kcheck can read."""
    if not isinstance(doc, dict):
        raise ItfError(f"not an ITF document: the top level is {_kind(doc)}, not an object")
    if "states" not in doc:
        raise ItfError("not an ITF document: no \"states\" key (expected #meta, vars, states)")
    meta = doc.get("#meta", {})
    if not isinstance(meta, dict):
        raise ItfError(f"#meta must be an object, got {_kind(meta)}")
    variables = doc.get("vars")
    if variables is not None and not (isinstance(variables, list) and all(isinstance(v, str) for v in variables)):
        raise ItfError("vars must be an array of variable names")
    states = doc["states"]
    if not isinstance(states, list):
        raise ItfError(f"states must be an array, got {_kind(states)}")
    if not states:
        raise ItfError("states is empty: a trace has at least an initial state")
    loop = doc.get("loop")
    if loop is not None and (isinstance(loop, bool) or not isinstance(loop, int) or not 0 <= loop < len(states)):
        raise ItfError(f"loop must be the index of a state (0..{len(states) - 1}), got {loop!r}")
    known = None if variables is None else set(variables)
    for i, state in enumerate(states):
        if not isinstance(state, dict):
            raise ItfError(f"state {i} is {_kind(state)}, not an object")
        smeta = state.get("#meta", {})
        if not isinstance(smeta, dict):
            raise ItfError(f"state {i}: #meta must be an object")
        index = smeta.get("index", i)
        if index != i or isinstance(index, bool):
            raise ItfError(f"state {i}: #meta.index is {index!r}, expected {i}")
        action = state.get(ACTION_KEY)
        if action is not None and not isinstance(action, str):
            raise ItfError(f"state {i}: {ACTION_KEY} must be a string, got {_kind(action)}")
        for key, value in state.items():
            if key == "#meta" or key.startswith("mbt::"):
                continue
            if key.startswith("#"):
                raise ItfError(f"state {i}: unknown key {key!r} (a state holds #meta and variables)")
            if known is not None and key not in known:
                raise ItfError(f"state {i}: variable {key!r} is not listed in vars")
            from_itf(value, f"state {i}: {key}")


def _kind(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", int: "a number",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


def steps(doc: Mapping[str, Any]) -> list[tuple[str | None, dict[str, Any]]]:
    """The states of a validated document as (action repr or None, {variable: plain value}).
    The action is None for the initial state's `init` and when the state names none."""
    out: list[tuple[str | None, dict[str, Any]]] = []
    for i, state in enumerate(doc["states"]):
        action = state.get(ACTION_KEY) or None
        if i == 0 and action == INIT_ACTION:
            action = None
        values = {k: from_itf(v, f"state {i}: {k}") for k, v in state.items()
                  if k != "#meta" and not k.startswith("mbt::")}
        out.append((action, values))
    return out


def render(model: Any, trace: Trace, invariant: str | None = None, description: str = "") -> str:
    """The human-readable rendering of a trace (the protocol log `kcheck check` prints)."""
    return render_text(model, trace, invariant, description)


def meta_of(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The document's `#meta` (an empty dict when it has none)."""
    meta = doc.get("#meta", {})
    return dict(meta) if isinstance(meta, Mapping) else {}


__all__ = ["to_itf", "from_itf", "encode_value", "dumps", "load", "render", "write", "steps", "run_meta",
           "meta_of", "validate", "ItfError", "ACTION_KEY", "INIT_ACTION"]
