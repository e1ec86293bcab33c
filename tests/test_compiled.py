"""The compiled models and search loops (setup.py, model/compiled.py): built by the install, taken
only while they match their source, and indistinguishable from the Python they come from."""
from __future__ import annotations

import importlib.machinery
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from checker.walks.walker import code_digest
from model import compiled

ROOT = Path(__file__).resolve().parents[1]
HOT = ["model.replication.model", "model.replication.broker_actions", "model.kraft.model", "model.kraft.client",
       "checker.search.bfs", "checker.search.parallel", "checker.walks.walker"]


def _pure_env() -> dict[str, str]:
    return {**os.environ, "KCHECK_PURE_PYTHON": "1"}


def test_the_install_compiled_the_hot_modules() -> None:
    """The package compiles its models; without a C compiler it runs about 1.4 times slower."""
    for name in HOT:
        __import__(name)
    missing = [name for name in HOT if name not in compiled.in_use()]
    assert not missing, f"not compiled (is a C compiler missing?): {missing}"


def _copy_of(tmp_path: Path, module: str) -> Path:
    """The folder of `module`'s compiled file, source and digest table, copied under tmp_path."""
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None
    folder = Path(spec.origin).parent
    dest = tmp_path / folder.name
    dest.mkdir()
    for f in folder.iterdir():
        if f.is_file():
            shutil.copy(f, dest)
    return dest


def test_a_changed_source_is_taken_over_its_compiled_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _copy_of(tmp_path, "model.replication.state")
    finder = compiled.SourceMatchedFinder()

    def loader() -> type:
        compiled._recorded.cache_clear()
        spec = finder.find_spec("model.replication.state", [str(folder)])
        assert spec is not None
        return type(spec.loader)

    assert loader() is importlib.machinery.ExtensionFileLoader
    monkeypatch.setenv("KCHECK_PURE_PYTHON", "1")
    assert loader() is importlib.machinery.SourceFileLoader
    monkeypatch.delenv("KCHECK_PURE_PYTHON")
    source = folder / "state.py"
    source.write_text(source.read_text() + "\n# edited after the build\n")
    assert loader() is importlib.machinery.SourceFileLoader
    (folder / compiled.TABLE).unlink()
    source.write_text(source.read_text().removesuffix("\n# edited after the build\n"))
    assert loader() is importlib.machinery.SourceFileLoader, "no digest recorded: the source"
    assert finder.find_spec("json.decoder", [str(folder)]) is None, "other packages are not its business"


def _check(*args: str, pure: bool) -> Any:
    out = subprocess.run([sys.executable, "-m", "checker.cli", "check", "--json", *args], capture_output=True,
                         text=True, env=_pure_env() if pure else None, cwd=ROOT, timeout=600)
    assert out.returncode in (0, 1), out.stderr
    return _untimed(json.loads(out.stdout))


def _untimed(x: object) -> object:
    if isinstance(x, dict):
        return {k: _untimed(v) for k, v in x.items() if "seconds" not in k and "per_second" not in k}
    if isinstance(x, list):
        return [_untimed(v) for v in x]
    return x


@pytest.mark.parametrize("args", [
    ("--model", "replication", "--preset", "smoke"),
    ("--model", "kraft", "--preset", "smoke"),
    ("--model", "replication", "--variant", "hw-without-maximal-isr", "--preset", "smoke"),
])
def test_compiled_and_python_give_the_same_report(args: tuple[str, ...]) -> None:
    compiled_run, python_run = _check(*args, pure=False), _check(*args, pure=True)
    # the same model source, of which the pure run used no compiled module
    compiled_run["model_source"].pop("compiled")
    assert python_run["model_source"].pop("compiled") == []
    assert compiled_run == python_run
    assert compiled_run["distinct_states"] > 500 and compiled_run["action_counts"]
    assert (compiled_run["violation"] is None) == ("--variant" not in args), "the variant row must break"


def test_the_walk_code_digest_reads_the_source_of_compiled_modules() -> None:
    """Spark executors compare it with the driver's: it must not depend on being compiled."""
    assert "model.replication.model" in compiled.in_use() or not compiled.in_use()
    here = code_digest("model.replication")
    there = subprocess.run([sys.executable, "-c", "from checker.walks.walker import code_digest; "
                            "print(code_digest('model.replication'))"], capture_output=True, text=True,
                           env=_pure_env(), check=True).stdout.strip()
    assert here == there


def test_source_of_a_compiled_module_is_its_python() -> None:
    from checker.gate.mutation.imports import source_of

    assert source_of("model.replication.controller") == (ROOT / "model/replication/controller.py").read_text()


# --- model/_tuples.c: the states' `_replace` and field lookup in C ----------------------------------

def _replaced_classes() -> list[type]:
    from model.kraft import state as kraft_state
    from model.replication import state as replication_state

    return [replication_state.Broker, replication_state.Controller, replication_state.History,
            replication_state.State, kraft_state.Node, kraft_state.History, kraft_state.KraftState]


def test_the_install_built_the_c_tuples() -> None:
    """Where the models are compiled, their states' `_replace` and field lookup are the C ones (a
    fifth of a compiled replication search went into the Python `_replace`)."""
    if compiled.pure():
        pytest.skip("KCHECK_PURE_PYTHON is set")
    from model._tuples import has_fast_fields  # an install with a C compiler builds it

    assert all(type(cls.__dict__["_replace"]).__name__ == "Replace" for cls in _replaced_classes())
    assert all(has_fast_fields(cls) for cls in _replaced_classes())


def _reachable(model: str, preset: str, limit: int) -> list[Any]:
    from checker.config import load_config
    from checker.proofs.conformance import sample

    return sample(load_config(model=model, preset=preset).build(), limit)


def test_c_replace_makes_what_the_python_one_makes() -> None:
    """On the parts of reachable states, every field replaced in turn, and two at once: the same
    type and items; the same TypeError for an unknown field or a positional value (and the C one's
    for another type)."""
    Replace = pytest.importorskip("model._tuples").Replace
    from model.tuples import python_replace

    states = _reachable("replication", "one-crash", 300) + _reachable("kraft", "smoke", 300)
    for cls in _replaced_classes():
        c, py = Replace(cls), python_replace(cls)
        parts = [x for s in states for x in (s, *s) if type(x) is cls]
        parts += [x for s in states for v in s if isinstance(v, tuple) for x in v if type(x) is cls]
        assert parts, cls
        for x in parts[:: max(1, len(parts) // 40)]:
            other = parts[-1]
            for i, f in enumerate(cls._fields):
                g = cls._fields[(i + 1) % len(cls._fields)]
                for kw in ({}, {f: other[i]}, {f: other[i], g: ("changed",)}):
                    got, want = c(x, **kw), py(x, **kw)
                    assert type(got) is type(want) is cls and tuple(got) == tuple(want) and hash(got) == hash(want)
        x = parts[0]
        for call in (lambda r: r(x, no_such_field=1), lambda r: r(x, x[0])):
            with pytest.raises(TypeError):
                call(py)
            with pytest.raises(TypeError):
                call(c)
        with pytest.raises(TypeError):  # the Python one reads any sequence
            c(tuple(x))
        assert x._replace(**{cls._fields[0]: x[0]}) == x  # bound, through the class attribute


def test_c_replace_keeps_reference_counts() -> None:
    """No reference leaked or lost: the old items, the new values and the copies made."""
    Replace = pytest.importorskip("model._tuples").Replace
    from model.replication.state import Broker

    b = _reachable("replication", "smoke", 1)[0].brokers[0]
    replace, value = Replace(Broker), ("a value only this test holds",)
    before = (sys.getrefcount(b.log), sys.getrefcount(value), sys.getrefcount(b))
    for _ in range(1000):
        t = replace(b, hw=value)
        del t
        with pytest.raises(TypeError):
            replace(b, hw=value, no_such_field=value)
    assert (sys.getrefcount(b.log), sys.getrefcount(value), sys.getrefcount(b)) == before


def test_c_field_lookup_reads_what_the_generic_one_reads() -> None:
    """Every field of the states' parts, by the C lookup and by the generic one (`object.__getattribute__`
    takes the field's descriptor); properties, methods, a name equal to a field's but not the same
    object, an unknown name, and a subclass keep the generic lookup's answers."""
    tuples = pytest.importorskip("model._tuples")
    from typing import NamedTuple

    states = _reachable("replication", "one-crash", 200) + _reachable("kraft", "smoke", 200)
    for cls in _replaced_classes():
        tuples.fast_fields(cls)
        assert tuples.has_fast_fields(cls)
        parts = [x for s in states for x in (s, *s) if type(x) is cls]
        parts += [x for s in states for v in s if isinstance(v, tuple) for x in v if type(x) is cls]
        for x in parts[:: max(1, len(parts) // 20)]:
            for i, f in enumerate(cls._fields):
                assert getattr(x, f) is x[i] is object.__getattribute__(x, f)
                assert getattr(x, "".join(list(f))) is x[i]  # an equal name, not the interned one
            assert x._asdict() == dict(zip(cls._fields, x)) and x.count(x[0]) >= 1
            with pytest.raises(AttributeError):
                x.no_such_field
    b = states[0].brokers[0]
    assert (b.leo, b.maximal_isr) == (len(b.log), b.isr if not b.pending else b.maximal_isr)

    class Point(NamedTuple):
        x: int
        y: int

    class Labelled(tuples.fast_fields(Point)):
        @property
        def label(self) -> str:
            return f"{self.x},{self.y}"

    assert tuples.has_fast_fields(Point) and not tuples.has_fast_fields(Labelled)
    assert Point(1, 2).y == 2 and Labelled(3, 4).y == 4 and Labelled(3, 4).label == "3,4"
    with pytest.raises(TypeError):
        tuples.fast_fields(int)
