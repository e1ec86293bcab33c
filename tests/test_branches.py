"""checker/walks/branches.py: the ways of each decision a run takes are counted from line events."""
from __future__ import annotations

import importlib.util

from checker.walks import branches

SOURCE = '''
def classify(x):
    if x > 0:
        return "positive"
    elif x < 0:
        return "negative"
    while x:
        x = 0
    return "zero"


def inline(x):
    if x: return 1
    return 0
'''


def _load(tmp_path):
    path = tmp_path / "sample_decisions.py"
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location("sample_decisions", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return str(path), module


def test_each_way_of_each_decision_is_counted(tmp_path):
    path, module = _load(tmp_path)
    files = [branches.Decisions.of(path)]
    assert sorted(files[0].tests) == [3, 5, 7] and files[0].unmeasured == 1  # `if x: return 1` is not measured
    with branches.counting(files) as counts:
        for x in (1, 2, -1, 0):
            module.classify(x)
    rows = {line: (taken, not_taken) for _, line, _, taken, not_taken in branches.table(files, counts)}
    assert rows[3] == (2, 2)  # x > 0: 1 and 2 take it; -1 and 0 do not
    assert rows[5] == (1, 1)  # x < 0: -1 takes it; 0 does not
    assert rows[7] == (0, 1)  # while x with x == 0: never entered
    assert branches.table(files, counts)[0][2] == "x > 0"
