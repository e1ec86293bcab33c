"""The round search (checker/search/rounds.py) over the kraft model's rounds (model/kraft/rounds.py), and
the symmetry reduction with dynamic voter sets it relies on (model/kraft/symmetry.py)."""
from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import model
from checker.search.run import explore
from checker.search.rounds import NoRounds, round_search
from model.kraft import actions as A
from model.kraft.rules import LEADER, VOTERS_BASE
from model.kraft.symmetry import canonical_key, rename, representative

DEFINITION = model.definition("kraft")


def build(preset: str, variant: str = "kafka-4.1", **overrides: Any) -> Any:
    config = {k.name: k.default for k in DEFINITION.config_keys}
    config.update(DEFINITION.presets[preset])
    config.update(overrides)
    return DEFINITION.build(config, variant)


# Three bootstrap voters and two voter changes: VotersRecords in logs, Fetch responses and the
# committed history, all of which a renaming must rename.
DYNAMIC = dict(voters=3, voter_changes=2, max_epoch=2, max_log=3, max_in_flight=4, faults=0, timeouts=4)
# Leader 0 of epoch 1 (votes of 1), 1 caught up (the LeaderChange committed), 0 removes 2.
PREFIX = [A.ElectionTimeout(0), A.HandleVoteRequest(0, 1), A.HandleVoteResponse(1, 0), A.HandleVoteRequest(0, 1),
          A.HandleVoteResponse(1, 0), A.HandleBeginQuorumEpochRequest(0, 1), A.HandleFetchRequest(1, 0),
          A.HandleFetchResponse(0, 1), A.HandleFetchRequest(1, 0), A.RemoveVoter(0, 2)]


def _walk(m: Any, choices: list[int]) -> list[Any]:
    s = m.init_states()[0]
    states = [s]
    for a in PREFIX:
        s = m.next_state(s, a)
        assert s is not None, a
        states.append(s)
    for c in choices:
        enabled = [t for a in m.actions(s) if (t := m.next_state(s, a)) is not None]
        if not enabled:
            break
        s = enabled[c % len(enabled)]
        states.append(s)
    return states


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=10_000), max_size=25))
def test_renaming_voters_with_dynamic_sets_changes_nothing(choices: list[int]) -> None:
    """With voter changes the symmetry reduction renames the member sets inside VotersRecords too:
    a renamed state has the same fingerprint, the same safety property values, and renamed
    successors. The walk starts with a removal, so its states hold VotersRecords."""
    m = build("voter-race", **DYNAMIC)
    assert m.symmetric
    states = _walk(m, choices)
    assert any(k >= VOTERS_BASE for _, k in states[len(PREFIX)].nodes[0].log)  # a later truncation may drop it
    for s in [states[len(PREFIX)]] + states[-3:]:
        for to in itertools.permutations(range(3)):
            t = rename(s, to, masks=True)
            assert m.fingerprint(t) == m.fingerprint(s) and m.encode(t) == m.encode(s)
            assert canonical_key(representative(t, masks=True), masks=True) == canonical_key(s, masks=True)
            for p in m.properties:
                if not p.temporal:
                    assert p.predicate(t) == p.predicate(s), p.name
            succ_s = sorted(m.encode(x) for a in m.actions(s) if (x := m.next_state(s, a)) is not None)
            succ_t = sorted(m.encode(x) for a in m.actions(t) if (x := m.next_state(t, a)) is not None)
            assert succ_s == succ_t


def test_a_renaming_that_ignores_the_member_sets_is_not_a_symmetry() -> None:
    """The masks matter: renaming the nodes but not the VotersRecord's members gives a state that
    behaves differently (so the reduction would merge states it must not)."""
    m = build("voter-race", **DYNAMIC)
    s = _walk(m, [])[-1]  # 0's latest set is {0, 1}
    t = rename(s, (2, 1, 0))  # node 0 is now 2, but the record still names {0, 1}
    assert m.fingerprint(t) != m.fingerprint(s)
    assert m.fingerprint(rename(s, (2, 1, 0), masks=True)) == m.fingerprint(s)


def test_spares_keep_the_nodes_apart() -> None:
    """A spare is not interchangeable with a bootstrap voter: no symmetry with spares."""
    assert not build("reconfig").symmetric and not build("two-additions").symmetric
    assert build("voter-race").symmetric and build("default").symmetric


# --- rounds ---------------------------------------------------------------------------------------

def test_every_round_is_a_run_of_the_models_own_steps() -> None:
    """Each step of a round is enabled where it is taken (it is among `actions` and `next_state`
    gives the recorded state), so every state a round search reaches is reachable."""
    m = build("voter-race", **DYNAMIC)
    checked = 0
    for s in _walk(m, [3, 1, 4, 1, 5])[::3]:
        for r in m.rounds(s):
            cur = s
            for a, t in r:
                assert a in m.actions(cur) and m.next_state(cur, a) == t
                cur = t
            checked += 1
    assert checked > 40


def test_elections_are_won_and_catch_ups_reach_the_leaders_end() -> None:
    m = build("voter-race", **DYNAMIC)
    s = m.init_states()[0]
    elections = [r for r in m.rounds(s) if len(r) > 1]
    # each voter wins with each majority of the others: {a}, {b} and {a, b}
    assert len(elections) == 3 * 3 and all(r[-1][1].nodes[r[0][0].node].role == LEADER for r in elections)
    leader = next(r for r in elections if [a for a, _ in r][:1] == [A.ElectionTimeout(0)])[-1][1]
    catch_ups = [r for r in m.rounds(leader) if isinstance(r[0][0], A.HandleBeginQuorumEpochRequest)]
    assert catch_ups
    for r in catch_ups:
        end = r[-1][1]
        follower = r[0][0].dst
        assert end.nodes[follower].log == end.nodes[0].log and end.nodes[0].hw == len(end.nodes[0].log)


def test_the_round_search_reaches_only_reachable_states() -> None:
    """On a space BFS exhausts, the states the round search reaches are a subset of BFS's, and
    fewer: rounds skip interleavings (model/kraft/rounds.py)."""
    m = build("disk-loss")

    def reach(successors: Any) -> set[int]:
        s0 = m.init_states()[0]
        seen, frontier = {m.fingerprint(s0)}, [s0]
        while frontier:
            level = []
            for s in frontier:
                for t in successors(s):
                    if m.fingerprint(t) not in seen:
                        seen.add(m.fingerprint(t))
                        level.append(t)
            frontier = level
        return seen

    by_steps = reach(lambda s: [t for a in m.actions(s) if (t := m.next_state(s, a)) is not None])
    by_rounds = reach(lambda s: [r[-1][1] for r in m.rounds(s)])
    full, search = explore(m), round_search(m, 20)
    assert full.result == "ok" and full.distinct_states == len(by_steps)
    assert search.result == "ok" and search.depth < 20 and search.distinct_states == len(by_rounds)
    assert by_rounds < by_steps


def test_a_violation_by_rounds_is_a_trace_of_single_steps() -> None:
    """K4 (same-identity-after-disk-loss) found by rounds: the trace replays step by step through
    next_state, its last state breaks the invariant and no earlier one does; it is no shorter
    than BFS's shortest counterexample."""
    m = build("disk-loss", "same-identity-after-disk-loss")
    r = round_search(m, 10)
    assert r.result == "violation" and r.violation["invariant"] == "election_safety"
    trace = r.violation["trace"]
    s = m.init_states()[0]
    assert trace[0] == (None, s)
    for a, t in trace[1:]:
        assert a in m.actions(s)
        s = m.next_state(s, a)
        assert s == t
    bad = next(p for p in m.properties if p.name == "election_safety")
    assert not bad.predicate(s) and all(bad.predicate(t) for _, t in trace[:-1])
    assert r.violation["rounds"] == r.depth < len(trace) - 1
    assert len(explore(m).violation["trace"]) <= len(trace)


def test_rounds_skip_interleavings() -> None:
    """What rounds cannot do: K2's story (vote-without-log-check) interleaves two elections, so a
    search by rounds holds where BFS finds the violation."""
    m = build("elections", "vote-without-log-check")
    assert round_search(m, 20).result == "ok" and explore(m).result == "violation"


def test_the_bound_and_max_states_stop_the_search() -> None:
    m = build("voter-race")
    one = round_search(m, 1)
    assert one.result == "ok" and one.depth == 1 and one.queue == one.distinct_states - 1 > 0
    capped = round_search(m, 7, max_states=500)
    assert capped.result == "incomplete" and capped.distinct_states == 500


def test_a_model_without_rounds_is_refused() -> None:
    replication = model.definition("replication")
    config = {k.name: k.default for k in replication.config_keys}
    config.update(replication.presets["smoke"])
    with pytest.raises(NoRounds):
        round_search(replication.build(config, "kafka-4.1"), 3)


# --- kcheck check --rounds ------------------------------------------------------------------------

def _check(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    from checker import cli

    code = cli.main(["check", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_check_rounds_finds_k4_as_docs_cli_shows(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """docs/cli.md's --rounds example: a violation, its trace in single steps (also as ITF)."""
    trace = tmp_path / "k4.itf.json"
    code, out, _ = _check(capsys, "--model", "kraft", "--variant", "same-identity-after-disk-loss", "--preset",
                          "disk-loss", "--rounds", "4", "--json", "--quiet", "--trace-out", str(trace))
    report = json.loads(out)
    assert code == 1 and report["result"] == "violation" and report["rounds"] == 4
    assert report["violation"]["invariant"] == "election_safety"
    assert report["depth"] <= 4 < len(report["violation"]["trace"]) - 1
    assert report["liveness"] is None and report["liveness_skipped"].startswith("--rounds")
    assert len(json.loads(trace.read_text())["states"]) == len(report["violation"]["trace"])
    code, out, _ = _check(capsys, "--model", "kraft", "--variant", "same-identity-after-disk-loss", "--preset",
                          "disk-loss", "--rounds", "4", "--quiet")
    assert code == 1 and "rounds (--rounds 4: a search by rounds" in out and "counterexample:" in out


def test_check_rounds_holds_within_its_bound(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _check(capsys, "--model", "kraft", "--preset", "voter-race", "--rounds", "2", "--json", "--quiet")
    report = json.loads(out)
    assert code == 0 and report["result"] == "ok" and report["depth"] == 2 and report["distinct_states"] > 10


@pytest.mark.parametrize("argv,message", [
    (["--model", "kraft", "--rounds", "2", "--workers", "2"], "--workers does not apply to --rounds"),
    (["--model", "kraft", "--rounds", "2", "--engine", "spark"], "--engine spark does not apply to --rounds"),
    (["--model", "kraft", "--rounds", "0"], "--rounds"),
    (["--rounds", "2"], "model replication defines no rounds"),
])
def test_check_rounds_bad_input_is_one_line(argv: list[str], message: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _check(capsys, *argv)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
