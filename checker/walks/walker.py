"""Seeded random walks over a model: the kernel shared by the local engine and Spark partitions.

Every walk draws from its own RNG, seeded from a stable hash of (seed, walk_id) (blake2b, never
Python's `hash()`), so a walk's path depends on nothing but the model, the seed, its id and the
depth: not on which process, partition or machine runs it, nor on which other walks run there.
A violating walk is recorded as (initial-state index, action indices) and `replay` rebuilds it.
At each step a walk picks an enabled action kind (uniformly, or by its swarm weights), then one
action of that kind.

Distinct states across walks are counted from state fingerprints (the model's own
process-stable `fingerprint`, else blake2b-8 of `encode`): exactly (every walk lists its
fingerprints) or with a `HyperLogLog` sketch per worker.

The module imports no engine framework; `Summary` is the order-independent aggregate that the
local engine, a multiprocessing pool and Spark all merge the same way.
"""
from __future__ import annotations

import hashlib
import os
import math
import random
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable, Mapping, Sequence

from checker.fingerprint import state_fingerprint  # the model's own (process-stable) one, else blake2b-8 of encode()
from checker.walks.abstraction import Abstraction
from model.compiled import source_file
from model.interface import Model, action_name

CACHE_STATES = 100_000  # states whose fingerprint and property values a worker memoises
START_CACHE = 200_000  # guided: states of paths a worker replayed or walked, by (initial index, path)

OUTCOMES = ("depth", "deadlock", "violation", "known")  # depth bound / nothing enabled / invariant broken / (novelty) nothing new


def walk_seed(seed: int, walk_id: int) -> int:
    """The seed of walk `walk_id`: 64 bits of blake2b over both numbers, equal on every machine."""
    digest = hashlib.blake2b(f"kcheck-walk:{seed}:{walk_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def _below(rng: random.Random, n: int) -> int:
    """A uniform index in [0, n) from one `random()` draw (stable across Python versions)."""
    return min(int(rng.random() * n), n - 1)


def swarm_weights(model: Model, rng: random.Random) -> dict[str, float]:
    """Per-action-kind weights for one swarm walk (Groce et al., "Swarm Testing", ISSTA 2012).

    Each kind in `model.action_kinds` is switched off with probability 1/2 (weight 0) and
    otherwise gets a weight in [0.1, 1). A switched-off kind is taken only when no switched-on
    action is enabled, so a walk stalls only where the model itself deadlocks.
    """
    weights = {}
    for kind in model.action_kinds:
        off, w = rng.random() < 0.5, 0.1 + 0.9 * rng.random()  # two draws per kind, always
        weights[kind] = 0.0 if off else w
    return weights


class HyperLogLog:
    """A HyperLogLog sketch of 64-bit state fingerprints (Flajolet et al. 2007, with the
    linear-counting correction for small counts): 2**p one-byte registers, relative standard
    error 1.04 / sqrt(2**p) (0.81% at the default p = 14, 16 KiB). Adding is idempotent and
    `merge` takes register-wise maxima, so the estimate depends only on the set of fingerprints
    added, not on how they were split across walkers, processes or Spark partitions."""

    def __init__(self, p: int = 14) -> None:
        self.p = p
        self.registers = bytearray(1 << p)

    @property
    def relative_error(self) -> float:
        return 1.04 / (1 << self.p) ** 0.5

    def add(self, fp: int) -> None:
        x = _mix64(fp)
        rest = 64 - self.p
        rank = rest - (x & ((1 << rest) - 1)).bit_length() + 1
        i = x >> rest
        if rank > self.registers[i]:
            self.registers[i] = rank

    def merge(self, other: "HyperLogLog") -> "HyperLogLog":
        if other.p != self.p:
            raise ValueError(f"cannot merge HyperLogLog sketches of p={self.p} and p={other.p}")
        self.registers = bytearray(map(max, self.registers, other.registers))
        return self

    def estimate(self) -> int:
        m = len(self.registers)
        alpha = 0.7213 / (1 + 1.079 / m)
        raw = alpha * m * m / sum(2.0 ** -r for r in self.registers)
        zeros = self.registers.count(0)
        if raw <= 2.5 * m and zeros:
            return round(m * math.log(m / zeros))  # linear counting
        return round(raw)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HyperLogLog) and (self.p, self.registers) == (other.p, other.registers)

    def __repr__(self) -> str:
        return f"HyperLogLog(p={self.p}, estimate={self.estimate()})"


def _mix64(fp: int) -> int:
    """SplitMix64's finaliser: spreads a fingerprint's bits (e.g. a tuple hash) over 64 bits."""
    z = fp & _M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


_M64 = (1 << 64) - 1
DISTINCT_MODES = ("exact", "hll", "none")  # how distinct states are counted across walks


@dataclass
class WalkResult:
    """One walk. `actions` are indices into `list(model.actions(state))` at each step."""

    walk_id: int
    outcome: str  # one of OUTCOMES
    steps: int  # transitions taken (the depth reached)
    init_index: int
    actions: tuple[int, ...]
    invariant: str | None  # the first `always` property broken, on a violation
    action_counts: dict[str, int]
    sometimes_reached: frozenset[str]
    fingerprints: frozenset[int]  # every state visited, the initial one included
    weights: dict[str, float] | None = None  # swarm mode only
    prefix: int = 0  # guided mode: the walk started after this many recorded steps (its corpus entry)
    cells: int = 0  # with `count_cells`: the distinct abstract cells (checker/walks/abstraction.py) it visited


class Walker:
    """Runs walks of one model: its initial states, properties split by kind, and a per-state memo."""

    def __init__(self, model: Model, keep_fingerprints: bool = True, sketch: HyperLogLog | None = None) -> None:
        self.model = model
        self.inits = list(model.init_states())
        if not self.inits:
            raise ValueError(f"model {model.name!r} has no initial state")
        self.always = [p for p in model.properties if p.kind == "always"]
        self.sometimes = [p for p in model.properties if p.kind == "sometimes"]
        self.keep_fingerprints = keep_fingerprints  # each WalkResult lists its states' fingerprints
        self.sketch = sketch  # else every newly visited state's fingerprint goes into this sketch
        self._fingerprint = state_fingerprint(model)
        self._cache: dict[Any, tuple[int, str | None, frozenset[str]]] = {}
        self._starts: dict[tuple[int, tuple[int, ...]], tuple[Any, int]] = {}  # guided: replayed entries
        self._abstraction: Any = None  # guided: a checker.walks.abstraction.Abstraction, built on first use

    def visit(self, state: Any) -> tuple[int, str | None, frozenset[str]]:
        """(fingerprint, first `always` property broken or None, `sometimes` properties holding).

        Memoised per state: walks in one worker revisit many states (the initial one, common
        prefixes), and encoding + hashing a state costs far more than a dict lookup. The values
        are pure functions of the state, so the cache changes no result."""
        info = self._cache.get(state)
        if info is None:
            fp = self._fingerprint(state) if self.keep_fingerprints or self.sketch is not None else 0
            broken = next((p.name for p in self.always if not p.predicate(state)), None)
            holds = frozenset(p.name for p in self.sometimes if p.predicate(state))
            info = (fp, broken, holds)
            if len(self._cache) >= CACHE_STATES:
                self._cache.clear()
            self._cache[state] = info
        return info

    def walk(self, seed: int, walk_id: int, depth: int, swarm: bool, start: "Start | None" = None,
             cells: dict | None = None, state_cells: bool = False,
             known: "frozenset[int] | None" = None, count_cells: bool = False) -> WalkResult:
        """One walk of at most `depth` steps. Guided mode (checker.walks.guided) passes `start`, a corpus
        entry to begin at instead of an initial state (the walk then draws no initial-state index,
        and its recorded `actions` are the entry's path followed by its own steps), and `cells`, a
        table into which the walk folds the abstract cells of the states it visits (with
        `state_cells`, each state's fingerprint instead). `known` (novelty mode): fingerprints of
        states already found; each step prefers a successor neither in it nor visited by this walk.
        `count_cells`: the result counts the abstract cells the walk visited (`--out`'s walk rows);
        the walk itself is the same (the cells draw nothing from its random numbers)."""
        model = self.model
        rng = random.Random(walk_seed(seed, walk_id))
        weights = swarm_weights(model, rng) if swarm else None
        if start is None:
            init_index, prefix, history = _below(rng, len(self.inits)), (), 0
            state = self.inits[init_index]
        else:
            init_index, prefix = start.init_index, start.path
            state, history = self.start_state(init_index, prefix)
        taken: list[int] = []
        counts: Counter[str] = Counter()
        reached: set[str] = set()
        fps: set[int] = set()
        seen: dict | None = {} if cells is not None else None  # cell -> first step reaching it
        visited: set | None = set() if count_cells else None  # every cell, a deadlocked state's too
        abstraction = self.abstraction() if cells is not None or count_cells else None
        mine: set[int] | None = {self._fingerprint(state)} if known is not None else None  # novelty: this walk's states
        branches: dict[int, tuple[int, int]] = {}  # novelty: new successors not taken -> (step, action index)
        outcome = "depth"
        while True:
            fp, invariant, holds = self.visit(state)
            if self.keep_fingerprints:
                fps.add(fp)
            if self.sketch is not None:
                self.sketch.add(fp)  # idempotent
            if holds:
                reached |= holds
            candidates = None
            if abstraction is not None:
                candidates = list(model.actions(state))
                cell = self._fingerprint(state) if state_cells else abstraction.cell(state, candidates, history)
                if seen is not None and candidates and cell not in seen:  # a deadlocked state is no place to start from
                    seen[cell] = len(taken)
                if visited is not None:
                    visited.add(cell)
            if invariant is not None:
                outcome = "violation"
                break
            if len(taken) >= depth:
                break
            if mine is not None:
                step, enabled = self._novel_step(state, rng, weights, candidates, known, mine, branches, len(taken))
                if step is None and enabled:  # nothing new from here: later rounds start from the branches
                    outcome = "known"
                    break
            else:
                step = self._step(state, rng, weights, candidates)
            if step is None:
                outcome = "deadlock"
                break
            index, action, state = step
            taken.append(index)
            name = action_name(action)
            counts[name] += 1
            if abstraction is not None:
                history = abstraction.after(history, name)
                if cells is not None:
                    self._remember(init_index, prefix + tuple(taken), state, history)  # a later round's start
        path = prefix + tuple(taken)
        if seen is not None:
            _fold_cells(cells, seen, walk_id, init_index, path, len(prefix), branches)
        return WalkResult(walk_id, outcome, len(taken), init_index, path, invariant,
                          dict(counts), frozenset(reached), frozenset(fps), weights, len(prefix),
                          len(visited) if visited is not None else 0)

    def abstraction(self) -> Any:
        if self._abstraction is None:
            self._abstraction = Abstraction(self.model)
        return self._abstraction

    def start_state(self, init_index: int, path: tuple[int, ...]) -> tuple[Any, int]:
        """The state a corpus entry's path leads to, and the entry's action-kind history; memoised.
        A path is replayed from its longest prefix this worker has seen (a start, or a state some
        guided walk of this worker visited: next round's starts are mostly those), so a start
        rarely costs a replay from the initial state."""
        cached = self._starts.get((init_index, path))
        if cached is not None:
            return cached
        k = len(path) - 1
        while k >= 0 and (init_index, path[:k]) not in self._starts:
            k -= 1
        if k >= 0:
            state, history = self._starts[(init_index, path[:k])]
        else:
            state, history, k = _init_state(self.model, init_index), 0, 0
        abstraction = self.abstraction()
        for i in path[k:]:
            action, state = _replay_step(self.model, state, i, k)
            history = abstraction.after(history, action_name(action))
            k += 1
        self._remember(init_index, path, state, history)
        return state, history

    def _remember(self, init_index: int, path: tuple[int, ...], state: Any, history: int) -> None:
        if len(self._starts) >= START_CACHE:
            self._starts.clear()
        self._starts[(init_index, path)] = (state, history)

    def _step(self, state: Any, rng: random.Random, weights: Mapping[str, float] | None,
              candidates: list | None = None):
        """Pick an enabled action at random, kind first: a kind (action name) among those enabled,
        uniformly or by the swarm weights, then one of its actions uniformly. A no-op
        (next_state None) is discarded and another drawn. Choosing the kind first keeps kinds
        with many instances (a fault per broker, a DropMessage per message) from crowding out
        the rest, e.g. spending every fault budget before the first record is written."""
        if candidates is None:
            candidates = list(self.model.actions(state))
        kinds: dict[str, list[int]] = {}
        for i, a in enumerate(candidates):
            kinds.setdefault(action_name(a), []).append(i)
        open_kinds = list(kinds)  # in first-enabled order: deterministic
        while open_kinds:
            k = self._pick_kind(open_kinds, rng, weights)
            members = kinds[open_kinds[k]]
            j = _below(rng, len(members))
            i = members[j]
            nxt = self.model.next_state(state, candidates[i])
            if nxt is not None:
                return i, candidates[i], nxt
            members.pop(j)
            if not members:
                open_kinds.pop(k)
        return None

    def _novel_step(self, state: Any, rng: random.Random, weights: Mapping[str, float] | None,
                    candidates: list | None, known: "frozenset[int]", mine: set[int],
                    branches: dict[int, tuple[int, int]], step: int):
        """Novelty mode: like `_step`, but only among the actions whose successor is in neither
        `known` nor `mine`. Every successor is computed, as BFS expands a state, and the new ones
        the walk does not take go into `branches` (first finding kept), so the archive holds them
        all and no part of the space is left behind; the one it takes goes into `mine`. Returns
        (the step or None, whether any successor exists): (None, True) when none is new,
        (None, False) at a deadlock."""
        if candidates is None:
            candidates = list(self.model.actions(state))
        kinds: dict[str, list[tuple[int, Any, Any, int]]] = {}
        enabled = False
        for i, a in enumerate(candidates):
            nxt = self.model.next_state(state, a)
            if nxt is None:
                continue
            enabled = True
            fp = self._fingerprint(nxt)
            if fp not in known and fp not in mine:
                kinds.setdefault(action_name(a), []).append((i, a, nxt, fp))
                branches.setdefault(fp, (step, i))
        if not kinds:
            return None, enabled
        open_kinds = list(kinds)  # in first-enabled order: deterministic
        members = kinds[open_kinds[self._pick_kind(open_kinds, rng, weights)]]
        i, a, nxt, fp = members[_below(rng, len(members))]
        mine.add(fp)
        return (i, a, nxt), True

    @staticmethod
    def _pick_kind(open_kinds: list[str], rng: random.Random, weights: Mapping[str, float] | None) -> int:
        if weights is None:
            return _below(rng, len(open_kinds))
        ws = [weights.get(k, 1.0) for k in open_kinds]
        total = sum(ws)
        if total <= 0.0:  # only switched-off kinds are enabled: take one of them uniformly
            return _below(rng, len(open_kinds))
        r = rng.random() * total
        for j, w in enumerate(ws):
            r -= w
            if r < 0.0 and w > 0.0:
                return j
        return max(j for j, w in enumerate(ws) if w > 0.0)  # float rounding at the top end


@dataclass(frozen=True)
class Start:
    """A guided walk's starting point: a corpus entry, the action-index path from initial state
    `init_index` that reaches it (so every walk started there still replays from an initial state)."""

    init_index: int
    path: tuple[int, ...]


def _fold_cells(cells: dict, seen: Mapping[Any, int], walk_id: int, init_index: int,
                path: tuple[int, ...], prefix: int, branches: Mapping[int, tuple[int, int]] = {}) -> None:
    """Fold one walk's cells into a table cell -> [walks visiting it, (path length, walk id),
    init index, path]: the count is summed and the shortest path kept (ties: the smaller walk
    id), so the table of a set of walks does not depend on their order or split. `branches`
    (novelty mode): states found one step off the walk, at (step, action index), not visited."""
    found = [(cell, prefix + step, path[:prefix + step]) for cell, step in seen.items()]
    found += [(cell, prefix + step + 1, path[:prefix + step] + (i,))
              for cell, (step, i) in branches.items() if cell not in seen]
    for cell, length, to in found:
        key = (length, walk_id)
        entry = cells.get(cell)
        if entry is None:
            cells[cell] = [1, key, init_index, to]
        else:
            entry[0] += 1
            if key < entry[1]:
                entry[1:] = [key, init_index, to]


def merge_cells(into: dict, other: Mapping[Any, list]) -> dict:
    """Merge two cell tables (see `_fold_cells`): associative and commutative."""
    for cell, (count, key, init_index, path) in other.items():
        entry = into.get(cell)
        if entry is None:
            into[cell] = [count, key, init_index, path]
        else:
            entry[0] += count
            if key < entry[1]:
                entry[1:] = [key, init_index, path]
    return into


def walks(model: Model, seed: int, walk_ids: Iterable[int], depth: int, swarm: bool = False,
          keep_fingerprints: bool = True) -> list[WalkResult]:
    """Run one walk per id, each of at most `depth` steps, stopping at the first violation."""
    walker = Walker(model, keep_fingerprints)
    return [walker.walk(seed, w, depth, swarm) for w in walk_ids]


def replay(model: Model, init_index: int, action_indices: Sequence[int]) -> list[tuple[Any, Any]]:
    """Rebuild a walk as a trace [(None, init), (action, state), ...] from its recorded indices."""
    state = _init_state(model, init_index)
    trace: list[tuple[Any, Any]] = [(None, state)]
    for step, i in enumerate(action_indices):
        action, state = _replay_step(model, state, i, step)
        trace.append((action, state))
    return trace


def _init_state(model: Model, init_index: int) -> Any:
    inits = list(model.init_states())
    if not 0 <= init_index < len(inits):
        raise ValueError(f"initial state index {init_index} out of range (model has {len(inits)})")
    return inits[init_index]


def _replay_step(model: Model, state: Any, i: int, step: int) -> tuple[Any, Any]:
    """The action with index `i` among those enabled in `state`, and its successor."""
    candidates = list(model.actions(state))
    if not 0 <= i < len(candidates):
        raise ValueError(f"step {step}: action index {i} out of range ({len(candidates)} enabled)")
    nxt = model.next_state(state, candidates[i])
    if nxt is None:
        raise ValueError(f"step {step}: {candidates[i]!r} is a no-op here; the walk does not replay")
    return candidates[i], nxt


# --- aggregation -------------------------------------------------------------------------------


@dataclass(frozen=True)
class WalkRow:
    """What `--out` keeps of one walk (checker/walks/results.py writes it)."""

    walk_id: int
    steps: int
    end: str  # the walk's outcome: depth, violation, deadlock or known
    violated: str | None
    cells: int
    action_counts: dict


@dataclass
class Violation:
    """The shortest walk found breaking `invariant` (ties broken by the smaller walk id)."""

    invariant: str
    walk_id: int
    length: int
    init_index: int
    actions: tuple[int, ...]

    def key(self) -> tuple[int, int, str]:
        return (self.length, self.walk_id, self.invariant)


@dataclass
class Summary:
    """What a set of walks found. `merge` is associative and commutative, and the per-invariant
    cap keeps the `max_violations` smallest by (length, walk id, invariant), so the summary of a
    set of walks is the same however the walks were split across workers."""

    walks: int = 0
    steps: int = 0
    action_counts: Counter = field(default_factory=Counter)
    depth_histogram: Counter = field(default_factory=Counter)  # steps taken -> walks
    outcomes: Counter = field(default_factory=Counter)
    sometimes_reached: set = field(default_factory=set)
    violations: dict = field(default_factory=dict)  # invariant -> Violation
    violating_walks: Counter = field(default_factory=Counter)  # invariant -> walks breaking it
    first_violating_walk: dict = field(default_factory=dict)  # invariant -> smallest walk id breaking it
    fingerprints: set = field(default_factory=set)  # distinct "exact": every visited state's
    sketch: HyperLogLog | None = None  # distinct "hll": a sketch of them
    max_violations: int = 20
    cells: dict = field(default_factory=dict)  # guided mode: abstract cell -> see `_fold_cells`
    # `--out` (checker/walks/results.py): one WalkRow per walk, else None
    rows: list | None = None

    def add(self, r: WalkResult) -> None:
        if self.rows is not None:
            self.rows.append(WalkRow(r.walk_id, r.steps, r.outcome, r.invariant, r.cells, r.action_counts))
        self.walks += 1
        self.steps += r.steps
        self.action_counts.update(r.action_counts)
        self.depth_histogram[r.steps] += 1
        self.outcomes[r.outcome] += 1
        self.sometimes_reached |= r.sometimes_reached
        self.fingerprints |= r.fingerprints
        if r.invariant is not None:
            self.violating_walks[r.invariant] += 1
            first = self.first_violating_walk.get(r.invariant)
            self.first_violating_walk[r.invariant] = r.walk_id if first is None else min(first, r.walk_id)
            self._offer(Violation(r.invariant, r.walk_id, r.prefix + r.steps, r.init_index, r.actions))

    def _offer(self, v: Violation) -> None:
        old = self.violations.get(v.invariant)
        if old is None or v.key() < old.key():
            self.violations[v.invariant] = v
        if len(self.violations) > self.max_violations:
            worst = max(self.violations.values(), key=Violation.key)
            del self.violations[worst.invariant]

    def merge(self, other: "Summary") -> "Summary":
        self.walks += other.walks
        self.steps += other.steps
        self.action_counts.update(other.action_counts)
        self.depth_histogram.update(other.depth_histogram)
        self.outcomes.update(other.outcomes)
        self.sometimes_reached |= other.sometimes_reached
        self.fingerprints |= other.fingerprints
        if other.sketch is not None:
            if self.sketch is None:
                self.sketch = HyperLogLog(other.sketch.p)
            self.sketch.merge(other.sketch)
        self.violating_walks.update(other.violating_walks)
        for name, w in other.first_violating_walk.items():
            self.first_violating_walk[name] = min(w, self.first_violating_walk.get(name, w))
        for v in other.violations.values():
            self._offer(v)
        if other.cells:
            merge_cells(self.cells, other.cells)
        if other.rows is not None:
            self.rows = (self.rows or []) + other.rows
        return self

    def sorted_violations(self) -> list[Violation]:
        return sorted(self.violations.values(), key=Violation.key)

    def distinct_states(self) -> tuple[int | None, str, float]:
        """(distinct states visited, method, relative standard error): exactly from the
        fingerprints, estimated from the sketch, or (None, "none", 0.0) when neither was kept."""
        if self.sketch is not None:
            return self.sketch.estimate(), "hyperloglog", self.sketch.relative_error
        if self.fingerprints or self.walks == 0:
            return len(self.fingerprints), "exact", 0.0
        return None, "none", 0.0


def walker_for(model: Model, distinct: str) -> Walker:
    """A Walker keeping what `distinct` ("exact", "hll" or "none") needs to count distinct states."""
    if distinct not in DISTINCT_MODES:
        raise ValueError(f"distinct must be one of {', '.join(DISTINCT_MODES)}, got {distinct!r}")
    return Walker(model, keep_fingerprints=distinct == "exact",
                  sketch=HyperLogLog() if distinct == "hll" else None)


def summarize(model: Model, seed: int, walk_ids: Iterable[int], depth: int, swarm: bool = False,
              distinct: str = "exact", max_violations: int = 20, walker: Walker | None = None,
              plan: "RoundPlan | None" = None, rows: bool = False) -> Summary:
    """Run walks and fold them into a Summary without keeping every WalkResult in memory.
    `distinct`: keep every state fingerprint ("exact"), a HyperLogLog sketch ("hll") or nothing.
    `plan`: a guided round (checker.walks.guided): walk ids are offset by its first id, each walk starts
    at the corpus entry the plan assigns it, and the summary collects the visited cells.
    `rows`: the summary also keeps a WalkRow per walk (`--out`)."""
    walker = walker or walker_for(model, distinct)
    summary = Summary(max_violations=max_violations, rows=[] if rows else None)
    if plan is None:
        for w in walk_ids:
            summary.add(walker.walk(seed, w, depth, swarm, count_cells=rows))
    else:
        for w in walk_ids:
            walk_id = plan.first_id + w
            summary.add(walker.walk(seed, walk_id, depth, swarm, plan.start(seed, walk_id), summary.cells,
                                    state_cells=plan.state_cells, known=plan.known, count_cells=rows))
    if walker.sketch is not None:
        summary.sketch = HyperLogLog(walker.sketch.p).merge(walker.sketch)
    return summary


@dataclass(frozen=True)
class RoundPlan:
    """One round of guided simulation, as the engines run it: walks `first_id .. first_id + n - 1`
    (the engine's local ids 0..n-1, offset), each starting at the corpus entry picked by a stable
    hash of (seed, round, walk id) (novelty mode: entry i gets walks i, i + len(corpus), ...),
    or at an initial state when the corpus is empty (round 0)."""

    round: int
    first_id: int
    corpus: tuple[Start, ...] = ()
    state_cells: bool = False  # a cell is the state itself (its fingerprint), not its abstraction
    known: "frozenset[int] | None" = None  # novelty mode: the archive's states at the round's start

    def start(self, seed: int, walk_id: int) -> Start | None:
        if not self.corpus:
            return None
        if self.known is not None:  # novelty: every entry gets a walk (a frontier state left unexpanded is lost)
            return self.corpus[(walk_id - self.first_id) % len(self.corpus)]
        digest = hashlib.blake2b(f"kcheck-guided:{seed}:{self.round}:{walk_id}".encode(), digest_size=8).digest()
        return self.corpus[int.from_bytes(digest, "big") % len(self.corpus)]


# --- rebuilding the model in another process -----------------------------------------------------


@dataclass(frozen=True)
class ModelSpec:
    """Everything a worker process needs to rebuild the model: its name, the module defining it
    (so models registered at run time, e.g. by a test, resolve in workers too), config, variant,
    and a digest of the code that defines it, so an executor running other kcheck code (an old
    wheel on a cluster, files edited mid-run) fails loudly instead of walking another model."""

    name: str
    config: tuple  # sorted (key, value) pairs: hashable and picklable
    variant: str
    module: str = ""
    code: str = ""  # code_digest(module) on the driver; "" skips the check
    invariants: tuple = ()  # the `always` properties checked (`--invariant`); empty: every one
    # the plugins in force (checker/plugin.py), as (file name, SHA-256): a worker builds the model
    # only with exactly these in force (Spark executors load them: checker/walks/spark_plugins.py)
    plugins: tuple = ()

    @classmethod
    def of(cls, name: str, config: Mapping[str, Any], variant: str, invariants: Sequence[str] = ()) -> "ModelSpec":
        import model as models
        from checker import plugin

        module = models.MODELS.get(name, "")
        plugins = tuple((os.path.basename(p.path), p.sha256) for p in plugin.active())
        return cls(name, tuple(sorted(dict(config).items())), variant, module, code_digest(module), tuple(invariants),
                   plugins)

    def build(self) -> Model:
        import model as models
        from checker import plugin

        if [p.sha256 for p in plugin.active()] != [sha for _, sha in self.plugins]:
            raise RuntimeError(
                f"this worker has other plugins in force than the driver ({', '.join(n for n, _ in self.plugins) or 'none'}"
                " on the driver): a worker process must load the driver's plugin files before it builds the model")
        if self.module and self.name not in models.MODELS:
            models.MODELS[self.name] = self.module
        if self.code and code_digest(self.module) != self.code:
            raise RuntimeError(
                f"this worker runs different kcheck code for model {self.name!r} than the driver"
                f" (code digest {code_digest(self.module)[:12]} here, {self.code[:12]} on the driver):"
                " install the same kcheck version on every executor")
        from checker.selection import select_invariants

        return select_invariants(models.definition(self.name).build(dict(self.config), self.variant), self.invariants)


@lru_cache(maxsize=None)
def code_digest(module: str) -> str:
    """SHA-256 over the Python sources of a model's package (or module), the model interface and
    this walk kernel: what decides where a seeded walk goes. Read through the import system, so
    it works for code shipped as a zip or wheel (spark-submit --py-files) as for plain files."""
    import importlib
    import importlib.util
    import pkgutil

    names: list[str] = []
    if module:
        names.append(module)
        package = importlib.import_module(module)
        if hasattr(package, "__path__"):
            names += sorted(f"{module}.{m.name}" for m in pkgutil.iter_modules(package.__path__))
    names += ["model.interface", "checker.walks.walker", "checker.walks.guided"]
    digest = hashlib.sha256()
    for name in names:
        spec = importlib.util.find_spec(name)
        get_source = getattr(spec.loader, "get_source", None) if spec is not None else None
        source = get_source(name) if get_source is not None else None
        if source is None and spec is not None:  # a compiled module, or pytest's rewriting loader for a model under tests/
            path = source_file(spec)
            source = path.read_text() if path is not None else None
        digest.update(name.encode() + b"\0" + (source or "").encode() + b"\0")
    return digest.hexdigest()


def walk_ids_of_part(walks_total: int, part: int, parts: int) -> range:
    """Round-robin assignment of walk ids to `parts` workers (results do not depend on it)."""
    return range(part, walks_total, parts)
