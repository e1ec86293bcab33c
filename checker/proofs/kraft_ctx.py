"""What a fixed-size KRaft encoding reads of its configuration (`Ctx`), the action instances of
a configuration (`actions`), and the readings of a node's log that the invariants and the
derivation share (model/kraft/rules.py's, over kraft_state's layout).

The transition relation itself is derived from the model's Python (derive.py, derived.py); the
hand-written one it replaced is kept only as a test oracle (tests/oracles/kraft_next.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import z3

from checker.proofs.kraft_state import Layout
from checker.proofs.term import Sym, select, smin
from model.kraft import actions as A
from model.kraft.params import Params
from model.kraft.rules import NO_ID
from model.kraft.state import MESSAGE_NAMES
from model.kraft.variants import Protocol


@dataclass(frozen=True)
class Ctx:
    """The configuration and variant switches the actions read (model/kraft/quorum.Context)."""

    p: Params
    proto: Protocol
    layout: Layout

    @classmethod
    def of(cls, p: Params, variant: str) -> "Ctx":
        return cls(p, Protocol.of(variant), Layout.of(p))

    @property
    def n(self) -> int:
        return self.p.n

    @property
    def L(self) -> int:
        return self.p.max_log


# the handlers of a message, in the model's order of kinds
HANDLER_KINDS = (A.HandleVoteRequest, A.HandleVoteResponse, A.HandleBeginQuorumEpochRequest,
                 A.HandleBeginQuorumEpochResponse, A.HandleFetchRequest, A.HandleFetchResponse)


def actions(c: Ctx) -> list[Any]:
    """Every action instance of the configuration (the model's action values)."""
    n = c.n
    out: list[Any] = []
    pairs = c.layout.pairs()
    for i in range(n):
        out += [A.ElectionTimeout(i), A.FetchTimeout(i), A.CheckQuorumTimeout(i), A.ClientAppend(i)]
    out += [A.SendVote(i, j) for i, j in pairs]
    out += [A.SendBeginQuorumEpoch(i, j) for i, j in pairs]
    out += [A.SendFetch(i) for i in range(n)]
    for kind in HANDLER_KINDS:
        out += [kind(a, b) for a, b in pairs]
    out += [A.Restart(i) for i in range(n)] + [A.DiskLoss(i) for i in range(n)]
    out += [A.CutLink(a, b) for a, b in c.layout.links()] + [A.HealLink(a, b) for a, b in c.layout.links()]
    out += [A.DropMessage(name, a, b) for name in MESSAGE_NAMES for a, b in pairs]
    return out


def majority(n: int) -> int:
    return n // 2 + 1


# --- a node's log (model/kraft/rules.py) ---------------------------------------------------------


def last_epoch(c: Ctx, s: Sym, i: int) -> Any:
    """rules.last_epoch: the epoch of the last entry, 0 for an empty log."""
    leo = s[("leo", i)]
    return select([s[("lep", i, k)] for k in range(c.L)], leo - 1, z3.IntVal(0))


def end_offset_for_epoch(c: Ctx, s: Sym, i: int, epoch: Any) -> tuple[Any, Any]:
    """rules.end_offset_for_epoch over node i's log, as (offset, epoch)."""
    return log_end_offset_for_epoch(c, [s[("lep", i, k)] for k in range(c.L)], s[("leo", i)], epoch)


def log_end_offset_for_epoch(c: Ctx, eps: list[Any], length: Any, epoch: Any) -> tuple[Any, Any]:
    """rules.end_offset_for_epoch of a log given by its entry epochs and length, as (offset, epoch).

    The first offset whose epoch is above the one asked for starts the next larger cache entry;
    the epoch of the last offset at or below it is the floor entry's epoch (both hold for any
    log, monotonic or not)."""
    L = c.L
    above = [z3.And(k < length, eps[k] > epoch) for k in range(L)]
    higher_start: Any = z3.IntVal(NO_ID)
    for k in range(L - 1, -1, -1):
        higher_start = z3.If(above[k], k, higher_start)
    at_or_below = [z3.And(k < length, eps[k] <= epoch) for k in range(L)]
    floor: Any = z3.IntVal(NO_ID)
    for k in range(L):
        floor = z3.If(at_or_below[k], eps[k], floor)
    last = select(eps, length - 1, z3.IntVal(0))  # rules.last_epoch: 0 for an empty log
    has_higher = z3.Or(above) if above else z3.BoolVal(False)
    has_floor = z3.Or(at_or_below) if at_or_below else z3.BoolVal(False)
    cond_cache = z3.And(epoch >= 0, length > 0)
    off = z3.If(z3.And(cond_cache, last == epoch), length,
                z3.If(z3.And(cond_cache, has_higher), higher_start, length))
    ep = z3.If(z3.And(cond_cache, last == epoch), epoch,
               z3.If(z3.And(cond_cache, has_higher), z3.If(has_floor, floor, epoch), last))
    return off, ep


def truncation_offset(c: Ctx, s: Sym, i: int, div_off: Any, div_ep: Any) -> Any:
    """rules.truncation_offset."""
    leo = s[("leo", i)]
    local_off, local_ep = end_offset_for_epoch(c, s, i, div_ep)
    return z3.If(div_ep == 0, smin(div_off, leo),
                 z3.If(local_ep == div_ep, smin(local_off, div_off), local_off))
