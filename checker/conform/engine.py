"""The conformance engine: behaviours of the model, driven through an adapter on the real code and
compared with it after every step.

Behaviours come from seeded random walks (checker.walks: the same seed, preset and walk id give
the same walk as `kcheck simulate`, as long as every action the walk draws can be driven; one the
adapter cannot drive counts as skipped and the walk draws another, as it does for a disabled
action) and from recorded traces (the catalogued bug variants' ITF traces). After the initial
state and every step the adapter's `observe()` must equal `abstract(successor)` key by key.
"""
from __future__ import annotations

import importlib
import random
import signal
import time
from contextlib import contextmanager
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Sequence

from checker.conform.adapter import (
    ACCEPTED, DIFFERS, EXCEPTION, REFUSED, Difference, OtherRefusal, compare, exception_line,
)
from checker.walks.steer import Steering
from checker.walks.walker import Walker, _below, swarm_weights, walk_seed
from model.interface import action_name

Step = tuple[Any, Any, Any]  # (state, action, successor)

_stop_requested = False


class Stopped(Exception):
    """A stop request (Ctrl-C, SIGTERM), taken between two steps: never inside a call into the JVM."""


def request_stop(*_: Any) -> None:
    """A signal handler: note the request; the step loop stops at the next step boundary."""
    global _stop_requested
    _stop_requested = True


def stopping() -> bool:
    return _stop_requested


@contextmanager
def stop_at_step_boundaries() -> Iterator[None]:
    """While a run drives the JVM, SIGINT and SIGTERM only note a stop request (an exception raised
    by a handler in the middle of a JPype call would crash the process)."""
    global _stop_requested
    _stop_requested = False
    try:
        previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    except ValueError:  # not the main thread
        previous = {}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@dataclass
class Outcome:
    """One behaviour against the real code."""

    name: str                          # "walk 17 (preset default)" or a trace's path
    steps: int = 0
    trail: list[tuple[Any, Any]] = field(default_factory=list)  # [(action or None, state)], up to the end
    difference: Difference | None = None
    known: str | None = None           # the documented divergence the difference is, if it is one


@dataclass
class Report:
    """What a conformance run did: counts for vacuity, the first difference, the abstractions."""

    model: str
    variant: str
    presets: list[str]
    seed: int | None = None
    depth: int = 0
    swarm: bool = False
    steer: bool = False
    behaviours: int = 0
    steps: int = 0
    seconds: float = 0.0
    counts: Counter = field(default_factory=Counter)          # action kind -> steps driven
    skipped: Counter = field(default_factory=Counter)         # action kind -> draws the adapter could not drive
    skip_reasons: dict[str, str] = field(default_factory=dict)
    known: Counter = field(default_factory=Counter)           # documented divergence -> behaviours ending there
    first: Outcome | None = None                              # the first behaviour with an unknown difference
    interrupted: bool = False
    action_kinds: tuple[str, ...] = ()
    disabled: dict[str, str] = field(default_factory=dict)    # kind -> why no preset's config enables it
    abstractions: dict[str, str] = field(default_factory=dict)
    traces: list[dict[str, Any]] = field(default_factory=list)  # per trace: path, steps, outcome
    negative: dict[str, dict[str, Any]] = field(default_factory=dict)  # kind -> offered, refused, answers

    @property
    def never(self) -> dict[str, str]:
        """Action kinds never driven, each with why (disabled by config, not drivable, or not drawn)."""
        out = {}
        for kind in self.action_kinds:
            if self.counts[kind]:
                continue
            if kind in self.skip_reasons:
                reason = self.skip_reasons[kind]
                out[kind] = (f"not drivable (abstraction {reason!r})" if reason in self.abstractions
                             else f"not drivable: {reason}")
            elif kind in self.disabled:
                out[kind] = "disabled by the configuration: " + self.disabled[kind]
            else:
                out[kind] = "never drawn"
        return out

    @property
    def steps_per_second(self) -> float:
        return self.steps / self.seconds if self.seconds > 0 else 0.0


def known_divergence_of(adapter: Any) -> Callable[..., str | None] | None:
    """The adapter's `known_divergence(state, action, successor, real)`, or its module's, if any."""
    fn = getattr(adapter, "known_divergence", None)
    if fn is None:
        fn = getattr(importlib.import_module(type(adapter).__module__), "known_divergence", None)
    return fn


def drive(adapter: Any, name: str, behaviour: Iterable[Step], first: Any, report: Report) -> Outcome:
    """Reset the adapter to `first`, take every step of `behaviour`, compare after each; stop at the
    first difference (or refusal). An exception thrown on the way (by the real code, or by the
    adapter probing or driving it) ends the behaviour too: an EXCEPTION difference at the step it
    came in, the trail holding the behaviour up to it."""
    out = Outcome(name, trail=[(None, first)])
    try:
        adapter.reset(first)
        keys = compare(adapter.abstract(first), adapter.observe())
    except _PASS_THROUGH:
        raise
    except Exception as e:
        out.difference = Difference(EXCEPTION, 0, "init", {}, exception_line(e))
        return out
    if keys:
        out.difference = Difference(DIFFERS, 0, "init", keys)
        return out
    known = known_divergence_of(adapter)
    steps = iter(behaviour)
    while True:
        if _stop_requested:
            raise Stopped()
        try:
            picked = next(steps, None)  # a walk probes the real code while it draws (_Drivable)
        except _PASS_THROUGH:
            raise
        except Exception as e:
            out.difference = Difference(EXCEPTION, out.steps + 1, "drawing the next step", {}, exception_line(e))
            return out
        if picked is None:
            return out
        state, action, successor = picked
        out.steps += 1
        report.steps += 1
        kind = action_name(action)
        report.counts[kind] += 1
        out.trail.append((action, successor))
        try:
            refused = adapter.step(state, action, successor)
            real = adapter.observe()
        except _PASS_THROUGH:
            raise
        except Exception as e:
            out.difference = Difference(EXCEPTION, out.steps, repr(action), {}, exception_line(e))
            return out
        if refused:
            out.difference = Difference(REFUSED, out.steps, repr(action), {}, refused)
        else:
            keys = compare(adapter.abstract(successor), real)
            if keys:
                out.difference = Difference(DIFFERS, out.steps, repr(action), keys)
        if out.difference is not None:
            if known is not None:
                out.known = known(state, action, successor, real)
            return out


class _Drivable:
    """The model as a walk sees it: an action the adapter cannot drive from a state is disabled
    there (counted in the report). The adapter's probe must leave the abstraction unchanged,
    which `perturbed` records otherwise."""

    def __init__(self, model: Any, adapter: Any, report: Report) -> None:
        self._model, self._adapter, self._report = model, adapter, report
        self._probe = getattr(adapter, "drivable", None)
        self.perturbed: tuple[Any, dict] | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)

    def next_state(self, state: Any, action: Any) -> Any:
        nxt = self._model.next_state(state, action)
        if nxt is None or self._probe is None:
            return nxt
        reason = self._probe(state, action)
        if reason is None:
            return nxt
        kind = action_name(action)
        self._report.skipped[kind] += 1
        self._report.skip_reasons.setdefault(kind, reason)
        keys = compare(self._adapter.abstract(state), self._adapter.observe())
        if keys and self.perturbed is None:
            self.perturbed = (action, keys)
        return None


def walk(model: Any, adapter: Any, seed: int, walk_id: int, depth: int, swarm: bool, report: Report,
         label: str = "", negative: bool = False, steering: Steering | None = None) -> Outcome:
    """Walk `walk_id` of seed `seed` (checker.walks' seeding and kind-first choice), driven on the real code.
    With `steering` (checker.walks.steer), each step prefers the action into the abstract cell the
    run's walks entered least, weighed on the model alone (a draw the real code cannot take is dropped).
    With `negative`, in every state the walk reaches the real code is also offered one action the
    model refuses there (`offer_refused`), drawn by a generator of its own: the walk's path is the same."""
    drivable = _Drivable(model, adapter, report)
    walker = Walker(drivable, keep_fingerprints=False)
    rng = random.Random(walk_seed(seed, walk_id))
    weights = swarm_weights(model, rng) if swarm else None
    first = walker.inits[_below(rng, len(walker.inits))]
    offers = random.Random(walk_seed(seed, walk_id) ^ 0x6E65676174697665) if negative else None
    found: list[Difference] = []  # what an offer found: the real code took it, or threw

    def steps() -> Iterator[Step]:
        state = first
        for i in range(depth + 1):
            if offers is not None and not offer_refused(model, adapter, state, offers, report, found):
                return
            if i == depth:
                return
            picked = (walker._step(state, rng, weights) if steering is None
                      else steering.step(drivable, state, rng, weights, raw=model))
            if drivable.perturbed is not None:
                action, keys = drivable.perturbed
                raise _Perturbed(state, action, keys)
            if picked is None:
                return
            _, action, successor = picked
            yield state, action, successor
            state = successor

    name = f"walk {walk_id}" + (f" ({label})" if label else "")
    try:
        out = drive(adapter, name, steps(), first, report)
        if out.difference is None and found:
            d = found[0]
            out.difference = Difference(d.kind, out.steps, d.action, d.keys, d.reason)
        return out
    except _Perturbed as p:
        out = Outcome(name, steps=0)
        out.difference = Difference(DIFFERS, 0, f"probing {p.action!r}", p.keys,
                                    "the adapter's probe changed the real state")
        return out


def offer_kind(label: str) -> str:
    """The action kind of an offer's case label ("AlterPartition with a stale leader epoch" -> "AlterPartition")."""
    return label.split(" ", 1)[0]


def negative_by_kind(negative: dict[str, dict[str, Any]]) -> dict[str, dict[str, int]]:
    """The offers' tallies summed per action kind: {kind: {"offered", "refused", "cases"}}."""
    out: dict[str, dict[str, int]] = {}
    for label, tally in sorted(negative.items()):
        k = out.setdefault(offer_kind(label), {"offered": 0, "refused": 0, "cases": 0})
        k["offered"] += tally["offered"]
        k["refused"] += tally["refused"]
        k["cases"] += 1
    return out


def offer_refused(model: Any, adapter: Any, state: Any, rng: random.Random, report: Report,
                  found: list[Difference]) -> bool:
    """Negative conformance: offer the real code one of the actions the model refuses in `state`
    (the adapter's `refused_offers`: those a guard of the model rejects, not a bound), drawn by
    `rng`. It must refuse too (an error answer or an exception of its API) and change nothing the
    abstraction shows; an adapter that knows the model's answer raises OtherRefusal when the real
    one differs (a DIFFERS finding). False when it took it, answered otherwise or threw (the finding
    is appended to `found`)."""
    candidates = getattr(adapter, "refused_offers", None)
    if candidates is None:
        return True
    groups = candidates(state)  # {label: [action, ...]}: a label per kind and case, drawn alike
    labels = sorted(k for k, v in groups.items() if v)
    if not labels:
        return True
    label = labels[_below(rng, len(labels))]
    action = groups[label][_below(rng, len(groups[label]))]
    tally = report.negative.setdefault(label, {"offered": 0, "refused": 0, "answers": Counter()})
    tally["offered"] += 1
    before = adapter.observe()
    try:
        answer = adapter.offer(state, action)
        changed = compare(before, adapter.observe())
    except _PASS_THROUGH:
        raise
    except OtherRefusal as e:
        found.append(Difference(DIFFERS, 0, f"offering {action!r}", compare(before, adapter.observe()),
                                f"refused, but {e}"))
        return False
    except Exception as e:
        found.append(Difference(EXCEPTION, 0, f"offering {action!r}", {}, exception_line(e)))
        return False
    if answer is None or changed:
        what = "took" if answer is None else f"answered {answer} but changed its state on"
        found.append(Difference(ACCEPTED, 0, f"offering {action!r}", changed,
                                f"the real code {what} {action!r}, which the model refuses here"))
        return False
    tally["refused"] += 1
    tally["answers"][answer] += 1
    return True


class _Perturbed(Exception):
    def __init__(self, state: Any, action: Any, keys: dict) -> None:
        self.state, self.action, self.keys = state, action, keys


_PASS_THROUGH = (Stopped, _Perturbed)  # the engine's own signals, never findings


def run_walks(models: Sequence[tuple[str, Any]], make_adapter: Callable[[Any], Any], seed: int, walks: int,
              depth: int, swarm: bool, report: Report, deadline: float | None = None,
              negative: bool = False, steer: bool = False) -> Report:
    """Walks 0..walks-1, walk w over models[w % len(models)] (a (label, model) pair per preset); with
    `steer`, steered by one Steering for the run, in walk order."""
    adapters = [make_adapter(m) for _, m in models]
    steering = Steering() if steer else None
    start = time.monotonic()
    try:
        for w in range(walks):
            if _stop_requested or (deadline is not None and time.monotonic() > deadline):
                report.interrupted = True
                break
            label, model = models[w % len(models)]
            out = walk(model, adapters[w % len(models)], seed, w, depth, swarm, report, label, negative, steering)
            report.behaviours += 1
            if out.difference is not None:
                if out.known:
                    report.known[out.known] += 1
                elif report.first is None:
                    report.first = out
                    break
    except (KeyboardInterrupt, Stopped):
        report.interrupted = True
    finally:
        report.seconds += time.monotonic() - start
        for a in adapters:
            a.close()
    return report
