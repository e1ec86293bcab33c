"""A toy model whose reachable space can be counted by hand, for testing the engines.

Two counters x, y in 0..k. `IncX`/`IncY` add one below k; `Reset` returns (k, k) to (0, 0).
Reachable states: (k+1)**2; BFS depth: 2k; shortest path to (a, b): a + b steps.
Invariant `sum_below(limit)`: x + y < limit, first broken at depth `limit`.
"""
from __future__ import annotations

from typing import Any, NamedTuple

from model.interface import ConfigKey, ModelDefinition, Variant, always, sometimes


class Counters(NamedTuple):
    x: int
    y: int


class IncX(NamedTuple):
    pass


class IncY(NamedTuple):
    pass


class Reset(NamedTuple):
    pass


class ToyModel:
    name = "toy"
    action_kinds = ("IncX", "IncY", "Reset", "Never")

    def __init__(self, config: dict[str, Any], variant: str = "default") -> None:
        self.config = dict(config)
        self.variant = variant
        self.k = config["k"]
        limit = config["limit"]
        self.properties = [
            always("sum_below_limit", lambda s: s.x + s.y < limit, "x + y < limit"),
            sometimes("both_max", lambda s: s.x == self.k and s.y == self.k, "(k, k) reached"),
        ]

    def init_states(self) -> list[Counters]:
        return [Counters(0, 0)]

    def actions(self, s: Counters) -> list[Any]:
        out: list[Any] = []
        if s.x < self.k:
            out.append(IncX())
        if s.y < self.k:
            out.append(IncY())
        if s.x == self.k and s.y == self.k:
            out.append(Reset())
        return out

    def next_state(self, s: Counters, a: Any) -> Counters | None:
        if isinstance(a, IncX):
            return Counters(s.x + 1, s.y)
        if isinstance(a, IncY):
            return Counters(s.x, s.y + 1)
        if isinstance(a, Reset):
            return Counters(0, 0)
        return None

    def encode(self, s: Counters) -> bytes:
        return repr(tuple(s)).encode()

    def to_json(self, s: Counters) -> dict[str, Any]:
        return {"x": s.x, "y": s.y}


DEFINITION = ModelDefinition(
    name="toy",
    description="two bounded counters (tests only)",
    config_keys=(
        ConfigKey("k", int, 2, "counter bound", 0, 50),
        ConfigKey("limit", int, 1000, "x + y must stay below this", 0, 10_000),
    ),
    presets={"default": {}, "smoke": {"k": 1}, "tight": {"k": 2, "limit": 5}},
    variants=(Variant("kafka-4.1", "the toy as is"),),
    build=lambda config, variant: ToyModel(dict(config), variant),
)
