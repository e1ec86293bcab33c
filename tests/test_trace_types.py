"""A trace value of the wrong JSON kind (a string for an integer, an integer for a boolean) or a
field the model's record lacks is bad input (exit 2, one line naming the state and path), not
"step N does not follow" (exit 1); the model's own states never trip the check."""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, Callable

import pytest

from checker import cli
from checker.config import load_config
from checker.traces.replay import type_error

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT / "traces" / "replication" / "unclean-election.itf.json"


def _set_hw(doc: dict[str, Any], value: Any) -> None:
    doc["states"][2]["brokers"][0]["hw"] = value


def _set_alive(doc: dict[str, Any], value: Any) -> None:
    doc["states"][2]["brokers"][0]["alive"] = value


def _add_field(doc: dict[str, Any], value: Any) -> None:
    doc["states"][2]["brokers"][0]["hw_mark"] = value


CASES: dict[str, tuple[Callable[[dict[str, Any], Any], None], Any, str]] = {
    "string for an integer": (_set_hw, "0", "state 2: brokers[0].hw: expected an integer, got a string"),
    "integer for a boolean": (_set_alive, 1, "state 2: brokers[0].alive: expected a boolean, got an integer"),
    "array for an integer": (_set_hw, [0], "state 2: brokers[0].hw: expected an integer, got an array"),
    "unknown field": (_add_field, 0, "state 2: brokers[0]: no field 'hw_mark'"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_wrong_kind_is_bad_input(capsys: pytest.CaptureFixture[str], tmp_path: Path, case: str) -> None:
    edit, value, words = CASES[case]
    doc = json.loads(TRACE.read_text())
    edit(doc, value)
    path = tmp_path / "t.itf.json"
    path.write_text(json.dumps(doc))
    code = cli.main(["replay", str(path), "--quiet"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "", (code, out, err)
    assert err.count("\n") == 1 and words in err, err


def test_the_unedited_trace_is_still_valid(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["replay", str(TRACE), "--quiet"]) == 0


@pytest.mark.parametrize("model, preset", [("replication", "default"), ("kraft", "default")])
def test_reachable_states_pass_the_check(model: str, preset: str) -> None:
    """Random walks: every state's every variable has the kinds of the initial state's."""
    m = load_config(model=model, preset=preset).build()
    example = m.to_json(m.init_states()[0])
    rng = random.Random(7)
    for _ in range(40):
        s = rng.choice(m.init_states())
        for _ in range(40):
            successors = [t for t in (m.next_state(s, a) for a in m.actions(s)) if t is not None]
            if not successors:
                break
            s = rng.choice(successors)
            for name, value in m.to_json(s).items():
                assert type_error(example[name], value, name) is None
