"""Proofs: symbolic (Z3) encodings of the models, for inductive-invariant proofs and bounded model
checking (`kcheck prove`), in the style of mypyvy: a state is a set of Z3 terms, each action a
guard and a post-state built from the pre-state's terms, and every invariant a named formula.

Modules:
  term        the symbolic-state container and the few term helpers (ite merge, select, count)
  kraft_state the KRaft state layout: variables, the abstraction of a Python state, decoding
  kraft_ctx   the configuration a KRaft encoding reads, its action instances, the log readings
  kraft_inv   the KRaft safety invariants (model/kraft/properties.py) and the auxiliary lemmas
  derive, derived
              the KRaft transition relation and Init derived from the model's Python, and the
              proofs on it (the hand-written relation is a test oracle: tests/oracles/kraft_next.py)
  replication_state, replication_next, replication_inv
              the layout, the hand-written relation and the invariants of the replication model
              (model/replication); derive_replication, derived_replication derive its relation
  induction   Init => Inv and Inv & Next => Inv', per action, with counterexamples to induction
  bmc         bounded model checking: K unrolled steps, a counterexample as a concrete trace
  conformance the encoding against the Python model on sampled reachable states
  checked_against
              the model sources each encoding was checked against; `kcheck prove` refuses
              any other sources
  record      python -m checker.proofs.record: the cross-checks, then the record

Each hand-written relation is cross-checked against its Python model (tests/test_symbolic_conformance.py,
tests/test_symbolic_replication.py).
"""
from checker.proofs import z3_threads  # noqa: F401  (Z3 objects freed on other threads are kept: z3_threads.py)
