"""checker.stop: a stop raised where Python cannot raise it (a ctypes callback such as Z3's error
handler, a `__del__`) is not reported with a traceback, and is raised again at the next check."""
from __future__ import annotations

import gc
import sys

import pytest

from checker import stop


class RaisesWhenFreed:
    def __init__(self, exc: type[BaseException], via_stop: bool) -> None:
        self.exc, self.via_stop = exc, via_stop

    def __del__(self) -> None:
        if self.via_stop:
            stop.request(self.exc)
        raise self.exc()


def test_the_stop_lost_in_a_callback_is_not_reported_and_is_raised_at_the_next_check(monkeypatch):
    reported: list[type[BaseException]] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda info: reported.append(info.exc_type))
    stop.clear()
    restore = stop.quiet_unraisable()
    try:
        RaisesWhenFreed(ValueError, via_stop=False)  # not a stop: reported as before
        gc.collect()
        assert reported == [ValueError]
        RaisesWhenFreed(KeyboardInterrupt, via_stop=True)  # the stop's own raise, lost in __del__
        gc.collect()
        assert reported == [ValueError] and stop.requested()
        with pytest.raises(KeyboardInterrupt):
            stop.check()
    finally:
        restore()
        stop.clear()
    assert sys.unraisablehook is not None and not stop.requested()
    RaisesWhenFreed(KeyboardInterrupt, via_stop=False)  # after restore, no stop pending: reported
    gc.collect()
    assert reported == [ValueError, KeyboardInterrupt]


class CutShort:
    """An object whose __init__ a stop's raise cut short, in a reference cycle, whose finalizer
    reads the attribute __init__ never set (as Z3's expressions do)."""

    def __init__(self) -> None:
        self.me = self
        stop.request(KeyboardInterrupt)
        self.ctx = "never set"

    def __del__(self) -> None:
        self.ctx.upper()


def test_a_half_built_object_finalized_after_a_stop_is_not_reported(monkeypatch):
    reported: list[type[BaseException]] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda info: reported.append(info.exc_type))
    stop.clear()
    gc.disable()  # the cycle is collected by the restore, not by chance before it
    restore = stop.quiet_unraisable()
    try:
        with pytest.raises(KeyboardInterrupt):
            CutShort()
    finally:
        restore()
        stop.clear()
        gc.enable()
    assert reported == []
    # without a stop pending, the same finalizer's error is reported as before
    restore = stop.quiet_unraisable()
    try:
        c = CutShort.__new__(CutShort)
        del c
    finally:
        restore()
    assert reported == [AttributeError]
