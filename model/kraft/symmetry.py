"""Symmetry reduction: voters are interchangeable, so a state and any renaming of its node ids
behave alike (TLC's SYMMETRY, Stateright's `representative`).

The model fingerprints and encodes a state by `canonical_key`: the plain-tuple form of its least
renaming (among the renamings that sort the nodes by a name-free key, ties tried every way), so
an engine that dedups on fingerprints explores one state per class. Every property of the model
is invariant under renaming, and the actions of a renamed state are the renamed actions, so a
class breaks a property iff each of its states does, and BFS depths (hence shortest
counterexamples) are preserved. `representative` gives the least renaming as a KraftState.

With dynamic voter sets (KIP-853) ids also appear inside VotersRecord entries (a bitmask in the
entry's kind): `masks=True` renames those too (in logs, Fetch responses' records and the committed
history), and sorts nodes by a key that leaves the masks out. The model asks for it only when every
node is a bootstrap voter (no spares), since a spare and a bootstrap voter are not interchangeable.
"""
from __future__ import annotations

from itertools import permutations, product
from typing import Any

from model.kraft.rules import VOTERS_BASE
from model.kraft.state import FETCH_RESPONSE, KraftState, Node


def _node_key(i: int, n: Node) -> tuple:
    """What a node looks like without anybody's name."""
    votes = n[6]
    ends = n[8]
    return (n[0], n[1], n[4], n[5], n[9], n[10], n[11], n[7], n[2] == i, n[3] == i, n[2] < 0, n[3] < 0,
            (votes.count(1), votes.count(2)) if votes else votes, tuple(sorted(ends)) if ends else ends)


def _dynamic_node_key(i: int, n: Node) -> tuple:
    """_node_key with each VotersRecord's member set reduced to its size (a name-free view)."""
    log = tuple((e, k) if k < VOTERS_BASE else (e, VOTERS_BASE + bin(k - VOTERS_BASE).count("1")) for e, k in n[4])
    return _node_key(i, n._replace(log=log))


def _renamed_mask(mask: int, to: tuple[int, ...]) -> int:
    out = 0
    for j, new in enumerate(to):
        if mask >> j & 1:
            out |= 1 << new
    return out


def _renamed_kind(kind: int, to: tuple[int, ...]) -> int:
    """An entry kind with a VotersRecord's member set renamed (other kinds name no node)."""
    return kind if kind < VOTERS_BASE else VOTERS_BASE + _renamed_mask(kind - VOTERS_BASE, to)


def _renamed_log(log: tuple, to: tuple[int, ...]) -> tuple:
    """Entries with each VotersRecord's member set renamed."""
    return tuple((epoch, _renamed_kind(kind, to)) for epoch, kind in log)


def _renamed_committed(committed: tuple, to: tuple[int, ...]) -> tuple:
    """The committed history (offset, epoch, kind, commit epoch) with member sets renamed."""
    return tuple(sorted((o, e, _renamed_kind(k, to), c) for o, e, k, c in committed))


def _reorder(t: tuple, to: tuple[int, ...]) -> tuple:
    if not t:
        return t
    out = [0] * len(t)
    for j, v in enumerate(t):
        out[to[j]] = v
    return tuple(out)


def renamed_key(s: KraftState, to: tuple[int, ...], masks: bool = False) -> tuple[Any, ...]:
    """The state with node i renamed to[i] everywhere an id appears, as plain nested tuples
    (field order as in KraftState; a hot path). masks: also inside VotersRecord entries."""
    nodes: list[Any] = [None] * len(to)
    for i, n in enumerate(s.nodes):
        leader, voted = n[2], n[3]
        votes, ends = n[6], n[8]
        nodes[to[i]] = (n[0], n[1], to[leader] if leader >= 0 else leader, to[voted] if voted >= 0 else voted,
                        _renamed_log(n[4], to) if masks and n[4] else n[4], n[5], _reorder(votes, to) if votes else votes, n[7],
                        _reorder(ends, to) if ends else ends, n[9], n[10], n[11])
    network: Any = s.network
    if network:
        out = []
        for m in network:
            kind = m[0]
            if kind % 2:  # a response: its leader field (index 4) names a node
                leader = m[4]
                rest = m[5:]
                if masks and kind == FETCH_RESPONSE and m[8]:
                    rest = m[5:8] + (_renamed_log(m[8], to),) + m[9:]
                out.append((kind, to[m[1]], to[m[2]], m[3], to[leader] if leader >= 0 else leader) + rest)
            else:
                out.append((kind, to[m[1]], to[m[2]]) + m[3:])
        out.sort()
        network = tuple(out)
    links: Any = s.cut_links
    if links:
        links = tuple(sorted((min(to[a], to[b]), max(to[a], to[b])) for a, b in links))
    h = s.history
    elected = tuple(sorted((e, to[x]) for e, x in h.elected)) if h.elected else ()
    fatal = tuple(sorted((to[x], code) for x, code in h.fatal)) if h.fatal else ()
    committed = h.committed
    if masks and committed:
        committed = _renamed_committed(committed, to)
    return (tuple(nodes), network, links, s[3], s[4], s[5], s[6], s[7],
            (elected, committed, h.leader_hws, fatal, h.last_event, _renamed_watch(h.watch, to),
             _renamed_watch(h.disrupted, to, mask=False)), s.changes)


def _renamed_watch(w: tuple[int, ...], to: Any, mask: bool = True) -> tuple[int, ...]:
    """The disruption ghost (leader, epoch, supporters' mask or a voter) under a renaming."""
    if not w:
        return w
    if not mask:
        return (to[w[0]], w[1], to[w[2]])
    return (to[w[0]], w[1], sum(1 << to[j] for j in range(len(to)) if w[2] >> j & 1))


def _renamings(s: KraftState, masks: bool = False) -> list[tuple[int, ...]]:
    """The renamings that sort the nodes by _node_key (several when keys tie)."""
    node_key = _dynamic_node_key if masks else _node_key
    keys = [node_key(i, n) for i, n in enumerate(s.nodes)]
    order = sorted(range(len(keys)), key=keys.__getitem__)
    groups: list[list[int]] = []
    for i in order:
        if groups and keys[groups[-1][0]] == keys[i]:
            groups[-1].append(i)
        else:
            groups.append([i])
    out = []
    for choice in product(*(permutations(g) for g in groups)):
        to = [0] * len(keys)
        for new, old in enumerate(i for g in choice for i in g):
            to[old] = new
        out.append(tuple(to))
    return out


def canonical_key(s: KraftState, plain: bool = True, masks: bool = False) -> tuple[Any, ...]:
    """The least renamed_key of s; without ties, the one renaming that sorts the nodes. With
    plain=False, a state that is its own representative is returned as is (equal, and of equal
    hash, to its plain form: NamedTuples compare and hash as tuples). masks: dynamic voter sets."""
    node_key = _dynamic_node_key if masks else _node_key
    keys = [node_key(i, n) for i, n in enumerate(s.nodes)]
    order = sorted(range(len(keys)), key=keys.__getitem__)
    distinct = True
    for a, b in zip(order, order[1:]):
        if keys[a] == keys[b]:
            distinct = False
            break
    if distinct:
        if not plain and all(order[j] == j for j in range(len(order))):
            return s
        to = [0] * len(order)
        for new, old in enumerate(order):
            to[old] = new
        return renamed_key(s, tuple(to), masks)
    return min(renamed_key(s, to, masks) for to in _renamings(s, masks))


def rename(s: KraftState, to: tuple[int, ...], masks: bool = False) -> KraftState:
    """The state with node i renamed to[i], as a KraftState (tests, traces)."""
    def r(x: int) -> int:
        return to[x] if x >= 0 else x

    nodes: list[Any] = [None] * len(to)
    for i, n in enumerate(s.nodes):
        nodes[to[i]] = n._replace(leader=r(n.leader), voted=r(n.voted), votes=_reorder(n.votes, to),
                                  end_offsets=_reorder(n.end_offsets, to),
                                  log=_renamed_log(n.log, to) if masks else n.log)
    network = []
    for m in s.network:
        m = m._replace(src=to[m.src], dst=to[m.dst])
        if m.kind % 2:
            m = m._replace(leader=r(m.leader))  # type: ignore[union-attr]
        if masks and m.kind == FETCH_RESPONSE:
            m = m._replace(records=_renamed_log(m.records, to))  # type: ignore[union-attr]
        network.append(m)
    links = tuple(sorted((min(to[a], to[b]), max(to[a], to[b])) for a, b in s.cut_links))
    h = s.history
    h = h._replace(elected=tuple(sorted((e, r(x)) for e, x in h.elected)),
                   fatal=tuple(sorted((r(x), code) for x, code in h.fatal)),
                   watch=_renamed_watch(h.watch, to), disrupted=_renamed_watch(h.disrupted, to, mask=False))
    if masks:
        h = h._replace(committed=_renamed_committed(h.committed, to))
    return s._replace(nodes=tuple(nodes), network=tuple(sorted(network)), cut_links=links, history=h)


def representative(s: KraftState, masks: bool = False) -> KraftState:
    """The renaming of s whose plain form is canonical_key(s)."""
    key = canonical_key(s, masks=masks)
    for to in _renamings(s, masks):
        if renamed_key(s, to, masks) == key:
            return rename(s, to, masks)
    raise AssertionError("no renaming gives the canonical key")  # pragma: no cover
