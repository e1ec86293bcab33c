"""Output paths are checked before a run starts: a directory, a missing folder or a file that
cannot be opened for writing would otherwise show only after minutes of search."""
from __future__ import annotations

import os
import tempfile

from checker.config import ConfigError


def check_file(option: str, path: str) -> None:
    """`path` can be written as a file (a ConfigError naming `option` otherwise)."""
    if os.path.isdir(path):
        raise ConfigError(f"{option} {path}: is a directory, not a file")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ConfigError(f"{option} {path}: directory {folder} does not exist")
    existed = os.path.lexists(path)
    try:
        with open(path, "ab"):  # append: an existing file is left as it is
            pass
    except OSError as e:
        raise ConfigError(f"{option} {path}: cannot write: {e.strerror or e}") from None
    if not existed:  # the run may have nothing to write (e.g. no counterexample): leave no empty file
        try:
            os.remove(path)
        except OSError:
            pass


def check_dir(option: str, path: str) -> None:
    """Files can be created under `path`, or under its nearest existing ancestor if it is missing."""
    if os.path.lexists(path) and not os.path.isdir(path):
        raise ConfigError(f"{option} {path}: not a directory")
    existing = os.path.abspath(path)
    while not os.path.isdir(existing):
        existing = os.path.dirname(existing)
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as e:
        raise ConfigError(f"{option} {path}: cannot write in {existing}: {e.strerror or e}") from None
