"""The abstract cell of a state on a walk, shared by the walker (which computes cells) and guided
search (which keeps an archive of them)."""
from __future__ import annotations

from typing import Any, Callable

from model.interface import Model


class Abstraction:
    """The abstract cell of a state on a walk: a coarse, model-agnostic view.

    A cell is the triple (action kinds enabled in the state, `sometimes` properties holding in it,
    action kinds taken on the path so far), each a bitmask over the model's own order of
    `action_kinds` / properties: small, stable across processes, and ordered. The first two say
    which phase of the protocol the state is in (messages in flight, a broker down, a record
    acked); the third which kinds of events (a crash, a restart, a dropped message) led there,
    the way a fuzzer's edge coverage tells its inputs apart.

    A model may refine this with an optional `abstraction(state)` method returning a small
    hashable, totally ordered value made of ints, strings and tuples (no `hash()`-dependent
    sets); it then replaces the first two components, and the history component is dropped (kept
    at 0): a protocol-phase view already says what happened (a restart, a crash, a fencing), and
    the kinds-taken mask would split each of its cells many ways, so the frontier would grow
    faster than rounds can try it (measured in docs/simulate.md)."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.kind_bit = {k: 1 << i for i, k in enumerate(model.action_kinds)}
        self.other_bit = 1 << len(self.kind_bit)  # an action kind the model did not declare
        self.sometimes = [p for p in model.properties if p.kind == "sometimes"]
        self.hint: Callable[[Any], Any] | None = getattr(model, "abstraction", None)
        self._cache: dict[Any, Any] = {}

    def after(self, history: int, kind: str) -> int:
        """The history component after an action of `kind` (always 0 with a model's own abstraction)."""
        if self.hint is not None:
            return 0
        return history | self.kind_bit.get(kind, self.other_bit)

    def cell(self, state: Any, candidates: list, history: int) -> tuple:
        part = self._cache.get(state)
        if part is None:
            if self.hint is not None:
                part = self.hint(state)
            else:
                enabled = 0
                for a in candidates:
                    enabled |= self.kind_bit.get(type(a).__name__, self.other_bit)
                holds = 0
                for i, p in enumerate(self.sometimes):
                    if p.predicate(state):
                        holds |= 1 << i
                part = (enabled, holds)
            if len(self._cache) >= 100_000:
                self._cache.clear()
            self._cache[state] = part
        return (part, history)
