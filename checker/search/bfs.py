"""Exhaustive breadth-first exploration of a model (Stateright's `bfs.rs`, TLC's BFS mode).

The search keeps a set of 64-bit fingerprints (checker/search/visited.py, about 15 bytes a state),
writes each new state's (fingerprint, parent fingerprint) to its level's link file
(checker/search/levels.py), and queues the states of the current and the next level
(checker/search/frontier.py, in memory up to a bound, then on disk). Every newly discovered state is
checked against every `always` property; the first violation stops the search and, because the
search is breadth-first, its trace is a shortest one. The trace is rebuilt afterwards from the
link files by re-expanding each state on the path, so no action is stored per state. A run
directory keeps these files and checkpoints between levels, so a killed search resumes
(checker/search/checkpoint.py).

Counting conventions (TLC's): `states_generated` counts the initial states plus every
successor that `next_state` returned (a `None` is a no-op and counts nowhere);
`distinct_states` counts distinct fingerprints; `depth` is the largest BFS level reached
(the initial states are level 0); `action_counts[kind]` counts the transitions taken by
actions of that kind (an action whose `next_state` is `None` was not enabled).
"""
from __future__ import annotations

import time
from typing import Any, Callable, Optional

from checker import stop
from checker.fingerprint import masked_fingerprint
from checker.search import checkpoint as checkpoint_mod
from checker.search.checkpoint import Checkpoint, RunDir
from checker.search.common import (INCOMPLETE, OK, VIOLATION, Invariants, Progress, Result, collector_paused, coverage,
                                   initial_level, record_initial, reduction_text, successor_function,
                                   violation_report)
from checker.search.frontier import UNLIMITED, Frontier
from checker.search.visited import FPSet
from model.interface import Model


@collector_paused
def search(model: Model, run: RunDir, max_states: int | None, progress: Callable[[Progress], None] | None,
             progress_every: float, reduce: bool, keep: int | None) -> Result:
    broken = Invariants(model).broken
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
                    name = broken(t, s)
                    if name is not None:
                        outcome, bad_fp, bad_name = VIOLATION, fp, name
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
