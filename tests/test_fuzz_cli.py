"""Fuzzing the command line in-process (Hypothesis): random TOML files, --set values and ITF
documents give either bad input (exit 2, exactly one `kcheck: error:` line on stderr) or a
verdict (0, 1 or 3), never an exception."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checker import cli
from model import definition

ROOT = Path(__file__).resolve().parents[1]
TRACE = json.loads((ROOT / "traces" / "replication" / "unclean-election.itf.json").read_text())
KEYS = [k.name for k in definition("replication").config_keys] + ["model", "variant", "preset"]
FAST = ["--max-states", "30", "--workers", "1", "--quiet"]
SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _verdict_or_one_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code = cli.main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    if code == 2:
        assert err.count("\n") == 1 and err.startswith("kcheck: error: "), err
        assert out == ""
    else:
        assert code in (0, 1, 3), (code, err)


scalars = st.one_of(st.integers(-2**70, 2**70), st.integers(-3, 8), st.booleans(), st.text(max_size=8),
                    st.floats(allow_nan=True, allow_infinity=True))
json_values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                            st.dictionaries(st.text(max_size=6), inner, max_size=4)),
                           max_leaves=12)


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return {"nan": "nan", "inf": "inf", "-inf": "-inf"}.get(repr(v), repr(v))
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml_value(x)}" for k, x in v.items()) + "}"
    return json.dumps(v) if isinstance(v, str) else str(v)


toml_lines = st.lists(st.tuples(st.one_of(st.sampled_from(KEYS), st.from_regex(r"[a-z_]{1,8}", fullmatch=True)),
                                json_values), max_size=5)
plausible = st.lists(st.tuples(st.sampled_from(KEYS[:-3]), st.one_of(st.integers(-1, 3), st.booleans())), max_size=4)
toml_texts = st.one_of(plausible.map(lambda lines: "preset = \"smoke\"\n" + "".join(
                           f"{k} = {_toml_value(v)}\n" for k, v in lines)),
                       toml_lines.map(lambda lines: "".join(f"{k} = {_toml_value(v)}\n" for k, v in lines)),
                       st.text(max_size=60),
                       st.integers(1, 3000).map(lambda n: "a = " + "[" * n + "]" * n + "\n"))


@SETTINGS
@given(text=toml_texts)
def test_random_toml(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str) -> None:
    path = tmp_path / "fuzz.toml"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    _verdict_or_one_line(capsys, ["check", str(path), *FAST])


set_values = st.one_of(st.text(max_size=12), st.integers(-10, 10).map(str), st.sampled_from(
    ["true", "false", "TRUE", " 3 ", "+2", "-0", "0x3", "1e3", "3.0", "\u0663", "１", "nan", ""]))


@SETTINGS
@given(pairs=st.one_of(
           st.lists(st.tuples(st.sampled_from(KEYS[:-3]), st.integers(-1, 3).map(str)), max_size=4),
           st.lists(st.tuples(st.one_of(st.sampled_from(KEYS), st.text(max_size=6)), set_values), max_size=4)),
       raw=st.lists(st.text(max_size=10), max_size=2))
def test_random_set_values(capsys: pytest.CaptureFixture[str], pairs: list[tuple[str, str]], raw: list[str]) -> None:
    argv = ["check", "--preset", "smoke", *FAST]
    for key, value in pairs:
        argv += ["--set", f"{key}={value}"]
    for text in raw:
        argv += ["--set", text]
    _verdict_or_one_line(capsys, argv)


def _mutate(doc: Any, path: list[Any], value: Any) -> Any:
    """`doc` with the node reached by following `path` (indices taken modulo) replaced."""
    if not path or not isinstance(doc, (list, dict)) or not doc:
        return value
    if isinstance(doc, list):
        i = path[0] % len(doc)
        return doc[:i] + [_mutate(doc[i], path[1:], value)] + doc[i + 1:]
    key = sorted(doc)[path[0] % len(doc)]
    return {**doc, key: _mutate(doc[key], path[1:], value)}


itf_docs = st.one_of(
    json_values,
    st.builds(lambda states: {"states": states}, st.lists(json_values, max_size=3)),
    st.builds(_mutate, st.just(TRACE), st.lists(st.integers(0, 50), min_size=1, max_size=7), json_values),
)


@SETTINGS
@given(doc=itf_docs, quick=st.booleans())
def test_random_itf(capsys: pytest.CaptureFixture[str], tmp_path: Path, doc: Any, quick: bool) -> None:
    path = tmp_path / "fuzz.itf.json"
    path.write_text(json.dumps(doc))
    argv = ["replay", str(path), "--quiet", "--max-candidates", "200"] + (["--set", "max_in_flight=1"] if quick else [])
    _verdict_or_one_line(capsys, argv)
