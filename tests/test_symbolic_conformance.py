"""The KRaft Z3 encoding (checker/proofs/) against the Python model: every transition the
model takes satisfies the symbolic relation, and the symbolic successors of a state, enumerated
as Z3 models with blocking clauses, are exactly the model's. A drifted encoding fails here."""
from __future__ import annotations

import pytest
import z3

from checker.config import load_config
from checker.proofs import conformance as C
from tests.oracles import kraft_next
from tests.oracles.kraft_next import Ctx
from model.kraft import actions as A
from model.kraft.params import Params


def setup(preset: str, variant: str = "kafka-4.1", *sets: str):
    rc = load_config(model="kraft", preset=preset, variant=variant, overrides=["symmetry=false", *sets])
    return rc.build(), Ctx.of(Params.from_config(rc.config), variant)


@pytest.fixture(scope="module")
def smoke():
    model, ctx = setup("smoke")
    return model, ctx, C.Relation(ctx), C.sample(model, 50)


def test_every_model_transition_satisfies_the_relation(smoke):
    model, ctx, rel, states = smoke
    r = C.check_transitions(model, ctx, states, rel)
    assert r.failures == []
    assert r.transitions > 100  # the sample exercised the relation


def test_symbolic_successors_are_the_model_successors(smoke):
    model, ctx, rel, states = smoke
    r = C.check_successors(model, ctx, states[::4], rel)
    assert r.failures == []
    assert r.states >= 10 and r.transitions > 20


def test_a_lost_pre_vote_conforms():
    """The states where a rejection that loses a pre-vote is in flight to its Prospective (the
    immediate transition of KafkaRaftClient.maybeHandleElectionLoss): a small BFS sample need not
    hold one, so they are picked out of the whole smoke space and checked both ways."""
    from model.kraft.rules import PROSPECTIVE
    from model.kraft.state import VOTE_RESPONSE
    model, ctx = setup("smoke")
    lost = [s for s in C.sample(model, 5_000)
            if any(m.kind == VOTE_RESPONSE and not m.granted and s.nodes[m.dst].role == PROSPECTIVE
                   for m in s.network)]
    assert len(lost) >= 3
    rel = C.Relation(ctx)
    assert C.check_transitions(model, ctx, lost, rel).failures == []
    r = C.check_successors(model, ctx, lost, rel)
    assert r.failures == [] and r.states >= 3


def test_three_voters_with_faults_deep_states():
    """Random walks of the default configuration (3 voters, a fault, restarts, cut links):
    Fetch with records, truncation and elections appear only deep in the space."""
    model, ctx = setup("default")
    states = C.walk_sample(model, walks=2, depth=25, seed=7)
    rel = C.Relation(ctx)
    r = C.check_transitions(model, ctx, states, rel)
    assert r.failures == [] and r.transitions > 50
    r = C.check_successors(model, ctx, states[::6], rel)
    assert r.failures == [] and r.states >= 3


def test_a_drifted_transition_is_caught(smoke, monkeypatch):
    """Mutate one action of the encoding (ClientAppend appends a LeaderChange record instead of
    a Data record): the check must fail."""
    model, ctx, _, states = smoke
    real = kraft_next.append_entry

    def drifted(c, s, i, epoch, kind):
        return real(c, s, i, epoch, kraft_next.LEADER_CHANGE)

    monkeypatch.setattr(kraft_next, "client_append", _client_append_with(drifted))
    r = C.check_transitions(model, ctx, states, C.Relation(ctx))
    assert any("ClientAppend" in f for f in r.failures)


def _client_append_with(append):
    def client_append(c, s, i):
        import z3

        guard = z3.And(s[("role", i)] == kraft_next.LEADER, s[("leo", i)] < c.L)
        t = append(c, s, i, s[("epoch", i)], kraft_next.DATA)
        t = t.set({("end", i, i): t[("leo", i)]})
        return kraft_next.Step(guard, kraft_next.update_leader_hw(c, t, i))

    return client_append


@pytest.mark.slow
@pytest.mark.parametrize("preset,variant", [
    ("figure8", "commit-by-count"), ("restart", "vote-not-persisted"),
    ("disk-loss", "same-identity-after-disk-loss"), ("elections", "no-pre-vote"),
    ("elections", "vote-without-log-check"), ("default", "no-check-quorum"),
])
def test_variants_conform(preset, variant):
    model, ctx = setup(preset, variant)
    states = C.walk_sample(model, walks=6, depth=40, seed=1)
    rel = C.Relation(ctx)
    assert C.check_transitions(model, ctx, states, rel).failures == []
    assert C.check_successors(model, ctx, states[::4], rel).failures == []


def test_the_cross_check_prove_runs_on_an_edited_model_passes_on_this_one():
    """checker.proofs.conformance.cross_check, which `kcheck prove` runs when the model's sources
    are not those the encoding was last checked against: on the unedited model the two agree, on a
    sample that takes the elections, the replication and the faults."""
    r = C.cross_check("kraft", ctx_class=Ctx)
    assert r.passed, r.first
    assert r.states > 250 and r.transitions > 700
    assert {"ElectionTimeout", "SendVote", "HandleVoteRequest", "HandleVoteResponse", "ClientAppend", "SendFetch",
            "HandleFetchRequest", "HandleFetchResponse", "FetchTimeout", "CheckQuorumTimeout", "Restart",
            "DiskLoss"} <= r.kinds


def test_the_cross_check_names_where_a_drifted_encoding_parts(monkeypatch):
    """A drifted vote handler in the encoding (it never grants): the cross-check stops at a vote."""
    real = kraft_next.HANDLERS[A.HandleVoteRequest]

    def never_grants(c, s, src, i):
        st = real(c, s, src, i)
        return kraft_next.Step(z3.And(st.guard, z3.BoolVal(False)), st.post)

    monkeypatch.setitem(kraft_next.HANDLERS, A.HandleVoteRequest, never_grants)
    r = C.cross_check("kraft", ctx_class=Ctx)
    assert not r.passed and r.first.action.startswith("HandleVoteRequest(")
    assert r.first.how == "the model takes this step and the encoding forbids it" and r.preset == "smoke"


def test_a_lone_voters_initial_state_is_the_encodings_init():
    """KafkaRaftClient.initialize makes a lone voter Leader of epoch 1 before any step
    (quorum.initialize): the derived Init (derived.initial, what every proof takes) and the
    oracle's (kraft_next.init) each hold of the model's initial state and of no other, with one
    voter and with three, without the LeaderChange record's room too."""
    from checker.proofs import derived, kraft_state
    from checker.proofs.encodings import encoding_context
    from model.kraft.quorum import Context
    from model.kraft.variants import Protocol

    for variant, overrides in (("kafka-4.1", ["voters=1"]), ("no-pre-vote", ["voters=1"]),
                               ("kafka-4.1", ["voters=1", "max_log=0"]), ("kafka-4.1", ["voters=3"])):
        rc = load_config(model="kraft", preset="default", variant=variant, overrides=["symmetry=false", *overrides])
        ctx = encoding_context("kraft", rc.config, variant, Ctx)
        (s0,) = rc.build().init_states()
        sym = kraft_state.fresh(ctx.layout, "i_")
        derived_init = derived.initial(Context(ctx.p, Protocol.of(variant)), ctx.layout)
        same = kraft_state.matches(ctx.layout, sym, s0)
        for init in (kraft_next.init(ctx, sym), derived_init(ctx, sym)):
            for claim, want in ((z3.And(init, same), z3.sat), (z3.And(init, z3.Not(same)), z3.unsat)):
                solver = z3.Solver()
                solver.add(claim)
                assert solver.check() == want, (variant, overrides)
        if ctx.n != 1:
            continue  # the oracle's Init is then init_constraint on the state itself, with no init0_ state
        # the proof-only ghosts too: the two are one (both over the same formatted state, init0_)
        solver = z3.Solver()
        solver.add(z3.Xor(kraft_next.init(ctx, sym), derived_init(ctx, sym)))
        assert solver.check() == z3.unsat, (variant, overrides)
