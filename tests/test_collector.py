"""The searches run with the cyclic garbage collector off (checker.search.common.collector_paused):
it is off while a search runs, on again after it (also after an error), and a search leaves no
cycles behind, which is what makes turning it off safe."""
from __future__ import annotations

import gc

import pytest

from checker.config import load_config
from checker.search.common import collector_paused
from checker.search.liveness import build_graph
from checker.search.rounds import round_search
from checker.search.run import explore


def _model(name: str, preset: str) -> object:
    return load_config(model=name, preset=preset).build()


@pytest.mark.parametrize("workers", [1, 2])
def test_off_during_a_search_and_on_after(workers: int) -> None:
    seen: list[bool] = []
    model = _model("replication", "smoke")
    result = explore(model, workers=workers, progress=lambda p: seen.append(gc.isenabled()), progress_every=0.0)
    assert result.result == "ok" and result.distinct_states > 100
    assert seen and not any(seen)
    assert gc.isenabled()


def test_a_collector_already_off_stays_off() -> None:
    gc.disable()
    try:
        explore(_model("kraft", "smoke"))
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_on_again_after_an_error() -> None:
    @collector_paused
    def failing() -> None:
        assert not gc.isenabled()
        raise RuntimeError("stop")

    with pytest.raises(RuntimeError):
        failing()
    assert gc.isenabled()


def test_searches_leave_no_cycles() -> None:
    replication, kraft, rounds = _model("replication", "smoke"), _model("kraft", "smoke"), _model("kraft", "voter-race")
    gc.collect()
    gc.disable()  # nothing collects between the searches and the count below
    try:
        explore(replication)
        explore(replication, workers=2)
        explore(kraft)
        build_graph(kraft, list(kraft.properties))
        round_search(rounds, 2)
        assert gc.collect() == 0
    finally:
        gc.enable()
