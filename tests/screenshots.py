"""Take the screenshots docs/visual.md and README show: one replication and one KRaft
counterexample page, drawn from the traces in traces/, in headless Chromium.

    python tests/screenshots.py docs/img

Beside the images it records, in docs/img/screenshots.json, the SHA-256 of each page it
photographed; tests/test_screenshots.py draws the same pages with today's code and fails when one
differs (the page, the trace or the model changed): the screenshot would show an older page.
"""
from __future__ import annotations

import hashlib
import json
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
RECORD = "screenshots.json"  # beside the images: the digest of the page each one shows


def draw(trace: str, page: Path) -> str:
    """Draw the trace (a path under traces/) as `kcheck render` does; the page's SHA-256."""
    if main(["render", str(ROOT / "traces" / trace), "--html", str(page)]) != 0:
        raise SystemExit(f"cannot draw {trace}")
    return hashlib.sha256(page.read_bytes()).hexdigest()


def take(out_dir: Path) -> None:
    chromium = find_chromium()
    if chromium is None:
        raise SystemExit("no Chromium: apt-get install chromium")
    out_dir.mkdir(parents=True, exist_ok=True)
    browser = Browser(chromium)
    record = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for name, trace in SHOTS.items():
                page = Path(tmp) / (name + ".html")
                digest = draw(trace, page)
                browser.open(page.as_uri())
                if browser.errors:
                    raise SystemExit(f"{trace}: {browser.errors}")
                browser.screenshot(out_dir / name)
                record[name] = {"trace": f"traces/{trace}", "page_sha256": digest}
                print(f"wrote {out_dir / name}")
    finally:
        browser.close()
    (out_dir / RECORD).write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    print(f"wrote {out_dir / RECORD}")


if __name__ == "__main__":
    take(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/img"))
