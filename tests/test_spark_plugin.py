"""`--plugin FILE` on Spark (checker/walks/spark_plugins.py), on the shared local[2] session: the
file goes to the executors with SparkContext.addFile, each task checks its SHA-256 against the
driver's, and the results are the local engine's; a different file is refused in one line."""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import model as registry  # noqa: E402
from checker import cli, plugin  # noqa: E402
from tests.conftest import java_available  # noqa: E402
from tests.test_plugin import HEAD, QUORUM  # noqa: E402

pytestmark = pytest.mark.skipif(not java_available(), reason="Spark needs Java")

# A step change the search can see in its counts: the leader refuses every produce.
NO_PRODUCE = HEAD + """
MODEL = "replication"

def refuse_produce(model, s, action, base):
    return None if type(action).__name__ == "Produce" else base(s, action)

VARIANTS = [Change(Variant("no-produce", "the leader refuses every produce"), next_state=refuse_produce)]
"""


@pytest.fixture(autouse=True)
def _no_plugin_left():
    yield
    plugin.activate([])
    assert not registry.EXTENDED


def _run(capsys, *argv: str) -> tuple[int, dict]:
    code = cli.main([*argv, "--json", "--quiet"])
    out = capsys.readouterr().out
    return code, json.loads(out)


def test_simulate_with_a_plugin_on_spark_gives_the_local_walks(spark, tmp_path: Path, capsys) -> None:
    path = tmp_path / "hw_quorum.py"
    path.write_text(QUORUM)
    argv = ["simulate", "--plugin", str(path), "--variant", "hw-quorum", "--preset", "smoke", "--walks", "60",
            "--seed", "3", "--depth", "40"]
    code, remote = _run(capsys, *argv, "--engine", "spark", "--partitions", "3")
    assert remote["where"] == "spark (local[2])"
    local_code, local = _run(capsys, *argv)
    assert code == local_code == 1
    assert remote["plugins"] == local["plugins"] == [{"file": str(path.resolve()),
                                                       "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}]
    assert remote["violations"][0]["invariant"] == "candidate_completeness"  # the plugin's HW rule ran there
    for key in ("violations", "action_counts", "depth_histogram", "outcomes", "sometimes_reached",
                "distinct_states", "steps"):
        assert remote[key] == local[key], key
    # the session's Python workers are reused: the next job, without the plugin, runs without it
    code, plain = _run(capsys, "simulate", "--preset", "smoke", "--walks", "60", "--seed", "3", "--depth", "40",
                       "--engine", "spark", "--partitions", "3")
    assert code == 0 and plain["plugins"] == [] and plain["variant"] == "kafka-4.1"


def test_check_with_a_plugin_on_spark_counts_the_local_states(spark, tmp_path: Path, capsys) -> None:
    path = tmp_path / "no_produce.py"
    path.write_text(NO_PRODUCE)
    argv = ["check", "--plugin", str(path), "--variant", "no-produce", "--preset", "smoke", "--no-liveness"]
    code, remote = _run(capsys, *argv, "--engine", "spark", "--partitions", "3")
    local_code, local = _run(capsys, *argv, "--workers", "1")
    assert code == local_code == 0
    assert remote["distinct_states"] < 56_775  # fewer than Kafka 4.1's: the executors ran the plugin's step
    for key in ("result", "distinct_states", "states_generated", "depth", "action_counts", "unreached", "plugins"):
        assert remote[key] == local[key], key


def test_check_with_a_plugin_invariant_on_spark_finds_the_local_violation(spark, tmp_path: Path, capsys) -> None:
    path = tmp_path / "first_acked.py"
    path.write_text(HEAD + "MODEL = 'replication'\ndef properties(model):\n"
                           "    return [always('nothing_acked', lambda s: not s.history.acked)]\n")
    argv = ["check", "--plugin", str(path), "--preset", "smoke", "--no-liveness"]
    code, remote = _run(capsys, *argv, "--engine", "spark", "--partitions", "2")
    local_code, local = _run(capsys, *argv, "--workers", "1")
    assert code == local_code == 1 and remote["violation"]["invariant"] == "nothing_acked"
    for key in ("result", "violation", "depth"):
        assert remote[key] == local[key], key


def test_an_executor_refuses_a_plugin_file_other_than_the_drivers(spark, tmp_path: Path) -> None:
    """The file changed after the driver loaded it: every task refuses it, in one line."""
    from checker.config import load_config
    from checker.walks.spark import SparkUnavailable, run_spark
    from checker.walks.walker import ModelSpec

    path = tmp_path / "hw_quorum_refused.py"
    path.write_text(QUORUM)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    plugin.activate([str(path)])
    rc = load_config(model="replication", variant="hw-quorum", preset="smoke")
    spec = ModelSpec.of(rc.model, rc.config, rc.variant)
    assert spec.plugins == (("hw_quorum_refused.py", digest),)
    path.write_text(QUORUM.replace("leos[min_isr - 1]", "leos[0]"))  # edited while the run starts
    with pytest.raises(SparkUnavailable) as e:
        run_spark(spark.sparkContext, spec, 1, 4, 5, partitions=1)
    text = str(e.value)
    assert "\n" not in text and f"plugin hw_quorum_refused.py: this executor's copy has SHA-256 " in text, text
    assert f"the driver's {digest[:16]}: refusing to run a different file" in text, text


def test_a_worker_without_the_drivers_plugins_builds_no_model(tmp_path: Path) -> None:
    from checker.walks.walker import ModelSpec

    path = tmp_path / "hw_quorum.py"
    path.write_text(QUORUM)
    plugin.activate([str(path)])
    spec = ModelSpec.of("replication", {}, "hw-quorum")
    plugin.activate([])  # a worker that loaded nothing
    with pytest.raises(RuntimeError, match="other plugins in force than the driver"):
        spec.build()


def test_mutate_on_spark_runs_a_gate_rows_plugin(spark, tmp_path: Path, capsys) -> None:
    """A gate row naming a plugin: the file is shipped and checked, the fates are the local engine's."""
    (tmp_path / "first_acked.py").write_text(
        HEAD + "MODEL = 'replication'\ndef properties(model):\n"
               "    return [always('acked_in_order', lambda s: list(s.history.acked) == sorted(s.history.acked))]\n")
    gate = tmp_path / "gate.toml"
    gate.write_text('[[row]]\nname = "k"\nmodel = "replication"\nvariant = "kafka-4.1"\npreset = "smoke"\n'
                    'expect = "holds"\nliveness = false\nplugin = "first_acked.py"\n')
    runs = []
    for engine in ("local", "spark"):
        code = cli.main(["mutate", "--model", "replication", "--gate", str(gate), "--jobs", "1", "--engine", engine,
                         "--only", "model.replication.fault_actions:lossy_crash:drop-field:1", "--json", "--quiet",
                         "--no-liveness"])
        out = json.loads(capsys.readouterr().out)
        runs.append((code, [(m["id"], m["status"], {k: v for k, v in m["killed_by"].items() if k != "seconds"})
                            for m in out["mutants"]]))
    assert runs[0] == runs[1] and runs[0][1][0][1] == "killed"


def test_the_spark_commands_of_docs_change_md_run_as_shown(spark, tmp_path: Path, monkeypatch, capsys) -> None:
    """docs/change.md's `--engine spark` commands, beside the page's plugin file, on the shared session:
    the exit code the page gives, and the plugin's variant's counterexample."""
    import re
    import shlex

    from tests.test_change_doc import files

    for name, text in files().items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    page = (ROOT / "docs" / "change.md").read_text().split("## Where `--plugin` applies", 1)[1]
    lines = [line for line in page.splitlines() if line.startswith("kcheck ") and "--engine spark" in line]
    assert len(lines) == 2
    for line in lines:
        command, _, comment = line.partition("  #")
        code = cli.main(shlex.split(command)[1:] + ["--json", "--quiet"])
        report = json.loads(capsys.readouterr().out)
        assert code == int(re.search(r"exit (\d)", comment).group(1)), line
        broken = report["violation"]["invariant"] if "violation" in report else report["violations"][0]["invariant"]
        assert broken == "candidate_completeness" and report["plugins"][0]["file"] == str(tmp_path / "hw_quorum.py")
