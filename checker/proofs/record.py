"""Record the encodings as checked against the model's current sources (checker/proofs/checked_against.py):

    python -m checker.proofs.record

runs, for every model whose record is stale, the fixed-size cross-check and the every-size sample
check, and records only the models whose checks all pass; it then checks, by Z3, that each
every-size encoding includes the relation derived from its model (kraft at 3 and 4 voters,
checker/proofs/param_inclusion.py; replication at 3 brokers, checker/proofs/replication_inclusion.py)
and records that result with the sources it holds for. A module of its own because it runs
the every-size checks of prove_any and replication_any, which read the record.
"""
from __future__ import annotations

import json
import sys
from typing import Callable

from checker.proofs.checked_against import RECORD, current, stale


def _check_any_size(model: str, progress: Callable[[str], None]) -> str | None:
    """The every-size encoding's sample check on the default configuration: None when it passes,
    else what it found."""
    from checker.config import ConfigError, load_config

    try:
        if model == "kraft":
            from checker.proofs.kraft_param import PCtx
            from checker.proofs.prove_any import _encoding_covers
            from model.kraft.variants import Protocol

            rc = load_config(model="kraft", preset="default")
            out = _encoding_covers("kafka-4.1", PCtx(Protocol.of("kafka-4.1"),
                                                     stale_requests=bool(rc.config["stale_requests"])), True)
        else:
            from checker.proofs import replication_any
            from checker.proofs.replication_param import RCtx
            from model.replication.params import Params
            from model.replication.variants import Rules

            rc = load_config(model="replication", preset="default")
            out = replication_any.encoding_covers(rc, RCtx.of(Params.from_config(dict(rc.config)),
                                                              Rules.of("kafka-4.1")), True)
    except ConfigError as e:
        return str(e)
    progress(f"every-size encoding: {out['how']}")
    return None


def _record_inclusion(table: dict, progress: Callable[[str], None]) -> bool:
    """Derive the kraft model's relation at 3 and 4 voters (kafka-4.1, the default configuration)
    and check that the every-size encoding includes it (checker/proofs/param_inclusion.py); keep
    the result for `kcheck prove --size any`, which reads it for exactly these sources. False when
    an instance is not included."""
    from checker.config import load_config
    from checker.proofs import param_inclusion as PI
    from checker.proofs.kraft_param import PCtx
    from checker.proofs.kraft_param_inv import INVARIANTS, conjuncts
    from model.kraft.variants import Protocol

    rc = load_config(model="kraft", preset="default")
    config = dict(rc.config)
    c = PCtx(Protocol.of("kafka-4.1"), stale_requests=bool(config["stale_requests"]))
    names = conjuncts(c, list(INVARIANTS))
    if PI.recorded(config, "kafka-4.1", c, names) is not None:
        return True
    reports = PI.run_sizes(config, "kafka-4.1", c, names, progress=lambda r: progress(r.line()))
    if any(rep.failure is not None for rep in reports):
        return False
    table.setdefault("inclusion", {})["kraft"] = [PI.record_entry(config, "kafka-4.1", c, reports, names)]
    progress(f"inclusion recorded: {PI.describe(table['inclusion']['kraft'][0], 'recorded')}")
    return True


def _record_replication_inclusion(table: dict, progress: Callable[[str], None]) -> bool:
    """Derive the replication model's relation at 3 brokers (kafka-4.1, the default
    configuration) and check that the every-size encoding includes it
    (checker/proofs/replication_inclusion.py); kept as the kraft one is. False when an instance
    is not included."""
    from checker.config import load_config
    from checker.proofs import replication_inclusion as RI
    from model.replication.params import Params

    config = dict(load_config(model="replication", preset="default").config)
    if RI.recorded(config, "kafka-4.1") is not None:
        return True
    reports = [RI.check_size(Params.from_config({**config, "brokers": n}), "kafka-4.1", timeout_ms=600_000,
                             progress=lambda r: progress(r.line())) for n in RI.SIZES]
    if any(rep.failure is not None for rep in reports):
        return False
    table.setdefault("inclusion", {})["replication"] = [RI.record_entry(config, "kafka-4.1", reports)]
    progress(f"inclusion recorded: {RI.describe(table['inclusion']['replication'][0], 'recorded')}")
    return True


def main() -> int:
    """Cross-check every model whose record is stale and record the ones whose checks all pass."""
    from checker.proofs.conformance import cross_check

    table = json.loads(RECORD.read_text()) if RECORD.is_file() else {}
    failed = 0
    for model in stale():
        def say(text: str, model: str = model) -> None:
            print(f"{model}: {text}", flush=True)

        check = cross_check(model, progress=say)
        if not check.passed:
            failed += 1
            first = check.first
            print(f"{model}: the fixed-size encoding and the model part at {first.action} ({first.how}, preset "
                  f"{check.preset}): not recorded", file=sys.stderr)
            continue
        say(f"fixed-size encoding: {check.states:,} states, {check.transitions:,} transitions agree in "
            f"{check.seconds:.1f} s")
        found = _check_any_size(model, say)
        if found is not None:
            failed += 1
            print(f"{model}: {found}: not recorded", file=sys.stderr)
            continue
        table[model] = current(model)
        say("recorded")
    if table.get("kraft") == current("kraft") and not _record_inclusion(table, lambda text: print(f"kraft: {text}", flush=True)):
        failed += 1
        print("kraft: the every-size encoding does not include the model's relation: not recorded", file=sys.stderr)
    if table.get("replication") == current("replication") and not _record_replication_inclusion(
            table, lambda text: print(f"replication: {text}", flush=True)):
        failed += 1
        print("replication: the every-size encoding does not include the model's relation: not recorded",
              file=sys.stderr)
    RECORD.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
