"""Shared fixtures. `spark` is the one SparkSession (local[2]) of the whole test run: started
the first time a test asks for it, stopped when pytest exits, skipped where there is no Java."""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def java_available() -> bool:
    home = os.environ.get("JAVA_HOME")
    if home:
        return os.access(Path(home) / "bin" / "java", os.X_OK)
    return shutil.which("java") is not None


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory):
    """The session's SparkSession on local[2], its JVM output in a temporary log file."""
    if not java_available():
        pytest.skip("Spark needs Java (no java on PATH or JAVA_HOME)")
    from checker.spark_engine import spark_session

    log = tmp_path_factory.mktemp("spark") / "jvm.log"
    session = spark_session("local[2]", "kcheck-tests", log_path=log,
                            conf={"spark.sql.shuffle.partitions": "4", "spark.default.parallelism": "2"})
    yield session
    session.stop()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (`-n 2 --dist loadgroup`, README's test command), every test that uses
    the shared SparkSession runs on one worker: one JVM, one session, as without xdist; so does
    every test of the installed package: one install, not two racing in one build folder."""
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("spark"))
        elif "installed" in getattr(item, "fixturenames", ()):
            # one non-editable install (it compiles the models), built in this checkout's build/
            item.add_marker(pytest.mark.xdist_group("installed"))
