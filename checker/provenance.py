"""Which model source a run checks: the `model` package this process imported, and a digest of
its sources, shown in every verdict (the text header and `--json`'s `model_source`).

The digest is SHA-256 over the model package's `.py` files in sorted order of their paths
relative to the package (each path, then its bytes). It reads the `.py` files, never the
compiled modules beside them: model/compiled.py takes a compiled module only while its source
still has the digest recorded at build time (setup.py's `_compiled_sources.json`), so the
sources are what runs.

`check_checkout` refuses a run started inside a kcheck source tree whose `model/` differs from
the imported one: after a plain `pip install .` an edited checkout is not what `kcheck` checks,
and an "ok" there would be about the installed copy (docs/cli.md, "Working on the model").
"""
from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

from checker.config import ConfigError


@dataclass(frozen=True)
class ModelSource:
    """The imported model package: its folder, the digest of its sources, how many files."""

    path: str
    sha256: str
    files: int
    compiled: tuple[str, ...]  # the model's modules imported so far that run compiled

    @property
    def short(self) -> str:
        return self.sha256[:12]

    def text(self) -> str:
        return f"{self.path} (sha256 {self.short})"

    def as_json(self) -> dict[str, Any]:
        return {"path": self.path, "sha256": self.sha256, "files": self.files, "compiled": list(self.compiled)}


def sources(folder: Path, only: Iterable[str] | None = None) -> list[Path]:
    """The `.py` files under `folder` (or directly in it and under its subfolders `only`), sorted."""
    if only is None:
        files = folder.rglob("*.py")
    else:
        files = [*folder.glob("*.py"), *(p for sub in only for p in (folder / sub).rglob("*.py"))]
    return sorted((p for p in files if "__pycache__" not in p.parts), key=lambda p: p.relative_to(folder).as_posix())


def digest(folder: Path, only: Iterable[str] | None = None, files: Iterable[Path] | None = None) -> tuple[str, int]:
    """(SHA-256, number of files) of `files` (default `sources(folder, only)`): each path relative to
    `folder`, then its bytes."""
    h = hashlib.sha256()
    files = sources(folder, only) if files is None else sorted(files, key=lambda p: p.relative_to(folder).as_posix())
    for p in files:
        h.update(p.relative_to(folder).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest(), len(files)


def package_folder() -> Path:
    """The folder of the imported `model` package."""
    import model

    return Path(model.__file__).resolve().parent


@lru_cache(maxsize=1)
def _digest_of_imported() -> tuple[str, str, int]:
    folder = package_folder()
    sha, n = digest(folder)
    return str(folder), sha, n


def model_source() -> ModelSource:
    """The model source of this process (read once; the model is pure, so it does not change)."""
    from model import compiled

    path, sha, n = _digest_of_imported()
    return ModelSource(path, sha, n, tuple(m for m in compiled.in_use() if m.startswith("model.")))


def model_digest(name: str) -> str:
    """SHA-256 of one model's sources: the model package's shared modules (model/*.py) and the
    model's own folder (model/<name>/), so an edit of another model leaves it unchanged."""
    return digest(package_folder(), [name])[0]


def enclosing_checkout(start: Path) -> Path | None:
    """The kcheck source tree holding `start`: the nearest folder, `start` or a parent, with a
    pyproject.toml naming project kcheck and a model/ folder."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    for folder in (start, *start.parents):
        project = folder / "pyproject.toml"
        if not (project.is_file() and (folder / "model").is_dir()):
            continue
        try:
            name = tomllib.loads(project.read_text(encoding="utf-8")).get("project", {}).get("name")
        except (OSError, ValueError, UnicodeDecodeError):
            continue
        if name == "kcheck":
            return folder
    return None


def check_checkout(cwd: Path | None = None) -> None:
    """ConfigError when this run starts inside a kcheck checkout whose model sources differ from
    the imported ones (an edited checkout after a non-editable install)."""
    try:
        here = (cwd or Path.cwd()).resolve()
    except OSError:  # the working directory was removed: no checkout to compare with
        return
    checkout = enclosing_checkout(here)
    if checkout is None:
        return
    imported = model_source()
    theirs = (checkout / "model").resolve()
    if Path(imported.path) == theirs:
        return
    sha, _ = digest(theirs)
    if sha == imported.sha256:
        return
    raise ConfigError(
        f"this run is inside the kcheck checkout {checkout}, whose model (sha256 {sha[:12]}) differs from the"
        f" installed one it would check, {imported.text()}: to check the checkout's model, install it editable"
        f" (pip install -e {checkout}) or run python -m checker.cli from {checkout}; to check the installed"
        " model, run from outside the checkout (docs/cli.md, \"Working on the model\")")
