"""Output that cannot be written (a full disk, stdout closed or read-only) is one line on stderr
and exit 2, never a traceback nor exit 1 (which means a violation)."""
from __future__ import annotations

import errno
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from checker import cli

ROOT = Path(__file__).resolve().parents[1]
FULL = Path("/dev/full")


def _kcheck(args: list[str], stdout_redirect: str) -> subprocess.CompletedProcess[str]:
    """`kcheck ARGS` with stdout redirected by the shell (`> /dev/full`, `>&-`, ...)."""
    command = " ".join([f"'{sys.executable}'", "-m", "checker.cli", *args, stdout_redirect])
    return subprocess.run(["sh", "-c", command], cwd=ROOT, stderr=subprocess.PIPE, text=True, timeout=60)


def _one_error_line(p: subprocess.CompletedProcess[str], words: str) -> None:
    assert p.returncode == 2, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("kcheck: error: ") and words in lines[0], p.stderr


@pytest.mark.skipif(not FULL.exists(), reason="needs /dev/full")
@pytest.mark.parametrize("args", [["list", "--json"], ["list"],
                                  ["check", "--preset", "smoke", "--max-states", "20", "--quiet"],
                                  ["check", "--preset", "smoke", "--max-states", "20", "--quiet", "--json"]])
def test_full_disk(args: list[str]) -> None:
    _one_error_line(_kcheck(args, "> /dev/full"), "No space left on device")


@pytest.mark.parametrize("redirect, words", [(">&-", "stdout is closed"), ("1< /dev/null", "cannot write the output")])
def test_closed_or_read_only_stdout(redirect: str, words: str) -> None:
    _one_error_line(_kcheck(["list"], redirect), words)


class _Full(io.StringIO):
    def write(self, text: str) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_write_error_in_process(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdout", _Full())
    assert cli.main(["list"]) == 2
    assert capsys.readouterr().err == "kcheck: error: cannot write the output: No space left on device\n"
