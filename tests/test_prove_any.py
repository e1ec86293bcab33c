"""`kcheck prove --model kraft --size any`: election safety and log matching for every number of voters
(checker/proofs/kraft_param.py), the bug variants' counterexamples to induction, the options
refused, and the encoding against the Python model (every model step is a step of it)."""
from __future__ import annotations

import json

import pytest
import z3

from checker.cli.commands import main
from checker.config import load_config
from checker.proofs import conformance as C
from checker.proofs import kraft_param as K
from checker.proofs import param_conformance as P
from checker.proofs.induction import CTI, PROVED
from checker.proofs.kraft_param_inv import SUPPORT
from checker.proofs.param_induction import action_names, prove_any
from model.kraft.variants import Protocol


def pctx(variant: str = "kafka-4.1") -> K.PCtx:
    return K.PCtx(Protocol.of(variant))


def test_kafka_proves_election_safety_for_every_size_with_every_action_enabled():
    o = prove_any(pctx(), ["election_safety"], timeout_s=60)
    assert o.result == PROVED, (o.reason, o.cti and (o.cti.conjunct, o.cti.action))
    assert o.never_enabled == []
    enabled = [ch for ch in o.checks if " enabled in some Inv state" in ch.what]
    assert len(enabled) == len(action_names()) and all(ch.answer == "enabled" for ch in enabled)
    assert [ch.answer for ch in o.checks if ch.what == "Init & Inv satisfiable"] == ["satisfiable"]


@pytest.mark.parametrize("variant,action", [
    ("vote-not-persisted", "Restart"),  # K3: the restarted voter forgets its vote of the epoch
    ("same-identity-after-disk-loss", "DiskLoss"),  # K4: back in epoch 0 as the same voter
])
def test_election_safety_bugs_fail_with_a_cti_kafka_preserves_the_lemma(variant, action):
    o = prove_any(pctx(variant), ["election_safety"], timeout_s=60, only=[action])
    assert o.result == CTI and o.cti is not None
    assert o.cti.conjunct == "vote_record" and o.cti.action.startswith(action + "(")
    assert o.cti.nodes >= 1 and len(o.cti.pre["node"]) == o.cti.nodes
    o = prove_any(pctx(), ["election_safety"], timeout_s=60, only=[action])
    assert o.result == PROVED


def test_without_its_lemmas_election_safety_is_not_inductive(monkeypatch):
    monkeypatch.setitem(SUPPORT, "election_safety", ())
    o = prove_any(pctx(), ["election_safety"], timeout_s=60, only=["HandleVoteResponse"])
    assert o.result == CTI and o.cti.conjunct == "election_safety"


LOG_ACTIONS = ["ClientAppend", "HandleFetchRequest", "DiskLoss", "DropMessage(FetchResponse)"]


def test_log_matching_lemmas_hold_for_the_actions_that_change_logs_or_send_records():
    """Every query of these actions holds for every size (ClientAppend appends, HandleFetchRequest
    validates and sends the leader's log, DiskLoss empties a log)."""
    o = prove_any(pctx(), ["log_matching"], timeout_s=60, only=LOG_ACTIONS)
    assert o.result == PROVED, (o.reason, o.cti and (o.cti.conjunct, o.cti.action))


def test_log_matching_holds_at_handle_fetch_response_with_the_append_justified():
    """HandleFetchResponse appends the response's log as it is, once Z3 has shown that this is the
    model's append (the follower's log, then the records at its end) in every Inv state."""
    o = prove_any(pctx(), ["log_matching"], timeout_s=60, only=["HandleFetchResponse"])
    assert o.result == PROVED, (o.reason, o.cti and (o.cti.conjunct, o.cti.action))
    assert any(ch.what.startswith("Inv => HandleFetchResponse's append") and ch.answer == "holds" for ch in o.checks)


def test_the_append_is_not_justified_without_fetch_responses():
    """The check can fail: without the lemma that the follower's log is the response's log below
    the records (fetch_responses), Z3 does not show the response's log to be the model's append
    (it may differ: unknown or sat, never unsat)."""
    from checker.proofs.kraft_param_inv import conjuncts, formula
    from checker.proofs.param_induction import append_justified

    c = pctx()
    pre, _ = K.fresh("s_")
    inv = [formula(x)(c, pre) for x in conjuncts(c, ["log_matching"]) if x != "fetch_responses"]
    assert append_justified(c, pre, inv, 10_000) != z3.unsat


def test_log_matching_is_not_proved_without_the_justified_append(monkeypatch):
    """Without fetch_responses among the lemmas the append stays the model's (shifted offsets), and
    HandleFetchResponse against entry_start is not closed: never "proved"."""
    monkeypatch.setitem(SUPPORT, "log_matching", tuple(x for x in SUPPORT["log_matching"] if x != "fetch_responses"))
    o = prove_any(pctx(), ["log_matching"], timeout_s=10, only=["HandleFetchResponse"])
    assert o.result in ("unknown", CTI)


def test_without_the_leader_log_lemma_log_matching_is_not_inductive(monkeypatch):
    """A broken lemma set: without leader_log a leader's append may land where another log holds
    an entry of its epoch."""
    monkeypatch.setitem(SUPPORT, "log_matching", tuple(x for x in SUPPORT["log_matching"] if x != "leader_log"))
    o = prove_any(pctx(), ["log_matching"], timeout_s=10, only=["ClientAppend"])
    # a model with entries is beyond the three-voter search (empty logs) and Z3 does not build
    # one over every size in time: never "proved"
    assert o.result in (CTI, "unknown")
    if o.result == CTI:
        assert o.cti.action.startswith("ClientAppend(")


def test_a_leader_that_accepts_any_fetch_offset_breaks_a_log_lemma(monkeypatch):
    """A broken model: validate_offset_and_epoch answering VALID whatever the follower's last
    fetched epoch (the constraint dropped) lets records land on a diverging prefix."""
    real = K.Step.require

    def lax(self, c):
        if self.name == "HandleFetchRequest" and "offset_valid" in str(c):
            return None
        return real(self, c)

    monkeypatch.setattr(K.Step, "require", lax)
    o = prove_any(pctx(), ["log_matching"], timeout_s=10, only=["HandleFetchRequest"])
    assert o.result in (CTI, "unknown")  # as above: never "proved"
    assert "fetch_responses" in (o.reason or "") or (o.cti and o.cti.conjunct == "fetch_responses")


def test_cli_any_size_cti_is_rendered_with_its_nodes(capsys):
    rc = main(["prove", "--model", "kraft", "--size", "any", "--variant", "same-identity-after-disk-loss",
               "--quiet"])
    out = capsys.readouterr().out
    assert rc == 1
    assert "counterexample to induction: vote_record is not preserved by DiskLoss(node=n" in out
    assert "a finite model Z3 found:" in out and "holds before step 1 and fails after it" in out


@pytest.mark.parametrize("argv,words", [
    (["--invariant", "committed_kept"], "not proved for every size"),
    (["--invariant", "nope"], "unknown invariant"),
    (["--bmc", "3"], "--bmc needs a fixed --size N"),
    (["--all-actions"], "--all-actions needs a fixed --size N"),
    (["--set", "voter_changes=1"], "static voter set"),
    (["--preset", "reconfig"], "static voter set"),
])
def test_cli_refuses_what_the_any_size_encoding_does_not_prove(capsys, argv, words):
    rc = main(["prove", "--size", "any", *argv])
    err = capsys.readouterr().err
    assert rc == 2 and words in err
    assert err.startswith("kcheck: error:") and err.count("\n") == 1


@pytest.fixture(scope="module")
def cli_any_json() -> tuple[int, dict]:
    """One `kcheck prove --size any --json` of the default, shared by the tests that read it."""
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(["prove", "--model", "kraft", "--size", "any", "--json", "--quiet"])
    return rc, json.loads(buf.getvalue())


@pytest.mark.xdist_group("prove_any_cli")  # one worker, so one run of the fixture
def test_cli_size_any_json(cli_any_json):
    rc, out = cli_any_json
    assert rc == 0 and out["result"] == "proved" and out["voters"] == "any", out["reason"]
    # one voter, whose start the every-size encoding does not have, by the fixed-size encoding
    assert out["one_voter"]["result"] == "proved" and out["one_voter"]["queries"] > 50
    assert out["invariants"] == ["election_safety", "log_matching", "leader_completeness"]
    assert {"vote_record", "entry_start", "acked_in_later_logs", "diverging_agree"} <= set(out["lemmas"])
    assert "committed_kept" in out["not_for_any_size"] and "leader_completeness" not in out["not_for_any_size"]
    # not vacuous: Init & Inv has a model, and each action is enabled in some Inv state, which for
    # leader completeness's lemmas is a state of the witness run (param_witness)
    assert out["queries"] > 1000


def test_the_witness_run_shows_every_action_enabled_under_leader_completeness_lemmas():
    from checker.proofs.kraft_param_inv import conjuncts
    from checker.proofs.param_induction import witnessed

    c = pctx()
    found = witnessed(c, conjuncts(c, ["leader_completeness"]), 60_000)
    assert sorted(found) == sorted(action_names())


def test_the_post_state_conjuncts_a_query_assumes_form_no_cycle():
    from checker.proofs.kraft_param_inv import ASSUMES, conjuncts

    names = conjuncts(pctx(), ["leader_completeness"])
    assert set(ASSUMES) <= set(names) and all(set(v) <= set(names) for v in ASSUMES.values())
    done: set[str] = set()

    def visit(x: str, path: tuple[str, ...]) -> None:
        assert x not in path, f"cycle: {' -> '.join(path + (x,))}"
        for y in ASSUMES.get(x, ()):
            visit(y, path + (x,))
        done.add(x)

    for x in ASSUMES:
        visit(x, ())


def test_without_the_diverging_response_lemma_leader_completeness_is_not_proved(monkeypatch):
    """A diverging response truncates the follower: without a bound on where, an acknowledged
    entry may go (never "proved")."""
    from checker.proofs import kraft_param_inv

    monkeypatch.setitem(kraft_param_inv.SUPPORT, "leader_completeness", tuple(
        x for x in kraft_param_inv.SUPPORT["leader_completeness"] if x != "diverging_agree"))
    o = prove_any(pctx(), ["leader_completeness"], timeout_s=8, only=["HandleFetchResponse"])
    assert o.result != PROVED


def covering(model, states, per_kind=2):
    """A few states for each action kind the model takes from some state of the pool."""
    seen: dict[str, int] = {}
    out = []
    for s in states:
        kinds = {type(a).__name__ for a in model.actions(s) if model.next_state(s, a) is not None}
        if any(seen.get(k, 0) < per_kind for k in kinds):
            out.append(s)
            for k in kinds:
                seen[k] = seen.get(k, 0) + 1
    return out


@pytest.mark.parametrize("preset,variant", [
    ("smoke", "kafka-4.1"), ("default", "kafka-4.1"), ("restart", "vote-not-persisted"),
    ("disk-loss", "same-identity-after-disk-loss"), ("stale-requests", "kafka-4.1"),
])
def test_every_model_step_is_a_step_of_the_encoding(preset, variant):
    """From states covering every action kind the model takes (BFS and random walks), every
    transition of the model is a step of the encoding."""
    rc = load_config(model="kraft", preset=preset, variant=variant, overrides=["symmetry=false"])
    model = rc.build()
    pool = C.sample(model, 300) + C.walk_sample(model, walks=30, depth=30, seed=3)
    states = covering(model, pool)
    kinds = {type(a).__name__ for s in pool for a in model.actions(s) if model.next_state(s, a) is not None}
    r = P.check_transitions(model, states, K.PCtx(Protocol.of(variant), rc.config["stale_requests"]))
    assert r.failures == []
    assert r.kinds == kinds and r.transitions > 20


def test_an_observer_restarting_as_its_leaders_follower_is_a_step_of_the_encoding():
    """Two faults (a lost disk, then a restart), which no shipped preset allows: the restart of an
    observer that knows its leader is a step of the encoding (it comes back that leader's Follower)."""
    variant = "no-pre-vote"
    rc = load_config(model="kraft", preset="disk-loss", variant=variant,
                     overrides=["faults=2", "restarts=1", "symmetry=false"])
    model = rc.build()
    states = [s for s in C.sample(model, 4000) if any(n.observer and n.leader >= 0 for n in s.nodes)]
    restarts = [(s, a) for s in states for a in model.actions(s)
                if type(a).__name__ == "Restart" and s.nodes[a.node].observer and s.nodes[a.node].leader >= 0]
    assert len(restarts) > 20
    r = P.check_transitions(model, states, K.PCtx(Protocol.of(variant), rc.config["stale_requests"]))
    assert r.failures == [] and "Restart" in r.kinds


def test_a_drifted_step_is_caught(monkeypatch):
    """The check can fail: an encoding whose granted vote is not persisted in Kafka 4.1."""
    rc = load_config(model="kraft", preset="smoke", overrides=["symmetry=false"])
    model = rc.build()
    real = K.add_voted_state

    def drifted(s, c, i, cand):
        return K.set_node(real(s, c, i, cand), i, persisted=K.z3.BoolVal(False))

    monkeypatch.setattr(K, "add_voted_state", drifted)
    r = P.check_transitions(model, C.sample(model, 30), pctx())
    assert any("HandleVoteRequest" in f for f in r.failures)


def test_spec_proofs_names_every_any_size_lemma():
    from pathlib import Path

    from checker.proofs.kraft_param_inv import LEMMAS

    text = (Path(__file__).resolve().parents[1] / "spec" / "proofs.md").read_text()
    assert "## Every cluster size" in text
    assert [n for n in LEMMAS if f"`{n}`" not in text] == []


def test_a_response_that_names_an_unknown_leader_conforms():
    """A Vote response (error NONE) naming the leader of the nominee's epoch, which it did not
    know: KafkaRaftClient.maybeHandleCommonResponse makes it a Follower, which then ignores the
    vote. A BFS sample need not hold one, so they are picked out of `elections`' first states."""
    from model.kraft.rules import CANDIDATE, NO_ID, NONE, PROSPECTIVE
    from model.kraft.state import VOTE_RESPONSE

    rc = load_config(model="kraft", preset="elections", overrides=["symmetry=false"])
    model = rc.build()
    follow = [s for s in C.sample(model, 4000)
              if any(m.kind == VOTE_RESPONSE and m.error == NONE and m.leader != NO_ID and s.nodes[m.dst].leader == NO_ID
                     and s.nodes[m.dst].epoch == m.epoch and s.nodes[m.dst].role in (PROSPECTIVE, CANDIDATE)
                     for m in s.network)]
    assert len(follow) >= 5
    r = P.check_transitions(model, follow[:8], pctx())
    assert r.failures == [] and "HandleVoteResponse" in r.kinds


@pytest.mark.xdist_group("prove_any_cli")  # one worker, so one run of the fixture
def test_the_every_size_proof_names_the_model_source_and_how_the_encoding_follows_it(cli_any_json):
    rc, out = cli_any_json
    assert rc == 0
    assert out["model_source"]["files"] > 10 and out["encoding_check"]["how"].startswith("follows the model (its sources, sha256 ")
    # and the record's Z3 inclusion of the model's relation in the encoding, at 3 and 4 voters
    inclusion = out["encoding_check"]["inclusion"]
    assert [s["voters"] for s in inclusion["sizes"]] == [3, 4] and all(s["instances"] == 23 for s in inclusion["sizes"])
    # the encoding's guard on its ghost `agree` is related to the model at both sizes
    assert all(s["ghost_guards"] == [] and "agree" in s["assumed"] for s in inclusion["sizes"])
    assert inclusion["how"].startswith("every step of the model at 3 and 4 voters")
    assert "bounded by the model's state by a relation every step keeps" in inclusion["how"]


def test_a_query_no_seed_answers_is_unknown_and_one_seed_is_enough(monkeypatch):
    """Z3's search depends on the terms a process made before a query (spec/proofs.md, "Seeds"):
    each query is tried with further seeds when one times out, and is unknown only when none answers."""
    from checker.proofs import param_induction

    seeds_tried: list[int] = []

    class FirstSeedTimesOut(z3.Solver):
        def set(self, *args):
            # the witness run's own solvers (param_witness) set no seed: they are not queries
            self.seed = dict(zip(args[::2], args[1::2])).get("random_seed", -1)
            if self.seed >= 0:
                seeds_tried.append(self.seed)
            super().set(*args)

        def check(self, *fs):
            return z3.unknown if self.seed == 0 else super().check(*fs)

    monkeypatch.setattr(param_induction.z3, "Solver", FirstSeedTimesOut)
    o = prove_any(pctx(), ["election_safety"], timeout_s=60, only=["HandleVoteResponse"])
    assert o.result == PROVED, o.reason
    # each query went on to seed 1 (which in a process with other terms behind it, as a test
    # worker's, may itself time out and hand on to seed 2)
    assert seeds_tried.count(0) == seeds_tried.count(1) > 10

    class NoSeedAnswers(FirstSeedTimesOut):
        def check(self, *fs):
            return z3.unknown

    seeds_tried.clear()
    monkeypatch.setattr(param_induction.z3, "Solver", NoSeedAnswers)
    o = prove_any(pctx(), ["election_safety"], timeout_s=60, only=["HandleVoteResponse"])
    assert o.result == "unknown" and o.reason == "Init => roles: z3 unknown"
    assert sorted(set(seeds_tried)) == list(range(param_induction.SEEDS)) and param_induction.SEEDS > 1


def test_the_encoding_check_samples_the_model_with_the_run_s_stale_requests():
    """With stale_requests=false (preset figure8) the encoding drops a node's requests at a role
    change, and so does the model it is checked against; sampled with stale requests kept, the
    check refused (ElectionTimeout differed) and nothing could be proved on that preset."""
    from checker.proofs.prove_any import _encoding_covers

    c = K.PCtx(Protocol.of("kafka-4.1"), stale_requests=False)
    assert _encoding_covers("kafka-4.1", c, quiet=True)["transitions"] > 1000


def test_commit_by_count_fails_leader_completeness_with_a_cti_in_a_state_of_the_run():
    """K1: Z3 answers unknown over every size, and the CTI is found in a given Inv state of the
    witness run: a HW moved to the epoch's start by a count of end offsets alone."""
    o = prove_any(pctx("commit-by-count"), ["leader_completeness"], timeout_s=20, only=["HandleFetchRequest"])
    assert o.result == CTI and o.cti is not None
    assert (o.cti.conjunct, o.cti.action.split("(")[0]) == ("hw_quorums", "HandleFetchRequest")
    assert o.cti.nodes == 3 and len(o.cti.pre["node"]) == 3
    # 60 s per query as the CLI's default: under load on the other core, 20 s can leave one unknown
    o = prove_any(pctx(), ["leader_completeness"], timeout_s=60, only=["HandleFetchRequest"])
    assert o.result == PROVED, o.reason


def test_vote_without_log_check_fails_leader_completeness_with_a_cti_in_the_run_s_branch():
    """K2: Z3 answers unknown over every size; the CTI is found in the witness run's branch where
    c, behind a's log, asks a for its vote in a later epoch, which a grants without a log check."""
    o = prove_any(pctx("vote-without-log-check"), ["leader_completeness"], timeout_s=20, only=["HandleVoteRequest"])
    assert o.result == CTI and o.cti is not None
    assert (o.cti.conjunct, o.cti.action.split("(")[0]) == ("acked_in_later_logs", "HandleVoteRequest")
    assert o.cti.nodes == 3
    # the lemma's ghosts are shown: the voter acknowledged the entry the candidate lacks
    from checker.proofs.param_induction import render

    lines = render(o.cti.pre)
    assert o.cti.pre["acks"] and any(x.strip().startswith("ghost acknowledgements: ") for x in lines)
    assert any(x.strip().startswith("ghost HWs: epoch ") for x in lines)


def test_the_run_s_branch_is_taken_in_kafka_up_to_the_refused_vote():
    """The branch's steps are witnesses in Kafka 4.1 too, until a refuses c's pre-vote."""
    from checker.proofs.param_witness import RunBlocked, run_states

    labels = []
    with pytest.raises(RunBlocked, match=r"HandleVoteRequest\(c, a\)"):
        for _, label, *_ in run_states(pctx()):
            labels.append(label)
    assert labels[-3:] == ["ElectionTimeout(c)", "SendVote(c, a)", "HandleVoteRequest(c, a)"]


def test_election_safetys_layer_also_finds_enabledness_in_the_witness_run():
    """Asked of Z3 over free functions instead, HandleVoteResponse's enabledness timed out on every
    seed in a process with other proofs behind it (spec/proofs.md, "Seeds")."""
    o = prove_any(pctx(), ["election_safety"], timeout_s=60, only=["HandleVoteResponse"])
    assert o.result == PROVED, o.reason
    enabled = [ch.what for ch in o.checks if ch.what.startswith("HandleVoteResponse(src, dst) enabled")]
    assert enabled and all("a state of a run over three nodes" in w for w in enabled), enabled


def test_a_one_voter_failure_is_not_proved(monkeypatch, capsys):
    """The every-size proof covers two voters or more; if the one-voter proof fails, the command's
    result and exit code are that failure, not the every-size proof's."""
    from checker.proofs import param_induction, prove_any as command
    from checker.proofs.induction import Outcome

    monkeypatch.setattr(param_induction, "prove_any", lambda c, targets, **kw: Outcome(PROVED, list(targets)))
    monkeypatch.setattr(command, "_encoding_covers", lambda *a: {"how": "stand-in"})
    monkeypatch.setattr(command, "_one_voter", lambda *a: {"result": CTI, "reason": "", "queries": 1,
                                                           "seconds": 0.0, "bounds": ""})
    rc = main(["prove", "--model", "kraft", "--size", "any", "--json", "--quiet"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 1 and out["result"] == CTI and out["one_voter"]["result"] == CTI
