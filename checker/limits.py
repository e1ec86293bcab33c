"""Bounds on the size and nesting of input files, checked before a parser (or a recursive walk
over its result) would meet a RecursionError or exhaust memory. The depth is measured without
recursion: strings are cut out, then every pass removes the innermost empty brackets, so a
document deeper than the limit still has brackets after `limit` passes. Each pass is one
regular-expression scan, and a pass that finds nothing ends the loop."""
from __future__ import annotations

import re

from checker.errors import ConfigError

MAX_TRACE_BYTES = 256 * 1024 * 1024  # far above any trace kcheck writes (100,000 steps: ~40 MB)
MAX_DEPTH = 100  # kcheck's traces nest about 10 deep (document, states, variable, records, tags)

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = re.compile(rb"[^\[\]{}]+")
_INNERMOST = re.compile(rb"\[\]|\{\}")


def nesting_exceeds(raw: bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether JSON text `raw` nests arrays and objects more than `limit` deep."""
    brackets = _NOT_BRACKET.sub(b"", _STRING.sub(b"", raw))
    for _ in range(limit):
        brackets, found = _INNERMOST.subn(b"", brackets)
        if not found:  # all gone, or unbalanced (which the JSON parser reports)
            return False
    return _INNERMOST.search(brackets) is not None


MAX_CONFIG_BYTES = 1024 * 1024  # a configuration is a few flat `key = value` lines
_TOML_SKIPPED = re.compile(rb'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"|\'[^\'\n]*\'|#[^\n]*')


def check_toml_text(raw: bytes, where: str) -> None:
    """A ConfigError if a TOML file is too large or nests too deep for tomllib's recursive parser
    (strings and comments are cut out first, so their brackets do not count)."""
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{where}: larger than {MAX_CONFIG_BYTES // 1024} KB; a configuration is flat "
                          "`key = value` lines")
    if nesting_exceeds(_TOML_SKIPPED.sub(b"", raw)):
        raise ConfigError(f"{where}: nested more than {MAX_DEPTH} levels deep; a configuration is flat "
                          "`key = value` lines")


def check_json_text(raw: bytes, where: str) -> None:
    """A ConfigError (one line, starting with `where`) if `raw` is too large or too deep."""
    if len(raw) > MAX_TRACE_BYTES:
        raise ConfigError(f"{where}: larger than {MAX_TRACE_BYTES // (1024 * 1024)} MB; "
                          "split it, or give fewer variables per state")
    if nesting_exceeds(raw):
        raise ConfigError(f"{where}: nested more than {MAX_DEPTH} levels deep (kcheck's traces nest about 10)")
