"""Mutation operators: the small, plausible mistakes `kcheck mutate` makes in a model's source.

Every operator works on the AST of one function and turns one expression into another:

- `compare`: a comparison's boundary moved or its sense flipped (< and <=, > and >=, == and !=,
  in and not in, is and is not);
- `off-by-one`: a constant added or subtracted moved by one (`epoch + 1` becomes `epoch`, an
  epoch no longer bumped, or `epoch + 2`), and a slice bound moved by one (`log[:hw]`);
- `drop-conjunct` / `drop-disjunct`: one operand of `and` / `or` left out (a check dropped);
- `drop-guard`: the test of an `if` whose body only leaves (return, raise, continue, break) made
  false (a guard dropped);
- `drop-not`: a `not` left out;
- `min-max`: `min` and `max` swapped;
- `drop-field`: one field update of a `_replace(...)` call left out;
- `flip-bool`: a `True` or `False` constant flipped.

Sites are numbered per (function, operator) in a fixed walk order (children before parents), so
a mutant's id, `module:function:operator:k`, is the same in every process. `transform` rebuilds a
module with one mutant applied, or with probes: each probed site evaluates the original and its
mutants' expressions and records which mutants ever compute another value (`Probe`). The model
is pure, so evaluating an expression twice changes nothing.
"""
from __future__ import annotations

import ast
import copy
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, Sequence

OPERATORS = ("compare", "off-by-one", "drop-conjunct", "drop-disjunct", "drop-guard", "drop-not", "min-max",
             "drop-field", "flip-bool")

PROBE = "__kcheck_probe__"
LIVE = "__kcheck_live__"

_SWAP: dict[type, type] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
    ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}
_LEAVES = (ast.Return, ast.Raise, ast.Continue, ast.Break)


@dataclass(frozen=True)
class Mutant:
    """One mutant: where it is, and the expression before and after."""

    id: str  # module:function:operator:k
    module: str
    function: str  # qualified name inside the module
    operator: str
    k: int
    line: int
    before: str
    after: str
    source_line: str  # the source line it changes, stripped

    @property
    def file(self) -> str:
        return self.module.rsplit(".", 1)[-1] + ".py"

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}"


def _int_constant(node: ast.AST) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def _plus(node: ast.expr, delta: int) -> ast.expr:
    """`node + delta`, folded when node is a constant."""
    c = _int_constant(node)
    if c is not None:
        return ast.Constant(c + delta)
    op = ast.Add() if delta > 0 else ast.Sub()
    return ast.BinOp(copy.deepcopy(node), op, ast.Constant(abs(delta)))


def _shifted(node: ast.BinOp, delta: int) -> ast.expr:
    """`e + c` with c moved by delta; `e` alone when it becomes zero."""
    c = _int_constant(node.right)
    assert c is not None
    moved = c + delta
    if moved == 0:
        return copy.deepcopy(node.left)
    return ast.BinOp(copy.deepcopy(node.left), copy.deepcopy(node.op), ast.Constant(moved))


def alternatives(node: ast.AST, parent_is_guard: bool = False) -> list[tuple[str, Callable[[], ast.expr]]]:
    """The (operator, build the mutated expression) pairs at one expression node."""
    out: list[tuple[str, Callable[[], ast.expr]]] = []
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            if type(op) in _SWAP:
                def swapped(i: int = i, op: ast.cmpop = op) -> ast.expr:
                    new = copy.deepcopy(node)
                    new.ops[i] = _SWAP[type(op)]()
                    return new
                out.append(("compare", swapped))
    elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)) \
            and _int_constant(node.right) is not None:
        out.append(("off-by-one", lambda: _shifted(node, -1)))
        out.append(("off-by-one", lambda: _shifted(node, +1)))
    elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        for bound in ("lower", "upper"):
            if getattr(node.slice, bound) is None:
                continue
            for delta in (-1, 1):
                def moved(bound: str = bound, delta: int = delta) -> ast.expr:
                    new = copy.deepcopy(node)
                    setattr(new.slice, bound, _plus(getattr(node.slice, bound), delta))
                    return new
                out.append(("off-by-one", moved))
    elif isinstance(node, ast.BoolOp):
        name = "drop-conjunct" if isinstance(node.op, ast.And) else "drop-disjunct"
        for i in range(len(node.values)):
            def dropped(i: int = i) -> ast.expr:
                rest = [copy.deepcopy(v) for j, v in enumerate(node.values) if j != i]
                return rest[0] if len(rest) == 1 else ast.BoolOp(copy.deepcopy(node.op), rest)
            out.append((name, dropped))
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        out.append(("drop-not", lambda: copy.deepcopy(node.operand)))
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("min", "max"):
        def swapped_call() -> ast.expr:
            new = copy.deepcopy(node)
            new.func = ast.Name("max" if node.func.id == "min" else "min", ast.Load())  # type: ignore[attr-defined]
            return new
        out.append(("min-max", swapped_call))
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "_replace":
        for i, kw in enumerate(node.keywords):
            if kw.arg is None:
                continue
            def without(i: int = i) -> ast.expr:
                new = copy.deepcopy(node)
                del new.keywords[i]
                return new
            out.append(("drop-field", without))
    elif isinstance(node, ast.Constant) and type(node.value) is bool:
        out.append(("flip-bool", lambda: ast.Constant(not node.value)))
    if parent_is_guard:
        out.append(("drop-guard", lambda: ast.Constant(False)))
    return out


def _probe_safe(node: ast.AST) -> bool:
    """Can this expression be evaluated inside a lambda with the same meaning?"""
    return not any(isinstance(n, (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await)) for n in ast.walk(node))


class _Sites(ast.NodeTransformer):
    """Walks functions children-first, numbering sites per (function, operator); `decide` maps a
    site's (function, node, [(operator, k, build)]) to the expression that replaces the node."""

    def __init__(self, functions: Callable[[str], bool],
                 decide: Callable[[str, ast.expr, list[tuple[str, int, Callable[[], ast.expr]]]], ast.expr]) -> None:
        self.functions = functions
        self.decide = decide
        self.scope: list[str] = []
        self.counters: dict[tuple[str, str], int] = {}
        self.guards: set[int] = set()
        self.depth = 0  # functions entered: class bodies are not mutated

    def _in_scope(self) -> bool:
        return self.depth > 0 and self.functions(".".join(self.scope))

    def visit_ClassDef(self, node: ast.ClassDef) -> Any:
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> Any:
        self.scope.append(node.name)
        self.depth += 1
        node.body = [self.visit(s) for s in node.body]  # decorators, defaults and annotations are left alone
        self.depth -= 1
        self.scope.pop()
        return node

    def visit_If(self, node: ast.If) -> Any:
        if node.body and all(isinstance(s, (ast.Return, ast.Raise, ast.Continue, ast.Break, ast.Pass, ast.Expr))
                             for s in node.body) and isinstance(node.body[-1], _LEAVES) and not node.orelse:
            self.guards.add(id(node.test))
        return self.generic_visit(node)

    def visit_Assert(self, node: ast.Assert) -> Any:
        return node  # assertions check the model, they are not part of the protocol

    def visit_Expr(self, node: ast.Expr) -> Any:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return node  # docstrings
        return self.generic_visit(node)

    def generic_visit(self, node: ast.AST) -> ast.AST:
        node = super().generic_visit(node)
        if not isinstance(node, ast.expr) or not self._in_scope() or not _probe_safe(node):
            return node
        if isinstance(getattr(node, "ctx", None), (ast.Store, ast.Del)):
            return node
        alts = alternatives(node, id(node) in self.guards)
        if not alts:
            return node
        function = ".".join(self.scope)
        numbered = []
        for operator, build in alts:
            k = self.counters.get((function, operator), 0)
            self.counters[(function, operator)] = k + 1
            numbered.append((operator, k, build))
        return self.decide(function, node, numbered)


def _scope_filter(functions: Sequence[str] | None) -> Callable[[str], bool]:
    if not functions:
        return lambda name: True
    chosen = tuple(functions)
    return lambda name: any(name == f or name.startswith(f + ".") for f in chosen)


def mutants(module: str, source: str, functions: Sequence[str] | None = None) -> list[Mutant]:
    """Every mutant of `module` (all its functions, or those named and their nested ones)."""
    tree = ast.parse(source)
    lines = source.splitlines()
    found: list[Mutant] = []

    def record(function: str, node: ast.expr, numbered: list[tuple[str, int, Callable[[], ast.expr]]]) -> ast.expr:
        before = ast.unparse(node)
        for operator, k, build in numbered:
            line = getattr(node, "lineno", 0)
            found.append(Mutant(f"{module}:{function}:{operator}:{k}", module, function, operator, k, line,
                                before, ast.unparse(build()), lines[line - 1].strip() if line else ""))
        return node

    _Sites(_scope_filter(functions), record).visit(tree)
    return found


def transform(module: str, source: str, *, apply: str | None = None, probe: Any = None,
              functions: Sequence[str] | None = None) -> tuple[ast.Module, list[tuple[str, ...]]]:
    """`module`'s AST with mutant id `apply` applied, or with probes at the sites of the mutant ids
    in `probe` (any container of ids), and the probe sites (index -> mutant ids). Line numbers
    are kept. A probed module needs `Probe.names(sites)` in its globals."""
    tree = ast.parse(source)
    probed = probe or {}
    sites: list[tuple[str, ...]] = []  # probe site index -> its mutant ids

    def decide(function: str, node: ast.expr, numbered: list[tuple[str, int, Callable[[], ast.expr]]]) -> ast.expr:
        ids = [(f"{module}:{function}:{operator}:{k}", build) for operator, k, build in numbered]
        if apply is not None:
            for mid, build in ids:
                if mid == apply:
                    return ast.copy_location(build(), node)
            return node
        chosen = [(mid, build) for mid, build in ids if mid in probed]
        if not chosen:
            return node
        index = len(sites)
        sites.append(tuple(mid for mid, _ in chosen))
        thunks = ast.Tuple([_thunk(build()) for _, build in chosen], ast.Load())
        call = ast.Call(ast.Name(PROBE, ast.Load()), [ast.Constant(index), _thunk(node), thunks], [])
        # a site whose mutants have all been seen to differ goes back to the plain expression
        live = ast.Subscript(ast.Name(LIVE, ast.Load()), ast.Constant(index), ast.Load())
        return ast.copy_location(ast.IfExp(live, call, copy.deepcopy(node)), node)

    tree = _Sites(_scope_filter(functions), decide).visit(tree)
    return ast.fix_missing_locations(tree), sites


def _thunk(expr: ast.expr) -> ast.expr:
    return ast.Lambda(ast.arguments([], [], None, [], [], None, []), expr)


def _same(a: Any, b: Any) -> bool:
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False


class Probe:
    """Records, over every evaluation of a probed site, the mutants evaluated and those whose
    expression computed another value than the original (or raised): "infected". Sites are
    numbered per module; `names(module, sites)` gives that module's globals."""

    def __init__(self) -> None:
        self.executed: set[str] = set()
        self.infected: set[str] = set()

    def names(self, sites: Sequence[tuple[str, ...]]) -> dict[str, Any]:
        live = [True] * len(sites)
        infected, executed = self.infected, self.executed

        def probe(index: int, original: Callable[[], Any], alternatives: tuple[Callable[[], Any], ...]) -> Any:
            value = original()
            ids = sites[index]
            executed.update(ids)
            for mid, alt in zip(ids, alternatives):
                if mid in infected:
                    continue
                try:
                    other = alt()
                except Exception:
                    infected.add(mid)
                    continue
                if not _same(value, other):
                    infected.add(mid)
            if all(mid in infected for mid in ids):
                live[index] = False
            return value

        return {PROBE: probe, LIVE: live}


def functions_of(source: str) -> Iterator[str]:
    """The qualified names of the functions and methods defined in `source`."""
    def walk(body: list[ast.stmt], prefix: str) -> Iterator[str]:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield prefix + node.name
                yield from walk(node.body, prefix + node.name + ".")
            elif isinstance(node, ast.ClassDef):
                yield from walk(node.body, prefix + node.name + ".")
    yield from walk(ast.parse(source).body, "")
