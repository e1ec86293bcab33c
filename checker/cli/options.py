"""What the commands share: exit codes, the parser that reports errors in one line, the
`Command` record, the model/config/plugin options every engine takes, argparse types, the
timeout wrapper, progress lines. Imports no engine: every command module may import it."""
from __future__ import annotations

import argparse
import importlib
import json
import os
import signal
import sys
from dataclasses import dataclass
from typing import Any, Callable, TextIO

from checker import stop
from checker.search.common import Progress
from checker.config import (DEFAULT_MODEL, ConfigError, RunConfig, config_text, load_config, load_definition,
                            parse_decimal)

EXIT_OK = 0
EXIT_VIOLATION = 1
EXIT_BAD_INPUT = 2
EXIT_INCOMPLETE = 3


class UsageError(Exception):
    """A command line argparse rejected; reported like a ConfigError (one line, exit 2)."""


class _Parser(argparse.ArgumentParser):
    """argparse without the usage dump: errors become one line and exit code 2 via main()."""

    def error(self, message: str) -> Any:  # type: ignore[override]
        raise UsageError(message)


@dataclass(frozen=True)
class Command:
    """A subcommand: a help line, a function adding its arguments, and one running it."""

    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]

    @classmethod
    def from_module(cls, module: str, help: str) -> "Command":
        """A command whose `add_arguments` and `run` live in `module`, imported on first use."""

        def load() -> Any:
            try:
                return importlib.import_module(module)
            except Exception as e:
                raise ConfigError(f"this command is unavailable: cannot import {module}: {e}") from e

        return cls(help, lambda parser: load().add_arguments(parser), lambda args: load().run(args))


# ---------------------------------------------------------------------------------------------
# Shared options


def add_config_arguments(parser: argparse.ArgumentParser) -> None:
    """CONFIG.toml, --model, --variant, --preset, --set: the options every engine shares."""
    parser.add_argument("config_file", nargs="?", metavar="CONFIG.toml",
                        help="a TOML file of flat `key = value` lines (may set model, variant, preset)")
    parser.add_argument("--model", help=f"the model to check (default: the file's, else {DEFAULT_MODEL})")
    parser.add_argument("--variant", help="the protocol variant (default: the model's first, Kafka 4.1)")
    parser.add_argument("--preset", help="a named configuration the file and --set build on (default: default)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override one config key; repeatable; wins over the preset and the file")
    add_plugin_argument(parser)


def add_plugin_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--plugin", dest="plugins", action="append", default=[], metavar="FILE",
                        help="a Python file of your own variants and properties (docs/change.md); repeatable")


def activate_plugins(args: argparse.Namespace) -> None:
    """Put the `--plugin` files in force (raises ConfigError for a bad plugin)."""
    from checker import plugin

    plugins = getattr(args, "plugins", None) or []
    if not plugins:
        plugin.activate([])  # the built-in models alone (main() may run more than once in a process)
        return
    models = {p.extension.model for p in plugin.activate(plugins)}
    if getattr(args, "model", "") is None and not getattr(args, "config_file", None) and len(models) == 1:
        args.model = models.pop()  # the model the plugin extends, unless told otherwise


def run_config(args: argparse.Namespace) -> RunConfig:
    """The validated configuration named by the shared options (raises ConfigError)."""
    activate_plugins(args)
    return load_config(model=args.model, variant=args.variant, preset=args.preset,
                       path=args.config_file, overrides=args.overrides)


def _int_at_least(low: int, what: str, high: int | None = None) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = parse_decimal(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a {what} integer, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"expected a {what} integer, got {text!r}")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"at most {high}, got {value}")
        return value

    return parse


MAX_PROCESSES = 64  # --workers, --processes, --jobs: a typo such as 1000 must not fork 1,000 processes
positive_int = _int_at_least(1, "positive")  # argparse types shared by the command modules
nonnegative_int = _int_at_least(0, "non-negative")
process_count = _int_at_least(1, "positive", MAX_PROCESSES)
_positive_int = positive_int


def positive_seconds(text: str) -> float:
    """A finite number of seconds above 0 (argparse type)."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not (0 < value < float("inf")) or not text.strip().isascii():
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


def spark_conf_pair(text: str) -> tuple[str, str]:
    """`--conf KEY=VALUE`: one Spark property for the session a command starts (e.g.
    spark.executor.pyspark.memory=512m), an argparse type. Spark reads only keys that begin with
    `spark.`; any other key, a missing `=` or an empty value is bad input."""
    key, eq, value = text.partition("=")
    key, value = key.strip(), value.strip()
    if not eq or not key or not value:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE (e.g. spark.executor.pyspark.memory=512m), got {text!r}")
    if not key.startswith("spark.") or key == "spark." or any(c.isspace() for c in key):
        raise argparse.ArgumentTypeError(f"{key!r} is not a Spark property: a key begins with 'spark.'"
                                         " (e.g. spark.executor.pyspark.memory=512m)")
    return key, value


def spark_confs(pairs: list[tuple[str, str]] | None) -> dict[str, str]:
    """The `--conf` pairs as a dict; one key given two values is bad input."""
    confs: dict[str, str] = {}
    for key, value in pairs or []:
        if confs.get(key, value) != value:
            raise ConfigError(f"--conf {key} is given twice, as {confs[key]!r} and {value!r}: give it once")
        confs[key] = value
    return confs


def with_timeout(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """`run`, stopped after `args.timeout` seconds as Ctrl-C stops it (KeyboardInterrupt: the
    search returns its partial result, exit 3). SIGALRM: a forked worker does not inherit it."""

    def timed(args: argparse.Namespace) -> int:
        seconds = getattr(args, "timeout", None)
        if not seconds or not hasattr(signal, "setitimer"):
            return run(args)

        def expire(signum: int, frame: Any) -> None:
            print(f"kcheck: --timeout {seconds:g} s reached: stopping with a partial result", file=sys.stderr,
                  flush=True)
            stop.request(KeyboardInterrupt)

        previous = signal.signal(signal.SIGALRM, expire)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            return run(args)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)

    return timed


def _config_text(config: dict[str, Any], model: str | None = None) -> str:
    if model is None:
        return " ".join(f"{k}={json.dumps(v)}" for k, v in config.items())
    return config_text(load_definition(model), config)


def default_workers() -> int:
    """One per core this process may use, capped at 4 (past that the coordinator limits the gain)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, 4))


def progress_printer(stream: TextIO, total: int | None = None) -> Callable[[Progress], None]:
    """Progress lines; with `total`, the states a whole run finds (checker/search/expected.py), each line
    ends with an estimate of the work left at the rate so far."""
    from checker.search.expected import remaining

    def report(p: Progress) -> None:
        left = remaining(p.distinct_states, p.seconds, total) if total else ""
        print(f"kcheck: {p.distinct_states:,} distinct, {p.states_generated:,} generated, depth {p.depth}, "
              f"queue {p.queue:,}, {p.states_per_second:,.0f} states/s, {p.seconds:.0f}s{left}", file=stream,
              flush=True)

    return report
