"""Conformance of the replication model's controller with Kafka's ReplicationControlManager (jars).

Needs the Kafka jars: env KCHECK_KAFKA_CLASSPATH (skipped without it, failed with
KCHECK_REQUIRE_KAFKA=1). One JVM per test process, so the tests share the xdist group "jvm".
"""
from __future__ import annotations

import collections
import glob
import os
import random
from typing import Any

import pytest

from checker.traces import itf
from checker.config import load_config
from checker.conform.adapter import compare

pytestmark = pytest.mark.xdist_group("jvm")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONTROLLER_KINDS = ("FenceBroker", "UnfenceBroker", "HandleAlterPartition", "ElectLeaders",
                    "AlterPartitionReassignments", "ControlledShutdown", "Restart", "CommitMetadata",
                    "ControllerFailover")
PRESETS = ("smoke", "stale-fetch", "stale-fetch-failover", "default", "two-values", "epoch-lookup",
           "last-replica-standing", "zombie-leader", "three-replica-conflict", "last-known-leader", "one-crash",
           "reassignment", "faults", "controller-failover")
# configurations beyond the presets: unclean elections (topic config and ElectLeaders UNCLEAN), ELR off
EXTRA = (
    ("smoke", {"unclean_elect_leaders": True, "max_leader_epoch": 3, "max_partition_epoch": 4}),
    ("zombie-leader", {"unclean_leader_election": True}),
    ("last-replica-standing", {"elr_enabled": False}),
    ("reassignment", {"brokers": 3, "min_insync_replicas": 2, "reassignments": 2}),
)


@pytest.fixture(scope="module")
def jvm(kafka_classpath: str) -> None:
    return None


def _adapter(model: Any) -> Any:
    from checker.conform.replication import ReplicationAdapter
    return ReplicationAdapter(model)


def _model(preset: str, variant: str | None = None, overrides: dict | None = None) -> Any:
    return load_config("replication", variant=variant, preset=preset, overrides=overrides or {}).build()


class Outcome(collections.namedtuple("Outcome", "steps kinds step action refused keys known")):
    """One behaviour against the real controller: its steps, the action kinds taken, and the first
    difference (step, action, refusal line, differing keys, the documented divergence it is)."""


def run(model: Any, adapter: Any, behaviour: Any) -> Outcome:
    """Drive `adapter` along `behaviour` (yields (state, action, successor)), comparing after every step."""
    from checker.conform.replication import known_divergence
    kinds: collections.Counter = collections.Counter()
    steps = 0
    for state, action, successor in behaviour:
        if steps == 0 and state is not None:
            adapter.reset(state)
            keys = compare(adapter.abstract(state), adapter.observe())
            if keys:
                return Outcome(0, kinds, 0, "init", None, keys, None)
        steps += 1
        kinds[type(action).__name__] += 1
        refused = adapter.step(state, action, successor)
        real = adapter.observe()
        keys = compare(adapter.abstract(successor), real)
        if refused or keys:
            return Outcome(steps, kinds, steps, repr(action), refused, keys,
                           known_divergence(state, action, successor, real))
    return Outcome(steps, kinds, None, None, None, {}, None)


def swarm_walk(model: Any, seed: int, depth: int) -> Any:
    """A seeded swarm walk: each action kind on (weight in [0.1, 1)) or off, as checker.walks.walker does."""
    from checker.walks.walker import swarm_weights
    rng = random.Random(seed)
    weights = swarm_weights(model, rng)
    s = model.init_states()[0]
    for _ in range(depth):
        succ = [(a, t) for a in model.actions(s) if (t := model.next_state(s, a)) is not None]
        if not succ:
            return
        on = [(a, t) for a, t in succ if weights[type(a).__name__] > 0] or succ
        total = sum(weights[type(a).__name__] or 1.0 for a, _ in on)
        x, pick = rng.random() * total, on[-1]
        for a, t in on:
            x -= weights[type(a).__name__] or 1.0
            if x <= 0:
                pick = (a, t)
                break
        yield s, pick[0], pick[1]
        s = pick[1]


def trace_behaviour(model: Any, path: str) -> Any:
    """The model's own steps along a recorded trace: at each step the successor by the named
    action whose JSON is the trace's state (or is, after the checker's stutter reduction)."""
    doc = itf.load(path)
    states = itf.steps(doc)
    s = model.init_states()[0]
    assert model.to_json(s) == states[0][1], f"{path}: the trace does not start in the initial state"
    for action_text, values in states[1:]:
        for a in model.actions(s):
            if action_text is not None and repr(a) != action_text:
                continue
            t = model.next_state(s, a)
            if t is None:
                continue
            if model.to_json(t) == values or model.to_json(model.reduce(t)) == values:
                break
        else:
            raise AssertionError(f"{path}: no successor by {action_text}")
        yield s, a, t
        s = t if model.to_json(t) == values else model.reduce(t)


def sample(walks: int, depth: int, seed: int = 0) -> tuple[list[tuple[str, Outcome]], collections.Counter]:
    """Swarm walks over every preset and EXTRA; the kinds taken, and under "answer <error>" the
    AlterPartition answers the real controller gave."""
    out, kinds = [], collections.Counter()
    configs = [(p, {}) for p in PRESETS] + list(EXTRA)
    for preset, overrides in configs:
        model = _model(preset, overrides=overrides)
        adapter = _adapter(model)
        for w in range(walks):
            o = run(model, adapter, swarm_walk(model, seed * 1_000_003 + w, depth))
            kinds.update(o.kinds)
            out.append((f"{preset} {overrides or ''} walk {w}", o))
        kinds.update({f"answer {k}": v for k, v in adapter.answers.items()})
    return out, kinds


def test_seeded_walks_agree_with_the_real_controller(jvm: None) -> None:
    outcomes, kinds = sample(walks=12, depth=40)
    unexplained = [(name, o) for name, o in outcomes if o.step is not None and o.known is None]
    assert not unexplained, "\n".join(f"{n}: step {o.step} {o.action}: {o.refused or o.keys}"
                                      for n, o in unexplained[:5])
    assert sum(o.steps for _, o in outcomes) > 5000
    for kind in CONTROLLER_KINDS:
        assert kinds[kind] > 0, f"{kind} never exercised: {dict(kinds)}"
    for error in ("NONE", "STALE_BROKER_EPOCH", "FENCED_LEADER_EPOCH", "INVALID_UPDATE_VERSION", "NEW_LEADER_ELECTED"):
        assert kinds[f"answer {error}"] > 0, f"AlterPartition never answered {error}: {dict(kinds)}"


# The bug variants whose rule is the controller's: the real controller parts from the trace at the
# step the bug needs (step, action kind, what differs). Every other variant's bug is on the broker
# side (Scala in core) or in timing: along its trace the real controller agrees at every step.
CONTROLLER_BUGS = {
    # R8: a fenced broker joins the ISR; Kafka answers INELIGIBLE_REPLICA (KIP-841)
    "fenced-may-join-isr": (5, "HandleAlterPartition", "answered ('INELIGIBLE_REPLICA',)"),
    # R9: a member's stale broker epoch is not checked; Kafka answers INELIGIBLE_REPLICA (KIP-903)
    "no-broker-epoch-in-alter-partition": (16, "HandleAlterPartition", "answered ('INELIGIBLE_REPLICA',)"),
    # R19: the reassignment that removes a replica bumps the leader epoch in Kafka
    "reassignment-keeps-leader-epoch": (5, "AlterPartitionReassignments", "partition.leader_epoch"),
    # R13: Kafka's unclean-shutdown registration removes the broker from the ELR (KAFKA-15586)
    "unclean-restart-keeps-elr": (9, "Restart", "partition.elr"),
}
TRACES = sorted(glob.glob(os.path.join(ROOT, "traces", "replication", "*.itf.json")))


@pytest.mark.parametrize("path", TRACES, ids=[os.path.basename(p).split(".")[0] for p in TRACES])
def test_bug_variant_trace_against_the_real_controller(jvm: None, path: str) -> None:
    meta = itf.load(path)["#meta"]
    model = load_config("replication", variant=meta["variant"], preset=meta["preset"], overrides=meta["config"]).build()
    adapter = _adapter(model)
    o = run(model, adapter, trace_behaviour(model, path))
    expected = CONTROLLER_BUGS.get(meta["variant"])
    if expected is None:
        assert o.step is None, f"step {o.step} {o.action}: {o.refused or o.keys}"
        assert o.steps == len(itf.load(path)["states"]) - 1 > 0
    else:
        step, kind, what = expected
        assert (o.step, o.action.split("(")[0]) == (step, kind)
        assert what in (o.refused or "") or what in o.keys, (o.refused, o.keys)
        assert o.known is None
    if meta["variant"] == "reassignment-leaves-elr":
        # H3, found by the model, is the real controller's: the removed replica is in its ELR
        real = adapter.observe()
        assert (real["partition.replicas"], real["partition.elr"]) == ([0], [1])


def test_a_wrong_controller_rule_is_caught(jvm: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison can fail: a model whose ClusterControlManager.isActive forgets the fencing
    (a fenced broker may lead) parts from the real controller on a seeded walk, at a controller
    step, on the partition's leader."""
    from model.replication import controller as rules

    def wrong(brokers: tuple, broker_id: int) -> bool:
        reg = brokers[broker_id] if 0 <= broker_id < len(brokers) else None
        return reg is not None and not reg.in_controlled_shutdown

    model = _model("zombie-leader")
    adapter = _adapter(model)
    monkeypatch.setattr(rules, "_is_active", wrong)
    found = None
    for w in range(200):
        o = run(model, adapter, swarm_walk(model, w, 40))
        if o.step is not None:
            found = o
            break
    assert found is not None, "no walk told the wrong rule from Kafka's"
    assert found.action.split("(")[0] in CONTROLLER_KINDS
    assert "partition.leader" in found.keys, found


def test_a_wrong_abstraction_is_caught(jvm: None) -> None:
    """The abstraction map can fail too: an adapter that read the broker epochs one off is told apart at once."""
    model = _model("smoke")
    adapter = _adapter(model)
    real_abstract = adapter.abstract
    adapter.abstract = lambda s: {**real_abstract(s), "broker1.epoch": s.controller.brokers[1].epoch + 1}
    o = run(model, adapter, swarm_walk(model, 1, 5))
    assert o.step == 0 and "broker1.epoch" in o.keys


def test_kcheck_conform_replication_agrees(jvm: None, capsys: pytest.CaptureFixture[str]) -> None:
    """`kcheck conform --model replication`: the engine's seeded swarm walks agree, each controller
    action kind the presets enable is driven, and the KAFKA-19522 divergence is named, not agreed."""
    import json

    from checker import cli
    argv = ["conform", "--model", "replication", "--preset", "last-known-leader", "--preset", "reassignment",
            "--preset", "controller-failover", "--walks", "60", "--depth", "40", "--seed", "5", "--swarm", "--json",
            "--kafka-classpath", os.environ["KCHECK_KAFKA_CLASSPATH"]]
    assert cli.main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["result"] == "agree" and report["behaviours"] == 60 and report["steps"] > 1000
    counts = report["action_counts"]
    for kind in ("FenceBroker", "UnfenceBroker", "HandleAlterPartition", "AlterPartitionReassignments",
                 "ControlledShutdown", "Restart", "CommitMetadata", "ControllerFailover"):
        assert counts[kind] > 0, kind
    assert list(report["known_divergences"]) == [
        "KAFKA-19522: the jars elect the last known leader although it is not an acceptable leader"]
    assert "KAFKA-19522" in report["abstractions"] and "broker side" in report["abstractions"]


def test_docs_replication_example_prints_what_docs_show(jvm: None, capsys: pytest.CaptureFixture[str]) -> None:
    """docs/conform.md's replication example, run as written: the same counts and verdict (only the timing differs)."""
    import re
    import shlex

    from checker import cli
    with open(os.path.join(ROOT, "docs", "conform.md")) as f:
        text = f.read()
    line = next(x.strip() for x in text.splitlines()
                if x.strip().startswith("KCHECK_KAFKA_CLASSPATH=") and "--model replication" in x)
    argv = shlex.split(line)[2:]
    block = text[text.index(line):].split("```")[1].strip("\n").splitlines()
    argv += ["--kafka-classpath", os.environ["KCHECK_KAFKA_CLASSPATH"]]
    assert cli.main(argv) == 0
    printed = capsys.readouterr().out.splitlines()
    # only the timing and where the model is installed (and its digest) differ from machine to machine
    timing = re.compile(r" in [0-9.]+ s \([0-9]+ steps/s\)|(?<=^model source: ).*")
    assert [timing.sub("", x) for x in printed] == [timing.sub("", x) for x in block]


def controller_transitions(model: Any) -> tuple[int, list[list[tuple[Any, Any, Any]]]]:
    """A BFS of the model (no reduction): the number of states, and for every distinct controller
    transition (the controller's registrations and pending writes before, the controller action,
    and after) one behaviour that takes it: a shortest path to its first source state, then it."""
    init = model.init_states()[0]
    parent: dict[Any, Any] = {init: None}
    first: dict[tuple, tuple[Any, Any, Any]] = {}
    frontier = [init]

    def key(s: Any) -> tuple:
        c = s.controller
        return c.partition, c.brokers, len(c.uncommitted)

    while frontier:
        following = []
        for s in frontier:
            for a in model.actions(s):
                t = model.next_state(s, a)
                if t is None:
                    continue
                if type(a).__name__ in CONTROLLER_KINDS:
                    first.setdefault((key(s), a, key(t)), (s, a, t))
                if t not in parent:
                    parent[t] = (s, a)
                    following.append(t)
        frontier = following

    def path(s: Any) -> list[tuple[Any, Any, Any]]:
        out = []
        while parent[s] is not None:
            p, a = parent[s]
            out.append((p, a, s))
            s = p
        return out[::-1]

    return len(parent), [path(s) + [(s, a, t)] for s, a, t in first.values()]


def _bfs_row(preset: str) -> list[str]:
    """spec/replication.md's row of the exhaustive conformance table for this preset, cell by cell."""
    spec = open(os.path.join(ROOT, "spec", "replication.md")).read()
    table = spec.split("Exhaustively over a preset:", 1)[1].split("\n### ", 1)[0]
    row = next(line for line in table.splitlines() if line.startswith(f"| `{preset}` |"))
    return [cell.strip() for cell in row.strip("|").split("|")]


# spec/replication.md's table: controller-failover in the fast tier, the others (minutes each) in the slow one
BFS_ROWS = [pytest.param("controller-failover")] + [
    pytest.param(p, marks=pytest.mark.slow) for p in ("smoke", "last-replica-standing", "reassignment",
                                                      "last-known-leader")]


@pytest.mark.parametrize("preset", BFS_ROWS)
def test_every_controller_transition_of_a_bfs_agrees(jvm: None, preset: str) -> None:
    """Every controller transition the model can take on the preset (a BFS of all its states),
    each driven along a shortest behaviour to it, agrees with the real controller but for the named
    KAFKA-19522 divergence; the counts are spec/replication.md's table row."""
    model = _model(preset)
    adapter = _adapter(model)
    states, behaviours = controller_transitions(model)
    kinds: collections.Counter = collections.Counter()
    agree = known = 0
    for behaviour in behaviours:
        kinds[type(behaviour[-1][1]).__name__] += 1
        o = run(model, adapter, iter(behaviour))
        assert o.step is None or o.known is not None, f"step {o.step} {o.action}: {o.refused or o.keys}"
        agree, known = agree + (o.step is None), known + (o.step is not None)
    assert _bfs_row(preset)[1:5] == [f"{states:,}", f"{len(behaviours):,}", f"{agree:,}", f"{known:,}"], \
        (preset, states, len(behaviours), agree, known)
    for kind in ("FenceBroker", "UnfenceBroker", "HandleAlterPartition", "ControlledShutdown", "Restart"):
        assert kinds[kind] > 0, kind
    if preset == "controller-failover":
        assert kinds["CommitMetadata"] > 0 and kinds["ControllerFailover"] > 0


def test_kcheck_conform_drives_every_replication_trace(jvm: None, capsys: pytest.CaptureFixture[str]) -> None:
    """`kcheck conform --model replication --traces`: the checker's traces hold reduced states (a
    follower's metadata replay folded into the step before), and every one is driven; the four
    controller-side bugs part from the real controller at the step the bug needs."""
    import json

    from checker import cli
    paths = sorted(glob.glob(os.path.join(ROOT, "traces", "replication", "*.itf.json")))
    argv = ["conform", "--model", "replication", "--walks", "0", "--json", "--traces", *paths,
            "--kafka-classpath", os.environ["KCHECK_KAFKA_CLASSPATH"]]
    assert cli.main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert len(report["traces"]) == len(paths) > 20
    assert report["model_source"]["sha256"] and report["model_source"]["files"] > 10
    parted = {t["variant"]: t["step"] for t in report["traces"] if t["result"] == "parted"}
    assert parted == {"fenced-may-join-isr": 5, "no-broker-epoch-in-alter-partition": 16,
                      "reassignment-keeps-leader-epoch": 5, "unclean-restart-keeps-elr": 9}


def test_ci_runs_a_seeded_sample_of_each_model(jvm: None, capsys: pytest.CaptureFixture[str]) -> None:
    """`.ci/run` drives a sample seeded by the commit on the real code for both models; the
    replication line, run here with another seed, agrees over every preset and drives every
    controller action kind."""
    import json
    import shlex

    from checker import cli
    lines = [line for line in open(os.path.join(ROOT, ".ci", "run")).read().splitlines()
             if line.startswith(".venv/bin/kcheck conform ")]
    models = {shlex.split(line)[shlex.split(line).index("--model") + 1]: line for line in lines}
    assert set(models) == {"kraft", "replication"}, lines
    argv = shlex.split(models["replication"])[1:]
    assert "--swarm" in argv and "--seed" in argv and "--preset" not in argv and int(argv[argv.index("--walks") + 1]) >= 240
    argv[argv.index("--seed") + 1] = "11"
    assert cli.main([*argv, "--json", "--kafka-classpath", os.environ["KCHECK_KAFKA_CLASSPATH"]]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["result"] == "agree" and report["behaviours"] == int(argv[argv.index("--walks") + 1])
    for kind in CONTROLLER_KINDS:
        assert report["action_counts"].get(kind, 0) > 0, kind


def test_a_difference_is_reported_with_a_trace_render_draws(jvm: None, monkeypatch: pytest.MonkeyPatch,
                                                            tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """The command's difference report, as for the kraft model: exit 1, the step and both values in
    --json, and an ITF trace of the behaviour up to the difference that kcheck render draws."""
    import json

    from checker import cli
    from model.replication import controller as rules

    def wrong(brokers: tuple, broker_id: int) -> bool:  # forgets the fencing: a fenced broker may lead
        reg = brokers[broker_id] if 0 <= broker_id < len(brokers) else None
        return reg is not None and not reg.in_controlled_shutdown

    monkeypatch.setattr(rules, "_is_active", wrong)
    trace = tmp_path / "diff.itf.json"
    code = cli.main(["conform", "--model", "replication", "--preset", "zombie-leader", "--walks", "200", "--depth", "40",
                     "--seed", "0", "--json", "--trace-out", str(trace),
                     "--kafka-classpath", os.environ["KCHECK_KAFKA_CLASSPATH"]])
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and report["result"] == "difference", report["result"]
    doc = json.loads(trace.read_text())
    difference = doc["#meta"]["difference"]
    assert difference["step"] == len(doc["states"]) - 1 and doc["#meta"]["model"] == "replication"
    assert "partition.leader" in json.dumps(difference), difference
    monkeypatch.undo()
    page = tmp_path / "diff.html"
    assert cli.main(["render", str(trace), "--html", str(page), "--quiet"]) == 0 and page.stat().st_size > 0


# --- negative conformance: what the model's controller refuses, offered to the real one -------------


def _negative_walks(presets: Any, walks: int, seed: int) -> Any:
    from checker.conform import engine
    from checker.conform.replication import ReplicationAdapter, known_divergence

    models = [(p, _model(p)) for p in presets]
    report = engine.Report("replication", "kafka-4.1", list(presets), seed, 40, True)
    report.action_kinds = tuple(models[0][1].action_kinds)
    engine.run_walks(models, ReplicationAdapter, seed, walks, 40, True, report, negative=True)
    return report


def test_what_the_model_controller_refuses_the_real_controller_refuses(jvm: None) -> None:
    """--negative: ElectLeaders PREFERRED and UNCLEAN where the model's rule answers an error, offered
    in every state a walk reaches: the real controller answers the same error and writes nothing."""
    report = _negative_walks(("last-known-leader", "zombie-leader", "one-crash"), walks=45, seed=3)
    assert report.first is None, report.first.difference.line()
    assert set(report.negative) >= {"ElectLeaders PREFERRED", "ElectLeaders UNCLEAN"}
    for case, tally in report.negative.items():
        assert tally["offered"] == tally["refused"] > 0, (case, tally)
        for answer in tally["answers"]:  # "answered X (model: X)": the same error on both sides
            real, model = answer.removeprefix("answered ").rstrip(")").split(" (model: ")
            assert real == model, answer


def test_a_model_controller_refusing_an_election_kafka_makes_is_found(jvm: None,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A model whose controller answers every UNCLEAN election it would make ELECTION_NOT_NEEDED never takes one,
    so its walks agree; offered where a leaderless partition has a live replica, the real controller
    elects it: an ACCEPTED finding."""
    from model.replication import controller as rules

    real_rule = rules.elect_leader_request

    def wrong(reg: Any, brokers: Any, election: str, **kw: Any) -> Any:
        error, change = real_rule(reg, brokers, election, **kw)  # its other errors stay the real controller's
        if election == rules.UNCLEAN and error == rules.NONE:
            return rules.ELECTION_NOT_NEEDED, None
        return error, change

    monkeypatch.setattr(rules, "elect_leader_request", wrong)
    report = _negative_walks(("last-known-leader", "zombie-leader", "one-crash"), walks=200, seed=3)
    assert report.first is not None
    d = report.first.difference
    assert d.kind == "accepted" and d.action == "offering ElectLeaders(election='UNCLEAN')", d
    assert "partition.leader" in d.keys


FORGED_PRESETS = ("default", "one-crash", "zombie-leader", "last-known-leader")


def test_forged_alter_partitions_the_model_refuses_the_real_controller_refuses(jvm: None) -> None:
    """--negative's forged AlterPartition requests (replication.FORGED_ALTER_PARTITION: a stale or future
    leader or partition epoch, a stale broker epoch, from a broker that is not the leader, an ISR without
    the leader, RECOVERING asked): each case is offered on these seeded walks and refused with the model's
    own error, nothing written."""
    from checker.conform.engine import negative_by_kind
    from checker.conform.replication import FORGED_ALTER_PARTITION

    report = _negative_walks(FORGED_PRESETS, walks=40, seed=3)
    assert report.first is None, report.first.difference.line()
    expected = {"AlterPartition with a future leader epoch": {"NOT_CONTROLLER"},
                "AlterPartition with a future partition epoch": {"NOT_CONTROLLER"},
                "AlterPartition with a stale leader epoch": {"FENCED_LEADER_EPOCH"},
                "AlterPartition with a stale partition epoch": {"INVALID_UPDATE_VERSION"},
                "AlterPartition with a stale broker epoch": {"STALE_BROKER_EPOCH"},
                "AlterPartition from a non-leader": {"INVALID_REQUEST"},
                "AlterPartition with an ISR without the leader": {"INVALID_REQUEST"},
                "AlterPartition asking RECOVERING": {"INVALID_REQUEST"}}
    assert set(expected) == set(FORGED_ALTER_PARTITION)
    for case, errors in expected.items():
        tally = report.negative.get(case)
        assert tally and tally["offered"] == tally["refused"] > 0, (case, tally)
        real = {a.removeprefix("answered ").split(" (model: ")[0] for a in tally["answers"]}
        assert real == errors, (case, tally["answers"])
    kinds = negative_by_kind(report.negative)
    assert kinds["AlterPartition"]["cases"] == len(expected)
    assert kinds["AlterPartition"]["offered"] == kinds["AlterPartition"]["refused"]


def test_a_real_controller_that_takes_a_forged_alter_partition_is_found(jvm: None,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The offer's check can fail: an AlterPartition offered as one of a stale leader epoch but sent with
    the registration's own epoch is one the real controller takes (NONE): an ACCEPTED finding."""
    from checker.conform import replication

    stale = "AlterPartition with a stale leader epoch"
    monkeypatch.setattr(replication, "FORGED_ALTER_PARTITION", {stale: replication.FORGED_ALTER_PARTITION[stale]})
    offer = replication.ReplicationAdapter.offer

    def current_epoch(self: Any, state: Any, action: Any) -> Any:
        if isinstance(action, replication.ForgedAlterPartition):
            epoch = state.controller.partition.leader_epoch
            action = action._replace(request=action.request._replace(leader_epoch=epoch))
        return offer(self, state, action)

    monkeypatch.setattr(replication.ReplicationAdapter, "offer", current_epoch)
    report = _negative_walks(FORGED_PRESETS, walks=40, seed=3)
    assert report.first is not None
    d = report.first.difference
    assert d.kind == "accepted" and d.action.startswith("offering ForgedAlterPartition(request="), d


def test_a_forged_alter_partition_refused_with_another_error_is_found(jvm: None,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Offers are compared as enabled steps are: a model whose controller answered a future leader epoch
    FENCED_LEADER_EPOCH (not NOT_CONTROLLER) is told the real controller's other error (DIFFERS)."""
    from checker.conform import replication
    from model.replication import controller as rules

    future = "AlterPartition with a future leader epoch"
    monkeypatch.setattr(replication, "FORGED_ALTER_PARTITION", {future: replication.FORGED_ALTER_PARTITION[future]})
    real_rule = rules.validate_alter_partition

    def wrong(reg: Any, brokers: Any, **kw: Any) -> str:
        error = real_rule(reg, brokers, **kw)
        return rules.FENCED_LEADER_EPOCH if kw["leader_epoch"] > reg.leader_epoch and error == rules.NOT_CONTROLLER \
            else error

    monkeypatch.setattr(rules, "validate_alter_partition", wrong)
    report = _negative_walks(FORGED_PRESETS, walks=40, seed=3)
    assert report.first is not None
    d = report.first.difference
    assert d.kind == "differs" and d.action.startswith("offering ForgedAlterPartition(request="), d
    assert "the real code answered NOT_CONTROLLER, the model FENCED_LEADER_EPOCH" in d.reason, d.reason


def test_steered_walks_agree_and_repeat_per_seed(jvm: None, capsys: pytest.CaptureFixture[str]) -> None:
    """`kcheck conform --steer`: the steered walks are driven on the real controller and agree, and the
    same seed gives the same walks (the steering's counts are the run's own, folded in walk order)."""
    import json

    from checker import cli
    argv = ["conform", "--model", "replication", "--preset", "last-known-leader", "--preset", "reassignment",
            "--walks", "30", "--depth", "40", "--seed", "5", "--swarm", "--json",
            "--kafka-classpath", os.environ["KCHECK_KAFKA_CLASSPATH"]]
    runs = []
    for extra in (["--steer"], ["--steer"], []):
        assert cli.main([*argv, *extra]) == 0
        runs.append(json.loads(capsys.readouterr().out))
    first, again, plain = runs
    assert first["steer"] is True and plain["steer"] is False
    assert first["result"] == "agree" and first["behaviours"] == 30 and first["steps"] > 500
    assert (first["steps"], first["action_counts"]) == (again["steps"], again["action_counts"])
    assert first["action_counts"] != plain["action_counts"]
