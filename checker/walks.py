"""Seeded random walks over a model: the kernel shared by the local engine and Spark partitions.

Every walk draws from its own RNG, seeded from a stable hash of (seed, walk_id) (blake2b, never
Python's `hash()`), so a walk's path depends on nothing but the model, the seed, its id and the
depth: not on which process, partition or machine runs it, nor on which other walks run there.
A violating walk is recorded as (initial-state index, action indices) and `replay` rebuilds it.

The module imports no engine framework; `Summary` is the order-independent aggregate that the
local engine, a multiprocessing pool and Spark all merge the same way.
"""
from __future__ import annotations

import hashlib
import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from checker.fingerprint import fingerprint  # blake2b-8 of the canonical encoding, as an int
from model.interface import Model, action_name

CACHE_STATES = 100_000  # states whose fingerprint and property values a worker memoises

OUTCOMES = ("depth", "deadlock", "violation")  # reached the depth bound / nothing enabled / invariant broken


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


class Walker:
    """Runs walks of one model: its initial states, properties split by kind, and a per-state memo."""

    def __init__(self, model: Model, keep_fingerprints: bool = True) -> None:
        self.model = model
        self.inits = list(model.init_states())
        if not self.inits:
            raise ValueError(f"model {model.name!r} has no initial state")
        self.always = [p for p in model.properties if p.kind == "always"]
        self.sometimes = [p for p in model.properties if p.kind == "sometimes"]
        self.keep_fingerprints = keep_fingerprints
        self._cache: dict[Any, tuple[int, str | None, frozenset[str]]] = {}

    def visit(self, state: Any) -> tuple[int, str | None, frozenset[str]]:
        """(fingerprint, first `always` property broken or None, `sometimes` properties holding).

        Memoised per state: walks in one worker revisit many states (the initial one, common
        prefixes), and encoding + hashing a state costs far more than a dict lookup. The values
        are pure functions of the state, so the cache changes no result."""
        info = self._cache.get(state)
        if info is None:
            fp = fingerprint(self.model.encode(state)) if self.keep_fingerprints else 0
            broken = next((p.name for p in self.always if not p.predicate(state)), None)
            holds = frozenset(p.name for p in self.sometimes if p.predicate(state))
            info = (fp, broken, holds)
            if len(self._cache) >= CACHE_STATES:
                self._cache.clear()
            self._cache[state] = info
        return info

    def walk(self, seed: int, walk_id: int, depth: int, swarm: bool) -> WalkResult:
        model = self.model
        rng = random.Random(walk_seed(seed, walk_id))
        weights = swarm_weights(model, rng) if swarm else None
        init_index = _below(rng, len(self.inits))
        state = self.inits[init_index]
        taken: list[int] = []
        counts: Counter[str] = Counter()
        reached: set[str] = set()
        fps: set[int] = set()
        outcome = "depth"
        while True:
            fp, invariant, holds = self.visit(state)
            if self.keep_fingerprints:
                fps.add(fp)
            if holds:
                reached |= holds
            if invariant is not None:
                outcome = "violation"
                break
            if len(taken) >= depth:
                break
            step = self._step(state, rng, weights)
            if step is None:
                outcome = "deadlock"
                break
            index, action, state = step
            taken.append(index)
            counts[action_name(action)] += 1
        return WalkResult(walk_id, outcome, len(taken), init_index, tuple(taken), invariant,
                          dict(counts), frozenset(reached), frozenset(fps), weights)

    def _step(self, state: Any, rng: random.Random, weights: Mapping[str, float] | None):
        """Pick an enabled action at random; a no-op (next_state None) is discarded and another tried."""
        candidates = list(self.model.actions(state))
        open_ = list(range(len(candidates)))
        while open_:
            j = self._pick(candidates, open_, rng, weights)
            i = open_[j]
            nxt = self.model.next_state(state, candidates[i])
            if nxt is not None:
                return i, candidates[i], nxt
            open_.pop(j)
        return None

    @staticmethod
    def _pick(candidates: Sequence[Any], open_: list[int], rng: random.Random,
              weights: Mapping[str, float] | None) -> int:
        if weights is None:
            return _below(rng, len(open_))
        ws = [weights.get(action_name(candidates[i]), 1.0) for i in open_]
        total = sum(ws)
        if total <= 0.0:
            return _below(rng, len(open_))
        r = rng.random() * total
        for j, w in enumerate(ws):
            r -= w
            if r < 0.0 and w > 0.0:
                return j
        return max(j for j, w in enumerate(ws) if w > 0.0)  # float rounding at the top end


def walks(model: Model, seed: int, walk_ids: Iterable[int], depth: int, swarm: bool = False,
          keep_fingerprints: bool = True) -> list[WalkResult]:
    """Run one walk per id, each of at most `depth` steps, stopping at the first violation."""
    walker = Walker(model, keep_fingerprints)
    return [walker.walk(seed, w, depth, swarm) for w in walk_ids]


def replay(model: Model, init_index: int, action_indices: Sequence[int]) -> list[tuple[Any, Any]]:
    """Rebuild a walk as a trace [(None, init), (action, state), ...] from its recorded indices."""
    inits = list(model.init_states())
    if not 0 <= init_index < len(inits):
        raise ValueError(f"initial state index {init_index} out of range (model has {len(inits)})")
    state = inits[init_index]
    trace: list[tuple[Any, Any]] = [(None, state)]
    for step, i in enumerate(action_indices):
        candidates = list(model.actions(state))
        if not 0 <= i < len(candidates):
            raise ValueError(f"step {step}: action index {i} out of range ({len(candidates)} enabled)")
        nxt = model.next_state(state, candidates[i])
        if nxt is None:
            raise ValueError(f"step {step}: {candidates[i]!r} is a no-op here; the walk does not replay")
        state = nxt
        trace.append((candidates[i], state))
    return trace


# --- aggregation -------------------------------------------------------------------------------


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
    fingerprints: set = field(default_factory=set)
    max_violations: int = 20

    def add(self, r: WalkResult) -> None:
        self.walks += 1
        self.steps += r.steps
        self.action_counts.update(r.action_counts)
        self.depth_histogram[r.steps] += 1
        self.outcomes[r.outcome] += 1
        self.sometimes_reached |= r.sometimes_reached
        self.fingerprints |= r.fingerprints
        if r.invariant is not None:
            self.violating_walks[r.invariant] += 1
            self._offer(Violation(r.invariant, r.walk_id, r.steps, r.init_index, r.actions))

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
        self.violating_walks.update(other.violating_walks)
        for v in other.violations.values():
            self._offer(v)
        return self

    def sorted_violations(self) -> list[Violation]:
        return sorted(self.violations.values(), key=Violation.key)


def summarize(model: Model, seed: int, walk_ids: Iterable[int], depth: int, swarm: bool = False,
              keep_fingerprints: bool = True, max_violations: int = 20) -> Summary:
    """Run walks and fold them into a Summary without keeping every WalkResult in memory."""
    walker = Walker(model, keep_fingerprints)
    summary = Summary(max_violations=max_violations)
    for w in walk_ids:
        summary.add(walker.walk(seed, w, depth, swarm))
    return summary


# --- rebuilding the model in another process -----------------------------------------------------


@dataclass(frozen=True)
class ModelSpec:
    """Everything a worker process needs to rebuild the model: its name, the module defining it
    (so models registered at run time, e.g. by a test, resolve in workers too), config, variant."""

    name: str
    config: tuple  # sorted (key, value) pairs: hashable and picklable
    variant: str
    module: str = ""

    @classmethod
    def of(cls, name: str, config: Mapping[str, Any], variant: str) -> "ModelSpec":
        import model as models

        return cls(name, tuple(sorted(dict(config).items())), variant, models.MODELS.get(name, ""))

    def build(self) -> Model:
        import model as models

        if self.module and self.name not in models.MODELS:
            models.MODELS[self.name] = self.module
        return models.definition(self.name).build(dict(self.config), self.variant)


def walk_ids_of_part(walks_total: int, part: int, parts: int) -> range:
    """Round-robin assignment of walk ids to `parts` workers (results do not depend on it)."""
    return range(part, walks_total, parts)
