"""The one JVM of a `kcheck conform` process: its class path, found from a flag or the environment.

A class path is a directory laid out like Kafka's build of the jars (jars/*.jar and lib/*.jar), a
directory of jars (a Kafka download's libs/), or an os.pathsep-separated list of jars and such
directories. testlib/ is never put on it (its JUnit console jar bundles a second JUnit).
"""
from __future__ import annotations

import glob
import os
import shutil
from typing import Any

from checker.config import ConfigError

ENV = "KCHECK_KAFKA_CLASSPATH"
HOW = (f"give the Kafka jars with --kafka-classpath DIR or env {ENV} (a directory with jars/ and lib/, "
       "a Kafka download's libs/, or a list of jars)")
REQUIRED = ("org.apache.kafka.raft.KafkaRaftClient", "org.apache.kafka.raft.MockLog",
            "org.apache.kafka.common.utils.MockTime")  # MockLog: the raft test jar; MockTime: the clients test jar

_started: list[str] | None = None


def resolve_classpath(cp: str | None) -> list[str]:
    """The jars named by `cp` (else env KCHECK_KAFKA_CLASSPATH), sorted per directory; ConfigError if none."""
    text = cp if cp else os.environ.get(ENV, "")
    if not text.strip():
        raise ConfigError(f"no Kafka class path: {HOW}")
    jars: list[str] = []
    for part in text.split(os.pathsep):
        part = os.path.expanduser(part.strip())
        if not part:
            continue
        if os.path.isdir(part):
            subdirs = [os.path.join(part, d) for d in ("jars", "lib") if os.path.isdir(os.path.join(part, d))]
            found: list[str] = []
            for d in subdirs or [part]:
                found += sorted(glob.glob(os.path.join(d, "*.jar")))
            if not found:
                raise ConfigError(f"no jars in {part}: {HOW}")
            jars += found
        elif os.path.isfile(part) and part.endswith(".jar"):
            jars.append(part)
        else:
            raise ConfigError(f"not a jar or a directory: {part}: {HOW}")
    if not jars:
        raise ConfigError(f"no Kafka class path: {HOW}")
    return [os.path.abspath(j) for j in jars]


def _jpype() -> Any:
    try:
        import jpype  # type: ignore[import-not-found]
        import jpype.imports  # noqa: F401  (Java packages importable as Python modules)
    except ImportError:
        raise ConfigError("JPype1 is not installed: pip install 'kcheck[conform]' (and a Java 17 runtime)") from None
    return jpype


def start_jvm(classpath: str | None) -> None:
    """Start the JVM on the class path (once per process; a second call with another path is an error)."""
    global _started
    jars = resolve_classpath(classpath)
    if _started is not None:
        if _started != jars:
            raise ConfigError("the JVM of this process already runs with another Kafka class path")
        return
    jpype = _jpype()
    if jpype.isJVMStarted():
        raise ConfigError("a JVM already runs in this process, not started by kcheck conform")
    if not (os.environ.get("JAVA_HOME") or shutil.which("java")):
        try:
            jpype.getDefaultJVMPath()
        except Exception:
            raise ConfigError("no Java runtime found: install Java 17 (e.g. apt-get install openjdk-17-jre-headless) "
                              "or set JAVA_HOME") from None
    try:
        # interrupt=False: Ctrl-C stays Python's (kcheck conform stops between two steps)
        jpype.startJVM("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-Xss4m",
                       classpath=jars, convertStrings=False, interrupt=False)
    except Exception as e:
        raise ConfigError(f"cannot start the JVM: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
    _started = jars
    missing = [name for name in REQUIRED if not _has_class(jpype, name)]
    if missing:
        raise ConfigError(f"the class path lacks {', '.join(missing)}: it needs Kafka's raft, clients and "
                          f"server-common jars and the raft and clients test jars; {HOW}")


def _has_class(jpype: Any, name: str) -> bool:
    try:
        jpype.JClass(name)
        return True
    except Exception:
        return False


def has_class(name: str) -> bool:
    """Whether the running JVM's class path holds the class `name` (a variant's capability check)."""
    return _has_class(_jpype(), name)
