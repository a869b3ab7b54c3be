"""The parser class of the command line lays help out exactly as argparse's own formatter
does, without importing shutil to measure the terminal."""

from __future__ import annotations

import argparse
import contextlib
import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ctxmodes.cli import build_parser, parser_class
from ctxmodes.cli.parser_class import terminal_columns


@pytest.mark.parametrize("columns", [None, "", "abc", "0", "-3", "37", "200"])
def test_the_terminal_is_as_wide_as_shutil_finds_it(
    monkeypatch: pytest.MonkeyPatch, columns: str | None
) -> None:
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert terminal_columns() == shutil.get_terminal_size().columns


def _help(argv: list[str]) -> str:
    parser = build_parser(argv=argv)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        parser.parse_args([*argv, "--help"])
    return out.getvalue()


@pytest.mark.parametrize("argv", [[], ["session"], ["session", "context"], ["run"], ["history"]])
@pytest.mark.parametrize("columns", ["44", "120"])
def test_help_reads_as_argparse_lays_it_out(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], columns: str
) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    ours = _help(argv)
    monkeypatch.setattr(parser_class, "_HelpFormatter", argparse.HelpFormatter)
    assert ours == _help(argv)
    assert ours.startswith("usage: ctxmodes")


def test_a_session_command_imports_no_shutil(tmp_path: Path) -> None:
    session = tmp_path / "one.jsonl"
    session.write_text(
        '{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/"}\n'
    )
    program = (
        "import sys\n"
        "from ctxmodes.cli import main\n"
        f"main(['session', 'context', {str(session)!r}, '--json'])\n"
        "print('shutil' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True
    )
    assert done.stdout.splitlines()[-1] == "False"
