"""Partial-order reduction against the full search, per configuration, in one run: prints one JSON
object per configuration (a line each), then a summary line.

    python bench/bench_por.py --preset smoke --preset one-crash --model-preset kraft:default
    python bench/bench_por.py --gate --max-seconds 300      # every gate row whose full search ends in time
    python bench/bench_por.py --gate --bugs                 # the rows that expect a violation
    python bench/bench_por.py --row R7-hw-without-maximal-isr --row replication-kafka-4.1-smoke

Each configuration is explored twice in this process, one worker each: the full search
(`explore(model)`) and the reduced one (`explore(model, por=True)`): distinct states, seconds,
verdict, and the ratio of distinct states. A violation found with the reduction is written as an
ITF trace and validated by `kcheck replay` (without --por: replay never reduces), and the verdicts
of both searches are compared: `same` false on any difference. Gate rows are read from
checker/gate/gate.toml; schedule and round rows are left out (they do not search by actions).
`--max-seconds`: a gate row whose full search passes it is stopped and reported as skipped
(`incomplete`), so a run of every row stays bounded. `--set KEY=VALUE` changes the `--preset` and
`--model-preset` configurations (e.g. every fault budget at 0).

`--bounds` also counts the pairs of action groups the footprints declare independent, and
measures what would be left to reduce without the two causes of dependence the
reduction cannot drop, each as a search whose ample sets ignore it: every group taken as
invisible (`invisible`), and then every capacity ignored too (`invisible_no_capacity`). These are
upper bounds on what a finer declaration could buy, not verdicts: such a search may miss states
where an invariant fails, so only its state count is printed.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from checker.config import load_config  # noqa: E402
from checker.search.run import explore  # noqa: E402
from checker.selection import select_invariants  # noqa: E402


def replay_ok(rc: Any, model: Any, violation: dict[str, Any]) -> bool:
    """Whether `kcheck replay` accepts the reduced search's counterexample on the full model."""
    from checker.traces import itf

    meta = itf.run_meta(rc, invariant=violation["invariant"], description=violation["description"])
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "trace.itf.json"
        itf.write(str(path), itf.to_itf(model, violation["trace"], meta))
        r = subprocess.run([sys.executable, "-m", "checker.cli", "replay", str(path), "--json", "--quiet"],
                           capture_output=True, text=True, cwd=ROOT)
    return r.returncode == 0


def compare(name: str, rc: Any, invariants: tuple[str, ...], max_states: int | None,
            timeout: float | None) -> dict[str, Any]:
    runs = {}
    for por in (False, True):
        model = select_invariants(rc.build(), invariants)
        start = time.perf_counter()
        limit = max_states
        r = _bounded(model, por, limit, timeout if not por else None)
        runs[por] = (model, r, time.perf_counter() - start)
        if r.result == "incomplete":
            break
    (full_model, full, full_s) = runs[False]
    out: dict[str, Any] = {"configuration": name, "model": rc.model, "variant": rc.variant, "preset": rc.preset,
                           "full": {"result": full.result, "distinct_states": full.distinct_states,
                                    "seconds": round(full_s, 2)}}
    if full.result == "incomplete":
        out["skipped"] = "the full search did not end within the limit"
        return out
    model, r, s = runs[True]
    out["por"] = {"result": r.result, "distinct_states": r.distinct_states, "seconds": round(s, 2),
                  "ample_states": (r.por or {}).get("reduced", 0),
                  "settled_by_full_search": (r.por or {}).get("settled_by_full_search", [])}
    if (r.por or {}).get("settled_by_full_search"):
        out["por"]["reduced_distinct_states"] = r.por["reduced_distinct_states"]
    reduced = out["por"].get("reduced_distinct_states", r.distinct_states)
    out["state_ratio"] = round(full.distinct_states / reduced, 3) if reduced else None
    same = full.result == r.result and sorted(full.unreached) == sorted(r.unreached) \
        and sorted(full.never_enabled) == sorted(r.never_enabled)
    if full.violation is not None and r.violation is not None:
        same = same and full.violation["invariant"] == r.violation["invariant"]
        out["full"]["trace_steps"] = len(full.violation["trace"]) - 1
        out["por"]["trace_steps"] = len(r.violation["trace"]) - 1
        out["por"]["invariant"] = r.violation["invariant"]
        out["por"]["replays_on_full_model"] = replay_ok(rc, model, r.violation)
        same = same and out["por"]["replays_on_full_model"]
    out["same"] = same
    return out


def independence(rc: Any) -> dict[str, int]:
    """How many pairs of the configuration's groups the footprints declare independent."""
    from checker.search import por

    fps = rc.build().footprints
    prints = [fps.footprint(g) for g in fps.groups()]
    n = len(prints)
    free = sum(1 for i in range(n) for j in range(i + 1, n) if not por.dependent(prints[i], prints[j]))
    return {"groups": n, "pairs": n * (n - 1) // 2, "independent_pairs": free}


def relaxed(rc: Any, invariants: tuple[str, ...], capacity: bool) -> int:
    """Distinct states of the reduced search with every group invisible (and, unless `capacity`,
    no capacity read or changed): an upper bound on the reduction, not a verdict."""
    import dataclasses

    from checker.search import por

    model = select_invariants(rc.build(), invariants)
    fps = model.footprints
    if not capacity:
        declared = fps.footprint
        none = frozenset()
        fps.footprint = lambda g: dataclasses.replace(declared(g), takes=none, frees=none, reads_capacity=none,
                                                      effect_capacity=none)
    original = por.AmpleSets

    class Invisible(original):  # type: ignore[misc, valid-type]
        def __init__(self, m: Any) -> None:
            super().__init__(m)
            self.visible = 0

    por.AmpleSets = Invisible
    try:
        r = explore(model, por=True)
    finally:
        por.AmpleSets = original
    return (r.por or {}).get("reduced_distinct_states", r.distinct_states)


def _bounded(model: Any, por: bool, max_states: int | None, timeout: float | None) -> Any:
    """The search, stopped as an interrupt would be after `timeout` seconds (SIGALRM)."""
    import signal

    if timeout is None:
        return explore(model, max_states=max_states, por=por)

    def stop(*_: Any) -> None:
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        return explore(model, max_states=max_states, por=por)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", action="append", default=[], help="a replication preset (repeatable)")
    parser.add_argument("--model-preset", action="append", default=[], metavar="MODEL:PRESET",
                        help="a preset of any model, e.g. kraft:default (repeatable)")
    parser.add_argument("--row", action="append", default=[], help="a gate row by name (repeatable)")
    parser.add_argument("--gate", action="store_true", help="every gate row that searches by actions")
    parser.add_argument("--bugs", action="store_true", help="with --gate: only the rows that expect a violation")
    parser.add_argument("--holds", action="store_true", help="with --gate: only the rows that expect the invariants to hold")
    parser.add_argument("--max-seconds", type=float, default=None,
                        help="gate rows: skip a row whose full search takes longer")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="a config value for --preset and --model-preset (repeatable)")
    parser.add_argument("--bounds", action="store_true",
                        help="also the reduced search's states with every group invisible, then without capacities "
                             "(upper bounds on the reduction, not verdicts)")
    args = parser.parse_args(argv)

    todo: list[tuple[str, Any, tuple[str, ...], int | None]] = []
    for preset in args.preset:
        todo.append((f"replication:{preset}", load_config(model="replication", preset=preset, overrides=args.overrides),
                     (), None))
    for item in args.model_preset:
        name, _, preset = item.partition(":")
        todo.append((item, load_config(model=name, preset=preset or "default", overrides=args.overrides), (), None))
    if args.gate or args.row:
        from checker.gate.gate import default_gate_file, load_gate, select

        rows = load_gate(default_gate_file())
        rows = select(rows, args.row) if args.row else rows
        for row in rows:
            if row.schedule or row.rounds or row.plugins or (args.bugs and not row.is_bug) \
                    or (args.holds and row.is_bug):
                continue
            todo.append((row.name, row.run_config(), row.invariants, row.max_states))

    results = []
    for name, rc, invariants, max_states in todo:
        out = compare(name, rc, invariants, max_states, args.max_seconds)
        if args.bounds and "skipped" not in out:
            out["bounds"] = {**independence(rc), "invisible": relaxed(rc, invariants, capacity=True),
                             "invisible_no_capacity": relaxed(rc, invariants, capacity=False)}
        print(json.dumps(out), flush=True)
        results.append(out)
    compared = [o for o in results if "skipped" not in o]
    print(json.dumps({"configurations": len(results), "compared": len(compared),
                      "same_verdict": sum(1 for o in compared if o["same"]),
                      "skipped": [o["configuration"] for o in results if "skipped" in o]}))
    return 0 if all(o["same"] for o in compared) else 1


if __name__ == "__main__":
    sys.exit(main())
