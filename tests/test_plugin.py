"""`--plugin FILE`: variants and properties defined in a file outside the repo (checker/plugin.py,
model/extension.py), checked by `kcheck check`, `kcheck gate` and `kcheck list`; each bad plugin
is one line and exit 2."""
from __future__ import annotations

import hashlib
import json
import textwrap
from pathlib import Path

import pytest

import model as registry
from checker import cli, plugin

HEAD = """\
from model.extension import Change
from model.interface import Variant, always, sometimes
"""

# A quorum high watermark (the HW follows the min ISR fastest replicas) and an invariant of its author.
QUORUM = HEAD + """
def quorum_leader_hw(*, hw, leader_leo, isr, maximal_isr, min_isr, leader_id, follower_leo,
                     caught_up_eligible=(), strict_min_isr=True, replication_factor=None):
    leos = sorted([leader_leo] + [follower_leo.get(r, -1) for r in isr if r != leader_id], reverse=True)
    return hw if len(leos) < min_isr else max(hw, leos[min_isr - 1])


MODEL = "replication"
VARIANTS = [Change(Variant("hw-quorum", "the HW is the min ISR-th largest LEO of the leader and its ISR",
                           expect="candidate_completeness", preset="smoke"),
                   replace={"model.replication.partition:leader_hw": quorum_leader_hw})]


def properties(model):
    min_isr = model.params.min_isr

    def acked_on_min_isr(s):
        return bool(s.history.lossy_crashes) or all(
            sum(1 for b in s.brokers if any(e.value == v for e in b.log)) >= min_isr for v in s.history.acked)

    return [always("acked_on_min_isr", acked_on_min_isr, "every acked value is on min ISR brokers")]
"""


@pytest.fixture(autouse=True)
def _no_plugin_left():
    yield
    plugin.activate([])
    assert not registry.EXTENDED


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def _check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict, str]:
    code = cli.main(["check", *args, "--json", "--quiet", "--no-liveness", "--workers", "1"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else {}), err


def test_a_plugin_variant_is_checked_and_named_with_its_digest(tmp_path, capsys):
    path = _write(tmp_path, "hw_quorum.py", QUORUM)
    code, report, _ = _check(capsys, "--plugin", str(path), "--variant", "hw-quorum", "--preset", "smoke")
    assert code == 1 and report["variant"] == "hw-quorum"
    assert report["violation"]["invariant"] == "candidate_completeness"
    assert report["plugins"] == [{"file": str(path.resolve()), "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}]
    assert "acked_on_min_isr" in report["invariants"]
    # Kafka 4.1 with the same plugin: the author's invariant holds, and the decision is the original again
    code, report, _ = _check(capsys, "--plugin", str(path), "--preset", "smoke")
    assert code == 0 and report["result"] == "ok" and report["distinct_states"] == 56_775
    # without the plugin the variant does not exist
    assert cli.main(["check", "--variant", "hw-quorum", "--preset", "smoke", "--quiet"]) == 2
    assert "unknown variant 'hw-quorum'" in capsys.readouterr().err


def test_a_plugin_invariant_can_fail(tmp_path, capsys):
    """The author's invariant is checked: one that Kafka 4.1 breaks gives its counterexample."""
    path = _write(tmp_path, "never_acked.py", HEAD + """
MODEL = "replication"

def properties(model):
    return [always("never_acked", lambda s: not s.history.acked, "no produce is ever acknowledged")]
""")
    code, report, _ = _check(capsys, "--plugin", str(path), "--preset", "smoke")
    assert code == 1 and report["violation"]["invariant"] == "never_acked"
    assert report["violation"]["trace"][-1]["action"].startswith("HandleFetch") or report["violation"]["trace"]


def test_a_next_state_change_is_used(tmp_path, capsys):
    """A Change with next_state: here the leader never accepts a produce, so nothing is acked."""
    path = _write(tmp_path, "no_produce.py", HEAD + """
MODEL = "replication"

def refuse_produce(model, s, action, base):
    return None if type(action).__name__ == "Produce" else base(s, action)

VARIANTS = [Change(Variant("no-produce", "the leader refuses every produce"), next_state=refuse_produce)]
""")
    code, report, _ = _check(capsys, "--plugin", str(path), "--variant", "no-produce", "--preset", "smoke")
    assert code == 0 and "record_acked" in report["unreached"]
    assert report["distinct_states"] < 56_775


def test_the_gate_runs_plugin_rows(tmp_path, capsys):
    path = _write(tmp_path, "hw_quorum.py", QUORUM)
    gate = _write(tmp_path, "gate.toml", """\
        [[row]]
        name = "kafka-4.1-smoke"
        model = "replication"
        variant = "kafka-4.1"
        preset = "smoke"
        expect = "holds"
        liveness = false
        plugin = "hw_quorum.py"

        [[row]]
        name = "hw-quorum"
        model = "replication"
        variant = "hw-quorum"
        preset = "smoke"
        expect = "candidate_completeness"
        plugin = "hw_quorum.py"
    """)
    assert cli.main(["gate", str(gate), "--json", "--quiet", "--jobs", "1", "--write-traces", str(tmp_path / "t")]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["passed"] == 2
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert all(r["plugins"] == [{"file": str(path.resolve()), "sha256": digest}] for r in report["rows"])
    meta = json.loads((tmp_path / "t" / "replication" / "hw-quorum.itf.json").read_text())["#meta"]
    assert meta["plugins"] == [{"file": "hw_quorum.py", "sha256": digest}]
    # a bug row whose Kafka 4.1 row lacks the plugin is refused: that row would not check its invariant
    gate.write_text(gate.read_text().replace('liveness = false\nplugin = "hw_quorum.py"', "liveness = false"))
    assert cli.main(["gate", str(gate), "--quiet"]) == 2
    assert "and the same plugin" in capsys.readouterr().err


def test_list_shows_plugin_variants_and_properties(tmp_path, capsys):
    path = _write(tmp_path, "hw_quorum.py", QUORUM)
    assert cli.main(["list", "--plugin", str(path), "--json"]) == 0
    replication = next(m for m in json.loads(capsys.readouterr().out)["models"] if m["name"] == "replication")
    assert {v["name"]: v.get("plugin") for v in replication["variants"]}["hw-quorum"] == str(path.resolve())
    assert "plugin" not in replication["variants"][0]  # a built-in variant
    assert "acked_on_min_isr" in [p["name"] for p in replication["properties"]]


BAD = {
    "syntax": ("def broken(:\n", "syntax error at line 1"),
    "raises": ("MODEL = 'replication'\nx = 1 / 0\n", "importing it raised ZeroDivisionError: division by zero (line 2)"),
    "exits": ("import sys\nsys.exit(3)\n", "importing it raised SystemExit: 3 (line 2)"),
    "no-model": ("VARIANTS = []\n", "defines no MODEL"),
    "unknown-model": ("MODEL = 'zookeeper'\ndef properties(m): return []\n", "MODEL: unknown model 'zookeeper'"),
    "nothing": ("MODEL = 'replication'\n", "defines neither VARIANTS nor properties(model)"),
    "variants-shape": ("MODEL = 'replication'\nVARIANTS = ['hw-quorum']\n", "VARIANTS must be a list of Change(...)"),
    "no-change": (HEAD + "MODEL = 'replication'\nVARIANTS = [Change(Variant('x', 'nothing'))]\n",
                  "variant 'x' changes nothing"),
    "switches-off": (HEAD + "MODEL = 'replication'\nVARIANTS = [Change(Variant('x', 'y', switches_off=('check_leso',)), "
                     "next_state=lambda m, s, a, base: base(s, a))]\n",
                     "variant 'x': switches_off is for built-in variants"),
    "bad-target": (HEAD + "MODEL = 'replication'\n"
                   "VARIANTS = [Change(Variant('x', 'y'), replace={'model.replication.partition:nope': print})]\n",
                   "replace: 'model.replication.partition:nope': no such function in the model"),
    "foreign-target": (HEAD + "MODEL = 'replication'\n"
                       "VARIANTS = [Change(Variant('x', 'y'), replace={'os:getcwd': print})]\n",
                       "is not in the model's package model.replication"),
    "variant-clash": (HEAD + "MODEL = 'replication'\nVARIANTS = [Change(Variant('no-elr', 'mine'), "
                      "next_state=lambda m, s, a, base: base(s, a))]\n",
                      "variant 'no-elr' is a built-in variant of model replication"),
    "bad-base": (HEAD + "MODEL = 'replication'\nVARIANTS = [Change(Variant('x', 'y'), base='kafka-3.9', "
                 "next_state=lambda m, s, a, base: base(s, a))]\n", "base 'kafka-3.9' is not a built-in variant"),
    "property-clash": (HEAD + "MODEL = 'replication'\n"
                       "def properties(model):\n    return [always('log_matching', lambda s: True)]\n",
                       "property 'log_matching' is already a property of model replication"),
    "property-shape": ("MODEL = 'replication'\ndef properties(model):\n    return ['log_matching']\n",
                       "returned 'log_matching', not a Property"),
    "property-raises": ("MODEL = 'replication'\ndef properties(model):\n    return model.nope\n",
                        "properties(model) raised AttributeError"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_plugin_is_one_line_and_exit_2(tmp_path, capsys, case):
    text, expected = BAD[case]
    path = tmp_path / f"{case}.py"
    path.write_text(text)
    assert cli.main(["check", "--plugin", str(path), "--preset", "smoke", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"kcheck: error: --plugin {path}") and "Traceback" not in err, err
    assert expected in err, err


RUNTIME = {
    "signature": (HEAD + "MODEL = 'replication'\ndef leader_hw(hw, leader_leo):\n    return hw\n"
                  "VARIANTS = [Change(Variant('x', 'y'), replace={'model.replication.partition:leader_hw': leader_hw})]\n",
                  ["--variant", "x"], "variant x's step Produce(leader=0, value=0) raised TypeError"),
    "step": (HEAD + "MODEL = 'replication'\ndef step(model, s, a, base):\n    return base(s, a).nope\n"
             "VARIANTS = [Change(Variant('x', 'y'), next_state=step)]\n",
             ["--variant", "x"], "raised AttributeError: 'State' object has no attribute 'nope' (step, line 5)"),
    "property": (HEAD + "MODEL = 'replication'\ndef properties(model):\n"
                 "    return [always('first_acked', lambda s: s.history.acked[0] >= 0)]\n",
                 [], "property first_acked raised IndexError: tuple index out of range (<lambda>, line 5)"),
}


@pytest.mark.parametrize("workers", ["1", "2"])
@pytest.mark.parametrize("case", sorted(RUNTIME))
def test_a_plugin_that_raises_while_checked_is_one_line(tmp_path, capsys, case, workers):
    """The author's code raising during the search (in a worker process too): one line naming the
    file, the variant's step or the property, the exception and the author's line; exit 2."""
    text, args, expected = RUNTIME[case]
    path = tmp_path / f"{case}.py"
    path.write_text(text)
    assert cli.main(["check", "--plugin", str(path), *args, "--preset", "smoke", "--quiet", "--workers", workers]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"kcheck: error: --plugin {path.resolve()}: ") and expected in err, err


@pytest.mark.parametrize("case", ["missing", "directory"])
def test_a_missing_plugin_file_is_one_line(tmp_path, capsys, case):
    path = tmp_path / "sub" if case == "directory" else tmp_path / "nowhere.py"
    if case == "directory":
        path.mkdir()
    for command in (["check"], ["simulate"], ["list"]):
        assert cli.main([*command, "--plugin", str(path)]) == 2
        err = capsys.readouterr().err
        assert err == f"kcheck: error: --plugin {path}: " + ("no such file" if case == "missing"
                                                            else "is a directory, not a Python file") + "\n"


def test_prove_refuses_a_replication_plugin_for_every_size(tmp_path, capsys):
    """The every-size encoding is written by hand; a fixed size proves the derived relation
    (tests/test_prove_plugin.py, docs/change.md; the Spark engines take plugins:
    tests/test_spark_plugin.py)."""
    path = _write(tmp_path, "hw_quorum.py", QUORUM)
    assert cli.main(["prove", "--plugin", str(path), "--variant", "hw-quorum", "--preset", "smoke", "--size",
                     "any"]) == 2
    assert "the every-size encoding is written by hand" in capsys.readouterr().err


def test_new_variant_writes_a_plugin_that_checks(tmp_path, capsys, monkeypatch):
    """The scaffold is a working plugin as written (a variant that changes nothing yet: Kafka 4.1's
    states), lists the model's decisions, and does not overwrite a file."""
    monkeypatch.chdir(tmp_path)
    assert cli.main(["new-variant", "my-change", "--model", "kraft"]) == 0
    text = (tmp_path / "my_change.py").read_text()
    assert "#   model.kraft.rules:majority" in text and 'MODEL = "kraft"' in text
    capsys.readouterr()
    code, report, _ = _check(capsys, "--plugin", "my_change.py", "--variant", "my-change", "--preset", "smoke")
    assert code == 0 and report["model"] == "kraft" and report["variant"] == "my-change"
    _, reference, _ = _check(capsys, "--model", "kraft", "--preset", "smoke")
    assert report["distinct_states"] == reference["distinct_states"]
    assert cli.main(["new-variant", "my-change", "--model", "kraft"]) == 2
    assert "does not overwrite" in capsys.readouterr().err
    assert cli.main(["new-variant", "kafka-4.1"]) == 2
    assert "a built-in variant" in capsys.readouterr().err


def test_simulate_and_replay_name_the_plugin(tmp_path, capsys):
    path = _write(tmp_path, "hw_quorum.py", QUORUM)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    trace = tmp_path / "walk.itf.json"
    assert cli.main(["simulate", "--plugin", str(path), "--variant", "hw-quorum", "--preset", "smoke", "--walks", "50",
                     "--seed", "1", "--processes", "2", "--json", "--quiet", "--trace-out", str(trace)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["plugins"] == [{"file": str(path.resolve()), "sha256": digest}]
    assert report["violations"][0]["invariant"] == "candidate_completeness"
    assert cli.main(["replay", str(trace), "--plugin", str(path), "--json", "--quiet"]) == 0
    replayed = json.loads(capsys.readouterr().out)
    assert replayed["variant"] == "hw-quorum" and replayed["plugins"][0]["sha256"] == digest
    # the same walk is no walk of Kafka 4.1: the HW moves where Kafka 4.1's does not
    assert cli.main(["replay", str(trace), "--plugin", str(path), "--variant", "kafka-4.1", "--quiet"]) == 1


def test_a_gate_row_with_a_bad_plugin_is_one_line(tmp_path, capsys):
    row = '[[row]]\nname = "r"\nmodel = "replication"\nvariant = "kafka-4.1"\npreset = "smoke"\nexpect = "holds"\n'
    for plugin_value, expected in (('"nowhere.py"', "nowhere.py: no such file"),
                                   ("[1]", "'plugin' must be a file name or a list of them")):
        gate = _write(tmp_path, "gate.toml", row + f"plugin = {plugin_value}\n")
        assert cli.main(["gate", str(gate), "--quiet"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "row 1 (r)" in err and expected in err, err


def test_resume_asks_for_the_plugin_of_the_run(tmp_path, capsys):
    path = _write(tmp_path, "hw_quorum.py", QUORUM)
    run = tmp_path / "run"
    assert cli.main(["check", "--plugin", str(path), "--preset", "smoke", "--run-dir", str(run), "--max-states", "500",
                     "--quiet", "--workers", "1", "--no-liveness"]) == 3
    assert cli.main(["check", "--resume", str(run), "--quiet"]) == 2
    assert f"--plugin {path.resolve()}" in capsys.readouterr().err


def test_a_step_change_has_no_rounds(tmp_path, capsys):
    """The model's rounds are runs of its built-in step: a variant that changes the step has none
    (a round search would check the built-in protocol): --rounds is bad input."""
    path = _write(tmp_path, "same.py", HEAD + """
MODEL = "kraft"
VARIANTS = [Change(Variant("same-step", "the built-in step, through next_state"),
                   next_state=lambda model, s, a, base: base(s, a))]
""")
    assert cli.main(["check", "--plugin", str(path), "--variant", "same-step", "--preset", "voter-race",
                     "--rounds", "1", "--quiet"]) == 2
    assert "rounds" in capsys.readouterr().err


def test_a_mutant_runs_with_a_plugin_rows_properties(tmp_path):
    """kcheck mutate builds a gate row's model inside the mutated package: a row that names a
    plugin gets the mutated decision and the plugin's property (its author's invariant judges too)."""
    import ast

    from checker.gate.gate import load_gate
    from checker.gate.mutation.imports import changed, source_of

    _write(tmp_path, "hw_quorum.py", QUORUM)
    gate = _write(tmp_path, "gate.toml", '[[row]]\nname = "k"\nmodel = "replication"\nvariant = "kafka-4.1"\n'
                                         'preset = "smoke"\nexpect = "holds"\nplugin = "hw_quorum.py"\n')
    row = load_gate(gate)[0]
    frozen = source_of("model.replication.partition").replace("return candidate if candidate > hw else hw", "return hw")
    with changed("replication", {"model.replication.partition": ast.parse(frozen)}):
        built = row.run_config().build()
        assert "acked_on_min_isr" in [p.name for p in built.properties]
        from checker.search.run import explore

        assert "record_acked" in explore(built, max_states=100_000).unreached  # the HW never moves
