"""Which symbolic encoding belongs to a model: its Ctx and Params classes, its invariants and the
default proof targets, and the encoding's Ctx of a configuration (for `kcheck prove` and the
cross-check, checker/proofs/conformance.py)."""
from __future__ import annotations

from typing import Any


def _encoding(model: str) -> tuple[Any, Any, Any, tuple[str, ...]]:
    """(Ctx class, Params class, the invariant formulas, the default targets) of a model."""
    if model == "kraft":
        from checker.proofs.kraft_inv import DEFAULT_TARGETS, INVARIANTS
        from checker.proofs.kraft_ctx import Ctx  # its relation is derived (derived.context)
        from model.kraft.params import Params
    else:
        from checker.proofs.replication_inv import DEFAULT_TARGETS, INVARIANTS  # type: ignore[assignment]
        from checker.proofs.replication_next import Ctx  # type: ignore[assignment]
        from model.replication.params import Params  # type: ignore[assignment]
    return Ctx, Params, INVARIANTS, DEFAULT_TARGETS


def encoding_context(model: str, config: Any, variant: str, ctx_class: Any = None) -> Any:
    """The encoding's Ctx (of `ctx_class`, if given) of a model's configuration and variant."""
    Ctx, Params, _, _ = _encoding(model)
    return (ctx_class or Ctx).of(Params.from_config(dict(config)), variant)
