"""Exhaustive breadth-first exploration of a model (Stateright's `bfs.rs`, TLC's BFS mode).

The search keeps a set of 64-bit fingerprints (checker/visited.py, about 15 bytes a state),
writes each new state's (fingerprint, parent fingerprint) to its level's link file
(checker/levels.py), and queues the states of the current and the next level
(checker/frontier.py, in memory up to a bound, then on disk). Every newly discovered state is
checked against every `always` property; the first violation stops the search and, because the
search is breadth-first, its trace is a shortest one. The trace is rebuilt afterwards from the
link files by re-expanding each state on the path, so no action is stored per state. A run
directory keeps these files and checkpoints between levels, so a killed search resumes
(checker/checkpoint.py).

Counting conventions (TLC's): `states_generated` counts the initial states plus every
successor that `next_state` returned (a `None` is a no-op and counts nowhere);
`distinct_states` counts distinct fingerprints; `depth` is the largest BFS level reached
(the initial states are level 0); `action_counts[kind]` counts the transitions taken by
actions of that kind (an action whose `next_state` is `None` was not enabled).
"""
from __future__ import annotations

import gc
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from checker import checkpoint as checkpoint_mod
from checker import stop
from checker.checkpoint import Checkpoint, RunDir, run_identity
from checker.fingerprint import fingerprint
from checker.frontier import UNLIMITED, Frontier
from checker.visited import FPSet
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
    # Order-free digest of the reachable states (sum of fingerprints mod 2**64) of a search that
    # ended "ok": two models with the same digest reach the same states.
    digest: Optional[int] = None
    visited_bytes: int = 0  # the visited set's table, at the end (checker/visited.py)

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
    always_props = [(p.name, p.predicate) for p in model.properties if p.kind == "always"]
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
        name = next((n for n, pred in always_props if not pred(s)), None)
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


MASK = (1 << 64) - 1


def masked_fingerprint(model: Model) -> Callable[[Any], int]:
    """`state_fingerprint` as an unsigned 64-bit int: what the visited set and the link files hold."""
    raw = state_fingerprint(model)
    return lambda s: raw(s) & MASK


def explore(
    model: Model,
    *,
    max_states: int | None = None,
    progress: Callable[[Progress], None] | None = None,
    progress_every: float = 5.0,
    workers: int = 1,
    reduce: bool = True,
    run_dir: str | Path | None = None,
    resume: bool = False,
    identity: dict[str, Any] | None = None,
    checkpoint_every: float = 60.0,
    keep: int | None = None,
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

    Memory: the visited set holds fingerprints only (checker/visited.py); parent links go to
    files (checker/levels.py); a level's queue keeps `keep` states in memory (default: all) and
    spills the rest. `run_dir` keeps these files, with a checkpoint at the end of a level at
    most every `checkpoint_every` seconds (checker/checkpoint.py); `resume=True` goes on from
    the checkpoint in `run_dir` (raises `CheckpointError` when it is not of this run: `identity`
    is what the caller adds to the model's own identity). Without `run_dir` the files go to a
    temporary directory, deleted at the end.
    """
    if max_states is not None and max_states < 0:
        raise ValueError(f"max_states must be >= 0, got {max_states}")
    if keep is not None and keep < 1:
        raise ValueError(f"keep must be >= 1, got {keep}")
    if resume and run_dir is None:
        raise ValueError("resume needs a run_dir")
    ident = run_identity(model, reduce, identity) if run_dir is not None else {}
    if workers > 1:
        from checker import parallel

        if parallel.available():
            return parallel.explore_parallel(model, workers=workers, max_states=max_states, progress=progress,
                                             progress_every=progress_every, reduce=reduce, run_dir=run_dir,
                                             resume=resume, identity=ident, checkpoint_every=checkpoint_every,
                                             keep=keep)
    run = RunDir(None if run_dir is None else Path(run_dir), resume, ident, checkpoint_every)
    try:
        return _explore(model, run, max_states, progress, progress_every, reduce, keep)
    finally:
        run.close()


def _explore(model: Model, run: RunDir, max_states: int | None, progress: Callable[[Progress], None] | None,
             progress_every: float, reduce: bool, keep: int | None) -> Result:
    always_props = [(p.name, p.predicate) for p in model.properties if p.kind == "always"]
    pending = [(p.name, p.predicate) for p in model.properties if p.kind == "sometimes"]
    reached: dict[str, int] = {}

    # Hot-loop aliases.
    actions = model.actions
    next_state = successor_function(model, reduce)
    fp_of = masked_fingerprint(model)
    limit = max_states if max_states is not None else -1
    type_counts: dict[type, int] = {}
    links = run.links
    spill_keep = UNLIMITED if keep is None else keep

    def new_frontier(level: int) -> Frontier:
        return Frontier(run.spill(level) if keep is not None else None, spill_keep)

    start = time.perf_counter()
    every = max(progress_every, 0.0)
    next_report = start + every
    generated = 0
    depth = 0
    earlier = 0.0  # seconds spent before a resume
    base_counts: dict[str, int] = {}
    outcome = OK
    bad_fp: Optional[int] = None
    bad_name = ""
    interrupted = False
    frontier = new_frontier(0)
    next_level = new_frontier(1)
    index = 0
    expanded = 0
    level = 0
    visited: Any = None

    def check_sometimes(state: Any, level: int) -> None:
        for item in list(pending):
            if item[1](state):
                reached[item[0]] = level
                pending.remove(item)

    def checkpoint(queue: Frontier, at: int) -> None:
        name = checkpoint_mod.frontier_name(at, 0)
        queue.save(run.path / name)
        counts = dict(base_counts)
        for k, n in type_counts.items():
            counts[k.__name__] = counts.get(k.__name__, 0) + n
        run.commit(Checkpoint(identity=run.identity, level=at, distinct=len(visited), generated=generated,
                              depth=depth, seconds=earlier + time.perf_counter() - start, reached=dict(reached),
                              frontiers=[name], worker_generated=[0], worker_counts=[counts]))

    try:
        cp = run.resumed
        if cp is not None:
            visited = run.restore(cp, workers=1, fingerprint=fp_of)
            generated, depth, earlier = cp.generated, cp.depth, cp.seconds
            base_counts = dict(cp.worker_counts[0]) if cp.worker_counts else {}
            reached.update(cp.reached)
            pending[:] = [item for item in pending if item[0] not in reached]
            frontier = Frontier.load(run.path / cp.frontiers[0])
            level = cp.level
        else:
            visited = FPSet()
            first = initial_level(model, reduce, fp_of, limit)
            generated, outcome = first.generated, first.outcome
            record_initial(first, visited, links)
            for _, s, fp in first.states:
                frontier.append((s, fp))
            if first.bad is not None:
                _, bad_fp, bad_name = first.bad
            reached.update({name: 0 for name in first.reached})
            pending[:] = [item for item in pending if item[0] not in reached]
            if outcome == OK and run.due():
                checkpoint(frontier, 0)

        while outcome == OK and len(frontier):
            gc.freeze()  # earlier levels stay alive: keep the cyclic collector from walking them
            level += 1
            next_level = new_frontier(level)
            append = next_level.append
            index = 0
            for s, pfp in frontier:
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
                    if fp in visited:
                        continue
                    if len(visited) == limit:
                        outcome = INCOMPLETE
                        break
                    visited.add(fp)
                    links.add(level, fp, pfp)
                    for name, pred in always_props:
                        if not pred(t):
                            outcome, bad_fp, bad_name = VIOLATION, fp, name
                            break
                    if outcome != OK:
                        break
                    if pending:
                        check_sometimes(t, level)
                    append((t, fp))
                if outcome != OK:
                    break
                if not expanded & 0x3FF:
                    stop.check()
                    if progress is not None:
                        now = time.perf_counter()
                        if now >= next_report:
                            next_report = now + every
                            queue = len(frontier) - index + len(next_level)
                            progress(Progress(len(visited), generated, depth, queue, earlier + now - start))
            if len(next_level) or outcome == VIOLATION:
                depth = level
            if outcome != OK:
                break
            frontier.close()
            frontier = next_level
            if len(frontier) and run.due():
                checkpoint(frontier, level)
    except KeyboardInterrupt:
        outcome, interrupted = INCOMPLETE, True
        if len(next_level) and level > depth:  # interrupted within a level: its states were discovered
            depth = level

    seconds = earlier + time.perf_counter() - start
    counts = {kind: 0 for kind in model.action_kinds}
    for k, n in base_counts.items():
        counts[k] = counts.get(k, 0) + n
    for kind_type, n in type_counts.items():
        counts[kind_type.__name__] = counts.get(kind_type.__name__, 0) + n
    violation = None
    if outcome == VIOLATION:
        assert bad_fp is not None
        violation = violation_report(model, bad_name, links.chain(bad_fp, level), fp_of, reduce)
    queue = 0 if outcome == OK else max(len(frontier) - index, 0) + len(next_level)
    frontier.close()
    next_level.close()
    never_enabled, disabled = coverage(model, counts)
    return Result(
        result=outcome,
        distinct_states=len(visited) if visited is not None else 0,
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
        digest=visited.digest if outcome == OK else None,
        visited_bytes=visited.nbytes if visited is not None else 0,
    )


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
