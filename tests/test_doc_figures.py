"""Figures are stated once, with the machine and the date, and linked to; user pages and code
comments carry no word from the project's own history (a numbered milestone)."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIGURES = "spec/replication.md#presets-and-measured-figures"
TIME = re.compile(r"\b\d+(?:\.\d+)? ?(?:s|seconds?|minutes?|min)\b|\b(?:one|two|three|four|five) minutes\b")


def _pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "spec").glob("*.md"))]


def _sources() -> list[Path]:
    return [p for d in ("checker", "model", "tests", "bench") for p in sorted((ROOT / d).rglob("*.py"))]


def test_no_internal_milestones() -> None:
    pattern = re.compile(r"\bstop \d+\b", re.IGNORECASE)
    found = [f"{p.relative_to(ROOT)}:{n}: {line.strip()}" for p in _pages() + _sources()
             for n, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    assert not found, "internal milestone words in user-facing text:\n" + "\n".join(found)


def test_readme_and_quickstart_link_to_the_figures_instead_of_stating_times() -> None:
    for name in ("README.md", "docs/quickstart.md"):
        text = (ROOT / name).read_text()
        assert FIGURES in text, f"{name} does not link to {FIGURES}"
        prose = "\n".join(line for line in text.splitlines() if "every 5 seconds" not in line)  # an interval
        assert not TIME.findall(prose), f"{name} states times of its own: {TIME.findall(prose)}"


def test_the_figures_say_when_and_where() -> None:
    text = (ROOT / "spec" / "replication.md").read_text()
    section = text.split("### Presets and measured figures", 1)[1].split("\n### ", 1)[0]
    assert re.search(r"measured on \d{4}-\d{2}-\d{2}", section) and "cores" in section
    assert "| `default` |" in section and "| `one-crash` |" in section


def test_links_to_anchors_resolve() -> None:
    """Every `page.md#anchor` link in README and docs/ names a heading of that page."""
    def anchors(page: Path) -> set[str]:
        heads = [line.lstrip("#").strip() for line in page.read_text().splitlines() if line.startswith("#")]
        return {re.sub(r"[^a-z0-9 -]", "", h.lower()).replace(" ", "-") for h in heads}

    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target, anchor in re.findall(r"\]\(([^)#\s]+\.md)#([^)\s]+)\)", page.read_text()):
            linked = (page.parent / target).resolve()
            assert linked.is_file(), f"{page.name}: {target} does not exist"
            assert anchor in anchors(linked), f"{page.name}: no heading for #{anchor} in {target}"


def test_the_gate_pages_count_the_gate_files_rows() -> None:
    """docs/gate.md and spec/variants.md give the number of rows of the repo's gate file, and gate.md's
    synopsis every option `kcheck gate` has."""
    from collections import Counter

    from checker import cli
    from checker.gate.gate import load_gate

    rows = load_gate(ROOT / "spec" / "gate.toml")
    per_model = Counter(r.model for r in rows)
    page = (ROOT / "docs" / "gate.md").read_text()
    assert (f"The repo's gate has {len(rows)} rows ({per_model['replication']} of the replication model,"
            f" {per_model['kraft']} of kraft;") in page
    assert f"Whole gate, all {len(rows)} rows" in (ROOT / "spec" / "variants.md").read_text()
    synopsis = page.split("```", 2)[1]
    options = [a.option_strings[0] for a in cli.commands.build_parser("gate")._subparsers._group_actions[0]  # type: ignore
               .choices["gate"]._actions if a.option_strings and a.option_strings[0] != "-h"]
    assert options and all(o in synopsis for o in options), [o for o in options if o not in synopsis]


def test_mutate_md_counts_the_mutants_there_are() -> None:
    from checker.gate.mutation.analysis import all_mutants, target_of

    kraft, replication = (len(all_mutants(target_of(m))) for m in ("kraft", "replication"))
    text = " ".join((ROOT / "docs" / "mutate.md").read_text().split())
    assert f"now gives {kraft:,} kraft mutants and {replication:,} replication mutants" in text
