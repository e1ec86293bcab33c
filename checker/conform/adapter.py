"""The contract between the conformance engine and one model's adapter to the real Kafka code.

An adapter owns the real objects (built through JPype once the JVM runs) and two maps: the
action-to-calls map (`step`) and the abstraction map (`observe` on the real side, `abstract` on the
model side, same flat keys). `abstractions()` names every place the model is coarser than the code,
with the Kafka reason; the engine prints them with every verdict.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from checker.config import ConfigError

REFUSED = "refused"      # the real code could not take the model's step (raised, or answered with an error)
DIFFERS = "differs"      # it took the step, and the abstraction of its state differs from the model's
EXCEPTION = "exception"  # the real code (or the adapter calling it) threw: a finding, never a refusal
ACCEPTED = "accepted"    # negative conformance: the real code took a step the model refuses


class OtherRefusal(Exception):
    """Negative conformance: the real code refused an offer, but with another answer than the model's
    (an adapter that knows the model's answer compares it, as it does for an enabled step's). The
    engine reports it as DIFFERS; `real` and `model` are the two answers."""

    def __init__(self, real: str, model: str) -> None:
        super().__init__(f"the real code answered {real}, the model {model}")
        self.real, self.model = real, model


@runtime_checkable
class Adapter(Protocol):
    """One model's map to the real code (see the module docstring)."""

    model_name: str

    def __init__(self, model: Any) -> None: ...

    def reset(self, state: Any) -> None:
        """Fresh real objects matching the model's initial state `state`."""

    def step(self, state: Any, action: Any, successor: Any) -> str | None:
        """Make the real code do what `action` does from `state`; None, or one line saying why it could not."""

    def observe(self) -> dict[str, Any]:
        """The abstraction of the real system: JSON-able values under flat keys ("node1.role", ...)."""

    def abstract(self, state: Any) -> dict[str, Any]:
        """The same keys computed from a model state."""

    def abstractions(self) -> dict[str, str]:
        """Action kind (or field) -> the documented reason the model is coarser than the code there."""

    def close(self) -> None: ...


@dataclass(frozen=True)
class Difference:
    """The first place a behaviour and the real code part: kind REFUSED or DIFFERS, at step `step` (1-based)."""

    kind: str
    step: int
    action: str
    keys: dict[str, tuple[Any, Any]] = field(default_factory=dict)  # key -> (model value, real value)
    reason: str = ""                                                  # REFUSED: the adapter's line

    def line(self) -> str:
        """One line for the report."""
        if self.kind == REFUSED:
            return f"step {self.step} ({self.action}): the real code refused: {self.reason}"
        if self.kind in (EXCEPTION, ACCEPTED):
            return f"step {self.step} ({self.action}): {self.reason}"
        shown = "; ".join(f"{k}: model {m!r}, real {r!r}" for k, (m, r) in sorted(self.keys.items()))
        return f"step {self.step} ({self.action}): {shown}"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "step": self.step, "action": self.action, "reason": self.reason,
                "keys": {k: {"model": m, "real": r} for k, (m, r) in sorted(self.keys.items())}}


def exception_line(e: BaseException) -> str:
    """One line naming an exception: a Java one (thrown by the real code, through JPype) by its Java
    class, else the Python one the adapter raised (a defect of the adapter, not of Kafka)."""
    get_class = getattr(e, "getClass", None)
    if get_class is not None:
        try:
            name, message = str(get_class().getName()), e.getMessage()
        except Exception:  # not a live Java object after all
            get_class = None
    if get_class is None:
        name, message = f"the adapter raised {type(e).__name__}", str(e)
    else:
        name = f"the real code threw {name}"
    text = str(message).splitlines()[0] if message is not None and str(message) else ""
    return (f"{name}: {text}" if text else name)[:400]


def compare(model_view: dict[str, Any], real_view: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """Key -> (model, real) for every key whose values differ (a key one side lacks reads as None)."""
    return {k: (model_view.get(k), real_view.get(k)) for k in sorted(set(model_view) | set(real_view))
            if model_view.get(k) != real_view.get(k)}


def adapter_for(model_name: str) -> type:
    """The ADAPTER class of checker.conform.<model_name> (ConfigError if that model has none)."""
    if not model_name.isidentifier():
        raise ConfigError(f"no conformance adapter for model {model_name!r}")
    try:
        module = importlib.import_module(f"checker.conform.{model_name}")
    except ModuleNotFoundError as e:
        if e.name == f"checker.conform.{model_name}":
            raise ConfigError(f"no conformance adapter for model {model_name!r}") from None
        raise
    adapter = getattr(module, "ADAPTER", None)
    if adapter is None:
        raise ConfigError(f"checker.conform.{model_name} defines no ADAPTER")
    return adapter
