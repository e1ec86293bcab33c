"""The edits of spec/edits.toml, each checked and proved: what `kcheck check` and `kcheck prove`
answer on a copy of the sources with the one edit made.

Per edit: `kcheck check --no-liveness --preset P` (the edit's preset; the property it names and
the trace's steps), `kcheck prove --size N` (default 3: on the relation derived from the edited
Python; for replication, of the property check breaks, on the edit's `prove_preset`) and
`kcheck prove --size any` (refused: every-size encodings are hand-written). Prints one line per
edit and answer as it goes, then a markdown table; `--json FILE` keeps every answer.

    .venv/bin/python bench/bench_prove_edits.py [--model kraft|replication] [--edit NAME ...] [--size N]
                                                [--no-check] [--no-prove] [--timeout S] [--json FILE]

The copies are made from this checkout without its compiled modules, tests, docs or traces, so
every run is of the edited Python itself.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parent.parent
EDITS = ROOT / "spec" / "edits.toml"
SKIP = shutil.ignore_patterns(".git", ".venv", "build", "__pycache__", "*.so", "_compiled_sources.json", "*.egg-info",
                              ".pytest_cache", ".hypothesis", "traces", "tests", "docs", "bench", ".ci")


def edits(model: Optional[str] = None) -> list[dict[str, Any]]:
    """The edits of spec/edits.toml, of one model or all."""
    with open(EDITS, "rb") as f:
        every = tomllib.load(f)["edit"]
    return [e for e in every if model is None or e["model"] == model]


def edited_copy(edit: dict[str, Any], dest: Path) -> Path:
    """A copy of this checkout's sources at `dest` with the edit made; raises ValueError when its
    `old` text is not in its file exactly once (the model moved on: the edit must follow it)."""
    shutil.copytree(ROOT, dest, ignore=SKIP)
    path = dest / edit["file"]
    text = path.read_text()
    if text.count(edit["old"]) != 1:
        raise ValueError(f"{edit['name']}: its old text is in {edit['file']} {text.count(edit['old'])} times, not once")
    path.write_text(text.replace(edit["old"], edit["new"]))
    return dest


def kcheck(copy: Path, *argv: str, timeout: float) -> tuple[int, Optional[dict], str, float]:
    """`python -m checker.cli argv --json` run in the copy: (exit code, its JSON or None, the last
    line of stderr, seconds)."""
    start = time.monotonic()
    try:
        p = subprocess.run([sys.executable, "-m", "checker.cli", *argv, "--json"], cwd=copy, capture_output=True,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return -1, None, f"over {timeout:.0f} s", time.monotonic() - start
    try:
        out = json.loads(p.stdout) if p.stdout.strip() else None
    except json.JSONDecodeError:
        out = None
    last = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ""
    return p.returncode, out, last, time.monotonic() - start


def check_answer(copy: Path, edit: dict[str, Any], timeout: float) -> dict[str, Any]:
    code, out, last, seconds = kcheck(copy, "check", "--model", edit["model"], "--preset", edit["preset"],
                                      "--no-liveness", "--quiet", timeout=timeout)
    answer: dict[str, Any] = {"exit": code, "seconds": round(seconds, 1)}
    if out is not None:
        answer["result"] = out.get("result")
        violation = out.get("violation") or {}
        answer["property"] = violation.get("invariant")
        answer["steps"] = len(violation.get("trace") or []) - 1 if violation.get("trace") else None
    else:
        answer["result"], answer["error"] = "error", last
    return answer


def prove_args(edit: dict[str, Any]) -> list[str]:
    """What a fixed-size proof of the edit asks beside the model and size: for replication, the
    property check breaks (its default targets are structural and candidates_remain), on the
    edit's `prove_preset` (the configuration where that property's proof holds unedited)."""
    out = ["--preset", edit["prove_preset"]] if edit.get("prove_preset") else []
    if edit["model"] == "replication" and edit["breaks"]:
        out += ["--invariant", edit["breaks"]]
    return out


def prove_answer(copy: Path, edit: dict[str, Any], size: str, timeout: float) -> dict[str, Any]:
    more = prove_args(edit) if size != "any" else []
    code, out, last, seconds = kcheck(copy, "prove", "--model", edit["model"], "--size", size, *more, "--quiet",
                                      timeout=timeout)
    answer: dict[str, Any] = {"exit": code, "seconds": round(seconds, 1)}
    if code == 2 or out is None:
        answer["result"] = "refused" if code == 2 else "error"
        answer["why"] = last
        return answer
    answer["result"] = out.get("result")
    cti = out.get("cti") or {}
    answer["action"], answer["conjunct"] = cti.get("action"), cti.get("conjunct")
    check = out.get("encoding_check") or {}
    answer["relation"] = check.get("how")
    answer["derivation_seconds"] = check.get("derivation_seconds")
    if out.get("result") == "unknown" or (out.get("result") == "cti" and not cti):
        answer["why"] = out.get("reason")  # unknown, or the model raises from a state of the invariant
    return answer


def prove_cell(a: dict[str, Any]) -> str:
    if a["result"] == "cti" and not a.get("conjunct"):
        return f"counterexample to induction: {a['why']}, exit 1 ({a['seconds']:.0f} s)"
    if a["result"] == "cti":
        return f"counterexample to induction: `{a['conjunct']}` at {a['action']}, exit 1 ({a['seconds']:.0f} s)"
    if a["result"] in ("refused", "error"):
        return f"{a['result']}, exit {a['exit']}"
    return f"{a['result']}, exit {a['exit']} ({a['seconds']:.0f} s)"


def check_cell(a: dict[str, Any]) -> str:
    if a.get("property"):
        return f"`{a['property']}` violated in {a['steps']} steps, exit {a['exit']}"
    return f"{a['result']}, exit {a['exit']}"


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=["kraft", "replication"])
    parser.add_argument("--edit", action="append", default=[], metavar="NAME")
    parser.add_argument("--size", default="3")
    parser.add_argument("--no-check", action="store_true")
    parser.add_argument("--no-prove", action="store_true")
    parser.add_argument("--timeout", type=float, default=3600.0)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    chosen = [e for e in edits(args.model) if not args.edit or e["name"] in args.edit]
    if not chosen:
        print(f"no edit of spec/edits.toml matches {args.edit or args.model}", file=sys.stderr)
        return 2
    rows, proved_but_broken = [], []
    for edit in chosen:
        with tempfile.TemporaryDirectory(prefix="kcheck-edit-") as tmp:
            copy = edited_copy(edit, Path(tmp) / "kcheck")
            row: dict[str, Any] = {"name": edit["name"], "model": edit["model"], "what": edit["what"]}
            if not args.no_check:
                row["check"] = check_answer(copy, edit, args.timeout)
                print(f"{edit['name']}: check --preset {edit['preset']}: {check_cell(row['check'])}", flush=True)
            if not args.no_prove:
                for size in (args.size, "any"):
                    row[f"prove {size}"] = a = prove_answer(copy, edit, size, args.timeout)
                    print(f"{edit['name']}: prove --size {size}: {prove_cell(a)}", flush=True)
                    if a["result"] == "proved" and row.get("check", {}).get("property"):
                        proved_but_broken.append(f"{edit['name']} at --size {size}")
            rows.append(row)
    print()
    print(f"| edit | what | `kcheck check` | `prove --size {args.size}` | `prove --size any` |")
    print("|---|---|---|---|---|")
    for r in rows:
        cells = [check_cell(r["check"]) if "check" in r else "",
                 prove_cell(r[f"prove {args.size}"]) if f"prove {args.size}" in r else "",
                 prove_cell(r["prove any"]) if "prove any" in r else ""]
        print(f"| {r['model']} `{r['name']}` | {r['what']} | " + " | ".join(cells) + " |")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    if proved_but_broken:
        print(f"PROVED WHERE CHECK FINDS A VIOLATION: {', '.join(proved_but_broken)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
