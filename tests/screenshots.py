"""Take the screenshots docs/visual.md and README show: one replication and one KRaft
counterexample page, drawn from the traces in traces/, in headless Chromium.

    python tests/screenshots.py docs/img
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "tests"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from browser import Browser, find_chromium  # noqa: E402
from checker.cli.commands import main  # noqa: E402

SHOTS = {"r1-truncate-to-hw.png": "replication/truncate-to-hw.itf.json",
         "k8-no-check-quorum.png": "kraft/no-check-quorum.itf.json"}


def take(out_dir: Path) -> None:
    chromium = find_chromium()
    if chromium is None:
        raise SystemExit("no Chromium: apt-get install chromium")
    out_dir.mkdir(parents=True, exist_ok=True)
    browser = Browser(chromium)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for name, trace in SHOTS.items():
                page = Path(tmp) / (name + ".html")
                if main(["render", str(ROOT / "traces" / trace), "--html", str(page)]) != 0:
                    raise SystemExit(f"cannot draw {trace}")
                browser.open(page.as_uri())
                if browser.errors:
                    raise SystemExit(f"{trace}: {browser.errors}")
                browser.screenshot(out_dir / name)
                print(f"wrote {out_dir / name}")
    finally:
        browser.close()


if __name__ == "__main__":
    take(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/img"))
