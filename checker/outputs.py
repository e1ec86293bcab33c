"""Output paths are checked before a run starts: a directory, a missing folder or a file that
cannot be opened for writing would otherwise show only after minutes of search, and an output
that is one of the run's inputs (or another of its outputs) would be overwritten without a word."""
from __future__ import annotations

import os
import tempfile
from typing import Iterable, Optional, Tuple

from checker.config import ConfigError

Named = Tuple[str, Optional[str]]  # (what the path is, as the user named it; the path or None)


def plugin_inputs(paths: Iterable[str]) -> list[Named]:
    """The plugin files of a run, as inputs: an output over one would lose the user's change."""
    return [("the plugin file", p) for p in paths or ()]


def check_outputs(files: Iterable[Named] = (), dirs: Iterable[Named] = (), inputs: Iterable[Named] = ()) -> None:
    """Every output file and directory can be written, and no output file is an input or another
    output of the same run: `kcheck render T --html T` is bad input, found before anything is read
    or written. `files` and `dirs` are (option, path) pairs, `inputs` (description, path) pairs;
    a None path is an option not given."""
    files = [(o, p) for o, p in files if p]
    dirs = [(o, p) for o, p in dirs if p]
    inputs = [(what, p) for what, p in inputs if p]
    for i, (option, path) in enumerate(files):
        for what, other in inputs:
            if same_file(path, other):
                raise ConfigError(f"{option} {path}: is {what} ({other}), an input of this run: writing it would"
                                  " overwrite it; choose another file")
        for other_option, other in files[:i] + dirs:
            if same_file(path, other):
                raise ConfigError(f"{option} {path}: is also {other_option} {other}: one output would overwrite"
                                  " the other; choose another file")
    for option, path in files:
        check_file(option, path)
    for option, path in dirs:
        check_dir(option, path)


def same_file(a: str, b: str) -> bool:
    """`a` and `b` name one file: the same path once symlinks, `..` and `./` are resolved, or
    the same inode (a hard link)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist yet: it cannot be a link to the other
        return False


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
