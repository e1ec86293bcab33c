"""A search's run directory (`kcheck check --run-dir DIR`): what lets an interrupted search go on
(`--resume DIR`) and end as an uninterrupted one would, with the same result, counts and
counterexample.

    DIR/checkpoint.json      the last checkpoint: which level the saved queue holds, the counts
                             so far, and the identity of the run (model, configuration, code)
    DIR/links-LLLL.bin       parent links of level LLLL (checker/search/levels.py)
    DIR/frontier-LLLL-W.bin  the queue of worker W at the checkpoint of level LLLL (checker/search/frontier.py)
    DIR/spill-*.bin          queues past what memory keeps, while the search runs

A checkpoint is taken between two levels: every state up to level L is found and recorded in the
link files, the states of level L are saved, and `checkpoint.json` is replaced last (written to a
temporary file, fsynced, renamed), so a crash at any moment leaves the previous checkpoint whole.
A resumed search deletes what the interrupted one wrote after its last checkpoint and redoes it,
once it has checked every file the checkpoint needs (its fields, each queue file whole and each
saved state matching its fingerprint, the link files' sizes): a damaged directory is refused as
it is, with nothing deleted.
"""
from __future__ import annotations

import json
import os
import pickle
import shutil
import tempfile
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

from checker.config import ConfigError
from checker.search.frontier import blocks as frontier_blocks
from checker.search.levels import ParentLinks

META = "checkpoint.json"
FORMAT = 1


class CheckpointError(ConfigError):
    """A run directory that cannot be used as asked (the CLI prints it in one line, exit 2)."""


@dataclass
class Checkpoint:
    identity: dict[str, Any]  # what must match for a resume: model, variant, configuration, code digest
    level: int  # the saved queue holds the states of this level, not yet expanded
    distinct: int
    generated: int  # by the coordinator (initial states), without the workers'
    depth: int
    seconds: float  # spent up to this checkpoint, over every earlier part of the run
    reached: dict[str, int]
    frontiers: list[str]  # one file per worker, in worker order
    worker_generated: list[int] = field(default_factory=list)
    worker_counts: list[dict[str, int]] = field(default_factory=list)
    format: int = FORMAT

    @property
    def workers(self) -> int:
        return len(self.frontiers)


def frontier_name(level: int, worker: int) -> str:
    return f"frontier-{level:04d}-{worker}.bin"


def damaged(run_dir: Path, what: str) -> CheckpointError:
    """The error for a run directory whose files cannot be what its checkpoint says."""
    return CheckpointError(f"--resume {run_dir}: the run directory is damaged: {what}; it was left as it is;"
                           " start the run again with --run-dir on a new or empty directory")


_FIELDS = {"identity": dict, "level": int, "distinct": int, "generated": int, "depth": int, "seconds": float,
           "reached": dict, "frontiers": list, "worker_generated": list, "worker_counts": list, "format": int}


def read(run_dir: Path) -> Optional[Checkpoint]:
    """The last checkpoint in `run_dir`, or None when there is none yet (CheckpointError when it
    is not a checkpoint of this format, field by field)."""
    path = Path(run_dir) / META
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise damaged(run_dir, f"{META} cannot be read as JSON ({getattr(e, 'strerror', None) or e})") from None
    if not isinstance(data, dict):
        raise damaged(run_dir, f"{META} holds a JSON {type(data).__name__}, not a checkpoint object")
    if "format" in data and data["format"] != FORMAT:
        raise CheckpointError(f"{path}: written by another kcheck version (format {data.get('format')})")
    problem = _shape_problem(data)
    if problem:
        raise damaged(run_dir, f"{META}: {problem}")
    return Checkpoint(**{**data, "seconds": float(data["seconds"])})


def _shape_problem(data: dict[str, Any]) -> str:
    """What is wrong with the fields of a checkpoint object, or ''."""
    def number(v: Any, kind: type) -> bool:
        return not isinstance(v, bool) and (isinstance(v, kind) or (kind is float and isinstance(v, int)))

    missing = sorted(set(_FIELDS) - set(data))
    if missing:
        return f"no field {missing[0]!r}"
    extra = sorted(set(data) - set(_FIELDS))
    if extra:
        return f"unknown field {extra[0]!r}"
    for name, kind in _FIELDS.items():
        if not (number(data[name], kind) if kind in (int, float) else isinstance(data[name], kind)):
            return f"field {name!r} is {json.dumps(data[name])[:40]}, not a{'n' if kind is int else ''} {kind.__name__}"
    for name in ("level", "distinct", "generated", "depth", "seconds"):
        if data[name] < 0:
            return f"field {name!r} is negative"
    frontiers = data["frontiers"]
    if not frontiers or frontiers != [frontier_name(data["level"], w) for w in range(len(frontiers))]:
        return f"field 'frontiers' does not name the queue files of level {data['level']}"
    for name in ("worker_generated", "worker_counts"):
        if len(data[name]) != len(frontiers):
            return f"field {name!r} has {len(data[name])} entries for {len(frontiers)} worker(s)"
    if not all(number(n, int) for n in data["worker_generated"]):
        return "field 'worker_generated' holds a value that is not an integer"
    for counts in [data["reached"], *data["worker_counts"]]:
        if not isinstance(counts, dict) or not all(isinstance(k, str) and number(v, int) for k, v in counts.items()):
            return "a count that is not a name and an integer"
    return ""


def write(run_dir: Path, cp: Checkpoint) -> None:
    """Replace the checkpoint, atomically; then delete queue files no checkpoint names."""
    run_dir = Path(run_dir)
    tmp = run_dir / (META + ".tmp")
    with open(tmp, "w") as f:
        json.dump(asdict(cp), f, indent=1, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, run_dir / META)
    _sync_dir(run_dir)
    keep = set(cp.frontiers)
    for p in run_dir.glob("frontier-*.bin"):
        if p.name not in keep:
            p.unlink()


def prepare(run_dir: Path, resume: bool, identity: dict[str, Any]) -> Optional[Checkpoint]:
    """Check `run_dir` for a new search (it must hold no run) or a resumed one (its checkpoint must
    be of this run); for a resume, delete what was written after the checkpoint."""
    run_dir = Path(run_dir)
    if not resume:
        if run_dir.exists() and any(run_dir.iterdir()):
            raise CheckpointError(f"--run-dir {run_dir}: not empty; continue its run with --resume {run_dir},"
                                  " or give a new directory")
        run_dir.mkdir(parents=True, exist_ok=True)
        return None
    if not run_dir.is_dir():
        raise CheckpointError(f"--resume {run_dir}: no such directory")
    cp = read(run_dir)
    if cp is None:
        raise CheckpointError(f"--resume {run_dir}: no checkpoint in it yet (the run stopped before its first);"
                              f" start again with --run-dir on an empty directory")
    differ = sorted(k for k in set(cp.identity) | set(identity) if cp.identity.get(k) != identity.get(k))
    if differ:
        raise CheckpointError(f"--resume {run_dir}: the run there differs from this one in "
                              + ", ".join(f"{k} ({cp.identity.get(k)!r} there, {identity.get(k)!r} here)"
                                          if k != "code" else "the model's code" for k in differ))
    for name in cp.frontiers:
        if not (run_dir / name).exists():
            raise CheckpointError(f"--resume {run_dir}: {name}, named by its checkpoint, is missing")
    _check_sizes(run_dir, cp)
    return cp


def _check_sizes(run_dir: Path, cp: Checkpoint) -> None:
    """The link files of levels 0 .. cp.level hold cp.distinct states, those of cp.level as
    many as the queue files, and each queue file is whole block by block: what a file cut short
    or overwritten breaks, read without unpickling anything."""
    total = 0
    for level in range(cp.level + 1):
        path = run_dir / f"links-{level:04d}.bin"
        try:
            size = path.stat().st_size
        except OSError:
            raise damaged(run_dir, f"{path.name}, needed by its checkpoint, is missing") from None
        if size % 16:
            raise damaged(run_dir, f"{path.name} is cut short ({size:,} bytes, not a whole number of links)")
        total += size // 16
    if total != cp.distinct:
        raise damaged(run_dir, f"the link files hold {total:,} states, its checkpoint {cp.distinct:,}")
    queued = 0
    for name in cp.frontiers:
        try:
            queued += sum(count for _, _, count in frontier_blocks(run_dir / name))
        except (OSError, ValueError) as e:
            raise damaged(run_dir, f"{name} {getattr(e, 'strerror', None) or e}") from None
    level_states = (run_dir / f"links-{cp.level:04d}.bin").stat().st_size // 16
    if queued != level_states:
        raise damaged(run_dir, f"the queue files of level {cp.level} hold {queued:,} state(s), its link file"
                               f" {level_states:,}")


def check_frontier(path: Path, fingerprint: Callable[[Any], int]) -> str:
    """What is wrong with the saved states in `path`, or '': each block unpickles to as many
    (state, fingerprint) items as its header says, and each state has its fingerprint."""
    with open(path, "rb") as f:
        for offset, size, count in frontier_blocks(path):
            f.seek(offset)
            try:
                items = pickle.loads(f.read(size))
            except Exception as e:  # any error a corrupted pickle raises
                return f"a block at byte {offset:,} cannot be read ({type(e).__name__})"
            if not isinstance(items, list) or len(items) != count:
                return f"a block at byte {offset:,} does not hold the {count:,} states its header says"
            for item in items:
                try:
                    state, fp = item
                    ok = fingerprint(state) == fp
                except Exception:  # not a pair, or not a state of this model
                    ok = False
                if not ok:
                    return f"a state in the block at byte {offset:,} does not match its fingerprint"
    return ""


def _sync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def run_identity(model: Any, reduce: bool, extra: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    """What a resumed search must share with the one it resumes: the model's `variant` and
    `params` where it has them, the caller's `extra` (the CLI gives model, variant and
    configuration), the reduction, the invariants, and a digest of the model's code (a changed
    model reaches other states)."""
    from checker.walks.walker import code_digest

    package = type(model).__module__.rsplit(".", 1)[0]
    own = {k: repr(getattr(model, k)) for k in ("variant", "params") if hasattr(model, k)}
    return {**own, **(extra or {}), "reduce": bool(reduce),
            "invariants": sorted(p.name for p in model.properties),
            "code": code_digest(package)}


@contextmanager
def scratch(prefix: str) -> Iterator[Path]:
    """Within: the temporary run directories of this process and of the processes it forks (a
    gate's rows, mutate's tasks) are made in one new folder, deleted at the end, also when a
    stop ended those processes before they could delete their own."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    previous = tempfile.tempdir
    tempfile.tempdir = str(folder)
    try:
        yield folder
    finally:
        tempfile.tempdir = previous
        shutil.rmtree(folder, ignore_errors=True)


class RunDir:
    """The files of one search: a run directory the user named, or a temporary one deleted at
    the end. `due()` says whether a checkpoint is wanted at this level's end."""

    def __init__(self, path: Optional[Path], resume: bool = False, identity: Optional[dict[str, Any]] = None,
                 checkpoint_every: float = 60.0) -> None:
        self.temporary = path is None
        self.identity = identity or {}
        self.path = Path(tempfile.mkdtemp(prefix="kcheck-run-")) if path is None else Path(path)
        self.resumed = None if path is None else prepare(self.path, resume, self.identity)
        self.links = ParentLinks(self.path)
        self.every = checkpoint_every
        self._last: Optional[float] = None

    def restore(self, cp: Checkpoint, workers: int, fingerprint: Optional[Callable[[Any], int]] = None) -> Any:
        """The visited set of a resumed search, rebuilt from the link files of levels 0 .. cp.level,
        once the saved states are checked (against `fingerprint`, when given); only then is what
        the interrupted run wrote after its checkpoint deleted."""
        from checker.search.visited import FPSet

        if cp.workers != workers:
            raise CheckpointError(f"--resume {self.path}: its run had {cp.workers} workers; resume it with"
                                  f" --workers {cp.workers}")
        if fingerprint is not None:
            for name in cp.frontiers:
                problem = check_frontier(self.path / name, fingerprint)
                if problem:
                    raise damaged(self.path, f"{name}: {problem}")
        visited = FPSet(cp.distinct)
        self.links.load_into(visited, cp.level + 1)
        if len(visited) != cp.distinct:
            raise damaged(self.path, f"the link files hold {len(visited):,} distinct states, its checkpoint"
                                     f" {cp.distinct:,}")
        self.links.drop_from(cp.level + 1)
        for p in [*self.path.glob("spill-*.bin"), *self.path.glob("*.tmp")]:
            p.unlink()
        return visited

    def spill(self, level: int, worker: int = 0) -> Path:
        return self.path / f"spill-{level:04d}-{worker}.bin"

    def due(self) -> bool:
        if self.temporary:
            return False
        return self._last is None or time.monotonic() - self._last >= self.every

    def commit(self, cp: Checkpoint) -> None:
        self.links.sync()
        write(self.path, cp)
        self._last = time.monotonic()

    def close(self) -> None:
        self.links.close()
        if self.temporary:
            shutil.rmtree(self.path, ignore_errors=True)
