"""Derive an action's Z3 relation from the KRaft model's own Python (model/kraft), unchanged, by
symbolic execution: the action function runs on a state whose ints and bools are Z3 stand-ins
(`SInt`, `SBool`); a branch on a symbolic condition (`__bool__`) forks the path. Paths are
explored depth first by re-execution with a recorded choice sequence (CrossHair/KLEE style); a
branch side the path condition makes infeasible is pruned with a Z3 check. Each completed path
gives (path condition, successor as Z3 terms) or "not enabled" (the action returned None).

What the stand-in state covers (a prototype, see spec/proofs.md "Deriving the relation from the
model"): node scalars, logs (the length is forked on lazily, when a node is first read), the
votes and end offsets (forked on the role), the cut links (forked on each link) and the fault
budgets. The network (a sorted tuple of messages, a set) and the ghost history (sorted tuples of
tuples) have no fixed shape; they are `Opaque`: an action that reads them raises `Unsupported`,
naming the construct, and is left to the hand encoding (checker/proofs/kraft_next.py).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

import z3

from checker.proofs import kraft_next as N
from checker.proofs.kraft_state import Layout, fresh
from checker.proofs.term import Step, Sym, ite
from model.kraft import actions as A
from model.kraft.model import _STEP
from model.kraft.quorum import Context
from model.kraft.rules import CANDIDATE, LEADER, PROSPECTIVE
from model.kraft.state import NO_EVENT, KraftState, Node
from model.kraft.variants import Protocol


class Unsupported(Exception):
    """A construct of the model the symbolic stand-ins cannot follow."""


# --- the stand-ins ------------------------------------------------------------------------------


def _z(x: Any) -> Any:
    if isinstance(x, (SInt, SBool)):
        return x.t
    if isinstance(x, bool):
        return z3.BoolVal(x)
    if isinstance(x, int):
        return z3.IntVal(x)
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
        raise Unsupported("a symbolic int used as an index, shift or range bound")

    def __rshift__(self, o: Any) -> Any:
        raise Unsupported("bit operation on a symbolic int")

    __and__ = __or__ = __lshift__ = __mul__ = __floordiv__ = __mod__ = __rshift__


class Opaque:
    """A part of the state the stand-ins do not model: reading it is unsupported."""

    def __init__(self, what: str) -> None:
        object.__setattr__(self, "what", what)

    def _no(self, *a: Any, **k: Any) -> Any:
        raise Unsupported(f"reads the {object.__getattribute__(self, 'what')}")

    def __getattr__(self, name: str) -> Any:
        self._no()

    __iter__ = __len__ = __getitem__ = __contains__ = __add__ = __eq__ = __bool__ = _no  # type: ignore[assignment]
    __hash__ = None  # type: ignore[assignment]


# --- path exploration ---------------------------------------------------------------------------


class Explorer:
    """Re-executes a function with a recorded choice prefix; `decide` follows the prefix, then
    takes True first and records a feasible False side for later."""

    def __init__(self, domain: Any) -> None:
        self.solver = z3.Solver()
        self.solver.add(domain)
        self.prefix: list[bool] = []
        self.pos = 0
        self.pc: list[Any] = []
        self.pending: list[list[bool]] = []

    def feasible(self, extra: Any) -> bool:
        self.solver.push()
        self.solver.add(*self.pc, extra)
        r = self.solver.check()
        self.solver.pop()
        return r != z3.unsat

    def decide(self, t: Any) -> bool:
        t = z3.simplify(t)
        if z3.is_true(t):
            return True
        if z3.is_false(t):
            return False
        if self.pos < len(self.prefix):
            b = self.prefix[self.pos]
        else:
            yes, no = self.feasible(t), self.feasible(z3.Not(t))
            if yes and no:
                self.pending.append(self.prefix[:self.pos] + [False])
            b = yes
            self.prefix.append(b)
        self.pos += 1
        self.pc.append(t if b else z3.Not(t))
        return b

    def choose(self, options: list[tuple[Any, Any]]) -> Any:
        """One of several (condition, value) cases (conditions exhaustive), as nested forks."""
        for cond, v in options[:-1]:
            if self.decide(cond):
                return v
        return options[-1][1]

    def paths(self, run: Callable[[], Any]) -> list[tuple[Any, Any]]:
        out = []
        todo: list[list[bool]] = [[]]
        while todo:
            self.prefix, self.pos, self.pc = todo.pop(), 0, []
            result = run()
            out.append((z3.And(self.pc) if self.pc else z3.BoolVal(True), result))
            todo += self.pending
            self.pending = []
        return out


# --- the stand-in state from a Sym, and back ------------------------------------------------------


class LazyNodes(tuple):
    """The nodes: node i is built (its log length and role shape forked on) when first read, so an
    action pays only for the nodes it reads."""

    def __new__(cls, n: int, make: Callable[[int], Node]) -> "LazyNodes":
        t = super().__new__(cls, [None] * n)
        t.make, t.cache = make, {}  # type: ignore[attr-defined]
        return t

    def node(self, i: int) -> Node:
        if i not in self.cache:  # type: ignore[attr-defined]
            self.cache[i] = self.make(i)  # type: ignore[attr-defined]
        return self.cache[i]  # type: ignore[attr-defined]

    def __getitem__(self, k: Any) -> Any:
        if isinstance(k, slice):  # set_node's nodes[:i] + (node,) + nodes[i + 1:]: no read yet
            return tuple(self.cache.get(i) or Thunk(self, i) for i in range(len(self))[k])  # type: ignore[attr-defined]
        return self.node(range(len(self))[k])

    def __iter__(self) -> Any:
        return (self.node(i) for i in range(len(self)))

    def __add__(self, o: Any) -> Any:
        return tuple(self) + tuple(o)


class Thunk:
    """An unread node carried over by a slice: built on its first attribute read."""

    def __init__(self, nodes: LazyNodes, i: int) -> None:
        self.nodes, self.i = nodes, i

    def __getattr__(self, name: str) -> Any:
        return getattr(self.nodes.node(self.i), name)


@dataclass
class Derived:
    action: Any
    paths: int
    enabled_paths: int
    seconds: float
    step: Step | None  # None: unsupported
    why: str = ""
    size: int = 0


def symbolic_state(layout: Layout, pre: Sym, ex: Explorer) -> KraftState:
    n, L = layout.n, layout.L
    I = lambda k: SInt(pre[k], ex)  # noqa: E731
    B = lambda k: SBool(pre[k], ex)  # noqa: E731

    def make(i: int) -> Node:
        leo = ex.choose([(pre[("leo", i)] == k, k) for k in range(L + 1)])
        log = tuple((I(("lep", i, k)), I(("lkind", i, k))) for k in range(leo))
        role = pre[("role", i)]
        votes = (tuple(I(("votes", i, j)) for j in range(n))
                 if ex.decide(z3.Or(role == PROSPECTIVE, role == CANDIDATE)) else ())
        ends = tuple(I(("end", i, j)) for j in range(n)) if ex.decide(role == LEADER) else ()
        return Node(I(("role", i)), I(("epoch", i)), I(("leader", i)), I(("voted", i)), log, I(("hw", i)),
                    votes, I(("estart", i)), ends, B(("fetched", i)), B(("observer", i)), B(("vpers", i)))

    cut = tuple(link for link in layout.links() if ex.decide(pre[("cut",) + link]))
    return KraftState(LazyNodes(n, make), Opaque("network"), cut, I(("restarts",)), I(("disk_losses",)),
                      I(("cuts",)), I(("losses",)), I(("timers",)), Opaque("history"), 0)


def _t(x: Any) -> Any:
    return _z(x)


def post_of(layout: Layout, pre: Sym, s0: KraftState, s: KraftState) -> Sym:
    """The Sym of a successor: covered fields from the stand-ins, the rest kept from `pre` when
    the action left them untouched."""
    n, L = layout.n, layout.L
    if s.network is not s0.network:
        raise Unsupported("writes the network")
    if s.history is not s0.history:
        raise Unsupported("writes the history")
    u: dict[Any, Any] = {("last_event",): z3.IntVal(NO_EVENT)}
    read = s0.nodes.cache  # type: ignore[attr-defined]
    for i in range(n):
        if isinstance(s.nodes, LazyNodes):
            break  # no node written
        nd = tuple.__getitem__(s.nodes, i)
        if isinstance(nd, Thunk) or (i in read and nd is read[i]):
            continue
        u.update({("role", i): _t(nd.role), ("epoch", i): _t(nd.epoch), ("leader", i): _t(nd.leader),
                  ("voted", i): _t(nd.voted), ("leo", i): z3.IntVal(len(nd.log)), ("hw", i): _t(nd.hw),
                  ("estart", i): _t(nd.epoch_start), ("fetched", i): _t(nd.fetched),
                  ("observer", i): _t(nd.observer), ("vpers", i): _t(nd.vote_persisted)})
        for k, (e, kind) in enumerate(nd.log):
            u[("lep", i, k)], u[("lkind", i, k)] = _t(e), _t(kind)
        for j, v in enumerate(nd.votes):
            u[("votes", i, j)] = _t(v)
        for j, v in enumerate(nd.end_offsets):
            u[("end", i, j)] = _t(v)
    for a, b in layout.links():
        u[("cut", a, b)] = z3.BoolVal((a, b) in s.cut_links)
    for name in ("restarts", "disk_losses", "cuts", "losses", "timers"):
        u[(name,)] = _t(getattr(s, name))
    return pre.set(u)


def derive(ctx: Context, layout: Layout, pre: Sym, action: Any, domain: Any) -> Derived:
    """Run the model's action on the stand-in state along every feasible path."""
    fn = _STEP[type(action)]
    ex = Explorer(domain)
    start = time.perf_counter()

    def run() -> Any:
        s0 = symbolic_state(layout, pre, ex)
        s = fn(s0, ctx, action)
        return None if s is None else post_of(layout, pre, s0, s)

    try:
        paths = ex.paths(run)
    except Unsupported as e:
        return Derived(action, 0, 0, time.perf_counter() - start, None, str(e))
    except RecursionError:
        return Derived(action, 0, 0, time.perf_counter() - start, None, "recursion")
    enabled = [(pc, post) for pc, post in paths if post is not None]
    guard = z3.Or([pc for pc, _ in enabled]) if enabled else z3.BoolVal(False)
    post = enabled[-1][1] if enabled else pre
    for pc, p in reversed(enabled[:-1]):
        post = ite(pc, p, post)
    size = sum(len(str(v)) for k, v in post.f.items() if not v.eq(pre[k])) + len(str(guard))
    return Derived(action, len(paths), len(enabled), time.perf_counter() - start, Step(guard, post), size=size)


# --- the check against the hand-written encoding ---------------------------------------------------


def domain(layout: Layout, s: Sym) -> Any:
    """The shapes kraft_state's layout gives meaning to: a role, a log length within max_log."""
    out = []
    for i in range(layout.n):
        out += [s[("role", i)] >= 0, s[("role", i)] <= 5, s[("leo", i)] >= 0, s[("leo", i)] <= layout.L]
    return z3.And(out)


@dataclass
class Comparison:
    action: Any
    derived: Derived
    verdict: str  # "equal", "differs", "unsupported"
    difference: str = ""
    hand_seconds: float = 0.0
    key: Any = None


def compare(ctx: Context, nctx: N.Ctx, action: Any, timeout_ms: int = 60000) -> Comparison:
    """Z3: on the domain, the derived and hand-written relations of `action` have the same guard
    and, when enabled, the same successor in every variable."""
    layout = nctx.layout
    pre = fresh(layout, "pre_")
    dom = domain(layout, pre)
    d = derive(ctx, layout, pre, action, dom)
    if d.step is None:
        return Comparison(action, d, "unsupported", d.why)
    t = time.perf_counter()
    h = N.step(nctx, pre, action)
    hand = time.perf_counter() - t
    checks: list[tuple[Any, Any]] = [("guard", d.step.guard != h.guard)]
    for k in pre.keys():
        a, b = d.step.post[k], h.post[k]
        if not a.eq(b):
            checks.append((k, z3.And(h.guard, a != b)))
    s = z3.Solver()
    s.set("timeout", timeout_ms)
    s.add(dom)
    for k, diff in checks:
        s.push()
        s.add(diff)
        r = s.check()
        if r != z3.unsat:
            m = s.model() if r == z3.sat else None
            s.pop()
            shown = "" if m is None else _show(m, pre)
            return Comparison(action, d, "differs", f"{k}: {r} {shown}", hand, k)
        s.pop()
    return Comparison(action, d, "equal", "", hand)


def _show(m: z3.ModelRef, pre: Sym) -> str:
    out = []
    for k in pre.keys():
        if k[0] in ("role", "epoch", "leo", "lep", "leader", "cut", "cuts", "timers"):
            v = m.eval(pre[k], model_completion=False)
            if not z3.eq(v, pre[k]):
                out.append(f"{'_'.join(map(str, k))}={v}")
    return " ".join(out[:24])


def contexts(p: Any, variant: str = "kafka-4.1") -> tuple[Context, N.Ctx]:
    return Context(p, Protocol.of(variant)), N.Ctx.of(p, variant)


def action_kinds() -> list[type]:
    return [A.ElectionTimeout, A.FetchTimeout, A.CheckQuorumTimeout, A.ClientAppend, A.SendVote,
            A.SendBeginQuorumEpoch, A.SendFetch, A.Restart, A.DiskLoss, A.CutLink, A.HealLink, A.DropMessage]
