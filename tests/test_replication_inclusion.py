"""The every-size replication encoding against the relation derived from the model's Python, by Z3
(checker/proofs/replication_inclusion.py): what `kcheck prove --model replication --size any`
rests on, besides its sample check."""
from __future__ import annotations

import z3

from checker.config import load_config
from checker.proofs import derive_replication as DR
from checker.proofs import replication_inclusion as RI
from checker.proofs import replication_param as R
from checker.proofs.replication_next import Ctx
from model.replication import actions as A
from model.replication.params import Params
from tests.terms import symbols


def _params(**overrides) -> Params:
    return Params.from_config({**dict(load_config(model="replication", preset="default").config), **overrides})


def _size(acts: list, **overrides) -> RI.SizeReport:
    return RI.check_size(_params(**overrides), "kafka-4.1", acts, timeout_ms=60_000)


def test_the_abstraction_reads_every_field_the_encoding_keeps():
    """A field left out would let the encoding change it freely: an effect of the model on it
    could never show. The snapshots of pending writes are the one exception: none pend in the
    fixed-size layout (alpha fixes their count at 0)."""
    layout = Ctx.of(_params(), "kafka-4.1").layout
    u, _, _ = R.world(3, 2)
    p = R.fresh("cover_")
    seen = symbols(RI.abstraction(layout, RI.fresh(layout, "c_"), p, u))
    missing = [k for k in R.SIGNATURE if not k.startswith("snap_") and f"cover_{k}" not in seen]
    assert missing == [] and "cover_nun" in seen


def test_broker_steps_of_the_model_are_steps_of_the_encoding():
    """A crash, a fetch sent and a lost message leave the controller as it was: included."""
    rep = _size([A.Crash(0), A.SendFetch(1), DR.N.DropMessageIn(0)])
    assert [r.verdict for r in rep.results] == ["included"] * 3, [r.detail for r in rep.results]
    assert all(r.paths > 1 for r in rep.results)


def test_a_broker_action_that_writes_the_controller_is_not_included(monkeypatch):
    """An edit of the model: a crash fences the broker's registration at once. The encoding's
    broker steps leave the controller as it was, so the edited crash is not one of them."""
    real = DR._STEP[A.Crash]

    def crash_fences(s, ctx, a):
        t = real(s, ctx, a)
        if t is None:
            return None
        regs = list(t.controller.brokers)
        regs[a.broker] = regs[a.broker]._replace(fenced=True)
        return t._replace(controller=t.controller._replace(brokers=tuple(regs)))

    monkeypatch.setitem(DR._STEP, A.Crash, crash_fences)
    rep = _size([A.Crash(0)])
    assert rep.failure is not None and rep.failure.verdict == "not included", rep.failure
    assert "fenced_0=False" in rep.failure.detail


def test_an_encoding_whose_broker_steps_move_the_leader_is_not_included(monkeypatch):
    """A mistake in the encoding: its broker steps clear the leader. The model's crash keeps it."""
    wrong = [(n, (lambda s, c, st: s.with_(has_leader=lambda: z3.BoolVal(False))) if n == "BrokerStep" else f, t, e)
             for n, f, t, e in R.ACTIONS]
    monkeypatch.setattr(R, "ACTIONS", wrong)
    rep = _size([A.Crash(1)])
    assert rep.failure is not None and rep.failure.verdict == "not included"


def test_a_controller_event_of_the_model_is_one_of_the_encoding(monkeypatch):
    """A broker fenced at the controller (2 brokers, min ISR 1, so that it derives in seconds):
    included; with the encoding's fencing not setting the fenced bit, not included."""
    acts = [A.FenceBroker(0)]
    rep = _size(acts, brokers=2, min_insync_replicas=1)
    assert rep.failure is None and rep.results[0].paths > 10, rep.failure
    real = R.fence_broker

    def fence_forgets(s, c, st, b):
        out = real(s, c, st, b)
        return out.with_(fenced=s.fenced)

    monkeypatch.setattr(R, "ACTIONS", [(n, fence_forgets if n == "FenceBroker" else f, t, e)
                                       for n, f, t, e in R.ACTIONS])
    rep = _size(acts, brokers=2, min_insync_replicas=1)
    assert rep.failure is not None and rep.failure.verdict == "not included"


def test_the_model_starts_where_the_encoding_does(monkeypatch):
    assert RI.init_included(_params()) is None
    real = R.init
    monkeypatch.setattr(R, "init", lambda s: z3.And(real(s), s.pe() == 1))
    assert "not one of the encoding's" in RI.init_included(_params())


def test_every_derived_action_has_an_encoded_step():
    names = {n for n, _, _, _ in R.ACTIONS}
    for a in DR.N.actions(Ctx.of(_params(), "kafka-4.1")):
        assert RI.encoded(a)[0] in names, a
