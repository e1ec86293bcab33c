"""The kraft preset `voter-checks` is walked by `kcheck conform` and makes its walks offer AddVoter and
RemoveVoter against each of the leader's checks (docs/conform.md, "Which model branches the walks
reach"); bench/bench_branch_coverage.py counts the ways taken."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# decisions of rules.validate_add_voter and rules.validate_remove_voter, by their test's source
ADD_DUPLICATE = "voters >> new_voter & 1"
ADD_CAUGHT_UP = "not caught_up"
REMOVE_NOT_FOUND = "not voters >> voter & 1 or voters == 1 << voter"


def _ways(*presets: str, walks: int = 15, seed: int = 1) -> dict[tuple[str, bool], int]:
    """(test source, taken) -> times, over rules.py's reached ways, for walks of depth 30 of these presets."""
    args = [sys.executable, os.path.join(ROOT, "bench", "bench_branch_coverage.py"), "--walks", str(walks),
            "--depth", "30", "--seed", str(seed), "--rarest", "1000"]
    for p in presets:
        args += ["--preset", p]
    out = json.loads(subprocess.run(args, capture_output=True, text=True, timeout=300, check=True).stdout)
    assert out["presets"] == list(presets)
    found: dict[tuple[str, bool], int] = {}
    for way in out["draws"]["plain"]["files"]["model/kraft/rules.py"]["rarest"]:
        m = re.fullmatch(r"line \d+ (taken|not taken) x(\d+): (.*)", way)
        assert m, way
        key = (m.group(3), m.group(1) == "taken")
        found[key] = found.get(key, 0) + int(m.group(2))
    return found


def test_voter_checks_is_a_preset_conform_walks() -> None:
    from checker.conform.kraft import PRESETS
    from model.kraft.params import PRESETS as ALL

    assert "voter-checks" in ALL and "voter-checks" in PRESETS
    assert ALL["voter-checks"]["voters"] == 2 and ALL["voter-checks"]["spares"] == 1  # not one voter: see the docs


def test_voter_checks_offers_each_voter_change_check() -> None:
    """One conform budget's share (15 walks of 30, seed 1) of `voter-checks` alone: AddVoter of a voter
    (DUPLICATE_VOTER) and of the spare not caught up, RemoveVoter of a non-voter (VOTER_NOT_FOUND) and
    of a voter, each several times (measured 2026-12-04: 5, 5, 29 and 4)."""
    ways = _ways("voter-checks")
    assert ways.get((ADD_DUPLICATE, True), 0) >= 3, ways
    assert ways.get((ADD_DUPLICATE, False), 0) >= 3, ways
    assert ways.get((ADD_CAUGHT_UP, True), 0) >= 3, ways
    assert ways.get((REMOVE_NOT_FOUND, True), 0) >= 10, ways
    assert ways.get((REMOVE_NOT_FOUND, False), 0) >= 2, ways
