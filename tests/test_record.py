"""`python -m checker.proofs.record --jobs N`: the inclusion's instances checked in N processes
give the record the same results, in the same order, as one process."""
from __future__ import annotations

import pytest

from checker.config import load_config
from checker.proofs import record

KINDS = ("SendFetch", "ShrinkIsr", "Crash", "LossyCrash")  # broker actions and faults: seconds each at 2 brokers


def _verdicts(reports: list) -> list[tuple]:
    return [(rep.n, repr(r.action), r.verdict, r.paths, r.assumed) for rep in reports for r in rep.results]


def test_jobs_check_the_same_instances_in_the_same_order_as_one_process() -> None:
    config = {**load_config(model="replication", preset="default").config, "min_insync_replicas": 1}
    seen: list = []
    one = record.inclusion_reports("replication", config, (2,), 1, lambda r: None, KINDS)
    two = record.inclusion_reports("replication", config, (2,), 2, seen.append, KINDS)
    assert len(one[0].results) == len(record._instances("replication", config, 2, KINDS)) >= 6
    assert _verdicts(two) == _verdicts(one) and all(r.verdict == "included" for r in one[0].results)
    assert sorted(map(repr, (r.action for r in seen))) == sorted(repr(r.action) for r in one[0].results)
    assert two[0].as_json()["brokers"] == 2 and two[0].as_json()["instances"] == len(one[0].results)


def test_jobs_below_one_are_refused_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        record.main(["--jobs", "0"])
    assert e.value.code == 2 and "--jobs must be at least 1, not 0" in capsys.readouterr().err


def test_keep_appends_each_result_and_a_second_run_checks_only_the_rest(tmp_path, monkeypatch) -> None:
    config = {**load_config(model="replication", preset="default").config, "min_insync_replicas": 1}
    keep = tmp_path / "kept.jsonl"
    first = record.inclusion_reports("replication", config, (2,), 1, lambda r: None, KINDS, keep=keep)
    lines = keep.read_text().splitlines()
    assert len(lines) == len(first[0].results) >= 6
    # a run stopped part way: the last line cut short, one instance's line lost
    keep.write_text("\n".join(lines[:2] + lines[3:-1]) + "\n" + lines[-1][:30])
    real, checked = record._check_instances, []

    def counting(model, config, n, indices, progress=None, kinds=None, acts=None, timeout_ms=None):  # noqa: ANN001, ANN202
        checked.extend(indices)
        return real(model, config, n, indices, progress, kinds, acts, timeout_ms)

    monkeypatch.setattr(record, "_check_instances", counting)
    seen: list = []
    again = record.inclusion_reports("replication", config, (2,), 1, seen.append, KINDS, keep=keep)
    assert checked == [2, len(lines) - 1]
    assert _verdicts(again) == _verdicts(first) and len(seen) == len(lines)
    # results kept for other sources are not taken
    keep.write_text("\n".join(line.replace('"sources": "', '"sources": "x') for line in lines) + "\n")
    checked.clear()
    record.inclusion_reports("replication", config, (2,), 1, lambda r: None, KINDS, keep=keep)
    assert checked == list(range(len(lines)))


def test_voters_other_than_the_inclusion_sizes_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        record.main(["--voters", "5"])
    assert e.value.code == 2 and "--voters must be 3 or 3 4, not 5" in capsys.readouterr().err


def test_a_record_at_three_voters_is_remade_when_four_are_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """_record_inclusion: a record at 3 voters stands for --voters 3 and is remade (at 3 and 4)
    when 3 and 4 are asked; a record at 3 and 4 stands for both."""
    from checker.proofs import param_inclusion as PI

    asked: list = []
    monkeypatch.setattr(record, "inclusion_reports", lambda model, config, sizes, *a, **k: asked.append(sizes) or [])
    monkeypatch.setattr(PI, "record_entry", lambda *a: {"sizes": [{"voters": n} for n in asked[-1]]})
    monkeypatch.setattr(PI, "describe", lambda *a: "")
    for recorded, voters, remade in (((3,), (3,), False), ((3,), None, True), ((3, 4), None, False),
                                     ((3, 4), (3,), False)):
        monkeypatch.setattr(PI, "recorded", lambda *a, r=recorded: {"sizes": [{"voters": n} for n in r]})
        asked.clear()
        table: dict = {}
        assert record._record_inclusion(table, lambda text: None, voters=voters)
        assert asked == ([tuple(voters or PI.SIZES)] if remade else []), (recorded, voters)
        assert bool(table) == remade


def test_a_timeout_that_is_not_positive_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        record.main(["--timeout", "0"])
    assert e.value.code == 2 and "--timeout must be positive, not 0" in capsys.readouterr().err
