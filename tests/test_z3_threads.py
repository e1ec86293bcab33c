"""Z3 objects freed on a thread other than Z3's own are kept, not released (checker/proofs/z3_threads.py):
a JVM's reference-queue thread once ran the collector into Z3 during a proof and crashed the process."""
from __future__ import annotations

import threading

import z3

import checker.proofs  # noqa: F401  (installs the guard)


def test_a_term_freed_on_another_thread_is_not_released(monkeypatch):
    released = []
    monkeypatch.setattr(z3.z3, "Z3_dec_ref", lambda ctx, ast: released.append(ast))
    box = [z3.Int("a") + 1]

    def drop() -> None:
        box.clear()  # the last reference: __del__ runs here, on this thread

    released.clear()  # the intermediate terms, freed here while the sum was made
    t = threading.Thread(target=drop)
    t.start()
    t.join()
    assert released == []
    z3.Int("b") + 2  # a term made and freed on this thread is released as before
    assert released


def test_every_z3_class_that_frees_is_guarded():
    classes = [c for c in vars(z3.z3).values() if isinstance(c, type) and "__del__" in vars(c)]
    assert z3.AstRef in classes and z3.Solver in classes
    assert all(vars(c)["__del__"].__qualname__.startswith("_guarded") for c in classes)
