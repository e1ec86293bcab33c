"""Parent links on disk: for each BFS level, the (fingerprint, parent fingerprint) pairs of the
states first found at that level, in the order they were found, as native uint64s in one file
per level (`links-LLLL.bin` under the run's directory).

The visited set (checker/search/visited.py) holds only fingerprints; these files are what a
counterexample is rebuilt from (`chain`), by one backward scan per level of the trace, and what
a resumed run rebuilds its visited set from (`load_into`). 16 bytes a state, on disk.
"""
from __future__ import annotations

import os
from array import array
from pathlib import Path
from typing import Any, Optional

BLOCK = 1 << 20  # pairs read at a time when scanning a level
FLUSH = 1 << 16  # pairs buffered before a write


class ParentLinks:
    """The parent-link files of one search, under `directory` (created if missing)."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._level = -1
        self._file: Optional[Any] = None
        self._buffer = array("Q")

    def path(self, level: int) -> Path:
        return self.directory / f"links-{level:04d}.bin"

    def add(self, level: int, fp: int, parent: int) -> None:
        """Record that `fp` was first found at `level`, from `parent` (0 at level 0)."""
        if level != self._level:
            self._switch(level)
        buf = self._buffer
        buf.append(fp)
        buf.append(parent)
        if len(buf) >= 2 * FLUSH:
            self._write()

    def add_pairs(self, level: int, pairs: bytes) -> None:
        """Record a batch of (fingerprint, parent) uint64 pairs, as `FPSet.insert_batch` gives them."""
        if level != self._level:
            self._switch(level)
        if pairs:
            self._write()
            assert self._file is not None
            self._file.write(pairs)

    def flush(self) -> None:
        """Everything recorded so far is in the files (and, with `sync`, on the disk)."""
        self._write()
        if self._file is not None:
            self._file.flush()

    def sync(self) -> None:
        self.flush()
        if self._file is not None:
            os.fsync(self._file.fileno())

    def close(self) -> None:
        self.flush()
        if self._file is not None:
            self._file.close()
            self._file = None

    def _write(self) -> None:
        if self._buffer:
            assert self._file is not None
            self._buffer.tofile(self._file)
            self._buffer = array("Q")

    def _switch(self, level: int) -> None:
        self.close()
        self._level = level
        self._file = open(self.path(level), "ab")

    def parent(self, fp: int, level: int) -> int:
        """The parent of `fp`, which was first found at `level`."""
        self.flush()
        with open(self.path(level), "rb") as f:
            while True:
                block = array("Q")
                block.frombytes(f.read(16 * BLOCK))
                if not block:
                    break
                start = 0
                while True:
                    try:
                        i = block.index(fp, start)
                    except ValueError:
                        break
                    if i % 2 == 0:
                        return block[i + 1]
                    start = i + 1
        raise LookupError(f"fingerprint {fp:#x} is not recorded at level {level} in {self.directory}")

    def chain(self, fp: int, level: int) -> list[int]:
        """The fingerprints from an initial state (level 0) to `fp`, found at `level`."""
        out = [fp]
        for at in range(level, 0, -1):
            fp = self.parent(fp, at)
            out.append(fp)
        out.reverse()
        return out

    def load_into(self, visited: Any, levels: int) -> int:
        """Add the fingerprints of levels 0 .. `levels` - 1 to `visited`; the count added."""
        self.flush()
        added = 0
        for level in range(levels):
            with open(self.path(level), "rb") as f:
                while True:
                    data = f.read(16 * BLOCK)
                    if not data:
                        break
                    added += visited.add_pairs(data)
        return added

    def drop_from(self, level: int) -> None:
        """Delete the files of `level` and later (a resumed run rewrites them)."""
        self.close()
        for p in self.directory.glob("links-*.bin"):
            if int(p.stem.split("-")[1]) >= level:
                p.unlink()
