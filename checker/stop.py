"""Stop requests from signal handlers: Ctrl-C, SIGTERM, `--timeout`, a mutant's time budget.

Python runs a signal handler between two bytecodes of the main thread, and an exception the
handler raises there is lost ("unraisable", reported and ignored) when those bytecodes belong to a
garbage-collector callback or a `__del__`. So a handler records the request as well as raising
it, and the long loops (BFS levels, the liveness graph) call `check()` every thousand states.
Once a stop is requested, whatever error escapes a library the raise went through (ctypes'
ArgumentError around Z3, Py4J's errors around Spark) is that stop's (`requested()`).

No handler runs while the main thread waits in C code (a Z3 query, for minutes): `cancelling`
has a helper thread, woken by the signal itself, call the library's own cancel meanwhile."""
from __future__ import annotations

import gc
import os
import signal
import sys
import threading
from contextlib import contextmanager
from typing import Callable, Iterator, Optional

_pending: Optional[type[BaseException]] = None
_deferred = 0  # inside `cancelling(..., defer=True)`: a request is only recorded


def request(exc: type[BaseException]) -> None:
    """Raise `exc` now, and again at the next `check()` if this raise is swallowed; where raising
    is deferred, only at the next `check()`."""
    global _pending
    _pending = exc
    if not _deferred:
        raise exc


def check() -> None:
    """Raise the pending request, if any."""
    if _pending is not None:
        raise _pending


def requested() -> bool:
    """Whether a stop was requested (and not cleared)."""
    return _pending is not None


STOPS = frozenset({signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGALRM", signal.SIGTERM)})


@contextmanager
def cancelling(cancel: Callable[[], None], defer: bool = False) -> Iterator[None]:
    """Within: a stop signal (Ctrl-C, SIGTERM, --timeout's alarm) also calls `cancel()` from a
    helper thread, at once and then every 50 ms until the block ends (a query started just after
    the signal is cancelled too). Python's signal wake-up file descriptor wakes the helper: it is
    written by the interpreter's C-level handler, which runs even while the main thread is in C.
    `defer`: the handlers only record the request, raised at the next `check()`: an exception
    raised in the middle of a client's call (Py4J's, talking to Spark's JVM) would break its
    connection and print a traceback; the call returns soon anyway, failed by `cancel()`."""
    global _deferred
    read, write = os.pipe()
    os.set_blocking(write, False)
    try:
        previous = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    except ValueError:  # not the main thread: no handler here either
        os.close(read)
        os.close(write)
        yield
        return
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            if any(sig in STOPS for sig in os.read(read, 64)):
                while not done.is_set():
                    try:
                        cancel()
                    except Exception:  # noqa: BLE001 - e.g. the client closing meanwhile: the main thread reports
                        pass
                    done.wait(0.05)

    helper = threading.Thread(target=watch, name="kcheck-cancel", daemon=True)
    helper.start()
    _deferred += defer
    try:
        yield
    finally:
        _deferred -= defer
        done.set()
        signal.set_wakeup_fd(previous)
        os.write(write, b"\0")  # wakes the helper if it still waits
        helper.join()
        os.close(read)
        os.close(write)


def clear(exc: Optional[type[BaseException]] = None) -> None:
    """Forget the pending request (only if it is `exc`, when given): its handler was disarmed."""
    global _pending
    if exc is None or _pending is exc:
        _pending = None


def quiet_unraisable() -> Callable[[], None]:
    """Until the returned function is called, the stop's own exception, when a handler raised it
    inside a callback (Z3's error handler is a ctypes callback, called when the helper cancels a
    Z3 call), is not reported as "Exception ignored" with a traceback: it is pending, and `check()`
    raises it again. Nor, while a stop is pending, an AttributeError from a `__del__`: the
    finalizer of an object whose `__init__` the stop's raise cut short (a Z3 expression without
    its `ctx`). Any other unraisable exception goes to the hook there was. The returned function
    first collects garbage while a stop is pending, so that such objects in reference cycles (the
    interrupted frames) are finalized here, not at exit under the hook there was."""
    previous = sys.unraisablehook

    def hook(info: "sys.UnraisableHookArgs") -> None:
        if _pending is not None and info.exc_type is not None and (
                issubclass(info.exc_type, _pending)
                or (issubclass(info.exc_type, AttributeError) and getattr(info.object, "__name__", "") == "__del__")):
            return
        previous(info)

    sys.unraisablehook = hook

    def restore() -> None:
        if _pending is not None:
            gc.collect()
        sys.unraisablehook = previous

    return restore
