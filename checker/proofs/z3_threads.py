"""Z3's reference counts are not thread-safe, and a Z3 object can be freed on a thread that is
not the one using Z3: a Python object released by a native thread (JPype's reference queue,
after `kcheck conform` started a JVM in the process) can run the garbage collector there, whose
`__del__` of a Z3 term then races the main thread inside Z3 (a segmentation fault). Here a Z3
object freed on a thread other than the one that imported this module is not released: its
memory is kept, and the process stays whole."""
from __future__ import annotations

import threading
from typing import Any

import z3

_OWNER = threading.get_ident()


def _guarded(release: Any) -> Any:
    def __del__(self: Any) -> None:
        if threading.get_ident() == _OWNER:
            release(self)

    return __del__


for _cls in {c for c in vars(z3.z3).values() if isinstance(c, type) and "__del__" in vars(c)}:
    _cls.__del__ = _guarded(vars(_cls)["__del__"])
