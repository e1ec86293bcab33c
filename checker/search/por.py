"""Partial-order reduction for the one-process search (`kcheck check --por`): ample sets.

From the model's footprints (model/interface.py, `Footprint`; model/*/footprint.py) this derives
which action groups are *dependent* (one writes what the other reads or writes, or one changes
a capacity the other's guard compares with its bound) and which are *visible* (they write what
an invariant reads). At each state it expands an ample set instead of every enabled action: the
enabled actions of a stubborn closure (Valmari) of one invisible enabled group, when that set is
smaller than all of them. The four conditions (Clarke, Grumberg, Peled, "Model Checking", 10.5):

- C0: the set is empty only when nothing is enabled (a closure starts from an enabled group).
- C1: no action outside the set that depends on one inside can happen first. The closure adds,
  for every enabled group in it, every group dependent on it or that may enable it (its actions
  not enabled here are in the set too), and for every disabled one, every
  group that could enable it (writes what its guard reads), none for a group the model declares
  dead at this state (its budget spent: `footprints.dead`): a persistent set.
- C2: when the set is not everything, none of its actions is visible to an invariant.
- C3 (the cycle proviso, breadth first): when one of the set's successors has been seen
  already, the state is expanded in full. On any cycle the state reached last by an edge into
  the state of the cycle found first is then fully expanded, so no action is ignored forever.

Under these every invariant that fails somewhere fails on a reachable state of the reduced
search too (the reduced graph reaches a state where it fails), and every state it holds is a
state of the model, so a counterexample is a behaviour of the full model. What the reduction
does not preserve, the search reports apart: a sometimes-property unreached and an action kind
never enabled are claims about every reachable state, which the reduced search does not visit;
`explore(por=True)` then runs the full search to settle them (checker/search/run.py).
Coverage counts every enabled action of every state expanded, taken or not.
"""
from __future__ import annotations

import time
from typing import Any, Callable, Optional

from checker import stop
from checker.fingerprint import masked_fingerprint
from checker.search.checkpoint import RunDir
from checker.search.common import (INCOMPLETE, OK, VIOLATION, Invariants, Progress, Result, collector_paused, coverage,
                                   initial_level, record_initial, reduction_text, successor_function,
                                   violation_report)
from checker.search.frontier import UNLIMITED, Frontier
from checker.search.visited import FPSet
from model.interface import Footprint, Model


class NoFootprints(ValueError):
    """The model declares no footprints: it cannot be reduced."""


def dependent(a: Footprint, b: Footprint) -> bool:
    """Whether two groups' actions may fail to commute, or one may disable the other."""
    if a.writes & (b.reads | b.writes | b.resets) or b.writes & (a.reads | a.resets):
        return True
    if a.resets & b.reads or b.resets & a.reads:
        return True
    # raising a count may disable a guard that compares it with its bound, and changes an effect that
    # depends on it; lowering it only enables such a guard, but changes such an effect
    if a.takes & (b.reads_capacity | b.effect_capacity) or b.takes & (a.reads_capacity | a.effect_capacity):
        return True
    return bool(a.frees & b.effect_capacity or b.frees & a.effect_capacity)


def may_enable(a: Footprint, b: Footprint) -> bool:
    """Whether `a` may change what `b`'s guard reads (so `a` may enable `b`)."""
    return bool((a.writes | a.resets) & b.enabling or (a.takes | a.frees) & b.reads_capacity)


class AmpleSets:
    """The dependence relation, visibility and ample-set choice of one model configuration."""

    proviso = True  # C3; off only in the test that shows what it prevents

    def __init__(self, model: Model) -> None:
        fps = getattr(model, "footprints", None)
        if fps is None:
            raise NoFootprints(f"the {model.name} model declares no footprints")
        self.group_of = fps.group_of
        groups = fps.groups()
        self.index = {g: i for i, g in enumerate(groups)}
        prints = [fps.footprint(g) for g in groups]
        checked = {p.name for p in model.properties if p.kind == "always"}  # a selection's only
        seen: set[Any] = set()
        for name, locs in fps.property_footprints().items():
            if name in checked:
                seen |= locs
        self.visible = sum(1 << i for i, f in enumerate(prints) if (f.writes | f.resets) & seen)
        n = len(prints)
        self.enablers = [sum(1 << j for j in range(n) if may_enable(prints[j], prints[i])) for i in range(n)]
        # An enabled group's own disabled actions are in the closure too: what may enable them with it.
        self.dep = [sum(1 << j for j in range(n) if j == i or dependent(prints[i], prints[j])) | self.enablers[i]
                    for i in range(n)]
        self._chosen: dict[tuple[int, int], int] = {}
        self._dead = getattr(fps, "dead", None)
        self.groups = groups

    def dead_mask(self, s: Any) -> int:
        """The groups the model says no action can enable again from `s` (`footprints.dead`)."""
        index = self.index
        return sum(1 << index[g] for g in self._dead(s)) if self._dead is not None else 0

    def closure(self, seed: int, enabled: int, dead: int = 0) -> int:
        """The stubborn closure of group `seed`, or 0 when it takes in a visible enabled group.
        A disabled group takes in what may enable it, unless it is dead (nothing can)."""
        dep, enablers, visible = self.dep, self.enablers, self.visible
        members = 1 << seed
        todo = members
        while todo:
            low = todo & -todo
            todo ^= low
            i = low.bit_length() - 1
            new = (dep[i] if enabled & low else 0 if dead & low else enablers[i]) & ~members
            if new & enabled & visible:
                return 0
            members |= new
            todo |= new
        return members

    def choose(self, enabled: int, dead: int = 0) -> int:
        """The enabled groups to expand (a mask), for the masks of enabled and of dead groups: the
        smallest closure's, or `enabled` itself when no closure is smaller and invisible."""
        key = (enabled, dead)
        best = self._chosen.get(key)
        if best is not None:
            return best
        best = enabled
        count = bin(enabled).count("1")
        rest = enabled & ~self.visible
        while rest:
            low = rest & -rest
            rest ^= low
            members = self.closure(low.bit_length() - 1, enabled, dead)
            picked = members & enabled
            if members and picked != enabled and bin(picked).count("1") < count:
                best, count = picked, bin(picked).count("1")
                if count == 1:
                    break
        self._chosen[key] = best
        return best


@collector_paused
def search(model: Model, run: RunDir, max_states: int | None, progress: Callable[[Progress], None] | None,
           progress_every: float, reduce: bool, keep: int | None) -> Result:
    """The breadth-first search of checker/search/bfs.py with ample sets (no checkpoints)."""
    ample = AmpleSets(model)
    group_bit = {}
    index, group_of, choose, proviso, dead_mask = ample.index, ample.group_of, ample.choose, ample.proviso, ample.dead_mask
    broken = Invariants(model).broken
    pending = [(p.name, p.predicate) for p in model.properties if p.kind == "sometimes"]
    reached: dict[str, int] = {}
    actions = model.actions
    next_state = successor_function(model, reduce)
    fp_of = masked_fingerprint(model)
    limit = max_states if max_states is not None else -1
    type_counts: dict[type, int] = {}
    links = run.links
    spill_keep = UNLIMITED if keep is None else keep
    start = time.perf_counter()
    every = max(progress_every, 0.0)
    next_report = start + every
    outcome = OK
    bad_fp: Optional[int] = None
    bad_name = ""
    interrupted = False
    visited = FPSet()
    frontier = Frontier(run.spill(0) if keep is not None else None, spill_keep)
    next_level = frontier
    depth = level = expanded = index_in_level = 0
    reduced_states = 0

    first = initial_level(model, reduce, fp_of, limit)
    generated, outcome = first.generated, first.outcome
    record_initial(first, visited, links)
    for _, s, fp in first.states:
        frontier.append((s, fp))
    if first.bad is not None:
        _, bad_fp, bad_name = first.bad
    reached.update({name: 0 for name in first.reached})
    pending[:] = [item for item in pending if item[0] not in reached]

    try:
        while outcome == OK and len(frontier):
            level += 1
            next_level = Frontier(run.spill(level) if keep is not None else None, spill_keep)
            append = next_level.append
            index_in_level = 0
            for s, pfp in frontier:
                index_in_level += 1
                expanded += 1
                succ = []
                enabled = 0
                for a in actions(s):
                    t = next_state(s, a)
                    if t is None:
                        continue
                    kind = a.__class__
                    type_counts[kind] = type_counts.get(kind, 0) + 1
                    g = group_of(a)
                    bit = group_bit.get(g)
                    if bit is None:
                        i = index.get(g)
                        bit = group_bit[g] = -1 if i is None else 1 << i  # -1: undeclared, expand all
                    enabled |= bit
                    succ.append((bit, t))
                if enabled >= 0:
                    chosen = choose(enabled, dead_mask(s))
                    if chosen != enabled:
                        picked = [(t, fp_of(t)) for bit, t in succ if bit & chosen]
                        if proviso and any(fp in visited for _, fp in picked):
                            picked = [(t, fp_of(t)) for _, t in succ]  # C3: a successor seen already
                        else:
                            reduced_states += 1
                    else:
                        picked = [(t, fp_of(t)) for _, t in succ]
                else:
                    picked = [(t, fp_of(t)) for _, t in succ]
                for t, fp in picked:
                    generated += 1
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
                    for item in list(pending) if pending else ():
                        if item[1](t):
                            reached[item[0]] = level
                            pending.remove(item)
                    append((t, fp))
                if outcome != OK:
                    break
                if not expanded & 0x3FF:
                    stop.check()
                    if progress is not None:
                        now = time.perf_counter()
                        if now >= next_report:
                            next_report = now + every
                            queue = len(frontier) - index_in_level + len(next_level)
                            progress(Progress(len(visited), generated, depth, queue, now - start))
            if len(next_level) or outcome == VIOLATION:
                depth = level
            if outcome != OK:
                break
            frontier.close()
            frontier = next_level
    except KeyboardInterrupt:
        outcome, interrupted = INCOMPLETE, True
        if len(next_level) and level > depth:
            depth = level

    seconds = time.perf_counter() - start
    counts = {kind: 0 for kind in model.action_kinds}
    for kind_type, n in type_counts.items():
        counts[kind_type.__name__] = counts.get(kind_type.__name__, 0) + n
    violation = None
    if outcome == VIOLATION:
        assert bad_fp is not None
        violation = violation_report(model, bad_name, links.chain(bad_fp, level), fp_of, reduce)
    queue = 0 if outcome == OK else max(len(frontier) - index_in_level, 0) + len(next_level)
    frontier.close()
    next_level.close()
    never_enabled, disabled = coverage(model, counts)
    result = Result(
        result=outcome, distinct_states=len(visited), states_generated=generated, depth=depth, seconds=seconds,
        unreached=[name for name, _ in pending], never_enabled=never_enabled, disabled=disabled,
        action_counts=counts, violation=violation, interrupted=interrupted, max_states=max_states, queue=queue,
        reached=reached, reduction=reduction_text(model, reduce), digest=None, visited_bytes=visited.nbytes,
        por={"expanded": expanded, "reduced": reduced_states},
    )
    return result
