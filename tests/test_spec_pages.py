"""spec/<model>.md stays true to the code: its configuration table lists every key with its
default and range, and it names every variant, invariant and sometimes-property."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from checker.config import load_config
from model import definition

ROOT = Path(__file__).resolve().parents[1]


def config_rows(model: str) -> list[str]:
    """The rows the spec's configuration table must contain, as the code defines the keys."""
    rows = []
    for k in definition(model).config_keys:
        default = json.dumps(k.default)
        rng = "true/false" if k.type is bool else f"{k.min}..{k.max}"
        rows.append(f"| `{k.name}` | {default} | {rng} | {k.doc} |")
    return rows


@pytest.mark.parametrize("model", ["replication", "kraft"])
def test_config_table_matches_the_keys(model: str) -> None:
    text = (ROOT / "spec" / f"{model}.md").read_text()
    missing = [row for row in config_rows(model) if row not in text.splitlines()]
    assert not missing, "spec config table out of date; expected rows:\n" + "\n".join(missing)


@pytest.mark.parametrize("model", ["replication", "kraft"])
def test_spec_names_every_variant_and_property(model: str) -> None:
    text = (ROOT / "spec" / f"{model}.md").read_text()
    d = definition(model)
    names = [v.name for v in d.variants] + [p.name for p in d.build(load_config(d), d.variants[0].name).properties]
    assert [n for n in names if f"`{n}`" not in text] == []
