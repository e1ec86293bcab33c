"""`kcheck graph`: the state graph through networkx (checker/view/graph_export.py)."""
from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import pytest

from checker.search.run import explore
from checker.cli.commands import main
from checker.config import load_config
from checker.view.graph_export import explore_graph


def test_the_graph_has_every_state_and_step_bfs_explores(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    model = load_config(model="kraft", preset="smoke").build()
    r = explore(model, reduce=False)
    out = tmp_path / "smoke.graphml"
    assert main(["graph", "--model", "kraft", "--preset", "smoke", "--format", "graphml", "--out", str(out)]) == 0
    g = nx.read_graphml(out)
    assert g.number_of_nodes() == r.distinct_states == 515
    assert g.number_of_edges() == r.states_generated - 1  # BFS counts the initial state as generated
    assert all(d["label"].startswith("v0 ") for _, d in g.nodes(data=True))
    assert {d["action"] for _, _, d in g.edges(data=True)} >= {"ElectionTimeout", "HandleVoteRequest", "SendFetch"}


def test_the_shortest_counterexample_is_marked():
    model = load_config(model="replication", preset="smoke", variant="fenced-may-join-isr",
                        overrides=["losses=0"]).build()
    g = explore_graph(model, 50_000)
    bad = [v for v, d in g.nodes(data=True) if d["violates"]]
    assert bad and all("structural" in g.nodes[v]["violates"] for v in bad[:1])
    marked = dict((u, w) for u, w, d in g.edges(data=True) if d["counterexample"])
    chain = [0]
    while chain[-1] in marked:
        chain.append(marked[chain[-1]])
    assert chain[-1] == min(bad) and len(chain) - 1 == len(marked)  # one path, from the initial state
    assert len(marked) == nx.shortest_path_length(g, 0, min(bad)) == len(explore(model, reduce=False).violation["trace"]) - 1


def test_dot_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["graph", "--model", "kraft", "--preset", "smoke"]) == 0
    dot = capsys.readouterr().out
    assert dot.startswith('digraph "kraft kafka-4.1 smoke" {') and dot.count(" -> ") == 1279
    assert main(["graph", "--model", "kraft", "--preset", "smoke", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["nodes"]) == 515 and len(data["links"]) == 1279


def test_a_graph_past_the_limit_is_refused_in_one_line(capsys: pytest.CaptureFixture[str]):
    assert main(["graph", "--preset", "smoke", "--max-states", "100"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "passes --max-states 100 states" in err


def test_the_doc_commands_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """docs/visual.md's `kcheck graph` commands, as written."""
    root = Path(__file__).resolve().parents[1]
    commands = [line for line in (root / "docs" / "visual.md").read_text().splitlines()
                if line.startswith("kcheck graph ")]
    assert len(commands) == 2
    monkeypatch.chdir(tmp_path)
    for command in commands:
        assert main(command.split()[1:]) == 0, command
    assert nx.read_graphml(tmp_path / "r8.graphml").number_of_nodes() > 1000
    assert (tmp_path / "smoke.dot").read_text().startswith("digraph")
