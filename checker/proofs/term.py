"""The symbolic-state container and the term helpers the encodings share.

A `Sym` maps a variable key (a tuple such as ("epoch", 2)) to a Z3 term. States are immutable:
`set` returns a new one. `ite` merges two states field by field, sharing every field that is
the same term on both sides, so a branch that touches one field costs one If.
"""
from __future__ import annotations

from typing import Any, Callable, Hashable, Iterable, Mapping, Sequence

import z3

Key = tuple[Hashable, ...]


class Sym:
    """A symbolic state: variable key -> Z3 term."""

    __slots__ = ("f",)

    def __init__(self, f: Mapping[Key, Any]) -> None:
        self.f = dict(f)

    def __getitem__(self, key: Key) -> Any:
        return self.f[key]

    def set(self, updates: Mapping[Key, Any]) -> "Sym":
        g = dict(self.f)
        g.update(updates)
        return Sym(g)

    def keys(self) -> Iterable[Key]:
        return self.f.keys()


def same(a: Any, b: Any) -> bool:
    """The same term (structurally), so no If is needed."""
    return a is b or (isinstance(a, z3.ExprRef) and isinstance(b, z3.ExprRef) and a.eq(b))


def ite(c: Any, a: Sym, b: Sym) -> Sym:
    """If(c, a, b) field by field."""
    if z3.is_true(c):
        return a
    if z3.is_false(c):
        return b
    out = {}
    for k, va in a.f.items():
        vb = b.f[k]
        out[k] = va if same(va, vb) else z3.If(c, va, vb)
    return Sym(out)


class Step:
    """A guarded successor: `guard` (when the action is enabled) and `post` (the state then)."""

    __slots__ = ("guard", "post")

    def __init__(self, guard: Any, post: Sym) -> None:
        self.guard = guard
        self.post = post


def step_ite(c: Any, a: Step, b: Step) -> Step:
    if z3.is_true(c):
        return a
    if z3.is_false(c):
        return b
    return Step(z3.If(c, a.guard, b.guard) if not same(a.guard, b.guard) else a.guard, ite(c, a.post, b.post))


def relation(steps: Sequence[Step], pre: Sym, post: Sym, selector: Any = None) -> Any:
    """Next(pre, post) over guarded steps: some step is enabled and post is its successor. With a
    `selector` (an Int), selector == index of the step taken. Each variable of post is one
    If-chain over the steps that change it, so the relation stays small."""
    sel = selector if selector is not None else z3.FreshInt("act")
    enabled = z3.Or([z3.And(sel == x, st.guard) for x, st in enumerate(steps)])
    eqs = []
    for key, v0 in pre.f.items():
        chain = v0
        for x in range(len(steps) - 1, -1, -1):
            v = steps[x].post[key]
            if not (v is v0 or v.eq(v0)):
                chain = z3.If(sel == x, v, chain)
        eqs.append(post[key] == chain)
    return z3.And(enabled, *eqs)


def cases(default: Step, branches: Sequence[tuple[Any, Callable[[], Step]]]) -> Step:
    """The first branch whose condition holds, else `default` (an if/elif chain)."""
    out = default
    for cond, make in reversed(branches):
        if z3.is_false(cond):
            continue
        out = step_ite(cond, make(), out)
    return out


def select(items: Sequence[Any], index: Any, default: Any) -> Any:
    """items[index] for a symbolic index; `default` when it is out of range."""
    out = default
    for k in range(len(items) - 1, -1, -1):
        out = z3.If(index == k, items[k], out)
    return out


def count(conds: Iterable[Any]) -> Any:
    return z3.Sum([z3.If(c, 1, 0) for c in conds]) if conds else z3.IntVal(0)


def at_most(conds: Sequence[Any], k: int) -> Any:
    """At most k of the conditions hold: a native cardinality constraint (Z3's pseudo-Boolean
    solver handles these far better than a sum of Ifs)."""
    conds = list(conds)
    if k < 0:
        return z3.BoolVal(False)
    if k >= len(conds):
        return z3.BoolVal(True)
    return z3.AtMost(*conds, k)


def at_least(conds: Sequence[Any], k: int) -> Any:
    """At least k of the conditions hold."""
    conds = list(conds)
    if k <= 0:
        return z3.BoolVal(True)
    if k > len(conds):
        return z3.BoolVal(False)
    return z3.AtLeast(*conds, k)


def smax(a: Any, b: Any) -> Any:
    return z3.If(a >= b, a, b)


def smin(a: Any, b: Any) -> Any:
    return z3.If(a <= b, a, b)


def val(x: Any) -> Any:
    """A Python int or bool as a Z3 value."""
    if isinstance(x, bool):
        return z3.BoolVal(x)
    return z3.IntVal(x)


def eq_value(term: Any, value: Any) -> Any:
    """term == value (a Python bool or int, or a term of its sort), made by Z3's C API: z3py's `==`
    (its casts and sort checks) was most of an encoding check's time, at some 250 equalities a state."""
    if not isinstance(value, z3.AstRef):
        key = (type(value), value)
        if key not in _VALUES:
            _VALUES[key] = z3.BoolVal(value) if isinstance(value, bool) else z3.IntVal(int(value))
        value = _VALUES[key]
    return z3.BoolRef(z3.Z3_mk_eq(term.ctx_ref(), term.as_ast(), value.as_ast()), term.ctx)


_VALUES: dict[tuple[type, Any], Any] = {}  # the Z3 value of each Python bool and int, made once


def conjunction(fs: list[Any]) -> Any:
    """z3.And(fs) made by the C API, without z3py's cast of each of them."""
    ctx = fs[0].ctx
    return z3.BoolRef(z3.Z3_mk_and(ctx.ref(), len(fs), (z3.Ast * len(fs))(*(f.as_ast() for f in fs))), ctx)
