"""Exhaustive breadth-first exploration of a model (Stateright's `bfs.rs`, TLC's BFS mode).

The search keeps one dict, fingerprint -> parent fingerprint, and the current and next BFS
levels. Every newly discovered state is checked against every `always` property; the first
violation stops the search and, because the search is breadth-first, its trace is a shortest
one. The trace is rebuilt afterwards from the parent fingerprints by re-expanding each state
on the path, so no action is stored per state.

Counting conventions (TLC's): `states_generated` counts the initial states plus every
successor that `next_state` returned (a `None` is a no-op and counts nowhere);
`distinct_states` counts distinct fingerprints; `depth` is the largest BFS level reached
(the initial states are level 0); `action_counts[kind]` counts the transitions taken by
actions of that kind (an action whose `next_state` is `None` was not enabled).
"""
from __future__ import annotations

import gc
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from checker import stop
from checker.fingerprint import fingerprint
from model.interface import Model

OK = "ok"
VIOLATION = "violation"
INCOMPLETE = "incomplete"


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
    # Order-free digest of the reachable states (sum of fingerprints mod 2**64) of a one-process
    # search that ended "ok": two models with the same digest reach the same states.
    digest: Optional[int] = None

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


def initial_states(model: Model, reduce: bool = True) -> list[Any]:
    red = reduction_of(model, reduce)
    return [red(s) for s in model.init_states()] if red is not None else list(model.init_states())


def state_fingerprint(model: Model) -> Callable[[Any], int]:
    """The model's own `fingerprint(state)` when it has one (e.g. a process-stable tuple hash),
    else the BLAKE2b digest of its canonical encoding."""
    own = getattr(model, "fingerprint", None)
    if own is not None:
        return own  # type: ignore[no-any-return]
    encode = model.encode
    return lambda s: fingerprint(encode(s))


def explore(
    model: Model,
    *,
    max_states: int | None = None,
    progress: Callable[[Progress], None] | None = None,
    progress_every: float = 5.0,
    workers: int = 1,
    reduce: bool = True,
) -> Result:
    """Explore every state reachable from `model.init_states()`, breadth first.

    Stops at the first state that breaks an `always` property ("violation"), when a new state
    would exceed `max_states` distinct states ("incomplete"), on KeyboardInterrupt
    ("incomplete", `interrupted=True`), or when the space is exhausted ("ok").
    `progress` is called with a `Progress` about every `progress_every` seconds.
    `workers` > 1 runs the search on that many processes (`checker.parallel`): the same
    counts, coverage and counterexample length, in less time on as many cores.
    With `reduce` (the default) a model's stutter reduction (`model.reduce`) is applied to every
    state: fewer states, every property value still met, counterexamples no longer (in steps of
    the reduced model). `reduce=False` explores every state `next_state` gives.
    """
    if max_states is not None and max_states < 0:
        raise ValueError(f"max_states must be >= 0, got {max_states}")
    if workers > 1:
        from checker import parallel

        if parallel.available():
            return parallel.explore_parallel(model, workers=workers, max_states=max_states, progress=progress,
                                             progress_every=progress_every, reduce=reduce)
    always_props = [(p.name, p.predicate) for p in model.properties if p.kind == "always"]
    pending = [(p.name, p.predicate) for p in model.properties if p.kind == "sometimes"]
    reached: dict[str, int] = {}

    # Hot-loop aliases.
    actions = model.actions
    next_state = successor_function(model, reduce)
    fp_of = state_fingerprint(model)
    limit = max_states if max_states is not None else -1
    type_counts: dict[type, int] = {}
    parents: dict[int, Optional[int]] = {}

    start = time.perf_counter()
    every = max(progress_every, 0.0)
    next_report = start + every
    generated = 0
    depth = 0
    outcome = OK
    bad_fp: Optional[int] = None
    bad_name = ""
    interrupted = False
    frontier: list[Any] = []
    frontier_fps: list[int] = []
    next_level: list[Any] = []
    next_fps: list[int] = []
    index = 0
    expanded = 0
    level = 0

    def check_sometimes(state: Any, level: int) -> None:
        for item in list(pending):
            if item[1](state):
                reached[item[0]] = level
                pending.remove(item)

    try:
        for s in initial_states(model, reduce):
            generated += 1
            fp = fp_of(s)
            if fp in parents:
                continue
            if len(parents) == limit:
                outcome = INCOMPLETE
                break
            parents[fp] = None
            for name, pred in always_props:
                if not pred(s):
                    outcome, bad_fp, bad_name = VIOLATION, fp, name
                    break
            if outcome != OK:
                break
            if pending:
                check_sometimes(s, 0)
            frontier.append(s)
            frontier_fps.append(fp)

        while outcome == OK and frontier:
            gc.freeze()  # earlier levels stay alive: keep the cyclic collector from walking them
            next_level = []
            next_fps = []
            append_state = next_level.append
            append_fp = next_fps.append
            level = depth + 1
            index = 0
            for s in frontier:
                pfp = frontier_fps[index]
                index += 1
                expanded += 1
                for a in actions(s):
                    t = next_state(s, a)
                    if t is None:
                        continue
                    generated += 1
                    kind = a.__class__
                    type_counts[kind] = type_counts.get(kind, 0) + 1
                    fp = fp_of(t)
                    if fp in parents:
                        continue
                    if len(parents) == limit:
                        outcome = INCOMPLETE
                        break
                    parents[fp] = pfp
                    for name, pred in always_props:
                        if not pred(t):
                            outcome, bad_fp, bad_name = VIOLATION, fp, name
                            break
                    if outcome != OK:
                        break
                    if pending:
                        check_sometimes(t, level)
                    append_state(t)
                    append_fp(fp)
                if outcome != OK:
                    break
                if not expanded & 0x3FF:
                    stop.check()
                    if progress is not None:
                        now = time.perf_counter()
                        if now >= next_report:
                            next_report = now + every
                            queue = len(frontier) - index + len(next_level)
                            progress(Progress(len(parents), generated, depth, queue, now - start))
            if next_level or outcome == VIOLATION:
                depth = level
            if outcome != OK:
                break
            frontier, frontier_fps = next_level, next_fps
            next_level, next_fps = [], []
    except KeyboardInterrupt:
        outcome, interrupted = INCOMPLETE, True
        if next_level:  # interrupted within a level: its states were discovered
            depth = level

    seconds = time.perf_counter() - start
    counts = {kind: 0 for kind in model.action_kinds}
    for kind_type, n in type_counts.items():
        counts[kind_type.__name__] = counts.get(kind_type.__name__, 0) + n
    violation = None
    if outcome == VIOLATION:
        assert bad_fp is not None
        violation = violation_report(model, bad_name, parents, bad_fp, reduce=reduce)
    queue = 0 if outcome == OK else max(len(frontier) - index, 0) + len(next_level)
    never_enabled, disabled = coverage(model, counts)
    return Result(
        result=outcome,
        distinct_states=len(parents),
        states_generated=generated,
        depth=depth,
        seconds=seconds,
        unreached=[name for name, _ in pending],
        never_enabled=never_enabled,
        disabled=disabled,
        action_counts=counts,
        violation=violation,
        interrupted=interrupted,
        max_states=max_states,
        queue=queue,
        reached=reached,
        reduction=reduction_text(model, reduce),
        digest=sum(parents) % (1 << 64) if outcome == OK else None,
    )


def violation_report(model: Model, invariant: str, parents: dict[int, Optional[int]], last_fp: int,
                     fp_of: Callable[[Any], int] | None = None, reduce: bool = True) -> dict[str, Any]:
    """`Result.violation`: the broken invariant, its description and a shortest trace to `last_fp`."""
    descriptions = {p.name: p.description for p in model.properties}
    return {"invariant": invariant, "description": descriptions.get(invariant, ""),
            "trace": trace_to(model, parents, last_fp, fp_of, reduce)}


def trace_to(model: Model, parents: dict[int, Optional[int]], last_fp: int,
             fp_of: Callable[[Any], int] | None = None, reduce: bool = True) -> list[tuple[Any, Any]]:
    """A shortest path from an initial state to `last_fp`: re-expand each state on the parent chain
    and pick the first action (in `actions` order) whose successor has the next fingerprint.
    `fp_of` is the fingerprint the search used (default: `state_fingerprint(model)`)."""
    chain: deque[int] = deque()
    fp: Optional[int] = last_fp
    while fp is not None:
        chain.appendleft(fp)
        fp = parents[fp]
    first = chain.popleft()
    fp_of = fp_of or state_fingerprint(model)
    step = successor_function(model, reduce)
    state = next(s for s in initial_states(model, reduce) if fp_of(s) == first)
    trace: list[tuple[Any, Any]] = [(None, state)]
    for wanted in chain:
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
