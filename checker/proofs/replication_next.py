"""The replication transition relation in Z3: one function per action of
model/replication/{controller_actions,broker_actions,fault_actions}.py and one per pure rule of
controller.py and partition.py, transcribed branch by branch over the symbolic state of
replication_state. `step(ctx, s, action)` gives the action's guard and post-state (after
`state.compact`, as `ReplicationModel.next_state`); `actions(ctx)` lists every action instance.

Broker-indexed actions are the model's own values (`FenceBroker(broker=1)`, `Produce(leader=0,
value=0)`, `LossyCrash(broker=2, keep=0)`). A message action names the slot it reads and the
brokers the message names (`HandleFetchIn(slot=0, follower=1, leader=0)`), so every broker index
in a formula is a Python int; `concrete_action` turns it into the model's action (the message
itself) from a Z3 model. Where Python branches on a state value both branches are built and
merged (`ite`). Every variant switch of `Rules` is read where Python reads it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple, Sequence

import z3

from checker.proofs.replication_state import APREQ, APRESP, EMPTY, FREQ, FRESP, Layout, decode_message, _Eval
from checker.proofs.term import Step, Sym, at_least, count, ite, relation, select, smin
from model.replication import actions as A
from model.replication.params import Params
from model.replication.state import AP_ERRORS, F_DIVERGING, F_FENCED, F_NONE, F_NOT_LEADER, F_OUT_OF_RANGE, F_UNKNOWN
from model.replication.variants import Rules

T, F = z3.BoolVal(True), z3.BoolVal(False)
UNKNOWN = -1
NO_LEADER = -1
NO_CHANGE = -2  # PartitionChangeRecord: leader not set
AP_NONE = AP_ERRORS.index("NONE")
AP_STALE = AP_ERRORS.index("STALE_BROKER_EPOCH")
AP_NOT_CONTROLLER = AP_ERRORS.index("NOT_CONTROLLER")
AP_FENCED = AP_ERRORS.index("FENCED_LEADER_EPOCH")
AP_INVALID = AP_ERRORS.index("INVALID_REQUEST")
AP_VERSION = AP_ERRORS.index("INVALID_UPDATE_VERSION")
AP_INELIGIBLE = AP_ERRORS.index("INELIGIBLE_REPLICA")
AP_NEW_LEADER = len(AP_ERRORS)  # NEW_LEADER_ELECTED: not in AP_ERRORS (the model would raise)


# --- message actions (the model's carry the message; these name its slot) -------------------------


class HandleFetchIn(NamedTuple):
    slot: int
    follower: int
    leader: int


class HandleFetchResponseIn(NamedTuple):
    slot: int
    follower: int
    leader: int


class HandleAlterPartitionIn(NamedTuple):
    slot: int
    leader: int


class HandleAlterPartitionResponseIn(NamedTuple):
    slot: int
    leader: int


class DropMessageIn(NamedTuple):
    slot: int


@dataclass(frozen=True)
class Ctx:
    """The configuration and variant switches the actions read (model/replication/context.Context)."""

    p: Params
    r: Rules
    layout: Layout
    variant: str = "kafka-4.1"

    @classmethod
    def of(cls, p: Params, variant: str) -> "Ctx":
        return cls(p, Rules.of(variant), Layout.of(p), variant)

    @property
    def n(self) -> int:
        return self.p.n

    @property
    def L(self) -> int:
        return self.layout.L

    @property
    def M(self) -> int:
        return self.layout.M


def ok(s: Sym) -> Step:
    return Step(T, s)


# --- small helpers --------------------------------------------------------------------------------


def member(x: Any, bits: Sequence[Any]) -> Any:
    """x (a symbolic broker id) is in the set `bits`."""
    return z3.Or([z3.And(x == j, bits[j]) for j in range(len(bits))]) if bits else F


def lke_member(c: Ctx, x: Any, bits: Sequence[Any]) -> Any:
    """x (an id or -1) is in a LastKnownELR (bits 0..n-1, bit n = -1)."""
    return z3.Or(member(x, bits[: c.n]), z3.And(x == -1, bits[c.n]))


def nonempty(bits: Sequence[Any]) -> Any:
    return z3.Or(list(bits)) if bits else F


def same_set(a: Sequence[Any], b: Sequence[Any]) -> Any:
    return z3.And([x == y for x, y in zip(a, b)])


def bsel(c: Ctx, s: Sym, name: str, i: Any, default: Any) -> Any:
    """s[(name, i)] for a symbolic broker id i."""
    return select([s[(name, j)] for j in range(c.n)], i, default)


def bits_of(s: Sym, name: str, idx: tuple, size: int) -> list[Any]:
    return [s[(name, *idx, j)] for j in range(size)]


def set_bits(name: str, idx: tuple, bits: Sequence[Any]) -> dict:
    return {(name, *idx, j): b for j, b in enumerate(bits)}


# --- the network ------------------------------------------------------------------------------------


def in_flight(c: Ctx, s: Sym) -> Any:
    return count([s[("mk", m)] != EMPTY for m in range(c.M)])


def remove_slot(s: Sym, m: int) -> Sym:
    return s.set({("mk", m): z3.IntVal(EMPTY)})


def add_message(c: Ctx, s: Sym, fields: dict) -> Sym:
    """with_message: the message goes to the first empty slot (the model's multiset has no order).
    `fields` maps a field key without the slot (("mk",), ("mrep", k), ...) to its value."""
    u = {}
    earlier_full: list[Any] = []
    for m in range(c.M):
        here = z3.And(s[("mk", m)] == EMPTY, *[x for x in earlier_full])
        for key, v in fields.items():
            k = (key[0], m, *key[1:])
            u[k] = z3.If(here, v, s[k])
        earlier_full.append(s[("mk", m)] != EMPTY)
    return s.set(u)


# --- the controller's partition record --------------------------------------------------------------


def record_at(c: Ctx, s: Sym, p: Any) -> dict:
    """The record of partition epoch p (a symbolic index into the slots)."""
    P, n = c.layout.P, c.n

    def pick(name: str, *idx: int, default: Any) -> Any:
        return select([s[(name, q, *idx)] for q in range(P + 1)], p, default)

    return {
        "isr": [pick("c_isr", j, default=F) for j in range(n)],
        "elr": [pick("c_elr", j, default=F) for j in range(n)],
        "lke": [pick("c_lke", j, default=F) for j in range(n + 1)],
        "leader": pick("c_leader", default=z3.IntVal(NO_LEADER)),
        "le": pick("c_le", default=z3.IntVal(UNKNOWN)),
        "pe": p,
        "rec": pick("c_rec", default=F),
    }


def partition(c: Ctx, s: Sym) -> dict:
    return record_at(c, s, s[("c_latest",)])


def active(c: Ctx, s: Sym, r: int) -> Any:
    """controller._is_active (in_controlled_shutdown is never true in a state)."""
    return z3.Not(s[("fenced", r)])


def elect_leader(c: Ctx, reg: dict, t_isr: list, t_elr: list, acceptable: list, unclean_election: bool) -> tuple[Any, Any]:
    """controller.elect_leader (ONLINE / UNCLEAN; replicas are 0..n-1 in order): (winner, unclean)."""
    n = c.n
    isr_empty = z3.Not(nonempty(t_isr))
    valid = [z3.And(z3.Or(t_isr[r], z3.And(isr_empty, t_elr[r])), acceptable[r]) for r in range(n)]
    lke = reg["lke"]
    single = [z3.And(lke[j], *[z3.Not(lke[x]) for x in range(n + 1) if x != j]) for j in range(n + 1)]
    lkl = F
    if c.p.elr:
        lkl = z3.And(z3.Not(nonempty(t_elr)), isr_empty, z3.Or([z3.And(single[j], acceptable[j]) for j in range(n)]))
    lkl_winner: Any = z3.IntVal(NO_LEADER)
    for j in range(n - 1, -1, -1):
        lkl_winner = z3.If(lke[j], j, lkl_winner)
    winner: Any = z3.IntVal(NO_LEADER)
    unclean: Any = F
    if unclean_election:
        for r in range(n - 1, -1, -1):
            winner = z3.If(acceptable[r], r, winner)
            unclean = z3.If(acceptable[r], T, unclean)
    winner = z3.If(lkl, lkl_winner, winner)
    unclean = z3.If(lkl, T, unclean)
    for r in range(n - 1, -1, -1):
        winner = z3.If(valid[r], r, winner)
        unclean = z3.If(valid[r], F, unclean)
    leader_valid = member(reg["leader"], valid)
    return z3.If(leader_valid, reg["leader"], winner), z3.And(z3.Not(leader_valid), unclean)


def partition_change(c: Ctx, reg: dict, acceptable: list, target_isr: list | None = None,
                     unclean_shutdown: int | None = None, target_rec: Any = None,
                     unclean_election: bool = False) -> tuple[Any, dict]:
    """controller.partition_change (PartitionChangeBuilder.build + merge): (a record is written, the
    new registration). The registration's partition epoch is its slot, so only the fields change."""
    n = c.n
    elr_on = c.p.elr
    t_isr = list(reg["isr"]) if target_isr is None else list(target_isr)
    t_elr = list(reg["elr"])
    t_lke = list(reg["lke"])
    t_rec = reg["rec"] if target_rec is None else target_rec
    m = c.p.min_isr
    # maybePopulateTargetElr
    if elr_on:
        big = at_least(t_isr, m)
        cand = [z3.Or(t_elr[j], reg["isr"][j]) for j in range(n)]
        elr2 = [z3.And(cand[j], z3.Not(t_isr[j])) if j != unclean_shutdown else F for j in range(n)]
        cand2 = [z3.Or(cand[j], t_lke[j]) for j in range(n)] + [t_lke[n]]
        lke2 = [z3.And(cand2[j], z3.Not(t_isr[j]), z3.Not(elr2[j])) for j in range(n)] + [cand2[n]]
        t_elr = [z3.And(z3.Not(big), x) for x in elr2]
        t_lke = [z3.And(z3.Not(big), x) for x in lke2]
    # tryElection
    winner, unclean = elect_leader(c, reg, t_isr, t_elr, acceptable, unclean_election)
    moved = winner != reg["leader"]
    from_elr = z3.And(moved, member(winner, t_elr))
    t_isr = [z3.If(from_elr, winner == j, t_isr[j]) for j in range(n)]
    t_elr = [z3.If(from_elr, z3.And(t_elr[j], winner != j), t_elr[j]) for j in range(n)]
    isr_unclean = z3.And(moved, unclean)
    rec_unclean = z3.And(isr_unclean, z3.Not(reg["rec"]))
    # maybeUpdateRecordElr
    if elr_on:
        t_elr = [z3.And(z3.Not(isr_unclean), x) for x in t_elr]
        t_lke = [z3.And(z3.Not(isr_unclean), x) for x in t_lke]
    else:
        t_elr = [F] * n
    elr_set = z3.Not(same_set(t_elr, reg["elr"]))
    # the ISR (only with ELR enabled may it become empty)
    isr_set = z3.Or(isr_unclean, z3.And(z3.Or(nonempty(t_isr), T if elr_on else F),
                                          z3.Not(same_set(t_isr, reg["isr"]))))
    isr_val = [z3.If(isr_unclean, winner == j, t_isr[j]) for j in range(n)]
    # maybeUpdateLastKnownLeader
    lke_set: Any = F
    lke_val = list(reg["lke"])
    if elr_on:
        lead = reg["leader"]
        singleton = [lead == j for j in range(n)] + [lead == -1]
        is_leader_only = z3.And(nonempty(reg["lke"]), same_set(reg["lke"], singleton))
        c1 = z3.And(isr_set, z3.Not(nonempty(isr_val)), z3.Not(is_leader_only))
        field = z3.If(moved, winner, NO_CHANGE)
        c2 = z3.And(z3.Or(field >= 0, z3.And(lead != NO_LEADER, field != NO_LEADER)), nonempty(reg["lke"]))
        lke_set = z3.Or(c1, c2)
        lke_val = [z3.If(c1, singleton[j], F) for j in range(n + 1)]
    # the requested recovery state overrides the election's
    rec_req = t_rec != reg["rec"] if target_rec is not None else F
    rec_set = z3.Or(rec_unclean, rec_req)
    rec_val = z3.If(rec_req, t_rec, T)
    changed = z3.Or(moved, isr_set, elr_set, lke_set, rec_set)
    new = {
        "isr": [z3.If(isr_set, isr_val[j], reg["isr"][j]) for j in range(n)],
        "elr": [z3.If(elr_set, t_elr[j], reg["elr"][j]) for j in range(n)],
        "lke": [z3.If(lke_set, lke_val[j], reg["lke"][j]) for j in range(n + 1)],
        "leader": z3.If(moved, winner, reg["leader"]),
        "le": reg["le"] + z3.If(moved, 1, 0),
        "pe": reg["pe"] + 1,
        "rec": z3.If(rec_set, rec_val, reg["rec"]),
    }
    return changed, new


def write(c: Ctx, s: Sym, changed: Any, new: dict) -> tuple[Any, Sym]:
    """controller_actions.write: (allowed by the epoch bounds, the state with the record appended)."""
    allowed = z3.Or(z3.Not(changed), z3.And(new["le"] <= c.p.max_leader_epoch, new["pe"] <= c.p.max_partition_epoch))
    latest = s[("c_latest",)]
    u: dict = {("c_latest",): z3.If(changed, latest + 1, latest)}
    for q in range(c.layout.P + 1):
        here = z3.And(changed, latest + 1 == q)
        for j in range(c.n):
            u[("c_isr", q, j)] = z3.If(here, new["isr"][j], s[("c_isr", q, j)])
            u[("c_elr", q, j)] = z3.If(here, new["elr"][j], s[("c_elr", q, j)])
        for j in range(c.n + 1):
            u[("c_lke", q, j)] = z3.If(here, new["lke"][j], s[("c_lke", q, j)])
        u[("c_leader", q)] = z3.If(here, new["leader"], s[("c_leader", q)])
        u[("c_le", q)] = z3.If(here, new["le"], s[("c_le", q)])
        u[("c_rec", q)] = z3.If(here, new["rec"], s[("c_rec", q)])
    return allowed, s.set(u)


def leader_and_isr_update(c: Ctx, s: Sym, reg: dict, remove: int | None = None, add: int | None = None,
                          unclean_b: int | None = None) -> tuple[Any, dict]:
    """controller._leader_and_isr_update (generateLeaderAndIsrUpdates for one partition)."""
    n = c.n
    acceptable = [F if r in (remove, unclean_b) else (T if r == add else active(c, s, r)) for r in range(n)]
    gone = {remove, unclean_b}
    target = [F if j in gone else reg["isr"][j] for j in range(n)]
    return partition_change(c, reg, acceptable, target, unclean_shutdown=unclean_b, unclean_election=c.p.unclean)


def handle_broker_fenced(c: Ctx, s: Sym, reg: dict, b: int) -> tuple[Any, dict]:
    changed, new = leader_and_isr_update(c, s, reg, remove=b)
    return z3.And(reg["isr"][b], changed), new


def handle_broker_unclean_shutdown(c: Ctx, s: Sym, reg: dict, b: int) -> tuple[Any, dict]:
    if not c.p.elr or not c.r.unclean_shutdown_leaves_elr:
        return handle_broker_fenced(c, s, reg, b)
    changed, new = leader_and_isr_update(c, s, reg, unclean_b=b)
    return z3.And(z3.Or(reg["isr"][b], reg["elr"][b]), changed), new


# --- the leader epoch cache and the fetch rules (partition.py) ------------------------------------


def log_of(c: Ctx, s: Sym, i: int) -> tuple[list[Any], Any]:
    return [s[("lep", i, k)] for k in range(c.L)], s[("leo", i)]


def epoch_cache(c: Ctx, eps: list[Any], leo: Any, current: tuple[Any, Any] | None = None) -> list[tuple[Any, Any, Any]]:
    """partition._epoch_cache as (present, epoch, start) entries in cache order: the log's entry k is
    in the cache iff it starts a run of its epoch and every later entry has a larger epoch, or
    the same epoch with no other epoch between (LeaderEpochFileCache.assign drops entries with
    an epoch >= a new one); then the `current` entry is assigned the same way."""
    L = c.L
    entries = []
    for k in range(L):
        conds = [k < leo]
        if k > 0:
            conds.append(eps[k - 1] != eps[k])
        for j in range(k + 1, L):
            run = z3.And([eps[x] == eps[k] for x in range(k + 1, j)])
            conds.append(z3.Implies(j < leo, z3.Or(eps[j] > eps[k], z3.And(eps[j] == eps[k], run))))
        entries.append((z3.And(conds), eps[k], z3.IntVal(k)))
    if current is None:
        return entries
    ce, cs = current
    top_ep = select(eps, leo - 1, z3.IntVal(UNKNOWN))
    top_start: Any = z3.IntVal(UNKNOWN)
    for pres, _, start in entries:
        top_start = z3.If(pres, start, top_start)
    applies = z3.And(ce >= 0, cs >= 0)
    skip = z3.And(leo > 0, top_ep == ce, cs >= top_start)
    add = z3.And(applies, z3.Not(skip))
    kept = [(z3.And(pres, z3.Or(z3.Not(add), z3.And(ep < ce, start < cs))), ep, start) for pres, ep, start in entries]
    return kept + [(add, ce, cs)]


def end_offset_for(entries: list[tuple[Any, Any, Any]], requested: Any, leo: Any, floor_epoch: bool) -> tuple[Any, Any]:
    """partition._end_offset_for over cache entries (increasing epochs and starts): (epoch, offset)."""
    last_ep: Any = z3.IntVal(UNKNOWN)
    for pres, ep, _ in entries:
        last_ep = z3.If(pres, ep, last_ep)
    nonempty_cache = z3.Or([pres for pres, _, _ in entries]) if entries else F
    higher = [z3.And(pres, ep > requested) for pres, ep, _ in entries]
    has_higher = z3.Or(higher) if entries else F
    higher_start: Any = z3.IntVal(UNKNOWN)
    for (pres, ep, start), h in reversed(list(zip(entries, higher))):
        higher_start = z3.If(h, start, higher_start)
    at_or_below = [z3.And(pres, ep <= requested) for pres, ep, _ in entries]
    has_floor = z3.Or(at_or_below) if entries else F
    floor_ep: Any = z3.IntVal(UNKNOWN)
    for (pres, ep, _), f in zip(entries, at_or_below):
        floor_ep = z3.If(f, ep, floor_ep)
    undefined = z3.Or(requested == -1, z3.And(z3.Not(z3.And(nonempty_cache, last_ep == requested)), z3.Not(has_higher)))
    latest = z3.And(requested != -1, nonempty_cache, last_ep == requested)
    ep_ans = requested if not floor_epoch else z3.If(has_floor, floor_ep, requested)
    epoch = z3.If(latest, requested, z3.If(undefined, -1, ep_ans))
    offset = z3.If(latest, leo, z3.If(undefined, -1, higher_start))
    return epoch, offset


def fetch_divergence(c: Ctx, s: Sym, l: int, fetch_offset: Any, lfe: Any) -> tuple[Any, Any, Any, Any, Any]:
    """partition.fetch_divergence at leader l: (none, out of range, diverging, epoch, end offset)."""
    eps, leo = log_of(c, s, l)
    cache = epoch_cache(c, eps, leo, (s[("le", l)], s[("leso", l)]))
    epoch, end = end_offset_for(cache, lfe, leo, c.r.epoch_lookup_floor)
    checked = lfe >= 0
    oor = z3.And(checked, z3.Or(end == -1, epoch == -1, fetch_offset < 0))
    div = z3.And(checked, z3.Not(oor), z3.Or(epoch < lfe, end < fetch_offset))
    none = z3.And(z3.Not(oor), z3.Not(div))
    return none, oor, div, epoch, end


def follower_truncation(c: Ctx, s: Sym, f: int, de: Any, do: Any) -> Any:
    """partition.follower_truncation (the offset; no current entry, fetch offset = LEO)."""
    eps, leo = log_of(c, s, f)
    epoch, end = end_offset_for(epoch_cache(c, eps, leo), de, leo, True)

    def clamp(x: Any) -> Any:
        y = smin(x, leo)
        return z3.If(y < 0, 0, y)

    return z3.If(do == -1, clamp(leo), z3.If(de == -1, clamp(do), z3.If(end == -1, clamp(do), z3.If(
        epoch != de, clamp(end), clamp(smin(end, do))))))


def out_of_range_truncation(leo: Any, leader_end: Any) -> Any:
    return z3.If(z3.And(leader_end >= 0, leader_end < leo), leader_end, leo)


def response_truncation(c: Ctx, s: Sym, m: int, f: int) -> Any:
    """The offset follower f truncates to on the diverging or OFFSET_OUT_OF_RANGE response in slot m."""
    return z3.If(s[("merr", m)] == F_DIVERGING, follower_truncation(c, s, f, s[("mde", m)], s[("mdo", m)]),
                 out_of_range_truncation(s[("leo", f)], s[("mhw", m)]))


# --- broker rules (broker_actions.py) ---------------------------------------------------------------


def isr_bits(s: Sym, i: int, n: int) -> list[Any]:
    return bits_of(s, "isr", (i,), n)


def pend_bits(s: Sym, i: int, n: int) -> list[Any]:
    return bits_of(s, "pend", (i,), n)


def eligible(c: Ctx, s: Sym, f: int, broker_epoch: Any) -> Any:
    """isr_eligible / isr_eligible_without_fencing (variant R8)."""
    if c.r.member_fenced_check:
        return z3.And(z3.Not(s[("fenced", f)]), s[("rep", f)] == broker_epoch)
    return s[("rep", f)] == broker_epoch


def maximal_isr(c: Ctx, s: Sym, b: int) -> list[Any]:
    return [z3.Or(s[("isr", b, j)], s[("pend", b, j)]) for j in range(c.n)]


def waited_for(c: Ctx, s: Sym, b: int) -> list[Any]:
    """broker_actions.waited_for: outside the maximal ISR, caught up and ISR-eligible."""
    maximal = maximal_isr(c, s, b)
    leo = s[("leo", b)]
    return [F if f == b else z3.And(z3.Not(maximal[f]), z3.Or(s[("fcu", b, f)], s[("fleo", b, f)] == leo),
                                    eligible(c, s, f, s[("fep", b, f)])) for f in range(c.n)]


def live_pending(c: Ctx, s: Sym) -> Sym:
    """broker_actions.live_pending: a produce whose leader crashed or left its epoch fails."""
    u = {}
    for v in range(c.layout.V):
        lead, le = s[("hpl", v)], s[("hple", v)]
        alive = z3.Or([z3.And(lead == j, s[("alive", j)], s[("leader", j)] == j, s[("le", j)] == le)
                       for j in range(c.n)])
        u[("hp", v)] = z3.And(s[("hp", v)], alive)
    return s.set(u)


def leader_progress(c: Ctx, s: Sym, b: int) -> Sym:
    """broker_actions.leader_progress: leader_hw, acks, and the exposed prefix."""
    n, L = c.n, c.L
    acting = z3.And(s[("alive", b)], s[("leader", b)] == b)
    leo, hw = s[("leo", b)], s[("hw", b)]
    isr = isr_bits(s, b, n)
    if c.r.hw_maximal_isr:
        maximal, caught = maximal_isr(c, s, b), waited_for(c, s, b)
    else:
        maximal, caught = isr, [F] * n
    cand = leo
    for j in range(n):
        if j == b:
            continue
        counted = z3.Or(maximal[j], caught[j])
        fl = s[("fleo", b, j)]
        cand = z3.If(z3.And(counted, fl < cand), fl, cand)
    moved = z3.If(cand > hw, cand, hw)
    new_hw = z3.If(count(isr) < c.p.min_isr, hw, moved) if c.r.strict_min_isr else moved
    changed = new_hw != hw
    enough = at_least(maximal, c.p.min_isr)
    u: dict = {("hw", b): new_hw}
    for v in range(c.layout.V):
        done = z3.And(changed, s[("hp", v)], s[("hpl", v)] == b, s[("hple", v)] == s[("le", b)],
                      s[("hpoff", v)] < new_hw)
        u[("acked", v)] = z3.Or(s[("acked", v)], z3.And(done, enough))
        u[("hp", v)] = z3.And(s[("hp", v)], z3.Not(done))
    readable = smin(new_hw, leo)
    elen = s[("elen",)]
    prefix = z3.And([z3.Implies(k < elen, z3.And(s[("lep", b, k)] == s[("eep", k)], s[("lval", b, k)] == s[("eval", k)]))
                     for k in range(L)])
    grow = z3.And(readable > elen, prefix)
    u[("elen",)] = z3.If(grow, readable, elen)
    for k in range(L):
        u[("eep", k)] = z3.If(z3.And(grow, k < readable), s[("lep", b, k)], s[("eep", k)])
        u[("eval", k)] = z3.If(z3.And(grow, k < readable), s[("lval", b, k)], s[("eval", k)])
    return ite(acting, s.set(u), s)


def unknown_followers(c: Ctx, b: int) -> dict:
    u = {}
    for j in range(c.n):
        u[("fleo", b, j)] = z3.IntVal(UNKNOWN)
        u[("fep", b, j)] = z3.IntVal(UNKNOWN)
        u[("fcu", b, j)] = F
    return u


def apply_registration(c: Ctx, s: Sym, b: int, reg: dict) -> Sym:
    """broker_actions.apply_registration: become_leader / become_follower, unless the record is older."""
    n = c.n
    none_bits = {**set_bits("pend", (b,), [F] * n)}
    # become_leader
    new_epoch = z3.Or(reg["le"] > s[("le", b)], s[("leader", b)] != b)
    lead_new = s.set({("leader", b): z3.IntVal(b), ("le", b): reg["le"], ("pe", b): reg["pe"],
                      **set_bits("isr", (b,), reg["isr"]), **none_bits, ("leso", b): s[("leo", b)],
                      **unknown_followers(c, b)})
    lead_same = s.set({("pe", b): reg["pe"], **set_bits("isr", (b,), reg["isr"]), **none_bits})
    leader = ite(new_epoch, lead_new, lead_same)
    # become_follower
    follower = s.set({("leader", b): reg["leader"], ("le", b): reg["le"], ("pe", b): reg["pe"],
                      **set_bits("isr", (b,), [F] * n), **none_bits, ("leso", b): z3.IntVal(UNKNOWN),
                      **unknown_followers(c, b)})
    if not c.r.truncate_by_epoch:  # variant truncate-to-hw (R1)
        follower = ite(reg["le"] > s[("le", b)], follower.set({("leo", b): smin(s[("leo", b)], s[("hw", b)])}), follower)
    return ite(reg["pe"] < s[("pe", b)], s, ite(reg["leader"] == b, leader, follower))


def replay_metadata(c: Ctx, s: Sym, b: int) -> Step:
    guard = z3.And(s[("alive", b)], s[("meta", b)] < s[("c_latest",)])
    reg = record_at(c, s, s[("meta", b)] + 1)
    t = apply_registration(c, s.set({("meta", b): s[("meta", b)] + 1}), b, reg)
    return Step(guard, leader_progress(c, live_pending(c, t), b))


def last_entry_epoch(c: Ctx, s: Sym, f: int) -> Any:
    """The leader epoch of f's last log entry, UNKNOWN for an empty log."""
    eps, leo = log_of(c, s, f)
    return select(eps, leo - 1, z3.IntVal(UNKNOWN))


def last_fetched_epoch(c: Ctx, s: Sym, f: int) -> Any:
    """The last fetched epoch `f` sends (broker_actions.send_fetch): its last entry's leader epoch,
    UNKNOWN for an empty log or without KIP-101."""
    return last_entry_epoch(c, s, f) if c.r.truncate_by_epoch else z3.IntVal(UNKNOWN)


def send_fetch(c: Ctx, s: Sym, f: int) -> Step:
    """broker_actions.send_fetch."""
    leader = s[("leader", f)]
    guard = [s[("alive", f)], leader != NO_LEADER, leader != f, bsel(c, s, "alive", leader, F),
             in_flight(c, s) < c.M]
    for m in range(c.M):
        guard.append(z3.Not(z3.And(s[("mk", m)] == FREQ, s[("ma", m)] == f, s[("mbe", m)] == s[("bepoch", f)],
                                   s[("mle", m)] == s[("le", f)])))
        guard.append(z3.Not(z3.And(s[("mk", m)] == FRESP, s[("ma", m)] == f, s[("mle", m)] == s[("le", f)])))
    t = add_message(c, s, {("mk",): z3.IntVal(FREQ), ("ma",): z3.IntVal(f), ("mb",): leader,
                           ("mbe",): s[("bepoch", f)], ("mle",): s[("le", f)], ("moff",): s[("leo", f)],
                           ("mlfe",): last_fetched_epoch(c, s, f)})
    return Step(z3.And(guard), t)


def fetch_again(c: Ctx, s: Sym, f: int) -> Sym:
    st = send_fetch(c, s, f)
    return ite(st.guard, st.post, s)


def send_alter_partition(c: Ctx, s: Sym, b: int, proposed: list[Any]) -> Sym:
    """broker_actions._send_alter_partition: every member's broker epoch as the leader saw it."""
    fields: dict = {("mk",): z3.IntVal(APREQ), ("ma",): z3.IntVal(b), ("mbe",): s[("bepoch", b)],
                    ("mle",): s[("le", b)], ("moff",): s[("pe", b)], ("mrecov",): F}
    for j in range(c.n):
        fields[("mnis", j)] = proposed[j]
        fields[("mnie", j)] = s[("bepoch", b)] if j == b else s[("fep", b, j)]
    t = s.set(set_bits("pend", (b,), proposed))
    return add_message(c, t, fields)


def record_position(c: Ctx, s: Sym, l: int, f: int, fetch_offset: Any, broker_epoch: Any) -> Sym:
    """broker_actions._record_position, then _maybe_expand_isr."""
    caught = z3.Or(s[("fcu", l, f)], fetch_offset >= s[("leo", l)])
    s = s.set({("fleo", l, f): fetch_offset, ("fep", l, f): broker_epoch, ("fcu", l, f): caught})
    room = in_flight(c, s) + 1 < c.M
    can = [z3.Not(nonempty(pend_bits(s, l, c.n))), eligible(c, s, f, broker_epoch), fetch_offset >= s[("hw", l)]]
    if c.r.check_leso:
        can += [s[("leso", l)] >= 0, fetch_offset >= s[("leso", l)]]
    expand = z3.And(z3.Not(s[("isr", l, f)]), room, *can)
    proposed = [T if j == f else s[("isr", l, j)] for j in range(c.n)]
    return ite(expand, send_alter_partition(c, s, l, proposed), s)


def handle_fetch(c: Ctx, s: Sym, m: int, f: int, l: int) -> Step:
    """broker_actions.handle_fetch for the Fetch request in slot m, from f to l."""
    guard = z3.And(s[("mk", m)] == FREQ, s[("ma", m)] == f, s[("mb", m)] == l, s[("alive", l)])
    be, rle, fo, lfe = s[("mbe", m)], s[("mle", m)], s[("moff", m)], s[("mlfe", m)]
    s1 = remove_slot(s, m)
    not_leader = s[("leader", l)] != l
    fenced_e = rle < s[("le", l)] if c.r.current_leader_epoch else F
    unknown_e = rle > s[("le", l)] if c.r.current_leader_epoch else F
    refused = z3.Or(not_leader, fenced_e, unknown_e)
    dnone, door, ddiv, de, do = fetch_divergence(c, s, l, fo, lfe)
    leo_l = s[("leo", l)]
    oor = z3.And(z3.Not(refused), z3.Or(door, z3.And(dnone, fo > leo_l)))
    div = z3.And(z3.Not(refused), z3.Not(oor), ddiv)
    served = z3.And(z3.Not(refused), z3.Not(oor), z3.Not(div))
    stale = z3.And(be != UNKNOWN, z3.Not(s[("fenced", f)]), s[("rep", f)] > be) if c.r.stale_fetch_check else F
    ok_ = z3.And(served, z3.Not(stale))
    err = z3.If(not_leader, F_NOT_LEADER, z3.If(fenced_e, F_FENCED, z3.If(unknown_e, F_UNKNOWN, z3.If(
        oor, F_OUT_OF_RANGE, z3.If(div, F_DIVERGING, z3.If(stale, F_NOT_LEADER, F_NONE))))))
    record = z3.Or(ok_, div) if not c.r.skip_position_on_divergence else ok_
    t = ite(record, record_position(c, s1, l, f, fo, be), s1)
    fields: dict = {("mk",): z3.IntVal(FRESP), ("ma",): z3.IntVal(f), ("mb",): z3.IntVal(l), ("mle",): rle,
                    ("moff",): fo, ("merr",): err, ("mde",): z3.If(div, de, UNKNOWN), ("mdo",): z3.If(div, do, UNKNOWN),
                    ("mhw",): z3.If(oor, leo_l, z3.If(z3.Or(div, ok_), s[("hw", l)], UNKNOWN)),
                    ("mrlen",): z3.If(ok_, leo_l - fo, 0)}
    eps, _ = log_of(c, s, l)
    vals = [s[("lval", l, k)] for k in range(c.L)]
    for k in range(c.L):
        fields[("mrep", k)] = select(eps, fo + k, z3.IntVal(UNKNOWN))
        fields[("mrval", k)] = select(vals, fo + k, z3.IntVal(UNKNOWN))
    connected = z3.And(s[("alive", f)], s[("bepoch", f)] == be)
    t = ite(connected, add_message(c, t, fields), t)
    return Step(guard, leader_progress(c, t, l))


def shrink_isr(c: Ctx, s: Sym, b: int, f: int) -> Step:
    guard = z3.And(s[("alive", b)], s[("leader", b)] == b, s[("isr", b, f)], z3.Not(nonempty(pend_bits(s, b, c.n))),
                   s[("fleo", b, f)] < s[("leo", b)], in_flight(c, s) < c.M)
    t = s.set({("fcu", b, f): F})
    proposed = [F if j == f else s[("isr", b, j)] for j in range(c.n)]
    return Step(guard, send_alter_partition(c, t, b, proposed))


def handle_fetch_response(c: Ctx, s: Sym, m: int, f: int, l: int) -> Step:
    guard = z3.And(s[("mk", m)] == FRESP, s[("ma", m)] == f, s[("mb", m)] == l, s[("alive", f)])
    s1 = remove_slot(s, m)
    leo, hw = s[("leo", f)], s[("hw", f)]
    moved_on = z3.Or(s[("leader", f)] != l, s[("le", f)] != s[("mle", m)], leo != s[("moff", m)])
    err = s[("merr", m)]
    off = response_truncation(c, s, m, f)
    truncated = s1.set({("leo", f): off, ("hw", f): smin(hw, off)})
    rlen = s[("mrlen", m)]
    u: dict = {("leo", f): leo + rlen}
    recs_e = [s[("mrep", m, k)] for k in range(c.L)]
    recs_v = [s[("mrval", m, k)] for k in range(c.L)]
    for k in range(c.L):
        u[("lep", f, k)] = z3.If(k < leo, s[("lep", f, k)], select(recs_e, k - leo, s[("lep", f, k)]))
        u[("lval", f, k)] = z3.If(k < leo, s[("lval", f, k)], select(recs_v, k - leo, s[("lval", f, k)]))
    u[("hw", f)] = smin(s[("mhw", m)], leo + rlen)
    appended = s1.set(u)
    t = ite(moved_on, s1, ite(z3.Or(err == F_DIVERGING, err == F_OUT_OF_RANGE), truncated,
                              ite(err == F_NONE, appended, s1)))
    return Step(guard, fetch_again(c, t, f))


def handle_alter_partition_response(c: Ctx, s: Sym, m: int, l: int) -> Step:
    n = c.n
    err = s[("merr", m)]
    guard = [s[("mk", m)] == APRESP, s[("ma", m)] == l, s[("alive", l)]]
    if c.r.metadata_before_response:
        guard.append(z3.Not(z3.And(err == AP_NONE, s[("meta", l)] < s[("mr_pe", m)])))
    s1 = remove_slot(s, m)
    proposed = bits_of(s, "mnis", (m,), n)
    mismatch = z3.Or(s[("leader", l)] != l, z3.Not(same_set(pend_bits(s, l, n), proposed)),
                     s[("le", l)] != s[("mle", m)], s[("pe", l)] != s[("moff", m)])
    none_ok = z3.And(err == AP_NONE, s[("mr_le", m)] == s[("le", l)], s[("mr_pe", m)] >= s[("pe", l)])
    applied = z3.And(z3.Not(mismatch), z3.Or(err == AP_INELIGIBLE, none_ok))
    cleared = {**set_bits("pend", (l,), [F] * n)}
    t = ite(err == AP_INELIGIBLE, s1.set(cleared),
            s1.set({**cleared, **set_bits("isr", (l,), bits_of(s, "mr_isr", (m,), n)), ("pe", l): s[("mr_pe", m)]}))
    return Step(z3.And(guard), ite(applied, leader_progress(c, t, l), s1))


def produce(c: Ctx, s: Sym, b: int, v: int) -> Step:
    guard = z3.And(s[("alive", b)], s[("leader", b)] == b, s[("next",)] == v,
                   at_least(isr_bits(s, b, c.n), c.p.min_isr))
    leo, le = s[("leo", b)], s[("le", b)]
    u: dict = {("leo", b): leo + 1, ("next",): z3.IntVal(v + 1), ("hp", v): T, ("hpl", v): z3.IntVal(b),
               ("hple", v): le, ("hpoff", v): leo}
    for k in range(c.L):
        u[("lep", b, k)] = z3.If(leo == k, le, s[("lep", b, k)])
        u[("lval", b, k)] = z3.If(leo == k, v, s[("lval", b, k)])
    return Step(guard, leader_progress(c, s.set(u), b))


# --- controller actions -------------------------------------------------------------------------


def fault_left(c: Ctx, s: Sym) -> z3.BoolRef:
    """Params.fault_left: the joint budget `max_faults` allows one more counted fault."""
    if c.p.max_faults < 0:
        return z3.BoolVal(True)
    counted = s[("crashes",)]
    if c.p.fences >= 0:
        counted = counted + s[("fences",)]
    if c.p.losses >= 0:
        counted = counted + s[("losses",)]
    return counted < c.p.max_faults


def fence_broker(c: Ctx, s: Sym, b: int) -> Step:
    alive = s[("alive", b)]
    guard = [z3.Not(s[("fenced", b)])]
    if c.p.fences >= 0:
        guard.append(z3.Not(z3.And(alive, s[("fences",)] >= c.p.fences)))
    if c.p.max_faults >= 0:
        guard.append(z3.Not(z3.And(alive, z3.Not(fault_left(c, s)))))
    if c.r.no_fence_with_stale_fetch:
        queued = z3.Or([z3.And(s[("mk", m)] == FREQ, s[("ma", m)] == b, s[("mbe", m)] < s[("rep", b)])
                        for m in range(c.M)])
        guard.append(z3.Not(z3.And(alive, queued)))
    t = s.set({("fenced", b): T})
    if c.p.fences >= 0:
        t = t.set({("fences",): s[("fences",)] + z3.If(alive, 1, 0)})
    changed, new = handle_broker_fenced(c, t, partition(c, t), b)
    allowed, t = write(c, t, changed, new)
    return Step(z3.And(*guard, allowed), t)


def unfence_broker(c: Ctx, s: Sym, b: int) -> Step:
    guard = z3.And(s[("fenced", b)], s[("alive", b)], s[("rep", b)] == s[("bepoch", b)])
    t = s.set({("fenced", b): F})
    reg = partition(c, t)
    changed, new = leader_and_isr_update(c, t, reg, add=b)
    changed = z3.And(reg["leader"] == NO_LEADER, changed)
    allowed, t = write(c, t, changed, new)
    return Step(z3.And(guard, allowed), t)


def handle_alter_partition(c: Ctx, s: Sym, m: int, l: int) -> Step:
    """controller_actions.handle_alter_partition (validate_alter_partition + alter_partition)."""
    n = c.n
    guard = z3.And(s[("mk", m)] == APREQ, s[("ma", m)] == l)
    s1 = remove_slot(s, m)
    cur = partition(c, s1)
    be, le, pe, recov = s[("mbe", m)], s[("mle", m)], s[("moff", m)], s[("mrecov", m)]
    ids = bits_of(s, "mnis", (m,), n)
    latest = s[("c_latest",)]
    bad_member = []
    for j in range(n):
        checks = []
        if c.r.member_fenced_check:
            checks.append(s[("fenced", j)])
        if c.r.member_broker_epochs:
            checks.append(z3.And(s[("mnie", m, j)] != -1, s[("rep", j)] != s[("mnie", m, j)]))
        bad_member.append(z3.And(ids[j], z3.Or(checks)) if checks else F)
    error = z3.If(s[("rep", l)] != be, AP_STALE,
            z3.If(le > cur["le"], AP_NOT_CONTROLLER,
            z3.If(pe > latest, AP_NOT_CONTROLLER,
            z3.If(le < cur["le"], AP_FENCED,
            z3.If(cur["leader"] != l, AP_INVALID,
            z3.If(pe < latest, AP_VERSION,
            z3.If(z3.Not(member(cur["leader"], ids)), AP_INVALID,
            z3.If(z3.And(recov, at_least(ids, 2)), AP_INVALID,
            z3.If(z3.And(z3.Not(cur["rec"]), recov), AP_INVALID,
            z3.If(z3.Or(bad_member), AP_INELIGIBLE, AP_NONE))))))))))
    acceptable = [active(c, s1, r) for r in range(n)]
    changed, new = partition_change(c, cur, acceptable, ids, target_rec=recov, unclean_election=False)
    changed = z3.And(error == AP_NONE, changed)
    error = z3.If(z3.And(changed, new["le"] != cur["le"], new["leader"] != l), AP_NEW_LEADER, error)
    allowed, t = write(c, s1, changed, new)
    answer = partition(c, t)
    fields: dict = {("mk",): z3.IntVal(APRESP), ("ma",): z3.IntVal(l), ("mbe",): be, ("mle",): le, ("moff",): pe,
                    ("mrecov",): recov, ("merr",): error, ("mhas",): error == AP_NONE,
                    ("mr_leader",): answer["leader"], ("mr_le",): answer["le"], ("mr_pe",): answer["pe"],
                    ("mr_rec",): answer["rec"]}
    for j in range(n):
        fields[("mnis", j)] = ids[j]
        fields[("mnie", j)] = s[("mnie", m, j)]
        fields[("mr_isr", j)] = answer["isr"][j]
        fields[("mr_elr", j)] = answer["elr"][j]
    for j in range(n + 1):
        fields[("mr_lke", j)] = answer["lke"][j]
    return Step(z3.And(guard, allowed), add_message(c, t, fields))


# --- faults ---------------------------------------------------------------------------------------


def go_down(c: Ctx, s: Sym, b: int, clean: Any) -> Sym:
    """fault_actions._go_down: only the disk survives; messages to b are lost."""
    n = c.n
    u: dict = {("alive", b): F, ("clean", b): clean, ("meta", b): z3.IntVal(UNKNOWN), ("leader", b): z3.IntVal(UNKNOWN),
               ("le", b): z3.IntVal(UNKNOWN), ("pe", b): z3.IntVal(UNKNOWN), ("leso", b): z3.IntVal(UNKNOWN),
               **set_bits("isr", (b,), [F] * n), **set_bits("pend", (b,), [F] * n), **unknown_followers(c, b),
               ("crashes",): s[("crashes",)] + 1}
    for m in range(c.M):
        k, a, lead = s[("mk", m)], s[("ma", m)], s[("mb", m)]
        lost = z3.Or(z3.And(k == FREQ, lead == b), z3.And(k == FRESP, a == b), z3.And(k == APRESP, a == b))
        u[("mk", m)] = z3.If(lost, EMPTY, k)
    return live_pending(c, s.set(u))


def controlled_shutdown(c: Ctx, s: Sym, b: int) -> Step:
    guard = z3.And(s[("alive", b)], s[("crashes",)] < c.p.crashes, fault_left(c, s))
    reg = partition(c, s)
    changed, new = leader_and_isr_update(c, s, reg, remove=b)
    allowed, t = write(c, s, z3.And(reg["isr"][b], changed), new)
    t = t.set({("fenced", b): T})
    return Step(z3.And(guard, allowed), go_down(c, t, b, T))


def crash(c: Ctx, s: Sym, b: int) -> Step:
    return Step(z3.And(s[("alive", b)], s[("crashes",)] < c.p.crashes, fault_left(c, s)), go_down(c, s, b, F))


def lossy_crash(c: Ctx, s: Sym, b: int, keep: int) -> Step:
    guard = z3.And(s[("alive", b)], s[("crashes",)] < c.p.crashes, s[("lossy",)] < c.p.lossy_crashes, fault_left(c, s),
                   keep < s[("leo", b)])
    t = s.set({("leo", b): z3.IntVal(keep), ("hw", b): smin(s[("hw", b)], keep), ("lossy",): s[("lossy",)] + 1})
    return Step(guard, go_down(c, t, b, F))


def restart(c: Ctx, s: Sym, b: int) -> Step:
    n = c.n
    guard = z3.And(z3.Not(s[("alive", b)]), s[("fenced", b)])
    epoch = s[("bepoch", b)] + 1
    t = s.set({("rep", b): epoch, ("fenced", b): T})
    changed, new = handle_broker_unclean_shutdown(c, t, partition(c, t), b)
    allowed, t = write(c, t, z3.And(z3.Not(s[("clean", b)]), changed), new)
    leo, hw = s[("leo", b)], s[("hw", b)]
    if not c.r.truncate_by_epoch:  # variant truncate-to-hw (R1): recovery truncates to the HW
        leo = smin(leo, hw)
    latest = partition(c, t)
    t = t.set({("alive", b): T, ("bepoch", b): epoch, ("clean", b): F, ("meta", b): latest["pe"], ("leo", b): leo,
               ("hw", b): smin(hw, leo), ("leader", b): z3.IntVal(UNKNOWN), ("le", b): z3.IntVal(UNKNOWN),
               ("pe", b): z3.IntVal(UNKNOWN), **set_bits("isr", (b,), [F] * n), **set_bits("pend", (b,), [F] * n),
               ("leso", b): z3.IntVal(UNKNOWN), **unknown_followers(c, b)})
    return Step(z3.And(guard, allowed), apply_registration(c, t, b, latest))


def drop_message(c: Ctx, s: Sym, m: int) -> Step:
    guard = [s[("mk", m)] != EMPTY, fault_left(c, s)]
    t = remove_slot(s, m)
    if c.p.losses >= 0:
        guard.append(s[("losses",)] < c.p.losses)
        t = t.set({("losses",): s[("losses",)] + 1})
    return Step(z3.And(guard), t)


# --- compaction, the action list, the relation ----------------------------------------------------


def compact(c: Ctx, s: Sym) -> Sym:
    """state.compact: forget the records every live broker has replayed (keep the latest)."""
    latest, start = s[("c_latest",)], s[("c_start",)]
    replayed: Any = latest  # min(meta of the live brokers), default latest
    some: Any = F
    for i in range(c.n):
        take = z3.And(s[("alive", i)], z3.Or(z3.Not(some), s[("meta", i)] < replayed))
        replayed = z3.If(take, s[("meta", i)], replayed)
        some = z3.Or(some, s[("alive", i)])
    drop = smin(replayed - start + 1, latest - start)
    return s.set({("c_start",): z3.If(drop > 0, start + drop, start)})


def actions(c: Ctx) -> list[Any]:
    """Every action instance (skipping kinds whose budget this configuration sets to 0)."""
    n, M, p = c.n, c.M, c.p
    pairs = [(a, b) for a in range(n) for b in range(n) if a != b]
    out: list[Any] = []
    for b in range(n):
        if p.crashes > 0 or p.fences != 0:
            out += [A.FenceBroker(b), A.UnfenceBroker(b)]
        out += [A.ReplayMetadata(b), A.SendFetch(b)]
        out += [A.ShrinkIsr(b, f) for f in range(n) if f != b]
        out += [A.Produce(b, v) for v in range(p.values)]
        if p.crashes > 0:
            out += [A.ControlledShutdown(b), A.Crash(b), A.Restart(b)]
            if p.lossy_crashes > 0:
                out += [A.LossyCrash(b, k) for k in range(c.L)]
    for m in range(M):
        out += [HandleFetchIn(m, f, l) for f, l in pairs]
        out += [HandleFetchResponseIn(m, f, l) for f, l in pairs]
        out += [HandleAlterPartitionIn(m, l) for l in range(n)]
        out += [HandleAlterPartitionResponseIn(m, l) for l in range(n)]
        if p.losses != 0:
            out.append(DropMessageIn(m))
    return out


def step(c: Ctx, s: Sym, a: Any) -> Step:
    """The guard and post-state of action `a` from `s` (compacted, as model.next_state)."""
    t = type(a)
    if t is A.FenceBroker:
        st = fence_broker(c, s, a.broker)
    elif t is A.UnfenceBroker:
        st = unfence_broker(c, s, a.broker)
    elif t is A.ReplayMetadata:
        st = replay_metadata(c, s, a.broker)
    elif t is A.SendFetch:
        st = send_fetch(c, s, a.follower)
    elif t is A.ShrinkIsr:
        st = shrink_isr(c, s, a.leader, a.follower)
    elif t is A.Produce:
        st = produce(c, s, a.leader, a.value)
    elif t is A.ControlledShutdown:
        st = controlled_shutdown(c, s, a.broker)
    elif t is A.Crash:
        st = crash(c, s, a.broker)
    elif t is A.LossyCrash:
        st = lossy_crash(c, s, a.broker, a.keep)
    elif t is A.Restart:
        st = restart(c, s, a.broker)
    elif t is HandleFetchIn:
        st = handle_fetch(c, s, a.slot, a.follower, a.leader)
    elif t is HandleFetchResponseIn:
        st = handle_fetch_response(c, s, a.slot, a.follower, a.leader)
    elif t is HandleAlterPartitionIn:
        st = handle_alter_partition(c, s, a.slot, a.leader)
    elif t is HandleAlterPartitionResponseIn:
        st = handle_alter_partition_response(c, s, a.slot, a.leader)
    elif t is DropMessageIn:
        st = drop_message(c, s, a.slot)
    else:
        raise ValueError(f"unknown action {a!r}")
    return Step(st.guard, compact(c, st.post))


def concrete_action(c: Ctx, a: Any, model: z3.ModelRef, pre: Sym) -> Any:
    """The model's action for a symbolic one, in the pre-state a Z3 model assigns."""
    msg_actions = {HandleFetchIn: A.HandleFetch, HandleFetchResponseIn: A.HandleFetchResponse,
                   HandleAlterPartitionIn: A.HandleAlterPartition,
                   HandleAlterPartitionResponseIn: A.HandleAlterPartitionResponse, DropMessageIn: A.DropMessage}
    if type(a) in msg_actions:
        return msg_actions[type(a)](decode_message(c.layout, _Eval(model, pre), a.slot))
    return a


def transition(c: Ctx, pre: Sym, post: Sym, acts: list[Any] | None = None, selector: Any = None) -> Any:
    """Next(pre, post): some action is enabled and post is its successor (selector == its index)."""
    acts = actions(c) if acts is None else acts
    return relation([step(c, pre, a) for a in acts], pre, post, selector)
