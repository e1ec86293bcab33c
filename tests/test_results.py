"""`--out DIR` (checker/walks/results.py): docs/simulate.md's two commands and three Spark SQL
queries run as written on the shared local[2] session, their answers checked against the rows read
back with pyarrow; both engines write the same rows; `kcheck check --engine spark --out` writes
levels and action counts that add up to the search's own; a bad --out is one line, exit 2."""
from __future__ import annotations

import json
import re
import shlex
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from checker import cli  # noqa: E402
from tests.conftest import java_available  # noqa: E402

pyarrow = pytest.importorskip("pyarrow")
import pyarrow.parquet as pq  # noqa: E402

SECTION = (ROOT / "docs" / "simulate.md").read_text().split("## Results as data (`--out DIR`)", 1)[1].split("\n## ", 1)[0]


def _fenced(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", SECTION, re.DOTALL)


def _rows(folder: Path) -> list[dict]:
    return pq.read_table(folder).to_pylist()  # a folder of Parquet files (Spark's _SUCCESS left out)


def _walks(folder: Path) -> list[dict]:
    rows = sorted(_rows(folder / "walks"), key=lambda r: r["walk_id"])
    for r in rows:
        r["action_counts"] = dict(r["action_counts"])
    return rows


@pytest.mark.skipif(not java_available(), reason="Spark needs Java")
def test_the_documented_commands_and_queries_answer_from_the_rows(spark, tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    commands = [line for line in _fenced("sh")[0].splitlines() if line.startswith("kcheck ")]
    assert len(commands) == 2
    for line in commands:
        command, _, comment = line.partition("  #")
        assert cli.main(shlex.split(command)[1:] + ["--quiet"]) == int(re.search(r"exit (\d)", comment).group(1))
        capsys.readouterr()
    plain, swarm = tmp_path / "results" / "plain", tmp_path / "results" / "swarm"
    runs = {p.name: _rows(p / "run")[0] for p in (plain, swarm)}
    walks = {p.name: _walks(p) for p in (plain, swarm)}
    assert runs["swarm"]["engine"] == "spark" and runs["plain"]["engine"] == "local"
    assert [len(w) for w in walks.values()] == [400, 400]
    assert runs["plain"]["command"] == commands[0].partition("  #")[0] + " --quiet"
    violations = _rows(plain / "violations")
    assert violations and all((plain / v["trace"]).is_file() for v in violations)

    # the views, as the page makes them (the JVM's working directory is not this test's)
    setup = _fenced("python")[0].replace('f"results/', f'f"{tmp_path}/results/')
    exec(compile(setup, "docs/simulate.md", "exec"), {})  # noqa: S102 - the page's own example
    queries = _fenced("sql")
    assert len(queries) == 3
    untaken, by_depth, compared = ([tuple(r) for r in spark.sql(q).collect()] for q in queries)

    expected_untaken = sorted((runs[name]["command"], kind) for name in runs for kind in runs[name]["action_kinds"]
                              if not any(kind in w["action_counts"] for w in walks[name]))
    assert untaken == expected_untaken
    depths = Counter((w["violated"], w["steps"]) for name in walks for w in walks[name] if w["violated"])
    assert by_depth == [(v, s, n) for (v, s), n in sorted(depths.items())] and by_depth
    kinds = sorted({k for name in walks for w in walks[name] for k in w["action_counts"]})

    def took(name: str, kind: str) -> list[dict]:
        return [w for w in walks[name] if kind in w["action_counts"]]

    def mean(rows: list[dict]) -> float | None:
        return round(sum(w["cells"] for w in rows) / len(rows), 1) if rows else None

    assert compared == [(k, len(took("plain", k)), len(took("swarm", k)), mean(took("plain", k)),
                         mean(took("swarm", k))) for k in kinds]


@pytest.mark.skipif(not java_available(), reason="Spark needs Java")
def test_both_engines_write_the_same_rows(spark, tmp_path: Path, capsys) -> None:
    argv = ["simulate", "--preset", "smoke", "--variant", "hw-without-maximal-isr", "--walks", "120", "--seed", "4",
            "--quiet"]
    local, remote = tmp_path / "local", tmp_path / "spark"
    assert cli.main(argv + ["--out", str(local)]) == 1
    assert cli.main(argv + ["--engine", "spark", "--partitions", "3", "--out", str(remote)]) == 1
    capsys.readouterr()
    assert _walks(local) == _walks(remote)
    assert _rows(local / "violations") == _rows(remote / "violations")
    one, other = _rows(local / "run")[0], _rows(remote / "run")[0]
    assert one["run_id"] == other["run_id"] and one["distinct_states"] == other["distinct_states"]
    assert sum(w["steps"] for w in _walks(local)) > 0 and any(w["cells"] > 1 for w in _walks(local))


@pytest.mark.skipif(not java_available(), reason="Spark needs Java")
def test_check_on_spark_writes_levels_and_actions_that_add_up(spark, tmp_path: Path, capsys) -> None:
    out = tmp_path / "check"
    assert cli.main(["check", "--model", "kraft", "--preset", "smoke", "--engine", "spark", "--partitions", "2",
                     "--no-liveness", "--json", "--quiet", "--out", str(out)]) == 0
    report = json.loads(capsys.readouterr().out)
    levels = sorted(_rows(out / "levels"), key=lambda r: r["level"])
    actions = _rows(out / "actions")
    run = _rows(out / "run")[0]
    assert [r["level"] for r in levels] == list(range(len(levels))) and len(levels) == report["depth"] + 2
    assert sum(r["new_states"] for r in levels) == report["distinct_states"] == run["distinct_states"]
    assert sum(r["generated"] for r in levels) == report["states_generated"] == run["states_generated"]
    per_kind: Counter = Counter()
    for r in actions:
        per_kind[r["action"]] += r["generated"]
    assert {k: n for k, n in report["action_counts"].items() if n} == dict(per_kind)
    assert run["result"] == "ok" and run["engine"] == "spark" and run["where"] == "spark (local[2])"


def test_a_bad_out_is_one_line(tmp_path: Path, capsys) -> None:
    full = tmp_path / "full"
    full.mkdir()
    (full / "x").write_text("")
    a_file = tmp_path / "file"
    a_file.write_text("")
    cases = [(["simulate", "--out", str(full)], f"--out {full}: not empty"),
             (["simulate", "--out", str(a_file)], f"--out {a_file}: not a directory"),
             (["simulate", "--out", str(a_file / "sub")], f"--out {a_file / 'sub'}: {a_file} is not a directory"),
             (["simulate", "--out", "/proc/kcheck-results"], "--out /proc/kcheck-results: cannot write in /proc"),
             (["check", "--preset", "smoke", "--out", str(tmp_path / "new")], "--out needs --engine spark")]
    for argv, message in cases:
        assert cli.main([*argv, "--preset", "smoke", "--walks", "2", "--quiet"] if argv[0] == "simulate"
                        else argv) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, (argv, err)
    assert not (tmp_path / "new").exists()
