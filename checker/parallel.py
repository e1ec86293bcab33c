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
on every run with the same number of workers. Fingerprints are the ones of `bfs.explore`, read
as unsigned 64-bit ints.
"""
from __future__ import annotations

import ctypes
import gc
import multiprocessing
import os
import pickle
import signal
import time
import traceback
from array import array
from multiprocessing.connection import Connection
from typing import Any, Callable, Optional

from checker import stop
from checker.bfs import (INCOMPLETE, OK, VIOLATION, Progress, Result, coverage, initial_states, reduction_text,
                         state_fingerprint, successor_function, violation_report)
from model.interface import Model

MASK = (1 << 64) - 1
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
) -> Result:
    """`bfs.explore` on `workers` processes; the same result apart from seconds."""
    raw_fp = state_fingerprint(model)

    def fp_of(s: Any) -> int:
        return raw_fp(s) & MASK

    always_props = [(p.name, p.predicate) for p in model.properties if p.kind == "always"]
    sometimes_names = [p.name for p in model.properties if p.kind == "sometimes"]
    reached: dict[str, int] = {}
    parents: dict[int, Optional[int]] = {}
    limit = max_states if max_states is not None else -1
    start = time.perf_counter()
    outcome = OK
    bad_fp: Optional[int] = None
    bad_name = ""
    generated = 0
    interrupted = False

    # Level 0 in the coordinator, dealt round-robin to the workers.
    shares: list[list[tuple[Any, int]]] = [[] for _ in range(workers)]
    count = 0
    for s in initial_states(model, reduce):
        generated += 1
        fp = fp_of(s)
        if fp in parents:
            continue
        if len(parents) == limit:
            outcome = INCOMPLETE
            break
        parents[fp] = None
        bad = next((name for name, pred in always_props if not pred(s)), None)
        if bad is not None:
            outcome, bad_fp, bad_name = VIOLATION, fp, bad
            break
        for p in model.properties:
            if p.kind == "sometimes" and p.name not in reached and p.predicate(s):
                reached[p.name] = 0
        shares[count % workers].append((s, fp))
        count += 1

    worker_generated = [0] * workers
    worker_counts: list[dict[str, int]] = [{} for _ in range(workers)]
    depth = 0
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
            proc = ctx.Process(target=_worker, args=(model, child_end, shares[w], fp_of, chunk, reduce),
                               kwargs={"foreign": foreign, "parent": os.getpid()}, daemon=True)
            proc.start()
            child_end.close()
            conns.append(parent_end)
            procs.append(proc)
        shares = []
    every = max(progress_every, 0.0)
    next_report = start + every
    try:
        level = 0
        while outcome == OK and conns:
            level += 1
            # Earlier levels and the fingerprint dict stay alive: move them out of the cyclic
            # collector's sight (reference counting still frees them), so full collections no
            # longer walk millions of states. The search creates no cycles.
            gc.freeze()
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
                        raise RuntimeError(f"worker {w} failed:\n{msg[1]}")
                    _, fps_bytes, pfps_bytes, violation, newly, gen, counts, left = msg
                    worker_generated[w], worker_counts[w], remaining[w] = gen, counts, left
                    for name, at in newly:
                        if name not in reached or at < reached[name]:
                            reached[name] = at
                    if violation is not None and outcome == OK:
                        outcome, bad_fp, bad_name = VIOLATION, violation[0], violation[1]
                        depth = level
                    if kind == "done":
                        active.remove(w)
                        continue
                    if outcome != OK:
                        continue  # the worker waits for an answer that will not come; it is stopped below
                    fps = array("Q")
                    fps.frombytes(fps_bytes)
                    pfps = array("Q")
                    pfps.frombytes(pfps_bytes)
                    mask = bytearray(len(fps))
                    for j, fp in enumerate(fps):
                        if fp in parents:
                            continue
                        if len(parents) == limit:
                            outcome = INCOMPLETE
                            break
                        parents[fp] = pfps[j]
                        mask[j] = 1
                        new_in_level += 1
                    if outcome == OK:
                        conns[w].send_bytes(bytes(mask))
                    if new_in_level:
                        depth = level
                    if progress is not None:
                        now = time.perf_counter()
                        if now >= next_report:
                            next_report = now + every
                            progress(Progress(len(parents), generated + sum(worker_generated), depth,
                                              sum(remaining), now - start))
            queue = sum(remaining)
            if outcome == OK and not new_in_level:
                break  # the last level found nothing new: the space is exhausted
            if outcome == OK:
                _balance(conns, remaining)
    except KeyboardInterrupt:
        outcome, interrupted = INCOMPLETE, True
    finally:
        _stop(conns, procs, graceful=outcome == OK and not interrupted)
    seconds = time.perf_counter() - start

    counts = {kind: 0 for kind in model.action_kinds}
    for wc in worker_counts:
        for kind, n in wc.items():
            counts[kind] = counts.get(kind, 0) + n
    never_enabled, disabled = coverage(model, counts)
    violation = None
    if outcome == VIOLATION:
        assert bad_fp is not None
        violation = violation_report(model, bad_name, parents, bad_fp, fp_of, reduce)
    return Result(
        result=outcome,
        distinct_states=len(parents),
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
    )


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


def _die_with_parent(parent: int) -> None:
    """On Linux, have the kernel send SIGTERM when the coordinator dies (even by SIGKILL), so a
    worker busy expanding a chunk does not run on; elsewhere end of file on the pipe ends it."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # it died before prctl took effect
        os._exit(0)


def _worker(model: Model, conn: Connection, frontier: list[tuple[Any, int]],
            fp_of: Callable[[Any], int], chunk: int, reduce: bool,
            foreign: tuple[Connection, ...] = (), parent: int | None = None) -> None:
    """One worker: expand its part of each level, chunk by chunk, as the coordinator directs."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the coordinator handles Ctrl-C and stops us
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the CLI's handler: the coordinator reports
    for c in foreign:
        c.close()
    if parent is not None:
        _die_with_parent(parent)
    try:
        _work(model, conn, frontier, fp_of, chunk, reduce)
    except (EOFError, BrokenPipeError, KeyboardInterrupt):
        pass
    except Exception:  # noqa: BLE001 - a model bug: hand the traceback to the coordinator
        conn.send(("error", traceback.format_exc()))


def _work(model: Model, conn: Connection, frontier: list[tuple[Any, int]],
          fp_of: Callable[[Any], int], chunk: int, reduce: bool) -> None:
    actions = model.actions
    next_state = successor_function(model, reduce)
    always_props = [(p.name, p.predicate) for p in model.properties if p.kind == "always"]
    pending = [(p.name, p.predicate) for p in model.properties if p.kind == "sometimes"]
    type_counts: dict[type, int] = {}
    generated = 0

    def counts() -> dict[str, int]:
        return {k.__name__: n for k, n in type_counts.items()}

    while True:
        cmd = conn.recv()
        if cmd[0] == "stop":
            return
        if cmd[0] == "give":  # hand the last n states of the next level over, for balance
            n = cmd[1]
            conn.send_bytes(pickle.dumps(frontier[len(frontier) - n:], protocol=pickle.HIGHEST_PROTOCOL))
            del frontier[len(frontier) - n:]
            continue
        if cmd[0] == "take":
            frontier.extend(pickle.loads(conn.recv_bytes()))
            continue
        level = cmd[1]
        gc.freeze()  # as in the coordinator: earlier levels out of the cyclic collector's sight
        next_frontier: list[tuple[Any, int]] = []
        violation: Optional[tuple[int, str]] = None
        newly: list[tuple[str, int]] = []
        waiting: Optional[tuple[list[Any], array]] = None  # the chunk sent whose answer is still due

        def take_answer(states: list[Any], fps: array) -> None:
            """Keep the successors the coordinator found new, checking every property on them."""
            nonlocal violation
            reply = conn.recv_bytes()
            for j, is_new in enumerate(reply):
                if not is_new:
                    continue
                t, fp = states[j], fps[j]
                if violation is None:
                    for name, pred in always_props:
                        if not pred(t):
                            violation = (fp, name)
                            break
                for item in list(pending):
                    if item[1](t):
                        newly.append((item[0], level))
                        pending.remove(item)
                next_frontier.append((t, fp))

        begin = 0
        while True:
            batch = frontier[begin:begin + chunk]
            begin += len(batch)
            if not batch:
                if waiting is not None:
                    take_answer(*waiting)
                conn.send(("done", b"", b"", violation, newly, generated, counts(), len(next_frontier)))
                break
            fps = array("Q")
            pfps = array("Q")
            states: list[Any] = []
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
            left = len(frontier) - begin + len(next_frontier)
            # Pipelined: this chunk goes out before the previous chunk's answer is read, so the
            # worker expands while the coordinator answers; the coordinator's order is unchanged.
            conn.send(("chunk", fps.tobytes(), pfps.tobytes(), violation, newly, generated, counts(), left))
            violation, newly = None, []
            if waiting is not None:
                take_answer(*waiting)
            waiting = (states, fps)
        frontier = next_frontier
