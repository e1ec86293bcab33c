"""The search's memory layout and its run directory: the compact visited set, the parent-link
files, the queue that spills to disk, checkpoints, and runs killed at random points that resume
to the result an uninterrupted run gives (docs/performance.md)."""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from array import array
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker.search import visited
from checker.search.run import explore
from checker.search.checkpoint import CheckpointError
from checker.config import load_config
from checker.search.frontier import Frontier
from checker.search.levels import ParentLinks
from checker.search.parallel import available

ROOT = Path(__file__).resolve().parents[1]
MASK = (1 << 64) - 1
fingerprints = st.integers(min_value=-(1 << 63), max_value=MASK)


# ---- the visited set ----------------------------------------------------------------------

def test_the_compiled_set_is_installed() -> None:
    """The package builds checker/_fpset.c; without it memory per state is four times larger."""
    assert visited.COMPILED, "checker._fpset was not built: is a C compiler missing?"


@settings(max_examples=60, deadline=None)
@given(st.lists(fingerprints, max_size=3000), st.lists(fingerprints, max_size=300), st.integers(-1, 50))
def test_the_compiled_set_agrees_with_a_python_set(adds: list[int], batch: list[int], room: int) -> None:
    ours, ref = visited.FPSet(), visited.PyFPSet()
    model: set[int] = set()
    for fp in adds:
        assert ours.add(fp) == ref.add(fp) == (fp & MASK not in model)
        model.add(fp & MASK)
    assert len(ours) == len(ref) == len(model)
    assert ours.digest == ref.digest == sum(model) % (1 << 64)
    assert all(fp in ours for fp in adds)
    fps = array("Q", [fp & MASK for fp in batch])
    parents = array("Q", range(len(batch)))
    got = ours.insert_batch(fps.tobytes(), parents.tobytes(), room)
    assert got == ref.insert_batch(fps.tobytes(), parents.tobytes(), room)
    mask, pairs, full = got
    expected_new: list[int] = []
    for fp in fps:
        if fp not in model and fp not in expected_new:
            if 0 <= room == len(expected_new):
                assert full
                break
            expected_new.append(fp)
    assert list(array("Q", pairs)[::2]) == expected_new
    assert sum(mask) == len(expected_new)


def test_the_visited_set_holds_at_most_16_bytes_a_state() -> None:
    s = visited.FPSet()
    rng = random.Random(7)
    for n in (1_000, 10_000, 100_000, 1_000_000):
        while len(s) < n:
            s.add(rng.getrandbits(64))
        assert s.nbytes / len(s) <= 16, (n, s.nbytes / len(s))


# ---- parent links and the queue -----------------------------------------------------------

def test_a_chain_is_read_back_from_the_link_files(tmp_path: Path) -> None:
    links = ParentLinks(tmp_path)
    links.add(0, 11, 0)
    links.add(0, 12, 0)
    links.add_pairs(1, array("Q", [21, 12, 22, 11]).tobytes())
    for i in range(5000):  # more than one block of a scan, with the parent's value as a fingerprint too
        links.add(2, 1000 + i, 21 if i % 2 else 22)
    links.add(2, 21, 22)  # 21 again, as a fingerprint of a later level: the chain must not take it
    assert links.chain(1001, 2) == [12, 21, 1001]
    assert links.chain(1000, 2) == [11, 22, 1000]
    rebuilt = visited.FPSet()
    assert links.load_into(rebuilt, 2) == 4
    with pytest.raises(LookupError):
        links.parent(99, 1)


@settings(max_examples=40, deadline=None)
@given(ops=st.lists(st.one_of(st.tuples(st.just("append"), st.integers(1, 300)),
                              st.tuples(st.just("pop"), st.integers(0, 400))), max_size=12),
       keep=st.integers(1, 50))
def test_a_queue_that_spills_keeps_its_order(tmp_path_factory, ops: list[tuple[str, int]], keep: int) -> None:
    where = tmp_path_factory.mktemp("q")
    q = Frontier(where / "spill.bin", keep)
    model: list[int] = []
    counter = 0
    for op, n in ops:
        if op == "append":
            for _ in range(n):
                q.append(counter)
                model.append(counter)
                counter += 1
        else:
            got = q.pop_last(n)
            want = model[len(model) - min(n, len(model)):]
            del model[len(model) - len(want):]
            assert got == want
        assert len(q) == len(model)
    assert list(q) == model
    q.save(where / "saved.bin")
    assert list(Frontier.load(where / "saved.bin")) == model
    q.close()
    assert not (where / "spill.bin").exists()


# ---- whole searches -------------------------------------------------------------------------

def _fields(r) -> tuple:
    trace = None if r.violation is None else [(repr(a), s) for a, s in r.violation["trace"]]
    return (r.result, r.distinct_states, r.states_generated, r.depth, r.action_counts, r.reached,
            r.unreached, trace)


@pytest.mark.parametrize("workers", [1, 2] if available() else [1])
@pytest.mark.parametrize("variant", ["kafka-4.1", "hw-without-maximal-isr"])
def test_spilling_and_checkpoints_change_no_result(tmp_path: Path, workers: int, variant: str) -> None:
    model = load_config(model="replication", variant=variant, preset="smoke").build()
    plain = explore(model, workers=workers)
    stored = explore(model, workers=workers, run_dir=tmp_path / "run", checkpoint_every=1e-9, keep=64)
    assert _fields(stored) == _fields(plain)
    assert stored.digest == plain.digest or plain.result != "ok"
    assert (tmp_path / "run" / "checkpoint.json").exists()
    assert not list((tmp_path / "run").glob("spill-*"))


def test_a_run_directory_in_use_is_refused(tmp_path: Path) -> None:
    model = load_config(model="kraft", preset="smoke").build()
    explore(model, run_dir=tmp_path, checkpoint_every=1e-9)
    with pytest.raises(CheckpointError, match="not empty"):
        explore(model, run_dir=tmp_path)
    other = load_config(model="kraft", preset="smoke", overrides={"max_log": 3}).build()
    with pytest.raises(CheckpointError, match="max_log"):
        explore(other, run_dir=tmp_path, resume=True, identity=None, checkpoint_every=1e-9)


def _kcheck(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "checker.cli", *argv], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=600)


def _comparable(report: dict) -> dict:
    keep = ("result", "distinct_states", "states_generated", "depth", "action_counts", "unreached",
            "never_enabled", "violation", "config", "variant", "model")
    return {k: report[k] for k in keep}


KILLED = [  # (arguments, kills): a passing preset and a shortest counterexample, on 1 and 2 workers
    (["--preset", "smoke", "--workers", "2"], 3),
    (["--preset", "smoke", "--variant", "hw-without-maximal-isr", "--workers", "1"], 2),
]


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc")
@pytest.mark.parametrize("argv,kills", KILLED)
def test_a_run_killed_at_random_points_resumes_to_the_same_result(tmp_path: Path, argv: list[str],
                                                                  kills: int) -> None:
    common = ["--json", "--quiet", "--no-liveness"]
    whole = _kcheck("check", *argv, *common, cwd=tmp_path)
    assert whole.returncode in (0, 1), whole.stderr
    expected = json.loads(whole.stdout)
    seconds = expected["seconds"]
    run = tmp_path / "run"
    rng = random.Random(f"{argv}")  # seeded: the same kill points on every run of the test
    first = ["check", *argv, *common, "--run-dir", str(run), "--checkpoint-every", "0.05", "--memory-states", "500"]
    for k in range(kills):
        cmd = first if k == 0 else ["check", "--resume", str(run), *common, "--checkpoint-every", "0.05",
                                    "--memory-states", "500"]
        proc = subprocess.Popen([sys.executable, "-m", "checker.cli", *cmd], cwd=tmp_path,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env={**os.environ, "PYTHONPATH": str(ROOT)})
        time.sleep(0.8 + rng.random() * max(seconds, 1.0))  # imports take most of a second
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)  # as a killed machine: no handler runs
        proc.wait()
        if not (run / "checkpoint.json").exists():  # killed before its first checkpoint: start again
            for p in run.iterdir():
                p.unlink()
            run.rmdir()
    if (run / "checkpoint.json").exists():
        resumed = _kcheck("check", "--resume", str(run), *common, cwd=tmp_path)
    else:
        resumed = _kcheck(*first, cwd=tmp_path)
    assert resumed.returncode == whole.returncode, resumed.stderr
    assert _comparable(json.loads(resumed.stdout)) == _comparable(expected)


@pytest.mark.skipif(not available() or not Path("/proc").is_dir(), reason="needs fork and /proc")
def test_ctrl_c_stops_with_a_partial_result_and_the_run_goes_on(tmp_path: Path) -> None:
    run = tmp_path / "run"
    argv = ["check", "--preset", "smoke", "--workers", "2", "--json", "--no-liveness", "--run-dir", str(run),
            "--checkpoint-every", "0.05"]
    proc = subprocess.Popen([sys.executable, "-m", "checker.cli", *argv], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    deadline = time.monotonic() + 60
    while not (run / "checkpoint.json").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    if proc.returncode == 0:
        pytest.skip("the run ended before Ctrl-C arrived")
    assert proc.returncode == 3, err
    assert "Traceback" not in err
    assert json.loads(out)["interrupted"] is True
    assert f"--resume {run}" in err
    resumed = _kcheck("check", "--resume", str(run), "--json", "--no-liveness", cwd=tmp_path)
    whole = _kcheck("check", "--preset", "smoke", "--json", "--no-liveness", cwd=tmp_path)
    assert resumed.returncode == whole.returncode == 0, resumed.stderr
    assert _comparable(json.loads(resumed.stdout)) == _comparable(json.loads(whole.stdout))


def test_bad_run_directories_are_one_line_errors(tmp_path: Path) -> None:
    missing = _kcheck("check", "--resume", str(tmp_path / "nowhere"), cwd=tmp_path)
    assert missing.returncode == 2 and "no such directory" in missing.stderr and "Traceback" not in missing.stderr
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("")
    busy = _kcheck("check", "--preset", "smoke", "--run-dir", str(tmp_path / "full"), cwd=tmp_path)
    assert busy.returncode == 2 and "not empty" in busy.stderr and "Traceback" not in busy.stderr
    empty = _kcheck("check", "--resume", str(tmp_path / "full"), cwd=tmp_path)
    assert empty.returncode == 2 and "no checkpoint" in empty.stderr
    run = tmp_path / "run"
    done = _kcheck("check", "--model", "kraft", "--preset", "smoke", "--workers", "1", "--run-dir", str(run),
                   "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    other = _kcheck("check", "--resume", str(run), "--model", "kraft", "--preset", "smoke", "--set", "max_log=3",
                    cwd=tmp_path)
    assert other.returncode == 2 and "max_log" in other.stderr and "Traceback" not in other.stderr
    workers = _kcheck("check", "--resume", str(run), "--workers", "2", cwd=tmp_path)
    assert workers.returncode == 2 and "--workers 1" in workers.stderr
    (run / "links-0000.bin").write_bytes(b"")
    damaged = _kcheck("check", "--resume", str(run), cwd=tmp_path)
    assert damaged.returncode == 2 and "damaged" in damaged.stderr and "Traceback" not in damaged.stderr


def test_the_commands_of_docs_performance_md_run_as_shown(tmp_path: Path) -> None:
    """docs/performance.md's run-directory example: stopped by --timeout (or done), then resumed."""
    page = (ROOT / "docs" / "performance.md").read_text()
    block = page.split("## Run directories: checkpoint and resume", 1)[1].split("\n\n", 2)[1]
    commands = [line.strip() for line in block.splitlines() if line.strip().startswith("kcheck ")]
    assert len(commands) == 2, commands
    first = _kcheck(*commands[0].split()[1:], "--json", cwd=tmp_path)
    assert first.returncode in (0, 3), first.stderr
    assert "Traceback" not in first.stderr
    if first.returncode == 3:
        assert json.loads(first.stdout)["interrupted"] is True
        assert "kcheck check --resume smoke-run" in first.stderr
    second = _kcheck(*commands[1].split()[1:], "--json", cwd=tmp_path)
    plain = _kcheck("check", "--preset", "smoke", "--json", cwd=tmp_path)
    assert second.returncode == plain.returncode == 0, second.stderr
    assert _comparable(json.loads(second.stdout)) == _comparable(json.loads(plain.stdout))


def test_a_run_directory_that_cannot_hold_files_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a directory")
    p = _kcheck("check", "--preset", "smoke", "--run-dir", str(tmp_path / "file" / "run"), cwd=tmp_path)
    assert p.returncode == 2 and "cannot keep the search's files in --run-dir" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc")
def test_a_benchmark_run_stopped_by_sigterm_prints_its_figures_and_goes_on(tmp_path: Path) -> None:
    """bench/bench_check.py: SIGTERM gives the partial figures, --resume the whole run's; the
    CLI refuses the directory in one line, since the script records no configuration."""
    run = tmp_path / "run"
    bench = [sys.executable, str(ROOT / "bench" / "bench_check.py"), "--preset", "smoke"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([*bench, "--run-dir", str(run), "--checkpoint-every", "0"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 60
    while not (run / "checkpoint.json").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "Traceback" not in err, err
    partial = json.loads(out)
    if not partial["interrupted"]:
        pytest.skip("the run ended before SIGTERM arrived")
    assert partial["result"] == "incomplete" and partial["distinct_states"] > 0
    cli = _kcheck("check", "--resume", str(run), cwd=tmp_path)
    assert cli.returncode == 2 and "bench_check.py --resume" in cli.stderr and "Traceback" not in cli.stderr
    resumed = subprocess.run([*bench, "--resume", str(run)], cwd=tmp_path, capture_output=True, text=True,
                             env=env, timeout=600)
    whole = _kcheck("check", "--preset", "smoke", "--json", "--no-liveness", "--quiet", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    got, expected = json.loads(resumed.stdout), json.loads(whole.stdout)
    assert (got["result"], got["distinct_states"], got["depth"]) == ("ok", expected["distinct_states"],
                                                                     expected["depth"])


def test_a_benchmark_run_reports_progress_and_spills_its_queue_by_default(tmp_path: Path) -> None:
    """bench/bench_check.py keeps 1,000,000 states a level in memory unless told (as kcheck check),
    prints kcheck's progress lines on stderr, and a small --memory-states gives the same search."""
    bench = [sys.executable, str(ROOT / "bench" / "bench_check.py"), "--preset", "smoke"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    assert "default 1,000,000" in subprocess.run([*bench, "--help"], capture_output=True, text=True, env=env).stdout
    spilled = subprocess.run([*bench, "--memory-states", "500", "--progress", "0.5"], cwd=tmp_path,
                             capture_output=True, text=True, env=env, timeout=600)
    assert spilled.returncode == 0, spilled.stderr
    assert any(line.startswith("kcheck: ") and "states/s" in line for line in spilled.stderr.splitlines())
    quiet = subprocess.run([*bench, "--progress", "0"], cwd=tmp_path, capture_output=True, text=True, env=env,
                           timeout=600)
    assert quiet.returncode == 0 and "kcheck: " not in quiet.stderr
    a, b = json.loads(spilled.stdout), json.loads(quiet.stdout)
    assert (a["result"], a["distinct_states"], a["depth"]) == (b["result"], b["distinct_states"], b["depth"]) == \
        ("ok", 56_775, 28)


# ---- a damaged run directory: one line, exit 2, every file as it was -----------------------

def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1:]


def _damage(run: Path, how: str) -> None:
    meta = run / "checkpoint.json"
    cp = json.loads(meta.read_text())
    frontier = max((run / name for name in cp["frontiers"]), key=lambda p: p.stat().st_size)
    data = frontier.read_bytes()
    if how == "checkpoint []":
        meta.write_text("[]")
    elif how == "checkpoint not JSON":
        meta.write_text(meta.read_text()[:40])
    elif how == "checkpoint without a field":
        del cp["distinct"]
        meta.write_text(json.dumps(cp))
    elif how == "checkpoint level a string":
        cp["level"] = str(cp["level"])
        meta.write_text(json.dumps(cp))
    elif how == "checkpoint frontiers a path":
        cp["frontiers"] = ["../checkpoint.json"] * len(cp["frontiers"])
        meta.write_text(json.dumps(cp))
    elif how == "checkpoint counts too few":
        cp["worker_counts"] = []
        meta.write_text(json.dumps(cp))
    elif how == "frontier cut in its header":
        frontier.write_bytes(data[:10])
    elif how == "frontier cut in its block":
        frontier.write_bytes(data[:len(data) - 7])
    elif how == "frontier emptied":
        frontier.write_bytes(b"")
    elif how == "frontier pickle corrupted":
        frontier.write_bytes(_flip(data, 16 + (len(data) - 16) // 2))
    elif how == "frontier state changed":  # still a pickle: a small int in a state, another int
        at = next(i for i in range(len(data) - 1, 16, -1) if data[i - 1] == ord("K") and data[i] < 3)
        frontier.write_bytes(data[:at] + bytes([data[at] + 1]) + data[at + 1:])
    elif how == "links cut short":
        links = run / f"links-{cp['level']:04d}.bin"
        links.write_bytes(links.read_bytes()[:-8])
    elif how == "links of a level missing":
        (run / "links-0003.bin").unlink()
    else:
        raise AssertionError(how)


DAMAGES = ["checkpoint []", "checkpoint not JSON", "checkpoint without a field", "checkpoint level a string",
           "checkpoint frontiers a path", "checkpoint counts too few", "frontier cut in its header",
           "frontier cut in its block", "frontier emptied", "frontier pickle corrupted", "frontier state changed",
           "links cut short", "links of a level missing"]


@pytest.fixture(scope="module")
def stopped_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    """kraft smoke runs with a checkpoint after every level, on 1 and 2 workers."""
    runs = {}
    for workers in (1, 2):
        if workers > 1 and not available():
            continue
        run = tmp_path_factory.mktemp("runs") / f"run{workers}"
        done = _kcheck("check", "--model", "kraft", "--preset", "smoke", "--workers", str(workers), "--run-dir",
                       str(run), "--checkpoint-every", "1e-9", "--quiet", "--no-liveness", cwd=run.parent)
        assert done.returncode == 0, done.stderr
        assert json.loads((run / "checkpoint.json").read_text())["level"] > 3
        runs[workers] = run
    return runs


def _digests(folder: Path) -> dict[str, str]:
    import hashlib

    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("how", DAMAGES)
def test_a_damaged_run_directory_is_refused_as_it_is(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    stopped_runs: dict[int, Path], workers: int, how: str) -> None:
    import shutil

    from checker import cli

    if workers not in stopped_runs:
        pytest.skip("needs fork")
    run = tmp_path / "run"
    shutil.copytree(stopped_runs[workers], run)
    (run / "spill-0009-0.bin").write_bytes(b"left by a killed run")  # a resume would delete it
    _damage(run, how)
    before = _digests(run)
    code = cli.main(["check", "--resume", str(run), "--quiet", "--no-liveness"])
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert err.count("\n") == 1 and err.startswith(f"kcheck: error: --resume {run}: the run directory is damaged")
    assert "start the run again with --run-dir" in err, err
    assert _digests(run) == before


@pytest.mark.parametrize("workers", [1, 2])
def test_an_undamaged_copy_resumes_to_the_whole_result(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       stopped_runs: dict[int, Path], workers: int) -> None:
    """The checks above refuse only damage: the same directory, undamaged, goes on."""
    import shutil

    from checker import cli

    if workers not in stopped_runs:
        pytest.skip("needs fork")
    run = tmp_path / "run"
    shutil.copytree(stopped_runs[workers], run)
    (run / "spill-0009-0.bin").write_bytes(b"left by a killed run")
    assert cli.main(["check", "--resume", str(run), "--quiet", "--no-liveness", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["distinct_states"] == 515
    assert not (run / "spill-0009-0.bin").exists()
