"""checker/proofs/derive_replication.py: the relation derived from the replication model's Python
equals the hand-written one (replication_next) on the cheap actions, the history updates it
answers on arrays abstract the Python ones, a model edit shows up as a difference naming the
action and the variable, and model/replication/network.py keeps the model's behaviour."""
from __future__ import annotations

import z3
import pytest

from checker.proofs import derive_replication as D
from checker.proofs import replication_next as N
from checker.proofs.replication_state import Layout, fresh, matches
from checker.proofs.symbolic import Explorer
from model.replication import actions as A
from model.replication import broker_actions, fault_actions
from model.replication.model import initial_state
from model.replication.records import LogEntry
from model.replication.state import History, Pending


@pytest.fixture(scope="module")
def ctxs():
    return D.contexts(D.default_params())


def test_cheap_actions_equal_the_hand_encoding(ctxs):
    """Faults, a message loss and an ISR shrink: derived on the stand-ins (the message slots, the
    controller's log, the history's arrays) and equal to replication_next on every state of the
    domain."""
    ctx, nctx = ctxs
    for a in [A.Crash(0), A.LossyCrash(1, 0), N.DropMessageIn(0), A.ShrinkIsr(0, 1)]:
        c = D.compare(ctx, nctx, a)
        assert c.verdict == "equal", (a, c.difference)
        assert c.derived.paths > 0 and c.derived.enabled_paths > 0


def test_a_guard_edit_changes_the_derived_relation(ctxs, monkeypatch):
    """A crash that ignores the joint fault budget (max_faults): the derived Crash no longer
    equals the hand encoding, and the check names the action and the guard."""
    ctx, nctx = ctxs
    monkeypatch.setattr(fault_actions, "_may_go_down",
                        lambda s, ctx, b: s.brokers[b].alive and s.history.crashes < ctx.p.crashes)
    c = D.compare(ctx, nctx, A.Crash(2))
    assert c.verdict == "differs" and c.key == "guard", c.difference
    assert c.action == A.Crash(2)
    c = D.compare(ctx, nctx, N.DropMessageIn(1))
    assert c.verdict == "equal", c.difference


def test_an_effect_edit_names_the_variable(ctxs, monkeypatch):
    """A crash that leaves the clean-shutdown marker: the first differing variable is broker 0's
    `clean`."""
    ctx, nctx = ctxs
    go_down = fault_actions._go_down
    monkeypatch.setattr(fault_actions, "_go_down", lambda s, b, clean: go_down(s, b, True))
    c = D.compare(ctx, nctx, A.Crash(0))
    assert c.verdict == "differs" and c.key == ("clean", 0), c.difference


def _abstracts(layout: Layout, before: History, after: History, update) -> None:
    """`update` (stand-in history -> stand-in history) maps the abstraction of `before` to the
    abstraction of `after`: Z3 finds no state matching before whose image fails to match after."""
    p = D.default_params()
    pre = fresh(layout, "h_")
    ex = Explorer(z3.BoolVal(True), layout.L + 1)
    s0 = initial_state(p)._replace(history=before)
    image = update(D.symbolic_history(layout, pre, ex))
    terms = {}
    for part in (image.pending, image.acked, image.exposed):
        terms.update(part.terms)
    post = pre.set(terms)
    solver = z3.Solver()
    solver.add(matches(layout, pre, s0), z3.Not(matches(layout, post, s0._replace(history=after))))
    assert solver.check() == z3.unsat


def test_history_updates_abstract_the_python_ones():
    """complete_produces, expose and live_pending on the arrays, against the Python on concrete
    histories (3 brokers, 2 values)."""
    p = D.default_params(values=2)
    layout = Layout.of(p)
    h = History(2, (Pending(0, 0, 1, 0), Pending(1, 0, 1, 1)), (), (LogEntry(0, 0),), 0, 0, 0, 0, 0, False)
    for hw, maximal in ((1, (0, 1)), (2, (0, 1)), (2, (0,)), (0, (0, 1))):
        want = broker_actions.complete_produces(h, 0, 1, hw, maximal, 2)
        _abstracts(layout, h, want, lambda sh, hw=hw, m=maximal: D.sym_complete_produces(sh, 0, 1, hw, m, 2))
    for log, hw in ((((0, 0), (1, 1)), 2), (((0, 0), (1, 1)), 1), (((2, 0), (1, 1)), 2), (((0, 0),), 2)):
        entries = tuple(LogEntry(*e) for e in log)
        want = broker_actions.expose(h, entries, hw)
        _abstracts(layout, h, want, lambda sh, entries=entries, hw=hw: D.sym_expose(sh, entries, hw))
    brokers = initial_state(p).brokers
    for b in (brokers, brokers[:1] + (brokers[0]._replace(alive=False),) + brokers[2:],
              (brokers[0]._replace(leader_epoch=2),) + brokers[1:]):
        want = broker_actions.live_pending(h, b)
        _abstracts(layout, h, want, lambda sh, b=b: D.sym_live_pending(sh, b))


def test_a_negative_leader_id_is_a_domain_only_difference(ctxs):
    """SendFetch reads `s.brokers[leader]`: Python indexes a negative id from the end, the
    encoding finds no such broker. The states where they differ have a leader id below -1,
    which no state of the model has: assuming ids of -1 and up, the two agree."""
    ctx, nctx = ctxs
    pre = fresh(nctx.layout, "pre_")
    c = D.compare(ctx, nctx, A.SendFetch(1), pre=pre)
    assert c.verdict == "differs" and c.key == "guard", c.difference
    ids = z3.And([pre[("leader", i)] >= -1 for i in range(nctx.n)])
    again = D.compare(ctx, nctx, A.SendFetch(1), pre=pre, assume=ids, derived=c.derived)
    assert again.verdict == "equal", again.difference


def test_bench_prints_each_action():
    """bench/bench_derive_replication.py, as spec/proofs.md runs it, on two cheap kinds."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, str(root / "bench" / "bench_derive_replication.py"), "--kinds", "Crash",
                          "DropMessage"], cwd=root, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "Crash(broker=0)" in out.stdout and "DropMessageIn(slot=0)" in out.stdout
    assert "instances: 2 equal" in out.stdout


def test_an_action_past_the_path_budget_is_not_derived(ctxs):
    """Produce on the whole domain takes 343 paths (the leader's log length, its pending
    produces): past a budget of 40 it is reported not derived, never compared."""
    ctx, nctx = ctxs
    c = D.compare(ctx, nctx, A.Produce(0, 0), max_paths=40)
    assert c.verdict == "unsupported" and "more than 40 paths" in c.difference


def test_the_network_functions_keep_the_multisets():
    """model/replication/network.py on concrete states: the sorted tuples the actions wrote
    before it."""
    from model.replication import network
    from model.replication.state import FetchRequest, FetchResponse

    s = initial_state(D.default_params())
    r1, r2 = FetchRequest(1, 0, 1, 0, 0, -1), FetchRequest(2, 0, 1, 0, 0, -1)
    t = network.send(network.send(s, r2), r1)
    assert t.fetch_requests == (r1, r2) and network.count(t) == 2
    assert network.holds(t, r1) and not network.holds(s, r1)
    assert network.receive(t, r1).fetch_requests == (r2,)
    assert network.exists(t, FetchRequest, lambda m: m.follower == 2)
    assert not network.exists(t, FetchResponse, lambda m: True)
    assert network.lose(t, FetchRequest, lambda m: m.follower == 1).fetch_requests == (r2,)
    assert network.send_all(t, ()) is t


def test_alter_partition_derives_under_the_invariant_and_equals_the_hand_encoding():
    """HandleAlterPartition runs the controller's validation and partition change, whose
    iterations over the ISR, ELR and LastKnownELR fork on every member's bit: merged at their
    call (`_CONTROLLER_RULES`), it derives under the invariant of the default targets in a few
    dozen paths (2 brokers here) and equals replication_next on the invariant's states."""
    from checker.proofs.derived_replication import SUPPORT
    from checker.proofs.induction import conjuncts_for
    from checker.proofs.replication_inv import DEFAULT_TARGETS, formula

    ctx, nctx = D.contexts(D.default_params(brokers=2))
    pre = fresh(nctx.layout, "pre_")
    inv = z3.And([formula(n)(nctx, pre) for n in conjuncts_for(DEFAULT_TARGETS, SUPPORT)])
    a = N.HandleAlterPartitionIn(0, 0)
    d = D.derive(ctx, nctx.layout, pre, a, D.domain(nctx.layout, pre), max_paths=400, assume=inv)
    assert d.step is not None and 0 < d.enabled_paths <= d.paths <= 400, d.why
    c = D.compare(ctx, nctx, a, pre=pre, assume=inv, derived=d)
    assert c.verdict == "equal", c.difference


def _one_crash(brokers: int):
    from model.replication.params import CONFIG_KEYS, PRESETS, Params

    return Params.from_config({**{k.name: k.default for k in CONFIG_KEYS}, **PRESETS["one-crash"], "brokers": brokers})


@pytest.mark.parametrize("carried", [True, False])
def test_a_derived_proof_carries_the_well_formedness_lemmas(monkeypatch, carried):
    """On states that well_formed and its support exclude the model's Python raises (ReplayMetadata
    of a record the controller no longer holds): a derived proof of structural carries them and
    holds; with structural's own support alone the crash query refutes the model as shipped."""
    from checker.proofs import derived, derived_replication, replication_inv
    from model.replication import actions as RA

    if not carried:
        monkeypatch.setattr(derived_replication, "SUPPORT", replication_inv.SUPPORT)
    ctx = derived_replication.context(_one_crash(2), "kafka-4.1", ["structural"])
    o = derived.prove(ctx, ["structural"], timeout_s=120, only=[RA.ReplayMetadata(0)])
    if carried:
        assert o.result == "proved" and "well_formed" in o.conjuncts, (o.result, o.reason)
    else:
        assert o.result == "cti" and "raises IndexError in ReplayMetadata(broker=0)" in o.reason, (o.result, o.reason)
