"""Symbolic execution of the models' Python (checker/proofs/derive.py): Z3 stand-ins for ints
and bools (`SInt`, `SBool`) whose branches fork the path, the path explorer (re-execution with a
recorded choice sequence, each new branch side checked feasible by Z3), and `merged`, which
explores a pure function's paths on their own and merges its results into If terms."""
from __future__ import annotations

from typing import Any, Callable

import z3


class Unsupported(Exception):
    """A construct of the model the symbolic stand-ins cannot follow."""


class OutOfLayout(Exception):
    """The successor leaves kraft_state's layout (a message to a node id outside 0..n-1): like the
    model raising, a crash path, which a proof shows unreachable from the invariant."""


# the model raising, or leaving the layout: a crash path
CRASHES = (AssertionError, IndexError, ValueError, ZeroDivisionError, OutOfLayout)


# --- the stand-ins ------------------------------------------------------------------------------


def _z(x: Any) -> Any:
    if isinstance(x, (SInt, SBool)):
        return x.t
    if isinstance(x, bool):
        return z3.BoolVal(x)
    if isinstance(x, int):
        return z3.IntVal(x)
    if isinstance(x, z3.ExprRef):
        return x
    raise Unsupported(f"operand of type {type(x).__name__}")


class SBool:
    __slots__ = ("t", "ex")

    def __init__(self, t: Any, ex: "Explorer") -> None:
        self.t, self.ex = t, ex

    def __bool__(self) -> bool:
        return self.ex.decide(self.t)

    def __invert__(self) -> "SBool":
        return SBool(z3.Not(self.t), self.ex)

    def __eq__(self, o: Any) -> Any:  # type: ignore[override]
        return SBool(self.t == _z(o), self.ex)

    def __ne__(self, o: Any) -> Any:  # type: ignore[override]
        return SBool(self.t != _z(o), self.ex)

    def __hash__(self) -> int:
        raise Unsupported("hash of a symbolic bool (dict/set key)")

    def __index__(self) -> int:
        raise Unsupported("a symbolic bool used as an index")

    def __repr__(self) -> str:
        return f"SBool({self.t})"


class SInt:
    __slots__ = ("t", "ex")

    def __init__(self, t: Any, ex: "Explorer") -> None:
        self.t, self.ex = t, ex

    def _i(self, t: Any) -> "SInt":
        return SInt(t, self.ex)

    def _b(self, t: Any) -> SBool:
        return SBool(t, self.ex)

    def __add__(self, o: Any) -> "SInt":
        return self._i(self.t + _z(o))

    def __radd__(self, o: Any) -> "SInt":
        return self._i(_z(o) + self.t)

    def __sub__(self, o: Any) -> "SInt":
        return self._i(self.t - _z(o))

    def __rsub__(self, o: Any) -> "SInt":
        return self._i(_z(o) - self.t)

    def __neg__(self) -> "SInt":
        return self._i(-self.t)

    def __lt__(self, o: Any) -> SBool:
        return self._b(self.t < _z(o))

    def __le__(self, o: Any) -> SBool:
        return self._b(self.t <= _z(o))

    def __gt__(self, o: Any) -> SBool:
        return self._b(self.t > _z(o))

    def __ge__(self, o: Any) -> SBool:
        return self._b(self.t >= _z(o))

    def __eq__(self, o: Any) -> Any:  # type: ignore[override]
        return self._b(self.t == _z(o))

    def __ne__(self, o: Any) -> Any:  # type: ignore[override]
        return self._b(self.t != _z(o))

    def __bool__(self) -> bool:
        return self.ex.decide(self.t != 0)

    def __hash__(self) -> int:
        raise Unsupported("hash of a symbolic int (dict/set key, lru_cache argument)")

    def __index__(self) -> int:
        """An index, slice or range bound: every sequence the model indexes holds at most
        max_log + 1 items, so the values -K..K (K = max_log + 1) and the two beyond give every
        distinct result; the path forks over them."""
        k = self.ex.bound
        options = [(self.t < -k, -k - 1)] + [(self.t == v, v) for v in range(-k, k + 1)] + [(z3.BoolVal(True), k + 1)]
        return self.ex.choose(options)

    def __rrshift__(self, o: Any) -> Any:
        """`o >> self` (a voter bitmask shifted by a node id): a negative amount raises, as in
        Python; amounts past o's bits give 0."""
        if not isinstance(o, int):
            raise Unsupported("bit operation on a symbolic int")
        if self.ex.decide(self.t < 0):
            raise ValueError("negative shift count")
        bits = max(1, o.bit_length())
        return self.ex.choose([(self.t == v, o >> v) for v in range(bits)] + [(z3.BoolVal(True), 0)])

    def __rshift__(self, o: Any) -> Any:
        raise Unsupported("bit operation on a symbolic int")

    __and__ = __or__ = __lshift__ = __mul__ = __floordiv__ = __mod__ = __rshift__

    def __repr__(self) -> str:
        return f"SInt({self.t})"


# --- path exploration ---------------------------------------------------------------------------


# A side of a new decision that a model of the path satisfies is feasible without a solver check;
# off only for bench/bench_derive_speed.py's baseline (the same paths, about twice the checks).
WITNESS = True


class Frame:
    """One exploration: its choice prefix, the position in it, the path condition, the branches
    left to take (each with a model of its condition), and a model of the path so far (or None):
    a side of a new decision that this model satisfies is feasible without a solver check."""

    __slots__ = ("prefix", "pos", "pc", "pending", "witness")

    def __init__(self, prefix: list[bool], pc: list[Any], witness: Any = None) -> None:
        self.prefix, self.pos, self.pc, self.pending, self.witness = prefix, 0, pc, [], witness


class Explorer:
    """Re-executes a function with a recorded choice prefix; `decide` follows the prefix, then
    takes True first and records a feasible False side for later. `merge` explores a nested
    function's paths inside the current one (their conditions conjoined to the outer path's)."""

    def __init__(self, domain: Any, bound: int) -> None:
        self.solver = z3.Solver()
        self.solver.add(domain)
        self.asserted: list[int] = []  # ids of the path terms on the solver, one scope each
        self.simple: dict[int, tuple[Any, Any]] = {}  # term id -> (the term, kept alive; it simplified)
        self.frames: list[Frame] = []
        self.bound = bound
        self.checks = 0
        self.memos: dict[Any, Any] = {}
        self.keep: list[Any] = []  # what memo keys' term ids name, kept alive
        self.depth = 0  # nesting of `explore_merged`: a stand-in that forks only at the top reads it

    def memo(self, key: Any, make: Callable[[], Any]) -> Any:
        """make(), once per key for this exploration."""
        if key not in self.memos:
            self.memos[key] = make()
        return self.memos[key]

    def _sync(self) -> None:
        """The solver's scopes made the current path condition's terms: successive paths share
        most of their prefix, so only the terms past the shared part are popped and added. Ids
        compare safely: every id in `asserted` is of a term the solver still holds, which Z3
        cannot free, so no other term has it."""
        terms = [t for f in self.frames for t in f.pc]
        k, have = 0, self.asserted
        while k < len(have) and k < len(terms) and have[k] == terms[k].get_id():
            k += 1
        if k < len(have):
            self.solver.pop(len(have) - k)
            del have[k:]
        for t in terms[k:]:
            self.solver.push()
            self.solver.add(t)
            have.append(t.get_id())

    def simplified(self, t: Any) -> Any:
        """z3.simplify(t), once per term: re-executing a prefix makes the same terms (the same ids
        while the first is kept alive) and decides them again."""
        k = t.get_id()
        hit = self.simple.get(k)
        if hit is None:
            hit = self.simple[k] = (t, z3.simplify(t))
        return hit[1]

    def feasible(self, extra: Any) -> tuple[bool, Any]:
        """Whether the path condition and `extra` may hold (under the domain), with a model of
        them when the solver gave one (not on unknown, which counts as feasible)."""
        self.checks += 1
        self._sync()
        self.solver.push()
        self.solver.add(extra)
        r = self.solver.check()
        m = self.solver.model() if r == z3.sat else None
        self.solver.pop()
        return r != z3.unsat, m

    def decide(self, t: Any) -> bool:
        t = self.simplified(t)
        if z3.is_true(t):
            return True
        if z3.is_false(t):
            return False
        f = self.frames[-1]
        if f.pos < len(f.prefix):
            b = f.prefix[f.pos]
        else:
            # the path is feasible, so one side is: the side the path's model satisfies needs no check
            w = f.witness if WITNESS else None
            if w is not None and z3.is_true(w.eval(t, model_completion=True)):
                yes, no = (True, w), self.feasible(z3.Not(t))
            elif w is not None:
                yes, no = self.feasible(t), (True, w)
            else:
                yes = self.feasible(t)
                no = self.feasible(z3.Not(t)) if yes[0] else (True, None)
            if yes[0] and no[0]:
                f.pending.append((f.prefix[:f.pos] + [False], no[1]))
            b = yes[0]
            f.witness = yes[1] if b else no[1]
            f.prefix.append(b)
        f.pos += 1
        f.pc.append(t if b else z3.Not(t))
        return b

    def choose(self, options: list[tuple[Any, Any]]) -> Any:
        """One of several (condition, value) cases (conditions exhaustive), as nested forks."""
        for cond, v in options[:-1]:
            if self.decide(cond):
                return v
        return options[-1][1]

    def paths(self, run: Callable[[], Any], assume: Any = None, keep_assume: bool = True) -> list[tuple[Any, Any]]:
        """Every feasible path of run(): (its condition, its result). keep_assume=False: the
        conditions leave `assume` out (they partition the states where it holds)."""
        return [(z3.And(pc) if pc else z3.BoolVal(True), result)
                for pc, result in self.decisions(run, assume, keep_assume)]

    def decisions(self, run: Callable[[], Any], assume: Any = None, keep_assume: bool = True,
                  witness: Any = None) -> list[tuple[list[Any], Any]]:
        """As `paths`, each path's condition the list of its decisions in the order taken (what
        `DecisionTree` needs). `witness`: a model of the domain and `assume`, if one is known."""
        out = []
        todo: list[tuple[list[bool], Any]] = [([], witness)]
        while todo:
            prefix, witness = todo.pop()
            f = Frame(prefix, [] if assume is None else [assume], witness)
            self.frames.append(f)
            try:
                result = run()
            finally:
                self.frames.pop()
            out.append((f.pc if keep_assume or assume is None else f.pc[1:], result))
            todo += f.pending
        return out

    def explore_merged(self, fn: Callable[..., Any], args: tuple, under_path: bool) -> tuple[list, list]:
        """fn(*args)'s paths explored on their own, under the current path's condition
        (`under_path`) or the domain only, and merged: (the crash cases, one (condition, value)
        per shape of result, the values merged leaf by leaf into If terms)."""
        def once() -> Any:
            try:
                return ("ok", fn(*args))
            except CRASHES as e:
                return ("crash", e)

        pc = [t for f in self.frames for t in f.pc] if under_path else []
        self.depth += 1
        try:
            paths = self.on_its_own(once, z3.And(pc) if pc else None)
        finally:
            self.depth -= 1
        return merged_options(self, paths)

    def on_its_own(self, run: Callable[[], Any], assume: Any = None) -> list[tuple[list[Any], Any]]:
        """run()'s paths (`decisions`, without `assume` in their conditions) with the enclosing
        path's frames set aside, starting from its model: that model satisfies the domain and,
        when `assume` is the enclosing path's condition, `assume` too."""
        outer, self.frames = self.frames, []
        try:
            return self.decisions(run, assume=assume, keep_assume=False, witness=outer[-1].witness if outer else None)
        finally:
            self.frames = outer

    def take(self, crash: list, options: list) -> Any:
        """The merged result on this path: a fork when some path raised (re-raised here) and one
        per shape of result."""
        if crash and self.decide(z3.Or([c for c, _ in crash])):
            raise crash[0][1]
        if not options:  # every path raised
            raise crash[0][1]
        return self.choose(options) if len(options) > 1 else options[0][1]


# --- the paths as one decision tree ---------------------------------------------------------------

DONT_CARE = object()  # a path whose value does not matter (the action is not enabled on it)


class DecisionTree:
    """An action's paths (`Explorer.decisions`) as the tree of the decisions they took: a value
    over the paths is one If at each fork, as the model's code branches, not one case per path
    (an If-chain with every path's condition in each case made Z3's queries far slower:
    spec/proofs.md, "The paths as one decision tree"). A decision with one side only (the other infeasible on the explorer's domain
    and the decisions before it) is left out: the tree's values are the paths' on the domain.
    Re-executing a choice prefix makes the same decision terms, so sibling paths part at one
    decision, a term on one side and its negation on the other; anything else is Unsupported."""

    __slots__ = ("cond", "yes", "no", "result", "keys", "ok")

    def __init__(self, paths: list[tuple[list[Any], Any]],
                 keys: Callable[[Any], frozenset | None] = lambda r: frozenset(), depth: int = 0) -> None:
        """`keys(result)`: the variables a path changes, None where the action is not enabled."""
        self.cond: Any = None
        self.yes = self.no = None
        self.result: Any = None
        while True:  # decisions every path here took alike hold on the domain: skip them
            ended = [p for p in paths if len(p[0]) == depth]
            if ended:
                if len(paths) > 1:
                    raise Unsupported("paths that do not part at a decision")
                self.result = paths[0][1]
                changed = keys(self.result)
                self.keys, self.ok = changed or frozenset(), changed is not None
                return
            first = paths[0][0][depth]
            other = [p for p in paths if not _same(p[0][depth], first)]
            if other:
                break
            depth += 1
        second = other[0][0][depth]
        if z3.is_not(second) and _same(second.arg(0), first):
            cond, yes, no = first, [p for p in paths if _same(p[0][depth], first)], other
        elif z3.is_not(first) and _same(first.arg(0), second):
            cond, yes, no = second, other, [p for p in paths if _same(p[0][depth], first)]
        else:
            raise Unsupported("sibling paths whose decisions are not a term and its negation")
        if len(yes) + len(no) != len(paths):
            raise Unsupported("paths that part three ways at one decision")
        self.cond = cond
        self.yes, self.no = DecisionTree(yes, keys, depth + 1), DecisionTree(no, keys, depth + 1)
        self.keys, self.ok = self.yes.keys | self.no.keys, self.yes.ok or self.no.ok

    def fold(self, leaf: Callable[[Any], Any], key: Any = None, default: Any = None) -> Any:
        """The value over the paths: leaf(a path's result) at each path (a term, or DONT_CARE),
        an If at each fork. With `key`, a subtree whose paths' `keys` leave it out is `default`
        where an action is enabled (and DONT_CARE where none is) without visiting it."""
        if key is not None and key not in self.keys:
            return default if self.ok else DONT_CARE
        if self.cond is None:
            return leaf(self.result)
        a = self.yes.fold(leaf, key, default)
        b = self.no.fold(leaf, key, default)
        if a is DONT_CARE or (b is not DONT_CARE and _same(a, b)):
            return b
        if b is DONT_CARE:
            return a
        if z3.is_true(a) and z3.is_false(b):
            return self.cond
        if z3.is_false(a) and z3.is_true(b):
            return z3.Not(self.cond)
        return z3.If(self.cond, a, b)

    def merge(self, ex: "Explorer", leaf: Callable[[Any], Any]) -> Any:
        """As `fold`, for a function's results of one shape (`shape_of`): the two sides of each
        fork merged leaf by leaf (`merge_values`)."""
        if self.cond is None:
            return leaf(self.result)
        a, b = self.yes.merge(ex, leaf), self.no.merge(ex, leaf)
        if a is DONT_CARE:
            return b
        if b is DONT_CARE:
            return a
        return merge_values(ex, [(self.cond, a), (z3.BoolVal(True), b)])


def merged_options(ex: "Explorer", paths: list[tuple[list[Any], Any]], by_value: bool = False) -> tuple[list, list]:
    """A function's paths (`Explorer.decisions`, each ending in ("ok", value) or ("crash",
    exception)) merged over their decision tree: (the crash case, if any: its condition and the
    first exception; one (condition, value) per shape of result, the value merged at each fork).
    `by_value`: one case per distinct concrete result instead (a symbolic one still by shape),
    so that a caller that uses the result as a set member or a key forks once per value."""
    tree = DecisionTree(paths)
    crashes = [r[1] for _, r in paths if r[0] == "crash"]
    crash = [(tree.fold(lambda r: z3.BoolVal(r[0] == "crash")), crashes[0])] if crashes else []

    def group(v: Any) -> Any:
        return ("value", v) if by_value and _find_explorer(v) is None else shape_of(v)
    shape_at = {id(r): group(r[1]) for _, r in paths if r[0] == "ok"}  # each path's, computed once
    options = []
    for shape in dict.fromkeys(shape_at.values()):
        def ours(r: Any, shape: Any = shape) -> bool:
            return r[0] == "ok" and shape_at[id(r)] == shape
        options.append((tree.fold(lambda r: z3.BoolVal(ours(r))),
                        tree.merge(ex, lambda r: r[1] if ours(r) else DONT_CARE)))
    return crash, options


def derived_step(paths: list[tuple[list[Any], Any]], pre: Any, domain: Any) -> tuple[Any, dict[Any, Any], Any]:
    """(guard, the changed variables' terms, crash condition) of an action whose paths
    (`Explorer.decisions`) end in None (not enabled), ("ok", {key: term changed}) or ("crash",
    what): one DecisionTree. The guard and the crash condition hold on `domain` only."""
    tree = DecisionTree(paths, lambda r: frozenset(r[1]) if r is not None and r[0] == "ok" else None)
    enabled = lambda r: z3.BoolVal(r is not None and r[0] == "ok")  # noqa: E731
    crashed = lambda r: z3.BoolVal(r is not None and r[0] == "crash")  # noqa: E731
    guard = tree.fold(enabled)
    post = {}
    for k in sorted(tree.keys, key=repr):
        v = tree.fold(lambda r, k=k: r[1].get(k, pre[k]) if r is not None and r[0] == "ok" else DONT_CARE, k, pre[k])
        if v is not DONT_CARE and not _same(v, pre[k]):
            post[k] = v
    return z3.And(domain, guard), post, tree.fold(crashed)


# --- merging pure functions ----------------------------------------------------------------------


def _find_explorer(x: Any) -> "Explorer | None":
    if isinstance(x, (SInt, SBool)):
        return x.ex
    if isinstance(x, tuple):
        for y in x:
            ex = _find_explorer(y)
            if ex is not None:
                return ex
    return None


def _arg_key(x: Any) -> Any:
    if isinstance(x, (SInt, SBool)):
        return (type(x).__name__, x.t.get_id())
    if hasattr(x, "merge_key"):
        return x.merge_key()
    if isinstance(x, (tuple, list)):
        return (type(x).__name__,) + tuple(_arg_key(y) for y in x)
    return x


def shape_of(v: Any) -> Any:
    """What results must share to merge leaf by leaf: types and lengths (concrete ints and
    bools merge with symbolic ones); a stand-in object says its own (`merge_shape`); any other
    object only with itself."""
    if isinstance(v, (SBool, bool)):
        return "b"
    if isinstance(v, (SInt, int)):
        return "i"
    if hasattr(v, "merge_shape"):
        return v.merge_shape()
    if type(v) is tuple or (isinstance(v, tuple) and hasattr(v, "_fields")):
        return (type(v),) + tuple(shape_of(y) for y in v)
    return ("other", id(v))


def merge_values(ex: "Explorer", cases: list[tuple[Any, Any]]) -> Any:
    """If(c1, v1, If(c2, v2, ...)) leaf by leaf, for results of one shape (`shape_of`); a leaf
    the same in every case is kept as it is."""
    v0 = cases[-1][1]
    if all(v is v0 for _, v in cases):
        return v0
    if hasattr(v0, "merge_shape"):
        return type(v0).merge_cases(ex, cases)
    if isinstance(v0, tuple):
        parts = [merge_values(ex, [(c, v[k]) for c, v in cases]) for k in range(len(v0))]
        return tuple.__new__(type(v0), parts) if hasattr(v0, "_fields") else tuple(parts)
    if not isinstance(v0, (SInt, SBool)) and all(type(v) is type(v0) and v == v0 for _, v in cases):
        return v0
    t = _z(v0)
    for c, v in reversed(cases[:-1]):
        w = _z(v)
        if not _same(w, t):
            t = z3.If(c, w, t)
    return SBool(t, ex) if z3.is_bool(t) else SInt(t, ex)


def merged(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A pure decision function (model/kraft/rules.py) on symbolic arguments: its paths are
    explored on their own, once per distinct arguments (under the domain only, so the result
    holds on every path), and its results merged into If terms (one fork per shape of result,
    and one when some path raises), so its branches do not multiply the action's paths."""

    def run(*args: Any) -> Any:
        ex = _find_explorer(args)
        if ex is None:
            return fn(*args)
        crash, options = ex.memo(("merged", fn.__name__, _arg_key(args)),
                                 lambda: ex.explore_merged(fn, args, under_path=False))
        return ex.take(crash, options)

    run.__name__ = fn.__name__
    return run


def _same(a: Any, b: Any) -> bool:
    return a is b or a.eq(b)
