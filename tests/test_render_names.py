"""Counterexample text names things: records print with field names (a leader's view of a
follower is a FollowerState), a `legend:` line explains each terse name the trace uses, and
the last line ends with the concrete witness the model computes from the last state."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable

import pytest

from checker.traces import itf
from checker.traces import replay
from checker.config import load_config
from checker.traces.render import render_text, witness
from model.kraft.rules import LEADER
from model.kraft.state import LEADER_CHANGE
from model.replication.model import _plain
from model.replication.records import LogEntry
from model.replication.state import NO_FOLLOWER, FollowerState

ROOT = Path(__file__).resolve().parents[1]
TRACES = ROOT / "traces"


def _model(name: str, preset: str = "smoke") -> Any:
    return load_config(model=name, preset=preset).build()


def _property(model: Any, name: str) -> Callable[[Any], bool]:
    return next(p.predicate for p in model.properties if p.name == name)


def _ints(pattern: str, text: str) -> tuple[int, ...]:
    m = re.search(pattern, text)
    assert m, (pattern, text)
    return tuple(int(x) for x in m.groups())


# --- named fields ------------------------------------------------------------------------------

def test_followers_print_with_field_names_and_encode_as_plain_tuples() -> None:
    m = _model("replication")
    s = m.init_states()[0]
    assert s.brokers[0].followers[1] == NO_FOLLOWER == (-1, -1, False)
    assert m.to_json(s)["brokers"][0]["followers"][1] == {"leo": -1, "broker_epoch": -1, "caught_up": False}
    # the NamedTuple hashes and encodes as the plain tuple did: fingerprints do not move
    plain = FollowerState(3, 2, True)
    assert hash(plain) == hash((3, 2, True)) and repr(_plain((plain,))) == repr(((3, 2, True),))


def test_kraft_log_entries_and_history_print_with_field_names() -> None:
    m = _model("kraft")
    s = m.init_states()[0]
    n = s.nodes[0]._replace(log=((1, LEADER_CHANGE),))
    s = s._replace(nodes=(n,) + s.nodes[1:], history=s.history._replace(elected=((1, 0),), fatal=((0, 1),)))
    js = m.to_json(s)
    assert js["nodes"][0]["log"] == [{"epoch": 1, "kind": "LeaderChange"}]
    assert js["history"]["elected"] == [{"epoch": 1, "leader": 0}]
    assert js["history"]["fatal"] == [{"node": 0, "error": "truncate_below_hw"}]


# --- legend --------------------------------------------------------------------------------------

def test_legend_lists_only_the_glossary_names_the_trace_uses() -> None:
    m = _model("replication")
    s = m.init_states()[0]
    text = render_text(m, [(None, s)], "structural", "d")
    legend = [line.strip() for line in text.splitlines() if line.strip().startswith("legend:")]
    assert "legend: meta = partition epoch of the last metadata record the broker replayed" in legend
    assert any(x.startswith("legend: leso = leader epoch start offset") for x in legend)
    assert any(x.startswith("legend: clean = ") for x in legend)
    assert not any(x.startswith("legend: error = ") for x in legend)  # no response in the trace
    assert text.splitlines()[-1].startswith("  invariant structural is violated")  # the legend comes before it

    class Bare:  # a model without a glossary or explanations prints neither
        def to_json(self, state: Any) -> dict[str, Any]:
            return {"meta": 0}

    assert render_text(Bare(), [(None, 0)], "x").splitlines()[-1] == "  invariant x is violated in the state after step 0"  # type: ignore[arg-type]


# --- witnesses on the checked-in counterexamples ---------------------------------------------------

def _check_replication(inv: str, s: Any, text: str) -> None:
    exposed = s.history.exposed
    if inv == "candidate_completeness":
        value, offset, broker = _ints(r"value (\d+) \w+ at offset (\d+) .* from broker (\d+)", text)
        reg = s.controller.partition
        b = s.brokers[broker]
        assert broker in reg.isr + reg.elr and b.alive and exposed[offset].value == value
        assert offset >= len(b.log) or b.log[offset] != exposed[offset]
    elif inv == "log_matching":
        i, j, o = _ints(r"brokers (\d+) and (\d+) disagree at offset (\d+)", text)
        a, b = s.brokers[i], s.brokers[j]
        assert o < min(a.hw, b.hw) and a.log[o:o + 1] != b.log[o:o + 1]
    elif inv == "quorum_superset":
        broker, leader = _ints(r"broker (\d+) is in the controller's ISR .* leader broker (\d+)'s HW", text)
        reg, lb = s.controller.partition, s.brokers[leader]
        assert broker in reg.isr and leader == reg.leader and broker not in lb.maximal_isr
    elif inv == "structural":
        (broker,) = _ints(r"broker (\d+)", text)
        reg = s.controller.partition
        assert broker in reg.isr + reg.elr or broker == reg.leader
        if "fenced" in text:
            assert s.controller.brokers[broker].fenced and broker in reg.isr
    else:
        raise AssertionError(f"no check for {inv}: add one")


def _check_kraft(inv: str, s: Any, text: str) -> None:
    if inv == "election_safety":
        a, b, e = _ints(r"voters (\d+) and (\d+) were both elected leader in epoch (\d+)", text)
        assert {(e, a), (e, b)} <= set(s.history.elected) and a != b
    elif inv == "leader_completeness":
        epoch, offset, voter, leader_epoch = _ints(
            r"entry of epoch (\d+) committed at offset (\d+) .* missing from voter (\d+), the leader of epoch (\d+)", text)
        n = s.nodes[voter]
        assert n.role == LEADER and n.epoch == leader_epoch
        assert any(c[0] == offset and c[1] == epoch and c[3] < n.epoch for c in s.history.committed)
        assert offset >= n.leo or n.log[offset][0] != epoch
    elif inv == "leader_not_disrupted":
        voter, leader, epoch, now = _ints(r"voter (\d+) had fetched from leader (\d+) of epoch (\d+) and now is \w+ in"
                                          r" epoch (\d+)", text)
        assert s.history.disrupted == (leader, epoch, voter) and s.nodes[voter].epoch == now > epoch
    else:
        raise AssertionError(f"no check for {inv}: add one")


def _one_per_invariant() -> list[Path]:
    """The shortest safety trace of each (model, invariant) in traces/."""
    best: dict[tuple[str, str], tuple[int, Path]] = {}
    for path in sorted(TRACES.glob("*/*.itf.json")):
        doc = itf.load(str(path))
        if "loop" in doc:
            continue
        key = (path.parent.name, doc["#meta"]["invariant"])
        size = len(doc["states"])
        if key not in best or size < best[key][0]:
            best[key] = (size, path)
    return [p for _, p in sorted(best.values(), key=lambda x: str(x[1]))]


@pytest.mark.parametrize("path", _one_per_invariant(), ids=lambda p: f"{p.parent.name}/{p.name[:-9]}")
def test_witness_names_what_breaks_the_invariant(path: Path) -> None:
    doc = itf.load(str(path))
    rc = replay.trace_config(doc, str(path))
    model = replay.model_for(doc, rc.build())
    outcome = replay.replay(model, itf.steps(doc))
    inv = doc["#meta"]["invariant"]
    assert outcome.result == "valid" and inv in outcome.broken_invariants
    for s in outcome.final_states:
        text = witness(model, inv, s)
        assert text, f"{path}: no witness for {inv}"
        (_check_kraft if rc.model == "kraft" else _check_replication)(inv, s, text)
    assert outcome.witnesses.get(inv), outcome.witnesses


# --- witnesses of the invariants no checked-in trace breaks: hand-made states -------------------

def _repl_cases() -> dict[str, tuple[Callable[[Any], Any], str]]:
    def leader_lacks_acked(s: Any) -> Any:
        return s._replace(history=s.history._replace(exposed=(LogEntry(0, 0),), acked=(0,)))

    def nobody_holds_acked(s: Any) -> Any:
        return s._replace(history=s.history._replace(acked=(0,)))

    def leader_serves_other(s: Any) -> Any:
        b = s.brokers[0]._replace(log=(LogEntry(0, 1),), hw=1)
        return s._replace(brokers=(b,) + s.brokers[1:], history=s.history._replace(exposed=(LogEntry(0, 0),)))

    def leader_shrank_alone(s: Any) -> Any:
        return s._replace(brokers=(s.brokers[0]._replace(isr=(0,)),) + s.brokers[1:])

    def logs_differ(s: Any) -> Any:
        a = s.brokers[0]._replace(log=(LogEntry(0, 0),), hw=1)
        b = s.brokers[1]._replace(log=(LogEntry(0, 1),), hw=1)
        return s._replace(brokers=(a, b) + s.brokers[2:])

    def leader_outside_isr(s: Any) -> Any:
        c = s.controller
        return s._replace(controller=c._replace(log=(c.log[-1]._replace(isr=(1,)),)))

    return {
        "leader_completeness": (leader_lacks_acked, r"value 0 acked at offset 0 .*from broker 0, the current leader"),
        "no_acked_record_lost": (nobody_holds_acked, r"value 0 acked is on no broker's log"),
        "consistent_reads": (leader_serves_other, r"leader broker 0 serves value 1 .* at offset 0.*consumers read value 0"),
        "quorum_superset": (leader_shrank_alone, r"broker 1 is in the controller's ISR \[0, 1\] but not among"),
        "log_matching": (logs_differ, r"brokers 0 and 1 disagree at offset 0"),
        "structural": (leader_outside_isr, r"leader broker 0 is not in the ISR \[1\]"),
    }


def _kraft_cases() -> dict[str, tuple[Callable[[Any], Any], str]]:
    def leader(n: Any, epoch: int, log: tuple, hw: int) -> Any:
        return n._replace(role=LEADER, epoch=epoch, leader=0, log=log, hw=hw, epoch_start=0,
                          end_offsets=(len(log), 0))

    def two_logs(s: Any) -> Any:
        a = s.nodes[0]._replace(epoch=2, log=((1, 1), (2, 1)))
        b = s.nodes[1]._replace(epoch=2, log=((1, 0), (2, 1)))
        return s._replace(nodes=(a, b))

    def lost_commit(s: Any) -> Any:
        return s._replace(history=s.history._replace(committed=((0, 1, LEADER_CHANGE, 1),)))

    def hw_back(s: Any) -> Any:
        n = leader(s.nodes[0], 1, ((1, LEADER_CHANGE),), 0)
        return s._replace(nodes=(n,) + s.nodes[1:], history=s.history._replace(leader_hws=((1, 1),)))

    def bad_role(s: Any) -> Any:
        return s._replace(nodes=(s.nodes[0]._replace(leader=1),) + s.nodes[1:])

    def fatal(s: Any) -> Any:
        return s._replace(history=s.history._replace(fatal=((1, 2),)))

    return {
        "log_matching": (two_logs, r"voters 0 and 1 both hold an entry of epoch 2 at offset 1 but differ at offset 0"),
        "committed_kept": (lost_commit, r"committed at offset 0 is held by no voter"),
        "leader_hw_monotonic": (hw_back, r"voter 0, the leader of epoch 1, has HW 0, below the HW 1"),
        "state_sanity": (bad_role, r"voter 0 \(Unattached, epoch 0\) is Unattached but knows leader 1"),
        "no_fatal_error": (fatal, r"voter 1 saw its HW go backwards"),
    }


@pytest.mark.parametrize("name, inv", [("replication", i) for i in sorted(_repl_cases())]
                         + [("kraft", i) for i in sorted(_kraft_cases())])
def test_witness_on_a_hand_made_state(name: str, inv: str) -> None:
    m = _model(name)
    init = m.init_states()[0]
    make, words = (_repl_cases() if name == "replication" else _kraft_cases())[inv]
    s = make(init)
    assert not _property(m, inv)(s), "the hand-made state should break the invariant"
    text = witness(m, inv, s)
    assert re.search(words, text), text
    assert witness(m, inv, init) == ""  # it holds there: nothing to name


def test_every_invariant_has_an_explanation() -> None:
    for name in ("replication", "kraft"):
        m = _model(name)
        always = {p.name for p in m.properties if p.kind in ("always", "timely_invariant")}
        assert always == set(m.explanations), name
