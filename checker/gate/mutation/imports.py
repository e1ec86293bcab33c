"""A model package imported with one module rebuilt from a changed AST, in memory.

The files are never written: a meta-path finder hands Python the compiled AST for the chosen
modules, the model's modules are dropped from `sys.modules` before and put back as they were
after, and everything else (the checker, `model.interface`) stays as it is. Models are pure, so a fresh import is a
fresh model.
"""
from __future__ import annotations

import ast
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from contextlib import contextmanager
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any, Iterator, Mapping

from model import MODELS
from model.compiled import source_file


def package_of(model: str) -> str:
    """The import name whose modules make up model `model`."""
    return MODELS[model]


def source_of(module: str) -> str:
    """The source text of an importable module (as installed)."""
    spec = importlib.util.find_spec(module)
    source = source_file(spec) if spec is not None else None
    if source is None:
        raise ImportError(f"no Python source for module {module}")
    return source.read_text(encoding="utf-8")


def _purge(package: str) -> None:
    for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
        del sys.modules[name]


class _Loader(importlib.abc.Loader):
    def __init__(self, code: CodeType, names: Mapping[str, Any]) -> None:
        self.code, self.names = code, names

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        module.__dict__.update(self.names)
        exec(self.code, module.__dict__)  # noqa: S102 - the model's own source, changed in memory


class _Finder(importlib.abc.MetaPathFinder):
    """Imports the mutated modules from their trees, and every other module of the package from
    its source: a compiled module imported again is the first import's module object, bound to
    the unmutated functions, so the package runs as Python while a mutant is under test."""

    def __init__(self, package: str, codes: Mapping[str, CodeType], names: Mapping[str, Any]) -> None:
        self.package, self.codes, self.names = package, codes, names

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.codes and not fullname.startswith(self.package + "."):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None:
            return None
        source = source_file(spec)
        if source is not None and source != Path(spec.origin or ""):
            spec = importlib.util.spec_from_file_location(fullname, source)
            if spec is None:
                return None
        if fullname in self.codes:
            spec.loader = _Loader(self.codes[fullname], self.names.get(fullname, {}))
            spec.cached = None
        return spec


@contextmanager
def changed(model: str, trees: Mapping[str, ast.Module],
            names: Mapping[str, Mapping[str, Any]] | None = None) -> Iterator[None]:
    """Within the block, importing model `model` compiles `trees[module]` for the modules given
    (with `names[module]` bound in their globals) and the files for the rest."""
    package = package_of(model)
    codes = {m: compile(t, str(source_file(importlib.util.find_spec(m)) or m), "exec") for m, t in trees.items()}  # type: ignore[arg-type]
    finder = _Finder(package, codes, names or {})
    saved = {n: m for n, m in sys.modules.items() if n == package or n.startswith(package + ".")}
    _purge(package)
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        _purge(package)
        # The modules imported before come back as they were, so code that holds their classes
        # (e.g. isinstance checks against an imported State) sees the same objects as before.
        sys.modules.update(saved)
        for name, module in saved.items():
            parent, _, child = name.rpartition(".")
            if parent in sys.modules:
                setattr(sys.modules[parent], child, module)
        importlib.invalidate_caches()
