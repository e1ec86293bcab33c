"""Input that used to be accepted silently: empty names, absurd process counts, Unicode digits,
more lossy crashes than crashes, a trace with no variable, an unbounded prove size; and a key
the model clamps (as Kafka does) is shown in the config echo."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from checker import cli


def _one_error(capsys: pytest.CaptureFixture[str], argv: list[str], words: str) -> None:
    code = cli.main(argv)
    out, err = capsys.readouterr()
    assert code == 2 and out == "", (code, out, err)
    assert err.count("\n") == 1 and err.startswith("kcheck: error: ") and words in err, err


CHECK = ["check", "--preset", "smoke", "--max-states", "20", "--quiet"]
REJECTED = {
    "empty model": (["check", "--model", "", "--max-states", "20", "--quiet"], "unknown model ''"),
    "empty preset": (["check", "--preset", "", "--max-states", "20", "--quiet"], "unknown preset ''"),
    "empty variant": ([*CHECK, "--variant", ""], "unknown variant ''"),
    "workers 1000": ([*CHECK, "--workers", "1000"], "--workers: at most 64"),
    "processes 1000": (["simulate", "--walks", "1", "--processes", "1000"], "--processes: at most 64"),
    "jobs 1000": (["gate", "--jobs", "1000"], "--jobs: at most 64"),
    "arabic-indic digit": ([*CHECK, "--set", "brokers=\u0663"], "must be an integer"),
    "fullwidth digit": ([*CHECK, "--set", "brokers=\uff12"], "must be an integer"),
    "underscore digits": ([*CHECK, "--set", "brokers=1_0"], "must be an integer"),
    "unicode max-states": (["check", "--preset", "smoke", "--max-states", "\u0665\u0660"], "--max-states"),
    "lossy over crashes": ([*CHECK, "--set", "crashes=0"], "lossy_crashes = 1 is more than crashes = 0"),
    "lossy over crashes, prove": (["prove", "--model", "replication", "--set", "crashes=0"],
                                  "lossy_crashes = 1 is more than crashes = 0"),
    "prove size 1000": (["prove", "--size", "1000"], "--size: at most 7"),
}


@pytest.mark.parametrize("case", sorted(REJECTED))
def test_rejected(capsys: pytest.CaptureFixture[str], case: str) -> None:
    argv, words = REJECTED[case]
    _one_error(capsys, argv, words)


@pytest.mark.parametrize("option", ["--model", "--variant", "--preset"])
def test_replay_empty_names(capsys: pytest.CaptureFixture[str], tmp_path: Path, option: str) -> None:
    trace = tmp_path / "t.itf.json"
    trace.write_text(json.dumps({"states": [{"history": {"crashes": 0}}]}))
    _one_error(capsys, ["replay", str(trace), option, ""], "''")


@pytest.mark.parametrize("doc", [{"states": [{}]}, {"states": [{}, {}, {"#meta": {"index": 2}}]}])
def test_trace_without_variables(capsys: pytest.CaptureFixture[str], tmp_path: Path, doc: dict) -> None:
    trace = tmp_path / "t.itf.json"
    trace.write_text(json.dumps(doc))
    _one_error(capsys, ["replay", str(trace)], "no state gives any variable")


def test_clamp_is_shown(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main([*CHECK, "--set", "min_insync_replicas=3"])  # smoke: 2 brokers
    out = capsys.readouterr().out
    assert code == 3
    line = next(x for x in out.splitlines() if x.startswith("config:"))
    assert "min_insync_replicas=3" in line and line.endswith("; used: min_insync_replicas=2 "
                                                              "(Kafka caps it at the replication factor, brokers)")
    assert cli.main([*CHECK, "--set", "min_insync_replicas=3", "--json"]) == 3
    report = json.loads(capsys.readouterr().out)
    assert report["clamped"] == {"min_insync_replicas": {"value": 2, "why": "Kafka caps it at the replication "
                                                                              "factor, brokers"}}
    assert cli.main(CHECK) == 3  # min ISR 1 of 2: nothing clamped
    assert "used:" not in capsys.readouterr().out


def test_ascii_values_still_work(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([*CHECK, "--set", "brokers=+2", "--set", "crashes= 1 ", "--workers", "2"]) == 3


def test_bigint_takes_ascii_digits_only() -> None:
    from checker.traces.itf import ItfError, from_itf

    assert from_itf({"#bigint": "-12345678901234567890"}) == -12345678901234567890
    for body in ("\u0663", "1_0", "\uff12"):
        with pytest.raises(ItfError, match="is not a decimal integer"):
            from_itf({"#bigint": body})


# --- more input that was accepted silently -------------------------------------------------------

def _gate_row(tmp_path: Path, extra: str) -> str:
    gate = tmp_path / "gate.toml"
    gate.write_text('[[row]]\nname = "tiny"\nmodel = "replication"\nvariant = "kafka-4.1"\nexpect = "holds"\n'
                    f'max_states = 20\n{extra}\n')
    return str(gate)


@pytest.mark.parametrize("extra,words", [
    ("workers = 1000", "'workers' must be at most 64"),
    ('set = {brokers = "3"}', "key 'brokers' must be an integer, got the string '3'"),
    ('set = {unclean_leader_election = "true"}', "must be a boolean, got the string 'true'"),
])
def test_a_gate_row_is_checked_as_the_command_line_is(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                      extra: str, words: str) -> None:
    _one_error(capsys, ["gate", _gate_row(tmp_path, extra), "--quiet"], words)


def test_a_gate_row_with_typed_values_still_runs(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert cli.main(["gate", _gate_row(tmp_path, "workers = 2\nset = {brokers = 3}"), "--quiet", "--json"]) == 1
    row = json.loads(capsys.readouterr().out)["rows"][0]
    assert row["set"] == {"brokers": 3} and row["outcome"] == "incomplete" and row["distinct_states"] == 20


def test_mutate_gate_and_presets_exclude_each_other(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    _one_error(capsys, ["mutate", "--gate", _gate_row(tmp_path, ""), "--presets", "smoke", "--list"],
               "--gate and --presets exclude each other")


def test_simulate_depth_0_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    _one_error(capsys, ["simulate", "--walks", "1", "--depth", "0"], "--depth: expected a positive integer")


def test_checkpoint_every_needs_a_run_directory(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    _one_error(capsys, [*CHECK, "--checkpoint-every", "5"], "--checkpoint-every needs --run-dir")
    run = tmp_path / "run"
    assert cli.main([*CHECK, "--run-dir", str(run), "--checkpoint-every", "5", "--no-liveness"]) == 3
    assert (run / "checkpoint.json").is_file()


@pytest.mark.parametrize("length", ["abc", "-5", "1e3", "\u0663"])
def test_explore_answers_a_bad_content_length_with_a_400(length: str) -> None:
    import http.client

    from checker.config import load_config
    from checker.view.explore import start_in_thread

    server, url = start_in_thread(load_config(model="replication", preset="smoke"))
    try:
        host, port = url.split("//")[1].rstrip("/").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        conn.putrequest("POST", "/api/state")
        conn.putheader("Content-Length", length.encode("utf-8"))
        conn.endheaders()
        response = conn.getresponse()
        body = json.loads(response.read())
        assert response.status == 400, body
        assert body["error"].startswith("Content-Length must be a number of bytes") and "Error" not in body["error"]
        conn.close()
    finally:
        server.shutdown()
        server.server_close()


def test_the_config_echo_says_what_a_special_value_means(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """replication_factor = 0 is every broker, not a factor of 0: the echo says so; --json keeps 0."""
    trace = tmp_path / "t.itf.json"
    assert cli.main(["check", "--preset", "smoke", "--variant", "hw-without-maximal-isr", "--quiet", "--no-liveness",
                     "--trace-out", str(trace)]) == 1
    for argv in (["check", "--preset", "smoke", "--max-states", "20", "--quiet"],
                 ["simulate", "--preset", "smoke", "--walks", "1", "--depth", "2", "--quiet"],
                 ["replay", str(trace), "--quiet"]):
        capsys.readouterr()
        cli.main(argv)
        line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("config:"))
        assert "replication_factor=0 (every broker)" in line and "max_faults=-1 (no joint budget)" in line, line
        assert "brokers=2 " in line  # a plain value stays plain
    assert cli.main(["check", "--preset", "smoke", "--max-states", "20", "--quiet", "--json"]) == 3
    assert json.loads(capsys.readouterr().out)["config"]["replication_factor"] == 0
