"""Symmetry reduction: voters are interchangeable, so a state and any renaming of its node ids
behave alike (TLC's SYMMETRY, Stateright's `representative`).

The model fingerprints and encodes a state by `canonical_key`: the plain-tuple form of its least
renaming (among the renamings that sort the nodes by a name-free key, ties tried every way), so
an engine that dedups on fingerprints explores one state per class. Every property of the model
is invariant under renaming, and the actions of a renamed state are the renamed actions, so a
class breaks a property iff each of its states does, and BFS depths (hence shortest
counterexamples) are preserved. `representative` gives the least renaming as a KraftState.
"""
from __future__ import annotations

from itertools import permutations, product
from typing import Any

from model.kraft.state import KraftState, Node


def _node_key(i: int, n: Node) -> tuple:
    """What a node looks like without anybody's name."""
    votes = n[6]
    ends = n[8]
    return (n[0], n[1], n[4], n[5], n[9], n[10], n[11], n[7], n[2] == i, n[3] == i, n[2] < 0, n[3] < 0,
            (votes.count(1), votes.count(2)) if votes else votes, tuple(sorted(ends)) if ends else ends)


def _reorder(t: tuple, to: tuple[int, ...]) -> tuple:
    if not t:
        return t
    out = [0] * len(t)
    for j, v in enumerate(t):
        out[to[j]] = v
    return tuple(out)


def renamed_key(s: KraftState, to: tuple[int, ...]) -> tuple[Any, ...]:
    """The state with node i renamed to[i] everywhere an id appears, as plain nested tuples
    (field order as in KraftState; a hot path)."""
    nodes: list[Any] = [None] * len(to)
    for i, n in enumerate(s.nodes):
        leader, voted = n[2], n[3]
        votes, ends = n[6], n[8]
        nodes[to[i]] = (n[0], n[1], to[leader] if leader >= 0 else leader, to[voted] if voted >= 0 else voted,
                        n[4], n[5], _reorder(votes, to) if votes else votes, n[7],
                        _reorder(ends, to) if ends else ends, n[9], n[10], n[11])
    network: Any = s.network
    if network:
        out = []
        for m in network:
            kind = m[0]
            if kind % 2:  # a response: its leader field (index 4) names a node
                leader = m[4]
                out.append((kind, to[m[1]], to[m[2]], m[3], to[leader] if leader >= 0 else leader) + m[5:])
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
    return (tuple(nodes), network, links, s[3], s[4], s[5], s[6], s[7],
            (elected, h.committed, h.leader_hws, fatal, h.last_event, _renamed_watch(h.watch, to),
             _renamed_watch(h.disrupted, to, mask=False)), s.changes)


def _renamed_watch(w: tuple[int, ...], to: Any, mask: bool = True) -> tuple[int, ...]:
    """The disruption ghost (leader, epoch, supporters' mask or a voter) under a renaming."""
    if not w:
        return w
    if not mask:
        return (to[w[0]], w[1], to[w[2]])
    return (to[w[0]], w[1], sum(1 << to[j] for j in range(len(to)) if w[2] >> j & 1))


def _renamings(s: KraftState) -> list[tuple[int, ...]]:
    """The renamings that sort the nodes by _node_key (several when keys tie)."""
    keys = [_node_key(i, n) for i, n in enumerate(s.nodes)]
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


def canonical_key(s: KraftState, plain: bool = True) -> tuple[Any, ...]:
    """The least renamed_key of s; without ties, the one renaming that sorts the nodes. With
    plain=False, a state that is its own representative is returned as is (equal, and of equal
    hash, to its plain form: NamedTuples compare and hash as tuples)."""
    keys = [_node_key(i, n) for i, n in enumerate(s.nodes)]
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
        return renamed_key(s, tuple(to))
    return min(renamed_key(s, to) for to in _renamings(s))


def rename(s: KraftState, to: tuple[int, ...]) -> KraftState:
    """The state with node i renamed to[i], as a KraftState (tests, traces)."""
    def r(x: int) -> int:
        return to[x] if x >= 0 else x

    nodes: list[Any] = [None] * len(to)
    for i, n in enumerate(s.nodes):
        nodes[to[i]] = n._replace(leader=r(n.leader), voted=r(n.voted), votes=_reorder(n.votes, to),
                                  end_offsets=_reorder(n.end_offsets, to))
    network = []
    for m in s.network:
        m = m._replace(src=to[m.src], dst=to[m.dst])
        if m.kind % 2:
            m = m._replace(leader=r(m.leader))  # type: ignore[union-attr]
        network.append(m)
    links = tuple(sorted((min(to[a], to[b]), max(to[a], to[b])) for a, b in s.cut_links))
    h = s.history
    h = h._replace(elected=tuple(sorted((e, r(x)) for e, x in h.elected)),
                   fatal=tuple(sorted((r(x), code) for x, code in h.fatal)),
                   watch=_renamed_watch(h.watch, to), disrupted=_renamed_watch(h.disrupted, to, mask=False))
    return s._replace(nodes=tuple(nodes), network=tuple(sorted(network)), cut_links=links, history=h)


def representative(s: KraftState) -> KraftState:
    """The renaming of s whose plain form is canonical_key(s)."""
    key = canonical_key(s)
    for to in _renamings(s):
        if renamed_key(s, to) == key:
            return rename(s, to)
    raise AssertionError("no renaming gives the canonical key")  # pragma: no cover
