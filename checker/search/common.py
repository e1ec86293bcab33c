"""What every search engine shares (one process, a process pool, Spark): the outcome names,
`Progress` and `Result`, action coverage, the model's successor function with its stutter
reduction, level 0 of a search, and the violation report with its rebuilt trace."""
from __future__ import annotations

import functools
import gc
import operator
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, TypeVar

from checker.fingerprint import masked_fingerprint
from model.interface import Model

OK = "ok"
VIOLATION = "violation"
INCOMPLETE = "incomplete"

_Search = TypeVar("_Search", bound=Callable[..., Any])


def collector_paused(search: _Search) -> _Search:
    """Run `search` with the cyclic garbage collector off (reference counting still frees every
    state). A search allocates millions of tuples that stay alive in its queue, and each of them
    made the collector walk the young ones again, and every level's full collection walk them all
    (about a sixth of a 1.5-million-state replication search, docs/performance.md); states hold
    no cycles, so there is nothing for it to find."""

    @functools.wraps(search)
    def paused(*args: Any, **kwargs: Any) -> Any:
        was_on = gc.isenabled()
        gc.disable()
        try:
            return search(*args, **kwargs)
        finally:
            if was_on:
                gc.enable()

    return paused  # type: ignore[return-value]


@dataclass(frozen=True)
class Progress:
    """A snapshot of a running search, handed to the `progress` callback."""

    distinct_states: int
    states_generated: int
    depth: int
    queue: int
    seconds: float

    @property
    def states_per_second(self) -> float:
        return self.distinct_states / self.seconds if self.seconds > 0 else 0.0


@dataclass
class Result:
    """The outcome of `explore`.

    `result` is "ok" (every reachable state explored, every `always` property holds),
    "violation" (`violation` holds the property and a shortest trace) or "incomplete"
    (`max_states` reached, or interrupted, before the space was exhausted).
    `violation["trace"]` is a list of (action, state) pairs; the first has action None.
    """

    result: str
    distinct_states: int
    states_generated: int
    depth: int
    seconds: float
    unreached: list[str]
    never_enabled: list[str]
    action_counts: dict[str, int]
    violation: Optional[dict[str, Any]] = None
    interrupted: bool = False
    max_states: Optional[int] = None
    queue: int = 0  # states discovered but not yet expanded when the search stopped
    reached: dict[str, int] = field(default_factory=dict)  # sometimes-property -> BFS level
    workers: int = 1  # processes that explored
    reduction: Optional[str] = None  # the model's stutter reduction, when the search used it
    disabled: dict[str, str] = field(default_factory=dict)  # action kind -> why the config rules it out
    # Order-free digest of the reachable states (sum of fingerprints mod 2**64) of a search that
    # ended "ok": two models with the same digest reach the same states.
    digest: Optional[int] = None
    visited_bytes: int = 0  # the visited set's table, at the end (checker/search/visited.py)
    # With partial-order reduction (checker/search/por.py): states expanded, those expanded by an
    # ample set smaller than everything enabled, and what a full search was run to settle.
    por: Optional[dict[str, Any]] = None

    @property
    def states_per_second(self) -> float:
        return self.distinct_states / self.seconds if self.seconds > 0 else 0.0


def coverage(model: Model, counts: dict[str, int]) -> tuple[list[str], dict[str, str]]:
    """The action kinds never enabled although the configuration allows them, and those the
    configuration rules out (the model's optional `disabled_actions`), with the reason."""
    disabled = dict(getattr(model, "disabled_actions", dict)())
    never = [k for k in model.action_kinds if counts.get(k, 0) == 0 and k not in disabled]
    return never, {k: why for k, why in disabled.items() if counts.get(k, 0) == 0}


def reduction_of(model: Model, reduce: bool = True) -> Optional[Callable[[Any], Any]]:
    """The model's optional stutter reduction (`reduce`, see model/interface.py), if asked for."""
    return getattr(model, "reduce", None) if reduce else None


def reduction_text(model: Model, reduce: bool = True) -> Optional[str]:
    """`Result.reduction`: the model's description of the reduction the search used, if any."""
    return getattr(model, "reduction", None) if reduction_of(model, reduce) else None


def successor_function(model: Model, reduce: bool = True) -> Callable[[Any, Any], Any]:
    """`model.next_state`, followed by the model's stutter reduction when it has one and `reduce`."""
    next_state = model.next_state
    red = reduction_of(model, reduce)
    if red is None:
        return next_state

    def step(s: Any, a: Any) -> Any:
        t = next_state(s, a)
        return None if t is None else red(t)

    return step


class Invariants:
    """The model's `always` properties, in order, as every engine checks them on a new state.
    Property.reads: an invariant is not evaluated again on a successor whose fields there are the
    very objects its parent holds (states are immutable, and the parent passed it); and when every
    invariant names what it reads, not again on a state whose read fields equal those of a state
    that passed (an invariant is a function of the fields it reads), as long as such repeats are
    common. Many distinct states differ only in fields no invariant reads: on replication
    `one-crash`, 281,386 states have 28,440 distinct (brokers, controller, history)."""

    # read-field tuples remembered, all forgotten when full: they keep their objects alive
    PASSED_MAX = 1 << 14
    # After TRIAL lookups, remembering stops unless two in three found a value that passed: on kraft
    # `default` (state_sanity reads the network) about half do, and the lookups cost what they save.
    TRIAL = 50_000

    def __init__(self, model: Model) -> None:
        always = [p for p in model.properties if p.kind == "always"]
        fields = sorted({f for p in always for f in p.reads})
        self.field_bits = [(f, 1 << i) for i, f in enumerate(fields)]
        self.all_kept = (1 << len(fields)) - 1  # every read field is the parent's: nothing to check
        self.checks = [(p.name, p.predicate, sum(1 << fields.index(f) for f in p.reads)) for p in always]
        every = bool(always) and all(p.reads for p in always)
        self.read_fields: Optional[Callable[[Any], Any]] = operator.attrgetter(*fields) if every else None
        self.passed: set[Any] = set()
        self.lookups = self.hits = 0

    def broken(self, t: Any, parent: Any = None) -> Optional[str]:
        """The first invariant `t` breaks, or None; `parent`: the state `t` was generated from."""
        kept = 0  # the fields t holds as the very objects its parent holds
        if parent is not None:
            for f, bit in self.field_bits:
                if getattr(t, f) is getattr(parent, f):
                    kept |= bit
        key = None
        if self.read_fields is not None and kept != self.all_kept:
            key = self.read_fields(t)
            self.lookups += 1
            hit = key in self.passed
            self.hits += hit
            if self.lookups == self.TRIAL and self.hits * 3 < self.TRIAL * 2:
                self.read_fields, self.passed, key = None, set(), None  # too few repeats to pay for the lookups
            if hit:
                return None
        for name, pred, need in self.checks:
            if need and kept & need == need:
                continue
            if not pred(t):
                return name
        if key is not None:
            if len(self.passed) >= self.PASSED_MAX:
                self.passed.clear()
            self.passed.add(key)
        return None


def initial_states(model: Model, reduce: bool = True) -> list[Any]:
    red = reduction_of(model, reduce)
    return [red(s) for s in model.init_states()] if red is not None else list(model.init_states())


@dataclass
class InitialLevel:
    """Level 0 of a search: the distinct initial states in order, with their index in
    `initial_states` and fingerprint, up to the first that breaks an `always` property."""

    states: list[tuple[int, Any, int]]  # (index, state, fingerprint)
    generated: int
    outcome: str  # OK, VIOLATION (the last of `states` is not kept: see `bad`) or INCOMPLETE
    bad: Optional[tuple[int, int, str]] = None  # (index, fingerprint, invariant)
    reached: list[str] = field(default_factory=list)  # sometimes-properties met at level 0


def initial_level(model: Model, reduce: bool, fp_of: Callable[[Any], int], limit: int) -> InitialLevel:
    """Level 0, as every engine starts: `limit` distinct states at most (-1: no limit)."""
    broken = Invariants(model).broken
    out = InitialLevel([], 0, OK)
    seen: set[int] = set()
    for index, s in enumerate(initial_states(model, reduce)):
        out.generated += 1
        fp = fp_of(s)
        if fp in seen:
            continue
        if len(seen) == limit:
            out.outcome = INCOMPLETE
            break
        seen.add(fp)
        name = broken(s)
        if name is not None:
            out.outcome, out.bad = VIOLATION, (index, fp, name)
            break
        out.reached += [p.name for p in model.properties
                        if p.kind == "sometimes" and p.name not in out.reached and p.predicate(s)]
        out.states.append((index, s, fp))
    return out


def record_initial(first: InitialLevel, visited: Any, links: Any) -> None:
    """Level 0 into the visited set and the level-0 link file: its states, and the violating one."""
    fps = [fp for _, _, fp in first.states] + ([first.bad[1]] if first.bad is not None else [])
    for fp in fps:
        visited.add(fp)
        links.add(0, fp, 0)


def violation_report(model: Model, invariant: str, chain: list[int],
                     fp_of: Callable[[Any], int] | None = None, reduce: bool = True) -> dict[str, Any]:
    """`Result.violation`: the broken invariant, its description and the trace along `chain`."""
    descriptions = {p.name: p.description for p in model.properties}
    return {"invariant": invariant, "description": descriptions.get(invariant, ""),
            "trace": trace_to(model, chain, fp_of, reduce)}


def trace_to(model: Model, chain: list[int], fp_of: Callable[[Any], int] | None = None,
             reduce: bool = True) -> list[tuple[Any, Any]]:
    """The path through the fingerprints of `chain` (an initial state's first, as
    `ParentLinks.chain` gives them): re-expand each state and pick the first action (in `actions`
    order) whose successor has the next fingerprint. `fp_of` is the fingerprint the search used
    (default: `masked_fingerprint(model)`)."""
    fp_of = fp_of or masked_fingerprint(model)
    step = successor_function(model, reduce)
    first, rest = chain[0], chain[1:]
    state = next(s for s in initial_states(model, reduce) if fp_of(s) == first)
    trace: list[tuple[Any, Any]] = [(None, state)]
    for wanted in rest:
        for a in model.actions(state):
            t = step(state, a)
            if t is not None and fp_of(t) == wanted:
                trace.append((a, t))
                state = t
                break
        else:  # pragma: no cover - only a nondeterministic model gets here
            raise RuntimeError(
                f"cannot rebuild the trace: no action of {state!r} leads to fingerprint {wanted:#x};"
                " are the model's actions/next_state deterministic?"
            )
    return trace
