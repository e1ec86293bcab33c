"""The checked-in counterexamples, traces/<model>/<variant>.itf.json: each replays as valid under
its own variant and as invalid under Kafka 4.1 (the model's first variant), which names the step
it forbids (for a lasso, a liveness counterexample: a step, or the fairness its cycle breaks);
every bug variant has one. Regenerate them with
`kcheck gate spec/gate.toml --write-traces traces` (docs/traces.md)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import model as registry  # noqa: E402
from checker.traces import itf
from checker.traces import replay  # noqa: E402
from checker.config import load_definition  # noqa: E402

TRACES = ROOT / "traces"
FILES = sorted(TRACES.glob("*/*.itf.json")) if TRACES.is_dir() else []


def _id(path: Path) -> str:
    return f"{path.parent.name}/{path.name[:-len('.itf.json')]}"


def _outcome(path: Path, variant: str | None) -> replay.Outcome:
    doc = itf.load(str(path))
    rc = replay.trace_config(doc, str(path), variant=variant)
    model = replay.model_for(doc, rc.build())
    steps = itf.steps(doc)
    replay.check_variables(steps, doc, replay.model_variables(model), str(path), rc.model)
    return replay.replay(model, steps, loop=doc.get("loop"))


def test_every_bug_variant_has_a_trace() -> None:
    if not TRACES.is_dir():
        pytest.skip("no traces/ folder yet (kcheck gate spec/gate.toml --write-traces traces)")
    missing = []
    for name in registry.MODELS:
        for v in load_definition(name).variants:
            if v.expect == "holds":
                continue
            path = TRACES / name / f"{v.name}.itf.json"
            if not path.is_file() or not path.with_name(f"{v.name}.txt").is_file():
                missing.append(f"{name}/{v.name}")
    assert not missing, f"no trace (.itf.json and .txt) for: {', '.join(missing)}"


@pytest.mark.parametrize("path", FILES, ids=[_id(p) for p in FILES])
def test_trace_replays(path: Path) -> None:
    doc = itf.load(str(path))
    meta = doc["#meta"]
    assert (meta["model"], meta["variant"]) == (path.parent.name, _id(path).split("/")[1])
    own = _outcome(path, None)
    assert own.result == "valid", f"{path} does not replay under its own variant: step {own.failed_step}"
    if "loop" in doc:  # a lasso: its cycle closes and is fair, so the temporal property fails
        assert meta["kind"] == "liveness" and own.cycle_closed and own.unfair == []
    else:
        assert meta["invariant"] in own.broken_invariants  # and it ends in the violation it documents

    kafka = load_definition(meta["model"]).variants[0].name
    o = _outcome(path, kafka)
    assert o.result == "invalid" and o.failed_step is not None and o.failed_step >= 1, (
        f"{path}: {kafka} does not forbid this trace")
