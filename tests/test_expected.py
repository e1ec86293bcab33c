"""Before a long `kcheck check`: how long it is expected to take and how to get a verdict in
seconds; in its progress lines, an estimate of the work left. The whole-run counts they rest on
(checker/search/expected.py) are those of the spec's and docs' tables, and are what a whole run finds."""
from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from checker import cli
from checker.cli import options
from checker.search.common import Progress
from checker.search.expected import RATE, WHOLE_RUN

ROOT = Path(__file__).resolve().parents[1]


def _whole_run(capsys: pytest.CaptureFixture[str], model: str, preset: str) -> int:
    code = cli.main(["check", "--model", model, "--preset", preset, "--quiet", "--no-liveness", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["result"] == "ok", report["result"]
    if model == "replication" and preset in ("smoke", "default"):  # spec/replication.md's row gives its depth too
        assert _spec_depth(preset) == report["depth"], (preset, report["depth"])
    return report["distinct_states"]


def _spec_depth(preset: str) -> int:
    return int(re.search(r"\bdepth (\d+)\b", _spec_row(preset)).group(1))  # type: ignore[union-attr]


def _spec_row(preset: str) -> str:
    spec = (ROOT / "spec" / "replication.md").read_text()
    table = spec.split("### Presets and measured figures", 1)[1].split("\n### ", 1)[0]
    return next(line for line in table.splitlines() if line.startswith(f"| `{preset}` |"))


SMALL = 1_000_000  # whole runs below this many states take seconds compiled: the fast tier runs them


@pytest.mark.parametrize("model,preset", [k for k in WHOLE_RUN if WHOLE_RUN[k] < SMALL])
def test_the_small_whole_runs_find_the_counts_said(capsys: pytest.CaptureFixture[str], model: str,
                                                   preset: str) -> None:
    assert _whole_run(capsys, model, preset) == WHOLE_RUN[(model, preset)]


@pytest.mark.slow
@pytest.mark.parametrize("model,preset", [k for k in WHOLE_RUN if WHOLE_RUN[k] >= SMALL])
def test_the_large_whole_runs_find_the_counts_said(capsys: pytest.CaptureFixture[str], model: str,
                                                   preset: str) -> None:
    assert _whole_run(capsys, model, preset) == WHOLE_RUN[(model, preset)]


def test_the_docs_give_the_same_figures() -> None:
    for (model, preset), states in WHOLE_RUN.items():
        if model == "replication":
            assert f"{states:,}" in _spec_row(preset), (preset, _spec_row(preset))
    # README and the quick start give the default's count (and README its depth) without a table
    default = WHOLE_RUN[("replication", "default")]
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert f"The default run explores {default:,} distinct states (depth {_spec_depth('default')})" in readme
    assert f"{default:,} states" in " ".join((ROOT / "docs" / "quickstart.md").read_text().split())
    assert _spec_depth("smoke") and _spec_depth("default")
    performance = (ROOT / "docs" / "performance.md").read_text()
    # the kraft default's row there was measured before the observer's INVALID_VOTER_KEY answer; the
    # count since is spec/variants.md's
    variants = (ROOT / "spec" / "variants.md").read_text()
    assert f"| kraft | `default` | ok | {WHOLE_RUN[('kraft', 'default')]:,} |" in variants
    assert f"`default` has {WHOLE_RUN[('kraft', 'default')]:,} states since" in " ".join(performance.split())
    assert f"between {RATE[0]:,} and {RATE[1]:,} states a second whatever the size" in " ".join(performance.split())


def test_a_long_run_says_before_it_starts_how_long_and_how_to_be_quick(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["check", "--workers", "1", "--timeout", "1", "--no-liveness", "--json"])
    err = capsys.readouterr().err
    assert code == 3
    first = err.splitlines()[0]
    assert first.startswith("kcheck: this run explores 5,430,858 states (a whole run of replication preset default)")
    assert re.search(r"about \d+ (s|min) to \d+ min", first) and first.endswith("kcheck check --preset smoke"), first


@pytest.mark.parametrize("argv", [
    ["--preset", "smoke"],  # seconds: nothing to announce
    ["--set", "brokers=4"],  # no measured size
    ["--variant", "truncate-to-hw"],  # another variant: another space
    ["--max-states", "5000"],  # capped
])
def test_nothing_is_announced_that_is_not_known_or_not_long(capsys: pytest.CaptureFixture[str],
                                                            argv: list[str]) -> None:
    cli.main(["check", *argv, "--workers", "1", "--timeout", "1", "--no-liveness", "--json"])
    assert "this run explores" not in capsys.readouterr().err


def test_the_progress_line_estimates_the_work_left_and_says_it_is_an_estimate() -> None:
    out = io.StringIO()
    options.progress_printer(out, 1_000_000)(Progress(250_000, 900_000, 20, 5_000, 50.0))
    assert out.getvalue().endswith(", 25% of 1,000,000 states, about 2 min left (estimate)\n"), out.getvalue()
    plain = io.StringIO()
    options.progress_printer(plain)(Progress(250_000, 900_000, 20, 5_000, 50.0))
    assert plain.getvalue().endswith("5,000 states/s, 50s\n")
