"""`kcheck graph`: the explored state graph of a small configuration, through networkx, for
Graphviz (DOT), Gephi (GraphML) or a notebook (node-link JSON).

Nodes are states, in breadth-first order (node 0 is the initial state), labelled by the model's
`summary(state)` (a short line) and carrying the invariants they break; edges are actions,
labelled by their repr. The shortest path to the first violating state, if any, is marked
(`counterexample`). The model's `next_state` is used as it is: no stutter or symmetry reduction
is applied by the checker (a model's own symmetry, as the kraft model's fingerprint, merges
states that are renamings of one another). Past `--max-states` the command refuses, exit 2,
instead of growing the graph.
"""
from __future__ import annotations

import argparse
import io
import json
import sys
from collections import deque
from typing import Any

import networkx as nx

from checker.fingerprint import state_fingerprint
from checker.config import ConfigError

FORMATS = ("dot", "graphml", "json")
DEFAULT_MAX_STATES = 10_000


class TooLarge(Exception):
    pass


def explore_graph(model: Any, max_states: int) -> nx.MultiDiGraph:
    """Every reachable state and step, breadth first. Raises TooLarge past `max_states`."""
    fp_of = state_fingerprint(model)
    summary = getattr(model, "summary", None) or (lambda s: json.dumps(model.to_json(s))[:80])
    invariants = [p for p in model.properties if p.kind == "always"]
    g = nx.MultiDiGraph()
    index: dict[int, int] = {}
    states: deque[tuple[int, Any]] = deque()

    def add(s: Any) -> int:
        fp = fp_of(s)
        v = index.get(fp)
        if v is None:
            if len(index) >= max_states:
                raise TooLarge(max_states)
            v = index[fp] = len(index)
            broken = [p.name for p in invariants if not p.predicate(s)]
            g.add_node(v, label=summary(s), violates=",".join(broken), counterexample=False)
            states.append((v, s))
        return v

    for s in model.init_states():
        add(s)
    parent: dict[int, tuple[int, int]] = {}
    while states:
        v, s = states.popleft()
        for a in model.actions(s):
            t = model.next_state(s, a)
            if t is None:
                continue
            known = len(index)
            w = add(t)
            key = g.add_edge(v, w, label=repr(a), action=type(a).__name__, counterexample=False)
            if w == known:
                parent[w] = (v, key)
    bad = next((v for v in sorted(g.nodes) if g.nodes[v]["violates"]), None)
    if bad is not None:
        g.nodes[bad]["counterexample"] = True
        while bad in parent:
            u, key = parent[bad]
            g.edges[u, bad, key]["counterexample"] = True
            g.nodes[u]["counterexample"] = True
            bad = u
    return g


def _dot_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(g: nx.MultiDiGraph, name: str) -> str:
    """Graphviz DOT: violating states red, the counterexample bold."""
    lines = [f"digraph {_dot_quote(name)} {{", "  node [shape=box, fontname=monospace, fontsize=9];",
             "  edge [fontname=monospace, fontsize=8];"]
    for v, d in g.nodes(data=True):
        attrs = [f"label={_dot_quote(str(v) + ': ' + d['label'] + (chr(10) + 'violates ' + d['violates'] if d['violates'] else ''))}"]
        if d["violates"]:
            attrs.append("color=red")
        if d["counterexample"]:
            attrs.append("penwidth=2.5")
        lines.append(f"  {v} [{', '.join(attrs)}];")
    for u, w, d in g.edges(data=True):
        attrs = [f"label={_dot_quote(d['label'])}"]
        if d["counterexample"]:
            attrs.append("penwidth=2.5, color=red")
        lines.append(f"  {u} -> {w} [{', '.join(attrs)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def render(g: nx.MultiDiGraph, fmt: str, name: str) -> str:
    if fmt == "dot":
        return to_dot(g, name)
    if fmt == "graphml":
        buffer = io.BytesIO()
        nx.write_graphml(g, buffer)
        return buffer.getvalue().decode()
    return json.dumps(nx.node_link_data(g, edges="links"), indent=1) + "\n"


# --- the command ---------------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from checker.cli.options import _positive_int, add_config_arguments

    add_config_arguments(parser)
    parser.add_argument("--format", choices=FORMATS, default="dot", help="dot (Graphviz), graphml (Gephi) or json"
                        " (networkx node-link); default dot")
    parser.add_argument("--max-states", type=_positive_int, default=DEFAULT_MAX_STATES, metavar="N",
                        help=f"refuse (exit 2) a graph of more than N states (default {DEFAULT_MAX_STATES:,})")
    parser.add_argument("--out", metavar="FILE", help="write to FILE instead of stdout")


def run(args: argparse.Namespace) -> int:
    """0 written, 2 bad input or too large."""
    from checker.cli.options import run_config
    from checker.outputs import check_outputs, plugin_inputs

    check_outputs(files=[("--out", args.out)],
                  inputs=[("the config file", args.config_file), *plugin_inputs(args.plugins)])
    rc = run_config(args)
    model = rc.build()
    try:
        g = explore_graph(model, args.max_states)
    except TooLarge:
        raise ConfigError(f"the state graph of this configuration passes --max-states {args.max_states:,} states;"
                          " choose a smaller configuration or raise --max-states") from None
    text = render(g, args.format, f"{rc.model} {rc.variant} {rc.preset}")
    if args.out:
        try:
            with open(args.out, "w") as f:
                f.write(text)
        except OSError as e:
            raise ConfigError(f"--out {args.out}: {e.strerror or e}") from None
        broken = sum(1 for _, d in g.nodes(data=True) if d["violates"])
        print(f"kcheck: wrote {args.out}: {g.number_of_nodes():,} states, {g.number_of_edges():,} steps,"
              f" {broken:,} violating state(s)", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
