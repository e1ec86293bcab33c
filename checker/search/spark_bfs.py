"""Exhaustive breadth-first search on Spark (`kcheck check --engine spark`), level by level.

States stay in the partition where they were made; only fingerprints travel. One job a level:
the executors expand the level's states (the persisted result of the job before) and send each
successor's fingerprint, with its key and where its parent lies, to the partition that owns the
fingerprint (fingerprint mod P), the least key of each fingerprint first chosen within the task.
The owner loads its visited set from its own files in the run directory (one file of
fingerprints per partition and level), keeps the fingerprints it has not seen, writes them to a
new file, and writes, for each partition its winners' parents lie in, which successors won
(`winners-LEVEL-PARENTPART-OWNER.bin`: the parent's position there and the action's index). The
next job makes those states again where their parents are (one step each), checks every
property on them, persists them, and expands them. So a successor crosses the shuffle as two
integers instead of a pickled state, and only a new state is pickled, once, into the persisted
level. The driver keeps counts only, except while a level is small (`driver_level`): the driver
then expands it itself, writing the same visited files, since a Spark job costs about a second
however few states it has.

A level's properties are checked by the job after the one that found it (or by a job that only
does that, before the driver takes a small level over or at the state limit), and that check's
result is read before the counts of the level it expanded: a violation stops the search with the
counts of the violating level, as before.

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
INDEX = (1 << SHIFT) - 1
# A frontier of at most this many states is expanded on the driver, in this process, instead of by
# a Spark job: a job costs about a second however small its level (scheduling two stages, starting
# tasks, the shuffle's files), and one process expands 5,000 states in a fraction of that. The
# first levels and the last are that small (replication smoke: 23 of its 29).
DRIVER_LEVEL = 5_000
_MODELS: dict[ModelSpec, Any] = {}  # one model per executor process and spec


def default_partitions(sc: Any) -> int:
    """The default parallelism on a local master, where every partition's memory is this machine's
    anyway and each task costs a level tens of milliseconds; four times it on a cluster, where more
    partitions split the search's memory finer across executors."""
    from checker.walks.spark import is_local

    return sc.defaultParallelism * (1 if is_local(sc.master) else 4)


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


def _winners_path(run_dir: str, level: int, parent_part: int, owner: int) -> str:
    return os.path.join(run_dir, f"winners-{level:04d}-{parent_part:05d}-{owner:05d}.bin")


def _write_atomic(path: str, data: bytes) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _is_stat(record: Any) -> bool:
    """A level's counts riding with the states or fingerprints: a tuple whose first item names it."""
    return isinstance(record[0], str)


def _materializer(spec: ModelSpec, reduce: bool, run_dir: str, level: int, parts: int) -> Callable:
    """Partition p of the states of level - 1 -> the states of `level` whose parents lie there, made
    again by one step each (the winners files say which), and ("judged", violation, reached): the
    least key among them that breaks an invariant, and the sometimes-properties they reach."""
    def materialize(part: int, items: Any) -> Any:
        model = _model(spec)
        actions = model.actions
        step = successor_function(model, reduce)
        inv = Invariants(model)
        sometimes = [(p.name, p.predicate) for p in model.properties if p.kind == "sometimes"]
        won = array("Q")
        for owner in range(parts):
            with open(_winners_path(run_dir, level, part, owner), "rb") as f:
                won.frombytes(f.read())
        wanted = sorted(won)  # position << SHIFT | action index
        violation: Optional[tuple[int, str]] = None
        reached: set[str] = set()
        k = 0
        position = -1
        for record in items:
            if _is_stat(record):  # the level before's, already read from the job that made it
                continue
            position += 1
            if k == len(wanted) or wanted[k] >> SHIFT != position:
                continue
            pkey, s = record
            acts = list(actions(s))
            while k < len(wanted) and wanted[k] >> SHIFT == position:
                i = wanted[k] & INDEX
                k += 1
                t = step(s, acts[i])
                key = (pkey << SHIFT) | i
                if violation is None or key < violation[0]:
                    bad = inv.broken(t, s)
                    if bad is not None:
                        violation = (key, bad)
                for name, pred in sometimes:
                    if name not in reached and pred(t):
                        reached.add(name)
                yield key, t
        if k != len(wanted):
            raise RuntimeError(f"level {level}, partition {part}: {len(wanted) - k} winners name no state")
        yield ("judged", violation, sorted(reached))

    return materialize


def _expander(spec: ModelSpec, reduce: bool) -> Callable:
    """Partition p of a level's states -> (fingerprint, (key, p, position of the parent)) for each
    successor, the least key of a fingerprint only, and ("expanded", successors, counts by kind)."""
    def expand(part: int, items: Any) -> Any:
        model = _model(spec)
        actions = model.actions
        step = successor_function(model, reduce)
        fp_of = masked_fingerprint(model)
        least: dict[int, tuple[int, int]] = {}
        generated = 0
        by_type: dict[type, int] = {}
        position = -1
        for record in items:
            if _is_stat(record):
                yield 0, record
                continue
            position += 1
            key, s = record
            base = key << SHIFT
            for i, a in enumerate(actions(s)):
                t = step(s, a)
                if t is None:
                    continue
                generated += 1
                kind = a.__class__
                by_type[kind] = by_type.get(kind, 0) + 1
                fp = fp_of(t)
                held = least.get(fp)
                if held is None or base | i < held[0]:
                    least[fp] = (base | i, position << SHIFT | i)
        yield 0, ("expanded", generated, {k.__name__: n for k, n in by_type.items()})
        for fp, (key, where) in least.items():
            yield fp, (key, part, where)

    return expand


def _deduper(run_dir: str, level: int, parts: int) -> Callable:
    """Partition q of a level's fingerprints -> the ones it owns that are new (least key first),
    written to its visited file and, by the partition of their parents, to winners files; and
    ("deduplicated", new, their fingerprints' sum, the working directory) plus the counts that
    rode along."""
    def dedupe(part: int, items: Any) -> Any:
        # Imported where the task runs: the executors' checker package (a zip shipped to a cluster
        # holds no compiled module) decides between the compiled table and its pure-Python twin.
        from checker.search.visited import FPSet

        seen = FPSet()
        for at in range(level):
            path = _visited_path(run_dir, part, at)
            if os.path.exists(path):
                with open(path, "rb") as f:
                    seen.add_fps(f.read())
        best: dict[int, tuple[int, int, int]] = {}
        for fp, value in items:
            if _is_stat(value):
                yield value
                continue
            if fp in seen:
                continue
            held = best.get(fp)
            if held is None or value[0] < held[0]:
                best[fp] = value
        _write_atomic(_visited_path(run_dir, part, level), array("Q", sorted(best)).tobytes())
        won = [array("Q") for _ in range(parts)]
        for _, parent_part, where in best.values():
            won[parent_part].append(where)
        for parent_part in range(parts):
            _write_atomic(_winners_path(run_dir, level, parent_part, part), won[parent_part].tobytes())
        yield ("deduplicated", len(best), sum(best) % (1 << 64), os.getcwd())  # a working directory names an executor

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
                     run_dir: str, level: int) -> tuple[list, list]:
    """One level expanded in this process exactly as the executors expand and deduplicate it (the
    same successors, least keys, visited files, violation and counts): (stat records, next
    frontier, ordered by fingerprint so that Spark's slices of it mix keys). `seen` (an FPSet of
    every state found so far) takes the level's new fingerprints."""
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
    stats = [("expanded", generated, counts), ("deduplicated", len(best), sum(best) % (1 << 64), None),
             ("judged", violation, reached)]
    return stats, [best[fp] for fp in sorted(best)]


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
    indices = [(key >> (SHIFT * k)) & INDEX for k in range(level)]
    indices.reverse()
    step = successor_function(model, reduce)
    state = initial_states(model, reduce)[key >> (SHIFT * level)]
    trace: list[tuple[Any, Any]] = [(None, state)]
    for i in indices:
        a = list(model.actions(state))[i]
        state = step(state, a)
        trace.append((a, state))
    return trace


def _records(stats: list, kind: str) -> list:
    return [r for r in stats if r[0] == kind]


def _least(judged: list) -> tuple[Optional[tuple[int, str]], list[str]]:
    """The judged records of one level: the least violating key, and every sometimes-property reached."""
    least: Optional[tuple[int, str]] = None
    names: set[str] = set()
    for _, violation, reached in judged:
        if violation is not None and (least is None or violation[0] < least[0]):
            least = violation
        names.update(reached)
    return least, sorted(names)


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

    model = spec.build()
    ship_packages(sc, spec, sc.master)
    parts = max(1, partitions or default_partitions(sc))
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
    held = None  # the persisted states of level - 1, when Spark holds them (the level's winners on files)
    on_driver: Optional[list] = None  # the states of level - 1, checked, when this process holds them
    seen = None  # with them, every fingerprint found so far
    executors: set[str] = set()
    levels: list[tuple[int, int, int, float]] = []  # (level, new states, generated, seconds) for --out
    kinds_by_level: list[tuple[int, str, int]] = []

    def judge(records: list, at: int) -> bool:
        """Take in the judged records of level `at`; True on a violation."""
        nonlocal outcome, bad
        least, names = _least(records)
        for name in names:
            reached.setdefault(name, at)
        if least is not None:
            outcome, bad = VIOLATION, (least[0], least[1], at)
        return least is not None

    def made_here(at: int) -> tuple[list, list]:
        """The states of level `at` made from `held` by one job, to this process: (states, judged records)."""
        got = held.mapPartitionsWithIndex(_materializer(spec, reduce, str(where), at, parts)).collect()
        return [r for r in got if not _is_stat(r)], [r for r in got if _is_stat(r)]

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
                    if on_driver is None:  # a small level after large ones: its states come here
                        on_driver, judged = made_here(level - 1)
                        held.unpersist()
                        held = None
                        if judge(judged, level - 1):
                            break
                        seen = _visited_so_far(str(where), parts, level)
                    elif seen is None:
                        seen = _visited_so_far(str(where), parts, level)
                    stats, on_driver = _level_on_driver(model, step, fp_of, on_driver, seen, parts, str(where), level)
                    judged_now = _records(stats, "judged")
                else:
                    if on_driver is not None:  # a large level: its states go to the executors
                        states = sc.parallelize(on_driver, parts)
                        on_driver, seen = None, None
                    else:
                        states = held.mapPartitionsWithIndex(
                            _materializer(spec, reduce, str(where), level - 1, parts), preservesPartitioning=True)
                    states.persist(StorageLevel.MEMORY_AND_DISK)
                    candidates = states.mapPartitionsWithIndex(_expander(spec, reduce)).partitionBy(parts, _owner)
                    stats = candidates.mapPartitionsWithIndex(_deduper(str(where), level, parts)).collect()
                    if held is not None:
                        held.unpersist()
                    held = states
                    # The states of level - 1 were checked by this job: their verdict comes first.
                    if judge(_records(stats, "judged"), level - 1):
                        break
                    judged_now = []
                new = 0
                level_generated = 0
                level_kinds: dict[str, int] = {}
                for _, gen, kinds in _records(stats, "expanded"):
                    generated += gen
                    level_generated += gen
                    for k, n in kinds.items():
                        counts[k] = counts.get(k, 0) + n
                        level_kinds[k] = level_kinds.get(k, 0) + n
                for _, fresh, fsum, where_run in _records(stats, "deduplicated"):
                    if where_run is not None:
                        executors.add(where_run)
                    new += fresh
                    digest = (digest + fsum) % (1 << 64)
                levels.append((level, new, level_generated, time.perf_counter() - began))
                kinds_by_level.extend((level, k, n) for k, n in sorted(level_kinds.items()))
                if new:
                    depth = level
                distinct += new
                size, expanded = new, size
                if judge(judged_now, level):
                    break
                if limit >= 0 and distinct > limit:
                    distinct -= new
                    if held is not None and new:  # the level's states are checked before the search stops
                        _, judged = made_here(level)
                        if judge(judged, level):
                            distinct += new
                            break
                    outcome, queue = INCOMPLETE, expanded
                    break
                if progress is not None:
                    seconds = time.perf_counter() - start
                    progress(Progress(distinct, generated, depth, size, seconds))
            stop.check()
            if out is not None:
                _write_levels(out, levels, kinds_by_level)
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
        if held is not None:
            try:
                held.unpersist()
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
