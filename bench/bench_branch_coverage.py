"""The model's own branch coverage of `kcheck conform`'s walks: how often the seeded swarm walks take
each way of each decision in the model's rules (checker/walks/branches.py); prints one JSON object.

    python bench/bench_branch_coverage.py                                   # kraft, the CI sample's budget
    python bench/bench_branch_coverage.py --model replication --walks 1000 --depth 40
    python bench/bench_branch_coverage.py --preset voter-checks --walks 15             # one preset's share

The walks are the model's alone (no JVM): walk w of seed S over preset w % len(presets) (conform's
presets, or those given with --preset), drawn as
kcheck conform draws them, except that conform also skips a draw the real code cannot take, so its
walks may part from these after such a draw. The model runs as Python (KCHECK_PURE_PYTHON=1 is set
here). Both draws are run, plain and steered (`kcheck conform --steer`, checker/walks/steer.py),
each reported under `draws`: per source file, the decisions, the ways (two per decision) reached,
the ways never reached and the rarest reached, each with its test's source.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path

os.environ["KCHECK_PURE_PYTHON"] = "1"  # line events need the .py, not the compiled module
ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from checker.config import load_config, load_definition  # noqa: E402
from checker.walks import branches  # noqa: E402
from checker.walks import steer  # noqa: E402
from model.interface import action_name  # noqa: E402

SOURCES = {"kraft": ["model/kraft/rules.py", "model/kraft/client.py", "model/kraft/quorum.py"],
           "replication": ["model/replication/controller.py", "model/replication/partition.py"]}


def coverage(files: list, models: list, args: argparse.Namespace, steering: "steer.Steering | None") -> dict:
    """The walks' steps, action counts and, per source file, the ways reached, never reached and rarest."""
    kinds: Counter = Counter()
    steps = 0
    with branches.counting(files) as counts:
        for _, action, _ in steer.model_walks(models, args.seed, args.walks, args.depth, True, steering):
            kinds[action_name(action)] += 1
            steps += 1
    rows = branches.table(files, counts)
    out: dict = {"steps": steps, "action_counts": dict(sorted(kinds.items())), "files": {}}
    for d in files:
        mine = [r for r in rows if r[0] == d.path]
        ways = [(r[1], r[2], taken, n) for r in mine for taken, n in ((True, r[3]), (False, r[4]))]
        reached = sorted((w for w in ways if w[3]), key=lambda w: w[3])
        out["files"][os.path.relpath(d.path, ROOT)] = {
            "decisions": len(mine), "ways": len(ways), "reached": len(reached), "unmeasured": d.unmeasured,
            "never": [f"line {line} {'taken' if t else 'not taken'}: {text}" for line, text, t, n in ways if not n],
            "rarest": [f"line {line} {'taken' if t else 'not taken'} x{n}: {text}"
                       for line, text, t, n in reached[:args.rarest]]}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="kraft", choices=sorted(SOURCES))
    parser.add_argument("--walks", type=int, default=240)
    parser.add_argument("--depth", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--variant", default="kafka-4.1")
    parser.add_argument("--rarest", type=int, default=10, help="how many of the rarest reached ways to list")
    parser.add_argument("--preset", action="append", default=[],
                        help="walk these presets only (repeatable; default: every preset kcheck conform walks)")
    args = parser.parse_args()
    import importlib
    module = importlib.import_module(f"checker.conform.{args.model}")
    presets = args.preset or list(getattr(module, "PRESETS", load_definition(args.model).presets))
    models = [(p, load_config(model=args.model, variant=args.variant, preset=p).build()) for p in presets]
    files = [branches.Decisions.of(str(ROOT / f)) for f in SOURCES[args.model]]
    out: dict = {"model": args.model, "variant": args.variant, "presets": presets, "walks": args.walks,
                 "depth": args.depth, "seed": args.seed, "draws": {}}
    for draw in ("plain", "steered"):
        out["draws"][draw] = coverage(files, [m for _, m in models], args, steer.Steering() if draw == "steered" else None)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
