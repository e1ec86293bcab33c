"""Record the encodings as checked against the model's current sources (checker/proofs/checked_against.py):

    python -m checker.proofs.record [--jobs N] [--keep FILE] [--voters 3 | --voters 3 4] [--timeout S]

runs, for every model whose record is stale, the fixed-size cross-check (replication's; KRaft's
fixed-size relation is derived at each proof) and the every-size sample check, and records only the models whose checks all pass; it then checks, by Z3, that each
every-size encoding includes the relation derived from its model (kraft at 3 and 4 voters,
checker/proofs/param_inclusion.py; replication at 3 brokers, checker/proofs/replication_inclusion.py)
and records that result with the sources it holds for. With `--jobs N` the inclusion's action
instances are checked in N processes, each instance on its own (the record is the same: results
are kept in the instances' order). With `--keep FILE` each included instance's result is
appended to FILE as it comes, and a run stopped and started again with the same FILE checks only
the instances not yet done. `--timeout S`: each inclusion query's limit. The derivations are read from and kept in the
derivation cache (checker/proofs/derivation_cache.py), so a record remade after a change to the
encodings or the inclusion check, not to the model or the derivation, asks only Z3 again. A module of its own
because it runs the every-size checks of prove_any and replication_any, which read the record.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

from checker.proofs.checked_against import ENCODING_FILES, RECORD, current, stale


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


def _record_inclusion(table: dict, progress: Callable[[str], None], jobs: int = 1, keep: Path | None = None,
                      voters: Sequence[int] | None = None, timeout_ms: int | None = None) -> bool:
    """Derive the kraft model's relation at 3 and 4 voters (or `voters`: 3, or 3 and 4; kafka-4.1,
    the default configuration) and check that the every-size encoding includes it
    (checker/proofs/param_inclusion.py); keep the result for `kcheck prove --size any`, which
    reads it for exactly these sources. False when an instance is not included."""
    from checker.config import load_config
    from checker.proofs import param_inclusion as PI
    from checker.proofs.kraft_param import PCtx
    from checker.proofs.kraft_param_inv import INVARIANTS, conjuncts
    from model.kraft.variants import Protocol

    rc = load_config(model="kraft", preset="default")
    config = dict(rc.config)
    c = PCtx(Protocol.of("kafka-4.1"), stale_requests=bool(config["stale_requests"]))
    names = conjuncts(c, list(INVARIANTS))
    sizes = tuple(voters or PI.SIZES)
    have = PI.recorded(config, "kafka-4.1", c, names)
    if have is not None and set(sizes) <= {s["voters"] for s in have["sizes"]}:
        return True  # a record at 3 voters only is remade when 3 and 4 are asked (--keep keeps the 3)
    for n in sizes:  # the initial states first: a step-by-step inclusion says nothing without them
        why = PI.init_included(rc.definition, config, "kafka-4.1", n)
        if why is not None:
            progress(f"kraft: {why}")
            return False
    reports = inclusion_reports("kraft", config, sizes, jobs, lambda r: progress(r.line()), keep=keep,
                                timeout_ms=timeout_ms)
    if any(rep.failure is not None for rep in reports):
        return False
    table.setdefault("inclusion", {})["kraft"] = [PI.record_entry(config, "kafka-4.1", c, reports, names)]
    progress(f"inclusion recorded: {PI.describe(table['inclusion']['kraft'][0], 'recorded')}")
    return True


def _record_replication_inclusion(table: dict, progress: Callable[[str], None], jobs: int = 1,
                                  keep: Path | None = None, timeout_ms: int | None = None) -> bool:
    """Derive the replication model's relation at 3 brokers (kafka-4.1, the default
    configuration) and check that the every-size encoding includes it
    (checker/proofs/replication_inclusion.py); kept as the kraft one is. False when an instance
    is not included."""
    from checker.config import load_config
    from checker.proofs import replication_inclusion as RI

    config = dict(load_config(model="replication", preset="default").config)
    if RI.recorded(config, "kafka-4.1") is not None:
        return True
    reports = inclusion_reports("replication", config, RI.SIZES, jobs, lambda r: progress(r.line()), keep=keep,
                                timeout_ms=timeout_ms)
    if any(rep.failure is not None for rep in reports):
        return False
    table.setdefault("inclusion", {})["replication"] = [RI.record_entry(config, "kafka-4.1", reports)]
    progress(f"inclusion recorded: {RI.describe(table['inclusion']['replication'][0], 'recorded')}")
    return True


# --- the inclusion's instances, in one process or several ----------------------------------------

KRAFT_TIMEOUT_MS, REPLICATION_TIMEOUT_MS = 300_000, 600_000  # a query's: HandleVoteResponse at 4 voters and the controller rules are the slowest


def _instances(model: str, config: dict[str, Any], n: int, kinds: Sequence[str] | None = None) -> list[Any]:
    """The action instances the inclusion checks at n nodes: kraft's one per orbit of voter
    renamings (induction.representatives), replication's every one (replica order decides
    elections); with `kinds`, those of these kinds only."""
    if model == "kraft":
        from checker.proofs.induction import representatives
        from checker.proofs.kraft_ctx import Ctx
        from model.kraft.params import Params

        acts = representatives(Ctx.of(Params.from_config({**config, "voters": n}), "kafka-4.1"))
    else:
        from checker.proofs import replication_next as N
        from model.replication.params import Params as RParams

        acts = N.actions(N.Ctx.of(RParams.from_config({**config, "brokers": n}), "kafka-4.1"))
    return [a for a in acts if kinds is None or type(a).__name__ in kinds]


def _check_instances(model: str, config: dict[str, Any], n: int, indices: Sequence[int],
                     progress: Callable[[Any], None] | None = None, kinds: Sequence[str] | None = None,
                     acts: list[Any] | None = None, timeout_ms: int | None = None) -> list[Any]:
    """The inclusion results of the instances at `indices` (of `_instances`, or `acts` when the
    caller has them), in that order, each Z3 query allowed `timeout_ms` (else the model's
    default); it stops at the first one not included. Run in a worker process with no progress."""
    acts = _instances(model, config, n, kinds) if acts is None else acts
    chosen = [acts[i] for i in indices]
    if model == "kraft":
        from checker.proofs import param_inclusion as PI
        from checker.proofs.kraft_ctx import Ctx
        from checker.proofs.kraft_param import PCtx
        from checker.proofs.kraft_param_inv import INVARIANTS, conjuncts
        from model.kraft.params import Params
        from model.kraft.quorum import Context
        from model.kraft.variants import Protocol

        p = Params.from_config({**config, "voters": n})
        c = PCtx(Protocol.of("kafka-4.1"), stale_requests=bool(config["stale_requests"]))
        return PI.check_size(Context(p, Protocol.of("kafka-4.1")), Ctx.of(p, "kafka-4.1").layout, c, chosen,
                             conjuncts(c, list(INVARIANTS)), timeout_ms or KRAFT_TIMEOUT_MS, progress,
                             variant="kafka-4.1").results
    from checker.proofs import replication_inclusion as RI
    from model.replication.params import Params as RParams

    return RI.check_size(RParams.from_config({**config, "brokers": n}), "kafka-4.1", chosen,
                         timeout_ms=timeout_ms or REPLICATION_TIMEOUT_MS, progress=progress, cached=True).results


def _key(model: str, config: dict[str, Any], n: int) -> dict[str, Any]:
    """What a kept result holds for: the model, its inclusion sources' digest, the configuration
    and the number of nodes."""
    if model == "kraft":
        from checker.proofs.param_inclusion import sources_digest
    else:
        from checker.proofs.replication_inclusion import sources_digest
    return {"model": model, "sources": sources_digest(), "config": {k: config[k] for k in sorted(config)}, "n": n}


def _kept(keep: Path | None, key: dict[str, Any], acts: list[Any]) -> dict[int, Any]:
    """The included instances `keep` holds for `key`, by index into `acts` (a line for another
    key, sources or instance list is passed over)."""
    from checker.proofs.param_inclusion import Inclusion

    out: dict[int, Any] = {}
    if keep is None or not keep.is_file():
        return out
    for line in keep.read_text().splitlines():
        try:
            e = json.loads(line)
            i, r = e["index"], e["result"]
            if e["key"] == key and 0 <= i < len(acts) and e["action"] == repr(acts[i]) and r["verdict"] == "included":
                out[i] = Inclusion(acts[i], r["verdict"], r["seconds"], r["derive_seconds"], r["paths"],
                                   r["detail"], r["assumed"], r["ghost_guards"], r.get("agree", ""))
        except (ValueError, KeyError, TypeError):
            continue  # a line cut short by a stop
    return out


def _keep(keep: Path | None, key: dict[str, Any], i: int, res: Any) -> None:
    """Append an included instance's result to `keep`, at once (a stop loses none)."""
    if keep is None or res.verdict != "included":
        return
    fields = {f: getattr(res, f) for f in ("verdict", "seconds", "derive_seconds", "paths", "detail", "assumed",
                                           "ghost_guards", "agree")}
    with keep.open("a") as f:
        f.write(json.dumps({"key": key, "index": i, "action": repr(res.action), "result": fields}) + "\n")
        f.flush()


def inclusion_reports(model: str, config: dict[str, Any], sizes: Sequence[int], jobs: int,
                      progress: Callable[[Any], None], kinds: Sequence[str] | None = None,
                      keep: Path | None = None, timeout_ms: int | None = None) -> list[Any]:
    """The inclusion at each size (kafka-4.1, `config`; `kinds`: of those action kinds only), as
    SizeReports of the instances in their order; `jobs` > 1: one instance a task in that many
    processes (spawned: each derives afresh), the pending ones given up once one is not included.
    `keep`: a file each included instance's result is appended to as it comes, and read back by
    the next run with the same sources and configuration, which checks only the others (a long
    run stopped loses nothing finished). Stops at the first size with a failure."""
    from checker.proofs.param_inclusion import SizeReport

    unit = "voters" if model == "kraft" else "brokers"
    out = []
    for n in sizes:
        acts = _instances(model, config, n, kinds)
        key = _key(model, config, n) if keep is not None else {}
        by_index = _kept(keep, key, acts)
        for i in sorted(by_index):
            progress(by_index[i])
        todo = [i for i in range(len(acts)) if i not in by_index]
        if jobs <= 1:
            for i in todo:
                (res,) = _check_instances(model, config, n, [i], progress, kinds, acts, timeout_ms)
                by_index[i] = res
                _keep(keep, key, i, res)
                if res.verdict != "included":
                    break
        else:
            import multiprocessing
            from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

            with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
                pending = {pool.submit(_check_instances, model, config, n, [i], None, kinds, None, timeout_ms): i
                           for i in todo}
                while pending:
                    done, _ = wait(pending, return_when=FIRST_COMPLETED)
                    for f in done:
                        i = pending.pop(f)
                        if f.cancelled():
                            continue
                        (res,) = f.result()
                        by_index[i] = res
                        _keep(keep, key, i, res)
                        progress(res)
                        if res.verdict != "included":  # those running still finish
                            for g in pending:
                                g.cancel()
        results = [by_index[i] for i in sorted(by_index)]
        assert len(results) == len(acts) or any(r.verdict != "included" for r in results)
        rep = SizeReport(n, list(results), unit=unit)
        out.append(rep)
        if rep.failure is not None:
            break
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Cross-check every model whose record is stale and record the ones whose checks all pass."""
    from checker.proofs.conformance import cross_check

    parser = argparse.ArgumentParser(prog="python -m checker.proofs.record",
                                     description="Record the encodings as checked against the model's current sources.")
    parser.add_argument("--jobs", type=int, default=1, metavar="N",
                        help="check the inclusion's action instances in N processes (default 1)")
    parser.add_argument("--keep", type=Path, metavar="FILE",
                        help="append each included instance's result to FILE as it comes; a later run given the "
                             "same FILE, sources and configuration checks only the others")
    parser.add_argument("--voters", type=int, nargs="+", metavar="N",
                        help="the kraft inclusion's sizes: 3, or 3 4 (the default)")
    parser.add_argument("--timeout", type=float, metavar="S",
                        help=f"seconds each inclusion query may take (default {KRAFT_TIMEOUT_MS // 1000} for kraft, "
                             f"{REPLICATION_TIMEOUT_MS // 1000} for replication)")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, not {args.jobs}")
    if args.timeout is not None and not args.timeout > 0:
        parser.error(f"--timeout must be positive, not {args.timeout:g}")
    timeout_ms = None if args.timeout is None else max(1, int(args.timeout * 1000))
    from checker.proofs.param_inclusion import SIZES

    if args.voters is not None and tuple(args.voters) not in (SIZES, SIZES[:1]):
        parser.error(f"--voters must be {' '.join(map(str, SIZES[:1]))} or {' '.join(map(str, SIZES))}, "
                     f"not {' '.join(map(str, args.voters))}")
    if args.keep is not None and args.keep.exists() and not args.keep.is_file():
        parser.error(f"--keep {args.keep}: not a file")
    jobs, keep = args.jobs, args.keep

    table = json.loads(RECORD.read_text()) if RECORD.is_file() else {}
    failed = 0
    for model in stale():
        def say(text: str, model: str = model) -> None:
            print(f"{model}: {text}", flush=True)

        if model in ENCODING_FILES:  # a hand-written fixed-size relation (kraft's is derived at each proof)
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
    if table.get("kraft") == current("kraft") and not _record_inclusion(
            table, lambda text: print(f"kraft: {text}", flush=True), jobs, keep, args.voters, timeout_ms):
        failed += 1
        print("kraft: the every-size encoding does not include the model's relation: not recorded", file=sys.stderr)
    if table.get("replication") == current("replication") and not _record_replication_inclusion(
            table, lambda text: print(f"replication: {text}", flush=True), jobs, keep, timeout_ms):
        failed += 1
        print("replication: the every-size encoding does not include the model's relation: not recorded",
              file=sys.stderr)
    RECORD.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
