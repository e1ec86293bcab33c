"""Long phases speak: replay reports progress between many short steps (not only inside a long
one), prove prints a line while Z3 is silent; `kcheck check --timeout` stops the whole run like
Ctrl-C (partial result, exit 3)."""
from __future__ import annotations

import io
import json
import time
from pathlib import Path

import pytest

from checker import cli, heartbeat, stop
from checker.traces import itf
from checker.search.run import explore
from checker.config import load_config
from checker.traces.replay import replay

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_check_timeout_gives_a_partial_result(capsys: pytest.CaptureFixture[str], workers: str) -> None:
    start = time.monotonic()
    code = cli.main(["check", "--timeout", "0.5", "--workers", workers, "--json", "--quiet"])  # default: minutes
    out, err = capsys.readouterr()
    assert code == 3 and time.monotonic() - start < 10
    report = json.loads(out)
    assert report["result"] == "incomplete" and report["interrupted"] and report["distinct_states"] > 0
    assert "kcheck: --timeout 0.5 s reached: stopping with a partial result" in err


class _StopOnFinalise:
    """Requests a stop from `__del__`, where Python swallows the exception it raises (as it does
    for a signal handler's KeyboardInterrupt that lands in a gc callback)."""

    def __del__(self) -> None:
        stop.request(KeyboardInterrupt)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_stop_request_that_python_swallowed_still_stops_the_search() -> None:
    model = load_config(preset="smoke").build()
    try:
        _StopOnFinalise()  # freed at once: the KeyboardInterrupt is raised and lost
        result = explore(model)
    finally:
        stop.clear()
    assert result.interrupted and result.result == "incomplete" and result.distinct_states < 5000


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_stop_request_left_from_an_earlier_run_does_not_stop_the_next(capsys: pytest.CaptureFixture[str]) -> None:
    _StopOnFinalise()
    assert cli.main(["check", "--preset", "smoke", "--max-states", "50", "--json", "--quiet"]) == 3
    assert not json.loads(capsys.readouterr().out)["interrupted"]


def test_no_timeout_no_alarm(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["check", "--preset", "smoke", "--max-states", "50", "--timeout", "60", "--quiet"]) == 3
    import signal

    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)  # disarmed after the run


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "x"])
@pytest.mark.parametrize("command", [["check"], ["prove", "--bmc", "1"]])
def test_bad_timeout(capsys: pytest.CaptureFixture[str], command: list[str], value: str) -> None:
    assert cli.main([*command, "--timeout", value]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "expected a positive number of seconds" in err, err


def test_replay_reports_progress_between_short_steps() -> None:
    path = ROOT / "traces" / "replication" / "unclean-election.itf.json"
    doc = itf.load(str(path))
    meta = itf.meta_of(doc)
    model = load_config(model=meta["model"], variant=meta["variant"], overrides=meta["config"]).build()
    steps = itf.steps(doc)
    seen: list[tuple[int, int]] = []
    outcome = replay(model, steps, progress=lambda step, n: seen.append((step, n)), progress_every=0.0)
    assert outcome.result == "valid"
    assert [step for step, _ in seen] == list(range(1, len(steps)))  # every step is past the interval


def test_heartbeat_speaks_only_after_silence() -> None:
    quiet, noisy = io.StringIO(), io.StringIO()
    with heartbeat.Heartbeat("prove", noisy, every=0.05) as h:
        h.beat("lemma a")
        time.sleep(0.3)
    assert "kcheck: prove: still running" in noisy.getvalue() and "(last: lemma a)" in noisy.getvalue()
    with heartbeat.Heartbeat("prove", quiet, every=5.0) as h:
        time.sleep(0.1)
    assert quiet.getvalue() == ""


def test_prove_has_a_heartbeat(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heartbeat, "EVERY", 0.01)
    # two voters: the BMC derives every action instance first (seconds; at three, a minute)
    assert cli.main(["prove", "--model", "kraft", "--preset", "smoke", "--size", "2", "--bmc", "1"]) == 0
    err = capsys.readouterr().err
    assert "kcheck: prove --bmc: still running" in err
    assert cli.main(["prove", "--model", "kraft", "--preset", "smoke", "--size", "2", "--bmc", "1", "--quiet"]) == 0
    assert capsys.readouterr().err == ""
