"""`kcheck render` and `--html`: a counterexample as one self-contained HTML page (checker/view/page.py),
checked as data and, where Chromium is installed, in the browser (tests/browser.py)."""
from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "tests"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from browser import Browser, find_chromium  # noqa: E402
from checker.traces import itf  # noqa: E402
from checker.cli.commands import main  # noqa: E402
from checker.view.page import page_data, parse_action  # noqa: E402
from checker.traces.replay import trace_config  # noqa: E402

TRACES = ROOT / "traces"
K8 = TRACES / "kraft" / "no-check-quorum.itf.json"
R1 = TRACES / "replication" / "truncate-to-hw.itf.json"
CHROMIUM = find_chromium()
if CHROMIUM is None and os.environ.get("KCHECK_REQUIRE_BROWSER"):  # .ci/run: the browser tests must run
    raise RuntimeError("KCHECK_REQUIRE_BROWSER is set but no Chromium is installed (apt-get install chromium)")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (Debian: apt-get install"
                                    " chromium); the page is checked as data only")


def page_json(path: Path) -> dict[str, Any]:
    """The data a written page carries."""
    text = path.read_text()
    raw = re.search(r'<script id="kcheck-data" type="application/json">(.*?)</script>', text, re.S)
    assert raw is not None
    return json.loads(raw.group(1).replace("<\\/", "</"))


def data_of(trace: Path) -> dict[str, Any]:
    doc = itf.load(str(trace))
    model = trace_config(doc, str(trace)).build()
    return page_data(itf.steps(doc), model.timeline, title="t", meta={}, loop=doc.get("loop"))


# --- the page's data ----------------------------------------------------------------------------


def test_an_action_repr_is_parsed_not_evaluated():
    assert parse_action("HandleFetch(request=FetchRequest(follower=0, leader=1, leader_epoch=-1))") == (
        "HandleFetch", {"request": {"follower": 0, "leader": 1, "leader_epoch": -1}})
    assert parse_action("Produce(leader=0, value=2)") == ("Produce", {"leader": 0, "value": 2})
    assert parse_action("__import__('os').system('true')") == ("", {})
    assert parse_action("not an action (") == ("", {})


def test_the_lasso_draws_its_messages_faults_and_cycle():
    d = data_of(K8)
    assert d["lanes"] == ["voter 0", "voter 1", "client"] and d["loop"] == 6
    rows = d["rows"]
    assert [r["lane"] for r in rows[1:4]] == ["voter 0", "voter 1", "voter 0"]
    assert [r["step"] for r in rows if r["fault"]] == [6]  # CutLink
    delivered = [a for a in d["arrows"] if a["to_step"] is not None and not a["lost"]]
    assert {(a["from_step"], a["from"], a["to_step"], a["to"], a["label"]) for a in delivered} >= {
        (1, "voter 0", 2, "voter 1", "VoteRequest"), (2, "voter 1", 3, "voter 0", "VoteResponse")}
    assert [a["label"] for a in d["arrows"] if a["to_step"] is None] == ["BeginQuorumEpochRequest"]  # held by the cut
    assert rows[7]["changes"] and all(c.startswith("nodes[1]") for c in rows[7]["changes"])


def test_a_message_that_is_dropped_ends_in_a_cross():
    doc = itf.load(str(K8))
    model = trace_config(doc, str(K8)).build()
    steps = itf.steps(doc)[:6]
    s = model.init_states()[0]
    for action, _ in steps[1:]:
        s = next(model.next_state(s, a) for a in model.actions(s) if repr(a) == action)
    drop = next(a for a in model.actions(s) if type(a).__name__ == "DropMessage")
    t = model.next_state(s, drop)
    d = page_data(steps + [(repr(drop), model.to_json(t))], model.timeline, title="t", meta={})
    last = [a for a in d["arrows"] if a["to_step"] == 6]
    assert [(a["label"], a["lost"]) for a in last] == [("BeginQuorumEpochRequest", True)]
    assert d["rows"][6]["fault"]


# --- the commands -------------------------------------------------------------------------------


def test_render_writes_a_self_contained_page(tmp_path, capsys):
    out = tmp_path / "r1.html"
    assert main(["render", str(R1), "--html", str(out)]) == 0
    text = out.read_text()
    assert "<script src" not in text and "http://" not in text.replace("http://www.w3.org/2000/svg", "")
    d = page_json(out)
    assert d["property"]["name"] == "candidate_completeness"
    assert "value 0 acked at offset 0" in d["property"]["witness"]  # the replay found the model's state
    assert len(d["rows"]) == len(json.loads(R1.read_text())["states"])
    assert "replication_factor=0 (every broker)" in d["meta"]["config_text"]


def test_render_rejects_bad_input_in_one_line(tmp_path, capsys):
    assert main(["render", str(tmp_path / "missing.json"), "--html", str(tmp_path / "x.html")]) == 2
    assert main(["render", str(R1), "--html", str(tmp_path / "no" / "such" / "dir.html")]) == 2
    err = capsys.readouterr().err
    assert err.count("kcheck: error:") == 2 and "Traceback" not in err


def test_check_replay_and_simulate_write_pages(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--model", "kraft", "--variant", "no-check-quorum", "--preset", "isolated-leader",
                 "--html", "k8.html", "--quiet"]) == 1
    assert page_json(tmp_path / "k8.html")["loop"] == 6
    assert main(["replay", str(K8), "--variant", "kafka-4.1", "--html", "k8r.html", "--quiet"]) == 1
    assert "invalid under kafka-4.1" in page_json(tmp_path / "k8r.html")["title"]
    assert main(["simulate", "--variant", "hw-ignores-min-isr", "--walks", "300", "--seed", "1",
                 "--html", "walk.html", "--quiet"]) == 1
    assert page_json(tmp_path / "walk.html")["property"]["name"] == "candidate_completeness"
    assert main(["check", "--model", "kraft", "--preset", "smoke", "--html", "none.html", "--quiet"]) == 0
    assert not (tmp_path / "none.html").exists() and "no counterexample" in capsys.readouterr().err


# --- in a real browser ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser():
    b = Browser(CHROMIUM)  # type: ignore[arg-type]
    yield b
    b.close()


@needs_chromium
def test_the_page_steps_with_keys_and_clicks(browser, tmp_path):
    out = tmp_path / "r1.html"
    assert main(["render", str(R1), "--html", str(out)]) == 0
    browser.open(out.as_uri())
    assert browser.errors == []
    # the config echo says what a special value means, as the text reports do
    meta = browser.eval("document.getElementById('meta').textContent")
    assert "replication_factor=0 (every broker)" in meta and "max_faults=2 " in meta, meta
    last = len(page_json(out)["rows"]) - 1
    assert browser.eval("kcheckSelected()") == last  # opens on the broken state
    assert browser.eval("document.getElementById('property-name').textContent") == "candidate_completeness"
    assert "value 0 acked" in browser.eval("document.getElementById('witness').textContent")
    browser.key("ArrowUp", "ArrowUp", 38)
    assert browser.eval("kcheckSelected()") == last - 1
    assert browser.eval("document.getElementById('witness').textContent") == ""
    assert browser.eval("location.hash") == f"#step={last - 1}"
    changed = browser.eval("Array.from(document.querySelectorAll('tr.changed')).map(r => r.dataset.path)")
    assert changed, "the step's changes are highlighted"
    browser.key("Home", "Home", 36)
    assert browser.eval("document.getElementById('stepinfo').dataset.step") == "0"
    box = browser.eval("(() => { const r = document.querySelector('text.action[data-step=\"3\"]')"
                       ".getBoundingClientRect(); return [r.x + 5, r.y + r.height / 2]; })()")
    browser.click(*box)
    assert browser.eval("kcheckSelected()") == 3
    browser.open(out.as_uri() + "#step=2")
    assert browser.eval("kcheckSelected()") == 2
    assert browser.errors == []


@needs_chromium
def test_a_lasso_page_marks_its_cycle(browser, tmp_path):
    out = tmp_path / "k8.html"
    assert main(["render", str(K8), "--html", str(out)]) == 0
    browser.open(out.as_uri())
    assert browser.errors == []
    assert browser.eval("document.getElementById('cycle-label').textContent") == "cycle: back to step 6"
    assert "repeat forever" in browser.eval("document.getElementById('witness').textContent")
    assert browser.eval("document.querySelectorAll('path.cross').length") == 0


# --- docs/visual.md's commands --------------------------------------------------------------------

DOC_COMMANDS = [  # (command as docs/visual.md shows it, its exit code, the page it writes)
    ("kcheck check --variant truncate-to-hw --html r1.html", 1, "r1.html"),
    ("kcheck check --model kraft --variant no-check-quorum --preset isolated-leader --html k8.html"
     " --trace-out k8.itf.json", 1, "k8.html"),
    ("kcheck render k8.itf.json --html k8-again.html", 0, "k8-again.html"),
    ("kcheck replay k8.itf.json --variant kafka-4.1 --html k8-replayed.html", 1, "k8-replayed.html"),
    ("kcheck simulate --variant hw-ignores-min-isr --walks 300 --seed 1 --html walk.html", 1, "walk.html"),
    ("kcheck gate --only R1-truncate-to-hw --html-dir pages", 0, "pages/replication/truncate-to-hw.html"),
]


def test_the_doc_shows_exactly_the_tested_commands():
    text = (ROOT / "docs" / "visual.md").read_text()
    block = text.split("```\n", 2)[1]
    assert [line for line in block.splitlines() if line.startswith("kcheck ")] == [c for c, _, _ in DOC_COMMANDS]


def test_the_doc_commands_run(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for command, code, page in DOC_COMMANDS:
        args = command.split()[1:]
        got = main(args + ["--quiet"])
        out, err = capsys.readouterr()
        assert got == code, (command, out[-2000:], err[-2000:])
        assert page_json(tmp_path / page)["title"], command
    r1 = page_json(tmp_path / "r1.html")
    assert r1["property"]["name"] == "candidate_completeness" and len(r1["rows"]) == 10  # 9 steps


# --- kcheck explore ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def explorer():
    from checker.config import load_config
    from checker.view.explore import start_in_thread

    server, url = start_in_thread(load_config(model="replication", variant="truncate-to-hw", preset="default"))
    yield url
    server.shutdown()
    server.server_close()


def _post(url: str, body: Any) -> tuple[int, Any]:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_the_explorer_follows_paths_and_refuses_anything_else(explorer):
    status, d = _post(explorer + "api/state", {"init": 0, "path": []})
    assert status == 200 and d["steps"] == 0 and d["actions"]
    first = d["actions"][0]["action"]
    status, d = _post(explorer + "api/state", {"init": 0, "path": [first]})
    assert status == 200 and d["steps"] == 1 and d["path"][1]["action"] == first
    assert _post(explorer + "api/state", {"init": 0, "path": ["__import__('os').system('true')"]})[0] == 409
    assert _post(explorer + "api/state", {"init": 7, "path": []})[0] == 400
    assert _post(explorer + "api/state", {"path": "Produce(leader=0, value=0)"})[0] == 400
    assert _post(explorer + "api/nothing", {})[0] == 404
    assert _post(explorer + "api/trace", {"itf": "{"})[0] == 400


def test_a_pasted_trace_reaches_its_broken_state_and_downloads_again(explorer):
    doc = json.loads(R1.read_text())
    status, r = _post(explorer + "api/trace", {"itf": R1.read_text()})
    assert status == 200 and len(r["path"]) == len(doc["states"]) - 1
    status, d = _post(explorer + "api/state", r)
    broken = [p["name"] for p in d["properties"] if p["kind"] == "always" and not p["holds"]]
    assert status == 200 and broken == ["candidate_completeness"]
    status, again = _post(explorer + "api/itf", r)
    assert status == 200 and [s["mbt::actionTaken"] for s in again["states"][1:]] == r["path"]


@needs_chromium
def test_the_explorer_reaches_r1_by_clicks(browser, explorer):
    """From the initial state, click the actions of R1's trace one by one: the page shows the
    invariant broken at the end, and back goes back."""
    doc = json.loads(R1.read_text())
    _, r = _post(explorer + "api/trace", {"itf": R1.read_text()})
    browser.open(explorer)
    browser.eval("new Promise(r => setTimeout(r, 300))")
    assert browser.errors == []
    for step, action in enumerate(r["path"], start=1):
        found = browser.eval("(() => { const b = Array.from(document.querySelectorAll('button.action'))"
                             f".find(b => b.dataset.action === {json.dumps(action)}); if (!b) return null;"
                             " const r = b.getBoundingClientRect(); b.scrollIntoView({block: 'center'});"
                             " const q = b.getBoundingClientRect(); return [q.x + 8, q.y + q.height / 2]; })()")
        assert found is not None, f"step {step}: no button for {action}"
        browser.click(*found)
        browser.eval("new Promise(r => { const t = Date.now(); (function w() { if (kcheckPath().length >= "
                     f"{step} || Date.now() - t > 5000) r(); else setTimeout(w, 20); }})(); }})")
        assert browser.eval("kcheckPath().length") == step
    bad = browser.eval("Array.from(document.querySelectorAll('#invariants li[data-holds=false]'))"
                       ".map(li => li.dataset.property)")
    assert bad == ["candidate_completeness"] and len(r["path"]) == len(doc["states"]) - 1
    assert "value 0 acked" in browser.eval("document.getElementById('invariants').textContent")
    browser.key("Backspace", "Backspace", 8)
    browser.eval("new Promise(r => setTimeout(r, 500))")
    assert browser.eval("kcheckPath().length") == len(r["path"]) - 1
    assert browser.eval("document.querySelectorAll('#invariants li[data-holds=false]').length") == 0
    assert browser.errors == []


def test_the_explore_doc_command_serves_on_loopback_and_stops_on_sigterm(tmp_path):
    """docs/visual.md's `kcheck explore` command, as written, in its own process."""
    import signal
    import subprocess
    import urllib.request

    text = (ROOT / "docs" / "visual.md").read_text()
    commands = [line for line in text.splitlines() if line.startswith("kcheck explore")]
    assert commands == ["kcheck explore --variant truncate-to-hw"]
    proc = subprocess.Popen([sys.executable, "-c", "import sys; from checker.cli import main; sys.exit(main())",
                             *commands[0].split()[1:]], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        url = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert url is not None, line
        with urllib.request.urlopen(url.group(0), timeout=30) as r:
            assert r.status == 200 and b"kcheck explore: replication truncate-to-hw" in r.read()
        status, d = _post(url.group(0) + "api/state", {"init": 0, "path": []})
        assert status == 200 and d["actions"]
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    assert "Traceback" not in proc.stderr.read()  # type: ignore[union-attr]


def test_a_partial_trace_draws_with_what_it_does_not_record_marked(tmp_path, capsys):
    doc = json.loads(K8.read_text())
    for state in doc["states"][1:]:
        del state["network"], state["history"]
    partial = tmp_path / "partial.itf.json"
    partial.write_text(json.dumps(doc))
    out = tmp_path / "partial.html"
    assert main(["replay", str(partial), "--quiet"]) == 0  # replay accepts it
    assert main(["render", str(partial), "--html", str(out), "--quiet"]) == 0
    d = page_json(out)
    assert d["rows"][0]["recorded"] is None
    assert all("network" not in r["recorded"] and "nodes" in r["recorded"] for r in d["rows"][1:])
    assert not [a for a in d["arrows"] if a["from_step"] > 0]  # no message is known after step 0
