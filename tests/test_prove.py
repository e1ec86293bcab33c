"""`kcheck prove` and the induction/BMC engines over the KRaft encoding (checker/proofs/).

The induction tests check what a proof rests on: Init and Inv are satisfiable together (else
every proof is vacuous), every action is enabled in some Inv state, the bug variants break a
named lemma with a counterexample to induction, a timeout is never "proved", and BMC's
counterexample is a trace the Python model takes, exported as ITF."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import z3

from checker.traces import itf
from checker.cli.commands import main
from checker.config import load_config
from checker.proofs import kraft_inv
from checker.proofs.bmc import bmc
from checker.proofs.induction import CTI, PROVED, conjuncts_for, formula, preserves, prove, representatives
from tests.oracles.kraft_next import Ctx, step
from checker.proofs.kraft_state import fresh, init_constraint
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
    static = set(A.ACTION_KINDS) - {"AddVoter", "RemoveVoter", "ResignAfterRemoval", "SendObserverFetch"}
    assert enabled == static  # the encoding's voter set is static: kcheck prove refuses voter changes


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


def test_an_enabledness_timeout_is_unknown_not_never_enabled(monkeypatch):
    """When Z3 cannot tell whether an action is enabled in some Inv state, its consecution is
    unchecked: the result is unknown, not proved with the action listed as never enabled.
    (A CI run caught this: with a 1 ms timeout the enabledness query timed out and the proof
    was reported proved.) The timeout is forced so the test does not depend on timing."""
    from checker.proofs import induction

    ctx, _ = ctx_of("smoke")
    action = A.HandleVoteResponse(0, 1)
    assert prove(ctx, ["election_safety"], only=[action]).result == PROVED
    monkeypatch.setattr(induction, "_enabled", lambda inv, guard, ms: "unknown")
    o = prove(ctx, ["election_safety"], only=[action])
    assert o.result == "unknown" and o.never_enabled == []
    assert f"{action!r} enabled" in o.reason


def test_bmc_counterexample_replays_and_exports_as_itf(monkeypatch):
    """A deliberately false invariant ("no log holds a client entry") on one voter, Leader from
    its start (KafkaRaftClient.initialize): BMC finds the one-step append, the trace is the Python
    model's, and it exports as ITF."""
    monkeypatch.setitem(kraft_inv.INVARIANTS, "no_append",
                        lambda c, s: z3.And([s[("leo", i)] <= 1 for i in range(c.n)]))
    ctx, model = ctx_of("smoke", voters=1)
    o = bmc(ctx, model, ["no_append"], depth=3)
    assert o.result == "violation" and o.depth == 1
    assert o.trace[0][1].nodes[0].role == LEADER and len(o.trace[-1][1].nodes[0].log) == 2
    doc = itf.to_itf(model, o.trace, {"invariant": "no_append"})
    assert len(doc["states"]) == 2 and doc["states"][1][itf.ACTION_KEY] == "ClientAppend(node=0)"
    assert itf.from_itf(json.loads(itf.dumps(doc))["states"][1]["nodes"])[0]["role"] == "Leader"


def test_bmc_without_violation_within_the_bound_is_ok():
    ctx, model = ctx_of("smoke", voters=1)
    o = bmc(ctx, model, ["election_safety"], depth=2)
    assert o.result == "ok" and o.depth == 2


def test_bmc_time_limit_counts_the_solving_not_the_deriving():
    """On a cold derivation cache a BMC derives every action instance before its first query:
    that time is not the solver's budget (it was, and a first `--bmc 2` at 3 voters said
    "unknown" at depth -1 with no reason). A limit spent by the solver says where it stopped."""
    import time as clock

    from checker.proofs import derived

    _, model = ctx_of("smoke")
    p = Params.from_config({**dict(load_config(model="kraft", preset="smoke").config)})
    slow = derived.context(p, "kafka-4.1", lazy=True, progress=lambda d: clock.sleep(0.1))  # 0.1 s more per instance
    o = bmc(slow, model, ["election_safety"], depth=1, timeout_s=2.0)
    assert len(slow.derived) > 20  # so deriving alone took more than the limit
    assert o.result == "ok" and o.depth == 1, o.reason
    o = bmc(slow, model, ["election_safety"], depth=3, timeout_s=1e-9)
    assert o.result == "unknown" and o.depth == -1 and "ran out before depth 0" in o.reason


def test_cli_rejects_an_unknown_model(capsys):
    assert main(["prove", "--model", "nope"]) == 2
    assert "nope" in capsys.readouterr().err


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


@pytest.mark.parametrize("variant,preset,action,targets,lemma", [
    ("commit-by-count", "figure8", A.HandleFetchRequest(0, 1), ["leader_completeness"], "committed_quorum"),
    ("vote-without-log-check", "elections", A.HandleVoteRequest(0, 1), ["leader_completeness"], "vote_snapshot"),
    ("vote-not-persisted", "restart", A.Restart(0), ["election_safety"], "vote_record"),
    ("same-identity-after-disk-loss", "disk-loss", A.DiskLoss(0), ["election_safety"], "vote_record"),
])
def test_each_kraft_bug_variant_fails_its_proof_on_the_derived_relation(variant, preset, action, targets, lemma):
    """K1 to K4 as `kcheck prove` asks them at a fixed size: on the relation derived from the
    variant's Python, the action breaks the lemma (a CTI); Kafka 4.1's derived action keeps it."""
    from checker.proofs import derived

    for v, want in ((variant, CTI), ("kafka-4.1", PROVED)):
        ctx, _ = ctx_of(preset, v)
        o = derived.prove(derived.context(ctx.p, v, actions=[action]), targets, timeout_s=120, only=[action])
        assert o.result == want, (v, o.result, o.reason)
        if want == CTI:
            assert (o.cti.conjunct, o.cti.action) == (lemma, action)


def test_cli_k2_prints_the_cti_with_its_ghosts(capsys):
    """`kcheck prove --variant vote-without-log-check` (its preset) fails with a CTI naming the
    lemma and the action, exit 1; the JSON carries the ghost arrays of the CTI's state."""
    rc = main(["prove", "--model", "kraft", "--variant", "vote-without-log-check", "--preset", "elections",
               "--size", "2", "--json", "--quiet"])  # on the derived relation: its vote handler, derived in seconds
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
    from checker.proofs.kraft_state import GHOSTS, key_name

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


# --- the replication encoding (checker/proofs/replication_*.py) ----------------------------------

from checker.proofs import replication_inv  # noqa: E402
from checker.proofs import replication_next as RN  # noqa: E402
from model.replication import actions as RA  # noqa: E402
from model.replication.params import Params as RParams  # noqa: E402


def rctx_of(preset: str, variant: str = "kafka-4.1", **sets):
    rc = load_config(model="replication", preset=preset, variant=variant)
    config = {**dict(rc.config), **sets}
    return RN.Ctx.of(RParams.from_config(config), variant), rc.definition.build(config, variant)


@pytest.mark.parametrize("preset,brokers", [("one-crash", 3), ("one-crash", 4), ("smoke", 2)])
def test_replication_structural_is_proved(preset, brokers):
    """`structural` with its lemma is inductive, for 3 and 4 brokers (min ISR 2) and on smoke
    (min ISR 1, where elr_small is needed), with every action enabled in some Inv state."""
    ctx, _ = rctx_of(preset, brokers=brokers)
    o = prove(ctx, ["structural"], timeout_s=120)
    assert o.result == PROVED, (o.reason, o.cti and (o.cti.conjunct, o.cti.action))
    assert o.never_enabled == []


def test_replication_default_targets_are_proved_for_three_brokers():
    """The default targets (structural, candidates_remain) and their lemmas are inductive on the
    default preset, every action enabled in some Inv state."""
    ctx, _ = rctx_of("one-crash")
    o = prove(ctx, replication_inv.DEFAULT_TARGETS, timeout_s=120)
    assert o.result == PROVED, (o.reason, o.cti and (o.cti.conjunct, o.cti.action))
    assert o.never_enabled == []


def test_without_message_domains_well_formed_is_not_inductive(monkeypatch):
    """The lemmas carry the proof: a Fetch request with a junk broker epoch breaks well_formed."""
    monkeypatch.setitem(replication_inv.SUPPORT, "well_formed", ("elr_small", "structural"))
    ctx, _ = rctx_of("one-crash")
    o = prove(ctx, ["well_formed"], timeout_s=60)
    assert o.result == CTI and o.cti is not None and o.cti.conjunct == "well_formed"


def test_replication_candidate_completeness_is_proved_for_three_brokers():
    """candidate_completeness with its strengthening (the control-plane lemmas of quorum_superset
    and the data-plane lemmas of spec/proofs.md) is inductive on the default preset, 3 brokers,
    with every action enabled in some Inv state (about two minutes)."""
    ctx, _ = rctx_of("one-crash")
    o = prove(ctx, ["candidate_completeness"], timeout_s=120)
    assert o.result == PROVED, (o.result, o.reason, o.cti and (o.cti.conjunct, o.cti.action))
    assert o.never_enabled == [] and len(o.checks) > 2000


# (variant, the lemma the CTI names, its action): on `default`, where Kafka 4.1 is proved, each
# variant's proof of candidate_completeness fails with a CTI whose action Kafka 4.1 survives
VARIANT_CTIS = [
    ("truncate-to-hw", "lossless_candidates_complete", "ReplayMetadata"),
    ("hw-ignores-min-isr", "clean_candidates_complete", "ReplayMetadata"),
    ("unclean-restart-keeps-elr", "fetch_positions", "Restart"),
    ("truncate-to-hw-diverge", "lossless_candidates_complete", "ReplayMetadata"),
]
SLOW_VARIANT_CTIS = [
    ("no-broker-epoch-in-alter-partition", "fetch_positions", "HandleAlterPartitionIn"),
    ("isr-expand-without-leso", "ap_added_complete", "HandleFetchIn"),
    ("record-fetch-on-divergence", "fetch_positions", "HandleFetchIn"),
    ("hw-without-maximal-isr", "clean_candidates_complete", "HandleFetchIn"),
    ("fenced-may-join-isr", "ap_named_unfenced", "HandleFetchIn"),
    ("accept-stale-broker-epoch-fetch", "ap_member_positions", "HandleFetchIn"),
    ("no-current-epoch-in-fetch", "fetch_positions", "HandleFetchIn"),
    ("response-before-metadata", "partition_epoch_replayed", "HandleAlterPartitionResponseIn"),
]


def _variant_fails_where_kafka_holds(variant, lemma, action_kind):
    ctx, _ = rctx_of("one-crash", variant)
    o = prove(ctx, ["candidate_completeness"], timeout_s=120)
    assert o.result == CTI and o.cti is not None, (variant, o.result, o.reason)
    assert (o.cti.conjunct, type(o.cti.action).__name__) == (lemma, action_kind)
    kafka, _ = rctx_of("one-crash")
    assert preserves(kafka, ["candidate_completeness"], o.cti.action, lemma, timeout_s=120) == "holds"


@pytest.mark.parametrize("variant,lemma,action_kind", VARIANT_CTIS)
def test_bug_variants_fail_candidate_completeness_by_cti(variant, lemma, action_kind):
    """A bug variant's proof of candidate_completeness (default preset) fails with a CTI naming
    the lemma its mechanism breaks; Kafka 4.1 preserves that lemma under the same action."""
    _variant_fails_where_kafka_holds(variant, lemma, action_kind)


@pytest.mark.slow
@pytest.mark.parametrize("variant,lemma,action_kind", SLOW_VARIANT_CTIS)
def test_slow_bug_variants_fail_candidate_completeness_by_cti(variant, lemma, action_kind):
    """As above, for the variants whose first CTI takes about a minute to find."""
    _variant_fails_where_kafka_holds(variant, lemma, action_kind)


@pytest.mark.slow
@pytest.mark.parametrize("values", [1, 2, 3])
def test_replication_invariants_resting_on_candidate_completeness_are_proved(values):
    """leader_completeness, log_matching, consistent_reads and no_acked_record_lost, and with
    them candidate_completeness (part of their strengthening), are proved together on the
    default preset, 3 brokers, with one, two and three values (about 2, 4 and 6 minutes)."""
    ctx, _ = rctx_of("one-crash", values=values)
    names = ["leader_completeness", "log_matching", "consistent_reads", "no_acked_record_lost"]
    o = prove(ctx, names, timeout_s=120)
    assert o.result == PROVED and o.never_enabled == [], (o.result, o.cti and (o.cti.conjunct, o.cti.action))


@pytest.mark.slow  # about 3 minutes; the suite keeps the three-broker proofs on one-crash and R3's CTI here
def test_replication_invariants_are_proved_on_epoch_lookup():
    """On `epoch-lookup` (3 brokers, three leader epochs, two crashes that keep the log, min ISR 1,
    KIP-966's last-known-leader election reachable), where R2 and R3 break log_matching, the four
    invariants resting on candidate_completeness, and it, are proved (about 2 minutes)."""
    ctx, _ = rctx_of("epoch-lookup")
    names = ["leader_completeness", "log_matching", "consistent_reads", "no_acked_record_lost"]
    o = prove(ctx, names, timeout_s=120)
    assert o.result == PROVED and o.never_enabled == [], (o.result, o.cti and (o.cti.conjunct, o.cti.action))


def test_epoch_lookup_first_larger_fails_log_matching_by_cti():
    """R3 on `epoch-lookup`: the proof of log_matching fails with a CTI where a leader that has
    just taken over would accept a Fetch whose last fetched epoch it never had (the lookup answers
    with the first larger epoch), though the logs differ below the fetch offset; Kafka 4.1
    preserves that lemma under the same action."""
    ctx, _ = rctx_of("epoch-lookup", "epoch-lookup-first-larger")
    o = prove(ctx, ["log_matching"], timeout_s=120)
    assert o.result == CTI and o.cti is not None, (o.result, o.reason)
    assert (o.cti.conjunct, type(o.cti.action).__name__) == ("acceptable_fetch_agrees", "ReplayMetadata")
    kafka, _ = rctx_of("epoch-lookup")
    assert preserves(kafka, ["log_matching"], o.cti.action, "acceptable_fetch_agrees", timeout_s=120) == "holds"


def test_h2_fails_candidate_completeness_where_kafka_is_proved_with_a_fixed_leader():
    """H2 on `stale-fetch` with `max_leader_epoch=0` (2 brokers, a fencing of a live broker, a
    lossy crash, min ISR 1; the leader never moves, and BFS still finds H2 there in 20 steps):
    Kafka 4.1's candidate_completeness is proved (about a minute), every action enabled in some
    Inv state; H2's proof fails with a CTI where the controller fences a live broker that an
    AlterPartition in flight adds while a Fetch of its older incarnation still waits (timing
    assumption H2), and Kafka 4.1 preserves that lemma under the same action."""
    kafka, _ = rctx_of("stale-fetch", max_leader_epoch=0)
    o = prove(kafka, ["candidate_completeness"], timeout_s=120)
    assert o.result == PROVED and o.never_enabled == [], (o.result, o.cti and (o.cti.conjunct, o.cti.action))
    ctx, _ = rctx_of("stale-fetch", "fence-with-stale-fetch-queued", max_leader_epoch=0)
    o = prove(ctx, ["candidate_completeness"], timeout_s=120)
    assert o.result == CTI and o.cti is not None, (o.result, o.reason)
    assert (o.cti.conjunct, type(o.cti.action).__name__) == ("ap_named_unfenced", "FenceBroker")
    assert preserves(kafka, ["candidate_completeness"], o.cti.action, "ap_named_unfenced", timeout_s=120) == "holds"


def test_replication_quorum_superset_is_proved_for_three_brokers():
    """quorum_superset (the controller's ISR, and its ELR while the leader's ISR has min ISR
    members, are within the replicas the leader's HW waits for) is inductive with its lemmas on
    the default preset, 3 brokers, every action enabled in some Inv state (about 40 s)."""
    ctx, _ = rctx_of("one-crash")
    o = prove(ctx, ["quorum_superset"], timeout_s=120)
    assert o.result == PROVED, (o.reason, o.cti and (o.cti.conjunct, o.cti.action))
    assert o.never_enabled == []


def test_replication_structural_needs_elr_small(monkeypatch):
    """Without elr_small, min ISR 1: electing an ELR member of two leaves the other in the ELR
    of an ISR of one (a CTI at an election)."""
    monkeypatch.setitem(replication_inv.SUPPORT, "structural", ())
    ctx, _ = rctx_of("smoke")
    o = prove(ctx, ["structural"], timeout_s=60)
    assert o.result == CTI and o.cti is not None and o.cti.conjunct == "structural"
    assert type(o.cti.action) in (RA.UnfenceBroker, RA.FenceBroker, RA.ControlledShutdown, RA.Restart)


def test_r8_fenced_may_join_isr_breaks_structural_kafka_keeps_it():
    """R8 (pre-KIP-841): the controller accepts a fenced broker into the ISR; structural is not
    preserved by HandleAlterPartition. Kafka 4.1's same action preserves it."""
    action = RN.HandleAlterPartitionIn(0, 0)
    ctx, _ = rctx_of("smoke", "fenced-may-join-isr")
    assert preserves(ctx, ["structural"], action, "structural") == "fails"
    o = prove(ctx, ["structural"], timeout_s=60)
    assert o.result == CTI and o.cti is not None and type(o.cti.action) is RN.HandleAlterPartitionIn
    ctx, _ = rctx_of("smoke")
    assert preserves(ctx, ["structural"], action, "structural") == "holds"


def test_h1_response_before_metadata_breaks_partition_epoch_replayed_kafka_keeps_it():
    """H1 (`response-before-metadata`): the leader takes the partition epoch of an AlterPartition
    response before replaying its record, so its partition epoch passes the metadata it
    replayed (the state Partition.makeLeader then mishandles). The timing assumption keeps the
    lemma."""
    action = RN.HandleAlterPartitionResponseIn(0, 0)
    ctx, _ = rctx_of("smoke", "response-before-metadata")
    assert preserves(ctx, ["well_formed"], action, "partition_epoch_replayed") == "fails"
    o = prove(ctx, replication_inv.DEFAULT_TARGETS, timeout_s=60)
    assert o.result == CTI and o.cti is not None and o.cti.conjunct == "partition_epoch_replayed"
    ctx, _ = rctx_of("smoke")
    assert preserves(ctx, ["well_formed"], action, "partition_epoch_replayed") == "holds"


@pytest.mark.slow
def test_replication_bmc_finds_r17_unclean_election():
    """R17 on smoke: an out-of-sync replica is elected by design; BMC finds the 5-step trace
    and the Python model replays it to a candidate_completeness violation."""
    ctx, model = rctx_of("smoke", "unclean-election")
    o = bmc(ctx, model, ["candidate_completeness"], depth=5, timeout_s=300)
    assert o.result == "violation" and o.depth == 5
    from model.replication.properties import candidate_completeness

    assert not candidate_completeness(o.trace[-1][1])


def test_replication_timeout_is_never_proved():
    ctx, _ = rctx_of("one-crash")
    o = prove(ctx, ["structural"], timeout_s=0.001, only=[RN.HandleAlterPartitionIn(0, 0)])
    assert o.result != PROVED


def test_replication_bmc_finds_r8_and_replays_it():
    """BMC on R8 (smoke): a structural violation in a few steps; the trace is the Python
    model's (bmc replays it) and exports as ITF."""
    ctx, model = rctx_of("smoke", "fenced-may-join-isr")
    o = bmc(ctx, model, ["structural"], depth=6, timeout_s=300)
    assert o.result == "violation" and o.invariant == "structural" and 1 <= o.depth <= 6
    last = o.trace[-1][1]
    reg = last.controller.partition
    assert any(last.controller.brokers[i].fenced for i in reg.isr)
    doc = itf.to_itf(model, o.trace, {"invariant": "structural"})
    assert len(doc["states"]) == o.depth + 1


def test_replication_bmc_ok_within_the_bound():
    ctx, model = rctx_of("smoke")
    o = bmc(ctx, model, ["structural"], depth=2)
    assert o.result == "ok" and o.depth == 2


def test_cli_replication_prove_json(capsys):
    rc = main(["prove", "--model", "replication", "--preset", "smoke", "--json", "--quiet"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["result"] == "proved" and out["config"]["brokers"] == 2
    assert out["invariants"] == ["structural", "candidates_remain"]
    assert out["lemmas"] == ["elr_small", "well_formed", "partition_epoch_replayed", "message_domains"]


def test_the_progress_lines_say_init_and_inv_are_satisfiable_in_words_that_read_right(capsys):
    """The non-vacuity query succeeds when Z3 finds a state: its line says "satisfiable", not
    "fails" as a query for a counterexample would."""
    assert main(["prove", "--model", "replication", "--preset", "smoke"]) == 0
    err = capsys.readouterr().err
    assert "kcheck: Init & Inv satisfiable: satisfiable (" in err and "satisfiable: fails" not in err


def test_cli_replication_rejects_an_unknown_invariant(capsys):
    assert main(["prove", "--model", "replication", "--invariant", "election_safety"]) == 2
    assert "replication invariants" in capsys.readouterr().err


def test_cli_replication_refuses_a_configuration_that_enables_elect_leaders(capsys):
    """The encoding has no ElectLeaders: a configuration whose leader epochs leave room for one is
    refused (exit 2), not proved of another model; switching it off is accepted."""
    assert main(["prove", "--model", "replication", "--preset", "last-replica-standing", "--quiet"]) == 2
    assert "has no ElectLeaders" in capsys.readouterr().err
    from checker.config import load_config
    from checker.proofs.prove import _UNENCODED
    off = load_config(model="replication", preset="last-replica-standing",
                      overrides={"preferred_elections": "false"}).build()
    assert set(_UNENCODED["replication"]) <= set(off.disabled_actions())


def test_cli_replication_refuses_reassignment(capsys):
    """Nor has the encoding reassignment: a budget of reassignments, or a replication factor below
    the broker count, is refused (exit 2) with the key that switches it off."""
    assert main(["prove", "--model", "replication", "--preset", "smoke", "--set", "reassignments=1", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "has no AlterPartitionReassignments" in err and "--set reassignments=0" in err
    assert main(["prove", "--model", "replication", "--set", "replication_factor=2", "--quiet"]) == 2
    assert "leave replication_factor at 0" in capsys.readouterr().err


def test_spec_proofs_names_every_replication_lemma():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "spec" / "proofs.md").read_text()
    assert [n for n in list(replication_inv.LEMMAS) + list(replication_inv.INVARIANTS) if f"`{n}`" not in text] == []


def test_every_replication_lemma_holds_on_reachable_states():
    """A lemma must hold on every reachable state (else it is wrong, not just too weak): checked
    on BFS samples and random walks of five presets: three with fencings of live brokers (smoke,
    zombie-leader, and stale-fetch, where a Fetch of an older incarnation can wait while its
    broker is fenced again) that the candidate_completeness proof covers only with a fixed leader
    or not at all, default with three values (where the value and epoch-order lemmas have
    something to say) and epoch-lookup (three leader epochs, the last-known-leader election)."""
    from checker.proofs import conformance as C
    from checker.proofs.replication_state import fresh as rfresh, matches as rmatches

    for preset, sets in (("smoke", {}), ("default", {"values": 3}), ("zombie-leader", {}), ("epoch-lookup", {}),
                         ("stale-fetch", {})):
        ctx, model = rctx_of(preset, **sets)
        states = C.sample(model, 60) + C.walk_sample(model, walks=3, depth=35, seed=2)
        sym = rfresh(ctx.layout, "v_")
        names = list(replication_inv.LEMMAS) + ["structural", "quorum_superset", "candidate_completeness"]
        formulas = {name: replication_inv.formula(name)(ctx, sym) for name in names}
        # one query per state for all lemmas together; only a failing state is asked lemma by lemma
        solver = z3.Solver()
        solver.add(z3.Not(z3.And(*formulas.values())))
        for s in states:
            if solver.check(rmatches(ctx.layout, sym, s)) != z3.unsat:
                broken = [n for n, f in formulas.items()
                          if z3.Solver().check(z3.Not(f), rmatches(ctx.layout, sym, s)) != z3.unsat]
                raise AssertionError((preset, broken, s))


def test_replication_bmc_finds_r12_on_two_brokers_and_kafka_holds_to_that_depth():
    """R12 (hw-ignores-min-isr) on last-replica-standing (2 brokers, min ISR 2): BMC finds the
    3-step story (the follower fenced out of the ISR, a produce, the leader commits alone), the
    Python model replays it; Kafka 4.1 has no violation within the same depth."""
    from model.replication.properties import candidate_completeness

    ctx, model = rctx_of("last-replica-standing", "hw-ignores-min-isr")
    o = bmc(ctx, model, ["candidate_completeness"], depth=3, timeout_s=300)
    assert o.result == "violation" and o.depth == 3
    assert not candidate_completeness(o.trace[-1][1])
    ctx, model = rctx_of("last-replica-standing")
    assert bmc(ctx, model, ["candidate_completeness"], depth=3, timeout_s=300).result == "ok"


@pytest.mark.slow
@pytest.mark.parametrize("variant,depth", [("truncate-to-hw", 7), ("unclean-restart-keeps-elr", 8)])
def test_replication_bmc_finds_r1_and_r13_on_two_brokers(variant, depth):
    """R1 and R13 on last-replica-standing: BFS's shortest counterexamples are 7 and 8 steps;
    BMC finds traces of that length (186 s and 488 s measured) that break candidate_completeness."""
    from model.replication.properties import candidate_completeness

    ctx, model = rctx_of("last-replica-standing", variant)
    o = bmc(ctx, model, ["candidate_completeness"], depth=depth, timeout_s=1800)
    assert o.result == "violation" and o.depth == depth
    assert not candidate_completeness(o.trace[-1][1])


def test_cli_kraft_refuses_voter_changes(capsys):
    """The kraft encoding has a static voter set: a budget of voter changes, or spare nodes, is refused."""
    assert main(["prove", "--model", "kraft", "--preset", "reconfig", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "has no AddVoter, RemoveVoter, SendObserverFetch" in err
    assert "switch it off with --set voter_changes=0 --set spares=0 (" in err  # each setting once
    assert main(["prove", "--model", "kraft", "--preset", "smoke", "--set", "spares=1", "--quiet"]) == 2
    assert "has no SendObserverFetch" in capsys.readouterr().err


def _doc_command(words: str) -> list[str]:
    """The `kcheck prove ...` command of docs/prove.md that contains `words`, as arguments."""
    import re

    text = " ".join((Path(__file__).resolve().parents[1] / "docs" / "prove.md").read_text().split())
    found = [c for c in re.findall(r"`kcheck (prove [^`]+)`", text) if words in c]
    assert len(found) == 1, found
    return found[0].split()


def test_candidate_completeness_is_not_inductive_on_the_present_default_as_docs_say(capsys):
    """docs/prove.md: the command without --preset one-crash ends with the CTI it names (the
    proof on one-crash is test_replication_candidate_completeness_is_proved_for_three_brokers)."""
    argv = _doc_command("--preset one-crash --invariant candidate_completeness")
    argv.remove("--preset")
    argv.remove("one-crash")
    assert main([*argv, "--quiet", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["result"] == "cti", report["result"]
    said = "acceptable_fetch_agrees is not preserved by FenceBroker(broker=0)"
    assert said in " ".join((Path(__file__).resolve().parents[1] / "docs" / "prove.md").read_text().split())
    assert report["cti"]["conjunct"] == "acceptable_fetch_agrees" and report["cti"]["action"] == "FenceBroker(broker=0)"


def test_the_documented_bmc_of_r12_finds_it_in_3_steps(capsys):
    argv = _doc_command("--variant hw-ignores-min-isr")
    assert argv[argv.index("--bmc") + 1] == "3"
    assert main([*argv, "--quiet", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["result"] == "violation" and report["depth_checked"] == 3, report["result"]
    assert report["violation"]["invariant"] == "candidate_completeness" and len(report["violation"]["trace"]) == 4


# ---------------------------------------------------------------------------------------------
# An encoding that follows the model (checker/proofs/checked_against.py)

import subprocess  # noqa: E402
import sys  # noqa: E402

from checker.proofs import checked_against  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def test_the_record_of_what_each_encoding_was_checked_against_is_current():
    """checker/proofs/checked_against.json holds the digests of today's model and encoding
    sources: after a change, run the cross-check and record it (python -m checker.proofs.record)."""
    assert checked_against.stale() == [], (
        "the model or encoding sources changed since the encoding was last cross-checked against the model:"
        " run python -m checker.proofs.record")


def test_an_unedited_model_proves_as_recorded(capsys):
    """Replication's BMC runs on the hand-written relation, as recorded; kraft's on the derived one."""
    rc = main(["prove", "--model", "replication", "--preset", "smoke", "--size", "2", "--bmc", "1", "--json"])
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert rc == 0 and out["encoding_check"]["how"] == "recorded" and out["encoding_check"]["passed"]
    assert out["encoding_check"]["cross_check"] is None and "cross-check" not in captured.err
    assert out["model_source"]["sha256"] == out["model_source"]["sha256"].lower() and out["model_source"]["files"] > 10
    main(["prove", "--model", "replication", "--preset", "smoke", "--size", "2", "--bmc", "1"])
    text = capsys.readouterr().out
    assert "model source: " in text and "encoding:   follows the model" in text
    main(["prove", "--model", "kraft", "--preset", "smoke", "--size", "1", "--bmc", "2"])
    text = capsys.readouterr().out
    assert "encoding:   derived from the model's Python" in text and "result:     ok" in text


def _prove_edited(tmp_path: Path, rule: str, old: str, new: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`kcheck prove` (python -m checker.cli, from the checkout) on a copy of the checkout with one rule edited."""
    copy = _edits_bench().edited_copy({"name": rule, "file": rule, "old": old, "new": new}, tmp_path / "kcheck")
    return subprocess.run([sys.executable, "-m", "checker.cli", "prove", *args], cwd=copy, capture_output=True,
                          text=True, timeout=1200)


def _edits_bench():
    """bench/bench_prove_edits.py, whose edited_copy makes the copies here too."""
    spec = importlib.util.spec_from_file_location("bench_prove_edits", ROOT / "bench" / "bench_prove_edits.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _refused(p: subprocess.CompletedProcess[str], model: str, edited: str) -> None:
    """One line, exit 2, no proof: the edited file named, whatever a sample check would find."""
    assert p.returncode == 2 and p.stdout == "", p.stderr[-3000:]
    assert len(p.stderr.splitlines()) == 1, p.stderr[-3000:]
    assert p.stderr.startswith(f"kcheck: error: the {model} model's sources differ from those its"), p.stderr
    assert f"model/{edited} (edited)" in p.stderr and "nothing is proved" in p.stderr
    assert "proved" not in p.stderr.replace("nothing is proved", "")


VOTE_RULE = ("model/kraft/rules.py",
             "    return (candidate_last_epoch, candidate_end_offset) >= (local.epoch, local.offset)",
             "    return candidate_last_epoch >= local.epoch")


def test_prove_refuses_when_the_kraft_vote_compares_the_last_epoch_only(tmp_path):
    """The vote's log check edited to compare the last epochs only (it breaks leader completeness,
    as kcheck check finds): the every-size encoding is a hand-written copy, so prove refuses, exit
    2, one line naming the file and the step at 3 voters that Z3 finds the encoding does not take;
    it once said proved there, where a sample check passed the edited line by."""
    p = _prove_edited(tmp_path, *VOTE_RULE, "--model", "kraft", "--size", "any", "--quiet", "--timeout", "20")
    _refused(p, "kraft", "kraft/rules.py")
    assert ("at 3 voters the every-size encoding is not shown to take every step of the model's "
            "HandleVoteRequest(src=0, dst=1) as it is now") in p.stderr
    assert "not included, role_0=" in p.stderr  # the state Z3 found


def test_an_edited_kraft_vote_is_answered_at_a_fixed_size(tmp_path):
    """The same edit at a fixed size is proved on the relation derived from the edited Python
    (checker/proofs/derive.py): not refused, not proved, but a counterexample to induction at the
    vote handler, exit 1, the report naming the edited sources and the derived relation."""
    p = _prove_edited(tmp_path, *VOTE_RULE, "--model", "kraft", "--size", "2", "--json", "--quiet")
    out = json.loads(p.stdout)
    assert p.returncode == 1 and out["result"] == "cti", p.stderr[-2000:]
    assert out["cti"]["action"].startswith("HandleVoteRequest(") and out["cti"]["conjunct"] == "vote_snapshot"
    assert out["encoding_check"]["how"] == "derived" and out["encoding_check"]["actions"] >= 8
    assert out["model_source"]["path"].startswith(str(tmp_path))
    assert out["encoding_check"]["model_sha256"] != checked_against.current("kraft")["model"]


MAJORITY_RULE = ("model/kraft/rules.py",
                 "    return votes.count(GRANTED) >= (len(votes) - votes.count(NOT_VOTER)) // 2 + 1",
                 "    return votes.count(GRANTED) >= (len(votes) - votes.count(NOT_VOTER)) // 2")


def test_a_bmc_of_an_edited_kraft_model_runs_on_the_edit(tmp_path):
    """Kraft's BMC unrolls the relation derived from the edited Python: an election won with half
    the voters elects two leaders in one epoch within two steps, a trace of the edited model."""
    p = _prove_edited(tmp_path, *MAJORITY_RULE, "--model", "kraft", "--preset", "smoke", "--size", "2",
                      "--bmc", "2", "--json", "--quiet")
    out = json.loads(p.stdout)
    assert p.returncode == 1 and out["result"] == "violation", p.stderr[-2000:]
    assert out["violation"]["invariant"] == "election_safety" and len(out["violation"]["trace"]) == 3
    assert out["encoding_check"]["how"] == "derived"
    assert out["encoding_check"]["model_sha256"] != checked_against.current("kraft")["model"]


def test_derive_with_bmc_is_refused_for_replication_only(capsys):
    """Replication's relation is derived under the proof's invariant, which BMC does not assume:
    `--derive --bmc` is refused there, one line, exit 2; kraft's BMC is of the derived relation."""
    assert main(["prove", "--model", "replication", "--preset", "smoke", "--size", "2", "--derive", "--bmc", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kcheck: error: --derive --bmc: ") and err.count("\n") == 1
    assert main(["prove", "--model", "kraft", "--preset", "smoke", "--size", "1", "--derive", "--bmc", "1",
                 "--quiet"]) == 0


def test_prove_refuses_a_bmc_of_an_edited_replication_model(tmp_path):
    """A replication BMC's "ok within the bound" is of the hand-written encoding: refused for an edit."""
    p = _prove_edited(tmp_path, "model/replication/partition.py",
                      "    if strict_min_isr and len(isr) < effective_min_isr:",
                      "    if strict_min_isr and len(isr) <= effective_min_isr:", "--model", "replication",
                      "--size", "2", "--bmc", "2", "--quiet")
    _refused(p, "replication", "replication/partition.py")


def test_prove_refuses_when_a_replication_rule_is_edited(tmp_path):
    """The leader's HW rule edited (the HW holds while the ISR is at the min ISR, not only below it):
    the every-size proof refuses before any sample check runs, with --json too (no JSON: nothing
    was checked); a fixed size derives the relation instead (tests/test_prove_edits.py)."""
    p = _prove_edited(tmp_path, "model/replication/partition.py",
                      "    if strict_min_isr and len(isr) < effective_min_isr:",
                      "    if strict_min_isr and len(isr) <= effective_min_isr:", "--model", "replication", "--json",
                      "--size", "any")
    _refused(p, "replication", "replication/partition.py")
    assert "cross-check" not in p.stderr and "sample" not in p.stderr.replace("a sample cannot", "")


def test_an_added_model_file_is_named_and_an_edited_encoding_is_refused(monkeypatch):
    """The refusal names an added file, and an encoding edited after its record is refused too."""
    rec = checked_against.recorded("kraft")
    files = dict(rec["files"])
    files.pop("kraft/rules.py")
    monkeypatch.setattr(checked_against, "recorded", lambda m: {**rec, "model": "0" * 64, "files": files})
    assert checked_against.changed_files("kraft") == ["model/kraft/rules.py (added)"]
    assert "model/kraft/rules.py (added)" in checked_against.refusal("kraft", any_size=True)
    monkeypatch.setattr(checked_against, "recorded", lambda m: {**rec, "encoding_any": "0" * 64})
    assert checked_against.refusal("kraft", any_size=False) is None
    reason = checked_against.refusal("kraft", any_size=True)
    assert reason.startswith("the every-size kraft encoding") and "checker/proofs/kraft_param.py" in reason
