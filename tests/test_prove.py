"""`kcheck prove` and the induction/BMC engines over the KRaft encoding (checker/symbolic/).

The induction tests check what a proof rests on: Init and Inv are satisfiable together (else
every proof is vacuous), every action is enabled in some Inv state, the bug variants break a
named lemma with a counterexample to induction, a timeout is never "proved", and BMC's
counterexample is a trace the Python model takes, exported as ITF."""
from __future__ import annotations

import json

import pytest
import z3

from checker import itf
from checker.cli import main
from checker.config import load_config
from checker.symbolic import kraft_inv
from checker.symbolic.bmc import bmc
from checker.symbolic.induction import CTI, PROVED, conjuncts_for, formula, preserves, prove, representatives
from checker.symbolic.kraft_next import Ctx, step
from checker.symbolic.kraft_state import fresh, init_constraint
from model.kraft import actions as A
from model.kraft.params import Params
from model.kraft.rules import LEADER


def ctx_of(preset: str, variant: str = "kafka-4.1", **sets):
    rc = load_config(model="kraft", preset=preset, variant=variant)
    config = {**dict(rc.config), **sets}
    return Ctx.of(Params.from_config(config), variant), rc.definition.build(config, variant)


def inv(ctx, s, targets=("election_safety",)):
    return z3.And([formula(n)(ctx, s) for n in conjuncts_for(targets)])


def test_init_and_the_inductive_invariant_are_satisfiable_together():
    ctx, _ = ctx_of("default")
    s = fresh(ctx.layout, "s_")
    solver = z3.Solver()
    assert solver.check(init_constraint(ctx.layout, s), inv(ctx, s, kraft_inv.DEFAULT_TARGETS)) == z3.sat


def test_every_action_kind_is_enabled_in_some_inv_state():
    """An action enabled in no Inv state would be 'preserved' vacuously."""
    ctx, _ = ctx_of("default")
    s = fresh(ctx.layout, "s_")
    base = inv(ctx, s)
    enabled = set()
    for a in representatives(ctx):
        solver = z3.Solver()
        solver.set("timeout", 20_000)
        if solver.check(base, step(ctx, s, a).guard) == z3.sat:
            enabled.add(type(a).__name__)
    assert enabled == set(A.ACTION_KINDS)


def test_the_relation_is_not_empty_from_init():
    ctx, _ = ctx_of("smoke")
    s = fresh(ctx.layout, "s_")
    solver = z3.Solver()
    assert solver.check(init_constraint(ctx.layout, s), step(ctx, s, A.ElectionTimeout(0)).guard) == z3.sat


@pytest.mark.parametrize("variant,preset,action", [
    ("vote-not-persisted", "restart", A.Restart(0)),
    ("same-identity-after-disk-loss", "disk-loss", A.DiskLoss(0)),
])
def test_bug_variants_break_the_vote_lemma_kafka_keeps_it(variant, preset, action):
    """K3 and K4: the lemma `vote_record` (one remembered vote per epoch) is preserved by the
    restart / disk loss in Kafka 4.1 and broken by it in the variant (a CTI)."""
    ctx, _ = ctx_of(preset, variant)
    assert preserves(ctx, ["election_safety"], action, "vote_record") == "fails"
    o = prove(ctx, ["election_safety"], timeout_s=60, only=[action])
    assert o.result == CTI and o.cti is not None and o.cti.action == action
    ctx, _ = ctx_of(preset)
    assert preserves(ctx, ["election_safety"], action, "vote_record") == "holds"


def test_a_timeout_is_never_reported_as_proved():
    ctx, _ = ctx_of("smoke")
    o = prove(ctx, ["election_safety"], timeout_s=0.001, only=[A.HandleVoteResponse(0, 1)])
    assert o.result != PROVED


def test_bmc_counterexample_replays_and_exports_as_itf(monkeypatch):
    """A deliberately false invariant ("nobody is ever leader") on one voter: BMC finds the
    one-step election, the trace is the Python model's, and it exports as ITF."""
    monkeypatch.setitem(kraft_inv.INVARIANTS, "no_leader",
                        lambda c, s: z3.And([s[("role", i)] != LEADER for i in range(c.n)]))
    ctx, model = ctx_of("smoke", voters=1)
    o = bmc(ctx, model, ["no_leader"], depth=3)
    assert o.result == "violation" and o.depth == 1
    assert o.trace[-1][1].nodes[0].role == LEADER
    doc = itf.to_itf(model, o.trace, {"invariant": "no_leader"})
    assert len(doc["states"]) == 2 and doc["states"][1][itf.ACTION_KEY] == "ElectionTimeout(node=0)"
    assert itf.from_itf(json.loads(itf.dumps(doc))["states"][1]["nodes"])[0]["role"] == "Leader"


def test_bmc_without_violation_within_the_bound_is_ok():
    ctx, model = ctx_of("smoke", voters=1)
    o = bmc(ctx, model, ["election_safety"], depth=2)
    assert o.result == "ok" and o.depth == 2


def test_cli_rejects_a_model_without_encoding(capsys):
    assert main(["prove", "--model", "replication"]) == 2
    assert "kraft only" in capsys.readouterr().err


def test_cli_rejects_an_unknown_invariant(capsys):
    assert main(["prove", "--model", "kraft", "--invariant", "nope"]) == 2
    assert "unknown invariant" in capsys.readouterr().err


def test_cli_bmc_json(capsys):
    rc = main(["prove", "--model", "kraft", "--preset", "smoke", "--size", "1", "--bmc", "2", "--json", "--quiet"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["result"] == "ok" and out["mode"] == "bmc" and out["config"]["voters"] == 1


def test_kraft_three_voters_proves_election_safety_log_matching_and_leader_completeness():
    """The shipped strengthening is inductive on the default configuration (3 voters, faults),
    with every action enabled in some Inv state."""
    assert "leader_completeness" in kraft_inv.DEFAULT_TARGETS
    ctx, _ = ctx_of("default")
    o = prove(ctx, kraft_inv.DEFAULT_TARGETS, timeout_s=120)
    assert o.result == PROVED, (o.reason, o.cti and (o.cti.conjunct, o.cti.action))
    assert o.never_enabled == []


def test_without_its_lemmas_election_safety_is_not_inductive(monkeypatch):
    """The lemmas carry the proof: election safety alone has a counterexample to induction."""
    monkeypatch.setitem(kraft_inv.SUPPORT, "election_safety", ())
    ctx, _ = ctx_of("default")
    o = prove(ctx, ["election_safety"], timeout_s=60)
    assert o.result == CTI and o.cti is not None and o.cti.conjunct == "election_safety"


def test_spec_proofs_names_every_lemma_and_invariant():
    """spec/proofs.md explains each lemma the proofs use (mypyvy: every lemma named and explained)."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "spec" / "proofs.md").read_text()
    names = list(kraft_inv.LEMMAS) + list(kraft_inv.INVARIANTS)
    assert [n for n in names if f"`{n}`" not in text] == []


@pytest.mark.parametrize("variant,preset,action,lemma", [
    ("commit-by-count", "figure8", A.HandleFetchRequest(0, 1), "committed_quorum"),
    ("vote-without-log-check", "elections", A.HandleVoteRequest(0, 1), "vote_snapshot"),
])
def test_k1_k2_break_a_completeness_lemma_kafka_keeps_it(variant, preset, action, lemma):
    """K1 (commit by counting replicas: a leader commits an entry of an older epoch, Raft's
    Figure 8) breaks `committed_quorum` when a Fetch moves the HW; K2 (votes without the log
    check) breaks `vote_snapshot` when a vote is granted. Kafka 4.1's same action keeps the lemma."""
    ctx, _ = ctx_of(preset, variant)
    assert preserves(ctx, ["leader_completeness"], action, lemma) == "fails"
    o = prove(ctx, ["leader_completeness"], timeout_s=60, only=[action])
    assert o.result == CTI and o.cti is not None and (o.cti.conjunct, o.cti.action) == (lemma, action)
    ctx, _ = ctx_of(preset)
    assert preserves(ctx, ["leader_completeness"], action, lemma) == "holds"


def test_cli_k2_prints_the_cti_with_its_ghosts(capsys):
    """`kcheck prove --variant vote-without-log-check` (its preset) fails with a CTI naming the
    lemma and the action, exit 1; the JSON carries the ghost arrays of the CTI's state."""
    rc = main(["prove", "--model", "kraft", "--variant", "vote-without-log-check", "--preset", "elections",
               "--json", "--quiet"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 1 and out["result"] == "cti" and "leader_completeness" in out["invariants"]
    assert out["cti"]["conjunct"] == "vote_snapshot" and out["cti"]["action"] == "HandleVoteRequest(src=0, dst=1)"
    assert set(out["cti"]["ghosts"]) >= {"vote_hist_0", "ack_0", "vle_0", "vleo_0", "elen"}


def test_without_acked_votes_an_election_breaks_completeness(monkeypatch):
    """The acknowledgement-before-vote lemma carries the election step: without it, electing a
    leader has a counterexample to induction."""
    monkeypatch.setitem(kraft_inv.SUPPORT, "leader_completeness",
                        tuple(n for n in kraft_inv.SUPPORT["leader_completeness"] if n != "acked_votes"))
    ctx, _ = ctx_of("default")
    o = prove(ctx, ["leader_completeness"], timeout_s=60, only=[A.HandleVoteResponse(0, 1)])
    assert o.result == CTI and o.cti is not None and o.cti.action == A.HandleVoteResponse(0, 1)


def _mentions(term, names, seen):
    """Does the z3 term mention a constant named in `names`? (DAG walk, memoised)"""
    todo = [term]
    while todo:
        t = todo.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if z3.is_const(t) and t.decl().name() in names:
            return True
        todo.extend(t.children())
    return False


def test_no_guard_or_effect_reads_a_ghost():
    """Ghosts (vote history, epoch logs, acknowledgements, vote snapshots) exist only in Z3:
    no action's guard, nor any non-ghost variable after it, depends on one."""
    from checker.symbolic.kraft_state import GHOSTS, key_name

    ctx, _ = ctx_of("default")
    s = fresh(ctx.layout, "s_")
    ghosts = {key_name("s_", k) for k in s.keys() if k[0] in GHOSTS}
    assert {"s_ack_0", "s_vle_0", "s_vleo_0", "s_elen"} <= ghosts
    for a in representatives(ctx):
        st = step(ctx, s, a)
        seen: set = set()
        assert not _mentions(st.guard, ghosts, seen), a
        for key, v in st.post.f.items():
            if key[0] not in GHOSTS:
                assert not _mentions(v, ghosts, seen), (a, key)
