"""Guided simulation: multi-round random walks that restart from rarely reached abstract cells.

Plain walks all start in an initial state, so they spend most of their steps re-treading the
common early part of the state space and rarely string together the one interleaving a deep bug
needs. Guided mode (in the spirit of Go-Explore, Ecoffet et al. 2021, and of coverage-guided
fuzzers' corpora) runs the walks in rounds:

- round 0: ordinary walks from the initial states (exactly the walks `0 .. W-1` of a plain run);
- every walk maps each state it visits to an abstract *cell* (`Abstraction`), and the round's
  summary keeps, per cell, how many walks visited it and the shortest path reaching it, as
  action indices from an initial state;
- after each round the driver merges the cells into an archive and picks the next round's corpus:
  first the cells never picked before (fewest visits first), so every cell found is tried at least
  once and the search widens its frontier round by round; the rest drawn without replacement, with
  weight 1 / sqrt(1 + walks that visited the cell) / sqrt(1 + rounds it was picked before), so
  rare cells are favoured;
- walk `w` of round `r` (global id `r * W + w`) starts at the corpus entry picked by a stable hash
  of (seed, r, walk id) and continues at random from there (swarm weights allowed).

The search stops after the first round in which some walk broke an invariant, or after
`rounds` rounds. A violating walk is recorded as its entry's path followed by its own steps, so it
replays from an initial state (`checker.walks.walker.replay`) and is shrunk like any other walk.

Determinism: a walk's path is a function of (model, seed, walk id, depth, its start entry); cell
tables merge order-independently (counts summed, shortest path kept, ties by walk id); and the
corpus is a pure function of the archive and (seed, round), computed on the driver. So a seed
gives the same rounds, walks and report on any engine, process count or partition count.

The module imports no engine framework: an engine is a function running one `RoundPlan`.
"""
from __future__ import annotations

import hashlib
import heapq
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from checker.walks.abstraction import Abstraction  # noqa: F401 (the cell of a state, also named here)
from checker.walks.walker import RoundPlan, Start, Summary

DEFAULT_ROUNDS = 10
DEFAULT_CORPUS = 1024  # corpus entries per round (at most the number of walks per round: one start per walk)


@dataclass
class Cell:
    """What the archive knows of one cell: walks that visited it (all rounds), the shortest path
    reaching it (ties: the smaller walk id), and how many times it was picked into a corpus."""

    visits: int
    key: tuple[int, int]  # (path length, walk id)
    init_index: int
    path: tuple[int, ...]
    picked: int = 0


@dataclass
class Archive:
    cells: dict = field(default_factory=dict)  # cell -> Cell
    frontier: list | None = None  # novelty mode: a heap of (path length, u, cell) of cells never picked
    seed: int = 0

    def update(self, table: Mapping[Any, list]) -> int:
        """Merge a round's cell table; returns the number of cells never seen before."""
        new = 0
        for cell, (count, key, init_index, path) in table.items():
            c = self.cells.get(cell)
            if c is None:
                self.cells[cell] = Cell(count, key, init_index, tuple(path))
                new += 1
                if self.frontier is not None:
                    heapq.heappush(self.frontier, (len(path), _unit(f"kcheck-frontier:{self.seed}:{cell!r}"), cell))
            else:
                c.visits += count
                if key < c.key:
                    c.key, c.init_index, c.path = key, init_index, tuple(path)
        return new

    def frontier_corpus(self, seed: int, round_: int, size: int) -> tuple[Start, ...]:
        """Novelty mode: the `size` cells never picked with the shortest paths (when they were
        found; ties by a stable hash of the cell), breadth-first like BFS's queue, and once every
        cell has been picked, `corpus`'s weighted draw. Listed in cell order."""
        chosen = []
        while self.frontier and len(chosen) < size:
            cell = heapq.heappop(self.frontier)[2]
            if self.cells[cell].picked == 0:
                self.cells[cell].picked = 1
                chosen.append(cell)
        chosen.sort()
        starts = [Start(self.cells[cell].init_index, self.cells[cell].path) for cell in chosen]
        if len(starts) < size:
            starts += self.corpus(seed, round_, size - len(starts))
        return tuple(starts)

    def corpus(self, seed: int, round_: int, size: int) -> tuple[Start, ...]:
        """`size` cells: first those never picked before, fewest visits first (ties: u below),
        then, for the places left, cells drawn without replacement (Efraimidis-Spirakis: the
        largest log(u) / weight, u from a stable hash of (seed, round, cell)), weight
        1 / sqrt(1 + visits) / sqrt(1 + picked); listed in cell order. A pure function of the
        archive, the seed and the round."""
        fresh, keyed = [], []
        for cell, c in self.cells.items():
            u = _unit(f"kcheck-corpus:{seed}:{round_}:{cell!r}")
            if c.picked == 0:
                fresh.append((c.visits, -u, cell))
            else:
                weight = 1.0 / math.sqrt((1 + c.visits) * (1 + c.picked))
                keyed.append((math.log(u) / weight, cell))
        fresh.sort()
        chosen = [cell for _, _, cell in fresh[:size]]
        if len(chosen) < size:
            keyed.sort(key=lambda kc: (-kc[0], kc[1]))
            chosen += [cell for _, cell in keyed[:size - len(chosen)]]
        chosen.sort()
        for cell in chosen:
            self.cells[cell].picked += 1
        return tuple(Start(self.cells[cell].init_index, self.cells[cell].path) for cell in chosen)


def _unit(text: str) -> float:
    """A number in (0, 1] from 64 bits of blake2b: the same on every machine."""
    digest = hashlib.blake2b(text.encode(), digest_size=8).digest()
    return (int.from_bytes(digest, "big") + 1) / 2.0**64


RoundRunner = Callable[[RoundPlan, int], Summary]  # (plan, walks) -> the round's Summary
RoundProgress = Callable[["RoundInfo"], None]


@dataclass(frozen=True)
class RoundInfo:
    round: int
    rounds: int
    walks: int  # walks run so far, all rounds
    steps: int
    cells: int  # cells in the archive
    new_cells: int
    corpus: int  # entries the round's walks started from (0: initial states)
    violations: int  # invariants broken so far
    seconds: float


def run_guided(run_round: RoundRunner, seed: int, rounds: int, walks: int, *, corpus: int = DEFAULT_CORPUS,
               max_violations: int = 20, progress: RoundProgress | None = None,
               state_cells: bool = False, novelty: bool = False) -> tuple[Summary, dict[str, Any]]:
    """Run up to `rounds` rounds of `walks` walks through `run_round`; stop after the first round
    with a violation. Returns the merged Summary (walk ids are global: round r has ids
    r*walks .. (r+1)*walks - 1) and facts about the search: rounds run, cells, the round of the
    first violation. `state_cells`: a cell is a state (its fingerprint) instead of its abstraction,
    so the archive holds every distinct state visited with its shortest path. `novelty` (with
    `state_cells`): each round's walks prefer, at every step, a successor not in the archive as it
    stood when the round began (nor already on the walk), so they extend the frontier rather than
    re-tread it."""
    if rounds < 1 or walks < 1 or corpus < 1:
        raise ValueError("rounds, walks and corpus must be positive")
    if novelty and not state_cells:
        raise ValueError("novelty needs state cells")
    archive = Archive(frontier=[] if novelty else None, seed=seed)
    total = Summary(max_violations=max_violations)
    start = time.monotonic()
    entries: tuple[Start, ...] = ()
    found_in = None
    done = 0
    for r in range(rounds):
        plan = RoundPlan(r, r * walks, entries, state_cells, frozenset(archive.cells) if novelty else None)
        summary = run_round(plan, walks)
        new = archive.update(summary.cells)
        summary.cells = {}
        total.merge(summary)
        done = r + 1
        if progress is not None:
            progress(RoundInfo(r, rounds, total.walks, total.steps, len(archive.cells), new, len(entries),
                               len(total.violations), time.monotonic() - start))
        if total.violations:
            found_in = r
            break
        if r + 1 < rounds:
            size = min(corpus, walks)
            entries = archive.frontier_corpus(seed, r + 1, size) if novelty else archive.corpus(seed, r + 1, size)
    return total, {"rounds": done, "walks_per_round": walks, "corpus": min(corpus, walks),
                   "cells": len(archive.cells), "violation_round": found_in}
