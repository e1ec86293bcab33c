"""`kcheck check` and `kcheck list` on the toy model: exit codes, output shapes, bad input."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import model  # noqa: E402
from checker import cli  # noqa: E402
from checker.cli import check as cli_check, commands as cli_commands  # noqa: E402
from checker.config import ConfigError, load_config  # noqa: E402

JSON_FIELDS = {"model", "variant", "config", "result", "distinct_states", "states_generated", "depth",
               "seconds", "states_per_second", "unreached", "never_enabled", "action_counts", "violation"}


@pytest.fixture(autouse=True)
def toy_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(model.MODELS, "toy", "tests.toymodel")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def check_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code, out, _ = run(capsys, "check", "--model", "toy", "--json", "--quiet", *argv)
    return code, json.loads(out)


def test_ok(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "check", "--model", "toy", "--set", "k=3")
    assert code == 0
    assert "result:           ok" in out
    assert "distinct states:  16" in out
    assert "never enabled:    Never" in out
    assert "kcheck: WARNING: action Never was never enabled" in err


def test_json_ok(capsys: pytest.CaptureFixture[str]) -> None:
    code, report = check_json(capsys, "--set", "k=3")
    assert code == 0
    assert JSON_FIELDS <= set(report)
    assert report["model"] == "toy" and report["variant"] == "kafka-4.1"
    assert report["config"] == {"k": 3, "limit": 1000}
    assert (report["result"], report["distinct_states"], report["states_generated"], report["depth"]) == (
        "ok", 16, 26, 6)
    assert report["unreached"] == [] and report["never_enabled"] == ["Never"]
    assert report["action_counts"] == {"IncX": 12, "IncY": 12, "Reset": 1, "Never": 0}
    assert report["violation"] is None


def test_violation(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    trace_file = tmp_path / "cex.json"
    code, out, _ = run(capsys, "check", "--model", "toy", "--set", "limit=3", "--trace-out", str(trace_file))
    assert code == 1
    assert "result:           violation" in out
    assert "counterexample: invariant sum_below_limit violated after 3 step(s)" in out
    assert "  2. IncX()\n     x: 1 -> 2\n  3. IncY()\n     y: 0 -> 1\n" in out  # k=2: x stops at 2
    saved = json.loads(trace_file.read_text())  # an ITF trace (docs/traces.md)
    meta = saved["#meta"]
    assert meta["model"] == "toy" and meta["invariant"] == "sum_below_limit"
    assert meta["config"] == {"k": 2, "limit": 3}
    assert saved["vars"] == ["x", "y", "mbt::actionTaken"]
    assert len(saved["states"]) == 4
    assert saved["states"][0] == {"#meta": {"index": 0}, "mbt::actionTaken": "init", "x": 0, "y": 0}
    assert saved["states"][3]["mbt::actionTaken"] == "IncY()"


def test_json_violation(capsys: pytest.CaptureFixture[str]) -> None:
    code, report = check_json(capsys, "--set", "limit=2")
    assert code == 1 and report["result"] == "violation"
    v = report["violation"]
    assert v["invariant"] == "sum_below_limit"
    assert [step["action"] for step in v["trace"]] == [None, "IncX()", "IncX()"]
    assert v["trace"][-1]["state"] == {"x": 2, "y": 0}


def test_incomplete(capsys: pytest.CaptureFixture[str]) -> None:
    code, report = check_json(capsys, "--max-states", "3")
    assert code == 3 and report["result"] == "incomplete" and report["distinct_states"] == 3


def test_strict(capsys: pytest.CaptureFixture[str]) -> None:
    code, report = check_json(capsys, "--strict")
    assert code == 1 and report["result"] == "vacuous"


def test_interrupt_prints_partial_stats(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    real = cli_check.explore

    def interrupted(model: Any, **kwargs: Any) -> Any:
        def stop(_: Any) -> None:
            raise KeyboardInterrupt

        return real(model, max_states=kwargs.get("max_states"), progress=stop, progress_every=0)

    monkeypatch.setattr(cli_check, "explore", interrupted)
    code, out, _ = run(capsys, "check", "--model", "toy", "--set", "k=50")
    assert code == 3
    assert "result:           incomplete (interrupted)" in out


def test_config_file_and_precedence(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "toy.toml"
    path.write_text('model = "toy"\npreset = "smoke"\nlimit = 100\n')
    code, report = check_json(capsys, str(path))
    assert code == 0 and report["config"] == {"k": 1, "limit": 100} and report["preset"] == "smoke"
    path.write_text('model = "toy"\nk = 3\n')
    code, report = check_json(capsys, str(path), "--preset", "smoke")  # the file wins over the preset
    assert report["config"]["k"] == 3
    code, report = check_json(capsys, str(path), "--set", "k=4")  # --set wins over the file
    assert report["config"]["k"] == 4 and report["distinct_states"] == 25


def test_load_config_precedence() -> None:
    rc = load_config(model="toy", preset="smoke", overrides=["limit=7"])
    assert dict(rc.config) == {"k": 1, "limit": 7} and rc.variant == "kafka-4.1"


BAD_INPUT = {
    "unknown key": (["--set", "bogus=1"], "unknown key 'bogus' for model toy (allowed: k, limit)"),
    "bad value": (["--set", "k=three"], "key 'k' must be an integer, got 'three'"),
    "bad bool value": (["--set", "k=true"], "key 'k' must be an integer"),
    "out of range": (["--set", "k=51"], "key 'k' = 51 is out of range (min 0, max 50)"),
    "no equals": (["--set", "k"], "expected KEY=VALUE"),
    "unknown variant": (["--variant", "nope"], "unknown variant 'nope' for model toy (variants: kafka-4.1)"),
    "unknown preset": (["--preset", "nope"], "unknown preset 'nope' for model toy (presets: default, smoke, tight)"),
    "missing file": (["/nonexistent/kcheck.toml"], "config file /nonexistent/kcheck.toml: no such file"),
    "bad max-states": (["--max-states", "0"], "argument --max-states: expected a positive integer"),
    "unknown option": (["--bogus"], "unrecognized arguments: --bogus"),
    "missing trace dir": (["--trace-out", "/nonexistent/dir/t.json"], "does not exist"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUT))
def test_bad_input(capsys: pytest.CaptureFixture[str], case: str) -> None:
    argv, message = BAD_INPUT[case]
    code, out, err = run(capsys, "check", "--model", "toy", *argv)
    assert_one_line_error(code, out, err, message)


def assert_one_line_error(code: int, out: str, err: str, message: str) -> None:
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("kcheck: error: "), err
    assert message in err
    assert "Traceback" not in err


def test_unknown_model(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "check", "--model", "nope")
    assert_one_line_error(code, out, err, "unknown model 'nope' (models: ")


def test_unavailable_model(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(model.MODELS, "ghost", "model.ghost_does_not_exist")
    code, out, err = run(capsys, "check", "--model", "ghost")
    assert_one_line_error(code, out, err, "model 'ghost' is not available")


@pytest.mark.parametrize("text,message", [
    ("k = = 3\n", "malformed TOML"),
    ('model = "toy"\n[table]\nk = 1\n', "key 'table' is a table"),
    ('model = "toy"\nk = "3"\n', "key 'k' must be an integer"),
    ('model = "toy"\nk = 99\n', "out of range"),
    ('model = "toy"\nzzz = 1\n', "unknown key 'zzz'"),
    ('model = 3\n', "'model' must be a string"),
])
def test_bad_config_file(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    code, out, err = run(capsys, "check", str(path), "--model", "toy")
    assert_one_line_error(code, out, err, message)
    assert str(path) in err


def test_config_error_names_file() -> None:
    with pytest.raises(ConfigError, match="no such file"):
        load_config(model="toy", path="/nonexistent.toml")


def test_unknown_command(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "frobnicate")
    assert_one_line_error(code, out, err, "invalid choice: 'frobnicate'")


def test_help_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", "--help")
    assert code == 0 and "--max-states" in out and "--strict" in out


def test_list(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "list", "--json")
    assert code == 0
    listing = json.loads(out)
    toy = next(m for m in listing["models"] if m["name"] == "toy")
    assert toy["variants"][0] == {"name": "kafka-4.1", "bug_id": "", "description": "the toy as is",
                                  "expect": "holds", "preset": "default", "reference": "", "switches_off": []}
    assert {(p["name"], p["kind"]) for p in toy["properties"]} == {("sum_below_limit", "always"),
                                                                    ("both_max", "sometimes")}
    assert toy["config_keys"][0] == {"name": "k", "type": "int", "default": 2, "min": 0, "max": 50,
                                     "doc": "counter bound"}
    assert toy["presets"] == {"default": {}, "smoke": {"k": 1}, "tight": {"k": 2, "limit": 5}}
    names = {m["name"] for m in listing["models"]} | {s["name"] for s in listing["skipped"]}
    assert names == set(model.MODELS)


def test_list_names_the_properties_only_some_presets_declare(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "list", "--json")
    models = {m["name"]: m for m in json.loads(out)["models"]}
    replication = {p["name"]: p for p in models["replication"]["properties"]}
    assert replication["leader_recovering"]["only_on"] == ["last-known-leader"]
    assert "only_on" not in replication["record_acked"]  # on the default configuration
    kraft = {p["name"]: p for p in models["kraft"]["properties"]}
    assert kraft["prospective_resolves_4"]["only_on"] == ["five-voters"]
    code, out, _ = run(capsys, "list")
    assert "leader_recovering (only on preset last-known-leader): a leader elected uncleanly" in out


def test_list_text_skips_broken_model(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(model.MODELS, "ghost", "model.ghost_does_not_exist")
    code, out, err = run(capsys, "list")
    assert code == 0
    assert "toy: two bounded counters (tests only)" in out and "sum_below_limit: x + y < limit" in out
    assert "kcheck: warning: skipping model ghost" in err


def test_commands_table_extends_with_one_line(capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(cli_commands.COMMANDS, "ghost", cli_commands.Command.from_module("checker.ghost_command", "not there"))
    code, out, err = run(capsys, "ghost")
    assert_one_line_error(code, out, err, "cannot import checker.ghost_command")
    code, out, err = run(capsys, "check", "--model", "toy", "--quiet", "--json")
    assert code == 0


def test_console_script() -> None:
    """The installed `kcheck` script: bad input is one line and exit 2; --help is exit 0."""
    script = shutil.which("kcheck", path=str(Path(sys.executable).parent)) or shutil.which("kcheck")
    if script is None:
        pytest.skip("the kcheck console script is not installed (pip install -e .)")
    bad = subprocess.run([script, "check", "--model", "no-such-model"], capture_output=True, text=True)
    assert_one_line_error(bad.returncode, bad.stdout, bad.stderr, "unknown model 'no-such-model'")
    argparse_bad = subprocess.run([script, "check", "--max-states", "x"], capture_output=True, text=True)
    assert_one_line_error(argparse_bad.returncode, argparse_bad.stdout, argparse_bad.stderr, "--max-states")
    ok = subprocess.run([script, "--help"], capture_output=True, text=True)
    assert ok.returncode == 0 and "check" in ok.stdout


@pytest.mark.parametrize("workers", ["1", "2", "3"])
def test_workers_give_the_same_report(capsys: pytest.CaptureFixture[str], workers: str) -> None:
    code, report = check_json(capsys, "--set", "k=6", "--workers", workers)
    assert code == 0 and report["workers"] == int(workers)
    # (k+1)^2 states; generated = 2k(k+1) increments + 1 reset + 1 initial state; depth 2k
    assert (report["distinct_states"], report["states_generated"], report["depth"]) == (49, 86, 12)
    code, report = check_json(capsys, "--set", "k=6", "--set", "limit=5", "--workers", workers)
    assert code == 1 and len(report["violation"]["trace"]) == 6


def test_bad_workers_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "check", "--model", "toy", "--workers", "0")
    assert code == 2 and "--workers" in err and "Traceback" not in err
