"""Compiled modules, taken only while they match their source.

`pip install` compiles the models and the checker's search loops with Cython (setup.py) and
records, in `_compiled_sources.json` next to them, the SHA-256 of each source compiled. Python
would load a compiled module in preference to its `.py` whatever the `.py` says now; the finder
installed here takes the compiled one only while the `.py` beside it still has the recorded
digest, and the `.py` otherwise. So an edited model (an editable install, a protocol change under
test) always runs as written, compiled or not, and both give the same states, in the same order.

`KCHECK_PURE_PYTHON=1` in the environment takes the `.py` everywhere (to compare, or to debug).
"""
from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any, Sequence

PACKAGES = ("model.", "checker.")
TABLE = "_compiled_sources.json"


def pure() -> bool:
    """Whether this process was asked to run pure Python only."""
    return bool(os.environ.get("KCHECK_PURE_PYTHON"))


def source_file(spec: importlib.machinery.ModuleSpec) -> Path | None:
    """The `.py` a module was or would be loaded from: its origin, or the source beside a compiled module."""
    if spec.origin is None:
        return None
    origin = Path(spec.origin)
    if isinstance(spec.loader, importlib.machinery.ExtensionFileLoader):
        origin = origin.with_name(spec.name.rpartition(".")[2] + ".py")
    return origin if origin.suffix == ".py" and origin.is_file() else None


@lru_cache(maxsize=None)
def _recorded(folder: Path) -> dict[str, str]:
    try:
        table = json.loads((folder / TABLE).read_text())
    except (OSError, ValueError):
        return {}
    return table if isinstance(table, dict) else {}


def _matches(source: Path) -> bool:
    return _recorded(source.parent).get(source.name) == hashlib.sha256(source.read_bytes()).hexdigest()


class SourceMatchedFinder(importlib.abc.MetaPathFinder):
    """Finds kcheck's modules as the path finder does, but swaps a compiled module whose source
    changed since it was built (or every compiled module, under KCHECK_PURE_PYTHON) for its `.py`."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if path is None or not fullname.startswith(PACKAGES):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not isinstance(spec.loader, importlib.machinery.ExtensionFileLoader):
            return spec
        source = source_file(spec)
        if source is None or (not pure() and _matches(source)):
            return spec  # an extension with no Python source (checker._fpset), or an up-to-date one
        return importlib.util.spec_from_file_location(fullname, source)


def install() -> None:
    """Put the finder first on the import path, once per process."""
    if not any(isinstance(f, SourceMatchedFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, SourceMatchedFinder())


def in_use() -> list[str]:
    """The kcheck modules imported so far that run compiled from their `.py` (not the C helpers
    with no Python source: checker._fpset, model._tuples)."""
    return sorted(name for name, module in list(sys.modules.items())
                  if name.startswith(PACKAGES) and _is_compiled_source(module))


def _is_compiled_source(module: Any) -> bool:
    spec = getattr(module, "__spec__", None)
    return (isinstance(getattr(spec, "loader", None), importlib.machinery.ExtensionFileLoader)
            and source_file(spec) is not None)
