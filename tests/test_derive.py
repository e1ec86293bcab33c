"""checker/proofs/derive.py and derived.py: the relation derived from the model's Python equals
the hand-written oracle (tests/oracles/kraft_next.py), the history updates it answers on arrays abstract the Python
ones, a model edit shows up as a difference naming the action, and the induction on the derived
relation does not prove an edit that breaks leader completeness."""
from __future__ import annotations

import z3
import pytest

from checker.proofs import derive as D
from checker.proofs import derived
from checker.proofs.kraft_state import Layout, fresh, matches
from model.kraft import actions as A
from model.kraft import client, faults, quorum, rules
from model.kraft.params import CONFIG_KEYS, Params
from model.kraft.state import History, initial_state
from tests.oracles.kraft_next import Ctx as OracleCtx


@pytest.fixture(scope="module")
def ctxs():
    p = Params.from_config({**{k.name: k.default for k in CONFIG_KEYS}, "voters": 3})
    return D.contexts(p, cls=OracleCtx)


def test_cheap_actions_equal_the_hand_encoding(ctxs):
    """Faults and a timer: derived on the stand-ins (the network's slots, the budgets, the
    history's arrays) and equal to kraft_next on every state of the domain."""
    ctx, nctx = ctxs
    for a in [A.CutLink(0, 1), A.HealLink(1, 2), A.DropMessage("FetchResponse", 1, 0), A.CheckQuorumTimeout(0),
              A.SendBeginQuorumEpoch(0, 1)]:
        c = D.compare(ctx, nctx, a)
        assert c.verdict == "equal", (a, c.difference)
        assert c.derived.paths > 0 and c.derived.enabled_paths > 0


def test_a_model_edit_changes_the_derived_relation(ctxs, monkeypatch):
    """A cut that ignores the budget of all faults together (used < budget only): the derived
    CutLink no longer equals the hand encoding, and the check names the action and the guard."""
    ctx, nctx = ctxs
    monkeypatch.setattr(faults, "may_fault", lambda s, c, used, budget: used < budget)
    c = D.compare(ctx, nctx, A.CutLink(0, 1))
    assert c.verdict == "differs" and c.key == "guard", c.difference
    assert c.action == A.CutLink(0, 1)
    c = D.compare(ctx, nctx, A.HealLink(0, 1))
    assert c.verdict == "equal"


def _abstracts(layout: Layout, before: History, after: History, update) -> None:
    """`update` (stand-in history -> stand-in history) maps the abstraction of `before` to the
    abstraction of `after`: Z3 finds no state matching before whose image fails to match after."""
    pre = fresh(layout, "h_")
    s0 = initial_state(layout.n)._replace(history=before)
    image = update(D.symbolic_history(layout, pre))
    terms = {}
    for part in (image.elected, image.committed, image.leader_hws, image.fatal):
        terms.update(part.terms)
    post = pre.set(terms)
    solver = z3.Solver()
    solver.add(matches(layout, pre, s0), z3.Not(matches(layout, post, s0._replace(history=after))))
    assert solver.check() == z3.unsat


def test_history_updates_abstract_the_python_ones():
    layout = Layout(3, 3)
    h = History(((1, 0),), ((0, 1, 0, 1),), ((1, 1),), (), 0)
    log = ((1, 0), (1, 1), (2, 0))
    for hw, epoch in ((2, 1), (3, 2), (1, 2), (0, 2)):
        want = quorum.commit(h, log, hw, epoch)
        _abstracts(layout, h, want, lambda sh, hw=hw, epoch=epoch: D.sym_commit(sh, log, hw, epoch))
    want = h._replace(elected=quorum.elect(h, 2, 1))
    _abstracts(layout, h, want, lambda sh: sh._replace(elected=D.sym_elect(sh, 2, 1)))
    s = initial_state(3)._replace(history=h)
    want = client.fatal(s, 2, 1).history
    _abstracts(layout, h, want, lambda sh: D.sym_fatal(s._replace(history=sh), 2, 1).history)
    # a second leader of epoch 1, a different entry committed at offset 0: the flags
    pre = fresh(layout, "h_")
    sh = D.symbolic_history(layout, pre)
    el = D.sym_elect(sh, 1, 2).terms[("el_conflict",)]
    cmt = D.sym_commit(sh, ((2, 1),), 1, 2).committed.terms[("cmt_conflict",)]
    solver = z3.Solver()
    solver.add(matches(layout, pre, s))
    assert solver.check(z3.Not(el)) == z3.unsat and solver.check(z3.Not(cmt)) == z3.unsat


def test_an_hw_past_the_log_is_a_crash_path(ctxs):
    """quorum.commit reads log[off] below the HW: the derivation keeps the paths where Python
    would raise apart (ClientAppend from a leader whose followers' end offsets pass its log)."""
    ctx, nctx = ctxs
    pre = fresh(nctx.layout, "pre_")
    d = D.derive(ctx, nctx.layout, pre, A.ClientAppend(0), D.domain(nctx.layout, pre))
    assert d.crash_paths > 0 and d.crashes == ("IndexError",)
    solver = z3.Solver()
    solver.add(D.domain(nctx.layout, pre), d.crash)
    assert solver.check() == z3.sat
    m = solver.model()
    assert m.eval(pre[("role", 0)]).as_long() == 3


def _up_to_date_last_epoch_only(candidate_last_epoch, candidate_end_offset, local):
    return candidate_last_epoch >= local.epoch


@pytest.fixture(scope="module")
def prove_params():
    from checker.config import load_config

    rc = load_config(model="kraft", preset="default", variant="kafka-4.1", overrides=[])
    return Params.from_config({**dict(rc.config), "voters": 3})


@pytest.mark.slow  # deriving HandleVoteRequest: 1,264 paths, 2 to 3 minutes
def test_induction_on_the_derived_relation(prove_params):
    """HandleVoteRequest(1, 0) derived from the model as written preserves the default targets
    and their lemmas; the relation is the derived one (the context says so)."""
    a = A.HandleVoteRequest(1, 0)
    ctx = derived.context(prove_params, actions=[a])
    assert ctx.derived[a].step is not None and ctx.encoding.name == "kraft (derived)"
    o = derived.prove(ctx, ["leader_completeness"], timeout_s=120, only=[a])
    assert o.result == "proved", (o.reason, o.cti and o.cti.conjunct)


@pytest.mark.slow  # deriving HandleVoteRequest from the edited model: 2 to 3 minutes
def test_the_vote_edit_is_not_proved(prove_params, monkeypatch):
    """spec/proofs.md's example edit: is_log_up_to_date compares the last epochs only. The
    relation derived from the edited model is not proved: a counterexample to induction at the
    vote handler names leader completeness or one of its lemmas."""
    monkeypatch.setattr(rules, "is_log_up_to_date", _up_to_date_last_epoch_only)
    a = A.HandleVoteRequest(1, 0)
    ctx = derived.context(prove_params, actions=[a])
    o = derived.prove(ctx, ["leader_completeness"], timeout_s=120, only=[a])
    assert o.result == "cti", o.reason
    lemmas = derived.induction.conjuncts_for(["leader_completeness"])
    assert o.cti.action == a and o.cti.conjunct in lemmas


def test_an_action_not_derived_is_refused(prove_params):
    a = A.HandleVoteRequest(1, 0)
    ctx = derived.context(prove_params, actions=[A.CutLink(0, 1)])
    o = derived.prove(ctx, ["election_safety"], only=[a])
    assert o.result == "unknown" and "not derived" in o.reason and "HandleVoteRequest" in o.reason


def test_bench_derive_prints_each_action():
    """bench/bench_derive.py, as spec/proofs.md runs it, on two cheap kinds."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, str(root / "bench" / "bench_derive.py"), "--kinds", "CutLink", "HealLink"],
                         cwd=root, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "CutLink(a=0, b=1)" in out.stdout and "instances: 6 equal" in out.stdout


@pytest.mark.parametrize("model,kinds,count", [("replication", ["ShrinkIsr", "UnfenceBroker"], 4),
                                               ("kraft", ["CheckQuorumTimeout"], 1)])
def test_bench_derive_speed_prints_each_action_and_equal_relations(model, kinds, count):
    """bench/bench_derive_speed.py, as spec/proofs.md runs it, at 2 nodes on cheap kinds: each
    instance's checks without and with the path's model, the relations equal, and fewer checks
    with it where a controller rule runs."""
    import re
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, str(root / "bench" / "bench_derive_speed.py"), "--model", model, "--size", "2",
                          "--kinds", *kinds], cwd=root, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert f"{count} of {count} relations equal" in out.stdout, out.stdout
    if model == "replication":
        row = next(line for line in out.stdout.splitlines() if line.startswith("UnfenceBroker(broker=0)"))
        _, _, checks_off, checks_on = map(int, re.findall(r"\b\d+\b", row.split(")", 1)[1])[:4])
        assert checks_on * 2 < checks_off, row


@pytest.fixture(scope="module")
def two_voters():
    from checker.config import load_config

    rc = load_config(model="kraft", preset="smoke", variant="kafka-4.1", overrides=[])
    return Params.from_config({**dict(rc.config), "voters": 2})


def _same_relation(a, b) -> bool:
    """Z3: the two derived steps have the same guard and, where enabled, the same successor."""
    diffs = [z3.Xor(a.guard, b.guard)] + [z3.And(a.guard, a.post[k] != b.post[k]) for k in a.post.keys()
                                          if not a.post[k].eq(b.post[k])]
    s = z3.Solver()
    return s.check(z3.Or(diffs)) == z3.unsat


def test_two_kinds_of_one_node_keep_their_own_relation(two_voters):
    """FetchTimeout(0) and ElectionTimeout(0) are equal as tuples: the derived context keeps each
    kind's own relation (it once handed one's to the other)."""
    ctx = derived.context(two_voters, lazy=True)
    pre = fresh(ctx.layout, derived.PREFIX)
    e = ctx.encoding.step(ctx, pre, A.ElectionTimeout(0))
    f = ctx.encoding.step(ctx, pre, A.FetchTimeout(0))
    assert ctx.derived[A.ElectionTimeout(0)].action == A.ElectionTimeout(0)
    assert ctx.derived[A.FetchTimeout(0)].action == A.FetchTimeout(0)
    assert not _same_relation(e, f)


@pytest.mark.parametrize("action", [A.SendFetch(0), A.HandleFetchRequest(1, 0),
                                    pytest.param(A.HandleVoteRequest(1, 0), marks=pytest.mark.slow)])  # 1-2 minutes
def test_merging_paths_changes_no_relation(two_voters, monkeypatch, action):
    """Merging a model function's paths at its return (derive.merged_state), explored under the
    path or memoised on its arguments' terms, gives the relation the plain path-by-path
    derivation gives, with fewer paths."""
    ctx, nctx = D.contexts(two_voters, cls=OracleCtx)
    pre = fresh(nctx.layout, "m_")
    dom = D.domain(nctx.layout, pre)
    out = {}
    for merge, memo in ((False, False), (True, False), (True, True)):
        monkeypatch.setattr(D, "MERGE", merge)
        monkeypatch.setattr(D, "MEMO", memo)
        out[merge, memo] = D.derive(ctx, nctx.layout, pre, action, dom)
    plain = out[False, False]
    for key in ((True, False), (True, True)):
        d = out[key]
        assert d.step is not None and _same_relation(d.step, plain.step), key
        assert z3.Solver().check(z3.Xor(d.crash, plain.crash)) == z3.unsat
        assert d.paths <= plain.paths
    assert out[True, True].paths < plain.paths or action == A.SendFetch(0)


def test_prove_on_the_derived_relation_from_the_command_line():
    """kcheck prove --model kraft (induction) proves on the relation derived from the model, with
    --derive or without, and says so: encoding_check.how "derived", every representative instance
    derived; --derive has no meaning with --size any."""
    import json
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "checker.cli", "prove", "--model", "kraft", "--preset", "smoke",
                          "--size", "1", "--derive", "--json", "--quiet"], capture_output=True, text=True, timeout=600)
    report = json.loads(out.stdout)
    assert out.returncode == 0 and report["result"] == "proved", out.stderr[-2000:]
    enc = report["encoding_check"]
    assert enc["how"] == "derived" and enc["actions"] >= 5 and enc["paths"] > enc["actions"]
    out = subprocess.run([sys.executable, "-m", "checker.cli", "prove", "--model", "kraft", "--preset", "smoke",
                          "--size", "1", "--json", "--quiet"], capture_output=True, text=True, timeout=600)
    assert json.loads(out.stdout)["encoding_check"]["how"] == "derived"  # kraft's default
    out = subprocess.run([sys.executable, "-m", "checker.cli", "prove", "--model", "kraft", "--size", "any",
                          "--derive"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 2 and out.stderr.startswith("kcheck: error: --derive: ")


def _explore(fn):
    """fn(x, y) on stand-ins for two Int variables: the explorer and its paths' decisions."""
    from checker.proofs.symbolic import Explorer, SInt

    x, y = z3.Ints("x y")
    ex = Explorer(z3.And(x >= 0, x <= 9, y >= 0, y <= 9), 10)
    return x, y, ex.decisions(lambda: fn(SInt(x, ex), SInt(y, ex)))


def test_the_decision_tree_folds_each_path_value_as_the_flat_cases_do():
    """symbolic.derived_step: the guard, a changed variable and the crash condition folded over
    the decision tree equal, on the domain, the one-case-per-path values; a variable no enabled
    path changes keeps its pre-state value."""
    from checker.proofs.symbolic import _z, derived_step
    from checker.proofs.term import Sym

    def fn(x, y):
        if x > 5:
            if y == x:
                return ("crash", "IndexError")
            return ("ok", {"a": _z(x + 1)}) if y < 3 else None
        if y > 7:
            return ("ok", {"a": _z(y)})
        return ("ok", {"a": _z(x)})

    x, y, paths = _explore(fn)
    assert len(paths) == 5 and max(len(d) for d, _ in paths) >= 2
    pre = Sym({"a": z3.Int("a0"), "b": z3.Int("b0")})
    dom = z3.And(x >= 0, x <= 9, y >= 0, y <= 9)
    guard, post, crash = derived_step(paths, pre, dom)
    assert set(post) == {"a"}
    want_guard = z3.Or(z3.And(x > 5, y != x, y < 3), x <= 5)
    want_a = z3.If(x > 5, x + 1, z3.If(y > 7, y, x))
    s = z3.Solver()
    s.add(dom, z3.Or(guard != want_guard, z3.And(want_guard, post["a"] != want_a), crash != z3.And(x > 5, y == x)))
    assert s.check() == z3.unsat


def test_paths_that_are_no_tree_are_refused():
    """Siblings whose decisions are not a term and its negation, or a path ending where another
    goes on, are Unsupported: the action is not derived rather than guessed."""
    from checker.proofs.symbolic import DecisionTree, Unsupported

    x = z3.Int("x")
    with pytest.raises(Unsupported):
        DecisionTree([([x > 1], None), ([x > 2], None)])
    with pytest.raises(Unsupported):
        DecisionTree([([x > 1], None), ([x > 1, x > 2], None)])
    assert DecisionTree([([x > 1], ("ok", {})), ([z3.Not(x > 1)], None)]).cond.eq(x > 1)


def test_the_explorer_finds_the_feasible_paths_with_at_most_one_check_per_decision():
    """Explorer.decisions: the paths are exactly the branch sequences some state of the domain
    takes (run concretely on every state), and each new decision costs at most one solver check:
    the side the path's model satisfies is feasible without one (without the model: 24 checks
    here, against 14)."""
    def fn(x, y):
        out = []
        for k in (2, 4, 6, 8):  # a chain: after x > k fails, every later x > k' is infeasible
            out.append(bool(x > k))
            if not out[-1]:
                break
        out.append(bool(y > x))
        if out[-1]:
            out.append(bool(y + x > 12))
        return tuple(out)

    x, y, paths = _explore(fn)
    concrete = {fn(a, b) for a in range(10) for b in range(10)}
    assert sorted(r for _, r in paths) == sorted(concrete)  # every feasible path, once
    from checker.proofs.symbolic import Explorer, SInt

    ex = Explorer(z3.And(x >= 0, x <= 9, y >= 0, y <= 9), 10)
    found = ex.decisions(lambda: fn(SInt(x, ex), SInt(y, ex)))
    # the points where a decision was made: each path's decision prefixes, shared ones once
    points = {tuple(str(t) for t in d[:k]) for d, _ in found for k in range(len(d))}
    # the first decision has no model of the path yet: it may take two
    assert len(points) >= 5 and ex.checks <= len(points) + 1, (ex.checks, len(points))

def test_a_function_merged_by_value_forks_once_per_result():
    """merged_options(by_value=True): one case per distinct concrete result, its condition the
    union of the paths that give it (on the domain); by shape, the ints merge into one If term."""
    from checker.proofs.symbolic import Explorer, SInt, merged_options

    x, y = z3.Ints("x y")
    dom = z3.And(x >= 0, x <= 9, y >= 0, y <= 9)

    def fn(a, b):  # the first of three candidates that passes, as an election picks a replica
        for r, ok in ((0, a > 6), (1, b > 6), (2, a + b > 6)):
            if ok:
                return ("ok", r)
        return ("ok", -1)

    ex = Explorer(dom, 10)
    paths = ex.decisions(lambda: fn(SInt(x, ex), SInt(y, ex)))
    crash, options = merged_options(ex, paths, by_value=True)
    assert not crash and sorted(v for _, v in options) == [-1, 0, 1, 2]
    want = {0: x > 6, 1: z3.And(x <= 6, y > 6), 2: z3.And(x <= 6, y <= 6, x + y > 6),
            -1: z3.And(x <= 6, y <= 6, x + y <= 6)}
    for cond, v in options:
        s = z3.Solver()
        s.add(dom, cond != want[v])
        assert s.check() == z3.unsat, v
    _, by_shape = merged_options(ex, paths)
    assert len(by_shape) == 1 and isinstance(by_shape[0][1], SInt)
