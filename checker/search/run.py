"""One way into the exhaustive search: `explore()` checks its arguments and picks the engine,
one process (checker/search/bfs.py) or a process pool (checker/search/parallel.py). The search
on Spark (checker/search/spark_bfs.py) is picked by `kcheck check --spark`."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from checker.search import bfs, parallel
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
