"""`kcheck replay` and checker.traces.replay: valid, invalid, tampered, partial traces; exit codes."""
from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from checker import cli
from checker.traces import itf
from checker.traces import replay  # noqa: E402
from checker.search.run import explore  # noqa: E402
from checker.config import load_config, load_definition  # noqa: E402
from checker.traces.render import ABSENT  # noqa: E402
from tests.test_itf import walk  # noqa: E402

# A bug variant whose counterexample BFS finds in well under a second on this configuration.
VARIANT = "response-before-metadata"
SMALL = {"crashes": 0, "lossy_crashes": 0, "losses": 0}


@pytest.fixture(scope="module")
def counterexample() -> tuple[Any, dict[str, Any]]:
    """(run config, ITF document) of the shortest counterexample of VARIANT."""
    rc = load_config(model="replication", variant=VARIANT, preset="smoke", overrides=SMALL)
    model = rc.build()
    r = explore(model)
    assert r.violation is not None
    v = r.violation
    return rc, itf.to_itf(model, v["trace"], itf.run_meta(rc, invariant=v["invariant"], description=v["description"]))


def build(rc: Any, variant: str | None = None) -> Any:
    return load_config(model=rc.model, variant=variant or rc.variant, preset=rc.preset, overrides=dict(rc.config)).build()


def check(model: Any, doc: dict[str, Any], **kw: Any) -> replay.Outcome:
    return replay.replay(model, itf.steps(doc), **kw)


def test_counterexample_valid_under_its_variant(counterexample: Any) -> None:
    rc, doc = counterexample
    o = check(build(rc), doc)
    steps = len(doc["states"]) - 1
    assert (o.result, o.steps, o.checked, o.failed_step) == ("valid", steps, steps, None)
    assert o.final_candidates == 1
    assert o.broken_invariants == [doc["#meta"]["invariant"]]


def test_counterexample_invalid_under_kafka(counterexample: Any) -> None:
    rc, doc = counterexample
    kafka = build(rc, "kafka-4.1")
    o = check(kafka, doc)
    assert o.result == "invalid" and o.failed_step is not None and o.failed_step >= 1
    k = o.failed_step
    assert o.checked == k - 1
    assert o.action == doc["states"][k][itf.ACTION_KEY]
    assert o.nearest_action is not None and o.differences
    # it is the FIRST step that does not follow: the prefix before it is a valid Kafka 4.1 run
    prefix = dict(doc, states=doc["states"][:k])
    assert check(kafka, prefix).result == "valid"


def test_tampered_state_fails_at_that_step(counterexample: Any) -> None:
    rc, doc = counterexample
    for k in (1, len(doc["states"]) // 2, len(doc["states"]) - 1):
        bad = copy.deepcopy(doc)
        bad["states"][k]["brokers"][1]["hw"] = 7
        o = check(build(rc), bad)
        assert (o.result, o.failed_step) == ("invalid", k)
        assert o.action_enabled is True  # the action is enabled; its successor differs
        assert o.nearest_action == doc["states"][k][itf.ACTION_KEY]
        assert [(p, new) for p, _, new in o.differences] == [("brokers[1].hw", 7)]


def test_tampered_initial_state(counterexample: Any) -> None:
    rc, doc = counterexample
    bad = copy.deepcopy(doc)
    bad["states"][0]["controller"]["log"][0]["leader_epoch"] = 3
    o = check(build(rc), bad)
    assert (o.result, o.failed_step, o.nearest_action) == ("invalid", 0, None)
    assert [(p, old, new) for p, old, new in o.differences] == [("controller.log[0].leader_epoch", 0, 3)]


def test_wrong_action_name(counterexample: Any) -> None:
    rc, doc = counterexample
    bad = copy.deepcopy(doc)
    bad["states"][2][itf.ACTION_KEY] = "Crash(broker=0)"  # crashes = 0: never enabled here
    o = check(build(rc), bad)
    assert (o.result, o.failed_step, o.action, o.action_enabled) == ("invalid", 2, "Crash(broker=0)", False)
    assert o.nearest_action == doc["states"][2][itf.ACTION_KEY] and o.differences == []


def test_action_names_ignore_blanks(counterexample: Any) -> None:
    rc, doc = counterexample
    spaced = copy.deepcopy(doc)
    for state in spaced["states"][1:]:
        state[itf.ACTION_KEY] = state[itf.ACTION_KEY].replace("=", " = ")
    assert check(build(rc), spaced).result == "valid"


def drop(doc: dict[str, Any], keep: set[str], actions: bool = True) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    for state in out["states"]:
        for key in list(state):
            if not key.startswith(("#", "mbt::")) and key not in keep:
                del state[key]
        if not actions:
            state.pop(itf.ACTION_KEY)
    return out


def test_partial_states_replay(counterexample: Any) -> None:
    rc, doc = counterexample
    names = [v for v in doc["vars"] if not v.startswith("mbt::")]
    half = set(names[::2])
    model = build(rc)
    for partial in (drop(doc, half), drop(doc, half, actions=False), drop(doc, {"brokers"}, actions=False)):
        o = check(model, partial)
        assert o.result == "valid" and o.final_candidates >= 1
    # a partial trace still catches a tampered value of a variable it gives
    bad = drop(doc, {"brokers"}, actions=False)
    bad["states"][3]["brokers"][0]["alive"] = False
    o = check(model, bad)
    assert (o.result, o.failed_step) == ("invalid", 3)
    assert o.action is None and o.action_enabled is None
    # ... and the Kafka 4.1 model rejects the partial counterexample too
    assert check(build(rc, "kafka-4.1"), drop(doc, half)).result == "invalid"


def test_partial_records(counterexample: Any) -> None:
    """Records may leave fields out: what a broker's logs show of it, say."""
    rc, doc = counterexample
    seen = ("alive", "leader_epoch", "isr", "hw")
    partial = drop(doc, {"brokers"}, actions=False)
    for state in partial["states"]:
        state["brokers"] = [{k: b[k] for k in seen} for b in state["brokers"]]
    model = build(rc)
    assert check(model, partial).result == "valid"
    bad = copy.deepcopy(partial)
    bad["states"][5]["brokers"][0]["hw"] = 9
    o = check(model, bad)
    assert (o.result, o.failed_step) == ("invalid", 5)
    assert [(p, new) for p, _, new in o.differences] == [("brokers[0].hw", 9)]  # only the fields given
    typo = copy.deepcopy(partial)
    typo["states"][0]["brokers"][1]["HW"] = 0
    o = check(model, typo)
    assert (o.result, o.failed_step, o.differences) == ("invalid", 0, [("brokers[1].HW", ABSENT, 0)])


def test_covers() -> None:
    assert replay.covers({"a": 1, "b": [1, {"c": 2, "d": 3}]}, {"b": [1, {"d": 3}]})
    assert not replay.covers({"a": 1, "b": [1, {"c": 2}]}, {"b": [1, {"c": 3}]})
    assert not replay.covers({"a": 1, "b": [1, 2]}, {"b": [1]})  # lists are not partial
    assert not replay.covers({"a": 1}, {"z": 1})
    assert not replay.covers([1], {"a": 1}) and not replay.covers({"a": 1}, [1])


def test_gap_allows_unrecorded_actions(counterexample: Any) -> None:
    rc, doc = counterexample
    sparse = copy.deepcopy(doc)
    sparse["states"] = [s for i, s in enumerate(sparse["states"]) if i % 2 == 0]  # every other state recorded
    for i, state in enumerate(sparse["states"]):
        state["#meta"]["index"] = i
    model = build(rc)
    assert (check(model, sparse).result, check(model, sparse).failed_step) == ("invalid", 1)
    o = check(model, sparse, gap=1)
    assert (o.result, o.checked) == ("valid", len(sparse["states"]) - 1)
    assert check(model, drop(sparse, {"brokers", "controller"}, actions=False), gap=1).result == "valid"
    assert check(build(rc, "kafka-4.1"), sparse, gap=1).result == "invalid"


def test_candidate_limit_is_incomplete(counterexample: Any) -> None:
    rc, doc = counterexample
    partial = drop(doc, {"history"}, actions=False)
    o = check(build(rc), partial, max_candidates=1)
    assert o.result == "incomplete" and o.failed_step is not None and o.max_candidates_seen > 1
    assert check(build(rc), partial).result == "valid"


def test_symmetric_model_keeps_concrete_states() -> None:
    """Kraft's encode identifies renamed states (symmetry); replay must not: node 1 timing out
    first is a different state from node 0 doing so."""
    rc = load_config(model="kraft", preset="smoke", overrides={"symmetry": True})
    model = rc.build()
    init = model.init_states()[0]
    timeouts = [(a, model.next_state(init, a)) for a in model.actions(init) if type(a).__name__ == "ElectionTimeout"]
    assert len(timeouts) == 2 and model.encode(timeouts[0][1]) == model.encode(timeouts[1][1])
    t1 = timeouts[1][1]
    after = next((a, model.next_state(t1, a)) for a in model.actions(t1) if model.next_state(t1, a) is not None)
    doc = itf.to_itf(model, [(None, init), timeouts[1], after], itf.run_meta(rc))
    same = [k for k, v in model.to_json(t1).items() if model.to_json(timeouts[0][1])[k] == v]
    assert "nodes" not in same
    for state in doc["states"][:2]:  # steps 0 and 1 give only what both renamings share
        for key in list(state):
            if key not in same and not key.startswith(("#", "mbt::")):
                del state[key]
        state.pop(itf.ACTION_KEY)
    o = check(model, doc)  # step 2, in full, follows only from node 1's timeout
    assert o.result == "valid" and o.final_candidates == 1


def test_kraft_walk_replays() -> None:
    rc = load_config(model="kraft", preset="smoke")
    model = rc.build()
    trace = walk(model, 30, seed=3)
    doc = itf.to_itf(model, trace, itf.run_meta(rc))
    o = check(model, doc)
    assert (o.result, o.checked) == ("valid", len(trace) - 1)
    assert check(model, drop(doc, {"nodes"}, actions=False)).result == "valid"


def test_configuration_variant_settings_do_not_follow_the_trace() -> None:
    """A configuration variant's trace (e.g. ELR off) replayed under Kafka 4.1 runs on Kafka 4.1's
    settings, not on the ones the variant forced into the trace's config."""
    found = [(name, v) for name in ("replication", "kraft") for v in load_definition(name).variants if v.settings]
    if not found:
        pytest.skip("no variant forces config settings")
    name, variant = found[0]
    rc = load_config(model=name, variant=variant.name, preset=variant.preset)
    doc = {"#meta": itf.run_meta(rc), "states": [{}]}
    assert replay.trace_config(doc, "t").config == rc.config  # its own variant: the trace's config
    kafka = replay.trace_config(doc, "t", variant=load_definition(name).variants[0].name)
    plain = load_config(model=name, preset=variant.preset)
    for key, value in variant.settings:
        assert kafka.config[key] == plain.config[key] != value
    assert {k: v for k, v in kafka.config.items() if k not in dict(variant.settings)} == {
        k: v for k, v in rc.config.items() if k not in dict(variant.settings)}


# --- the command line ------------------------------------------------------------------------------


@pytest.fixture()
def trace_file(tmp_path: Path, counterexample: Any) -> Path:
    path = tmp_path / "cex.itf.json"
    itf.write(str(path), counterexample[1])
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(["replay", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_valid(capsys: pytest.CaptureFixture[str], trace_file: Path, counterexample: Any) -> None:
    steps = len(counterexample[1]["states"]) - 1
    code, out, err = run(capsys, str(trace_file))
    assert code == 0 and err == ""
    assert f"variant:  {VARIANT}" in out and f"result:   valid: {steps} steps" in out
    assert "the last state breaks invariant candidate_completeness" in out


def test_check_trace_out_then_replay(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "cex.itf.json"
    sets = [a for k, v in SMALL.items() for a in ("--set", f"{k}={v}")]
    code = cli.main(["check", "--variant", VARIANT, "--preset", "smoke", *sets, "--quiet", "--workers", "1",
                     "--trace-out", str(out)])
    capsys.readouterr()
    assert code == 1
    assert itf.load(str(out))["#meta"]["invariant"] == "candidate_completeness"
    assert run(capsys, str(out))[0] == 0
    assert run(capsys, str(out), "--variant", "kafka-4.1")[0] == 1


def test_cli_invalid_under_kafka(capsys: pytest.CaptureFixture[str], trace_file: Path) -> None:
    code, out, _ = run(capsys, str(trace_file), "--variant", "kafka-4.1", "--json")
    report = json.loads(out)
    assert code == 1 and report["result"] == "invalid" and report["variant"] == "kafka-4.1"
    fields = {"trace", "model", "variant", "preset", "config", "result", "steps", "checked_steps", "failed_step",
              "action", "action_enabled", "nearest_action", "differences", "max_candidates_seen", "seconds"}
    assert fields <= set(report)
    k = report["failed_step"]
    assert report["checked_steps"] == k - 1
    assert report["differences"] and all("path" in d for d in report["differences"])
    code, out, _ = run(capsys, str(trace_file), "--variant", "kafka-4.1")
    assert code == 1 and "variant:  kafka-4.1" in out
    assert f"result:   invalid: step {k} does not follow\n  step {k}: {report['action']}\n" in out
    first = report["differences"][0]
    assert f"    {first['path']}: " in out


def test_cli_unknown_action(capsys: pytest.CaptureFixture[str], tmp_path: Path, counterexample: Any) -> None:
    doc = copy.deepcopy(counterexample[1])
    doc["states"][1][itf.ACTION_KEY] = "Bogus(x=1)"
    path = tmp_path / "bogus.itf.json"
    itf.write(str(path), doc)
    code, out, _ = run(capsys, str(path))
    assert code == 1
    assert "  the action is not enabled in any state the trace can be in after step 0 " \
           "(the model has no action Bogus)" in out
    assert f"  nearest legal successor, by {counterexample[1]['states'][1][itf.ACTION_KEY]}, differs in" in out
    assert "    nothing: that action leads to exactly the trace's state" in out


def test_cli_set_and_preset_override(capsys: pytest.CaptureFixture[str], trace_file: Path) -> None:
    code, out, _ = run(capsys, str(trace_file), "--json", "--set", "max_in_flight=3")
    report = json.loads(out)
    assert report["config"]["max_in_flight"] == 3 and report["config"]["crashes"] == 0  # the trace's, + --set
    assert code == 0  # more room for messages: the same run is still possible
    code, out, _ = run(capsys, str(trace_file), "--json", "--preset", "default")
    assert json.loads(out)["config"]["brokers"] == 3  # the preset replaces the trace's config
    assert code == 1 and json.loads(out)["failed_step"] == 0  # 3 brokers: not this initial state


def test_cli_incomplete(capsys: pytest.CaptureFixture[str], tmp_path: Path, counterexample: Any) -> None:
    path = tmp_path / "partial.itf.json"
    itf.write(str(path), drop(counterexample[1], {"history"}, actions=False))
    code, out, _ = run(capsys, str(path), "--max-candidates", "1", "--quiet")
    assert code == 3 and "result:   incomplete: more than 1 model states match step" in out


def write_json(tmp_path: Path, value: Any) -> str:
    path = tmp_path / f"t{len(list(tmp_path.iterdir()))}.itf.json"
    path.write_text(json.dumps(value) if not isinstance(value, str) else value)
    return str(path)


def test_cli_bad_input(capsys: pytest.CaptureFixture[str], tmp_path: Path, counterexample: Any) -> None:
    doc = counterexample[1]
    unknown_var = copy.deepcopy(doc)
    unknown_var["states"][2]["brokerz"] = []
    del unknown_var["vars"]  # optional: a hand-written trace may leave it out
    unknown_in_vars = dict(doc, vars=doc["vars"] + ["nodes"])
    bad_config = copy.deepcopy(doc)
    bad_config["#meta"]["config"]["voters"] = 3
    cases = [
        ([str(tmp_path / "missing.json")], "no such file"),
        ([write_json(tmp_path, "{oops")], "not JSON"),
        ([write_json(tmp_path, {"trace": []})], 'no "states" key'),
        ([write_json(tmp_path, unknown_var)], "state 2: unknown variable 'brokerz' for model replication"),
        ([write_json(tmp_path, unknown_in_vars)], "vars: unknown variable 'nodes'"),
        ([write_json(tmp_path, doc), "--model", "nosuch"], "unknown model 'nosuch'"),
        ([write_json(tmp_path, doc), "--variant", "nosuch"], "unknown variant 'nosuch'"),
        ([write_json(tmp_path, doc), "--set", "brokers=99"], "out of range"),
        ([write_json(tmp_path, bad_config)], "#meta.config: override voters=3: unknown key 'voters'"),
        ([write_json(tmp_path, doc), "--model", "kraft"], "unknown variable 'brokers' for model kraft"),
        ([write_json(tmp_path, doc), "--max-candidates", "0"], "expected a positive integer"),
    ]
    for argv, message in cases:
        code, out, err = run(capsys, *argv)
        assert code == 2, (argv, err)
        assert out == "" and err.startswith("kcheck: error: ") and message in err, (argv, err)
        assert err.count("\n") == 1 and "Traceback" not in err
