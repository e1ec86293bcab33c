"""`kcheck prove --plugin FILE`: a kraft plugin's variant proved on the relation derived with the
change in force (its replaced decisions, its `next_state`), what is refused, and the check that
the hand-written Init is the model's start. docs/change.md's examples run in
tests/test_change_doc.py from an installed kcheck."""
from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest
import z3

from checker import plugin
from checker.cli.commands import main
from checker.proofs import derive as D
from checker.proofs.kraft_state import fresh
from model.kraft import actions as A
from model.kraft.params import CONFIG_KEYS, Params

EPOCH_ONLY = '''
from model.extension import Change
from model.interface import Variant

MODEL = "kraft"


def epoch_only(candidate_last_epoch, candidate_end_offset, local):
    return candidate_last_epoch >= local.epoch


VARIANTS = [Change(Variant("epoch-only-vote", "a vote compares the last epochs only"),
                   replace={"model.kraft.rules:is_log_up_to_date": epoch_only})]
'''

ODD_START = '''
from model.extension import Change
from model.interface import Variant
from model.kraft import quorum

MODEL = "kraft"


def initialize(s, c):
    return quorum.become_prospective(s, c, 0)


VARIANTS = [Change(Variant("odd-start", "node 0 starts Prospective"),
                   replace={"model.kraft.quorum:initialize": initialize})]
'''

HW_QUORUM = '''
from model.extension import Change
from model.interface import Variant

MODEL = "replication"


def hw(**kw):
    return kw["hw"]


VARIANTS = [Change(Variant("frozen-hw", "the HW never moves"), replace={"model.replication.partition:leader_hw": hw})]
'''


def _run(tmp_path: Path, source: str, *argv: str) -> tuple[int, str, str]:
    path = tmp_path / "change.py"
    path.write_text(source)
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(["prove", "--plugin", str(path), *argv, "--quiet"])
    finally:
        plugin.activate([])
    return rc, out.getvalue(), err.getvalue()


def test_a_replaced_decision_is_proved_as_changed(tmp_path):
    """The unchanged model proves at size 2; with the vote's log check cut to the epoch the
    derived vote handler breaks vote_snapshot (had the change not been in force while deriving,
    this would be a proof)."""
    rc, out, err = _run(tmp_path, EPOCH_ONLY, "--variant", "epoch-only-vote", "--size", "2", "--json")
    report = json.loads(out)
    assert rc == 1 and report["result"] == "cti", err
    assert report["cti"]["conjunct"] == "vote_snapshot" and report["cti"]["action"].startswith("HandleVoteRequest(")
    assert report["encoding_check"]["how"] == "derived"
    assert [Path(p["file"]).name for p in report["plugins"]] == ["change.py"]


HALF_WINS = '''
from model.extension import Change
from model.interface import Variant
from model.kraft.rules import GRANTED, NOT_VOTER

MODEL = "kraft"


def half(votes):
    return votes.count(GRANTED) >= (len(votes) - votes.count(NOT_VOTER)) // 2


VARIANTS = [Change(Variant("half-wins", "half the voters win an election"),
                   replace={"model.kraft.rules:is_vote_granted": half})]
'''


def test_a_plugin_is_model_checked_by_bmc_on_its_derived_relation(tmp_path):
    """Kraft's BMC unrolls the relation derived with the change in force: half the voters winning
    elects both voters of two in one epoch, a two-step trace the plugin's model replays; without
    the change the same bound holds."""
    rc, out, err = _run(tmp_path, HALF_WINS, "--variant", "half-wins", "--preset", "smoke", "--size", "2",
                        "--bmc", "2", "--json")
    report = json.loads(out)
    assert rc == 1 and report["result"] == "violation", err
    assert report["violation"]["invariant"] == "election_safety" and len(report["violation"]["trace"]) == 3
    assert report["encoding_check"]["how"] == "derived"
    assert main(["prove", "--model", "kraft", "--preset", "smoke", "--size", "2", "--bmc", "2", "--quiet"]) == 0


RAISES = '''
from model.extension import Change
from model.interface import Variant
from model.kraft.rules import GRANTED, NOT_VOTER

MODEL = "kraft"


def granted(votes):
    if votes.count(GRANTED) == 2:
        raise AssertionError("two votes")
    return votes.count(GRANTED) >= (len(votes) - votes.count(NOT_VOTER)) // 2 + 1


VARIANTS = [Change(Variant("raises-on-two-votes", "asserts when two votes are granted"),
                   replace={"model.kraft.rules:is_vote_granted": granted})]
'''


def test_a_bmc_that_reaches_a_raise_is_unknown_not_ok(tmp_path):
    """The derived relation says nothing of a step where the model raises: BMC looks for one at
    each depth and names it (the third step, the first vote response counted), exit 3, not ok."""
    rc, out, err = _run(tmp_path, RAISES, "--variant", "raises-on-two-votes", "--preset", "smoke", "--size", "2",
                        "--bmc", "4", "--json")
    report = json.loads(out)
    assert rc == 3 and report["result"] == "unknown" and report["depth_checked"] == 2, err
    # which voter stands is Z3's choice: the two are symmetric
    assert re.match(r"the model raises in HandleVoteResponse\(src=(\d), dst=(?!\1)\d\) after 2 step\(s\) "
                    r"\(ElectionTimeout\(node=\d\), HandleVoteRequest\(", report["reason"]), report["reason"]


def _kraft_timeout():
    p = Params.from_config({**{k.name: k.default for k in CONFIG_KEYS}, "voters": 2})
    return D, D.contexts(p), fresh, A.ElectionTimeout(0)


def _replication_fetch():
    from checker.proofs import derive_replication as DR
    from checker.proofs.replication_state import fresh as fresh_replication
    from model.replication import actions as RA

    return DR, DR.contexts(DR.default_params()), fresh_replication, RA.SendFetch(1)


@pytest.mark.parametrize("case", [_kraft_timeout, _replication_fetch], ids=["kraft", "replication"])
def test_a_changed_step_is_what_is_derived(case):
    """A plugin's next_state runs on the stand-in state (derive.py, derive_replication.py): a step
    that never times out (kraft) or never sends a Fetch (replication) derives an action enabled
    nowhere; the identity step derives the model's own guard."""
    derive, (ctx, nctx), fresh_state, action = case()
    pre = fresh_state(nctx.layout, "s_")
    dom = derive.domain(nctx.layout, pre)
    own = derive.derive(ctx, nctx.layout, pre, action, dom)
    same = derive.derive(ctx, nctx.layout, pre, action, dom, step=lambda s, a, base: base(s, a))
    never = derive.derive(ctx, nctx.layout, pre, action, dom, step=lambda s, a, base: None)
    assert own.enabled_paths > 0 and same.enabled_paths == own.enabled_paths and never.enabled_paths == 0
    solver = z3.Solver()
    solver.add(own.step.guard != same.step.guard)
    assert solver.check() == z3.unsat


@pytest.mark.parametrize("source,argv,says", [
    (HW_QUORUM, ["--variant", "frozen-hw", "--size", "any"], "every-size encoding is written by hand"),
    (HW_QUORUM, ["--variant", "frozen-hw", "--size", "2", "--bmc", "2"], "bounded model checking"),
    (EPOCH_ONLY, ["--variant", "epoch-only-vote", "--size", "any"], "every-size encoding is written by hand"),
])
def test_what_is_refused(tmp_path, source, argv, says):
    rc, out, err = _run(tmp_path, source, *argv)
    assert rc == 2 and says in err and "Traceback" not in err and out == "", err


def test_a_changed_start_is_proved_from_the_changed_start(tmp_path):
    """A plugin that replaces quorum.initialize (node 0 starts Prospective): the proof's Init is
    derived with the plugin's function in force, so Z3 finds it is the variant's initial state
    (else prove refuses, exit 2) and the proof is answered. An Init made without the plugin's
    decisions, the model's own start, would be refused here."""
    rc, out, err = _run(tmp_path, ODD_START, "--variant", "odd-start", "--size", "2")
    assert rc == 0 and "result:     proved" in out and "Traceback" not in err, err
