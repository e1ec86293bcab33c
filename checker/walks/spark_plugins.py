"""Plugins on Spark: the user's plugin files (checker/plugin.py) go to the executors with Spark's
own file distribution (`SparkContext.addFile`, read back with `SparkFiles.get`), and every task
checks its copy's SHA-256 against the driver's before it builds a model.

A model built from a different file would check a different change under the driver's name and
digest, so a copy that differs (edited after the run started, a stale `spark-submit --files`) is
refused in one line, and the job fails with it. The file is shipped under a name that carries its
digest (Spark refuses one name for two contents); the executor runs it from a copy under its own
name, so the plugin's module has the driver's name (pickled results refer to it).
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any, Iterable, Sequence

Shipped = tuple[str, str]  # (the plugin file's own name, its SHA-256): what a task needs to find and check it

_ADDED: dict[str, set[str]] = {}  # applicationId -> shipped names already added


def shipped_name(name: str, sha256: str) -> str:
    return f"kcheck-plugin-{sha256[:16]}-{name}"


def _staging(sha256: str) -> Path:
    return Path(tempfile.gettempdir()) / f"kcheck-plugins-{os.getuid()}" / sha256


def _write_once(path: Path, data: bytes) -> None:
    if path.exists() and path.read_bytes() == data:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def ship(sc: Any, plugins: Sequence[Any]) -> tuple[Shipped, ...]:
    """addFile each plugin (checker.plugin.Plugin) under its digest-named copy; returns what the
    tasks look for. The copy is of the file as it is now: if it changed since the plugin was
    loaded, the tasks refuse it (the driver checked the other content)."""
    added = _ADDED.setdefault(sc.applicationId, set())
    out = []
    for p in plugins:
        name = Path(p.path).name
        staged = _staging(p.sha256) / shipped_name(name, p.sha256)
        _write_once(staged, Path(p.path).read_bytes())
        if staged.name not in added:
            sc.addFile(str(staged))
            added.add(staged.name)
        out.append((name, p.sha256))
    return tuple(out)


def local_copy(name: str, sha256: str) -> str:
    """On an executor: the plugin `name` the driver shipped, checked against `sha256`, as a file
    under its own name (RuntimeError, one line, for a missing or different file)."""
    from pyspark import SparkFiles

    shipped = SparkFiles.get(shipped_name(name, sha256))
    try:
        data = Path(shipped).read_bytes()
    except OSError as e:
        raise RuntimeError(f"plugin {name}: not on this executor ({shipped}: {e.strerror or e}); "
                           "it is shipped with the job by SparkContext.addFile") from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != sha256:
        raise RuntimeError(f"plugin {name}: this executor's copy has SHA-256 {digest[:16]}, the driver's "
                           f"{sha256[:16]}: refusing to run a different file than the driver checked")
    path = _staging(sha256) / name
    _write_once(path, data)
    return str(path)


def activate_on_executor(shipped: Iterable[Shipped]) -> list[str]:
    """Before a task builds a model: check every shipped plugin and put them in force, alone (no
    plugin: none in force), unless this process already has exactly these (a reused Python
    worker); returns the local paths."""
    from checker import plugin

    shipped = list(shipped)
    paths = [local_copy(name, sha) for name, sha in shipped]
    if [p.sha256 for p in plugin.active()] != [sha for _, sha in shipped]:
        plugin.activate(paths)
    return paths
