"""Stop requests from signal handlers: Ctrl-C, SIGTERM, `--timeout`, a mutant's time budget.

Python runs a signal handler between two bytecodes of the main thread, and an exception the
handler raises there is lost ("unraisable", reported and ignored) when those bytecodes belong to a
garbage-collector callback or a `__del__`. So a handler records the request as well as raising
it, and the long loops (BFS levels, the liveness graph) call `check()` every thousand states."""
from __future__ import annotations

from typing import NoReturn, Optional

_pending: Optional[type[BaseException]] = None


def request(exc: type[BaseException]) -> NoReturn:
    """Raise `exc` now, and again at the next `check()` if this raise is swallowed."""
    global _pending
    _pending = exc
    raise exc


def check() -> None:
    """Raise the pending request, if any."""
    if _pending is not None:
        raise _pending


def clear(exc: Optional[type[BaseException]] = None) -> None:
    """Forget the pending request (only if it is `exc`, when given): its handler was disarmed."""
    global _pending
    if exc is None or _pending is exc:
        _pending = None
