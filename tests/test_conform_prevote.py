"""Conformance of the kraft model's default variant, kafka-4.1 (pre-vote and check-quorum), with the
KafkaRaftClient of the jars built from KIP-996's pull request (../shared/kafka-prevote, BUILD.md
there). Each test runs `kcheck conform` in a process of its own: one JVM per process, and the other
conformance tests' JVM runs the jars without pre-vote.

Needs those jars: env KCHECK_KAFKA_PREVOTE_CLASSPATH, else the checkout's ../shared/kafka-prevote
(skipped without either, failed with KCHECK_REQUIRE_KAFKA=1).
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the kinds every static-voter preset together enables; with pre-vote, ElectionTimeout moves a
# node to Prospective and a granted pre-vote (HandleVoteResponse) to Candidate
DRIVEN = ("ElectionTimeout", "FetchTimeout", "CheckQuorumTimeout", "ClientAppend", "SendVote", "SendFetch",
          "HandleVoteRequest", "HandleVoteResponse", "HandleBeginQuorumEpochRequest", "HandleFetchRequest",
          "HandleFetchResponse", "Restart", "DiskLoss", "CutLink", "HealLink")


def _conform(cp: str, *args: str) -> tuple[int, dict]:
    out = subprocess.run([sys.executable, "-m", "checker.cli", "conform", "--model", "kraft", "--kafka-classpath", cp,
                          "--json", *args], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert out.stdout, out.stderr
    return out.returncode, json.loads(out.stdout)


def test_swarm_walks_of_kafka_4_1_agree_with_the_pre_vote_code(kafka_prevote_classpath):
    """docs/conform.md's command on the pre-vote jars, run as written (its class path the tests' own)."""
    import shlex

    text = (ROOT / "docs" / "conform.md").read_text()
    line = next(x.strip() for x in text.splitlines() if "--kafka-classpath ../shared/kafka-prevote" in x)
    argv = shlex.split(line)[2:]
    argv[argv.index("--kafka-classpath") + 1] = kafka_prevote_classpath
    assert argv[:2] == ["--model", "kraft"] and argv[argv.index("--walks") + 1] == "150"
    code, report = _conform(kafka_prevote_classpath, *argv[2:])
    assert code == 0, report["difference"]
    assert report["variant"] == "kafka-4.1" and report["result"] == "agree" and report["parts"]["walks"] == "agree"
    assert report["behaviours"] == 150 and not report["known_divergences"]
    missing = [k for k in DRIVEN if not report["action_counts"][k]]
    assert not missing, f"never driven: {missing} ({report['action_counts']})"
    # the pre-vote abstractions are named with the verdict, the pull request's version gap among them
    # --negative: what the model refuses, offered in every state, refused by the real code
    negative = report["negative"]
    assert negative["ClientAppend at a non-leader"]["offered"] > 0
    assert all(v["refused"] == v["offered"] for v in negative.values()), negative
    assert "Unattached with its election timer expired" in report["abstractions"]
    assert any("pull request" in k for k in report["abstractions"])


def test_forged_requests_and_pre_votes_the_model_refuses_the_pre_vote_code_refuses(kafka_prevote_classpath):
    """--negative on the pre-vote jars: every forged request case (kraft.FORGED), the pre-votes (KIP-996)
    among them, is offered on these seeded walks and refused with the model's own answer."""
    from checker.conform.kraft import FORGED

    code, report = _conform(kafka_prevote_classpath, "--preset", "elections", "--preset", "three-epochs",
                            "--walks", "40", "--depth", "30", "--swarm", "--seed", "5", "--negative")
    assert code == 0, report["difference"]
    negative = report["negative"]
    for case in FORGED:
        assert negative.get(case) and negative[case]["offered"] == negative[case]["refused"] > 0, (case, negative)
    pre_votes = {a for case in FORGED if "pre-vote" in case for a in negative[case]["answers"]}
    assert pre_votes and all(a.endswith("granted 0") for a in pre_votes), pre_votes
    by_kind = report["negative_by_kind"]["VoteRequest"]
    assert by_kind["cases"] == 4 and by_kind["offered"] == by_kind["refused"]


def test_simulations_of_the_pre_vote_nodes_are_behaviours_of_kafka_4_1(kafka_prevote_classpath, tmp_path):
    code, report = _conform(kafka_prevote_classpath, "--walks", "0", "--simulate", "25", "--depth", "30",
                            "--seed", "4", "--simulate-out", str(tmp_path))
    assert code == 0, report["simulation"]
    sim = report["simulation"]
    assert report["parts"]["simulations"] == "valid" and sim["valid"] == sim["runs"] == 25
    assert sim["action_counts"]["ElectionTimeout"] and sim["action_counts"]["HandleVoteResponse"]
    # the timer budget and the kind-first choice leave room for leaders: they append and replicate
    # (uniform draws over every timer and vote request gave about a fifth of these)
    assert sim["action_counts"]["ClientAppend"] >= 8 and sim["action_counts"]["HandleFetchRequest"] >= 20
    doc = json.loads((tmp_path / "sim-4.itf.json").read_text())
    roles = {n["role"] for state in doc["states"] for n in state["nodes"]}
    assert "Prospective" in roles, roles


def test_every_bug_trace_parts_from_the_pre_vote_code(kafka_prevote_classpath):
    """K7 and K9 (no pre-vote): at their first step the real node becomes Prospective in its epoch
    where the bug's becomes Candidate in the next; every other catalogued trace parts at its bug's step
    (refused, or another state), and none is followed."""
    traces = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "traces" / "kraft").glob("*.itf.json"))
    code, report = _conform(kafka_prevote_classpath, "--walks", "0", "--traces", *traces)
    assert code == 0 and report["parts"]["traces"] == "driven"
    outcome = {Path(t["path"]).name.split(".")[0]: t for t in report["traces"]}
    assert len(outcome) == len(traces) and {t["result"] for t in outcome.values()} == {"parted"}
    for bug in ("no-pre-vote", "no-pre-vote-no-check-quorum"):
        t = outcome[bug]
        assert t["step"] == 1 and t["action"] == "ElectionTimeout(node=0)"
        assert "node0.role model 'Candidate', real 'Prospective'" in t["outcome"]
    assert "node0.role 'Leader' -> 'Resigned'" in outcome["no-check-quorum"]["outcome"]


def test_a_variant_without_pre_vote_is_refused_on_the_pre_vote_jars(kafka_prevote_classpath):
    out = subprocess.run([sys.executable, "-m", "checker.cli", "conform", "--variant", "no-pre-vote", "--walks", "1",
                          "--kafka-classpath", kafka_prevote_classpath], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith("kcheck: error: variant no-pre-vote has no pre-vote") and out.stderr.count("\n") == 1


def test_ci_runs_a_seeded_sample_on_both_jar_folders():
    """`.ci/run` exports both folders (so the conformance tests there neither skip) and drives a seeded kraft
    sample, walks and simulations, on each: the default class path and the pre-vote one."""
    import shlex

    text = (ROOT / ".ci" / "run").read_text()
    assert 'export KCHECK_KAFKA_CLASSPATH="$(cd .. && pwd)/shared/kafka"' in text
    assert 'export KCHECK_KAFKA_PREVOTE_CLASSPATH="$(cd .. && pwd)/shared/kafka-prevote"' in text
    assert "export KCHECK_REQUIRE_KAFKA=1" in text
    kraft = [shlex.split(line) for line in text.splitlines()
             if line.startswith(".venv/bin/kcheck conform ") and "--model kraft" in line]
    folders = sorted(argv[argv.index("--kafka-classpath") + 1] if "--kafka-classpath" in argv else "default"
                     for argv in kraft)
    assert folders == ["$KCHECK_KAFKA_PREVOTE_CLASSPATH", "default"], folders
    for argv in kraft:
        assert "--seed" in argv and "--swarm" in argv and "--preset" not in argv
        assert int(argv[argv.index("--walks") + 1]) >= 240 and int(argv[argv.index("--simulate") + 1]) >= 100
        assert "--negative" in argv


def test_add_voter_after_a_pre_vote_election_is_taken_by_the_real_code(kafka_prevote_classpath, tmp_path):
    """AddVoter needs a spare caught up with a leader, which a pre-vote election (Prospective, then
    Candidate: two vote rounds) leaves swarm walks of depth 30 little room for (4 in 10,000): a
    scripted kafka-4.1 behaviour, written as a trace, is driven instead. The spare fetches from the
    bootstrap voter, catches up, is added, and the VotersRecord {0, 1, 2} commits: the real code
    takes every step and matches every state."""
    from checker.config import load_config
    from checker.traces import itf
    from model.kraft import actions as A
    from model.kraft.rules import VOTERS_BASE

    h, hr = "HandleFetchRequest", "HandleFetchResponse"
    path = [("ElectionTimeout", 0), ("HandleVoteRequest", 0, 1), ("HandleVoteResponse", 1, 0),  # pre-vote
            ("HandleVoteRequest", 0, 1), ("HandleVoteResponse", 1, 0),  # the vote of epoch 1
            ("HandleBeginQuorumEpochRequest", 0, 1), (h, 1, 0), (hr, 0, 1), (h, 1, 0), (hr, 0, 1),
            ("SendObserverFetch", 2, 0), (h, 2, 0), (hr, 0, 2), (h, 2, 0), (hr, 0, 2), (h, 2, 0),
            ("AddVoter", 0, 2), (hr, 0, 2), (h, 2, 0), (hr, 0, 2), (h, 1, 0), (hr, 0, 1), (h, 1, 0), (hr, 0, 1)]
    rc = load_config(model="kraft", variant="kafka-4.1", preset="reconfig", overrides={"max_in_flight": 2})
    model = rc.build()
    state = model.init_states()[0]
    trail = [(None, state)]
    for name, *args in path:
        action = getattr(A, name)(*args)
        state = model.next_state(state, action)
        assert state is not None, action
        trail.append((action, state))
    assert state.nodes[0].log[-1][1] == VOTERS_BASE + 0b111 and state.nodes[0].hw == 2
    trace = tmp_path / "add-voter.itf.json"
    itf.write(str(trace), itf.to_itf(model, trail, itf.run_meta(rc, seed=0, behaviour="scripted",
                                                               description="AddVoter after a pre-vote election")))
    code, report = _conform(kafka_prevote_classpath, "--walks", "0", "--traces", str(trace))
    assert code == 0 and report["traces"][0]["result"] == "followed", report["traces"]
    assert report["traces"][0]["steps"] == len(path)
