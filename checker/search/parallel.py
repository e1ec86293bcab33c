"""Breadth-first exploration on several processes: states stay where they were generated, only
fingerprints travel.

Each worker process (forked, so it shares the model without pickling it) holds part of the
current BFS level and expands it in chunks. For every chunk it sends the fingerprints of the
successors and of their parents to the coordinator, which owns the one fingerprint -> parent
dict, and gets back a bitmap of the successors that are new. The worker keeps only the new ones
(its part of the next level) and checks every property on them; the results ride on its next
message. A level ends when every worker has sent its last chunk, so every state of level L is
checked before any of level L+1 is generated: the first violation is still a shortest one.

The coordinator answers the workers in a fixed round-robin order and the chunks are cut the same
way on every run, so distinct-state counts, depth, coverage and the counterexample are the same
on every run with the same number of workers. Fingerprints are the ones of `checker.search.run.explore`, read
as unsigned 64-bit ints.
"""
from __future__ import annotations

import ctypes
import multiprocessing
import os
import pickle
import signal
import time
import traceback
from array import array
from dataclasses import dataclass
from itertools import islice
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Callable, Optional

from checker.search import checkpoint as checkpoint_mod
from checker import stop
from checker.search.common import (INCOMPLETE, OK, VIOLATION, Invariants, Progress, Result, collector_paused, coverage,
                                   initial_level, record_initial, reduction_text, successor_function,
                                   violation_report)
from checker.fingerprint import masked_fingerprint
from checker.search.checkpoint import Checkpoint, RunDir
from checker.search.frontier import UNLIMITED, Frontier
from checker.search.visited import FPSet
from model.interface import Model

CHUNK = 2048  # frontier states per message: large enough to amortise a round trip


def available() -> bool:
    """Forking is what lets workers share the model; where it is missing, run on one process."""
    return "fork" in multiprocessing.get_all_start_methods()


def explore_parallel(
    model: Model,
    *,
    workers: int,
    max_states: int | None = None,
    progress: Callable[[Progress], None] | None = None,
    progress_every: float = 5.0,
    chunk: int = CHUNK,
    reduce: bool = True,
    run_dir: str | Path | None = None,
    resume: bool = False,
    identity: dict[str, Any] | None = None,
    checkpoint_every: float = 60.0,
    keep: int | None = None,
) -> Result:
    """`checker.search.run.explore` on `workers` processes; the same result apart from seconds."""
    run = RunDir(None if run_dir is None else Path(run_dir), resume, identity, checkpoint_every)
    try:
        return _explore_parallel(model, run, workers, max_states, progress, progress_every, chunk, reduce, keep)
    finally:
        run.close()


@collector_paused
def _explore_parallel(model: Model, run: RunDir, workers: int, max_states: int | None,
                      progress: Callable[[Progress], None] | None, progress_every: float, chunk: int,
                      reduce: bool, keep: int | None) -> Result:
    fp_of = masked_fingerprint(model)
    sometimes_names = [p.name for p in model.properties if p.kind == "sometimes"]
    reached: dict[str, int] = {}
    limit = max_states if max_states is not None else -1
    start = time.perf_counter()
    earlier = 0.0
    outcome = OK
    bad_fp: Optional[int] = None
    bad_name = ""
    bad_level = 0
    generated = 0
    interrupted = False
    links = run.links
    worker_generated = [0] * workers
    worker_counts: list[dict[str, int]] = [{} for _ in range(workers)]
    depth = 0
    level = 0

    # Level 0 in the coordinator, dealt round-robin to the workers; or the checkpoint's queues.
    shares: list[Any] = [[] for _ in range(workers)]
    count = 0
    cp = run.resumed
    if cp is not None:
        visited = run.restore(cp, workers, fingerprint=fp_of)
        generated, depth, earlier, level = cp.generated, cp.depth, cp.seconds, cp.level
        worker_generated = list(cp.worker_generated)
        worker_counts = [dict(c) for c in cp.worker_counts]
        reached.update(cp.reached)
        shares = [run.path / name for name in cp.frontiers]
        count = 1
    else:
        visited = FPSet()
        first = initial_level(model, reduce, fp_of, limit)
        generated, outcome = first.generated, first.outcome
        record_initial(first, visited, links)
        for _, s, fp in first.states:
            shares[count % workers].append((s, fp))
            count += 1
        if first.bad is not None:
            _, bad_fp, bad_name = first.bad
        reached.update({name: 0 for name in first.reached})

    queue = 0
    conns: list[Connection] = []
    procs: list[Any] = []
    if outcome == OK and count:
        ctx = multiprocessing.get_context("fork")
        for w in range(workers):
            parent_end, child_end = ctx.Pipe()
            # The fork copies the coordinator's ends of this and earlier pipes; the worker closes
            # them, else it never sees end of file when the coordinator dies.
            foreign = (*conns, parent_end)
            start_with = _Start(shares[w], run.path, keep, worker_generated[w], worker_counts[w], set(reached))
            proc = ctx.Process(target=_worker, args=(model, child_end, start_with, fp_of, chunk, reduce, w),
                               kwargs={"foreign": foreign, "parent": os.getpid()}, daemon=True)
            proc.start()
            child_end.close()
            conns.append(parent_end)
            procs.append(proc)
        shares = []
        if cp is None and run.due():
            _checkpoint(run, conns, 0, visited, generated, depth, earlier + time.perf_counter() - start, reached,
                        worker_generated, worker_counts)
    every = max(progress_every, 0.0)
    next_report = start + every
    try:
        while outcome == OK and conns:
            level += 1
            for c in conns:
                c.send(("level", level))
            active = list(range(workers))
            remaining = [0] * workers
            new_in_level = 0
            while active and outcome == OK:
                for w in list(active):
                    stop.check()
                    msg = conns[w].recv()
                    kind = msg[0]
                    if kind == "error":
                        raise _failure(f"worker {w} failed", msg[1])
                    _, fps_bytes, pfps_bytes, violation, newly, gen, counts, left = msg
                    worker_generated[w], worker_counts[w], remaining[w] = gen, counts, left
                    for name, at in newly:
                        if name not in reached or at < reached[name]:
                            reached[name] = at
                    if violation is not None and outcome == OK:
                        outcome, bad_fp, bad_name, bad_level = VIOLATION, violation[0], violation[1], level
                        depth = level
                    if kind == "done":
                        active.remove(w)
                        continue
                    if outcome != OK:
                        continue  # the worker waits for an answer that will not come; it is stopped below
                    mask, pairs, full = visited.insert_batch(fps_bytes, pfps_bytes,
                                                             limit - len(visited) if limit >= 0 else -1)
                    links.add_pairs(level, pairs)
                    if full:
                        outcome = INCOMPLETE
                        break
                    conns[w].send_bytes(mask)
                    if pairs:
                        new_in_level += len(pairs) // 16
                        depth = level
                    if progress is not None:
                        now = time.perf_counter()
                        if now >= next_report:
                            next_report = now + every
                            progress(Progress(len(visited), generated + sum(worker_generated), depth,
                                              sum(remaining), earlier + now - start))
            queue = sum(remaining)
            if outcome == OK and not new_in_level:
                break  # the last level found nothing new: the space is exhausted
            if outcome == OK:
                _balance(conns, remaining)
                if run.due():
                    _checkpoint(run, conns, level, visited, generated, depth, earlier + time.perf_counter() - start,
                                reached, worker_generated, worker_counts)
    except KeyboardInterrupt:
        outcome, interrupted = INCOMPLETE, True
    finally:
        _stop(conns, procs, graceful=outcome == OK and not interrupted)
    seconds = earlier + time.perf_counter() - start

    counts = {kind: 0 for kind in model.action_kinds}
    for wc in worker_counts:
        for kind, n in wc.items():
            counts[kind] = counts.get(kind, 0) + n
    never_enabled, disabled = coverage(model, counts)
    violation = None
    if outcome == VIOLATION:
        assert bad_fp is not None
        violation = violation_report(model, bad_name, links.chain(bad_fp, bad_level), fp_of, reduce)
    return Result(
        result=outcome,
        distinct_states=len(visited),
        states_generated=generated + sum(worker_generated),
        depth=depth,
        seconds=seconds,
        unreached=[name for name in sometimes_names if name not in reached],
        never_enabled=never_enabled,
        disabled=disabled,
        action_counts=counts,
        violation=violation,
        interrupted=interrupted,
        max_states=max_states,
        queue=0 if outcome == OK else queue,
        reached=reached,
        workers=workers,
        reduction=reduction_text(model, reduce),
        digest=visited.digest if outcome == OK else None,
        visited_bytes=visited.nbytes,
    )


def _checkpoint(run: RunDir, conns: list[Connection], level: int, visited: Any, generated: int, depth: int,
                seconds: float, reached: dict[str, int], worker_generated: list[int],
                worker_counts: list[dict[str, int]]) -> None:
    """Between two levels: every worker saves its queue, then the checkpoint names the files."""
    names = [checkpoint_mod.frontier_name(level, w) for w in range(len(conns))]
    for c, name in zip(conns, names):
        c.send(("save", str(run.path / name)))
    for c in conns:
        reply = c.recv()
        if reply[0] == "error":
            raise _failure("a worker failed", reply[1])
    run.commit(Checkpoint(identity=run.identity, level=level, distinct=len(visited), generated=generated,
                          depth=depth, seconds=seconds, reached=dict(reached), frontiers=names,
                          worker_generated=list(worker_generated), worker_counts=[dict(c) for c in worker_counts]))


def _balance(conns: list[Connection], sizes: list[int]) -> None:
    """Even out the workers' shares of the next level: new states stay with the worker that found
    them, so without this one worker would keep the whole space (all of it descends from one
    initial state). Only the excess moves, pickled, from the largest shares to the smallest."""
    target = sum(sizes) // len(sizes)
    if max(sizes) - min(sizes) <= max(64, target // 10):
        return
    donors = [(w, n - target) for w, n in enumerate(sizes) if n > target + 1]
    takers = [(w, target - n) for w, n in enumerate(sizes) if n < target]
    for w, excess in donors:
        while excess > 0 and takers:
            t, need = takers[0]
            moved = min(excess, need)
            conns[w].send(("give", moved))
            payload = conns[w].recv_bytes()
            conns[t].send(("take",))
            conns[t].send_bytes(payload)
            sizes[w] -= moved
            sizes[t] += moved
            excess -= moved
            if moved == need:
                takers.pop(0)
            else:
                takers[0] = (t, need - moved)


def _stop(conns: list[Connection], procs: list[Any], graceful: bool) -> None:
    """Workers between levels wait for a command: tell them to stop. Mid-level (a violation, the
    state limit, Ctrl-C, a failed worker) some wait for an answer instead: terminate them."""
    if graceful:
        for c in conns:
            try:
                c.send(("stop",))
            except (OSError, ValueError):
                pass
    for proc in procs:
        if graceful:
            proc.join(timeout=5)
        if proc.is_alive():
            proc.terminate()
        proc.join()
    for c in conns:
        c.close()


def die_with_parent(parent: int) -> None:
    """On Linux, have the kernel send SIGTERM when the coordinator dies (even by SIGKILL), so a
    worker busy expanding a chunk does not run on; elsewhere end of file on the pipe ends it."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # it died before prctl took effect
        os._exit(0)


@dataclass
class _Start:
    """What a worker starts from: its share of level 0 (or the file of its saved queue), where to
    spill, how many states to keep in memory, and its counts and reached properties so far."""

    share: Any  # list of (state, fingerprint), or the Path of a saved frontier
    run_path: Path
    keep: Optional[int]
    generated: int
    counts: dict[str, int]
    reached: set[str]


def _worker(model: Model, conn: Connection, start: _Start, fp_of: Callable[[Any], int], chunk: int, reduce: bool,
            index: int, foreign: tuple[Connection, ...] = (), parent: int | None = None) -> None:
    """One worker: expand its part of each level, chunk by chunk, as the coordinator directs."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the coordinator handles Ctrl-C and stops us
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the CLI's handler: the coordinator reports
    for c in foreign:
        c.close()
    if parent is not None:
        die_with_parent(parent)
    try:
        _work(model, conn, start, fp_of, chunk, reduce, index)
    except (EOFError, BrokenPipeError, KeyboardInterrupt):
        pass
    except Exception:  # noqa: BLE001 - a model bug: hand the traceback to the coordinator
        conn.send(("error", traceback.format_exc()))


def _failure(what: str, trace: str) -> Exception:
    """A worker's exception, for the coordinator to raise: a plugin's failure as itself (one line
    for the user), anything else with the worker's traceback."""
    from model.extension import PluginFailure

    last = trace.rstrip().rpartition("\n")[2]
    prefix = f"{PluginFailure.__module__}.{PluginFailure.__name__}: "
    if last.startswith(prefix):
        return PluginFailure(last[len(prefix):])
    return RuntimeError(f"{what}:\n{trace}")


@collector_paused
def _work(model: Model, conn: Connection, start: _Start, fp_of: Callable[[Any], int], chunk: int,
          reduce: bool, index: int) -> None:
    actions = model.actions
    next_state = successor_function(model, reduce)
    broken = Invariants(model).broken
    pending = [(p.name, p.predicate) for p in model.properties if p.kind == "sometimes" and p.name not in start.reached]
    type_counts: dict[type, int] = {}
    generated = start.generated
    keep = UNLIMITED if start.keep is None else max(1, start.keep)

    def new_frontier(level: int) -> Frontier:
        spill = start.run_path / f"spill-{level:04d}-{index}.bin" if start.keep is not None else None
        return Frontier(spill, keep)

    if isinstance(start.share, Path):
        frontier = Frontier.load(start.share)
    else:
        frontier = new_frontier(0)
        frontier.extend(start.share)
    start.share = None

    def counts() -> dict[str, int]:
        out = dict(start.counts)
        for k, n in type_counts.items():
            out[k.__name__] = out.get(k.__name__, 0) + n
        return out

    while True:
        cmd = conn.recv()
        if cmd[0] == "stop":
            frontier.close()
            return
        if cmd[0] == "give":  # hand the last n states of the next level over, for balance
            conn.send_bytes(pickle.dumps(frontier.pop_last(cmd[1]), protocol=pickle.HIGHEST_PROTOCOL))
            continue
        if cmd[0] == "take":
            frontier.extend(pickle.loads(conn.recv_bytes()))
            continue
        if cmd[0] == "save":  # a checkpoint: write the queue to the file named
            frontier.save(Path(cmd[1]))
            conn.send(("saved",))
            continue
        level = cmd[1]
        next_frontier = new_frontier(level)
        violation: Optional[tuple[int, str]] = None
        newly: list[tuple[str, int]] = []
        waiting: Optional[tuple[list[Any], array, list[Any]]] = None  # the chunk sent whose answer is still due

        def take_answer(states: list[Any], fps: array, parents: list[Any]) -> None:
            """Keep the successors the coordinator found new, checking every property on them."""
            nonlocal violation
            reply = conn.recv_bytes()
            for j, is_new in enumerate(reply):
                if not is_new:
                    continue
                t, fp = states[j], fps[j]
                if violation is None:
                    name = broken(t, parents[j])
                    if name is not None:
                        violation = (fp, name)
                for item in list(pending):
                    if item[1](t):
                        newly.append((item[0], level))
                        pending.remove(item)
                next_frontier.append((t, fp))

        items = iter(frontier)
        left_here = len(frontier)
        while True:
            batch = list(islice(items, chunk))
            left_here -= len(batch)
            if not batch:
                if waiting is not None:
                    take_answer(*waiting)
                conn.send(("done", b"", b"", violation, newly, generated, counts(), len(next_frontier)))
                break
            fps = array("Q")
            pfps = array("Q")
            states: list[Any] = []
            parents: list[Any] = []  # each state's, for Invariants.broken
            here: set[int] = set()
            for s, pfp in batch:
                for a in actions(s):
                    t = next_state(s, a)
                    if t is None:
                        continue
                    generated += 1
                    kind = a.__class__
                    type_counts[kind] = type_counts.get(kind, 0) + 1
                    fp = fp_of(t)
                    if fp in here:
                        continue
                    here.add(fp)
                    fps.append(fp)
                    pfps.append(pfp)
                    states.append(t)
                    parents.append(s)
            left = left_here + len(next_frontier)
            # Pipelined: this chunk goes out before the previous chunk's answer is read, so the
            # worker expands while the coordinator answers; the coordinator's order is unchanged.
            conn.send(("chunk", fps.tobytes(), pfps.tobytes(), violation, newly, generated, counts(), left))
            violation, newly = None, []
            if waiting is not None:
                take_answer(*waiting)
            waiting = (states, fps, parents)
        frontier.close()
        frontier = next_frontier
