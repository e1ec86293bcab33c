"""Exhaustive breadth-first search on Spark (`kcheck check --engine spark`), level by level.

Each level is one shuffle. The executors expand the current level's states; every successor
travels, keyed by its fingerprint, to the partition that owns that fingerprint (fingerprint mod
P). That partition loads its visited set from its own files in the run directory (one file of
fingerprints per partition and level), keeps the successors it has not seen, writes them to a
new file, and checks every property on them. The driver keeps counts only, except while a level
is small (`driver_level`): the driver then expands it itself, writing the same files, since a
Spark job costs about a second however few states it has.

Order: each state carries a key, the path of action indices that reached it, packed in one
integer (`key * 2**16 + action index`, an initial state's key is its index). Of the successors
with one fingerprint the one with the least key is kept, and the least key is the first path
the one-process search (checker/search/bfs.py) meets. So the states found, their keys, the first
violation (the least key among the level's violating states) and its trace, rebuilt by
replaying the key's action indices, are those of the one-process search, on any number of
partitions and executors. On a violation the counts are those of the whole level, where the
one-process search stops at the violating state.

The run directory must be reachable under the same path from every executor: any directory in
local mode, a shared file system on a cluster of several machines.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import time
from array import array
from pathlib import Path
from typing import Any, Callable, Optional

from checker import stop
from checker.search.common import INCOMPLETE, OK, VIOLATION, Progress, Result, coverage, initial_level, initial_states
from checker.fingerprint import masked_fingerprint
from checker.search.common import Invariants, reduction_text, successor_function
from checker.walks.walker import ModelSpec

SHIFT = 16  # bits of an action index in a key: up to 65,536 actions a state
# A frontier of at most this many states is expanded on the driver, in this process, instead of by
# a Spark job: a job costs about a second however small its level (scheduling two stages, starting
# tasks, the shuffle's files), and one process expands 5,000 states in a fraction of that. The
# first levels and the last are that small (replication smoke: 23 of its 29).
DRIVER_LEVEL = 5_000
_MODELS: dict[ModelSpec, Any] = {}  # one model per executor process and spec


def _judge(found: Any, broken: Any, sometimes: Any) -> tuple[Optional[tuple[int, str]], list[str]]:
    """A level's new states, as (key, state): the broken invariant of the least key, if any, and the
    sometimes-properties they reach, sorted."""
    violation: Optional[tuple[int, str]] = None
    reached: set[str] = set()
    for key, t in found:
        if violation is None or key < violation[0]:
            bad = broken(t)
            if bad is not None:
                violation = (key, bad)
        for name, pred in sometimes:
            if name not in reached and pred(t):
                reached.add(name)
    return violation, sorted(reached)


def _model(spec: ModelSpec) -> Any:
    """The task's model, built once per process; its plugin files are checked, and put in force
    alone (a reused Python worker may hold another job's), in every task."""
    from checker.walks.spark_plugins import activate_on_executor

    activate_on_executor(spec.plugins)
    if spec not in _MODELS:
        _MODELS[spec] = spec.build()
    return _MODELS[spec]


def _owner(fp: int) -> int:
    """The partitioner: Spark takes this mod P."""
    return fp


def _visited_path(run_dir: str, part: int, level: int) -> str:
    return os.path.join(run_dir, f"visited-{part:05d}-{level:04d}.bin")


def _write_atomic(path: str, data: bytes) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _expander(spec: ModelSpec, reduce: bool) -> Callable:
    def expand(items: Any) -> Any:
        model = _model(spec)
        actions = model.actions
        step = successor_function(model, reduce)
        fp_of = masked_fingerprint(model)
        for key, s in items:
            base = key << SHIFT
            for i, a in enumerate(actions(s)):
                t = step(s, a)
                if t is not None:
                    yield fp_of(t), (base | i, a.__class__.__name__, t)

    return expand


def _deduper(spec: ModelSpec, run_dir: str, level: int) -> Callable:
    def dedupe(part: int, items: Any) -> Any:
        # Imported where the task runs: the executors' checker package (a zip shipped to a cluster
        # holds no compiled module) decides between the compiled table and its pure-Python twin.
        from checker.search.visited import FPSet

        model = _model(spec)
        broken = Invariants(model).broken  # no parent here: every invariant on every new state
        sometimes = [(p.name, p.predicate) for p in model.properties if p.kind == "sometimes"]
        seen = FPSet()
        for at in range(level):
            path = _visited_path(run_dir, part, at)
            if os.path.exists(path):
                with open(path, "rb") as f:
                    seen.add_fps(f.read())
        best: dict[int, tuple[int, Any]] = {}
        generated = 0
        counts: dict[str, int] = {}
        for fp, (key, kind, t) in items:
            generated += 1
            counts[kind] = counts.get(kind, 0) + 1
            if fp in seen:
                continue
            held = best.get(fp)
            if held is None or key < held[0]:
                best[fp] = (key, t)
        fresh = array("Q", sorted(best))
        _write_atomic(_visited_path(run_dir, part, level), fresh.tobytes())
        violation, reached = _judge(best.values(), broken, sometimes)
        yield ("stat", (generated, counts, len(best), sum(best) % (1 << 64), violation, reached,
                        os.getcwd()))  # an executor's working directory names it
        for key, t in best.values():
            yield ("new", (key, t))

    return dedupe


def _write_levels(out: tuple[str, str], levels: list, kinds: list) -> None:
    """--out: the levels and (level, action kind) counts, written by Spark's Parquet writer."""
    from pyspark.sql import SparkSession

    from checker.walks.results import ACTIONS, LEVELS, write_on_spark

    folder, rid = out
    session = SparkSession.builder.getOrCreate()
    write_on_spark(session, os.path.join(folder, "levels"), LEVELS,
                   [(rid, level, new, gen, round(seconds, 3)) for level, new, gen, seconds in levels])
    write_on_spark(session, os.path.join(folder, "actions"), ACTIONS, [(rid, level, k, n) for level, k, n in kinds])


def _level_on_driver(model: Any, step: Callable, fp_of: Callable, frontier: list, seen: Any, parts: int,
                     run_dir: str, level: int) -> tuple[tuple, list]:
    """One level expanded in this process exactly as the executors expand and deduplicate it (the
    same successors, least keys, visited files, violation and counts): (stats, next frontier).
    `seen` (an FPSet of every state found so far) takes the level's new fingerprints."""
    broken = Invariants(model).broken
    sometimes = [(p.name, p.predicate) for p in model.properties if p.kind == "sometimes"]
    actions = model.actions
    best: dict[int, tuple[int, Any]] = {}
    counts: dict[str, int] = {}
    generated = 0
    for key, s in frontier:
        base = key << SHIFT
        for i, a in enumerate(actions(s)):
            t = step(s, a)
            if t is None:
                continue
            generated += 1
            kind = a.__class__.__name__
            counts[kind] = counts.get(kind, 0) + 1
            fp = fp_of(t)
            if fp in seen:
                continue
            held = best.get(fp)
            if held is None or (base | i) < held[0]:
                best[fp] = (base | i, t)
    owned: list[list[int]] = [[] for _ in range(parts)]
    for fp in best:
        owned[fp % parts].append(fp)
        seen.add(fp)
    for part in range(parts):
        _write_atomic(_visited_path(run_dir, part, level), array("Q", sorted(owned[part])).tobytes())
    violation, reached = _judge(best.values(), broken, sometimes)
    stats = (generated, counts, len(best), sum(best) % (1 << 64), violation, reached, None)
    return stats, list(best.values())


def _visited_so_far(run_dir: str, parts: int, levels: int) -> Any:
    """Every fingerprint the search has found, from the visited files of levels 0 .. levels - 1."""
    from checker.search.visited import FPSet

    seen = FPSet()
    for part in range(parts):
        for at in range(levels):
            with open(_visited_path(run_dir, part, at), "rb") as f:
                seen.add_fps(f.read())
    return seen


def trace_of(model: Any, key: int, level: int, reduce: bool = True) -> list[tuple[Any, Any]]:
    """The trace a key packs: its initial state, then `level` action indices."""
    indices = [(key >> (SHIFT * k)) & ((1 << SHIFT) - 1) for k in range(level)]
    indices.reverse()
    step = successor_function(model, reduce)
    state = initial_states(model, reduce)[key >> (SHIFT * level)]
    trace: list[tuple[Any, Any]] = [(None, state)]
    for i in indices:
        a = list(model.actions(state))[i]
        state = step(state, a)
        trace.append((a, state))
    return trace


def explore_spark(sc: Any, spec: ModelSpec, *, max_states: int | None = None, partitions: int | None = None,
                  run_dir: str | Path | None = None, reduce: bool = True,
                  progress: Callable[[Progress], None] | None = None, out: tuple[str, str] | None = None,
                  driver_level: int = DRIVER_LEVEL) -> Result:
    """`checker.search.run.explore` on Spark: the same states, counts, coverage and shortest counterexample.
    `out`: (folder, run id): a row per level and per (level, action kind) is written there as Parquet
    by Spark (checker/walks/results.py), for the levels the search finished. `driver_level`: a
    frontier of at most this many states is expanded here rather than by a Spark job (the same
    result; 0: every level on Spark)."""
    from pyspark import StorageLevel

    from checker.walks.spark import SparkUnavailable, job_failure, ship_packages

    tables = out  # `out` names each level's RDD below
    model = spec.build()
    ship_packages(sc, spec, sc.master)
    parts = max(1, partitions or sc.defaultParallelism * 4)
    temporary = run_dir is None
    where = Path(tempfile.mkdtemp(prefix="kcheck-spark-bfs-") if run_dir is None else run_dir)
    where.mkdir(parents=True, exist_ok=True)
    if any(where.glob("visited-*.bin")):
        from checker.search.checkpoint import CheckpointError

        raise CheckpointError(f"--run-dir {where}: it holds another search's files; give an empty directory")
    start = time.perf_counter()
    fp_of = masked_fingerprint(model)
    sometimes = [p.name for p in model.properties if p.kind == "sometimes"]
    reached: dict[str, int] = {}
    counts: dict[str, int] = {k: 0 for k in model.action_kinds}
    limit = max_states if max_states is not None else -1
    outcome, interrupted = OK, False
    bad: Optional[tuple[int, str, int]] = None  # (key, invariant, level)
    generated = distinct = digest = depth = queue = 0
    level = 0
    frontier = None  # the frontier as an RDD, when Spark holds it
    kept = None  # the persisted level `frontier` is computed from (dropped once the next level is done)
    on_driver: Optional[list] = None  # the frontier as a list, when this process holds it
    seen = None  # with it, every fingerprint found so far
    executors: set[str] = set()
    levels: list[tuple[int, int, int, float]] = []  # (level, new states, generated, seconds) for --out
    kinds_by_level: list[tuple[int, str, int]] = []
    try:
        # A stop cancels the running job from a helper thread (its action then fails) and is
        # raised at the next check, never in the middle of a Py4J call.
        with stop.cancelling(sc.cancelAllJobs, defer=True):
            # Level 0 on the driver.
            first = initial_level(model, reduce, fp_of, limit)
            generated, outcome = first.generated, first.outcome
            fps = [fp for _, _, fp in first.states]
            firsts = [(index, s) for index, s, _ in first.states]
            if first.bad is not None:
                index, fp, name = first.bad
                bad = (index, name, 0)
                fps.append(fp)
            reached.update({name: 0 for name in first.reached})
            distinct, digest = len(fps), sum(fps) % (1 << 64)
            levels.append((0, distinct, generated, time.perf_counter() - start))
            for part in range(parts):
                _write_atomic(_visited_path(str(where), part, 0),
                              array("Q", sorted(fp for fp in fps if fp % parts == part)).tobytes())
            on_driver = firsts
            size = len(firsts)
            step = successor_function(model, reduce)
            while outcome == OK and size:
                stop.check()
                level += 1
                began = time.perf_counter()
                if size <= driver_level:
                    if on_driver is None:  # a small level after large ones: the frontier comes here
                        on_driver = frontier.collect()
                        kept.unpersist()
                        kept = frontier = None
                        seen = _visited_so_far(str(where), parts, level)
                    elif seen is None:
                        seen = _visited_so_far(str(where), parts, level)
                    stat, on_driver = _level_on_driver(model, step, fp_of, on_driver, seen, parts, str(where), level)
                    stats = [stat]
                else:
                    if on_driver is not None:  # a large level: the frontier goes to the executors
                        frontier = sc.parallelize(on_driver, parts)
                        on_driver, seen = None, None
                    candidates = frontier.mapPartitions(_expander(spec, reduce)).partitionBy(parts, _owner)
                    out = candidates.mapPartitionsWithIndex(_deduper(spec, str(where), level))
                    out.persist(StorageLevel.MEMORY_AND_DISK)
                    # One job a level: the next level's frontier is read from this persisted result
                    # by the next level's job, and the level before it is dropped only now.
                    stats = out.filter(lambda r: r[0] == "stat").map(lambda r: r[1]).collect()
                    if kept is not None:
                        kept.unpersist()
                    kept = out
                    frontier = out.filter(lambda r: r[0] == "new").map(lambda r: r[1])
                new = 0
                least: Optional[tuple[int, str]] = None
                level_generated = 0
                level_kinds: dict[str, int] = {}
                for gen, kinds, fresh, fsum, violation, names, where_run in stats:
                    if where_run is not None:
                        executors.add(where_run)
                    generated += gen
                    level_generated += gen
                    for k, n in kinds.items():
                        counts[k] = counts.get(k, 0) + n
                        level_kinds[k] = level_kinds.get(k, 0) + n
                    new += fresh
                    digest = (digest + fsum) % (1 << 64)
                    if violation is not None and (least is None or violation[0] < least[0]):
                        least = violation
                    for name in names:
                        reached.setdefault(name, level)
                levels.append((level, new, level_generated, time.perf_counter() - began))
                kinds_by_level.extend((level, k, n) for k, n in sorted(level_kinds.items()))
                if new:
                    depth = level
                if least is not None:
                    distinct += new
                    outcome, bad = VIOLATION, (least[0], least[1], level)
                elif limit >= 0 and distinct + new > limit:
                    outcome, queue = INCOMPLETE, size
                else:
                    distinct += new
                size = new
                if progress is not None:
                    seconds = time.perf_counter() - start
                    progress(Progress(distinct, generated, depth, size, seconds))
            stop.check()
            if tables is not None:
                _write_levels(tables, levels, kinds_by_level)
    except KeyboardInterrupt:
        outcome, interrupted = INCOMPLETE, True
    except Exception as e:  # Py4JJavaError: a task failed; its Python error is in the text
        if stop.requested():  # the job a stop cancelled: the level did not finish and is not counted
            outcome, interrupted = INCOMPLETE, True
        elif type(e).__name__ in ("Py4JJavaError", "PythonException"):
            raise SparkUnavailable(job_failure(e)) from None
        else:
            raise
    finally:
        if kept is not None:
            try:
                kept.unpersist()
            except Exception:  # noqa: BLE001 - the context may be gone after Ctrl-C
                pass
        if temporary:
            shutil.rmtree(where, ignore_errors=True)
    violation = None
    if bad is not None:
        key, name, at = bad
        descriptions = {p.name: p.description for p in model.properties}
        violation = {"invariant": name, "description": descriptions.get(name, ""),
                     "trace": trace_of(model, key, at, reduce)}
    never_enabled, disabled = coverage(model, counts)
    return Result(
        result=outcome,
        distinct_states=distinct,
        states_generated=generated,
        depth=depth,
        seconds=time.perf_counter() - start,
        unreached=[n for n in sometimes if n not in reached],
        never_enabled=never_enabled,
        disabled=disabled,
        action_counts=counts,
        violation=violation,
        interrupted=interrupted,
        max_states=max_states,
        queue=0 if outcome == OK else queue,
        reached=reached,
        workers=max(1, len(executors)),  # executors that ran the search's tasks
        reduction=reduction_text(model, reduce),
        digest=digest if outcome == OK else None,
    )
