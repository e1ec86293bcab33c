"""One way into the exhaustive search: `explore()` checks its arguments and picks the engine,
one process (checker/search/bfs.py) or a process pool (checker/search/parallel.py). The search
on Spark (checker/search/spark_bfs.py) is picked by `kcheck check --spark`."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from checker.search import bfs, parallel, por as por_search
from checker.search.checkpoint import RunDir, run_identity
from checker.search.common import Progress, Result
from model.interface import Model


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
    por: bool = False,
) -> Result:
    """Explore every state reachable from `model.init_states()`, breadth first.

    Stops at the first state that breaks an `always` property ("violation"), when a new state
    would exceed `max_states` distinct states ("incomplete"), on KeyboardInterrupt
    ("incomplete", `interrupted=True`), or when the space is exhausted ("ok").
    `progress` is called with a `Progress` about every `progress_every` seconds.
    `workers` > 1 runs the search on that many processes (`checker.search.parallel`): the same
    counts, coverage and counterexample length, in less time on as many cores.
    With `reduce` (the default) a model's stutter reduction (`model.reduce`) is applied to every
    state: fewer states, every property value still met, counterexamples no longer (in steps of
    the reduced model). `reduce=False` explores every state `next_state` gives.

    Memory: the visited set holds fingerprints only (checker/search/visited.py); parent links go to
    files (checker/search/levels.py); a level's queue keeps `keep` states in memory (default: all) and
    spills the rest. `run_dir` keeps these files, with a checkpoint at the end of a level at
    most every `checkpoint_every` seconds (checker/search/checkpoint.py); `resume=True` goes on from
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
    if por:
        return _explore_reduced(model, max_states, progress, progress_every, reduce, keep, workers, run_dir)
    ident = run_identity(model, reduce, identity) if run_dir is not None else {}
    if workers > 1:
        if parallel.available():
            return parallel.explore_parallel(model, workers=workers, max_states=max_states, progress=progress,
                                             progress_every=progress_every, reduce=reduce, run_dir=run_dir,
                                             resume=resume, identity=ident, checkpoint_every=checkpoint_every,
                                             keep=keep)
    run = RunDir(None if run_dir is None else Path(run_dir), resume, ident, checkpoint_every)
    try:
        return bfs.search(model, run, max_states, progress, progress_every, reduce, keep)
    finally:
        run.close()


def _explore_reduced(model: Model, max_states: int | None, progress: Callable[[Progress], None] | None,
                     progress_every: float, reduce: bool, keep: int | None, workers: int,
                     run_dir: str | Path | None) -> Result:
    """The search with partial-order reduction (checker/search/por.py), one process, no checkpoints.
    Its "ok" holds for every invariant; a sometimes-property it left unreached, or an action kind
    it never saw enabled, is a claim about states it did not visit (unless no state took an ample
    set: then it was the full search): the full search settles it, and its result is the one
    returned (with `por["settled_by_full_search"]` naming why)."""
    if workers > 1 or run_dir is not None:
        raise ValueError("partial-order reduction runs in one process, without a run directory")
    run = RunDir(None, False, {}, 60.0)
    try:
        r = por_search.search(model, run, max_states, progress, progress_every, reduce, keep)
    finally:
        run.close()
    if r.result != "ok" or not (r.unreached or r.never_enabled) or not (r.por or {}).get("reduced"):
        return r  # nothing to settle, or no state took an ample set: the reduced search was the full one
    why = [f"sometimes-property {name} unreached" for name in r.unreached]
    why += [f"action {kind} never enabled" for kind in r.never_enabled]
    run = RunDir(None, False, {}, 60.0)
    try:
        full = bfs.search(model, run, max_states, progress, progress_every, reduce, keep)
    finally:
        run.close()
    full.seconds += r.seconds  # the whole run, both searches
    full.por = {**(r.por or {}), "reduced_distinct_states": r.distinct_states, "reduced_seconds": r.seconds,
                "settled_by_full_search": why}
    return full
