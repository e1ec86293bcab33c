"""`--out DIR`: a run's results as Parquet tables, to be asked afterwards with Spark SQL or pandas
(docs/simulate.md, "Results as data", holds the schema and example queries).

`kcheck simulate --out DIR` writes three tables, each a folder of Parquet files:
    DIR/walks/       one row per walk
    DIR/violations/  one row per invariant broken (its shortest walk), its shrunk trace in DIR/traces/
    DIR/run/         one row: the run itself (command, config, seconds)
`kcheck check --engine spark --out DIR` writes DIR/levels/, DIR/actions/ and DIR/run/.

Every row carries the run's `run_id`, a digest of what decides the results (model source, plugins,
configuration, seed, walks, depth, options), so folders of several runs can be read as one table
and told apart, and the same run twice has the same id. The local engine writes with pyarrow; on
Spark the walk rows are written by the executors with Spark's own Parquet writer (no walk row
passes through the driver), and the small tables by the driver. Both write the same schema.
"""
from __future__ import annotations

import hashlib
import json
import os
import shlex
from pathlib import Path
from typing import Any, Iterable, Sequence

from checker.config import ConfigError

# (column, type): "string", "long" (64 bits), "int" (32 bits), "double", "bool", "counts" (map string -> long),
# "strings" (array of string)
WALKS = (("run_id", "string"), ("walk_id", "long"), ("seed", "long"), ("model", "string"), ("preset", "string"),
         ("variant", "string"), ("model_source", "string"), ("steps", "int"), ("end", "string"),
         ("violated", "string"), ("cells", "int"), ("action_counts", "counts"))
VIOLATIONS = (("run_id", "string"), ("invariant", "string"), ("walk_id", "long"), ("found_length", "int"),
              ("shrunk_length", "int"), ("shortest", "bool"), ("violating_walks", "long"),
              ("first_walk_id", "long"), ("trace", "string"))
SIMULATE_RUN = (("run_id", "string"), ("command", "string"), ("engine", "string"), ("where", "string"),
                ("model", "string"), ("variant", "string"), ("preset", "string"), ("config", "string"),
                ("model_source", "string"), ("plugins", "string"), ("seed", "long"), ("walks", "long"),
                ("depth", "int"), ("swarm", "bool"), ("guided", "bool"), ("action_kinds", "strings"), ("result", "string"),
                ("distinct_states", "long"), ("walk_seconds", "double"), ("seconds", "double"))
LEVELS = (("run_id", "string"), ("level", "int"), ("new_states", "long"), ("generated", "long"),
          ("seconds", "double"))
ACTIONS = (("run_id", "string"), ("level", "int"), ("action", "string"), ("generated", "long"))
CHECK_RUN = (("run_id", "string"), ("command", "string"), ("engine", "string"), ("where", "string"),
             ("model", "string"), ("variant", "string"), ("preset", "string"), ("config", "string"),
             ("model_source", "string"), ("plugins", "string"), ("result", "string"), ("distinct_states", "long"),
             ("states_generated", "long"), ("depth", "int"), ("seconds", "double"))


def check_out_dir(path: str | None) -> None:
    """`--out DIR` can take the tables: missing (it is made) or an empty directory, writable."""
    if not path:
        return
    from checker.outputs import check_dir

    above = os.path.dirname(os.path.abspath(path))
    while not os.path.lexists(above):
        above = os.path.dirname(above)
    if not os.path.isdir(above):
        raise ConfigError(f"--out {path}: {above} is not a directory")
    check_dir("--out", path)
    if os.path.isdir(path) and any(os.scandir(path)):
        raise ConfigError(f"--out {path}: not empty; give a new or empty directory (the tables of another run would mix"
                          " with this one's)")


def run_id(identity: dict[str, Any]) -> str:
    """16 hex digits of SHA-256 over what decides a run's results."""
    return hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()[:16]


def command_line(args: Any) -> str:
    return "kcheck " + shlex.join(getattr(args, "argv", None) or [])


def model_source_digest(model_name: str) -> str:
    from checker.provenance import model_digest

    try:
        return model_digest(model_name)
    except Exception:  # noqa: BLE001 - a model outside the model package (a test's): its module's digest
        from checker.walks.walker import code_digest
        import model as registry

        return code_digest(registry.MODELS.get(model_name, ""))


# --- writers ----------------------------------------------------------------------------------------


def _arrow_schema(columns: Sequence[tuple[str, str]]) -> Any:
    import pyarrow as pa

    types = {"string": pa.string(), "long": pa.int64(), "int": pa.int32(), "double": pa.float64(),
             "bool": pa.bool_(), "counts": pa.map_(pa.string(), pa.int64()), "strings": pa.list_(pa.string())}
    return pa.schema([(name, types[kind]) for name, kind in columns])


def spark_schema(columns: Sequence[tuple[str, str]]) -> Any:
    from pyspark.sql import types as T

    kinds = {"string": T.StringType(), "long": T.LongType(), "int": T.IntegerType(), "double": T.DoubleType(),
             "bool": T.BooleanType(), "counts": T.MapType(T.StringType(), T.LongType()),
             "strings": T.ArrayType(T.StringType())}
    return T.StructType([T.StructField(name, kinds[kind], True) for name, kind in columns])


def write_table(folder: str | Path, columns: Sequence[tuple[str, str]], rows: Iterable[Sequence[Any]]) -> None:
    """Write `rows` (tuples in `columns` order) as folder/part-00000.parquet, with pyarrow."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ConfigError("--out needs pyarrow (a kcheck dependency): pip install pyarrow") from None
    schema = _arrow_schema(columns)
    rows = list(rows)
    data = {name: [r[i] if kind != "counts" else sorted(r[i].items()) for r in rows]
            for i, (name, kind) in enumerate(columns)}
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(data, schema=schema), folder / "part-00000.parquet")


def write_on_spark(session: Any, folder: str | Path, columns: Sequence[tuple[str, str]], rows: Any) -> None:
    """Write `rows` (an RDD of tuples in `columns` order, or a list) with Spark's Parquet writer:
    the executors write the files."""
    frame = session.createDataFrame(rows, spark_schema(columns))
    frame.write.mode("errorifexists").parquet(str(folder))


# --- kcheck simulate --out --------------------------------------------------------------------------


def walk_columns(rid: str, seed: int, model: str, preset: str, variant: str, source: str) -> tuple:
    """The columns every walk row of a run shares, before the walk's own."""
    return (rid, seed, model, preset, variant, source)


def walk_row(shared: tuple, w: Any) -> tuple:
    """A walk row: the run's shared columns, then a checker.walks.walker.WalkRow's."""
    return (shared[0], w.walk_id, *shared[1:], w.steps, w.end, w.violated, w.cells, dict(w.action_counts))


def write_simulation(out: str, report: dict[str, Any], found: list, model: Any, rid: str, source: str,
                     command: str, walk_rows: list | None) -> None:
    """The violations (traces beside them, ITF), the run row and, when the local engine ran the walks,
    the walk rows (`walk_rows`: WalkRow list; None when Spark's executors wrote them)."""
    from checker.traces import itf

    root = Path(out)
    if walk_rows is not None:
        shared = walk_columns(rid, report["seed"], report["model"], report["preset"], report["variant"], source)
        write_table(root / "walks", WALKS, (walk_row(shared, w) for w in sorted(walk_rows, key=lambda w: w.walk_id)))
    rows = []
    for r, trace in found:
        name = f"traces/{r['invariant']}.itf.json"
        meta = {"model": report["model"], "variant": report["variant"], "preset": report["preset"],
                "config": report["config"], "invariant": r["invariant"], "description": r["description"],
                "seed": report["seed"], "walk_id": r["walk_id"]}
        (root / "traces").mkdir(parents=True, exist_ok=True)
        itf.write(str(root / name), itf.to_itf(model, trace, meta))
        rows.append((rid, r["invariant"], r["walk_id"], r["length"], r["shrunk_length"], r["shortest"],
                     r["violating_walks"], r["first_walk_id"], name))
    write_table(root / "violations", VIOLATIONS, rows)
    write_table(root / "run", SIMULATE_RUN, [(
        rid, command, report["engine"], report["where"], report["model"], report["variant"], report["preset"],
        json.dumps(report["config"], sort_keys=True), source, json.dumps(report["plugins"]), report["seed"],
        report["walks"], report["depth"], report["swarm"], report["guided"], list(model.action_kinds), report["result"],
        report["distinct_states"], report["walk_seconds"], report["seconds"])])


def simulation_id(rc: Any, args: Any, plugins: list, source: str) -> str:
    """The run id of `kcheck simulate` (known before the walks run: the executors write it)."""
    return run_id({"model": rc.model, "variant": rc.variant, "preset": rc.preset, "config": dict(rc.config),
                   "plugins": [p["sha256"] for p in plugins], "source": source, "seed": args.seed,
                   "walks": args.walks, "depth": args.depth, "swarm": args.swarm,
                   "guided": [args.guided, args.rounds, args.corpus, args.cells, args.novelty],
                   "invariants": list(args.invariants)})
