"""Judgements on mutants the gate does not kill, each with its reason (spec/mutants.toml).

    [[judgement]]
    mutant = "model.replication.partition:fetch_divergence:compare:0"
    before = "last_fetched_epoch < 0"     # must still be the mutant's: else the judgement is stale
    after = "last_fetched_epoch <= 0"
    verdict = "equivalent"                # equivalent | availability | safe | gap
    reason = "..."

`equivalent`: no behaviour of the protocol changes (the reason argues it); `availability`: only
progress is lost, no safety property can break; `safe`: behaviour changes, but only in ways no
safety property depends on (it removes behaviours, adds a fault the protocol tolerates, or moves
only what decides when an election starts; the reason gives the argument); `gap`: a real mistake
the gate's rows miss (the reason says which configuration would catch it). Equivalent,
availability and safe judgements take a survivor out of the safety kill rate's denominator; a gap
stays in it.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from checker.config import ConfigError

VERDICTS = ("equivalent", "availability", "safe", "gap")
EXCUSED = ("equivalent", "availability", "safe")  # verdicts that leave the safety kill rate's denominator
_KEYS = ("mutant", "before", "after", "verdict", "reason")


@dataclass(frozen=True)
class Judgement:
    mutant: str
    before: str
    after: str
    verdict: str
    reason: str


def default_path(gate_file: Path) -> Path:
    """mutants.toml beside the gate file (spec/ in the repo, the installed copy otherwise)."""
    return gate_file.parent / "mutants.toml"


def load(path: Path) -> list[Judgement]:
    from checker.config import read_toml

    table = read_toml(str(path))
    unknown = sorted(set(table) - {"judgement"})
    if unknown:
        raise ConfigError(f"{path}: unknown top-level key(s) {', '.join(unknown)} (expected [[judgement]] tables)")
    entries = table.get("judgement", [])
    if not isinstance(entries, list):
        raise ConfigError(f"{path}: 'judgement' must be an array of tables ([[judgement]])")
    out: list[Judgement] = []
    seen: set[str] = set()
    for i, e in enumerate(entries, 1):
        where = f"{path}: judgement {i}"
        if not isinstance(e, dict):
            raise ConfigError(f"{where}: not a table")
        extra = sorted(set(e) - set(_KEYS))
        missing = [k for k in _KEYS if k not in e]
        if extra or missing:
            raise ConfigError(f"{where}: " + "; ".join(
                ([f"unknown key(s) {', '.join(extra)}"] if extra else [])
                + ([f"missing key(s) {', '.join(missing)}"] if missing else [])))
        if any(not isinstance(e[k], str) or not e[k].strip() for k in _KEYS):
            raise ConfigError(f"{where}: every key must be a non-empty string")
        if e["verdict"] not in VERDICTS:
            raise ConfigError(f"{where}: verdict {e['verdict']!r} is not one of {', '.join(VERDICTS)}")
        if e["mutant"] in seen:
            raise ConfigError(f"{where}: mutant {e['mutant']} is judged twice")
        seen.add(e["mutant"])
        out.append(Judgement(*(e[k].strip() if k != "reason" else " ".join(e[k].split()) for k in _KEYS)))
    return out


def match(judgements: Sequence[Judgement], mutants: Mapping[str, Any], model_package: str
          ) -> tuple[dict[str, Judgement], list[str]]:
    """The judgements that apply (by mutant id) and one line per stale judgement of this model:
    its mutant is gone, or no longer changes `before` into `after`."""
    applied: dict[str, Judgement] = {}
    stale: list[str] = []
    for j in judgements:
        if not j.mutant.startswith((model_package + ".", model_package + ":")):
            continue
        m = mutants.get(j.mutant)
        if m is None:
            stale.append(f"{j.mutant}: no such mutant any more")
        elif (m.before, m.after) != (j.before, j.after):
            stale.append(f"{j.mutant}: judged `{j.before}` -> `{j.after}`, the mutant is now `{m.before}` -> `{m.after}`")
        else:
            applied[j.mutant] = j
    return applied, stale
