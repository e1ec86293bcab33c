"""Conformance of the kraft model with Kafka's KafkaRaftClient (jars, in-process through JPype).

Needs the Kafka jars: env KCHECK_KAFKA_CLASSPATH (skipped without it, failed with
KCHECK_REQUIRE_KAFKA=1). One JVM per test process, so the tests share the xdist group "jvm".
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from checker.config import ConfigError, load_config
from model.kraft.rules import FOLLOWER, LEADER, VOTERS_BASE

pytestmark = pytest.mark.xdist_group("jvm")

ROOT = Path(__file__).resolve().parents[1]
# kinds every static-voter kraft preset together enables and the adapter drives
DRIVEN = ("ElectionTimeout", "FetchTimeout", "CheckQuorumTimeout", "ClientAppend", "SendVote", "SendBeginQuorumEpoch",
          "SendFetch", "HandleVoteRequest", "HandleVoteResponse", "HandleBeginQuorumEpochRequest",
          "HandleBeginQuorumEpochResponse", "HandleFetchRequest", "HandleFetchResponse", "Restart", "DiskLoss",
          "CutLink", "HealLink", "DropMessage")


@pytest.fixture(scope="module")
def classpath(kafka_classpath: str) -> str:
    return kafka_classpath


# the default preset with message loss as the only fault, three of them: DropMessage is rare elsewhere
LOSSES = ("default", {"faults": 3, "losses": 3, "restarts": 0, "disk_losses": 0, "partitions": 0})


def _models(presets, variant="no-pre-vote"):
    out = []
    for p in presets:
        preset, overrides = p if isinstance(p, tuple) else (p, {})
        out.append((preset, load_config(model="kraft", variant=variant, preset=preset, overrides=overrides).build()))
    return out


def _run(presets, walks, depth, seed=0, swarm=True, negative=False):
    from checker.conform import engine
    from checker.conform.kraft import KraftAdapter

    models = _models(presets)
    report = engine.Report("kraft", "no-pre-vote", [str(p) for p in presets], seed, depth, swarm)
    report.action_kinds = tuple(models[0][1].action_kinds)
    return engine.run_walks(models, KraftAdapter, seed, walks, depth, swarm, report, negative=negative)


def test_swarm_walks_agree_and_drive_every_kind(classpath):
    from checker.conform.kraft import PRESETS

    report = _run(PRESETS + (LOSSES,), walks=91, depth=30, seed=7)
    assert report.first is None, report.first.difference.line()
    assert not report.known and not report.interrupted
    assert report.behaviours == 91 and report.steps > 1000
    missing = [k for k in DRIVEN if not report.counts[k]]
    assert not missing, f"never driven: {missing} ({dict(report.counts)})"


def test_a_wrong_rule_in_the_model_is_a_difference(classpath, monkeypatch):
    """Voters that grant without the log check (catalogue K2's rule) part from the real code."""
    from model.kraft import rules

    monkeypatch.setattr(rules, "is_log_up_to_date", lambda *a: True)
    report = _run(("elections", "default", "three-epochs"), walks=200, depth=30, seed=3)
    assert report.first is not None
    d = report.first.difference
    assert d.kind == "differs" and d.step >= 1
    assert any(key.endswith((".role", ".epoch", ".voted", ".leader")) or key == "network" for key in d.keys)


def test_a_wrong_abstraction_is_a_difference(classpath, monkeypatch):
    """The comparison reads the real state: a model view that misreads the HW differs at once."""
    from checker.conform.kraft import KraftAdapter

    original = KraftAdapter.abstract

    def wrong(self, state):
        view = original(self, state)
        for key in view:
            if key.endswith(".hw") and view[key] >= 0:
                view[key] += 1
        return view

    monkeypatch.setattr(KraftAdapter, "abstract", wrong)
    report = _run(("elections",), walks=40, depth=30, seed=0, swarm=False)
    assert report.first is not None and any(k.endswith(".hw") for k in report.first.difference.keys)


def test_pre_vote_variants_are_refused_on_jars_before_kip_996(classpath):
    from checker.conform.kraft import KraftAdapter, default_variant

    assert default_variant() == "no-pre-vote"
    with pytest.raises(ConfigError, match="pre-vote"):
        KraftAdapter(load_config(model="kraft", variant="kafka-4.1", preset="smoke").build())
    # voter changes and logs beyond MockLog's two batches per read are driven (no refusal)
    KraftAdapter(load_config(model="kraft", variant="no-pre-vote", preset="reconfig").build())


def test_bug_traces(classpath):
    """K7 (no-pre-vote) is the jars' own behaviour (they predate KIP-996): the real code takes every
    step. K9's lasso (no pre-vote, no check quorum): the real code takes every step, but when time
    passes its leader resigns (the jars have check quorum), so the loop cannot repeat forever.
    Variants with pre-vote are not representable on these jars."""
    from checker.conform import engine, traces
    from checker.conform.kraft import KraftAdapter

    report = engine.Report("kraft", "no-pre-vote", [])
    k7 = traces.drive_trace(str(ROOT / "traces/kraft/no-pre-vote.itf.json"), KraftAdapter, report, "kraft")
    assert k7["result"] == traces.FOLLOWED and k7["steps"] == 10
    k9 = traces.drive_trace(str(ROOT / "traces/kraft/no-pre-vote-no-check-quorum.itf.json"), KraftAdapter, report,
                            "kraft")
    assert k9["result"] == traces.PARTED and k9["step"] == 11 and "node0.role 'Leader' -> 'Resigned'" in k9["outcome"]
    k1 = traces.drive_trace(str(ROOT / "traces/kraft/commit-by-count.itf.json"), KraftAdapter, report, "kraft")
    assert k1["result"] == traces.UNREPRESENTABLE


def _kcheck(*args, env=None):
    return subprocess.run([sys.executable, "-m", "checker.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          env=env, timeout=600)


def test_command_json_trace_out_and_render(classpath, tmp_path):
    out = _kcheck("conform", "--model", "kraft", "--preset", "elections", "--preset", "restart", "--walks", "6",
                  "--depth", "20", "--seed", "5", "--swarm", "--json", "--kafka-classpath", classpath)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["result"] == "agree" and report["behaviours"] == 6 and report["variant"] == "no-pre-vote"
    assert report["steps"] == sum(report["action_counts"].values()) > 0
    assert "AddVoter" in report["never_driven"] and "Fetch long polling" in report["abstractions"]


def test_difference_report_and_trace(classpath, tmp_path, monkeypatch):
    """A difference: exit 1, both values, the behaviour so far, an ITF trace that kcheck render draws."""
    from checker import cli
    from model.kraft import rules

    monkeypatch.setattr(rules, "is_log_up_to_date", lambda *a: True)
    trace = tmp_path / "diff.itf.json"
    code = cli.main(["conform", "--preset", "elections", "--preset", "three-epochs", "--walks", "200", "--seed", "3",
                     "--swarm", "--trace-out", str(trace), "--kafka-classpath", classpath])
    assert code == 1
    doc = json.loads(trace.read_text())
    assert doc["#meta"]["difference"]["step"] == len(doc["states"]) - 1
    monkeypatch.undo()
    page = tmp_path / "diff.html"
    assert cli.main(["render", str(trace), "--html", str(page), "--quiet"]) == 0 and page.stat().st_size > 0


def test_without_a_class_path_one_line_exit_2():
    env = {k: v for k, v in os.environ.items() if k != "KCHECK_KAFKA_CLASSPATH"}
    out = _kcheck("conform", "--walks", "1", env=env)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("kcheck: error: no Kafka class path")
    bad = _kcheck("conform", "--kafka-classpath", "/nonexistent/kafka", env=env)
    assert bad.returncode == 2 and bad.stderr.startswith("kcheck: error: not a jar or a directory")


def test_docs_worked_example_prints_what_docs_show(classpath, capsys):
    """docs/conform.md's KRaft example, run as written: the same counts, the same verdict (only
    the timing line differs)."""
    import re
    import shlex

    from checker import cli

    text = (ROOT / "docs" / "conform.md").read_text()
    line = next(x.strip() for x in text.splitlines() if x.strip().startswith("KCHECK_KAFKA_CLASSPATH=../shared/kafka"))
    argv = shlex.split(line)[2:]
    block = text[text.index(line):].split("```")[1].strip("\n").splitlines()
    assert cli.main(argv) == 0
    printed = capsys.readouterr().out.splitlines()
    # only the timing and where the model is installed (and its digest) differ from machine to machine
    timing = re.compile(r" in [0-9.]+ s \([0-9]+ steps/s\)|(?<=^model source: ).*")
    assert [timing.sub("", x) for x in printed] == [timing.sub("", x) for x in block]


def test_timeout_is_incomplete_with_what_was_done(classpath):
    out = _kcheck("conform", "--preset", "smoke", "--walks", "1000000", "--timeout", "3", "--json",
                  "--kafka-classpath", classpath)
    assert out.returncode == 3, out.stderr
    report = json.loads(out.stdout)
    assert report["result"] == "interrupted" and report["interrupted"] and report["behaviours"] < 1000000


def test_a_follower_that_voted_for_itself_restarts_as_follower_in_the_jars(classpath):
    """The version gap the walks found (restart preset): a Candidate that learns the leader of its
    epoch follows it and keeps its vote for itself; restarted, Kafka 4.1 (the model) comes back
    Candidate, the jars (whose FollowerState persists no vote) Follower. Named, not agreement."""
    from checker.conform import engine
    from checker.conform.kraft import FOLLOWER_VOTE, KraftAdapter
    from model.kraft import actions as A

    model = load_config(model="kraft", variant="no-pre-vote", preset="restart").build()
    path = [A.ElectionTimeout(0), A.HandleVoteRequest(0, 1), A.HandleVoteResponse(1, 0), A.ElectionTimeout(2),
            A.HandleBeginQuorumEpochRequest(0, 2), A.Restart(2)]
    steps, s = [], model.init_states()[0]
    for a in path:
        t = model.next_state(s, a)
        assert t is not None, a
        steps.append((s, a, t))
        s = t
    report = engine.Report("kraft", "no-pre-vote", ["restart"])
    out = engine.drive(KraftAdapter(model), "scripted", steps, model.init_states()[0], report)
    assert out.difference is not None and out.difference.step == len(path)
    assert out.difference.keys["node2.role"] == ("Candidate", "Follower") and out.known == FOLLOWER_VOTE


def test_an_observer_restarting_as_its_leaders_follower_validates(classpath):
    """Simulation seed 3007 (depth 30): a lost disk's observer follows the leader, restarts, and comes
    back in the code as its Follower (QuorumState.initialize). The model once brought it back
    Unattached; it now follows the code, and the whole run validates with nothing counted as known."""
    from checker.conform import kraft_sim

    sim = kraft_sim.simulate("no-pre-vote", runs=1, depth=30, seed=3007)
    assert sim["first_invalid"] is None and sim["valid"] == sim["runs"] == 1 and sim["known"] == {}
    assert sim["action_counts"].get("DiskLoss") and sim["action_counts"].get("Restart")


def test_simulations_of_the_real_nodes_replay_as_model_behaviours(classpath, tmp_path):
    """The other direction: real nodes under seeded random simulations, each recorded (observed
    variables only) and checked by the model; the written traces pass `kcheck replay`, and a
    trace whose step the model does not allow is invalid."""
    from checker import cli
    from checker.traces import itf
    from checker.conform import kraft_sim

    sim = kraft_sim.simulate("no-pre-vote", runs=12, depth=25, seed=40, out_dir=str(tmp_path))
    assert sim["first_invalid"] is None and sim["valid"] == sim["runs"] == 12 and sim["steps"] > 200
    assert {"ElectionTimeout", "HandleVoteRequest", "HandleVoteResponse"} <= set(sim["action_counts"])
    path = tmp_path / "sim-40.itf.json"
    assert cli.main(["replay", str(path), "--quiet"]) == 0
    doc = itf.load(str(path))
    last = doc["states"][-1]
    last["nodes"][0]["epoch"] = last["nodes"][0]["epoch"] + 5  # no step of the model gets there
    bad = tmp_path / "bad.itf.json"
    itf.write(str(bad), doc)
    assert cli.main(["replay", str(bad), "--quiet"]) == 1


# --- voter changes (KIP-853) -------------------------------------------------------------------

H, HR = "HandleFetchRequest", "HandleFetchResponse"
# reconfig with two messages in flight: voter 0 elected by 1, follower 1 caught up
ELECTED = [("ElectionTimeout", 0), ("HandleVoteRequest", 0, 1), ("HandleVoteResponse", 1, 0),
           ("HandleBeginQuorumEpochRequest", 0, 1), (H, 1, 0), (HR, 0, 1), (H, 1, 0), (HR, 0, 1)]


def _scripted(path, preset="reconfig", overrides=None):
    """Drive a scripted behaviour of the model on the real code: (outcome, last model state)."""
    from checker.conform import engine
    from checker.conform.kraft import KraftAdapter
    from model.kraft import actions as A

    model = load_config(model="kraft", variant="no-pre-vote", preset=preset,
                        overrides=overrides or {"max_in_flight": 2}).build()
    steps, s = [], model.init_states()[0]
    for name, *args in path:
        a = getattr(A, name)(*args)
        t = model.next_state(s, a)
        assert t is not None, a
        steps.append((s, a, t))
        s = t
    report = engine.Report("kraft", "no-pre-vote", [preset])
    return engine.drive(KraftAdapter(model), "scripted", steps, model.init_states()[0], report), s


def test_add_voter_is_driven_with_the_api_versions_exchange(classpath):
    """A spare (node 2) fetches from a bootstrap voter as an observer, follows the leader, catches
    up; the leader accepts AddVoter (AddRaftVoter, ApiVersions answered by the new voter), writes the
    VotersRecord, and commits it with the new voter's fetch: the real code agrees at every step."""
    path = ELECTED + [("SendObserverFetch", 2, 0), (H, 2, 0), (HR, 0, 2), (H, 2, 0), (HR, 0, 2), (H, 2, 0),
                      ("AddVoter", 0, 2), (HR, 0, 2), (H, 2, 0), (HR, 0, 2), (H, 1, 0), (HR, 0, 1), (H, 1, 0),
                      (HR, 0, 1)]
    out, last = _scripted(path)
    assert out.difference is None and out.steps == len(path)
    assert last.nodes[0].log[-1][1] == VOTERS_BASE + 0b111
    assert last.nodes[0].hw == 2 and len(last.nodes[2].log) == 2  # the VotersRecord {0, 1, 2} committed


@pytest.mark.parametrize("removed", [0, 1])
def test_remove_voter_is_driven(classpath, removed):
    """RemoveVoter of a follower, and of the leader itself, which resigns in its next poll
    (ResignAfterRemoval) once the record commits; the real code agrees at every step."""
    path = ELECTED + [("RemoveVoter", 0, removed), (H, 1, 0), (HR, 0, 1), (H, 1, 0)]
    path += [("ResignAfterRemoval", 0), (HR, 0, 1)] if removed == 0 else [(HR, 0, 1)]
    out, last = _scripted(path)
    assert out.difference is None and out.steps == len(path)
    assert last.nodes[0].role == (5 if removed == 0 else 3)  # Resigned, or still Leader


def test_a_removed_leader_acting_before_it_resigns_is_the_named_divergence(classpath):
    """The model lets a leader whose removal has committed act as leader before ResignAfterRemoval
    (here: send BeginQuorumEpoch); Kafka resigns it at its next poll (RemoveVoterHandler ->
    LeaderState.requestResign -> pollLeader). Walks skip such steps; a behaviour that takes one ends
    in the named divergence."""
    from checker.conform.kraft import RESIGN_IN_COMMIT_STEP

    path = ELECTED + [("RemoveVoter", 0, 0), (H, 1, 0), (HR, 0, 1), (H, 1, 0), (HR, 0, 1),
                      ("SendBeginQuorumEpoch", 0, 1)]
    out, _ = _scripted(path)
    assert out.difference is not None and out.difference.step == len(path)
    assert out.known == RESIGN_IN_COMMIT_STEP


def test_seeded_walks_on_the_dynamic_presets_drive_voter_changes_and_agree(classpath):
    """Seeded swarm walks on reconfig (two messages in flight, so a spare's Fetch fits beside a
    follower's) and two-additions: AddVoter, RemoveVoter and the resignation after removal are
    driven, and every step agrees."""
    report = _run((("reconfig", {"max_in_flight": 2}), ("reconfig", {"max_in_flight": 2, "timeouts": 1}),
                   "two-additions"), walks=100, depth=30, seed=5)
    assert report.first is None, report.first.difference.line()
    assert not report.interrupted and not report.known
    for kind in ("SendObserverFetch", "AddVoter", "RemoveVoter", "ResignAfterRemoval"):
        assert report.counts[kind], f"{kind} never driven ({dict(report.counts)})"


# --- an exception from the real code (tests/test_conform_verdict.py: the same without a JVM) -------------


@pytest.fixture
def failing_store(classpath, monkeypatch):
    """Every node's quorum-state store is Kafka's MockQuorumStateStore behind a test double that
    throws java.lang.IllegalStateException when asked to persist an epoch of 1 or more (the first
    vote or candidacy): as a full disk would, inside KafkaRaftClient's own call."""
    import jpype

    from checker.conform import kraft

    @jpype.JImplements("org.apache.kafka.raft.QuorumStateStore")
    class FailingStore:
        def __init__(self, inner):
            self.inner = inner

        @jpype.JOverride
        def readElectionState(self):
            return self.inner.readElectionState()

        @jpype.JOverride
        def writeElectionState(self, latest, version):
            if latest.epoch() >= 1:
                raise jpype.JClass("java.lang.IllegalStateException")("injected: the quorum-state disk is full")
            self.inner.writeElectionState(latest, version)

        @jpype.JOverride
        def path(self):
            return self.inner.path()

        @jpype.JOverride
        def clear(self):
            self.inner.clear()

    fresh_disk = kraft._Node.fresh_disk

    def failing_disk(node):
        fresh_disk(node)
        node.store = FailingStore(node.store)

    monkeypatch.setattr(kraft._Node, "fresh_disk", failing_disk)


def test_an_exception_of_the_real_code_in_a_walk_is_a_named_finding(failing_store, classpath, capsys, tmp_path):
    from checker import cli

    trace = tmp_path / "exc.itf.json"
    code = cli.main(["conform", "--preset", "elections", "--walks", "3", "--seed", "1", "--json",
                     "--trace-out", str(trace), "--kafka-classpath", classpath])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["result"] == "exception" and out["parts"]["walks"] == "exception"
    d = out["difference"]
    assert d["kind"] == "exception" and d["step"] >= 1
    assert d["reason"] == "the real code threw java.lang.IllegalStateException: injected: the quorum-state disk is full"
    assert len(json.loads(trace.read_text())["states"]) == d["step"] + 1


def test_an_exception_of_the_real_code_in_a_simulation_is_a_named_finding(failing_store, classpath, capsys, tmp_path):
    from checker import cli

    trace = tmp_path / "sim.itf.json"
    code = cli.main(["conform", "--walks", "0", "--simulate", "3", "--depth", "20", "--seed", "1", "--json",
                     "--trace-out", str(trace), "--kafka-classpath", classpath])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["result"] == "exception"
    assert out["parts"] == {"walks": "not run", "traces": "not run", "simulations": "exception"}
    bad = out["simulation"]["first_invalid"]
    assert bad["result"] == "exception" and "java.lang.IllegalStateException: injected" in bad["exception"]
    doc = json.loads(trace.read_text())
    assert len(doc["states"]) == bad["step"] and "injected" in doc["#meta"]["description"]


# --- negative conformance: what the model refuses, offered to the real code ----------------------------

DYNAMIC = (("reconfig", {"max_in_flight": 2}), "two-additions", "voter-race")


def test_what_the_model_refuses_the_real_code_refuses(classpath):
    """--negative: in every state a walk reaches, one action the model's guard refuses is offered to
    the real code (a client append at a non-leader, AddVoter and RemoveVoter at a non-leader or at a
    leader whose checks fail); it refuses each, and the walks' own steps agree as without it."""
    report = _run(DYNAMIC, walks=60, depth=30, seed=5, negative=True)
    assert report.first is None, report.first.difference.line()
    offered = {k: v["offered"] for k, v in report.negative.items()}
    for case in ("ClientAppend at a non-leader", "AddVoter at a non-leader", "RemoveVoter at a non-leader",
                 "AddVoter at the leader", "RemoveVoter at the leader", "VoteRequest with a stale epoch"):
        assert offered.get(case), (case, offered)
    assert all(v["refused"] == v["offered"] for v in report.negative.values())
    assert sum(offered.values()) >= report.steps  # one offer in every state (the first included)
    answers = report.negative["RemoveVoter at a non-leader"]["answers"]
    assert set(answers) == {"RemoveRaftVoter answered NOT_LEADER_OR_FOLLOWER"}
    stale = {a.split(",")[0] for a in report.negative["VoteRequest with a stale epoch"]["answers"]}
    assert "answered FENCED_LEADER_EPOCH" in stale and stale <= {"answered FENCED_LEADER_EPOCH",
                                                                 "answered INVALID_REQUEST"}


FORGED_PRESETS = ("elections", "three-epochs", LOSSES)


def test_forged_requests_the_model_refuses_the_real_nodes_refuse(classpath):
    """--negative's forged requests (kraft.FORGED: Vote, BeginQuorumEpoch and Fetch requests no node
    sent, with a stale or future epoch, at a non-leader, from a node that is not the epoch's Candidate):
    each case is offered on these seeded walks, and every offer is refused with the model's own answer."""
    from checker.conform.engine import negative_by_kind
    from checker.conform.kraft import FORGED

    report = _run(FORGED_PRESETS, walks=40, depth=30, seed=5, negative=True)
    assert report.first is None, report.first.difference.line()
    standard = [case for case, (_, _, _, pre_vote) in FORGED.items() if not pre_vote]  # pre-votes: these jars lack them
    assert not any("pre-vote" in case for case in report.negative)
    for case in standard:
        tally = report.negative.get(case)
        assert tally and tally["offered"] == tally["refused"] > 0, (case, tally)
    answers = {case: {a.split(",")[0] for a in report.negative[case]["answers"]} for case in standard}
    assert answers["FetchRequest with a future epoch"] == {"answered UNKNOWN_LEADER_EPOCH"}
    assert "answered NOT_LEADER_OR_FOLLOWER" in answers["FetchRequest at a non-leader"]
    assert "answered FENCED_LEADER_EPOCH" in answers["BeginQuorumEpochRequest with a stale epoch"]
    granted = {a.split(", ")[1] for a in report.negative["VoteRequest from a non-candidate"]["answers"]}
    assert granted == {"granted 0"}
    kinds = negative_by_kind(report.negative)
    assert {"VoteRequest", "BeginQuorumEpochRequest", "FetchRequest", "ClientAppend"} <= set(kinds)
    assert kinds["FetchRequest"]["cases"] == 3
    assert kinds["FetchRequest"]["offered"] == sum(report.negative[c]["offered"] for c in standard
                                                   if c.startswith("FetchRequest"))


def _forge_with_the_receivers_epoch(monkeypatch, cases):
    """The real node is offered each forged Fetch with the receiver's own epoch instead of the case's
    (a test double of a node that takes what it is sent): only `cases` are offered."""
    from checker.conform import kraft

    build = kraft.KraftAdapter._forged_data
    monkeypatch.setattr(kraft, "FORGED", cases)
    monkeypatch.setattr(kraft.KraftAdapter, "_forged_data", lambda self, f: build(
        self, f._replace(epoch=int(self.nodes[f.dst].quorum().epoch()))))


def test_a_real_leader_that_takes_a_forged_fetch_is_found(classpath, monkeypatch):
    """The offer's check can fail: a Fetch offered as one of a future epoch but sent with the leader's own
    epoch is one the real leader serves (NONE): an ACCEPTED finding, with the walk cut there."""
    from checker.conform import kraft
    from model.kraft.state import FETCH_REQUEST

    future_at_leader = (FETCH_REQUEST, lambda n, top: top + 1 if n.role == LEADER else None, kraft._any_sender, False)
    _forge_with_the_receivers_epoch(monkeypatch, {"FetchRequest with a future epoch": future_at_leader})
    report = _run(FORGED_PRESETS, walks=40, depth=30, seed=5, negative=True)
    assert report.first is not None
    d = report.first.difference
    assert d.kind == "accepted" and d.action.startswith("offering ForgedRequest(message='FetchRequest'"), d
    assert "which the model refuses here" in d.reason


def test_a_forged_request_refused_with_another_error_is_found(classpath, monkeypatch):
    """Offers are compared as enabled steps are: a stale-epoch Fetch sent with the receiver's own epoch
    is refused at a non-leader with NOT_LEADER_OR_FOLLOWER, where the model answers the stale one
    FENCED_LEADER_EPOCH (or INVALID_REQUEST): a DIFFERS finding naming both answers."""
    from checker.conform import kraft
    from model.kraft.state import FETCH_REQUEST

    stale_at_follower = (FETCH_REQUEST, lambda n, top: n.epoch - 1 if n.role == FOLLOWER and n.epoch else None,
                         kraft._any_sender, False)
    _forge_with_the_receivers_epoch(monkeypatch, {"FetchRequest with a stale epoch": stale_at_follower})
    report = _run(FORGED_PRESETS, walks=40, depth=30, seed=5, negative=True)
    assert report.first is not None
    d = report.first.difference
    assert d.kind == "differs" and d.action.startswith("offering ForgedRequest(message='FetchRequest'"), d
    assert "the real code answered NOT_LEADER_OR_FOLLOWER, the model" in d.reason, d.reason


def test_a_begin_quorum_epoch_from_a_second_leader_of_the_epoch_throws(classpath, monkeypatch):
    """Not a --negative case (docs/conform.md): a BeginQuorumEpoch of the receiver's epoch from a node
    that is not the leader it knows is no refusal. KafkaRaftClient.maybeTransition's hasConsistentLeader
    throws IllegalStateException from poll, changing nothing the comparison shows (the model restarts
    the node, client.inconsistent_leader); offered in every state with a known leader, every one throws
    and the walks' own steps still agree."""
    from collections import Counter

    from checker.conform import engine, kraft
    from model.kraft.state import BQE_REQUEST

    seen: Counter = Counter()

    def second_leaders(self, state):
        return {"BeginQuorumEpochRequest from a second leader": [
            kraft.ForgedRequest("BeginQuorumEpochRequest", i, j, n.epoch)
            for j, n in enumerate(state.nodes) if n.leader >= 0 and not n.observer
            and not (self.nodes[j].stalled() or self.nodes[j].resign_requested())
            for i in range(len(state.nodes))
            if i not in (j, n.leader) and not kraft.in_flight(state, BQE_REQUEST, i, j)]}

    def offer(self, state, f):
        before = self.observe()
        try:
            self._offer_forged(state, f)
        except self.jpype.JException as e:
            seen[str(e.getClass().getSimpleName())] += 1
            assert "inconsistent with current leader" in str(e.getMessage()), e
        assert not engine.compare(before, self.observe())
        return "IllegalStateException"

    monkeypatch.setattr(kraft.KraftAdapter, "refused_offers", second_leaders)
    monkeypatch.setattr(kraft.KraftAdapter, "offer", offer)
    report = _run(("elections", "three-epochs"), walks=20, depth=30, seed=5, negative=True)
    assert report.first is None, report.first.difference.line()
    offered = report.negative["BeginQuorumEpochRequest from a second leader"]["offered"]
    assert offered > 50 and seen == Counter({"IllegalStateException": offered}), (offered, seen)


def test_a_model_that_refuses_what_the_code_accepts_is_found(classpath, monkeypatch):
    """A model whose leader refuses every RemoveVoter (its guard too strict) never drives one, so the
    walks alone agree; offered, the real leader takes it: an ACCEPTED finding at that state."""
    from model.kraft import rules

    monkeypatch.setattr(rules, "validate_remove_voter", lambda *a, **k: rules.VOTER_NOT_FOUND)
    plain = _run(DYNAMIC, walks=60, depth=30, seed=5)
    assert plain.first is None and not plain.counts["RemoveVoter"]
    report = _run(DYNAMIC, walks=60, depth=30, seed=5, negative=True)
    assert report.first is not None
    d = report.first.difference
    assert d.kind == "accepted" and d.action.startswith("offering RemoveVoter(leader=")
    assert "which the model refuses here" in d.reason and d.keys


# a lone voter: Leader of epoch 1 from the start (KafkaRaftClient.initialize), restarts that stand again
LONE = ("--preset", "default", "--preset", "restart", "--preset", "disk-loss", "--set", "voters=1",
        "--set", "max_epoch=4", "--set", "max_log=4", "--set", "faults=3", "--set", "restarts=2",
        "--walks", "12", "--depth", "12", "--seed", "1", "--json")


@pytest.mark.parametrize("jars", ["kafka", "kafka-prevote"])
def test_a_lone_voter_agrees_from_its_first_state(jars, request):
    """With one voter the real node is Leader of epoch 1 before any step, and a restart makes it
    Leader of the next epoch at once; the model agrees at every step, on the jars without pre-vote
    (no-pre-vote) and with it (kafka-4.1). Each run is a `kcheck conform` process of its own."""
    cp = request.getfixturevalue("kafka_classpath" if jars == "kafka" else "kafka_prevote_classpath")
    out = _kcheck("conform", "--kafka-classpath", cp, *LONE)
    report = json.loads(out.stdout)
    assert out.returncode == 0 and report["result"] == "agree", report.get("difference")
    assert report["variant"] == ("no-pre-vote" if jars == "kafka" else "kafka-4.1")
    assert report["behaviours"] == 12 and not report["known_divergences"]
    assert report["action_counts"]["Restart"] >= 2 and report["action_counts"]["ClientAppend"] > 0
