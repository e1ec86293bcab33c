"""The checker's layout (docs/architecture.md): no import circles in model/ and checker/, and no
low layer importing from a higher one. The graph is read from the sources with ast, every import
statement counted wherever it stands (an import inside a function is an edge like any other)."""
from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent

# The layers, lowest first: a module may import from its own layer and the layers below, never
# from one above. A module belongs to the first entry (a module or package prefix) naming it.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("model interface", ("model.interface", "model.compiled", "model.extension")),
    ("models", ("model",)),
    ("checker base", ("checker.errors", "checker.limits", "checker.stop", "checker.heartbeat",
                      "checker.fingerprint", "checker.config", "checker.outputs", "checker.provenance",
                      "checker.selection", "checker.plugin", "checker.scaffold", "checker")),
    ("engines", ("checker.search", "checker.walks", "checker.proofs", "checker.traces")),
    ("views and gate", ("checker.view", "checker.gate", "checker.conform")),
    ("command line", ("checker.cli",)),
]


def modules() -> dict[str, Path]:
    out = {}
    for top in ("model", "checker"):
        for p in (ROOT / top).rglob("*.py"):
            name = ".".join(p.relative_to(ROOT).with_suffix("").parts)
            out[name.removesuffix(".__init__")] = p
    return out


def import_graph() -> nx.DiGraph:
    mods = modules()
    g = nx.DiGraph()
    for name, path in mods.items():
        g.add_node(name)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[:len(package.split(".")) - node.level + 1]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in mods else module for a in node.names]
            else:
                continue
            for t in targets:
                while t and t not in mods:  # `import checker.search.bfs` names its module; keep the deepest known
                    t = t.rpartition(".")[0]
                if t and t != name:
                    g.add_edge(name, t, line=node.lineno)
    return g


def layer_of(module: str) -> int:
    for rank, (_, prefixes) in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return rank
    raise AssertionError(f"{module} is in no layer of LAYERS (tests/test_layout.py)")


def test_every_module_has_a_layer() -> None:
    for name in modules():
        layer_of(name)


def test_no_import_circles() -> None:
    g = import_graph()
    circles = [sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1]
    circles += [[n] for n in g.nodes if g.has_edge(n, n)]
    assert not circles, "import circles: " + "; ".join(" <-> ".join(c) for c in circles)


def test_no_layer_imports_a_higher_one() -> None:
    g = import_graph()
    upward = [f"{a} ({LAYERS[layer_of(a)][0]}) imports {b} ({LAYERS[layer_of(b)][0]}) at line {d['line']}"
              for a, b, d in g.edges(data=True) if layer_of(b) > layer_of(a)]
    assert not upward, "imports that climb a layer:\n" + "\n".join(sorted(upward))


def test_the_graph_sees_imports_inside_functions() -> None:
    g = import_graph()
    # checker/cli/check.py imports the liveness pass inside a function
    assert g.has_edge("checker.cli.check", "checker.search.liveness")
