"""A model seen through a selection of its invariants (`kcheck check --invariant NAME`).

Some catalogue entries are stories about one invariant that another one, checked first, would
pre-empt (R2: divergent logs, visible as `log_matching`, after a loss that breaks completeness
first). Checking only the named `always` properties gives that invariant's shortest
counterexample. Every `sometimes` property is kept, so vacuity is still reported. A temporal
property may be named too; the liveness pass then checks only the named ones (none, when only
invariants are named).
"""
from __future__ import annotations

from typing import Any, Sequence

from checker.config import ConfigError
from model.interface import Model, Property


class SelectedInvariants:
    """Delegates everything to `model` except `properties`: only the named invariants remain."""

    def __init__(self, model: Model, names: Sequence[str]) -> None:
        known = [p.name for p in model.properties if p.kind == "always" or p.temporal]
        unknown = [n for n in names if n not in known]
        if unknown:
            raise ConfigError(f"unknown invariant {', '.join(unknown)} for model {model.name} "
                              f"(invariants and temporal properties: {', '.join(known)})")
        self._model = model
        self.properties: list[Property] = [
            p for p in model.properties if p.kind == "sometimes" or p.name in names
        ]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)


def select_invariants(model: Model, names: Sequence[str]) -> Model:
    """`model` itself when no names are given, else the model checked for those invariants only."""
    return SelectedInvariants(model, names) if names else model  # type: ignore[return-value]
