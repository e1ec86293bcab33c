"""A progress line on stderr while a long phase says nothing: Z3 solving, reading a large trace.
A background thread prints `kcheck: LABEL: still running, Ns (last: ...)` whenever `every`
seconds pass without a `beat`; Z3 and file reads release the GIL, so the thread gets to run."""
from __future__ import annotations

import sys
import threading
import time
from typing import Any, TextIO

EVERY = 15.0  # seconds of silence before a line


class Heartbeat:
    """`with Heartbeat("prove", stream) as h: ... h.beat("lemma x")`; a None stream prints nothing."""

    def __init__(self, label: str, stream: TextIO | None = sys.stderr, every: float | None = None) -> None:
        self.label, self.stream = label, stream
        self.every = EVERY if every is None else every
        self.start = self.last = time.monotonic()
        self.note = ""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"kcheck-heartbeat-{label}", daemon=True)

    def beat(self, note: str = "") -> None:
        """Something was reported (or happened): the silence starts again."""
        self.last, self.note = time.monotonic(), note or self.note

    def _run(self) -> None:
        while not self._stop.wait(min(self.every, 1.0) if self.every > 0 else 0.01):
            now = time.monotonic()
            if now - self.last >= self.every:
                last = f" (last: {self.note})" if self.note else ""
                print(f"kcheck: {self.label}: still running, {now - self.start:.0f}s{last}", file=self.stream,
                      flush=True)
                self.last = now

    def __enter__(self) -> "Heartbeat":
        if self.stream is not None:
            self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
