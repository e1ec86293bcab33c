"""A search's run directory (`kcheck check --run-dir DIR`): what lets an interrupted search go on
(`--resume DIR`) and end as an uninterrupted one would, with the same result, counts and
counterexample.

    DIR/checkpoint.json      the last checkpoint: which level the saved queue holds, the counts
                             so far, and the identity of the run (model, configuration, code)
    DIR/links-LLLL.bin       parent links of level LLLL (checker/levels.py)
    DIR/frontier-LLLL-W.bin  the queue of worker W at the checkpoint of level LLLL (checker/frontier.py)
    DIR/spill-*.bin          queues past what memory keeps, while the search runs

A checkpoint is taken between two levels: every state up to level L is found and recorded in the
link files, the states of level L are saved, and `checkpoint.json` is replaced last (written to a
temporary file, fsynced, renamed), so a crash at any moment leaves the previous checkpoint whole.
A resumed search deletes what the interrupted one wrote after its last checkpoint and redoes it.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterator, Optional

from checker.config import ConfigError
from checker.levels import ParentLinks

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


def read(run_dir: Path) -> Optional[Checkpoint]:
    """The last checkpoint in `run_dir`, or None when there is none yet."""
    path = Path(run_dir) / META
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text())
        if data.get("format") != FORMAT:
            raise CheckpointError(f"{path}: written by another kcheck version (format {data.get('format')})")
        return Checkpoint(**data)
    except (OSError, ValueError, TypeError) as e:
        if isinstance(e, CheckpointError):
            raise
        raise CheckpointError(f"{path}: not a kcheck checkpoint ({e})") from None


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
    for p in run_dir.glob("spill-*.bin"):
        p.unlink()
    for p in run_dir.glob("*.tmp"):
        p.unlink()
    return cp


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
    from checker.walks import code_digest

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
        if self.resumed is not None:
            self.links.drop_from(self.resumed.level + 1)
        self.every = checkpoint_every
        self._last: Optional[float] = None

    def restore(self, cp: Checkpoint, workers: int) -> Any:
        """The visited set of a resumed search, rebuilt from the link files of levels 0 .. cp.level."""
        from checker.visited import FPSet

        if cp.workers != workers:
            raise CheckpointError(f"--resume {self.path}: its run had {cp.workers} workers; resume it with"
                                  f" --workers {cp.workers}")
        visited = FPSet(cp.distinct)
        self.links.load_into(visited, cp.level + 1)
        if len(visited) != cp.distinct:
            raise CheckpointError(f"--resume {self.path}: the link files hold {len(visited):,} states, its"
                                  f" checkpoint {cp.distinct:,}: the directory is damaged")
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
