"""States are NamedTuples rebuilt on every transition: a `_replace` that builds the tuple directly,
shared by both models (the stock one goes through `_make(map(kwds.pop, ...))`, about 1.7x slower).

Where the install built model/_tuples.c, `_replace` is its C version (a method descriptor that
copies the tuple and sets the named fields): a Python function made by exec runs in the
interpreter even in a compiled model, at some 300 to 500 ns a call. And the class's fields are
read by its C attribute lookup (`fast_fields`: a field found by its name's identity, any other
name by the generic lookup). Both make and read the same tuples; `KCHECK_PURE_PYTHON=1` takes
the Python ones, as it takes every module's `.py`."""
from __future__ import annotations

from typing import Any, Callable

from model import compiled

try:
    from model._tuples import Replace, fast_fields as _fast_fields  # type: ignore[import-not-found]
except ImportError:  # built without a C compiler, or run from a checkout that was never built
    Replace = _fast_fields = None


def _in_c() -> bool:
    return Replace is not None and not compiled.pure()


def fast_replace(cls: Any) -> Any:
    """Give a NamedTuple a keyword-only `_replace` (an unknown field is a TypeError, as before),
    and its fields' C lookup (`fast_fields`)."""
    cls._replace = Replace(cls) if _in_c() else python_replace(cls)
    return fast_fields(cls)


def fast_fields(cls: Any) -> Any:
    """Read a NamedTuple's fields by the C lookup, where it was built (see above)."""
    return _fast_fields(cls) if _in_c() else cls


def python_replace(cls: Any) -> Callable[..., Any]:
    """The `_replace` of a NamedTuple `cls` as a Python function that builds the tuple directly."""
    fields = cls._fields
    params = ", ".join(f"{f}=_KEEP" for f in fields)
    items = ", ".join(f"(self[{i}] if {f} is _KEEP else {f})" for i, f in enumerate(fields))
    namespace: dict[str, Any] = {"_KEEP": object(), "_new": tuple.__new__, "_cls": cls}
    exec(f"def _replace(self, *, {params}):\n    return _new(_cls, ({items},))", namespace)  # noqa: S102
    replace: Callable[..., Any] = namespace["_replace"]
    replace.__doc__ = f"Return a new {cls.__name__} with the given fields replaced."
    return replace
