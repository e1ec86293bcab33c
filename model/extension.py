"""A model extended by code outside it: variants that change a built-in variant's rules, and
properties added to every variant (a KIP author's change, kept in their own repository and
loaded by `kcheck ... --plugin FILE`, checker/plugin.py; docs/change.md).

A `Change` is a new variant: its `Variant` declaration, the built-in variant it starts from
(`base`), and what it changes there, either or both of
- `replace`: pure decisions of the model swapped for the author's own, by name
  ("model.replication.partition:leader_hw" -> a function with the same signature), in force
  while the changed model computes its actions and successors, so every caller of the decision
  sees the new one and the properties (the oracle) keep the original;
- `next_state(model, state, action, base)`: the transition, given the built-in model and its
  own `base(state, action)`; return the successor or None (the action is a no-op).

An extended model is the built-in one with these applied: same actions, encoding, rendering,
fairness and reductions (a change that alters what a reduction absorbs checks with it off:
`--no-reduce`, `--set symmetry=false`).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

from model.interface import Model, ModelDefinition, Property, Variant


@dataclass(frozen=True)
class Change:
    """A variant defined outside the model: `variant` declares it (name, description, expect,
    preset, ...), `base` names the built-in variant whose rules it starts from."""

    variant: Variant
    replace: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    next_state: Callable[[Any, Any, Any, Callable[[Any, Any], Any]], Any] | None = None
    base: str = "kafka-4.1"


@dataclass(frozen=True)
class Extension:
    """What one plugin adds to one model: its changes, and `properties(model) -> [Property]` (the
    built model of any variant, for its parameters), added to every variant's."""

    origin: str  # where it comes from, for messages (the plugin file)
    model: str
    changes: tuple[Change, ...] = ()
    properties: Callable[[Any], Sequence[Property]] | None = None


class ExtensionError(ValueError):
    """An extension that does not fit its model (a name taken, a decision that does not exist)."""


class PluginFailure(Exception):
    """The author's code raised while a model ran it: `str()` is one line naming the variant,
    the origin, the exception and the author's line."""


def _failure(origin: str, what: str, e: Exception) -> PluginFailure:
    import traceback

    frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == origin]
    where = f" ({frames[-1].name}, line {frames[-1].lineno})" if frames else ""
    message = " ".join(str(e).split())
    return PluginFailure(f"{origin}: {what} raised {type(e).__name__}: {message}{where}")


def _split(target: str) -> tuple[str, str]:
    module, sep, name = target.partition(":")
    if not sep or not module or not name or "." in name:
        raise ExtensionError(f"replace: {target!r} is not 'module:function' (a module-level function of the model,"
                             " e.g. 'model.replication.partition:leader_hw')")
    return module, name


def resolve(package: str, target: str) -> Any:
    """The function `target` ('module:function') names in the model's package (imported)."""
    import importlib

    module, name = _split(target)
    if module != package and not module.startswith(package + "."):
        raise ExtensionError(f"replace: {target!r} is not in the model's package {package}")
    try:
        found = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        raise ExtensionError(f"replace: {target!r}: no such function in the model") from None
    if not callable(found) or isinstance(found, type):
        raise ExtensionError(f"replace: {target!r} is not a function")
    return found


class _Swap:
    """Binds each replaced decision's new function in every module of the package that binds the
    original (the callers import it by name), and binds the originals back afterwards."""

    def __init__(self, package: str, replacements: Mapping[str, Callable[..., Any]]) -> None:
        self.slots: list[tuple[dict[str, Any], str, Any, Any]] = []
        originals = {id(resolve(package, t)): (resolve(package, t), f) for t, f in replacements.items()}
        for name, module in list(sys.modules.items()):
            if module is None or not (name == package or name.startswith(package + ".")):
                continue
            space = vars(module)
            for key, value in list(space.items()):
                hit = originals.get(id(value))
                if hit is not None and hit[0] is value:
                    self.slots.append((space, key, hit[1], value))

    def __enter__(self) -> None:
        for space, key, new, _ in self.slots:
            space[key] = new

    def __exit__(self, *exc: Any) -> None:
        for space, key, _, old in self.slots:
            space[key] = old


# Optional model methods that take the model's steps (model/interface.py): run with the change too
_STEPPING = ("reduce", "bound_blocked", "rounds")


class ExtendedModel:
    """A built model with an extension's change and properties applied; everything else is the
    built-in model's (attributes are looked up on it)."""

    def __init__(self, base: Model, variant: str, change: Change | None, added: Sequence[Property],
                 package: str, origin: str = "") -> None:
        self._base = base
        self._origin = origin
        self._change = change
        self._added = tuple(added)
        self._package = package
        self.variant = variant
        self.properties = list(base.properties) + list(added)
        self._swap = _Swap(package, change.replace) if change is not None and change.replace else None
        step = change.next_state if change is not None else None
        if step is None:
            self._next = base.next_state
        else:
            self._next = lambda s, a: step(base, s, a, base.next_state)

    def __getattr__(self, name: str) -> Any:
        if name == "rounds" and self._change is not None and self._change.next_state is not None:
            # the built-in rounds are runs of the built-in step, not of the changed one
            raise AttributeError(f"variant {self.variant} changes the step, so the model's rounds do not apply")
        value = getattr(self._base, name)
        if name == "liveness_model":  # the model the liveness pass explores: changed alike
            return lambda: ExtendedModel(value(), self.variant, self._change, self._added, self._package,
                                         self._origin)
        if name in _STEPPING and self._swap is not None:
            return self._swapped(value)
        return value

    @property
    def change(self) -> Change | None:
        return self._change

    @property
    def base_model(self) -> Model:
        return self._base

    def decisions(self) -> Any:
        """A context in which the change's replaced decisions are in force (the prover derives the
        changed relation in it); a change without `replace` has none to put in force."""
        import contextlib

        return self._swap if self._swap is not None else contextlib.nullcontext()

    def _swapped(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        swap = self._swap

        def call(*args: Any) -> Any:
            with swap:  # type: ignore[union-attr]
                return fn(*args)

        return call

    def _fail(self, what: str, e: Exception) -> PluginFailure:
        return _failure(self._origin, f"variant {self.variant}'s {what}", e)

    def init_states(self) -> list[Any]:
        if self._swap is None:
            return self._base.init_states()
        try:
            with self._swap:
                return self._base.init_states()
        except Exception as e:
            raise self._fail("initial states", e) from e

    def actions(self, s: Any) -> Any:
        if self._swap is None:
            return self._base.actions(s)
        try:
            with self._swap:
                return list(self._base.actions(s))
        except Exception as e:
            raise self._fail("actions", e) from e

    def next_state(self, s: Any, action: Any) -> Any:
        if self._change is None:
            return self._next(s, action)
        try:
            if self._swap is None:
                return self._next(s, action)
            with self._swap:
                return self._next(s, action)
        except Exception as e:
            raise self._fail(f"step {action!r}", e) from e


def extend(definition: ModelDefinition, package: str, extensions: Sequence[Extension]) -> ModelDefinition:
    """`definition` with the extensions' variants after its own and their properties on every
    variant. Raises ExtensionError when a variant's name is taken or its base is unknown."""
    if not extensions:
        return definition
    builtin = {v.name for v in definition.variants}
    changes: dict[str, Change] = {}
    origins: dict[str, str] = {}
    for ext in extensions:
        for c in ext.changes:
            name = c.variant.name
            if name in builtin:
                raise ExtensionError(f"variant {name!r} is a built-in variant of model {definition.name}; "
                                     "give the change its own name")
            if name in changes:
                raise ExtensionError(f"variant {name!r} is defined twice")
            if c.base not in builtin:
                raise ExtensionError(f"variant {name!r}: base {c.base!r} is not a built-in variant of model "
                                     f"{definition.name} (variants: {', '.join(sorted(builtin))})")
            for target in c.replace:
                resolve(package, target)
            changes[name] = c
            origins[name] = ext.origin
    adders = [(e.origin, e.properties) for e in extensions if e.properties is not None]

    def build(config: Mapping[str, Any], variant: str) -> Model:
        change = changes.get(variant)
        base = definition.build(config, change.base if change is not None else variant)
        added = added_properties(base, adders)
        if change is None and not added:
            return base
        return ExtendedModel(base, variant, change, added, package,  # type: ignore[return-value]
                             origins.get(variant, ""))

    return replace(definition, variants=tuple(definition.variants) + tuple(c.variant for c in changes.values()),
                   build=build)


def _guarded(origin: str, name: str, predicate: Callable[[Any], bool]) -> Callable[[Any], bool]:
    """`predicate`, whose exceptions are the author's: a PluginFailure of one line."""
    def holds(s: Any) -> bool:
        try:
            return predicate(s)
        except Exception as e:
            raise _failure(origin, f"property {name}", e) from e

    return holds


def added_properties(base: Model, adders: Sequence[tuple[str, Callable[[Any], Sequence[Property]]]]
                     ) -> list[Property]:
    """The properties the extensions (origin, properties function) add to `base`, checked: each
    a Property, no name taken."""
    taken = {p.name for p in base.properties}
    added: list[Property] = []
    for origin, adder in adders:
        try:
            found = list(adder(base))
        except Exception as e:  # the author's code: reported as theirs, in one line
            raise ExtensionError(f"{origin}: properties(model) raised {type(e).__name__}: {e}") from e
        for p in found:
            if not isinstance(p, Property):
                raise ExtensionError(f"{origin}: properties(model) returned {p!r}, not a Property "
                                     "(make them with always(...) or sometimes(...) of model.interface)")
            if p.name in taken:
                raise ExtensionError(f"{origin}: property {p.name!r} is already a property of model {base.name}; "
                                     "give it its own name")
            taken.add(p.name)
            added.append(replace(p, predicate=_guarded(origin, p.name, p.predicate),
                                 target=_guarded(origin, p.name, p.target) if p.target is not None else None))
    return added
