"""Liveness: temporal properties under fairness, checked on the explored state graph (TLC's
liveness checking; fair cycles found by SCC decomposition, recursively for strong fairness, as
in the Emerson-Lei algorithm).

The graph is kept in compact arrays: states are indexes 0..n-1 in BFS order, the edges of state
v are `dst[offsets[v]:offsets[v + 1]]`, each with the fair action instance it takes (`fid`, -1
when its action is not fair in that state) and its position in `model.actions(v)` (`pos`, to
name the action again without storing it). A state's parent edge gives shortest prefixes.

A property reduces to P ~> Q (`eventually(P)` is Init ~> P, `always_eventually(P)` is
TRUE ~> P). It fails iff a fair behaviour reaches a P-state and then never a Q-state: a path
from a P-and-not-Q state, through not-Q states, into a set C of not-Q states that a fair
behaviour can stay in forever. Stuttering is always possible, so every strongly connected
component of the not-Q region is such a set unless fairness rules it out:
  - weak: an action enabled in every state of C and taken on no edge inside C;
  - strong: an action enabled in some state of C and taken on no edge inside C. Then the states
    where it is enabled are dropped and the rest is decomposed again.

Bounds (epochs, log length, messages in flight, fault and timer budgets) cut behaviours off: a
set C that is fair only because a bound keeps a fair action disabled would not exist without the
bound. So every C found fair is checked again with the actions a bound blocks counted as enabled
(the model's `bound_blocked`, which lifts bounds one at a time, then together); only a C that is
still fair is a violation, the others are counted as cut by that bound.

A `timely_invariant` ([]P on the liveness model: a safety property that holds only when time is
not adversarial) is checked on the same graph: the first state in BFS order outside P gives a
shortest finite counterexample.
"""
from __future__ import annotations

import time
from array import array
from collections import deque
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, Iterable, Optional

from checker import stop
from checker.search.common import collector_paused, initial_states, successor_function
from checker.fingerprint import state_fingerprint
from model.interface import TEMPORAL, Model, Property, action_name

OK = "ok"
VIOLATION = "violation"
UNREACHED = "unreached"  # a leads_to whose P held in no reachable state: the pass would be vacuous


class GraphLimit(Exception):
    """The state graph outgrew `max_states`."""


class FingerprintIndex:
    """Fingerprint -> state index, in two arrays instead of a dict (a dict costs about 100 bytes
    a state): the fingerprints in index order (8 bytes a state) and an open-addressing table of
    indexes (4 bytes a slot, at most half full)."""

    def __init__(self) -> None:
        self.fps = array("q")
        self.mask = (1 << 16) - 1
        self.table = array("i", [-1]) * (self.mask + 1)

    def __len__(self) -> int:
        return len(self.fps)

    def get(self, fp: int) -> int:
        """The index of `fp`, or -1."""
        table, fps, mask = self.table, self.fps, self.mask
        h = fp & mask
        while True:
            i = table[h]
            if i < 0 or fps[i] == fp:
                return i
            h = (h + 1) & mask

    def add(self, fp: int) -> int:
        """Give `fp` (not yet present) the next index."""
        i = len(self.fps)
        self.fps.append(fp)
        if 2 * (i + 1) > self.mask + 1:
            self._grow()
        else:
            self._place(fp, i)
        return i

    def _place(self, fp: int, i: int) -> None:
        table, mask = self.table, self.mask
        h = fp & mask
        while table[h] >= 0:
            h = (h + 1) & mask
        table[h] = i

    def _grow(self) -> None:
        self.mask = 2 * self.mask + 1
        self.table = array("i", [-1]) * (self.mask + 1)
        for i, fp in enumerate(self.fps):
            self._place(fp, i)

    def nbytes(self) -> int:
        return self.fps.itemsize * len(self.fps) + self.table.itemsize * len(self.table)


@dataclass
class Graph:
    """The reachable state graph of a model, in compact arrays (see the module docstring)."""

    model: Any
    index: FingerprintIndex  # fingerprint (as a signed 64-bit int) -> state index
    offsets: array  # n + 1 edge offsets
    dst: array  # edge -> target state
    fid: array  # edge -> fair action instance, or -1
    pos: array  # edge -> position of its action in model.actions(source)
    parent_edge: array  # state -> edge that discovered it, -1 for an initial state
    source: array  # state -> parent state, -1 for an initial state
    marks: dict[str, bytearray]  # predicate key -> 1 where it holds, per state
    fair_actions: list[Any]  # fid -> action value
    fair_strong: bytearray  # fid -> 1 when strongly fair
    fair_kinds: dict[str, Any] = field(default_factory=dict)  # action kind -> Fairness
    fair_ids: dict[Any, int] = field(default_factory=dict)  # (action class, action) -> fid
    seconds: float = 0.0
    depth: int = 0
    reduced: bool = False  # built with the model's stutter reduction (see build_graph)

    @cached_property
    def step(self) -> Callable[[Any, Any], Any]:
        """The successor function as the graph holds states (reduced when the graph is)."""
        return successor_function(self.model, self.reduced)

    @property
    def states(self) -> int:
        return len(self.offsets) - 1

    @property
    def edges(self) -> int:
        return len(self.dst)

    def nbytes(self) -> int:
        """Bytes held by the graph's arrays and its fingerprint index."""
        arrays = (self.offsets, self.dst, self.fid, self.pos, self.parent_edge, self.source)
        total = sum(a.itemsize * len(a) for a in arrays) + sum(len(m) for m in self.marks.values())
        return total + self.index.nbytes()

    # --- states on demand ---------------------------------------------------------------------

    def states_of(self, wanted: Iterable[int]) -> dict[int, Any]:
        """The states of the given indexes, rebuilt from the initial states along parent edges
        (each ancestor computed once; states are not kept in the graph)."""
        need: set[int] = set()
        for v in wanted:
            while v >= 0 and v not in need:
                need.add(v)
                v = self.source[v]
        model = self.model
        inits = initial_states(model, self.reduced)
        step = self.step
        fp_of = _signed(state_fingerprint(model))
        init_by_index = {self.index.get(fp_of(s)): s for s in inits}
        out: dict[int, Any] = {}
        for v in sorted(need):  # parents have smaller indexes (BFS order)
            e = self.parent_edge[v]
            if e < 0:
                out[v] = init_by_index[v]
                continue
            s = out[self.source[v]]
            out[v] = step(s, list(model.actions(s))[self.pos[e]])
        return {v: out[v] for v in wanted}

    def action_of(self, state: Any, e: int) -> Any:
        return list(self.model.actions(state))[self.pos[e]]

    def prefix(self, v: int) -> list[int]:
        """State indexes of a shortest path from an initial state to v."""
        chain = []
        while v >= 0:
            chain.append(v)
            v = self.source[v]
        return chain[::-1]


def _signed(fp_of: Callable[[Any], int]) -> Callable[[Any], int]:
    """Fingerprints folded into signed 64-bit ints (a BLAKE2b digest may be wider; a tuple hash is)."""
    def fp(s: Any) -> int:
        x = fp_of(s) & 0xFFFFFFFFFFFFFFFF
        return x - (1 << 64) if x >= 1 << 63 else x

    return fp


def predicate_keys(properties: Iterable[Property]) -> list[tuple[str, Callable[[Any], bool]]]:
    """The predicates a graph must mark, keyed `name` (P) and `name->` (Q of a leads_to)."""
    out = []
    for p in properties:
        out.append((p.name, p.predicate))
        if p.target is not None:  # leads_to's Q, timely_invariant's guard
            out.append((p.name + "->", p.target))
    return out


@collector_paused
def build_graph(model: Model, properties: list[Property], *, max_states: Optional[int] = None,
                progress: Optional[Callable[[str], None]] = None, progress_every: float = 5.0,
                reduce: bool = False) -> Graph:
    """Explore every reachable state breadth first and keep the graph. Raises GraphLimit.

    With `reduce`, the model's stutter reduction is applied to every state, as in the safety
    pass; a model asks for it (`reduce_liveness`) only when the reduction is sound for its
    temporal properties too: the steps it absorbs commute with every other action, change no
    predicate or fairness condition, and their fair action is taken at once."""
    start = time.perf_counter()
    actions_of = model.actions
    next_state = successor_function(model, reduce)
    fp_of = _signed(state_fingerprint(model))
    fairness = {f.action: f for f in getattr(model, "fairness", ())}
    by_type: dict[type, Any] = {}
    keys = predicate_keys(properties)
    marks = {k: bytearray() for k, _ in keys}
    mark_lists = [(marks[k].append, pred) for k, pred in keys]
    index = FingerprintIndex()
    offsets = array("q", [0])
    dst = array("i")
    fid = array("i")
    pos = array("H")
    parent_edge = array("q")
    source = array("i")
    fair_ids: dict[Any, int] = {}
    fair_actions: list[Any] = []
    fair_strong = bytearray()
    states: deque[Any] = deque()
    limit = max_states if max_states is not None else -1
    next_report = start + progress_every
    depth_of = array("H")

    def add(s: Any, fp: int, e: int, src: int) -> None:
        if len(index) == limit:
            raise GraphLimit(limit)
        index.add(fp)
        parent_edge.append(e)
        source.append(src)
        depth_of.append(0 if src < 0 else depth_of[src] + 1)
        for append, pred in mark_lists:
            append(1 if pred(s) else 0)
        states.append(s)

    for s in initial_states(model, reduce):
        fp = fp_of(s)
        if index.get(fp) < 0:
            add(s, fp, -1, -1)
    v = 0
    while states:
        s = states.popleft()
        for k, a in enumerate(actions_of(s)):
            t = next_state(s, a)
            if t is None:
                continue
            fp = fp_of(t)
            w = index.get(fp)
            if w < 0:
                add(t, fp, len(dst), v)
                w = len(index) - 1
            kind = a.__class__
            f = by_type.get(kind, 0)
            if f == 0:
                f = by_type[kind] = fairness.get(kind.__name__)
            if f is not None and (f.when is None or f.when(s, a)):
                key = (kind, a)  # NamedTuples of different kinds with equal fields are equal
                i = fair_ids.get(key)
                if i is None:
                    i = fair_ids[key] = len(fair_actions)
                    fair_actions.append(a)
                    fair_strong.append(1 if f.strength == "strong" else 0)
            else:
                i = -1
            dst.append(w)
            fid.append(i)
            pos.append(k)
        offsets.append(len(dst))
        v += 1
        if not v & 0x3FF:
            stop.check()
            if progress is not None:
                now = time.perf_counter()
                if now >= next_report:
                    next_report = now + progress_every
                    progress(f"liveness graph: {len(index):,} states, {len(dst):,} edges, "
                             f"{len(index) / (now - start):,.0f} states/s, {now - start:.0f}s")
    return Graph(model, index, offsets, dst, fid, pos, parent_edge, source, marks, fair_actions, fair_strong,
                 fairness, fair_ids, time.perf_counter() - start, max(depth_of) if depth_of else 0, reduce)


# --- strongly connected components ----------------------------------------------------------------


def components(g: Graph, inside: bytearray, roots: Iterable[int]) -> list[list[int]]:
    """The strongly connected components of the subgraph of states with `inside[v]`, among the
    states reachable (inside) from `roots`; iterative Tarjan, each component in discovery order."""
    offsets, dst = g.offsets, g.dst
    low: dict[int, int] = {}
    order: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    out: list[list[int]] = []
    counter = 0
    for root in roots:
        if root in order or not inside[root]:
            continue
        order[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        work = [(root, offsets[root])]
        while work:
            v, e = work[-1]
            end = offsets[v + 1]
            pushed = False
            while e < end:
                w = dst[e]
                e += 1
                if not inside[w]:
                    continue
                if w not in order:
                    work[-1] = (v, e)
                    order[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, offsets[w]))
                    pushed = True
                    break
                if w in on_stack and order[w] < low[v]:
                    low[v] = order[w]
            if pushed:
                continue
            work.pop()
            if work:
                u = work[-1][0]
                if low[v] < low[u]:
                    low[u] = low[v]
            if low[v] == order[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(comp[::-1])
    return out


# --- fairness -------------------------------------------------------------------------------------


EnabledFn = Callable[[int], Iterable[int]]


def fair_parts(g: Graph, comp: list[int], extra: Optional[Callable[[int], Iterable[int]]] = None) -> list[list[int]]:
    """The parts of a strongly connected set `comp` in which a fair behaviour can stay forever
    (Emerson-Lei): `comp` itself when it is fair, its fair sub-components after the states that
    enable an untaken strongly fair action are dropped, or nothing. `extra(v)` adds fair action
    instances counted as enabled in v (those a bound blocks)."""
    offsets, dst, fid, strong = g.offsets, g.dst, g.fid, g.fair_strong
    inside = set(comp)
    taken: set[int] = set()
    enabled_at: dict[int, set[int]] = {}
    for v in comp:
        en: set[int] = set()
        for e in range(offsets[v], offsets[v + 1]):
            f = fid[e]
            if f >= 0:
                en.add(f)
                if dst[e] in inside:
                    taken.add(f)
        if extra is not None:
            en.update(extra(v))
        enabled_at[v] = en
    untaken_everywhere = None
    drop: set[int] = set()
    for v in comp:
        en = enabled_at[v] - taken
        if untaken_everywhere is None:
            untaken_everywhere = {f for f in en if not strong[f]}
        else:
            untaken_everywhere &= en
        if any(strong[f] for f in en):
            drop.add(v)
    if untaken_everywhere:
        return []  # a weakly fair action enabled throughout and never taken
    if not drop:
        return [comp]
    rest = [v for v in comp if v not in drop]
    if not rest:
        return []
    mask = _Mask(set(rest))
    parts = []
    for sub in components(g, mask, rest):  # type: ignore[arg-type]
        parts.extend(fair_parts(g, sub, extra))
    return parts


class _Mask:
    """A set used where `components` expects a per-state bytearray."""

    def __init__(self, members: set[int]) -> None:
        self.members = members

    def __getitem__(self, v: int) -> bool:
        return v in self.members


# --- one property ---------------------------------------------------------------------------------


@dataclass
class Lasso:
    """A fair behaviour that breaks a property: `trace` [(action or None, state), ...] ends with
    the step back to `trace[loop]` (the cycle is trace[loop..]); with `stutter`, the last state
    repeats forever and no step closes the cycle."""

    trace: list[tuple[Any, Any]]
    loop: int
    stutter: bool


@dataclass
class Outcome:
    """The verdict on one temporal property."""

    name: str
    kind: str
    description: str
    result: str  # OK | VIOLATION | UNREACHED
    antecedent_states: int  # states where P holds (leads_to), initial states (eventually), all states
    region_states: int  # not-Q states reachable from a P-and-not-Q state through not-Q states
    fair_sets: int  # fair sets found in that region before bounds are lifted
    cut_by_bound: dict[str, int] = field(default_factory=dict)  # bound -> cut fair sets where it blocks an action
    cut: int = 0  # fair sets that exist only because a bound blocks a fair action
    lasso: Optional[Lasso] = None
    path: Optional[list[tuple[Any, Any]]] = None  # a timely_invariant's counterexample: a finite trace
    seconds: float = 0.0

    @property
    def counterexample(self) -> Optional[tuple[list[tuple[Any, Any]], Optional[int]]]:
        """(trace, loop): a lasso with its loop index, or a finite trace with None."""
        if self.lasso is not None:
            return self.lasso.trace, self.lasso.loop
        if self.path is not None:
            return self.path, None
        return None


def check_property(g: Graph, prop: Property, blocked: "BlockedCache") -> Outcome:
    start = time.perf_counter()
    n = g.states
    offsets, dst = g.offsets, g.dst
    if prop.kind == "timely_invariant":
        return _check_invariant(g, prop, start)
    if prop.kind == "leads_to":
        p, q = g.marks[prop.name], g.marks[prop.name + "->"]
        sources = [v for v in range(n) if p[v] and not q[v]]
        antecedent = sum(p)
    elif prop.kind == "eventually":
        q = g.marks[prop.name]
        inits = [v for v in range(n) if g.source[v] < 0]
        sources = [v for v in inits if not q[v]]
        antecedent = len(inits)
    elif prop.kind == "always_eventually":
        q = g.marks[prop.name]
        sources = [v for v in range(n) if not q[v]]
        antecedent = n
    else:
        raise ValueError(f"{prop.name}: {prop.kind} is not a temporal property")
    out = Outcome(prop.name, prop.kind, prop.description, OK, antecedent, 0, 0)
    if prop.kind == "leads_to" and antecedent == 0:
        out.result = UNREACHED
    # The region: not-Q states reachable from a source through not-Q states, with the region
    # predecessor of each (paths from a source into a fair set).
    pred = array("i", [-2]) * n
    region: list[int] = []
    for v in sources:
        pred[v] = -1
        region.append(v)
    i = 0
    while i < len(region):
        v = region[i]
        i += 1
        for e in range(offsets[v], offsets[v + 1]):
            w = dst[e]
            if pred[w] == -2 and not q[w]:
                pred[w] = v
                region.append(w)
    out.region_states = len(region)
    inside = bytearray(n)
    for v in region:
        inside[v] = 1
    parts = [part for comp in components(g, inside, region) for part in fair_parts(g, comp)]
    out.fair_sets = len(parts)
    blocked.ensure([v for part in parts for v in part])  # one rebuild of all their states
    violating: Optional[list[int]] = None
    for part in parts:
        genuine = fair_parts(g, part, blocked.extra)
        if genuine:
            if violating is None or _rank(g, pred, genuine[0]) < _rank(g, pred, violating):
                violating = genuine[0]
        else:
            out.cut += 1
            for bound in blocked.bounds(part):
                out.cut_by_bound[bound] = out.cut_by_bound.get(bound, 0) + 1
    if violating is not None:
        out.result = VIOLATION
        out.lasso = lasso(g, pred, violating, blocked)
    out.seconds = time.perf_counter() - start
    return out


def _check_invariant(g: Graph, prop: Property, start: float) -> Outcome:
    """[]P on the graph: the first state in BFS order where P fails (a shortest path to it)."""
    holds, guard = g.marks[prop.name], g.marks[prop.name + "->"]
    out = Outcome(prop.name, prop.kind, prop.description, OK, sum(guard), 0, 0)
    bad = holds.find(0)
    if bad >= 0:
        out.result = VIOLATION
        out.path = path_to(g, bad)
    elif out.antecedent_states == 0:
        out.result = UNREACHED
    out.seconds = time.perf_counter() - start
    return out


def path_to(g: Graph, v: int) -> list[tuple[Any, Any]]:
    """A shortest trace [(action or None, state), ...] from an initial state to state v."""
    return _trace_along(g, g.prefix(v))


def _trace_along(g: Graph, chain: list[int]) -> list[tuple[Any, Any]]:
    """The trace [(action or None, state), ...] along a chain of states joined by edges, from an
    initial state."""
    offsets, dst = g.offsets, g.dst
    states = g.states_of(chain)
    trace: list[tuple[Any, Any]] = [(None, states[chain[0]])]
    for a, b in zip(chain, chain[1:]):
        e = next(e for e in range(offsets[a], offsets[a + 1]) if dst[e] == b)
        trace.append((g.action_of(states[a], e), states[b]))
    return trace


def _rank(g: Graph, pred: array, part: list[int]) -> tuple[int, int]:
    """How far a fair set's nearest state is from an initial state (prefix plus region path)."""
    best = None
    for v in part:
        steps = 0
        u = v
        while pred[u] >= 0:
            u = pred[u]
            steps += 1
        r = (len(g.prefix(u)) + steps, v)
        if best is None or r < best:
            best = r
    assert best is not None
    return best


class BlockedCache:
    """The fair action instances a bound blocks in each state (the model's `bound_blocked`),
    computed on demand for the states of fair sets and kept."""

    def __init__(self, g: Graph) -> None:
        self.g = g
        self.fn = getattr(g.model, "bound_blocked", None)
        self.by_state: dict[int, list[tuple[int, str]]] = {}

    def ensure(self, vs: list[int]) -> None:
        missing = [v for v in vs if v not in self.by_state]
        if not missing:
            return
        if self.fn is None:
            for v in missing:
                self.by_state[v] = []
            return
        g = self.g
        ids = g.fair_ids
        states = g.states_of(missing)
        for v in missing:
            s = states[v]
            found = []
            for a, bound in self.fn(s):
                f = g.fair_kinds.get(action_name(a))
                if f is None or (f.when is not None and not f.when(s, a)):
                    continue
                i = ids.get((a.__class__, a))
                if i is None:
                    i = ids[(a.__class__, a)] = len(g.fair_actions)
                    g.fair_actions.append(a)
                    g.fair_strong.append(1 if f.strength == "strong" else 0)
                found.append((i, bound))
            self.by_state[v] = found

    def extra(self, v: int) -> list[int]:
        """The fair action instances a bound blocks in state v (after `ensure`)."""
        return [i for i, _ in self.by_state.get(v, ())]

    def bounds(self, part: list[int]) -> list[str]:
        self.ensure(part)
        names = sorted({b for v in part for _, b in self.by_state.get(v, ())})
        return names or ["unknown"]


def lasso(g: Graph, pred: array, part: list[int], blocked: BlockedCache) -> Lasso:
    """A fair lasso into the fair set `part`: a shortest prefix to its nearest source, the region
    path to the set, and a cycle inside it that takes every fair action taken in the set and
    visits, for each other one enabled there, a state where it is disabled. With nothing to take
    or visit, the entry state stutters forever."""
    offsets, dst, fid = g.offsets, g.dst, g.fid
    inside = set(part)
    _, entry = _rank(g, pred, part)
    path = [entry]
    while pred[path[-1]] >= 0:
        path.append(pred[path[-1]])
    path.reverse()
    chain = g.prefix(path[0])[:-1] + path
    blocked.ensure(part)
    extra = blocked.extra
    enabled_at: dict[int, set[int]] = {}
    fair_edges: dict[int, list[tuple[int, int]]] = {}  # state -> (edge, fid) inside the set
    taken: set[int] = set()
    for v in part:
        en = set(extra(v))
        own = []
        for e in range(offsets[v], offsets[v + 1]):
            f = fid[e]
            if f >= 0:
                en.add(f)
                if dst[e] in inside:
                    own.append((e, f))
                    taken.add(f)
        enabled_at[v] = en
        fair_edges[v] = own
    wanted: set[int] = set().union(*enabled_at.values())

    def disabled_here(v: int) -> set[int]:
        return {f for f in wanted - taken if f not in enabled_at[v]}

    cycle: list[int] = []
    here = entry
    met = disabled_here(here)
    while wanted - met:
        todo = wanted - met
        route = _route(g, here, inside, lambda v: any(f in todo for _, f in fair_edges[v])
                       or bool(todo & disabled_here(v)))
        for e in route:
            cycle.append(e)
            here = dst[e]
            met |= disabled_here(here)
        step = next(((e, f) for e, f in fair_edges[here] if f in todo), None)
        if step is not None:
            cycle.append(step[0])
            met.add(step[1])
            here = dst[step[0]]
            met |= disabled_here(here)
    if here != entry:
        cycle.extend(_route(g, here, inside, lambda v: v == entry))
    trace = _trace_along(g, chain)
    loop = len(trace) - 1
    current = trace[-1][1]
    for e in cycle:
        action = g.action_of(current, e)
        current = g.step(current, action)
        trace.append((action, current))
    return Lasso(trace, loop, not cycle)


def _route(g: Graph, start: int, inside: set[int], goal: Callable[[int], bool]) -> list[int]:
    """Edges of a shortest path inside the set from `start` to a state meeting `goal` (none when
    `start` meets it)."""
    if goal(start):
        return []
    offsets, dst = g.offsets, g.dst
    came: dict[int, int] = {start: -1}
    queue = deque([start])
    while queue:
        v = queue.popleft()
        for e in range(offsets[v], offsets[v + 1]):
            w = dst[e]
            if w not in inside:
                continue
            if goal(w):
                edges = [e]
                u = v
                while came[u] >= 0:
                    edges.append(came[u])
                    u = _source_of_edge(g, came[u])
                return edges[::-1]
            if w not in came:
                came[w] = e
                queue.append(w)
    raise AssertionError("no route inside a strongly connected set")


def _source_of_edge(g: Graph, e: int) -> int:
    """The state an edge leaves (binary search over the offsets)."""
    lo, hi = 0, g.states - 1
    offsets = g.offsets
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if offsets[mid] <= e:
            lo = mid
        else:
            hi = mid - 1
    return lo


# --- the pass -------------------------------------------------------------------------------------


@dataclass
class LivenessResult:
    """The liveness pass over one configuration."""

    result: str  # OK | VIOLATION | UNREACHED | "incomplete"
    states: int
    edges: int
    depth: int
    graph_seconds: float
    seconds: float
    graph_bytes: int
    fair_actions: int
    outcomes: list[Outcome]
    fairness: list[dict[str, str]]
    max_states: Optional[int] = None
    interrupted: bool = False
    reduced: bool = False  # the graph was built with the model's stutter reduction

    @property
    def violation(self) -> Optional[Outcome]:
        return next((o for o in self.outcomes if o.result == VIOLATION), None)


def temporal_properties(model: Model) -> list[Property]:
    return [p for p in model.properties if p.kind in TEMPORAL]


def liveness_model(model: Model) -> Model:
    """The model the pass explores: the model's own `liveness_model()` when it has one."""
    own = getattr(model, "liveness_model", None)
    return own() if own is not None else model


def check_liveness(model: Model, *, max_states: Optional[int] = None,
                   progress: Optional[Callable[[str], None]] = None, progress_every: float = 5.0,
                   reduce: bool = True) -> LivenessResult:
    """Build the graph of `liveness_model(model)` and check every temporal property on it. With
    `reduce`, the graph is reduced when that model says its reduction is sound for liveness
    (`reduce_liveness`)."""
    start = time.perf_counter()
    lm = liveness_model(model)
    reduced = reduce and bool(getattr(lm, "reduce_liveness", False)) and hasattr(lm, "reduce")
    wanted = {p.name for p in temporal_properties(model)}  # `model` may be a selection of them
    props = [p for p in temporal_properties(lm) if p.name in wanted]
    fairness = [{"action": f.action, "strength": f.strength, "reason": f.reason,
                 "condition": (f.when.__doc__ or "").strip().splitlines()[0] if f.when is not None else ""}
                for f in getattr(lm, "fairness", ())]
    g = None
    outcomes: list[Outcome] = []
    try:
        g = build_graph(lm, props, max_states=max_states, progress=progress, progress_every=progress_every,
                        reduce=reduced)
        blocked = BlockedCache(g)
        for p in props:
            if progress is not None:
                progress(f"liveness: checking {p.name} on {g.states:,} states")
            outcomes.append(check_property(g, p, blocked))
    except (GraphLimit, KeyboardInterrupt) as e:
        seconds = time.perf_counter() - start
        return LivenessResult("incomplete", g.states if g else (max_states or 0), g.edges if g else 0,
                              g.depth if g else 0, g.seconds if g else seconds, seconds, g.nbytes() if g else 0,
                              len(g.fair_actions) if g else 0, outcomes, fairness, max_states,
                              interrupted=isinstance(e, KeyboardInterrupt), reduced=reduced)
    if any(o.result == VIOLATION for o in outcomes):
        result = VIOLATION
    elif any(o.result == UNREACHED for o in outcomes):
        result = UNREACHED
    else:
        result = OK
    return LivenessResult(result, g.states, g.edges, g.depth, g.seconds, time.perf_counter() - start,
                          g.nbytes(), len(g.fair_actions), outcomes, fairness, max_states, reduced=reduced)


def liveness_report(live: LivenessResult) -> dict[str, Any]:
    """The `liveness` object of `kcheck check --json`."""
    return {
        "result": live.result,
        "states": live.states,
        "edges": live.edges,
        "depth": live.depth,
        "graph_seconds": round(live.graph_seconds, 3),
        "seconds": round(live.seconds, 3),
        "graph_bytes": live.graph_bytes,
        "bytes_per_edge": round(live.graph_bytes / live.edges, 1) if live.edges else None,
        "fair_actions": live.fair_actions,
        "fairness": live.fairness,
        "max_states": live.max_states,
        "reduced": live.reduced,
        "properties": [
            {"name": o.name, "kind": o.kind, "result": o.result, "antecedent_states": o.antecedent_states,
             "region_states": o.region_states, "fair_sets": o.fair_sets, "cut_by_bound": o.cut,
             "cut_bounds": o.cut_by_bound, "seconds": round(o.seconds, 3)}
            for o in live.outcomes
        ],
    }


def liveness_lines(live: LivenessResult) -> list[str]:
    """The liveness part of `kcheck check`'s text summary."""
    if live.result == "incomplete":
        why = "interrupted" if live.interrupted else f"the graph passed --max-states {live.max_states}"
        return [f"liveness:         incomplete ({why})"]
    lines = [f"liveness:         {live.result} ({len(live.outcomes)} temporal properties on {live.states:,} states,"
             f" {live.edges:,} edges, {live.seconds:.2f} s; {live.graph_bytes / max(live.edges, 1):.0f} bytes/edge"
             + ("; reduced" if live.reduced else "") + ")"]
    for o in live.outcomes:
        antecedent = {"leads_to": f"P held in {o.antecedent_states:,} states",
                      "eventually": f"{o.antecedent_states:,} initial states",
                      "always_eventually": "every state",
                      "timely_invariant": f"its guard held in {o.antecedent_states:,} states"}[o.kind]
        if o.kind == "timely_invariant":
            lines.append(f"  {o.name} ({o.kind}): {o.result}; {antecedent}")
            continue
        cut = ""
        if o.cut:
            cut = f"; {o.cut:,} cut by a bound (" + ", ".join(f"{b} {n:,}" for b, n in sorted(o.cut_by_bound.items())) + ")"
        lines.append(f"  {o.name} ({o.kind}): {o.result}; {antecedent}; {o.fair_sets:,} fair cycle(s) in its"
                     f" region of {o.region_states:,} states{cut}")
    return lines


def unfair_in_cycle(model: Model, cycle: list[tuple[Any, Any]]) -> list[str]:
    """Why a cycle (the states after `loop` of a lasso, as (action taken to reach it, state), the
    first entry being the state at `loop`) is not a fair behaviour of `model` when repeated
    forever: each fair action enabled in every state of it (weak) or in some state (strong) and
    never taken in it. Enabledness is the liveness model's (`liveness_model`). Empty: fair."""
    lm = liveness_model(model)
    fairness = {f.action: f for f in getattr(lm, "fairness", ())}
    states = [s for _, s in cycle]
    taken = set()
    for (_, s), (a, _) in zip(cycle, cycle[1:]):
        f = fairness.get(action_name(a))
        if f is not None and (f.when is None or f.when(s, a)):
            taken.add((a.__class__, a))
    enabled: list[set[tuple[Any, Any]]] = []
    for s in states:
        here = set()
        for a in lm.actions(s):
            f = fairness.get(action_name(a))
            if f is not None and (f.when is None or f.when(s, a)) and lm.next_state(s, a) is not None:
                here.add((a.__class__, a))
        enabled.append(here)
    reasons = []
    for key in sorted(set().union(*enabled) - taken, key=repr):
        f = fairness[key[0].__name__]
        everywhere = all(key in e for e in enabled)
        if f.strength == "strong" or everywhere:
            where = "in every state of the cycle" if everywhere else "in a state of the cycle"
            reasons.append(f"{key[1]!r} ({f.strength} fairness) is enabled {where} and never taken")
    return reasons
