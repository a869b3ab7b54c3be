"""Running the command line in the test process, with no setting leaking in."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctxmodes.cli import main


def isolate_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No user, project or environment setting may pick the mode behind a test's back."""
    for name in list(os.environ):
        if name.startswith("CTXMODES_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("CTXMODES_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.chdir(tmp_path)


def ctxmodes(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run the command line in this process: exit status, standard output, standard error."""
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err
