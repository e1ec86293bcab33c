"""The model's own branch coverage: how often walks take each way of each decision in chosen model
sources (an `if`, `elif` or `while` test: its body, or not).

The model must run as Python for this (KCHECK_PURE_PYTHON=1 before it is imported: a compiled
module has no line events). A decision is one test line, whatever `and`/`or` it holds; conditional
expressions and a body on the test's own line are not decisions here (`Decisions.unmeasured`
counts the latter).
"""
from __future__ import annotations

import ast
import os
import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from contextlib import contextmanager


@dataclass
class Decisions:
    """The decisions of one source file: test line -> (body's first line, the test's source)."""

    path: str
    tests: dict[int, tuple[int, str]] = field(default_factory=dict)
    unmeasured: int = 0

    @classmethod
    def of(cls, path: str) -> "Decisions":
        source = open(path).read()
        out = cls(os.path.abspath(path))
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.If, ast.While)):
                body = node.body[0].lineno
                if body == node.lineno:
                    out.unmeasured += 1
                    continue
                out.tests[node.lineno] = (body, " ".join((ast.get_source_segment(source, node.test) or "").split()))
        return out


@contextmanager
def counting(files: list[Decisions]) -> Iterator[Counter]:
    """While inside, count (path, test line, taken) for every decision of `files` the code passes:
    taken when the next line the frame runs is the body's first, not taken otherwise (another
    line, or the frame returns)."""
    counts: Counter = Counter()
    by_path = {d.path: d.tests for d in files}

    def local(tests: dict[int, tuple[int, str]]) -> Callable[..., Any]:
        last = [0]

        def tracer(frame: Any, event: str, arg: Any) -> Any:
            prev = last[0]
            if prev in tests and event in ("line", "return"):
                counts[(frame.f_code.co_filename, prev, event == "line" and frame.f_lineno == tests[prev][0])] += 1
            last[0] = frame.f_lineno if event == "line" else 0
            return tracer
        return tracer

    def global_tracer(frame: Any, event: str, arg: Any) -> Any:
        tests = by_path.get(frame.f_code.co_filename)
        return local(tests) if tests is not None and event == "call" else None

    previous = sys.gettrace()
    sys.settrace(global_tracer)
    try:
        yield counts
    finally:
        sys.settrace(previous)


def table(files: list[Decisions], counts: Counter) -> list[tuple[str, int, str, int, int]]:
    """(file, line, test, times taken, times not taken) for every decision, in source order."""
    rows = []
    for d in files:
        for line, (_, text) in sorted(d.tests.items()):
            rows.append((d.path, line, text, counts[(d.path, line, True)], counts[(d.path, line, False)]))
    return rows
