"""The KRaft relation derived from the model's Python (checker/proofs/derive.py) against the
hand-written test oracle (tests/oracles/kraft_next.py).

Part 1, per action instance (3 voters, every config key at its default, Kafka 4.1): the paths
explored (enabled, crashing), the derivation time, and `derive.compare`'s verdict with its time:
"equal" on every state of the domain, else the first differing variable and, then, the verdict
again on the states of the proof's invariant (the lemmas of the default targets).

Part 2 (`--prove`): `kcheck prove --model kraft --size 3` (or `--size N`)'s induction (default preset and
targets, one action per orbit; with --kinds, consecution for those kinds' actions alone) on the
derived relation and on the hand-written one, in one run: the derivation's time apart, then
each proof's result and seconds. Part 3 (`--bmc K`): `--bmc K` on both relations, the same way.

    .venv/bin/python bench/bench_derive.py [--kinds ElectionTimeout ...] [--prove] [--bmc K] [--size N] [--no-compare]
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

import z3

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the test oracle: tests/oracles/kraft_next.py

from checker.config import load_config  # noqa: E402
from checker.proofs import derive as D  # noqa: E402
from checker.proofs import derived  # noqa: E402
from checker.proofs.induction import conjuncts_for, formula, prove, representatives  # noqa: E402
from checker.proofs.kraft_inv import DEFAULT_TARGETS  # noqa: E402
from checker.proofs.kraft_state import fresh  # noqa: E402
from model.kraft.params import CONFIG_KEYS, Params  # noqa: E402
from tests.oracles import kraft_next as N  # noqa: E402


def compare_all(kinds: list[str]) -> None:
    p = Params.from_config({**{k.name: k.default for k in CONFIG_KEYS}, "voters": 3})
    ctx, nctx = D.contexts(p, cls=N.Ctx)
    pre = fresh(nctx.layout, "pre_")
    inv = z3.And([formula(n)(nctx, pre) for n in conjuncts_for(DEFAULT_TARGETS)])
    verdicts: Counter[str] = Counter()
    total = 0.0
    print(f"{'action':46} {'paths':>5} {'enabled':>7} {'crash':>5} {'derive s':>8} {'check s':>7}  verdict")
    acts = N.actions(nctx)
    if kinds:  # in the order given
        acts = [a for k in kinds for a in acts if type(a).__name__ == k]
    for a in acts:
        c = D.compare(ctx, nctx, a, pre=pre)
        d = c.derived
        total += d.seconds
        verdict = c.verdict if c.verdict != "differs" else f"differs on the domain at {c.difference[:160]}"
        if c.verdict == "differs":
            again = D.compare(ctx, nctx, a, pre=pre, assume=inv, derived=d)
            verdict += f"; on Inv states: {again.verdict} {again.difference[:160]}".rstrip()
            verdicts["equal on Inv states" if again.verdict == "equal" else "differs on Inv states"] += 1
        else:
            verdicts[c.verdict if c.verdict != "unsupported" else f"not derived ({c.difference})"] += 1
        crash = f"{d.crash_paths}" if not d.crashes else f"{d.crash_paths} ({'/'.join(d.crashes)})"
        print(f"{a!r:46} {d.paths:5} {d.enabled_paths:7} {crash:>5} {d.seconds:8.2f} {c.check_seconds:7.2f}  {verdict}",
              flush=True)
    print("instances:", ", ".join(f"{n} {w}" for w, n in verdicts.items()), f"(derivation {total:.1f} s in all)")


def bmc_both(size: int, depth: int) -> None:
    """`kcheck prove --model kraft --size N --bmc K` (default preset and targets) on the derived
    relation (every instance, derived first) and on the hand-written one."""
    from checker.proofs.bmc import bmc

    rc = load_config(model="kraft", preset="default", variant="kafka-4.1", overrides=[])
    config = {**dict(rc.config), "voters": size}
    p = Params.from_config(config)
    model = rc.definition.build(config, rc.variant)
    hand = N.Ctx.of(p, rc.variant)
    t = time.perf_counter()
    dctx = derived.context(p, rc.variant)
    print(f"derivation: {len(dctx.derived)} action instances in {time.perf_counter() - t:.1f} s")
    for name, ctx in (("derived", dctx), ("hand-written", hand)):
        o = bmc(ctx, model, DEFAULT_TARGETS, depth, timeout_s=3600)
        print(f"bmc to depth {depth} on the {name} relation: {o.result} (depth {o.depth}, {o.seconds:.1f} s; "
              f"per depth {', '.join(f'{x:.1f}' for x in o.per_depth)})", flush=True)


def prove_both(kinds: list[str], size: int = 3) -> None:
    rc = load_config(model="kraft", preset="default", variant="kafka-4.1", overrides=[])
    p = Params.from_config({**dict(rc.config), "voters": size})
    hand = N.Ctx.of(p, rc.variant)
    every = representatives(hand)
    acts = [a for a in every if not kinds or type(a).__name__ in kinds]
    t = time.perf_counter()
    dctx = derived.context(p, rc.variant, actions=acts)
    print(f"derivation: {len(acts)} of the {len(every)} action instances of one per orbit in "
          f"{time.perf_counter() - t:.1f} s")
    only = None if len(acts) == len(every) else acts  # consecution for these actions alone
    for name, run in (("derived", lambda: derived.prove(dctx, DEFAULT_TARGETS, timeout_s=300, only=only)),
                      ("hand-written", lambda: prove(hand, DEFAULT_TARGETS, timeout_s=300, only=only))):
        t = time.perf_counter()
        o = run()
        print(f"induction on the {name} relation: {o.result} {o.reason} ({len(o.checks)} queries, "
              f"{time.perf_counter() - t:.1f} s, {o.seconds:.1f} s in queries)", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kinds", nargs="*", default=[], help="only these action kinds, in this order (e.g. CutLink HealLink)")
    ap.add_argument("--prove", action="store_true", help="also time the size-3 induction on both relations")
    ap.add_argument("--no-compare", action="store_true", help="skip part 1")
    ap.add_argument("--size", type=int, default=3, help="voters, for --prove and --bmc (default 3)")
    ap.add_argument("--bmc", type=int, metavar="K", help="also time BMC to depth K on both relations")
    args = ap.parse_args()
    if not args.no_compare:
        compare_all(args.kinds)
    if args.prove:
        prove_both(args.kinds, args.size)
    if args.bmc:
        bmc_both(args.size, args.bmc)


if __name__ == "__main__":
    main()
