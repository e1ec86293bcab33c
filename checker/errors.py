"""The error every layer raises for bad input; the lowest module of the checker (imports nothing).

`checker.config` re-exports it: `from checker.config import ConfigError` names the same class."""
from __future__ import annotations


class ConfigError(Exception):
    """Bad input from the user; `str(error)` is one line that says what to fix."""
