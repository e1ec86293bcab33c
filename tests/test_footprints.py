"""The footprint declarations (model/*/footprint.py) are what partial-order reduction trusts: an
action declared independent of another is explored in one order only. A declaration that leaves
out a location an action reads or writes would let `kcheck check --por` miss states, so every
declaration is checked here on breadth-first samples of every preset of both models:

- writes: each enabled action's successor differs from its state only in declared locations, and
  the count of messages in flight rises only if it "takes" and falls only if it "frees";
- reads: with one undeclared location of the state replaced by the value another sampled state
  holds there, the action is enabled exactly when it was, and its successor is the perturbed state
  with the declared writes as before (a capacity reader is perturbed only where the count stays);
- properties: an invariant's value does not change when a location it does not declare does.
"""
from __future__ import annotations

import dataclasses
from collections import deque
from typing import Any

import pytest

from checker.config import load_config
from checker.search.common import successor_function
from model.kraft import DEFINITION as KRAFT
from model.replication import DEFINITION as REPLICATION

SAMPLE = 160  # states per preset: a breadth-first prefix, then every state's perturbations


def bfs_sample(model: Any, limit: int) -> list[Any]:
    """Up to `limit` states the search holds (with its stutter reduction), breadth first."""
    step = successor_function(model, True)
    seen, queue, out = set(), deque(model.init_states()), []
    while queue and len(out) < limit:
        s = queue.popleft()
        if s in seen:
            continue
        seen.add(s)
        out.append(s)
        for a in model.actions(s):
            t = step(s, a)
            if t is not None and t not in seen:
                queue.append(t)
    return out


def spread(states: list[Any], limit: int) -> list[Any]:
    """`limit` states taken evenly from the sample (deep states as well as shallow ones)."""
    if len(states) <= limit:
        return states
    return [states[i * len(states) // limit] for i in range(limit)]


def _expected(fps: Any, base: Any, t: Any, writes: frozenset) -> Any:
    e = base
    for loc in writes:
        e = fps.put(e, loc, fps.get(t, loc))
    return e


def _changed(fps: Any, s: Any, t: Any) -> set:
    return {loc for loc in fps.locations if fps.get(s, loc) != fps.get(t, loc)}


def declaration_errors(model: Any, states: list[Any], fps: Any = None, limit: int = 40) -> tuple[list[str], int]:
    """Every way the model's action footprints disagree with what its actions do on `states`
    (at most `limit` messages), and the number of perturbed (state, action) pairs compared."""
    fps = fps or model.footprints
    step = successor_function(model, True)
    errors: list[str] = []
    compared = 0

    def enabled(s: Any) -> dict[Any, Any]:
        # keyed by (kind, action): actions of different kinds may be equal tuples
        out = {}
        for a in model.actions(s):
            t = step(s, a)
            if t is not None:
                out.setdefault((type(a), a), t)
        return out

    for i, s in enumerate(states):
        if len(errors) >= limit:
            break
        cap = fps.capacity(s)
        succ = enabled(s)
        dead = set(fps.dead(s)) if hasattr(fps, "dead") else set()
        for (_, a), t in succ.items():
            if fps.group_of(a) in dead:
                errors.append(f"{a!r} is enabled, but its group is declared dead")
            gone = dead - set(fps.dead(t)) if dead else set()
            if gone:
                errors.append(f"{sorted(gone)} declared dead, not after {a!r}: a dead group must stay dead")
            fp = fps.footprint(fps.group_of(a))
            if _expected(fps, s, t, fp.writes | fp.resets) != t:
                errors.append(f"{a!r} writes {sorted(_changed(fps, s, t) - fp.writes - fp.resets)} undeclared")
            for c, n in fps.capacity(t).items():
                if n > cap[c] and c not in fp.takes:
                    errors.append(f"{a!r} takes capacity {c} undeclared")
                if n < cap[c] and c not in fp.frees:
                    errors.append(f"{a!r} frees capacity {c} undeclared")
            for loc in fp.resets:
                if fps.get(t, loc) != fps.reset_value(loc):
                    errors.append(f"{a!r} sets {loc}, declared as only reset")
        for j, loc in enumerate(fps.locations):
            here = fps.get(s, loc)
            h = None
            for k in range(1, 6):  # a donor state that holds something else there
                d = states[(i + 7 * j + 13 * k) % len(states)]
                value = fps.get(d, loc)
                if value == here:
                    continue
                cand = fps.put(s, loc, value)
                try:
                    if fps.settled(cand):
                        h = cand
                        break
                except Exception:  # an inconsistent mix the model cannot settle: not a state it holds
                    continue
            if h is None:
                continue
            try:
                succ_h = enabled(h)
            except Exception:
                continue
            hcap = fps.capacity(h)
            for key in set(succ) | set(succ_h):
                a = key[1]
                fp = fps.footprint(fps.group_of(a))
                guard_count = any(hcap[c] != cap[c] for c in fp.reads_capacity)  # may decide enabledness
                if (fp.guard is not None and loc not in fp.guard and (key in succ) != (key in succ_h)
                        and not guard_count):
                    errors.append(f"{a!r}: enabled {key in succ} at a state, {key in succ_h} with {loc} changed: "
                                  f"its guard reads {loc}, undeclared")
                if loc in fp.reads or any(hcap[c] != cap[c] for c in fp.effect_capacity):
                    continue
                compared += 1
                if (key in succ) != (key in succ_h):
                    if not guard_count:
                        errors.append(f"{a!r}: enabled {key in succ} at a state, {key in succ_h} with {loc} changed "
                                      f"from {here!r} to {fps.get(h, loc)!r}: it reads {loc}, undeclared")
                elif key in succ and _expected(fps, h, succ[key], fp.writes | fp.resets) != succ_h[key]:
                    diff = _changed(fps, _expected(fps, h, succ[key], fp.writes | fp.resets), succ_h[key])
                    errors.append(f"{a!r}: its effect on {sorted(diff)} changes with {loc}: it reads {loc}, undeclared")
    return errors, compared


def property_errors(model: Any, states: list[Any], table: dict | None = None) -> list[str]:
    """Every invariant whose value changes with a location it does not declare (footprints' terms)."""
    fps = model.footprints
    table = table or fps.property_footprints()
    errors = []
    for p in model.properties:
        if p.kind != "always":
            continue
        reads = table[p.name]
        for i, s in enumerate(states):
            value = p.predicate(s)
            for j, loc in enumerate(fps.locations):
                if loc in reads:
                    continue
                d = states[(i + 11 * j + 3) % len(states)]
                h = fps.put(s, loc, fps.get(d, loc))
                try:
                    if p.predicate(h) != value:
                        errors.append(f"{p.name} reads {loc}, undeclared")
                        break
                except Exception:
                    continue
    return errors


CASES = [("replication", p) for p in REPLICATION.presets] + [("kraft", p) for p in KRAFT.presets]
# `voter-checks` (one election, one message in flight) enables few actions a state: its sample compares 229
MIN_COMPARED = {("kraft", "voter-checks"): 200}


def _model(name: str, preset: str) -> Any:
    return load_config(model=name, preset=preset).build()


@pytest.mark.parametrize("model_name, preset", CASES)
def test_every_action_footprint_holds_on_a_breadth_first_sample(model_name, preset):
    model = _model(model_name, preset)
    states = spread(bfs_sample(model, 6 * SAMPLE), SAMPLE)
    errors, compared = declaration_errors(model, states)
    assert errors == []
    assert compared > MIN_COMPARED.get((model_name, preset), 300)  # the perturbations compared something


@pytest.mark.parametrize("model_name, preset", CASES)
def test_every_invariant_reads_only_its_declared_locations(model_name, preset):
    model = _model(model_name, preset)
    states = spread(bfs_sample(model, 6 * SAMPLE), SAMPLE // 2)
    assert property_errors(model, states) == []


def test_a_wrong_action_declaration_is_caught():
    """Not vacuous: SendFetch declared without the follower's responses in flight (its guard waits
    for the last one) and without the capacity it takes, and a Produce declared as not writing
    the history, are each named."""
    model = _model("replication", "smoke")
    fps = model.footprints
    real = fps.footprint

    def wrong(group):
        fp = real(group)
        if group[0] == "SendFetch":
            return dataclasses.replace(fp, reads=fp.reads - {("fetch_responses", group[1])}, takes=frozenset())
        if group[0] == "Produce":
            return dataclasses.replace(fp, writes=frozenset(loc for loc in fp.writes if loc[0] != "history"))
        return fp

    class Wrong:
        def __getattr__(self, name):
            return getattr(fps, name)

        footprint = staticmethod(wrong)

    errors, _ = declaration_errors(model, spread(bfs_sample(model, 6 * SAMPLE), SAMPLE), Wrong(), limit=10_000)
    text = "\n".join(errors)
    assert "SendFetch" in text and "('fetch_responses', 1)" in text and "reads" in text
    assert "takes capacity" in text
    assert "Produce" in text and "('history', 'next_value')" in text


def test_a_wrong_property_declaration_is_caught():
    model = _model("replication", "smoke")
    table = dict(model.footprints.property_footprints())
    table["log_matching"] = frozenset(loc for loc in table["log_matching"] if loc[2:] != ("hw",))
    errors = property_errors(model, spread(bfs_sample(model, 6 * SAMPLE), SAMPLE // 2), table)
    assert any(e.startswith("log_matching reads ('broker', ") and "'hw')" in e for e in errors)
