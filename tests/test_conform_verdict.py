"""`kcheck conform`'s verdict as a whole, without a JVM: an adapter that throws is a named finding
(EXCEPTION, with the behaviour up to it as ITF), the JSON is printed whatever happens, and
`result` speaks for every part (walks, traces, simulations), each part's own verdict beside it.

The adapter here is a test double standing in for the real code (the JVM is replaced by
monkeypatching the class path and the JVM start); tests/test_conform_kraft.py throws a Java
exception from a Kafka test double on the real KafkaRaftClient.
"""
from __future__ import annotations

import json
from typing import Any

import pytest

from checker import cli
from checker.config import load_config
from checker.conform import command, engine
from checker.conform.adapter import EXCEPTION

THROW_AT = {"step": 3}  # the adapter's step that throws (1-based); 0: never


class ThrowingAdapter:
    """Agrees with the model (it shows the model's own view) until its THROW_AT['step']th step,
    where it raises, as a real call would."""

    model_name = "kraft"

    def __init__(self, model: Any) -> None:
        self.model, self.steps, self.view = model, 0, {}

    def reset(self, state: Any) -> None:
        self.steps, self.view = 0, self.abstract(state)

    def step(self, state: Any, action: Any, successor: Any) -> str | None:
        self.steps += 1
        if self.steps == THROW_AT["step"]:
            raise RuntimeError("injected: the disk is full")
        self.view = self.abstract(successor)
        return None

    def observe(self) -> dict[str, Any]:
        return dict(self.view)

    def abstract(self, state: Any) -> dict[str, Any]:
        return {f"node{i}.role": n.role for i, n in enumerate(state.nodes)} | \
            {f"node{i}.epoch": n.epoch for i, n in enumerate(state.nodes)}

    def abstractions(self) -> dict[str, str]:
        return {"roles and epochs only": "a test double"}

    def close(self) -> None:
        pass


@pytest.fixture
def fake_jvm(monkeypatch):
    """kcheck conform with ThrowingAdapter in place of the real code's."""
    monkeypatch.setattr(command, "resolve_classpath", lambda cp: ["/fake/kafka.jar"])
    monkeypatch.setattr(command, "start_jvm", lambda cp: None)
    monkeypatch.setattr(command, "adapter_for", lambda name: ThrowingAdapter)
    monkeypatch.setitem(THROW_AT, "step", 3)


def test_an_exception_in_a_step_is_a_named_finding_not_a_refusal():
    model = load_config(model="kraft", variant="kafka-4.1", preset="elections").build()
    report = engine.Report("kraft", "kafka-4.1", ["elections"], 0, 10, False)
    out = engine.walk(model, ThrowingAdapter(model), 0, 0, 10, False, report)
    d = out.difference
    assert d is not None and d.kind == EXCEPTION and d.step == 3
    assert d.reason == "the adapter raised RuntimeError: injected: the disk is full"
    assert len(out.trail) == 4 and out.trail[-1][0] is not None  # the initial state and the three steps


def test_json_names_the_exception_and_writes_the_behaviour_up_to_it(fake_jvm, capsys, tmp_path):
    trace = tmp_path / "exc.itf.json"
    code = cli.main(["conform", "--preset", "elections", "--walks", "5", "--depth", "10", "--json",
                     "--trace-out", str(trace), "--kafka-classpath", "/fake"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1
    assert out["result"] == "exception" and out["parts"]["walks"] == "exception"
    assert out["parts"]["simulations"] == "not run" and out["parts"]["traces"] == "not run"
    assert out["difference"]["kind"] == EXCEPTION and out["difference"]["step"] == 3
    assert "RuntimeError: injected" in out["difference"]["reason"]
    doc = json.loads(trace.read_text())
    assert len(doc["states"]) == 4 and "injected" in doc["#meta"]["description"]


def test_text_names_the_exception_and_the_whole_verdict(fake_jvm, capsys):
    code = cli.main(["conform", "--preset", "elections", "--walks", "5", "--depth", "10", "--kafka-classpath", "/f"])
    text = capsys.readouterr().out
    assert code == 1
    assert "EXCEPTION in walk 0 (elections) at step 3" in text and "RuntimeError: injected" in text
    assert text.rstrip().splitlines()[-1].startswith("VERDICT of the whole run: EXCEPTION (walks exception;")


def test_agreeing_walks_and_a_failing_part_read_as_the_failure(fake_jvm, capsys, monkeypatch):
    """The walks agree, the simulations find a trace the model refuses: the whole run is a difference."""
    from checker.conform import kraft_sim

    monkeypatch.setitem(THROW_AT, "step", 0)
    bad = {"config": {"max_epoch": 4, "max_log": 2, "max_in_flight": 4}, "runs": 3, "steps": 60, "valid": 2,
           "known": {}, "action_counts": {"ElectionTimeout": 3},
           "first_invalid": {"seed": 2, "result": "invalid", "step": 7, "action": "ElectionTimeout(node=1)",
                             "document": {}}}
    monkeypatch.setattr(kraft_sim, "simulate", lambda *a, **k: bad)
    code = cli.main(["conform", "--preset", "elections", "--walks", "4", "--depth", "10", "--simulate", "3",
                     "--json", "--kafka-classpath", "/f"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["result"] == "difference"
    assert out["parts"] == {"walks": "agree", "traces": "not run", "simulations": "invalid"}


def test_an_exception_while_setting_up_still_prints_json(fake_jvm, capsys, monkeypatch):
    def broken(model):
        raise RuntimeError("injected: no such constructor")

    monkeypatch.setattr(command, "adapter_for", lambda name: broken)
    code = cli.main(["conform", "--preset", "elections", "--walks", "1", "--json", "--kafka-classpath", "/f"])
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert code == 1 and out["result"] == "exception" and "no such constructor" in out["exception"]
    assert "Traceback" not in captured.err


def test_whole_verdict_orders_the_parts():
    report = engine.Report("kraft", "kafka-4.1", [])
    verdict = command.whole_verdict
    assert verdict({"walks": "agree", "traces": "exception", "simulations": "valid"}, report) == "exception"
    assert verdict({"walks": "agree", "traces": "driven", "simulations": "invalid"}, report) == "difference"
    assert verdict({"walks": "agree", "traces": "not run", "simulations": "interrupted"}, report) == "interrupted"
    assert verdict({"walks": "agree", "traces": "driven", "simulations": "valid"}, report) == "agree"
    assert verdict({"walks": "not run", "traces": "driven", "simulations": "not run"}, report) == "no walks"
    assert command.verdict_exit("exception") == command.verdict_exit("difference") == 1
    assert command.verdict_exit("interrupted") == 3 and command.verdict_exit("agree") == 0


def test_an_exception_along_a_trace_is_the_traces_finding(fake_jvm, capsys, tmp_path):
    trace = tmp_path / "exc.itf.json"
    code = cli.main(["conform", "--walks", "0", "--traces", "traces/kraft/no-pre-vote.itf.json", "--json",
                     "--trace-out", str(trace), "--kafka-classpath", "/f"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["result"] == "exception"
    assert out["parts"] == {"walks": "not run", "traces": "exception", "simulations": "not run"}
    t = out["traces"][0]
    assert t["result"] == "exception" and t["step"] == 3 and "RuntimeError: injected" in t["outcome"]
    assert "document" not in t and len(json.loads(trace.read_text())["states"]) == 4
