"""The BFS queue of one level: (state, fingerprint) items in the order they were found, the
first `keep` in memory and the rest pickled to a spill file in blocks, so that the memory a
level takes stops growing past `keep` states. `save` writes the whole queue to one file (a
checkpoint) and `Frontier.load` reads one back, lazily.
"""
from __future__ import annotations

import os
import pickle
from pathlib import Path
from typing import Any, Iterator, Optional

BLOCK = 4096  # items pickled together: one pickle memo, so shared parts of states are written once
UNLIMITED = -1


class Frontier:
    """A FIFO of items; past `keep` items (`UNLIMITED`: never) they go to `spill` on disk."""

    def __init__(self, spill: Optional[Path] = None, keep: int = UNLIMITED) -> None:
        if keep != UNLIMITED and spill is None:
            raise ValueError("a frontier that spills needs a spill file")
        self._spill_path = spill
        self._spill: Optional[Any] = None
        self._keep = keep
        self._head: list[Any] = []
        self._blocks: list[tuple[Path, int, int, int]] = []  # (file, offset, bytes, items)
        self._tail: list[Any] = []
        self._on_disk = 0

    def __len__(self) -> int:
        return len(self._head) + self._on_disk + len(self._tail)

    @property
    def spilled(self) -> int:
        """Items on disk."""
        return self._on_disk + (len(self._tail) if self._blocks or self._tail else 0)

    def append(self, item: Any) -> None:
        if self._keep == UNLIMITED or (len(self._head) < self._keep and not self._blocks and not self._tail):
            self._head.append(item)
            return
        self._tail.append(item)
        if len(self._tail) >= BLOCK:
            self._write_tail()

    def extend(self, items: list[Any]) -> None:
        for item in items:
            self.append(item)

    def _write_tail(self) -> None:
        assert self._spill_path is not None
        if self._spill is None:
            self._spill = open(self._spill_path, "w+b")
        data = pickle.dumps(self._tail, protocol=pickle.HIGHEST_PROTOCOL)
        self._spill.seek(0, os.SEEK_END)
        offset = self._spill.tell()
        self._spill.write(data)
        self._blocks.append((self._spill_path, offset, len(data), len(self._tail)))
        self._on_disk += len(self._tail)
        self._tail = []

    def _read(self, block: tuple[Path, int, int, int]) -> list[Any]:
        path, offset, size, _ = block
        if path == self._spill_path and self._spill is not None:
            self._spill.flush()
        with open(path, "rb") as f:
            f.seek(offset)
            return pickle.loads(f.read(size))  # type: ignore[no-any-return]

    def __iter__(self) -> Iterator[Any]:
        yield from self._head
        for block in self._blocks:
            yield from self._read(block)
        yield from self._tail

    def pop_last(self, n: int) -> list[Any]:
        """Remove and return the last `n` items, in order (a worker's share handed to another)."""
        taken: list[Any] = []
        while n > 0 and len(self):
            if not self._tail and self._blocks:
                block = self._blocks.pop()
                self._on_disk -= block[3]
                self._tail = self._read(block)
            source = self._tail if self._tail else self._head
            k = min(n, len(source))
            taken[:0] = source[len(source) - k:]
            del source[len(source) - k:]
            n -= k
        return taken

    def save(self, path: Path) -> None:
        """Write every item, in order, to `path` (through a temporary file, then fsync and rename)."""
        tmp = path.with_name(path.name + ".tmp")
        with open(tmp, "wb") as out:
            for i in range(0, len(self._head), BLOCK):
                _write_block(out, self._head[i:i + BLOCK])
            for block in self._blocks:
                _write_block(out, None, self._raw(block), block[3])
            if self._tail:
                _write_block(out, self._tail)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)

    def _raw(self, block: tuple[Path, int, int, int]) -> bytes:
        path, offset, size, _ = block
        if path == self._spill_path and self._spill is not None:
            self._spill.flush()
        with open(path, "rb") as f:
            f.seek(offset)
            return f.read(size)

    @classmethod
    def load(cls, path: Path, spill: Optional[Path] = None, keep: int = UNLIMITED) -> "Frontier":
        """The frontier `save` wrote to `path`; its items stay on disk until read."""
        fr = cls(spill, keep if spill is not None else UNLIMITED)
        for offset, size, count in blocks(path):
            fr._blocks.append((path, offset, size, count))
            fr._on_disk += count
        return fr

    def close(self) -> None:
        """Drop the spill file (not a file it was loaded from)."""
        if self._spill is not None:
            self._spill.close()
            self._spill = None
        if self._spill_path is not None and self._spill_path.exists():
            self._spill_path.unlink()


def blocks(path: Path) -> list[tuple[int, int, int]]:
    """The (offset, bytes, items) of each block `save` wrote to `path` (ValueError when the
    file is cut short, or a header names a block that cannot be a pickle)."""
    out = []
    end = os.path.getsize(path)
    with open(path, "rb") as f:
        while True:
            header = f.read(16)
            if not header:
                return out
            if len(header) < 16:
                raise ValueError("is cut short (within a block header)")
            size, count = int.from_bytes(header[:8], "little"), int.from_bytes(header[8:], "little")
            offset = f.tell()
            if offset + size > end:
                raise ValueError(f"is cut short (a block of {size:,} bytes at byte {offset:,}, the file ends at {end:,})")
            if size == 0 or count == 0:
                raise ValueError(f"has an empty block at byte {offset:,}")
            f.seek(size, os.SEEK_CUR)
            out.append((offset, size, count))


def _write_block(out: Any, items: Optional[list[Any]], data: Optional[bytes] = None, count: int = 0) -> None:
    """One block of a saved frontier: its byte size and item count (8 bytes each, little-endian), then its pickle."""
    if items is not None:
        data = pickle.dumps(items, protocol=pickle.HIGHEST_PROTOCOL)
        count = len(items)
    assert data is not None
    out.write(len(data).to_bytes(8, "little") + count.to_bytes(8, "little"))
    out.write(data)
