"""What Z3 terms mention, for tests that check an abstraction reads every field it should."""
from __future__ import annotations

from typing import Any, Iterable

import z3


def symbols(terms: Iterable[Any]) -> set[str]:
    """The names of the function and constant symbols the terms apply, quantifier bodies included."""
    seen: set[str] = set()
    todo = list(terms)
    while todo:
        t = todo.pop()
        if z3.is_quantifier(t):
            todo.append(t.body())
        elif z3.is_app(t):
            seen.add(t.decl().name())
            todo.extend(t.children())
    return seen
