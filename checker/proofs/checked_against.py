"""The model sources each symbolic encoding was checked against, and the refusal of any proof of
other sources.

The hand-written encodings (checker/proofs/) are copies of the models' semantics: replication's
fixed-size one (`replication_state.py`, `replication_next.py`) and the every-size ones
(`kraft_param.py`, `replication_param.py`). KRaft's fixed-size relation has no hand-written copy:
it is derived from the model's Python at every proof (derived.py). A copy is tied to the Python by cross-checks on samples of states
(checker/proofs/conformance.py, `cross_check`; prove_any's and replication_any's
`encoding_covers`), and a sample can show that two relations differ, never that they agree. So
a proof is of the model only for the sources a developer of the encoding has brought it in step
with and recorded: `checked_against.json` holds, per model, the digest of each of the model's
source files (`checker.provenance.model_digest`'s files) and of each encoding's files when the
cross-checks last passed. `kcheck prove` proves only while all of them are the recorded ones,
and otherwise refuses in one line naming the files that changed (`refusal`), whatever a sample
would find (spec/proofs.md, "An encoding that follows the model").

After a change of a model or an encoding, bring the encodings in step, then record with

    python -m checker.proofs.record

which runs every cross-check first and records only the models whose checks all pass
(tests/test_prove.py fails while the record is stale).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from checker.provenance import digest, model_digest, package_folder, sources

RECORD = Path(__file__).with_name("checked_against.json")
MODELS = ("kraft", "replication")
# the files that define each encoding's transition relation (the invariants and lemmas are the
# proofs' own content, not a copy of the model)
ENCODING_FILES = {"replication": ("term.py", "replication_state.py", "replication_next.py")}
ANY_SIZE_FILES = {"kraft": ("term.py", "kraft_param.py"),
                  "replication": ("term.py", "kraft_param.py", "replication_param.py")}


def _files_digest(names: tuple[str, ...]) -> str:
    folder = Path(__file__).parent
    return digest(folder, files=[folder / name for name in names])[0]


def encoding_digest(model: str) -> str:
    """SHA-256 of the files that define `model`'s fixed-size transition relation."""
    return _files_digest(ENCODING_FILES[model])


def any_size_digest(model: str) -> str:
    """SHA-256 of the files that define `model`'s every-size transition relation."""
    return _files_digest(ANY_SIZE_FILES[model])


def model_files(model: str) -> dict[str, str]:
    """SHA-256 of each source file of `model` (model/*.py and model/<model>/), by its path in the
    model package, as `model_digest` reads them."""
    folder = package_folder()
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sources(folder, [model])}


def current(model: str) -> dict[str, Any]:
    out = {"model": model_digest(model), "files": model_files(model), "encoding_any": any_size_digest(model)}
    if model in ENCODING_FILES:  # a hand-written fixed-size relation
        out["encoding"] = encoding_digest(model)
    return out


def recorded(model: str) -> dict[str, Any] | None:
    try:
        entry = json.loads(RECORD.read_text()).get(model)
    except (OSError, ValueError, AttributeError):
        return None
    return entry if isinstance(entry, dict) else None


def stale() -> list[str]:
    """The models whose recorded digests are not the current ones."""
    return [m for m in MODELS if recorded(m) != current(m)]


def changed_files(model: str) -> list[str]:
    """The model's source files that differ from the recorded ones, each as `model/PATH (edited)`,
    `(added)` or `(removed)`; [] when they are the recorded ones."""
    then = (recorded(model) or {}).get("files")
    now = model_files(model)
    if not isinstance(then, dict):
        return ["the record has no digests of the model's files"] if recorded(model) is None else \
            [f"model/{p} (not recorded)" for p in sorted(now)]
    out = []
    for path in sorted(set(then) | set(now)):
        if path not in now:
            out.append(f"model/{path} (removed)")
        elif path not in then:
            out.append(f"model/{path} (added)")
        elif then[path] != now[path]:
            out.append(f"model/{path} (edited)")
    return out


def refusal(model: str, any_size: bool) -> str | None:
    """Why a proof of `model` (for a fixed size, or every size) cannot be given: the model's or
    the encoding's sources are not those recorded; None when they are."""
    then, now = recorded(model) or {}, current(model)
    key, files = ("encoding_any", ANY_SIZE_FILES) if any_size else ("encoding", ENCODING_FILES)
    encoding = "every-size" if any_size else "fixed-size"
    if then.get("model") != now["model"]:
        what = changed_files(model) or ["the model's files"]
        return (f"the {model} model's sources differ from those its {encoding} encoding was checked against "
                f"({', '.join(what)}): the encoding is a hand-written copy of the model, which a sample cannot "
                "show equal to the edited one, so nothing is proved; check the edit with kcheck check, or bring "
                f"checker/proofs/ in step and record it (python -m checker.proofs.record; spec/proofs.md)")
    if key in now and then.get(key) != now[key]:  # kraft has no hand-written fixed-size encoding
        return (f"the {encoding} {model} encoding ({', '.join('checker/proofs/' + f for f in files[model])}) "
                "changed since it was last checked against the model, so nothing is proved; record it with "
                "python -m checker.proofs.record once its cross-checks pass (spec/proofs.md)")
    return None


def follows(model: str) -> dict[str, Any]:
    """The `encoding_check` object of `kcheck prove --json` for a proof `refusal` allows."""
    now = current(model)
    return {"model_sha256": now["model"], "encoding_sha256": now["encoding"], "how": "recorded", "passed": True,
            "cross_check": None}
