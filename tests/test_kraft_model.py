"""The kraft model: structure under random runs (Hypothesis), canonical encoding and symmetry,
the pinned size of the smoke preset, every safety variant's counterexample found by BFS, and the
availability variants holding. Tests over ~20 s are marked slow."""
from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import model
from checker.search.run import explore
from checker.gate.gate import default_gate_file, load_gate
from model.interface import action_name, always
from model.kraft import actions as A
from model.kraft.properties import state_sanity
from model.kraft.rules import FOLLOWER, LEADER, PROSPECTIVE
from model.kraft.state import FETCH_REQUEST, PRE_VOTE_LOST
from model.kraft.symmetry import canonical_key, rename, representative

DEFINITION = model.definition("kraft")
ROOT = Path(__file__).resolve().parents[1]


def build(preset: str = "default", variant: str = "kafka-4.1", **overrides: Any) -> Any:
    config = {k.name: k.default for k in DEFINITION.config_keys}
    config.update(DEFINITION.presets[preset])
    config.update(overrides)
    return DEFINITION.build(config, variant)


def walk(m: Any, choices: list[int]) -> list[tuple[Any, Any]]:
    """Follow `choices` through the enabled actions (each picks among the enabled ones)."""
    s = m.init_states()[0]
    steps = [(None, s)]
    for c in choices:
        enabled = [(a, t) for a in m.actions(s) if (t := m.next_state(s, a)) is not None]
        if not enabled:
            break
        a, s = enabled[c % len(enabled)]
        steps.append((a, s))
    return steps


# --- The definition -------------------------------------------------------------------------------

def test_definition_is_complete():
    """Variants (kafka-4.1 first), their presets, config keys and presets all line up."""
    names = [v.name for v in DEFINITION.variants]
    assert names[0] == "kafka-4.1"
    assert set(names) == {"kafka-4.1", "commit-by-count", "vote-without-log-check", "vote-not-persisted",
                          "same-identity-after-disk-loss", "fetch-only-from-voters", "no-pre-vote",
                          "no-check-quorum", "no-pre-vote-no-check-quorum", "voter-change-before-hw",
                          "overlapping-voter-changes"}
    keys = {k.name for k in DEFINITION.config_keys}
    for preset in DEFINITION.presets.values():
        assert set(preset) <= keys
    invariants = {name for name, kind, _ in DEFINITION.invariants if kind != "sometimes"}
    for v in DEFINITION.variants:
        assert v.preset in DEFINITION.presets
        assert v.expect == "holds" or v.expect in invariants
    assert {"smoke", "default"} <= set(DEFINITION.presets)


def test_actions_are_named_after_kafka_and_reprs_are_python():
    m = build("smoke")
    for _, s in walk(m, list(range(30))):
        for a in m.actions(s):
            assert action_name(a) in A.ACTION_KINDS
            assert eval(repr(a), vars(A)) == a


# --- Random runs keep the structure (Hypothesis) ------------------------------------------------------

@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(min_value=0, max_value=10_000), max_size=60),
       st.sampled_from([v.name for v in DEFINITION.variants]))
def test_random_runs_keep_structure(choices, variant):
    """Every state of a random run satisfies state_sanity (every variant) and, for Kafka 4.1, every
    safety property; the state stays made of ints, bools and tuples."""
    m = build("default", variant, symmetry=False, timeouts=-1)
    sanity = state_sanity(m.params, m.ctx.proto)
    for _, s in walk(m, choices):
        assert sanity(s)
        assert _plain_values(s)
        if variant == "kafka-4.1":
            for p in m.properties:
                if p.kind == "always":
                    assert p.predicate(s), p.name


def _plain_values(x: Any) -> bool:
    if isinstance(x, tuple):
        return all(_plain_values(v) for v in x)
    return type(x) in (int, bool)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=10_000), max_size=40))
@example(choices=[129])
def test_renaming_the_voters_changes_nothing(choices):
    """Symmetry: a renamed state has the same fingerprint and encoding, the same property values,
    and its enabled actions lead to renamed successors.

    The example [129] (a Prospective's first poll) once failed: poll_sends sent a batch of Vote
    requests in voter-id order and kept the part that fitted the in-flight bound, so which voter
    got the request depended on the ids. A batch now goes out whole or not at all.
    Temporal properties may name a voter: they are checked on `liveness_model()`, which has no
    symmetry reduction."""
    m = build("default", timeouts=-1)
    for _, s in walk(m, choices)[-3:]:
        for to in itertools.permutations(range(3)):
            t = rename(s, to)
            assert m.encode(t) == m.encode(s) and m.fingerprint(t) == m.fingerprint(s)
            assert canonical_key(representative(t)) == canonical_key(s)
            for p in m.properties:
                if p.temporal:  # per-voter; the liveness pass explores without symmetry
                    continue
                assert p.predicate(t) == p.predicate(s), p.name
            succ_s = sorted(m.encode(x) for a in m.actions(s) if (x := m.next_state(s, a)) is not None)
            succ_t = sorted(m.encode(x) for a in m.actions(t) if (x := m.next_state(t, a)) is not None)
            assert succ_s == succ_t


# --- Encoding -------------------------------------------------------------------------------------------

TRACE = list(range(0, 200, 7))


def test_encoding_is_deterministic_and_json_is_plain():
    m1, m2 = build("default"), build("default")
    for (_, a), (_, b) in zip(walk(m1, TRACE), walk(m2, TRACE)):
        assert a == b and m1.encode(a) == m2.encode(b) and m1.fingerprint(a) == m2.fingerprint(b)
        assert json.loads(json.dumps(m1.to_json(a))) == m1.to_json(a)


def test_fingerprints_agree_across_processes():
    """Encodings and fingerprints do not depend on the process (PYTHONHASHSEED)."""
    code = (
        "import sys; sys.path.insert(0, %r)\n"
        "from tests.test_kraft_model import build, walk, TRACE\n"
        "m = build('default')\n"
        "print([(m.fingerprint(s), m.encode(s).hex()[:64]) for _, s in walk(m, TRACE)])\n"
    ) % str(ROOT)
    outputs = set()
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout
        outputs.add(out)
    assert len(outputs) == 1


# --- Exploration ----------------------------------------------------------------------------------------

def test_smoke_preset_passes_with_pinned_size():
    """Two voters, one election: every property holds; the size is pinned (explain any change)."""
    r = explore(build("smoke"))
    assert r.result == "ok" and not r.unreached
    assert (r.distinct_states, r.depth) == (515, 17)
    assert r.never_enabled == ["HandleBeginQuorumEpochResponse"]
    assert r.disabled == {**{k: "faults = 0" for k in ("Restart", "DiskLoss", "DropMessage", "CutLink", "HealLink")},
                          **{k: "voter_changes = 0" for k in ("AddVoter", "RemoveVoter", "ResignAfterRemoval")},
                          "SendObserverFetch": "voter_changes = 0 and spares = 0"}


def test_a_removed_leader_without_pre_vote_times_out_to_unattached():
    """KafkaRaftClient.pollResigned: a Resigned leader no longer in the voter set moves to
    Unattached in epoch + 1 (a voter would stand). Seeded walks of `reconfig` without pre-vote,
    with room for one more epoch, until a leader resigns after removing itself; every step on the
    way (a voter left alone in its set too) is one the model can take without tripping its bounds."""
    import random

    from model.kraft.rules import RESIGNED, UNATTACHED

    m = build("reconfig", "no-pre-vote", max_epoch=3, timeouts=4)
    rng = random.Random(1)
    for _ in range(3000):
        s = m.init_states()[0]
        for _ in range(40):
            enabled = [(a, t) for a in m.actions(s) if (t := m.next_state(s, a)) is not None]
            if not enabled:
                break
            a, s = enabled[rng.randrange(len(enabled))]
            if isinstance(a, A.ResignAfterRemoval):
                i, n = a.node, s.nodes[a.node]
                assert n.role == RESIGNED
                after = [t for b in m.actions(s) if isinstance(b, A.ElectionTimeout) and b.node == i
                         and (t := m.next_state(s, b)) is not None]
                if after:
                    assert (after[0].nodes[i].role, after[0].nodes[i].epoch) == (UNATTACHED, n.epoch + 1)
                    return
                break
    pytest.fail("no removed leader timed out within 3,000 walks")


def test_symmetry_only_merges_renamings():
    """Without symmetry the smoke space is exactly twice as big (two voters, every state asymmetric
    but its mirror image)."""
    assert explore(build("smoke", symmetry=False)).distinct_states == 1028


LIVENESS_NAMES = {name for name, kind, _ in DEFINITION.invariants if kind not in ("always", "sometimes")}
# variants whose gate row replays a schedule or searches by rounds: beyond a search by single steps
# (K5, K10; the gate runs those rows, tests/test_rounds.py the round search)
SCHEDULED = {r.variant for r in load_gate(default_gate_file()) if r.model == "kraft" and (r.schedule or r.rounds)}
SAFETY_VARIANTS = [
    pytest.param(v, marks=pytest.mark.slow) if v.name == "commit-by-count" else v
    for v in DEFINITION.variants if v.expect != "holds" and v.expect not in LIVENESS_NAMES and v.name not in SCHEDULED
]


@pytest.mark.parametrize("variant", SAFETY_VARIANTS, ids=lambda v: v.name)
def test_safety_variant_breaks_its_invariant(variant):
    """BFS finds, on the variant's preset, a shortest counterexample of the invariant it expects.

    commit-by-count (K1) is slow: Raft's Figure 8 needs four elections, a 40-step trace over
    1,151,129 states (2 to 6 minutes on a shared 2-core machine). test_commit_by_count_commits_old_entries_by_count
    covers its mechanism fast."""
    r = explore(build(variant.preset, variant.name), max_states=2_000_000)
    assert r.result == "violation", (variant.name, r.result)
    assert r.violation["invariant"] == variant.expect
    trace = r.violation["trace"]
    assert len(trace) - 1 == EXPECTED_LENGTH[variant.name]


EXPECTED_LENGTH = {
    "commit-by-count": 40,
    "vote-without-log-check": 20,
    "vote-not-persisted": 16,
    "same-identity-after-disk-loss": 15,
}


def no_commit_by_count(s: Any) -> bool:
    """Kafka 4.1's KRaft HW rule seen from the state: a leader's HW, once it has one above 0,
    passes its epoch start offset (an entry of its own epoch, the LeaderChange record, is
    committed), so no leader commits entries of earlier epochs by counting replicas alone."""
    return all(not (n.role == LEADER and 0 < n.hw <= n.epoch_start) for n in s.nodes)


@pytest.mark.parametrize("variant,expected", [("commit-by-count", "violation"), ("kafka-4.1", "ok")])
def test_commit_by_count_commits_old_entries_by_count(variant, expected):
    """K1's mechanism, fast: with two voters and two elections, BFS finds a commit-by-count leader
    whose HW covers only entries of earlier epochs (the first step of Raft's Figure 8); Kafka 4.1
    (LeaderState.maybeUpdateHighWatermark: HW > epoch start offset) never gets there."""
    m = build("smoke", variant, max_epoch=2, max_log=1)
    m.properties = [always("no_commit_by_count", no_commit_by_count), *m.properties]
    r = explore(m)
    assert r.result == expected
    if expected == "violation":
        assert r.violation["invariant"] == "no_commit_by_count"
        assert len(r.violation["trace"]) - 1 == 18


@pytest.mark.parametrize("preset", [
    "smoke", "disk-loss",
    pytest.param("elections", marks=pytest.mark.slow), pytest.param("restart", marks=pytest.mark.slow),
])
def test_kafka_holds_on_the_variant_presets(preset):
    """Kafka 4.1 passes the configurations on which the variants break (elections and restart are
    slow; default, checked by `kcheck check --model kraft`, and the fast K1 test cover them)."""
    r = explore(build(preset))
    assert r.result == "ok"


@pytest.mark.slow
def test_kafka_holds_on_figure8():
    r = explore(build("figure8"))
    assert r.result == "ok"


@pytest.mark.parametrize("variant", ["no-pre-vote", "no-check-quorum"])
def test_availability_variants_hold(variant):
    """K7/K8 cost availability, not safety: every invariant still holds."""
    r = explore(build("elections", variant))
    assert r.result == "ok" and not r.unreached


@pytest.mark.slow
def test_default_preset_passes_with_full_coverage():
    """The default preset: every invariant holds, every sometimes property is reached, every action
    kind is enabled; the size is pinned (about a minute on one core)."""
    r = explore(build("default"))
    assert r.result == "ok"
    assert r.unreached == [] and r.never_enabled == []
    assert r.distinct_states == 322_636


@pytest.mark.slow
def test_no_faults_preset_passes_with_unbounded_timers():
    """No faults, any number of timer expirations: every invariant holds."""
    r = explore(build("no-faults"))
    assert r.result == "ok" and not r.unreached
    assert r.distinct_states == 348_387


# --- KIP-996: a Prospective that loses its pre-vote moves on at once --------------------------
# Named after KafkaRaftClientPreVoteTest; each delivers crafted Vote responses, as those tests do.

def _prospective(m: Any, role: int, epoch: int, leader: int) -> Any:
    """Voter 0 in `role` of `epoch` (following `leader` if any), then its timer expires: it is
    Prospective with its pre-vote requests in flight."""
    from model.kraft.state import fresh_node, initial_state
    s = initial_state(m.params.n)
    node = fresh_node()._replace(role=role, epoch=epoch, leader=leader)
    s = s._replace(nodes=(node,) + s.nodes[1:])
    timer = A.FetchTimeout(0) if role == FOLLOWER else A.ElectionTimeout(0)
    t = m.next_state(s, timer)
    assert t is not None and t.nodes[0].role == PROSPECTIVE and t.nodes[0].epoch == epoch
    return t


def _answer(m: Any, s: Any, voter: int, granted: bool) -> Any:
    """Voter `voter`'s Vote response to voter 0 arrives (its request, if in flight, is dropped)."""
    from model.kraft.rules import NONE
    from model.kraft.state import VOTE_RESPONSE, VoteResponse
    n0 = s.nodes[0]
    network = tuple(x for x in s.network if not (x.src == 0 and x.dst == voter))
    reply = VoteResponse(VOTE_RESPONSE, voter, 0, n0.epoch, -1, NONE, granted)
    t = m.next_state(s._replace(network=network + (reply,)), A.HANDLE_ACTION[VOTE_RESPONSE](voter, 0))
    assert t is not None
    return t


def test_prospective_transitions_to_unattached_on_election_failure():
    """testProspectiveTransitionsToUnattachedOnElectionFailure: two voters, no leader known; the
    one rejection leaves no majority, so the Prospective is Unattached in the same epoch in that
    step (no timer spent), and its election timer runs again."""
    from model.kraft.rules import UNATTACHED
    m = build("smoke", timeouts=5)
    s = _prospective(m, UNATTACHED, 1, -1)
    t = _answer(m, s, 1, granted=False)
    n = t.nodes[0]
    assert (n.role, n.epoch, n.leader, n.votes) == (UNATTACHED, 1, -1, ())
    assert t.timers == s.timers and t.history.last_event == PRE_VOTE_LOST
    assert m.next_state(t, A.ElectionTimeout(0)).nodes[0].role == PROSPECTIVE


def test_prospective_with_leader_transitions_to_follower_after_election_loss():
    """testProspectiveWithLeaderTransitionsToFollower: three voters, a Follower of voter 1 whose
    fetch timer expired; one rejection leaves a majority possible (Prospective still), the second
    does not: Follower of voter 1 again, in the same epoch, fetching."""
    m = build("default", timeouts=5)
    s = _prospective(m, FOLLOWER, 1, 1)
    t = _answer(m, s, 2, granted=False)
    assert t.nodes[0].role == PROSPECTIVE and t.history.last_event != PRE_VOTE_LOST
    t = _answer(m, t, 1, granted=False)
    n = t.nodes[0]
    assert (n.role, n.epoch, n.leader, n.fetched) == (FOLLOWER, 1, 1, False)
    assert t.history.last_event == PRE_VOTE_LOST
    assert any(x.src == 0 and x.dst == 1 and x.kind == FETCH_REQUEST for x in t.network)


def test_candidate_keeps_its_election_after_a_lost_vote():
    """A Candidate that a majority rejects backs off (maybeHandleElectionLoss:
    startBackingOff) and stays Candidate until its timer: only a Prospective moves at once."""
    from model.kraft.rules import CANDIDATE
    m = build("default", timeouts=5)
    s = _prospective(m, FOLLOWER, 1, 1)
    s = _answer(m, s, 1, granted=True)
    assert s.nodes[0].role == CANDIDATE and s.nodes[0].epoch == 2
    t = _answer(m, _answer(m, s, 1, granted=False), 2, granted=False)
    assert t.nodes[0].role == CANDIDATE and t.history.last_event != PRE_VOTE_LOST
    assert m.next_state(t, A.ElectionTimeout(0)).nodes[0].role == PROSPECTIVE


def test_observer_answers_begin_quorum_epoch_with_invalid_voter_key():
    """handleBeginQuorumEpochRequest: a replica back from a lost disk (a new directory id) follows
    the leader and answers INVALID_VOTER_KEY, since the request names its old voter key (found by
    kcheck conform against KafkaRaftClient); the leader handles the answer without a state change."""
    from model.kraft.rules import INVALID_VOTER_KEY
    from model.kraft.state import BQE_RESPONSE

    m = build("disk-loss", "no-pre-vote")
    s = m.init_states()[0]
    for a in (A.DiskLoss(2), A.ElectionTimeout(0), A.SendVote(0, 1), A.HandleVoteRequest(0, 1),
              A.HandleVoteResponse(1, 0), A.SendBeginQuorumEpoch(0, 2), A.HandleBeginQuorumEpochRequest(0, 2)):
        s = m.next_state(s, a)
        assert s is not None, a
    assert s.nodes[2].role == FOLLOWER and s.nodes[2].leader == 0 and s.nodes[2].observer
    (answer,) = s.network
    assert answer.kind == BQE_RESPONSE and answer.error == INVALID_VOTER_KEY and (answer.epoch, answer.leader) == (1, 0)
    t = m.next_state(s, A.HandleBeginQuorumEpochResponse(2, 0))
    assert t.nodes == s.nodes and t.network == ()


def test_a_lost_disk_observer_restarts_as_its_leaders_follower():
    """QuorumState.initialize: the quorum-state file of a replica back from a lost disk names the
    leader it follows, and a restart brings it back as that leader's Follower, not Unattached
    (found by kcheck conform's trace validation of KafkaRaftClient); it still holds no vote."""
    from model.kraft.rules import UNATTACHED

    m = build("disk-loss", "no-pre-vote", faults=2, restarts=1)
    s = m.init_states()[0]
    for a in (A.DiskLoss(2), A.ElectionTimeout(0), A.SendVote(0, 1), A.HandleVoteRequest(0, 1),
              A.HandleVoteResponse(1, 0), A.SendBeginQuorumEpoch(0, 2), A.HandleBeginQuorumEpochRequest(0, 2)):
        s = m.next_state(s, a)
        assert s is not None, a
    t = m.next_state(s, A.Restart(2))
    assert (t.nodes[2].role, t.nodes[2].epoch, t.nodes[2].leader, t.nodes[2].voted) == (FOLLOWER, 1, 0, -1)
    assert t.nodes[2].observer
    # an observer that knows no leader comes back Unattached, as before
    u = m.next_state(m.next_state(m.init_states()[0], A.DiskLoss(2)), A.Restart(2))
    assert (u.nodes[2].role, u.nodes[2].leader) == (UNATTACHED, -1)


# --- A lone voter: KafkaRaftClient.initialize stands at once ------------------------------------

@pytest.mark.parametrize("variant", ["kafka-4.1", "no-pre-vote"])
def test_a_lone_voter_starts_as_leader_of_epoch_1(variant):
    """KafkaRaftClient.initialize ("When there is only a single voter, become candidate
    immediately"): the only voter is a Candidate of epoch 1 and, its own vote a majority, Leader
    with its LeaderChange record (committed at once) before any step, with pre-vote too."""
    from model.kraft.rules import NO_ID, UNATTACHED

    m = build("default", variant, voters=1)
    (s,) = m.init_states()
    (n,) = s.nodes
    assert (n.role, n.epoch, n.leader, n.voted, n.log, n.hw) == (LEADER, 1, 0, 0, ((1, 0),), 1)
    assert s.history.elected == ((1, 0),) and s.network == () and s.timers == 0
    assert s.history.committed == ((0, 1, 0, 1),)
    # a spare is no voter: it starts Unattached in epoch 0, and the lone voter leads
    m = build("reconfig", variant, voters=1)
    s = m.init_states()[0]
    assert [(x.role, x.epoch, x.leader) for x in s.nodes] == [(LEADER, 1, 0), (UNATTACHED, 0, NO_ID)]
    # two voters: every node starts Unattached in epoch 0, as before
    assert all(x.role == UNATTACHED and x.epoch == 0 for x in build("smoke", variant).init_states()[0].nodes)


@pytest.mark.parametrize("variant", ["kafka-4.1", "no-pre-vote"])
def test_a_lone_voter_stands_again_at_once_after_a_restart(variant):
    """QuorumState.initialize brings a lone leader back Resigned in its epoch, then
    KafkaRaftClient.initialize makes it Candidate and Leader of the next epoch at once; where that
    epoch would pass max_epoch the model takes no such restart."""
    from model.kraft.rules import UNATTACHED

    m = build("default", variant, voters=1, max_epoch=2, max_log=3, restarts=2, disk_losses=1, faults=3)
    s = m.init_states()[0]
    t = m.next_state(s, A.Restart(0))
    (n,) = t.nodes
    assert (n.role, n.epoch, n.leader, n.log) == (LEADER, 2, 0, ((1, 0), (2, 0)))
    assert t.history.elected == ((1, 0), (2, 0)) and t.history.last_event == 3  # ELECTED_AFTER_RESTART
    assert m.next_state(t, A.Restart(0)) is None  # epoch 3 is beyond max_epoch
    # a lost disk (KIP-853): the node is an observer, no voter, and stays Unattached
    d = m.next_state(s, A.DiskLoss(0))
    assert (d.nodes[0].role, d.nodes[0].epoch, d.nodes[0].observer) == (UNATTACHED, 0, True)
