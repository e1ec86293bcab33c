"""The every-size KRaft encoding against the relation derived from the model's Python, by Z3
(checker/proofs/param_inclusion.py): what `kcheck prove --size any` rests on."""
from __future__ import annotations

import z3

from checker.config import load_config
from checker.proofs import kraft_param as K
from checker.proofs import param_inclusion as PI
from checker.proofs.kraft_ctx import Ctx
from checker.proofs.kraft_param_inv import conjuncts
from checker.proofs.param_conformance import world
from model.kraft import actions as A
from model.kraft.params import Params
from model.kraft.quorum import Context
from model.kraft.variants import Protocol
from tests.terms import symbols

VARIANT = "kafka-4.1"


def _size(n: int, acts: list, names: list[str] | None = None) -> PI.SizeReport:
    rc = load_config(model="kraft", preset="default")
    p = Params.from_config({**dict(rc.config), "voters": n})
    c = K.PCtx(Protocol.of(VARIANT), stale_requests=bool(rc.config["stale_requests"]))
    names = conjuncts(c, ["election_safety"]) if names is None else names
    return PI.check_size(Context(p, Protocol.of(VARIANT)), Ctx.of(p, VARIANT).layout, c, acts, names, 60_000)


def test_the_abstraction_reads_every_field_the_encoding_keeps_but_its_ghosts():
    """A field of kraft_param the abstraction left out would let the encoding change it freely:
    an effect of the model on it could never show as a difference."""
    layout = Ctx.of(Params.from_config({**dict(load_config(model="kraft", preset="default").config),
                                        "voters": 3}), VARIANT).layout
    u, _, _ = world(3)
    p, _ = K.fresh("cover_")
    seen = symbols(PI.abstraction(layout, PI.fresh(layout, "c_"), p, u))
    missing = [k for k in K.SIGNATURE if k not in PI.GHOSTS and f"cover_{k}" not in seen]
    assert missing == []
    assert "cover_fresp.rlog" in seen and "cover_estart" in seen  # the ghosts a response's records and a HW read


def test_steps_of_the_model_are_steps_of_the_encoding_at_three_voters():
    """A vote request answered, a fetch sent and a message dropped: each derived instance is
    included, the vote only under election safety's lemmas (a state with a log past its epoch is
    no state of the model)."""
    rep = _size(3, [A.SendFetch(0), A.HandleVoteRequest(0, 1), A.DropMessage("FetchRequest", 0, 1)])
    assert [r.verdict for r in rep.results] == ["included"] * 3, [r.detail for r in rep.results]
    assert all(r.paths > 1 for r in rep.results)  # each explored more than one path


def test_an_encoding_whose_follower_stays_a_follower_is_not_included(monkeypatch):
    """The encoding's FetchTimeout leaves the role as it was: the model's, which makes the
    Follower Prospective (pre-vote), is a step the encoding cannot take, whatever the invariant."""
    real = K.become_prospective

    def stuck(s, c, st, i):
        return K.set_node(real(s, c, st, i), i, role=s.role(i))

    monkeypatch.setattr(K, "become_prospective", stuck)
    rep = _size(3, [A.FetchTimeout(0)])
    assert rep.failure is not None and rep.failure.verdict == "not included"
    assert "role_0=4" in rep.failure.detail  # a Follower


def test_an_assumed_invariant_is_one_the_proof_proves():
    """Only the proof's own conjuncts may be assumed: with none, a vote response the model
    handles from a state no run reaches (two leaders of one epoch) is not included."""
    rep = _size(3, [A.HandleVoteResponse(0, 1)], names=[])
    assert rep.failure is not None and rep.failure.verdict == "not included"
    assert PI.tiers(K.PCtx(Protocol.of(VARIANT)), []) == [("", [])]


def test_the_model_starts_where_the_encoding_does(monkeypatch):
    rc = load_config(model="kraft", preset="default")
    assert PI.init_included(rc.definition, dict(rc.config), VARIANT, 3) is None
    real = K.init
    monkeypatch.setattr(K, "init", lambda s: z3.And(real(s), z3.ForAll([z3.Const("n", K.Node)],
                                                                         s.epoch(z3.Const("n", K.Node)) == 1)))
    assert "not one of the encoding's" in PI.init_included(rc.definition, dict(rc.config), VARIANT, 3)


def test_grounding_writes_out_node_quantifiers_and_keeps_the_others():
    u, qs, _ = world(3)
    x, e = z3.Const("x", K.Node), z3.Int("e")
    f = z3.Function("f", K.Node, z3.IntSort(), z3.BoolSort())
    g = PI.ground(z3.ForAll([x, e], f(x, e)), {K.Node: u, K.Quorum: qs})
    assert z3.is_quantifier(g) and g.num_vars() == 1 and g.var_sort(0) == z3.IntSort()
    assert str(g).count("f(u") == 3


def test_well_typed_holds_of_the_states_runs_reach_and_excludes_a_non_voter_in_an_election():
    """well_typed is assumed of every pre-state: a reachable state it excluded would hide a step.
    At 4 voters, on breadth-first and deep states, it holds; a Candidate whose election records a
    voter as NOT_VOTER (3 voters' majority, 2, instead of 4 voters', 3) is excluded."""
    from checker.proofs import conformance
    from checker.proofs.kraft_state import matches
    from model.kraft.context import set_node
    from model.kraft.rules import CANDIDATE, NOT_VOTER

    rc = load_config(model="kraft", preset="default")
    config = {**dict(rc.config), "voters": 4, "symmetry": False}
    model = rc.definition.build(config, VARIANT)
    layout = Ctx.of(Params.from_config(config), VARIANT).layout
    states = conformance.sample(model, 300) + conformance.walk_sample(model, walks=20, depth=30, seed=5)
    elections = 0

    def typed(s) -> bool:
        solver = z3.Solver()
        sym = PI.fresh(layout, "wt_")
        solver.add(matches(layout, sym, s), PI.well_typed(layout, sym))
        return solver.check() == z3.sat

    for s in states:
        assert typed(s), s
        for i, node in enumerate(s.nodes):
            if node.role == CANDIDATE:
                elections += 1
                j = 3 if i != 3 else 0  # another voter
                votes = node.votes[:j] + (NOT_VOTER,) + node.votes[j + 1:]
                assert not typed(set_node(s, i, node._replace(votes=votes)))
    assert elections > 0


def test_the_ghost_agree_is_related_to_the_model_and_a_wrong_witness_is_caught(monkeypatch):
    """HandleFetchRequest's `agree` is the bound the model's truncation keeps (`agreement`): the
    step is included and keeps the relation, assuming AGREE_LEMMAS beside election safety's
    lemmas. With `agree` the follower's whole log whatever the answer (a choice the encoding's own
    guard allows), a diverging answer breaks the relation: the instance is not included."""
    from checker.proofs.kraft_param_inv import INVARIANTS

    names = conjuncts(K.PCtx(Protocol.of(VARIANT), stale_requests=True), list(INVARIANTS))
    (r,) = _size(3, [A.HandleFetchRequest(0, 1)], names).results
    assert (r.verdict, r.agree, r.assumed) == ("included", "kept", PI.AGREE), r.detail
    monkeypatch.setitem(PI.WITNESSES, "HandleFetchRequest",
                        lambda layout, pre, post, ids: {"agree": pre[("leo", ids[0])]})
    (r,) = _size(3, [A.HandleFetchRequest(0, 1)], names).results
    assert r.verdict == "not included" and r.agree == "" and "the ghost agree's relation" in r.detail
