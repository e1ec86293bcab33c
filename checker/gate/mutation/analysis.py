"""Mutation analysis: which of a model's mutants the gate's Kafka 4.1 rows kill.

Two passes, each a list of independent tasks (a process pool or Spark runs them alike):

1. Infection: each row's configuration is explored once with Kafka 4.1's code, every mutant's
   expression evaluated next to the original at its site (`operators.Probe`). A mutant whose
   expression never computes another value anywhere in a row's reachable states has that row's
   exact state graph: the row cannot kill it and is skipped. One never evaluated on any row is
   "not executed"; one evaluated but never different on any row is "unchanged" (equivalent on
   the gate's configurations). A survivor that computes other values but reaches exactly Kafka
   4.1's states on every row (same digest) is "same-states": equivalent there too, as far as
   the safety properties can tell.
2. Kill: each remaining mutant runs the rows where it changes something, cheapest first, as the
   gate runs them (`checker.gate.gate.run_row` and `judge`): first the safety pass of each (the first
   failing row kills it: a violated invariant, an exception in the model, or a search that grows
   past `blowup` times Kafka 4.1's states, which the gate could not finish), then, if every row's
   safety holds, the liveness pass of the rows that have one (a failure: an availability mutant).
"""
from __future__ import annotations

import dataclasses
import signal
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, Sequence

from checker import stop
from checker.gate.mutation.operators import Mutant, Probe, transform

BLOWUP = 4  # a mutant row stops, undecided (fate "budget"), at this many times Kafka 4.1's states (plus SLACK)
SLACK = 1000


class BudgetSpent(BaseException):
    """A task ran out of its time budget (BaseException: the gate's runner must not catch it)."""


@dataclass(frozen=True)
class Target:
    """Where a model's mutants live: module -> (source, functions or () for all)."""

    model: str
    sources: Mapping[str, str]
    functions: Mapping[str, tuple[str, ...]]
    package: str = ""  # model.MODELS[model] on the coordinator: a model registered at run time resolves in workers

    def scope(self, module: str) -> tuple[str, ...] | None:
        return self.functions.get(module) or None

    def register(self) -> None:
        from model import MODELS

        if self.package:
            MODELS.setdefault(self.model, self.package)


@dataclass
class Infection:
    """One row's infection pass."""

    row: str
    executed: set[str] = field(default_factory=set)
    infected: set[str] = field(default_factory=set)
    states: int = 0
    seconds: float = 0.0
    complete: bool = False
    violated: bool = False  # Kafka 4.1 itself breaks an invariant here: the row cannot judge a mutant
    note: str = ""
    digest: int | None = None  # of Kafka 4.1's reachable states (checker.search.common.Result.digest)
    unreached: list[str] = field(default_factory=list)  # Kafka 4.1's sometimes-properties never reached here
    never_enabled: list[str] = field(default_factory=list)  # and its actions never enabled


class ReferenceFails(Exception):
    """Kafka 4.1 itself breaks an invariant on a row: the row cannot tell a mutant apart."""


@dataclass
class Attempt:
    """One mutant on one row."""

    row: str
    passed: bool
    outcome: str  # ok | violation | error | incomplete | budget
    kind: str = ""  # safety | liveness
    invariant: str = ""
    steps: int = 0
    states: int = 0
    seconds: float = 0.0
    reason: str = ""
    digest: int | None = None  # of the mutant's reachable states, when its safety pass held


@dataclass
class Fate:
    """What became of one mutant."""

    mutant: Mutant
    status: str  # killed | availability | survived | same-states | unchanged | not-executed | budget | interrupted
    rows_changed: list[str] = field(default_factory=list)
    attempts: list[Attempt] = field(default_factory=list)
    seconds: float = 0.0
    same_states: bool = False  # its safety passes reached exactly Kafka 4.1's states on every row
    outgrown: list[str] = field(default_factory=list)  # rows where its search outgrew the cap: undecided there

    @property
    def killer(self) -> Attempt | None:
        return next((a for a in self.attempts if not a.passed and a.outcome not in ("budget", "incomplete")), None)


def _alarm(seconds: float | None) -> Callable[[], None]:
    """Raise BudgetSpent in this (main) thread after `seconds`; returns what cancels it."""
    if not seconds:
        return lambda: None

    def spent(signum: int, frame: Any) -> None:
        stop.request(BudgetSpent)

    previous = signal.signal(signal.SIGALRM, spent)
    signal.setitimer(signal.ITIMER_REAL, seconds)

    def cancel() -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        stop.clear(BudgetSpent)

    return cancel


def infection_task(target: Target, row: Any, mutant_ids: Sequence[str], budget: float | None) -> Infection:
    """Explore `row` with Kafka 4.1's code, probing the sites of `mutant_ids`."""
    from checker.search.run import explore
    from checker.gate.mutation.imports import changed
    from checker.search.schedule import replay_schedule
    from checker.selection import select_invariants

    target.register()
    ids = set(mutant_ids)
    by_module = {m: {i for i in ids if i.startswith(m + ":")} for m in target.sources}
    probe = Probe()
    trees, names = {}, {}
    for m, src in target.sources.items():
        if by_module[m]:
            trees[m], sites = transform(m, src, probe=by_module[m], functions=target.scope(m))
            names[m] = probe.names(sites)
    out = Infection(row.name)
    start = time.perf_counter()
    cancel = _alarm(budget)
    try:
        with changed(target.model, trees, names):
            model = select_invariants(row.run_config().build(), row.invariants)
            if row.schedule:  # a gate schedule row: its replay is the whole row
                run = replay_schedule(model, row.schedule)
                out.states, out.complete, out.violated = len(run.trace), True, run.violated is not None
                if run.violated:
                    out.note = f"Kafka 4.1 violation on this row ({run.violated[0]})"
                return out
            if row.rounds:  # a gate round row: the same search by rounds
                from checker.search.rounds import round_search

                r = round_search(model, row.rounds, max_states=row.max_states)
            else:
                r = explore(model, max_states=row.max_states)
        if r.interrupted:  # explore stops on Ctrl-C / SIGTERM and returns: the analysis must stop too
            raise KeyboardInterrupt
        out.states, out.complete, out.digest = r.distinct_states, r.result == "ok", r.digest
        out.unreached, out.never_enabled = list(r.unreached), list(r.never_enabled)
        out.violated = r.violation is not None
        if r.result != "ok":
            out.note = f"Kafka 4.1 {r.result} on this row" + (f" ({r.violation['invariant']})" if r.violation else "")
    except BudgetSpent:
        out.note = f"infection pass stopped by its budget ({budget:g} s)"
    finally:
        cancel()
        out.executed, out.infected = set(probe.executed), set(probe.infected)
        out.seconds = time.perf_counter() - start
    return out


def _with_reference_liveness(row: Any, say: Callable[[str], None]) -> Any:
    """The row, with the temporal properties whose antecedent Kafka 4.1 itself never reaches on it
    added to its may_miss (as a gate row would list them). Raises ReferenceFails if Kafka 4.1
    breaks a temporal property there."""
    from checker.gate.gate import run_row

    say(f"{row.name}: liveness pass with Kafka 4.1's code")
    out = run_row(dataclasses.replace(row, liveness=True, max_states=None), workers=1, want_traces=False)
    if out.interrupted:
        raise KeyboardInterrupt
    if out.outcome == "violation":
        raise ReferenceFails(f"{row.name}: Kafka 4.1 breaks {out.invariant}: a row Kafka 4.1 fails cannot judge a"
                             " mutant (the gate fails it too); fix the row or choose other presets")
    missed = tuple(p for p in out.unreached_antecedents if p not in row.may_miss)
    return dataclasses.replace(row, may_miss=row.may_miss + missed)


def _attempt(row: Any, liveness: bool, cap: int | None) -> Attempt:
    """One row as the gate runs it: the safety pass (here, for its digest) or, with `liveness`,
    both passes (checker.gate.gate.run_row)."""
    from checker.gate.gate import judge, run_row

    r = dataclasses.replace(row, liveness=liveness, max_states=None if row.schedule else cap)
    if liveness or row.schedule or row.rounds:  # a schedule or round row is judged as the gate judges it
        out = run_row(r, workers=1, want_traces=False)
        if out.interrupted:
            raise KeyboardInterrupt
        v = judge(r, out)
        return Attempt(row.name, v.passed, out.outcome, "" if v.passed else out.kind or "safety",
                       out.invariant or "", out.trace_length or 0, out.distinct_states, out.seconds, v.reason)
    from checker.search.run import explore
    from checker.gate.gate import vacuity
    from checker.selection import select_invariants

    start = time.perf_counter()
    try:
        model = select_invariants(r.run_config().build(), r.invariants)
        result = explore(model, max_states=cap)
    except (KeyboardInterrupt, BudgetSpent):
        raise
    except Exception as e:  # the gate fails such a row with "error"
        return Attempt(row.name, False, "error", "safety", "", 0, 0, time.perf_counter() - start,
                       f"{type(e).__name__}: {' '.join(str(e).split())}")
    if result.interrupted:
        raise KeyboardInterrupt
    seconds = time.perf_counter() - start
    missed = vacuity(row, result.unreached, result.never_enabled)
    if result.result == "ok" and missed:  # the gate fails a row that no longer reaches these
        first = next(n for n in list(result.unreached) + list(result.never_enabled) if n not in row.may_miss)
        return Attempt(row.name, False, "vacuous", "safety", first, 0, result.distinct_states, seconds,
                       f"vacuous: {', '.join(missed)} (not in the row's may_miss)")
    if result.result == "ok":
        return Attempt(row.name, True, "ok", "", "", 0, result.distinct_states, seconds, "every invariant holds",
                       result.digest)
    if result.violation is not None:
        v = result.violation
        return Attempt(row.name, False, "violation", "safety", v["invariant"], len(v["trace"]) - 1,
                       result.distinct_states, seconds, f"invariant {v['invariant']} violated")
    return Attempt(row.name, False, "incomplete", "safety", "", 0, result.distinct_states, seconds,
                   f"search past {cap:,} states ({BLOWUP}x Kafka 4.1's): undecided" if cap
                   else "incomplete")


def kill_task(target: Target, mutant: Mutant, rows: Sequence[Any], caps: Mapping[str, int | None],
              budget: float | None, liveness: bool = False, safety: bool = True
              ) -> tuple[str, list[Attempt], str, float]:
    """Run `mutant` on `rows` (in order) as the gate does, stopping at the first failing row:
    (mutant id, attempts, status, seconds). With `liveness`, each row's liveness pass too; a
    failure there alone (`safety` False: the safety pass already held) makes an availability
    mutant."""
    from checker.gate.mutation.imports import changed

    target.register()
    start = time.perf_counter()
    attempts: list[Attempt] = []
    tree, _ = transform(mutant.module, target.sources[mutant.module], apply=mutant.id,
                        functions=target.scope(mutant.module))
    status = "survived"
    cancel = _alarm(budget)
    current = ""
    try:
        with changed(target.model, {mutant.module: tree}):
            for row in rows:
                current = row.name
                a = _attempt(row, liveness, caps.get(row.name))
                attempts.append(a)
                if a.outcome == "incomplete":  # outgrew its cap: the gate would still be searching, not failing
                    status = "budget"  # undecided here; the next rows may still decide it
                    continue
                if not a.passed:
                    status = "availability" if a.kind == "liveness" and not safety else "killed"
                    break
    except BudgetSpent:
        status = "budget"
        attempts.append(Attempt(current, False, "budget", reason=f"time budget of {budget:g} s spent"))
    finally:
        cancel()
    return mutant.id, attempts, status, time.perf_counter() - start


# ---------------------------------------------------------------------------------------------
# Engines: the same tasks on a local process pool or on Spark


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the coordinator handles Ctrl-C and ends the pool
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _call(task: tuple[Callable[..., Any], tuple[Any, ...]]) -> Any:
    fn, args = task
    return fn(*args)


def run_tasks(tasks: Sequence[tuple[Callable[..., Any], tuple[Any, ...]]], jobs: int, engine: str = "local",
              spark: Any = None) -> Iterator[tuple[int, Any]]:
    """Yield (task index, result) as tasks finish: in this process (jobs 1), on a pool of `jobs`
    processes, or on Spark (`spark`: a SparkSession; one partition per task)."""
    if engine == "spark":
        from checker.walks.spark import ship_packages
        from checker.walks.walker import ModelSpec

        sc = spark.sparkContext
        target = next((a for _, args in tasks for a in args if isinstance(a, Target)), None)
        if target is not None:
            ship_packages(sc, ModelSpec(target.model, (), "", target.package), sc.master)
        indexed = [(i, (fn, _rows_shipped(sc, args))) for i, (fn, args) in enumerate(tasks)]
        rdd = sc.parallelize(indexed, max(1, len(indexed)))
        for index, result in rdd.map(lambda it: (it[0], _call_on_executor(it[1]))).toLocalIterator():
            yield index, result
        return
    if jobs <= 1 or len(tasks) <= 1:
        for index, task in enumerate(tasks):
            yield index, _call(task)
        return
    import multiprocessing

    pool = multiprocessing.get_context("fork").Pool(min(jobs, len(tasks)), initializer=_ignore_sigint)
    try:
        for index, result in pool.imap_unordered(_indexed_call, list(enumerate(tasks))):
            yield index, result
        pool.close()
    finally:
        pool.terminate()
        pool.join()


def _is_row(value: Any) -> bool:
    from checker.gate.gate import Row

    return isinstance(value, Row)


def _rows_shipped(sc: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """A task's arguments with each gate row's plugin files shipped to the executors (addFile) and
    named as (file name, SHA-256): an executor runs the copy it checked, never a driver's path."""
    from checker import plugin
    from checker.walks.spark_plugins import ship

    def swap(row: Any) -> Any:
        if not row.plugins:
            return row
        return dataclasses.replace(row, plugins=ship(sc, [plugin.load(p) for p in row.plugins]))

    return tuple([swap(r) if _is_row(r) else r for r in a] if isinstance(a, list) and any(_is_row(r) for r in a)
                 else swap(a) if _is_row(a) else a for a in args)


def _call_on_executor(task: tuple[Callable[..., Any], tuple[Any, ...]]) -> Any:
    """`_call` on an executor: each row's shipped plugins checked (SHA-256) and named by their local copies."""
    from checker.walks.spark_plugins import activate_on_executor

    def local(row: Any) -> Any:
        if not row.plugins or isinstance(row.plugins[0], str):
            return row
        return dataclasses.replace(row, plugins=tuple(activate_on_executor(row.plugins)))

    fn, args = task
    args = tuple([local(r) if _is_row(r) else r for r in a] if isinstance(a, list) else local(a) if _is_row(a) else a
                 for a in args)
    return fn(*args)


def _indexed_call(item: tuple[int, tuple[Callable[..., Any], tuple[Any, ...]]]) -> tuple[int, Any]:
    index, task = item
    return index, _call(task)


# ---------------------------------------------------------------------------------------------
# The whole analysis


def target_of(model: str) -> Target:
    """The code of `model` that mutants change: its definition's `mutation_targets`."""
    from checker.config import load_definition
    from checker.gate.mutation.imports import package_of, source_of

    definition = load_definition(model)
    whole: set[str] = set()
    functions: dict[str, list[str]] = {}
    order: list[str] = []
    for entry in definition.mutation_targets or (package_of(model),):
        module, _, function = entry.partition(":")
        if module not in order:
            order.append(module)
        if function:
            functions.setdefault(module, []).append(function)
        else:
            whole.add(module)
    sources = {m: source_of(m) for m in order}
    return Target(model, sources, {m: tuple(f) for m, f in functions.items() if m not in whole}, package_of(model))


def all_mutants(target: Target) -> list[Mutant]:
    from checker.gate.mutation.operators import mutants

    out: list[Mutant] = []
    for module, source in target.sources.items():
        out.extend(mutants(module, source, target.scope(module)))
    return out


@dataclass
class Analysis:
    model: str
    rows: list[Any]
    mutants: list[Mutant]
    infections: dict[str, Infection]
    fates: list[Fate]
    seconds: float
    interrupted: bool = False


def analyse(target: Target, rows: Sequence[Any], mutants: Sequence[Mutant], *, jobs: int = 1,
            engine: str = "local", spark: Any = None, budget: float | None = None,
            liveness: bool = True, say: Callable[[str], None] = lambda text: None,
            reference_liveness: bool = False) -> Analysis:
    """Row by row, in the order given (cheap rows first pays): the infection pass of the row over
    the mutants still alive, then the safety pass of the row for each alive mutant it can tell
    apart, in parallel. Then the liveness pass of the rows that have one, for the survivors. With
    `reference_liveness` (rows that are not the gate's, which Kafka 4.1 is not known to pass),
    Kafka 4.1's own liveness pass of a row comes first (_with_reference_liveness)."""
    start = time.perf_counter()
    fates = {m.id: Fate(m, "survived") for m in mutants}
    spent: dict[str, float] = {m.id: 0.0 for m in mutants}
    infections: dict[str, Infection] = {}
    caps: dict[str, int | None] = {}
    judged: dict[str, Any] = {}  # rows as the mutants run them
    interrupted = False

    def alive() -> list[Mutant]:
        return [m for m in mutants if fates[m.id].status == "survived"]

    def remaining(mid: str) -> float | None:
        return None if budget is None else max(budget - spent[mid], 0.001)

    def kill_wave(row: Any, chosen: list[Mutant], live: bool) -> None:
        # the 4x cap counts safety states; the liveness pass's graph is larger by design (no reduction)
        tasks = [(kill_task, (target, m, [row], {} if live else caps, remaining(m.id), live, not live))
                 for m in chosen]
        done = 0
        for _, (mid, attempts, status, seconds) in run_tasks(tasks, jobs, engine, spark):
            fate = fates[mid]
            fate.attempts.extend(attempts)
            spent[mid] += seconds
            fate.seconds = spent[mid]
            done += 1
            if status == "budget" and attempts and attempts[-1].outcome == "incomplete":
                fate.outgrown.append(row.name)  # undecided on this row; later rows still run it
            elif status != "survived":
                fate.status = status
            k = fate.killer if status != "survived" else None
            what = f"{status} by {k.invariant or k.outcome} ({k.steps} steps)" if k else status
            say(f"{row.name}: [{done}/{len(tasks)}] {mid} ({fate.mutant.location}): {what}, {seconds:.1f} s")

    try:
        for row in rows:
            chosen = alive()
            if not chosen:
                break
            say(f"{row.name}: exploring with Kafka 4.1's code, {len(chosen)} mutant(s) probed")
            inf = next(r for _, r in run_tasks([(infection_task, (target, row, [m.id for m in chosen], None))], 1))
            infections[row.name] = inf
            caps[row.name] = BLOWUP * inf.states + SLACK if inf.complete else row.max_states
            # a mutant must reach what Kafka 4.1 reaches here (the gate's may_miss check)
            judged[row.name] = dataclasses.replace(
                row, may_miss=tuple(dict.fromkeys(row.may_miss + tuple(inf.unreached) + tuple(inf.never_enabled))))
            told = [m for m in chosen if m.id in inf.infected or not inf.complete]
            for m in told:
                fates[m.id].rows_changed.append(row.name)
            if inf.violated:  # every mutant would "fail" it: no verdict can come from this row
                raise ReferenceFails(f"{row.name}: {inf.note}: a row Kafka 4.1 fails cannot judge a mutant "
                                     "(the gate fails it too); fix the row or choose other presets")
            say(f"{row.name}: {inf.states:,} states, {inf.seconds:.1f} s; {len(told)} mutant(s) change something"
                + (f" ({inf.note})" if inf.note else ""))
            kill_wave(judged[row.name], told, False)
        for fate in fates.values():
            if fate.status == "survived" and fate.rows_changed:
                digests = {a.row: a.digest for a in fate.attempts}
                fate.same_states = all(digests.get(r) is not None and digests.get(r) == infections[r].digest
                                       for r in fate.rows_changed)
        if liveness:
            for row in rows:
                chosen = [m for m in alive() if row.name in fates[m.id].rows_changed]
                if row.liveness and chosen:
                    if reference_liveness:
                        judged[row.name] = _with_reference_liveness(judged[row.name], say)
                    say(f"{row.name}: liveness pass of {len(chosen)} surviving mutant(s)")
                    kill_wave(judged[row.name], chosen, True)
    except KeyboardInterrupt:
        interrupted = True
    for fate in fates.values():
        if interrupted and fate.status not in ("killed", "availability"):
            fate.status = "interrupted"  # the analysis stopped before it was judged: no survivor, no equivalent
            continue
        if fate.status == "survived" and fate.outgrown:
            fate.status = "budget"
        if fate.status == "survived" and fate.same_states:
            fate.status = "same-states"
        if fate.status == "survived" and not fate.rows_changed:
            executed = any(fate.mutant.id in inf.executed for inf in infections.values())
            fate.status = "unchanged" if executed else "not-executed"
    return Analysis(target.model, list(rows), list(mutants), infections, [fates[m.id] for m in mutants],
                    time.perf_counter() - start, interrupted)
