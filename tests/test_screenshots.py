"""The screenshots README and docs/visual.md show are of the page kcheck draws today: each was
taken by tests/screenshots.py, which recorded the SHA-256 of the page it photographed
(docs/img/screenshots.json); the same trace drawn now must give the same page. When the page, the
trace or the model changes, this fails until the screenshots are taken again."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.screenshots import RECORD, SHOTS, draw

ROOT = Path(__file__).resolve().parents[1]
IMG = ROOT / "docs" / "img"
RETAKE = "python tests/screenshots.py docs/img"


def _record() -> dict:
    path = IMG / RECORD
    assert path.is_file(), f"docs/img/{RECORD} is missing: the screenshots' pages are not recorded; run {RETAKE}"
    return json.loads(path.read_text())


def test_every_image_the_docs_show_is_a_screenshot_the_script_takes() -> None:
    shown = {m for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
             for m in re.findall(r"\]\((?:docs/)?img/([^)\s]+)\)", page.read_text())}
    assert shown and shown <= set(SHOTS), f"not taken by tests/screenshots.py: {sorted(shown - set(SHOTS))}"
    assert set(_record()) == set(SHOTS) and all((IMG / name).is_file() for name in SHOTS)


@pytest.mark.parametrize("name", sorted(SHOTS))
def test_the_screenshot_shows_the_page_drawn_today(tmp_path: Path, name: str) -> None:
    recorded = _record()[name]
    assert recorded["trace"] == f"traces/{SHOTS[name]}"
    now = draw(SHOTS[name], tmp_path / "page.html")
    assert now == recorded["page_sha256"], (
        f"docs/img/{name} shows an older page than kcheck draws today from {recorded['trace']}; run {RETAKE}")
