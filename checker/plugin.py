"""`--plugin FILE`: a change to a model (new variants, new properties) written in the user's own
Python file, outside kcheck, and checked by the installed kcheck (docs/change.md).

A plugin file is a Python module that defines
    MODEL = "replication"            # the model it extends (`kcheck list` names them)
    VARIANTS = [Change(...), ...]    # optional: new variants (model/extension.py)
    def properties(model): ...       # optional: new invariants / sometimes-properties, a list
and at least one of VARIANTS and properties. `activate(paths)` loads the files and puts the
extended definitions in force (model.EXTENDED), in place of any activated before; every mistake
in a plugin is a ConfigError of one line that names the file. Runs name each plugin with the
SHA-256 of its bytes (`provenance()`): what was checked.
"""
from __future__ import annotations

import hashlib
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Sequence

import model as registry
from checker.config import ConfigError, load_config, load_definition
from model.extension import Change, Extension, ExtensionError, added_properties, extend
from model.interface import Variant

MAX_PLUGIN_BYTES = 1 << 20  # a plugin is a page or two of Python; a larger file is not one


@dataclass(frozen=True)
class Plugin:
    path: str  # resolved
    sha256: str
    extension: Extension


_LOADED: dict[tuple[str, str], Plugin] = {}  # (path, digest) -> the plugin: a file is executed once per content
_ACTIVE: list[Plugin] = []


def _error(path: str, text: str) -> ConfigError:
    return ConfigError(f"--plugin {path}: {text}")


def _read(path: str) -> tuple[Path, bytes]:
    p = Path(path)
    try:
        with open(p, "rb") as f:
            data = f.read(MAX_PLUGIN_BYTES + 1)
    except FileNotFoundError:
        raise _error(path, "no such file") from None
    except IsADirectoryError:
        raise _error(path, "is a directory, not a Python file") from None
    except OSError as e:
        raise _error(path, f"cannot read: {e.strerror or e}") from None
    if len(data) > MAX_PLUGIN_BYTES:
        raise _error(path, f"larger than {MAX_PLUGIN_BYTES // 1024} KiB: not a plugin")
    return p.resolve(), data


def _line_in(path: Path, e: BaseException) -> str:
    """' (line N)' of the plugin's own frame nearest the error, or ''."""
    frames = [f for f in traceback.extract_tb(e.__traceback__) if Path(f.filename) == path]
    return f" (line {frames[-1].lineno})" if frames else ""


def _execute(path: str, resolved: Path, data: bytes, digest: str) -> ModuleType:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _error(path, f"not UTF-8 text: {e}") from None
    try:
        code = compile(text, str(resolved), "exec")
    except SyntaxError as e:
        raise _error(path, f"syntax error at line {e.lineno}: {e.msg}") from None
    except ValueError as e:  # e.g. a NUL byte
        raise _error(path, f"not Python source: {e}") from None
    name = f"kcheck_plugin_{''.join(c if c.isalnum() else '_' for c in resolved.stem)}_{digest[:12]}"
    module = ModuleType(name)
    module.__file__ = str(resolved)
    sys.modules[name] = module  # dataclasses and pickling look the module up by name
    try:
        exec(code, module.__dict__)  # noqa: S102 - the user's own plugin, which they asked to run
    except KeyboardInterrupt:
        del sys.modules[name]
        raise
    except BaseException as e:  # SystemExit too: a plugin does not end kcheck
        del sys.modules[name]
        raise _error(path, f"importing it raised {type(e).__name__}: {' '.join(str(e).split())}"
                           f"{_line_in(resolved, e)}") from None
    return module


def _shape(path: str, module: ModuleType) -> Extension:
    """The module's MODEL, VARIANTS and properties, checked."""
    model_name = getattr(module, "MODEL", None)
    if not isinstance(model_name, str):
        raise _error(path, f"defines no MODEL = \"NAME\" (the model it extends: {', '.join(sorted(registry.MODELS))})")
    try:
        load_definition(model_name)
    except ConfigError as e:
        raise _error(path, f"MODEL: {e}") from None
    variants = getattr(module, "VARIANTS", ())
    if not isinstance(variants, (list, tuple)) or not all(isinstance(c, Change) for c in variants):
        raise _error(path, "VARIANTS must be a list of Change(...) (from model.extension import Change)")
    for c in variants:
        if not isinstance(c.variant, Variant):
            raise _error(path, f"Change({c.variant!r}, ...): its first argument must be a Variant(...)")
        if not isinstance(c.replace, dict) or not all(isinstance(k, str) and callable(f) for k, f in c.replace.items()):
            raise _error(path, f"variant {c.variant.name!r}: replace must map 'module:function' to a function")
        if c.next_state is not None and not callable(c.next_state):
            raise _error(path, f"variant {c.variant.name!r}: next_state must be a function")
        if c.variant.switches_off:  # built-in rules come from the base variant; a plugin changes code instead
            raise _error(path, f"variant {c.variant.name!r}: switches_off is for built-in variants; a plugin "
                               f"starts from its base's rules (base=...) and changes them with replace or next_state")
        if not c.replace and c.next_state is None:
            raise _error(path, f"variant {c.variant.name!r} changes nothing: give it replace={{...}} or next_state=...")
    properties = getattr(module, "properties", None)
    if properties is not None and not callable(properties):
        raise _error(path, "properties must be a function properties(model) returning a list of properties")
    if not variants and properties is None:
        raise _error(path, "defines neither VARIANTS nor properties(model): nothing to add")
    return Extension(str(module.__file__), model_name, tuple(variants), properties)


def load(path: str) -> Plugin:
    """The plugin in `path` (executed once per content), or a ConfigError of one line."""
    resolved, data = _read(path)
    digest = hashlib.sha256(data).hexdigest()
    key = (str(resolved), digest)
    if key not in _LOADED:
        module = _execute(path, resolved, data, digest)
        _LOADED[key] = Plugin(str(resolved), digest, _shape(path, module))
    return _LOADED[key]


def activate(paths: Sequence[str]) -> list[Plugin]:
    """Load the plugins in `paths` and put them in force, alone (those activated before are
    dropped): a model's definition is then its own extended by its plugins."""
    plugins = [load(p) for p in paths]
    extended: dict[str, Any] = {}
    for name in dict.fromkeys(p.extension.model for p in plugins):
        mine = [(given, p) for given, p in zip(paths, plugins) if p.extension.model == name]
        registry.EXTENDED.pop(name, None)
        definition = registry.definition(name)
        try:
            extended[name] = extend(definition, registry.MODELS[name], [p.extension for _, p in mine])
        except ExtensionError as e:
            raise ConfigError(f"--plugin {', '.join(g for g, _ in mine)}: {e}") from None
        for given, p in mine:  # the properties, on the default configuration of the model
            if p.extension.properties is not None:
                try:
                    base = load_config(model=definition, variant=definition.variants[0].name).build()
                    added_properties(base, [(given, p.extension.properties)])
                except ExtensionError as e:
                    raise ConfigError(f"--plugin {e}") from None
    registry.EXTENDED.clear()
    registry.EXTENDED.update(extended)
    _ACTIVE[:] = plugins
    return plugins


def active() -> list[Plugin]:
    return list(_ACTIVE)


def provenance() -> list[dict[str, str]]:
    """The active plugins, as a run's header and JSON name them: file and SHA-256."""
    return [{"file": p.path, "sha256": p.sha256} for p in _ACTIVE]


def header_line() -> str:
    """The text header's line for the active plugins, or ''."""
    return ", ".join(f"{p.path} (sha256 {p.sha256[:16]})" for p in _ACTIVE)
