"""checker.traces.itf: ITF encoding and decoding, stable text, validation of files."""
from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from checker.traces import itf  # noqa: E402
from checker.config import ConfigError, load_config  # noqa: E402
from checker.traces.render import render_text  # noqa: E402


def walk(model: Any, steps: int, seed: int) -> list[tuple[Any, Any]]:
    """A seeded random walk [(None, init), (action, state), ...] of up to `steps` steps."""
    rng = random.Random(seed)
    state = model.init_states()[0]
    trace: list[tuple[Any, Any]] = [(None, state)]
    for _ in range(steps):
        successors = [(a, t) for a in model.actions(state) for t in [model.next_state(state, a)] if t is not None]
        if not successors:
            break
        action, state = rng.choice(successors)
        trace.append((action, state))
    return trace


@pytest.fixture(scope="module", params=["replication", "kraft"])
def model_and_trace(request: pytest.FixtureRequest) -> tuple[Any, Any, list[tuple[Any, Any]]]:
    rc = load_config(model=request.param, preset="smoke")
    model = rc.build()
    return rc, model, walk(model, 40, seed=7)


def test_round_trip_real_states(model_and_trace: Any) -> None:
    _, model, trace = model_and_trace
    states = {s for seed in range(10) for _, s in walk(model, 40, seed)}
    assert len(states) > 30  # varied states: logs, messages in flight, crashed brokers...
    for state in sorted(states, key=repr):
        plain = model.to_json(state)
        assert itf.from_itf(itf.encode_value(plain)) == plain
        # through JSON text as well: what a file holds
        assert itf.from_itf(json.loads(json.dumps(itf.encode_value(plain)))) == plain


def test_document_shape_and_steps(model_and_trace: Any) -> None:
    rc, model, trace = model_and_trace
    doc = itf.to_itf(model, trace, itf.run_meta(rc, invariant="x"))
    variables = list(model.to_json(trace[0][1]))
    assert doc["vars"] == variables + [itf.ACTION_KEY]
    assert doc["#meta"]["source"] == "kcheck" and doc["#meta"]["format"] == "ITF"
    assert (doc["#meta"]["model"], doc["#meta"]["variant"], doc["#meta"]["invariant"]) == (rc.model, rc.variant, "x")
    assert doc["#meta"]["config"] == dict(rc.config)
    assert [s["#meta"] for s in doc["states"]] == [{"index": i} for i in range(len(trace))]
    assert doc["states"][0][itf.ACTION_KEY] == "init"
    assert [s[itf.ACTION_KEY] for s in doc["states"][1:]] == [repr(a) for a, _ in trace[1:]]
    decoded = itf.steps(json.loads(itf.dumps(doc)))
    assert decoded == [(None if a is None else repr(a), model.to_json(s)) for a, s in trace]


def test_dumps_is_byte_stable(model_and_trace: Any) -> None:
    rc, model, trace = model_and_trace
    text = itf.dumps(itf.to_itf(model, trace, itf.run_meta(rc)))
    assert text == itf.dumps(itf.to_itf(model, trace, itf.run_meta(rc)))
    assert itf.dumps(json.loads(text)) == text  # what load reads back prints the same
    assert text.endswith("}\n") and text.isascii()
    # one line per variable of each state at most two levels deep: a change is a small diff
    assert f'   "{itf.ACTION_KEY}": "init",' in text.splitlines()


def test_write_and_load(tmp_path: Path, model_and_trace: Any) -> None:
    rc, model, trace = model_and_trace
    doc = itf.to_itf(model, trace, itf.run_meta(rc))
    path = tmp_path / "t.itf.json"
    itf.write(str(path), doc)
    assert path.read_text() == itf.dumps(doc)
    assert itf.load(str(path)) == json.loads(itf.dumps(doc))


@pytest.mark.parametrize("plain, encoded", [
    (None, {"#unserializable": "None"}),
    (2**60, {"#bigint": str(2**60)}),
    (-(2**53), {"#bigint": str(-(2**53))}),
    (2**53 - 1, 2**53 - 1),
    ({"#x": 1, "y": [None]}, {"#map": [["#x", 1], ["y", [{"#unserializable": "None"}]]]}),
    ({"a": {"b": [True, "s"]}}, {"a": {"b": [True, "s"]}}),
])
def test_encodings_invert(plain: Any, encoded: Any) -> None:
    assert itf.encode_value(plain) == encoded
    assert itf.from_itf(encoded) == plain


def test_decodes_other_tools_encodings() -> None:
    assert itf.from_itf({"#set": [1, 2]}) == [1, 2]
    assert itf.from_itf({"#tup": [{"#bigint": "3"}, "a"]}) == [3, "a"]
    assert itf.from_itf({"#map": [["k", {"#set": []}]]}) == {"k": []}
    assert itf.from_itf({"#map": [[1, "one"], [[2], "two"]]}) == [[1, "one"], [[2], "two"]]
    assert itf.from_itf(3.0) == 3


@pytest.mark.parametrize("value, message", [
    ({"#foo": 1}, "unknown ITF tag '#foo'"),
    ({"#set": 1}, "#set must hold an array"),
    ({"#bigint": "12x"}, "not a decimal integer"),
    ({"#bigint": "1", "x": 2}, "no other key"),
    ({"#unserializable": "<object>"}, "cannot compare"),
    ({"a": [1, None]}, "a[1]: null is not an ITF value"),
    (1.5, "not an integer"),
])
def test_bad_values(value: Any, message: str) -> None:
    with pytest.raises(itf.ItfError, match=message.replace("[", r"\[").replace("]", r"\]")):
        itf.from_itf(value)


def test_encode_rejects_floats() -> None:
    with pytest.raises(itf.ItfError, match="float"):
        itf.encode_value({"x": 0.5})


GOOD_STATE = {"#meta": {"index": 0}, "x": 1}


@pytest.mark.parametrize("content, message", [
    (None, "no such file"),
    (b"{not json", "not JSON"),
    (b"\xff\xfe", "not UTF-8"),
    ([1, 2], "the top level is an array, not an object"),
    ({"vars": ["x"]}, 'no "states" key'),
    ({"states": []}, "states is empty"),
    ({"states": {"x": 1}}, "states must be an array"),
    ({"states": [1]}, "state 0 is a number, not an object"),
    ({"#meta": [], "states": [GOOD_STATE]}, "#meta must be an object"),
    ({"vars": "x", "states": [GOOD_STATE]}, "vars must be an array"),
    ({"states": [GOOD_STATE, {"#meta": {"index": 5}}]}, "state 1: #meta.index is 5, expected 1"),
    ({"states": [{"x": {"#foo": 1}}]}, "state 0: x: unknown ITF tag '#foo'"),
    ({"states": [{"#x": 1}]}, "state 0: unknown key '#x'"),
    ({"vars": ["x"], "states": [{"y": 1}]}, "state 0: variable 'y' is not listed in vars"),
    ({"states": [{"mbt::actionTaken": 3}]}, "mbt::actionTaken must be a string"),
])
def test_load_errors(tmp_path: Path, content: Any, message: str) -> None:
    path = tmp_path / "bad.itf.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(json.dumps(content))
    with pytest.raises(ConfigError) as e:
        itf.load(str(path))
    text = str(e.value)
    assert text.startswith(f"trace {path}: ") and message in text and "\n" not in text


def test_load_directory(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is a directory"):
        itf.load(str(tmp_path))


def test_render_is_the_protocol_log(model_and_trace: Any) -> None:
    _, model, trace = model_and_trace
    assert itf.render(model, trace, "inv", "why") == render_text(model, trace, "inv", "why")
    assert itf.render(model, trace, "inv").endswith(f"invariant inv is violated in the state after step {len(trace) - 1}")
