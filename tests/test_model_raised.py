"""An exception raised by the model's own code (an edited model: here kraft's check that no
action sends into a slot that holds a message) ends a run with exit 2 and one line naming the
exception and the model's frames, never a verdict or a traceback; an exception of kcheck itself
keeps its traceback."""
from __future__ import annotations

import traceback

import pytest

from checker.cli import check as check_command
from checker.cli.commands import main, model_raised
from model.kraft import network
from model.kraft.state import FETCH_REQUEST, FetchRequest


def _slot_taken() -> Exception:
    """The model's own check, raised from its code: a second Fetch from node 1 to node 0."""
    from checker.config import load_config

    s = load_config(model="kraft", preset="smoke").build().init_states()[0]
    m = FetchRequest(FETCH_REQUEST, 1, 0, True, 0, 0, 0, False)
    try:
        network.send(network.send(s, m), m)
    except network.SlotTaken as e:
        return e
    raise AssertionError("the second send was taken")


def test_one_line_for_the_models_exception_here_and_from_a_worker():
    e = _slot_taken()
    line = model_raised(e)
    assert line is not None and "SlotTaken: a second message in flight" in line
    assert line.count("model/kraft/network.py:") == 1
    assert "without a verdict" in line
    # the multi-process search hands a worker's traceback to the coordinator as text
    try:
        raise e
    except network.SlotTaken:
        text = traceback.format_exc()
    from_worker = model_raised(RuntimeError(f"worker 1 failed:\n{text}"))
    assert from_worker is not None and "SlotTaken" in from_worker and "model/kraft/network.py:" in from_worker


def test_an_exception_outside_the_model_is_not_flattened():
    try:
        {}["missing"]
    except KeyError as e:
        assert model_raised(e) is None


def test_check_ends_with_exit_2_and_one_line(monkeypatch, capsys):
    def explore(*args, **kwargs):
        raise _slot_taken()

    monkeypatch.setattr(check_command, "explore", explore)
    assert main(["check", "--model", "kraft", "--preset", "smoke", "--no-liveness"]) == 2
    out, err = capsys.readouterr()
    assert err.startswith("kcheck: error: the model raised model.kraft.network.SlotTaken") and "Traceback" not in err
    assert err.count("\n") == 1 and "ok" not in out


def test_a_fault_of_kcheck_keeps_its_traceback(monkeypatch):
    def explore(*args, **kwargs):
        raise KeyError("kcheck's own")

    monkeypatch.setattr(check_command, "explore", explore)
    with pytest.raises(KeyError):
        main(["check", "--model", "kraft", "--preset", "smoke", "--no-liveness"])
