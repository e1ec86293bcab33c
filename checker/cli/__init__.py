"""The command line: `kcheck COMMAND` (commands: the table of commands and main), the options commands share (options), and the
commands with no engine package of their own: `check` (check) and `list` (listing). The other
commands live beside their engine and are imported on first use (commands.COMMANDS)."""
from checker.cli.commands import main

__all__ = ["main"]
