"""The edits of spec/edits.toml (docs/prove.md, "Edited models"): each still applies to the model
as it is, `kcheck check` finds the violation recorded for it, and no `kcheck prove` says "proved"
of an edit that check refutes: the every-size proof refuses every edit, and a fixed-size proof
answers on the relation derived from the edited Python (kraft and replication)."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _bench():
    spec = importlib.util.spec_from_file_location("bench_prove_edits", ROOT / "bench" / "bench_prove_edits.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BENCH = _bench()
EDITS = BENCH.edits()
REFUTED = [e for e in EDITS if e["breaks"]]


def _kcheck(copy: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "checker.cli", *argv], cwd=copy, capture_output=True, text=True,
                          timeout=900)


def test_ten_edits_of_each_model_every_one_named_once():
    names = [e["name"] for e in EDITS]
    assert len(names) == len(set(names))
    for model in ("kraft", "replication"):
        assert len([e for e in EDITS if e["model"] == model]) >= 10, model
        assert len([e for e in REFUTED if e["model"] == model]) >= 4, model


@pytest.mark.parametrize("edit", EDITS, ids=[e["name"] for e in EDITS])
def test_each_edit_still_applies(edit, tmp_path):
    """An edit whose text the model no longer has would test nothing: it must follow the model."""
    copy = BENCH.edited_copy(edit, tmp_path / "kcheck")
    assert (copy / edit["file"]).read_text() != (ROOT / edit["file"]).read_text()


def test_an_edit_that_no_longer_applies_is_named(tmp_path):
    stale = dict(EDITS[0], old="this text is in no model file")
    with pytest.raises(ValueError, match=f"{stale['name']}: its old text is in {stale['file']} 0 times"):
        BENCH.edited_copy(stale, tmp_path / "kcheck")


def _size_any_refused(copy, edit) -> None:
    p = _kcheck(copy, "prove", "--model", edit["model"], "--size", "any", "--quiet", "--timeout", "20")
    assert p.returncode == 2 and p.stdout == "" and "nothing is proved" in p.stderr, p.stderr[-2000:]


KRAFT_REFUTED = [e for e in REFUTED if e["model"] == "kraft"]


@pytest.mark.slow  # each derives the edited relation at 3 voters until a step the encoding does not take
@pytest.mark.parametrize("edit", KRAFT_REFUTED, ids=[e["name"] for e in KRAFT_REFUTED])
def test_size_any_refuses_every_kraft_edit(edit, tmp_path):
    _size_any_refused(BENCH.edited_copy(edit, tmp_path / "kcheck"), edit)


@pytest.mark.parametrize("edit", REFUTED, ids=[e["name"] for e in REFUTED])
def test_check_refutes_and_no_prove_proves(edit, tmp_path):
    """`kcheck check` finds the recorded violation; `prove --size any` refuses (exit 2; kraft's in the
    slow tier, each after a search at 3 voters); an edit
    with a `prove_size` is answered there on the relation derived from the edited Python (for
    replication, of the property check breaks, on its `prove_preset`): a counterexample to
    induction, exit 1, never proved."""
    copy = BENCH.edited_copy(edit, tmp_path / "kcheck")
    p = _kcheck(copy, "check", "--model", edit["model"], "--preset", edit["preset"], "--no-liveness", "--quiet",
                "--json")
    out = json.loads(p.stdout)
    assert p.returncode == 1 and out["violation"]["invariant"] == edit["breaks"], p.stderr[-2000:]
    if edit["model"] == "replication":  # kraft: test_size_any_refuses_every_kraft_edit (slow), and test_prove.py
        _size_any_refused(copy, edit)
    if "prove_size" in edit:
        p = _kcheck(copy, "prove", "--model", edit["model"], "--size", str(edit["prove_size"]), *BENCH.prove_args(edit),
                    "--quiet", "--json")
        out = json.loads(p.stdout)
        assert p.returncode == 1 and out["result"] == "cti", p.stderr[-2000:]
        assert out["encoding_check"]["how"] == "derived"
        module = "derive_replication.py, under the invariant" if edit["model"] == "replication" else "derive.py"
        assert out["encoding_check"]["derived_by"] == f"checker/proofs/{module}"
