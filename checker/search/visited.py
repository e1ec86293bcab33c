"""The visited set of the exhaustive search: distinct-state fingerprints, 64-bit, unsigned.

`FPSet` is the compiled table of checker/_fpset.c (8 bytes a slot, 53-85% full: at most about
15 bytes a distinct state), built by `pip install`. Where no C compiler was at hand the build
skips it and `FPSet` is the pure-Python `PyFPSet` below: the same methods and results, a
Python set's memory (about 60 bytes a state). `COMPILED` says which one this install has.
"""
from __future__ import annotations

from array import array
from typing import Any

MASK = (1 << 64) - 1


class PyFPSet:
    """The fallback: `checker._fpset.FPSet`'s methods over a Python set of unsigned ints."""

    def __init__(self, expected: int = 0) -> None:
        self._fps: set[int] = set()
        self.digest = 0

    def add(self, fp: int) -> bool:
        fp &= MASK
        if fp in self._fps:
            return False
        self._fps.add(fp)
        self.digest = (self.digest + fp) & MASK
        return True

    def __contains__(self, fp: object) -> bool:
        return isinstance(fp, int) and fp & MASK in self._fps

    def __len__(self) -> int:
        return len(self._fps)

    def insert_batch(self, fps: bytes, pfps: bytes, room: int) -> tuple[bytes, bytes, bool]:
        f, p = array("Q"), array("Q")
        f.frombytes(fps)
        p.frombytes(pfps)
        if len(f) != len(p):
            raise ValueError("fps and pfps differ in length")
        mask = bytearray(len(f))
        pairs = array("Q")
        for j, fp in enumerate(f):
            if fp in self._fps:
                continue
            if 0 <= room <= len(pairs) // 2:
                return bytes(mask), pairs.tobytes(), True
            self.add(fp)
            mask[j] = 1
            pairs.append(fp)
            pairs.append(p[j])
        return bytes(mask), pairs.tobytes(), False

    def add_pairs(self, buffer: Any) -> int:
        v = array("Q")
        v.frombytes(bytes(buffer))
        return sum(self.add(fp) for fp in v[::2])

    def add_fps(self, buffer: Any) -> int:
        v = array("Q")
        v.frombytes(bytes(buffer))
        return sum(self.add(fp) for fp in v)

    @property
    def nbytes(self) -> int:
        return len(self._fps) * 60


try:
    from checker._fpset import FPSet  # type: ignore[import-not-found]

    COMPILED = True
except ImportError:  # pragma: no cover - an install without a C compiler
    FPSet = PyFPSet  # type: ignore[misc,assignment]
    COMPILED = False
