"""The model sources each symbolic encoding was last cross-checked against.

The encodings (checker/proofs/) are a second, hand-written copy of the models' semantics.
`checked_against.json` records, per model, the digest of the model's sources
(`checker.provenance.model_digest`) and of its encoding's transition relation (ENCODING_FILES)
when the cross-check (checker/proofs/conformance.py, `cross_check`) last passed. `kcheck prove`
trusts an encoding as recorded while both digests are the recorded ones, and otherwise runs the
cross-check first and refuses to prove when the two part (spec/proofs.md, "An encoding that
follows the model").

After a change of a model or an encoding, once the cross-check passes, record it with

    python -m checker.proofs.checked_against

(tests/test_prove.py fails while the record is stale).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Callable

from checker.provenance import digest, model_digest

RECORD = Path(__file__).with_name("checked_against.json")
ENCODING_FILES = {m: ("term.py", f"{m}_state.py", f"{m}_next.py") for m in ("kraft", "replication")}


def encoding_digest(model: str) -> str:
    """SHA-256 of the files that define `model`'s transition relation."""
    folder = Path(__file__).parent
    return digest(folder, files=[folder / name for name in ENCODING_FILES[model]])[0]


def current(model: str) -> dict[str, str]:
    return {"model": model_digest(model), "encoding": encoding_digest(model)}


def recorded(model: str) -> dict[str, str] | None:
    try:
        entry = json.loads(RECORD.read_text()).get(model)
    except (OSError, ValueError, AttributeError):
        return None
    return entry if isinstance(entry, dict) else None


def stale() -> list[str]:
    """The models whose recorded digests are not the current ones."""
    return [m for m in ENCODING_FILES if recorded(m) != current(m)]


def follows(model: str, variant: str, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Whether `model`'s encoding follows its current sources: as recorded, else by the cross-check
    run now. The `encoding_check` object of `kcheck prove --json`; `passed` false names where the
    encoding and the model part."""
    now, then = current(model), recorded(model)
    out: dict[str, Any] = {"model_sha256": now["model"], "encoding_sha256": now["encoding"],
                           "recorded": then, "cross_check": None}
    if then == now:
        return {**out, "how": "recorded", "passed": True}
    from checker.proofs.conformance import cross_check

    check = cross_check(model, variant, progress)
    return {**out, "how": "cross-checked", "passed": check.passed, "cross_check": check.as_json()}


def main() -> int:
    """Cross-check every model whose record is stale and record the ones that pass."""
    from checker.proofs.conformance import cross_check

    table = json.loads(RECORD.read_text()) if RECORD.is_file() else {}
    failed = 0
    for model in stale():
        check = cross_check(model, progress=lambda text: print(f"{model}: {text}", flush=True))
        if check.passed:
            table[model] = current(model)
            print(f"{model}: {check.states:,} states, {check.transitions:,} transitions agree in"
                  f" {check.seconds:.1f} s: recorded")
        else:
            failed += 1
            first = check.first
            print(f"{model}: the encoding and the model part at {first.action} ({first.how}, preset {check.preset}):"
                  " not recorded", file=sys.stderr)
    RECORD.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
