"""Compiled parts of kcheck, all optional: without a C compiler (or Cython) the install goes on and
everything runs as pure Python, with the same results.

- `checker._fpset`: the visited set's fingerprint table (checker/_fpset.c).
- `model._tuples`: the states' `_replace` and field lookup in C (model/_tuples.c, taken by model/tuples.py).
- The models and the checker's search loops, compiled by Cython from their unchanged Python
  sources. Next to each compiled module goes `_compiled_sources.json`, the SHA-256 of the source
  it was built from; model/compiled.py takes a compiled module only while its source still has
  that digest, so an edited model is never shadowed by a stale build.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

# What a run spends its time in: every model module (the successor function and the properties)
# and the checker's search loops. The rest of the checker runs once per command.
COMPILED = sorted(str(p) for pattern in ("model/replication/*.py", "model/kraft/*.py")
                  for p in Path().glob(pattern) if p.name != "__init__.py") + [
    "checker/search/bfs.py", "checker/search/por.py", "checker/fingerprint.py", "checker/search/parallel.py",
    "checker/walks/walker.py"]


# The digest of each source as Cython read it: taken before cythonize, so a source edited while the
# install runs is recorded as it was compiled, and compiled.py then runs its Python instead.
SOURCE_DIGESTS: dict[str, str] = {}


def _cython_extensions() -> list[Extension]:
    if os.environ.get("KCHECK_PURE_PYTHON"):
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        return []
    extensions = [Extension(path[:-3].replace("/", "."), [path], optional=True) for path in COMPILED]
    SOURCE_DIGESTS.update((path, hashlib.sha256(Path(path).read_bytes()).hexdigest()) for path in COMPILED)
    # annotation_typing off: the sources' annotations are documentation, never C types, so the
    # compiled module behaves exactly as the Python one (same objects, same hashes, same order).
    return cythonize(extensions, build_dir="build/cython", quiet=True, nthreads=os.cpu_count() or 1,
                     compiler_directives={"language_level": 3, "annotation_typing": False, "binding": True})


def _c_helpers() -> list[Extension]:
    """The models' C helpers, built with the compiled models (model/tuples.py falls back to Python)."""
    if os.environ.get("KCHECK_PURE_PYTHON"):
        return []
    return [Extension("model._tuples", ["model/_tuples.c"], optional=True)]


class BuildExt(build_ext):
    """build_ext that records, next to each compiled module, the digest of the source it came from."""

    def finalize_options(self) -> None:
        super().finalize_options()
        if not self.parallel:  # one compiler per core, also when pip gives no options
            self.parallel = os.cpu_count() or 1

    def build_extensions(self) -> None:
        # No debug info in the compiled modules: half the compiler's time and an eighth of the object
        # size (the Python defaults' -g), and nothing a user of the checker reads.
        if self.compiler.compiler_type == "unix":
            for ext in self.extensions:
                ext.extra_compile_args = [*ext.extra_compile_args, "-g0"]
        super().build_extensions()

    def run(self) -> None:
        super().run()
        tables: dict[Path, dict[str, str]] = {}
        for ext in self.extensions:
            built = Path(self.get_ext_fullpath(ext.name))
            source = ext.name.replace(".", "/") + ".py"
            if built.is_file() and source in SOURCE_DIGESTS:
                tables.setdefault(built.parent, {})[Path(source).name] = SOURCE_DIGESTS[source]
        for folder, table in tables.items():
            (folder / "_compiled_sources.json").write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")


setup(
    ext_modules=[Extension("checker._fpset", ["checker/_fpset.c"], optional=True)] + _cython_extensions()
    + _c_helpers(),
    cmdclass={"build_ext": BuildExt},
)
