"""The derived relation kept between runs: each action instance's derived guard, successor and
crash condition, written as SMT-LIB text under the cache folder and read back instead of derived
again, for exactly the same inputs.

A kept instance is taken only when every input of its derivation is the same: the model's sources
(`provenance.model_digest`), the files that derive and encode it (ENGINE), the variant, the
configuration's parameters, the action, and the domain and invariant it was explored under (their
SMT-LIB text). Anything else, or a file that does not parse, is derived afresh. A plugin's change
is never cached (its decisions are bound into the model's modules while it is derived): the
callers pass no cache then.

The folder: $KCHECK_CACHE_DIR, else $XDG_CACHE_HOME/kcheck, else ~/.cache/kcheck; entries live in
its `derived/` subfolder, one file per instance, named by the SHA-256 of the inputs.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any, Callable

import z3

ENGINE = ("symbolic.py", "derive.py", "derive_replication.py", "term.py", "kraft_state.py", "replication_state.py",
          "derivation_cache.py")


def folder() -> Path:
    """Where kept derivations live."""
    if os.environ.get("KCHECK_CACHE_DIR"):
        return Path(os.environ["KCHECK_CACHE_DIR"]) / "derived"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kcheck" / "derived"


def _engine_digest() -> str:
    from checker.provenance import digest

    here = Path(__file__).parent
    return digest(here, files=[here / f for f in ENGINE])[0]


class Cache:
    """Kept derivations of one model, variant and configuration, explored under `domain` (and
    `assume`); `hits` names the instances read back rather than derived."""

    def __init__(self, model: str, variant: str, params: Any, domain: Any, assume: Any = None,
                 where: Path | None = None) -> None:
        from checker.provenance import model_digest

        self.where = where or folder()
        self.hits: set[str] = set()
        self._inputs = json.dumps({"model": model, "sources": model_digest(model), "engine": _engine_digest(),
                                   "variant": variant, "params": repr(params), "domain": domain.sexpr(),
                                   "assume": None if assume is None else assume.sexpr()}, sort_keys=True)

    def _path(self, action: Any) -> Path:
        h = hashlib.sha256((self._inputs + "\0" + type(action).__name__ + repr(action)).encode()).hexdigest()
        return self.where / f"{h}.json"

    def derive(self, action: Any, make: Callable[[], Any], pre: Any) -> Any:
        """The kept derivation of `action` when there is one, else make()'s, kept for next time."""
        from checker.proofs.derive import Derived
        from checker.proofs.term import Step

        path = self._path(action)
        start = time.perf_counter()
        try:
            kept = json.loads(path.read_text())
            terms = dict(_named(e) for e in z3.parse_smt2_string(kept["smt2"]))
            keys = [tuple(k) for k in kept["keys"]]
            post = pre.set({k: terms[f"out__{i}"] for i, k in enumerate(keys)})
            d = Derived(action, kept["paths"], kept["enabled_paths"], time.perf_counter() - start,
                        Step(terms["out__guard"], post), "", terms["out__crash"], kept["crash_paths"],
                        tuple(kept["crashes"]))
        except (OSError, ValueError, KeyError, TypeError, IndexError, z3.Z3Exception):
            d = make()
            if d.step is not None:
                self._keep(path, d, pre)
            return d
        self.hits.add(repr(action))
        return d

    def _keep(self, path: Path, d: Any, pre: Any) -> None:
        from checker.proofs.symbolic import _same

        keys = [k for k in pre.keys() if not _same(d.step.post[k], pre[k])]
        s = z3.Solver()
        s.add(z3.Bool("out__guard") == d.step.guard, z3.Bool("out__crash") == d.crash)
        s.add(*[z3.Const(f"out__{i}", d.step.post[k].sort()) == d.step.post[k] for i, k in enumerate(keys)])
        text = json.dumps({"keys": [list(k) for k in keys], "smt2": s.to_smt2(), "paths": d.paths,
                           "enabled_paths": d.enabled_paths, "crash_paths": d.crash_paths, "crashes": list(d.crashes)})
        try:
            self.where.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(text)
            os.replace(tmp, path)
        except OSError:
            pass  # a folder that cannot be written: derived again next time


def _named(e: Any) -> tuple[str, Any]:
    """(name, term) of one kept equality `out__x = term`, whichever side Z3 printed it on."""
    a, b = e.arg(0), e.arg(1)
    if not str(a).startswith("out__"):
        a, b = b, a
    if not (z3.is_eq(e) and z3.is_const(a) and str(a).startswith("out__")):
        raise ValueError(f"not a kept term: {e.sexpr()[:80]}")
    return str(a), b
