"""`kcheck prove --model replication --size any`: the structural invariants for every number of
brokers (checker/proofs/replication_param.py), the lemma and axiom they need, the bug variant's
counterexample to induction, the configurations refused, and the encoding against the model."""
from __future__ import annotations

import contextlib
import io
import json

import pytest

from checker.cli.commands import main
from checker.config import load_config
from checker.proofs import conformance as C
from checker.proofs import replication_any as RA
from checker.proofs import replication_param as R
from checker.proofs.induction import CTI, PROVED


@pytest.mark.parametrize("ctx,extra,absent", [
    (R.RCtx(), ["no_reassignment"], ["isr_not_empty", "one_elr_without_isr", "reassignment_in_replicas"]),
    (R.RCtx(min1=True), ["one_elr_without_isr"], ["isr_not_empty"]),
    (R.RCtx(elr=False), ["isr_not_empty"], ["isr_unfenced", "one_elr_without_isr"]),
    (R.RCtx(unclean=True, unclean_elect_leaders=True), [], ["isr_not_empty"]),
    (R.RCtx(min1=True, reassignments=True), ["reassignment_in_replicas"], ["no_reassignment"]),
    (R.RCtx(elr=False, reassignments=True), ["reassignment_in_replicas"], ["isr_unfenced"]),
    (R.RCtx(failovers=True), ["snapshots"], ["isr_not_empty"]),
    (R.RCtx(failovers=True, min1=True, reassignments=True), ["snapshots", "one_elr_without_isr"], []),
])
def test_kafka_structural_is_proved_for_every_size_with_every_action_enabled(ctx, extra, absent):
    o = RA.prove(ctx, timeout_s=60)
    assert o.result == PROVED, (o.reason, o.cti)
    assert o.never_enabled == []
    for name in ["isr_in_replicas", "elr_empty_at_min_isr", "leader_in_isr", *extra]:
        assert name in o.conjuncts
    assert not set(absent) & set(o.conjuncts)
    steps = [ch.what for ch in o.checks if ch.answer == "enabled"]
    assert len(steps) == len(R.enabled(ctx)) and len(R.enabled(ctx)) >= 7
    assert [ch.answer for ch in o.checks if ch.what == "Init & Inv satisfiable"] == ["satisfiable"]


def test_the_fenced_may_join_isr_variant_fails_with_a_cti():
    """R8 (pre-KIP-841): the controller admits a fenced broker to the ISR."""
    o = RA.prove(R.RCtx(member_fenced_check=False), timeout_s=60)
    assert o.result == CTI
    assert (o.cti.conjunct, o.cti.action) == ("isr_unfenced", "HandleAlterPartition")
    fenced_in_isr = set(o.cti.post["isr"]) & set(o.cti.post["fenced"])
    assert fenced_in_isr and not set(o.cti.pre["isr"]) & set(o.cti.pre["fenced"])


def test_a_reassignment_with_min_isr_2_or_more_leaves_a_removed_replica_in_the_elr():
    """H3, Kafka 4.1's own rules: a reassignment completing while the ISR it leaves is below min
    ISR draws the ELR from the old ISR, removed replicas included. The CTI is the smallest Z3 finds."""
    o = RA.prove(R.RCtx(reassignments=True), timeout_s=60)
    assert o.result == CTI and o.cti.conjunct == "elr_in_replicas"
    assert o.cti.nodes == 2 and o.cti.pre["removing"]
    assert set(o.cti.post["elr"]) - set(o.cti.post["replicas"]) <= set(o.cti.pre["removing"])


def test_controller_failovers_need_the_saved_states_lemma(monkeypatch):
    """A failover restores the state saved before the oldest uncommitted write: without the lemma
    that it satisfies the invariant, the restored state is arbitrary."""
    monkeypatch.delitem(R.LEMMAS, "snapshots")
    o = RA.prove(R.RCtx(failovers=True), timeout_s=60)
    assert o.result == CTI and o.cti.action == "ControllerFailover"
    assert o.cti.pre["pending_writes"] >= 1 and o.cti.post["pending_writes"] == 0


def test_min_isr_1_needs_its_lemma(monkeypatch):
    monkeypatch.delitem(R.LEMMAS, "one_elr_without_isr")
    o = RA.prove(R.RCtx(min1=True), timeout_s=60)
    assert o.result == CTI and o.cti.conjunct == "elr_empty_at_min_isr"
    assert o.cti.pre["isr"] == [] and len(o.cti.pre["elr"]) >= 2 and o.cti.nodes == 2


def test_min_isr_2_or_more_needs_its_axiom(monkeypatch):
    """Without "every min set has two members" a single ELR winner could reach min ISR."""
    monkeypatch.setattr(R, "axioms", lambda c: [])
    o = RA.prove(R.RCtx(), timeout_s=60)
    assert o.result == CTI and o.cti.conjunct == "elr_empty_at_min_isr"


@pytest.mark.parametrize("preset,overrides", [
    ("smoke", []),
    ("last-known-leader", []),
    ("smoke", ["elr_enabled=false", "unclean_elect_leaders=true"]),
    ("reassignment", []),
    ("controller-failover", []),
])
def test_every_model_step_of_a_sample_is_a_step_of_the_encoding(preset, overrides):
    model = load_config(model="replication", preset=preset, overrides=overrides).build()
    from model.replication.variants import Rules

    r = RA.check_transitions(model, C.sample(model, 120), R.RCtx.of(model.params, Rules.of("kafka-4.1")))
    assert r.failures == [] and r.transitions > 300
    assert {"FenceBroker", "UnfenceBroker", "HandleAlterPartition", "BrokerStep"} <= r.kinds
    assert ("AlterPartitionReassignments" in r.kinds) == (preset == "reassignment")
    assert ({"CommitMetadata", "ControllerFailover"} <= r.kinds) == (preset == "controller-failover")


def test_a_drifted_encoding_is_caught(monkeypatch):
    """The check can fail: an encoding for which no ISR ever reaches min ISR keeps the ELR too long."""
    model = load_config(model="replication").build()  # three replicas, min ISR 2
    monkeypatch.setattr(R, "big", lambda c, p: R.z3.BoolVal(False))
    from model.replication.variants import Rules

    r = RA.check_transitions(model, C.sample(model, 120), R.RCtx.of(model.params, Rules.of("kafka-4.1")))
    assert r.failures


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["prove", "--model", "replication", "--size", "any", *argv])
    return rc, out.getvalue(), err.getvalue()


def test_an_edited_model_rule_makes_prove_refuse(monkeypatch):
    """A user's edit of the controller (here: the ELR is never written) leaves the encoding behind:
    one line, exit 2, nothing proved."""
    from model.replication import controller

    real = controller.partition_change

    def edited(*a, **k):
        reg = real(*a, **k)
        return None if reg is None else reg._replace(elr=())

    monkeypatch.setattr(controller, "partition_change", edited)
    rc, out, err = _run(["--preset", "last-known-leader", "--quiet"])
    assert rc == 2 and out == ""
    assert "does not cover the model's sources as they are now" in err and "nothing is proved" in err
    assert err.startswith("kcheck: error:") and err.count("\n") == 1


@pytest.mark.parametrize("argv,words", [
    (["--invariant", "candidate_completeness"], "proves structural only"),
])
def test_cli_refuses_what_the_encoding_does_not_prove(argv, words):
    rc, out, err = _run(argv)
    assert rc == 2 and words in err and out == ""
    assert err.startswith("kcheck: error:") and err.count("\n") == 1


def test_cli_renders_the_variants_cti():
    rc, out, _ = _run(["--preset", "smoke", "--variant", "fenced-may-join-isr", "--quiet"])
    assert rc == 1
    assert "counterexample to induction: isr_unfenced is not preserved by HandleAlterPartition" in out
    assert "a finite model Z3 found:" in out and "min ISR 1" in out and "fenced: {" in out


def test_cli_json_names_what_it_proved_and_the_sample_it_checked():
    rc, out, _ = _run(["--json", "--quiet"])
    report = json.loads(out)
    assert rc == 0 and report["result"] == "proved" and report["brokers"] == "any"
    assert report["min_isr"] == ">=2" and "elr_empty_at_min_isr" in report["conjuncts"]
    assert report["encoding_check"]["transitions"] > 1000 and report["model_source"]["sha256"]
    assert report["queries"] > 50 and report["never_enabled"] == []
    # and the record's Z3 inclusion of the model's relation in the encoding: every one of the 71
    # action instances at 3 brokers, for the sources shipped (an edit of them makes this fail)
    inclusion = report["encoding_check"]["inclusion"]
    assert inclusion == RA._inclusion(load_config(model="replication", preset="default"))
    assert [(s["brokers"], s["instances"]) for s in inclusion["sizes"]] == [(3, 71)]
    assert inclusion["how"].startswith("every step of the model at 3 brokers is one of the every-size encoding's")


def test_spec_proofs_names_every_conjunct_and_lemma():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "spec" / "proofs.md").read_text()
    assert [n for n in {**R.INVARIANTS, **R.LEMMAS} if f"`{n}`" not in text] == []


def test_cli_prints_the_recorded_inclusion_for_its_sources_and_configuration_only(tmp_path, monkeypatch):
    """A record made with these sources, variant and configuration is printed; on another
    configuration the line says it is not recorded."""
    import checker.proofs.checked_against as CA
    from checker.proofs import replication_inclusion as RI

    config = dict(load_config(model="replication", preset="default").config)
    entry = {"sources": RI.sources_digest(), "variant": "kafka-4.1", "bounds": RI.bounds(config),
             "sizes": [{"brokers": 3, "instances": 71, "derive_seconds": 1.0, "z3_seconds": 1.0, "assumed": []}]}
    record = tmp_path / "checked_against.json"
    record.write_text(json.dumps({**json.loads(CA.RECORD.read_text()), "inclusion": {"replication": [entry]}}))
    monkeypatch.setattr(CA, "RECORD", record)
    rc, out, _ = _run(["--quiet"])
    assert rc == 0 and "inclusion:  every step of the model at 3 brokers is one of the every-size encoding's" in out
    assert "71 action instances" in out and "recorded with these sources" in out
    rc, out, _ = _run(["--preset", "smoke", "--quiet"])
    assert rc == 0 and "inclusion:  not recorded for these sources, variant and configuration" in out
    record.write_text(json.dumps({**json.loads(CA.RECORD.read_text()), "inclusion": {"replication": [
        {**entry, "sources": "0" * 64}]}}))
    rc, out, _ = _run(["--quiet"])
    assert rc == 0 and "inclusion:  not recorded" in out
