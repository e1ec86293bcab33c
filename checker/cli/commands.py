"""The `kcheck` command line: one subcommand per engine, dispatched through `COMMANDS`.

Exit codes (every command): 0 ok; 1 a property is violated (or, with --strict, the pass is
vacuous); 2 bad input, reported as one line `kcheck: error: ...` on stderr; 3 incomplete
(a state limit was reached or the run was interrupted).

Adding a command is one line in `COMMANDS`:
    "simulate": Command.from_module("checker.walks.simulate", "random walks, locally or on Spark"),
where the module defines `add_arguments(parser)` and `run(args) -> int`; it may use
`add_config_arguments` and `run_config` (checker/cli/options.py) for the shared options and raise
`ConfigError` for bad input. A command module is imported only when its command is used.
"""
from __future__ import annotations

import argparse
import os
import re
import signal
import sys
from typing import Any, Callable, Sequence

from checker import stop
from checker.config import ConfigError
from checker.provenance import check_checkout
from model.extension import PluginFailure
from checker.cli.options import EXIT_BAD_INPUT, EXIT_INCOMPLETE, EXIT_OK, Command, UsageError, _Parser

# ---------------------------------------------------------------------------------------------
# Dispatch

COMMANDS: dict[str, Command] = {
    "check": Command.from_module("checker.cli.check",
                                 "exhaustively check a model (BFS): every invariant on every reachable state"),
    "list": Command.from_module("checker.cli.listing", "list models, variants, properties, config keys and presets"),
    "simulate": Command.from_module("checker.walks.simulate", "random walks, locally or on Spark"),
    "prove": Command.from_module("checker.proofs.prove", "Z3: inductive invariants and bounded model checking"),
    "replay": Command.from_module("checker.traces.replay", "validate a trace (ITF JSON) step by step against a model"),
    "conform": Command.from_module("checker.conform.command",
                                   "drive the real Kafka code (jars, through JPype) along the model and compare"),
    "explore": Command.from_module("checker.view.explore", "walk a model by hand in a local web page"),
    "graph": Command.from_module("checker.view.graph_export", "export the state graph of a small configuration"
                                 " (DOT, GraphML, node-link JSON)"),
    "render": Command.from_module("checker.cli.render", "draw a trace (ITF JSON) as an HTML page: a sequence diagram"
                                  " and the state at each step"),
    "gate": Command.from_module("checker.gate.gate", "run a gate file: every row's expected outcome, for CI"),
    "mutate": Command.from_module("checker.gate.mutation.command",
                                  "make small mistakes in a model's code and see which the gate's rows notice"),
    "new-variant": Command.from_module("checker.scaffold", "write a plugin file to start a variant of your own from"
                                       " (docs/change.md)"),
}


def build_parser(selected: str | None = None) -> argparse.ArgumentParser:
    """The parser; only the `selected` command's arguments are added (its module may be heavy)."""
    parser = _Parser(prog="kcheck", description="Model-check Kafka replication and KRaft.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name, command in COMMANDS.items():
        p = sub.add_parser(name, help=command.help, description=command.help)
        if name == selected:
            command.add_arguments(p)
    return parser


EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE


def _raise_interrupt(signum: int, frame: Any) -> None:
    stop.request(KeyboardInterrupt)


def _stop_signals() -> Callable[[], Any]:
    """Ctrl-C and SIGTERM (what CI runners and `timeout` send) stop a run: partial result, exit 3.
    Returns what restores the previous handlers (main() may run inside a test)."""
    stop.clear()
    try:
        previous = {sig: signal.signal(sig, _raise_interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
    except ValueError:  # not the main thread: leave signals alone
        return lambda: None
    restore_hook = stop.quiet_unraisable()

    def restore() -> None:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        restore_hook()
        stop.clear()

    return restore


def main(argv: Sequence[str] | None = None) -> int:
    """Run `kcheck`; returns the exit code (the console script exits with it)."""
    restore = _stop_signals()
    try:
        return _main(argv)
    finally:
        restore()


def _main(argv: Sequence[str] | None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    selected = next((a for a in args_list if not a.startswith("-")), None)
    try:
        try:
            args = build_parser(selected if selected in COMMANDS else None).parse_args(args_list)
        except SystemExit as e:  # --help, --version
            return e.code if isinstance(e.code, int) else EXIT_OK
        if sys.stdout is None:  # started with stdout closed (`>&-`): the result would be lost
            raise ConfigError("stdout is closed: nowhere to write the result")
        args.argv = args_list  # the command as given: a run's own record (`simulate --out`) names it
        check_checkout()  # an edited checkout is not what an installed kcheck checks
        code = COMMANDS[args.command].run(args)
        sys.stdout.flush()  # a full disk shows here, not as an error at the interpreter's exit
        return code
    except (UsageError, ConfigError) as e:
        message = " ".join(str(e).split("\n"))
        if isinstance(e, UsageError):
            message += f" (see kcheck {selected} --help)" if selected in COMMANDS else " (see kcheck --help)"
        print(f"kcheck: error: {message}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except PluginFailure as e:  # a plugin's own code raised while the model ran it: its author's input
        print(f"kcheck: error: --plugin {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("kcheck: interrupted", file=sys.stderr)
        return EXIT_INCOMPLETE
    except BrokenPipeError:  # e.g. `kcheck simulate | head`: the reader left; end as a shell would
        _discard_stdout()
        return EXIT_BROKEN_PIPE
    except OSError as e:  # stdout cannot be written (full disk, not open for writing): not a verdict
        _discard_stdout()
        print(f"kcheck: error: cannot write the output: {e.strerror or e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as e:  # the model's own code raised (an edited model): no verdict, one line
        line = model_raised(e)
        if line is None:
            raise  # not in the model: a fault of kcheck itself, with its traceback
        print(f"kcheck: error: {line}", file=sys.stderr)
        return EXIT_BAD_INPUT


_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+), in (\S+)\s*$')


def model_raised(e: BaseException) -> str | None:
    """One line for an exception raised in the model's code (a check the model makes of itself,
    e.g. kraft's network.SlotTaken, or an index out of range after an edit), here or in a worker
    of the multi-process search (whose traceback comes as text): the exception and the model's
    frames, innermost last; None when the innermost frame is not the model's."""
    import traceback

    text = str(e)
    if isinstance(e, RuntimeError) and "Traceback (most recent call last)" in text:
        lines = text.rstrip().splitlines()
        frames = [(m.group(1), int(m.group(2)), m.group(3)) for m in map(_FRAME.match, lines) if m]
        what = lines[-1].strip()
    else:
        frames = [(f.filename, f.lineno or 0, f.name) for f in traceback.extract_tb(e.__traceback__)]
        what = f"{type(e).__module__}.{type(e).__name__}: {' '.join(str(e).split())}"
    ours = [(_model_path(f), n, name.rpartition(".")[2]) for f, n, name in frames]
    if not ours or ours[-1][0] is None:
        return None
    chain = " > ".join(f"{f}:{n} {name}" for f, n, name in ours if f is not None)
    return f"the model raised {what[:400]} ({chain}); the run ends without a verdict: fix the model"


def _model_path(filename: str) -> str | None:
    """`model/...py` for a file of the model package (its sources or a compiled module's
    relative name), else None."""
    from pathlib import Path

    import model

    root = Path(model.__file__).resolve().parent
    path = Path(filename)
    if not path.is_absolute():
        return filename if path.parts[:1] == ("model",) else None
    try:
        return "model/" + path.resolve().relative_to(root).as_posix()
    except ValueError:
        return None


def _discard_stdout() -> None:
    """Point stdout at /dev/null, so the buffer's flush at exit raises no second error."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real file behind stdout (e.g. under a test)
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
