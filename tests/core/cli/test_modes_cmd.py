"""``ctxmodes modes``: an active mode that is not installed is one error line, said where the
mode was set, as ``ctxmodes config show`` says it."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli_rig import ctxmodes, isolate_settings

INSTALLED = "installed modes: local, off, remote, tree"


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_settings(tmp_path, monkeypatch)


@pytest.mark.parametrize(
    ("argv", "source"), [((), "environment"), (("--mode", "tre"), "command line")]
)
def test_an_unknown_mode_is_one_error_line_before_any_listing(
    argv: tuple[str, ...],
    source: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if not argv:
        monkeypatch.setenv("CTXMODES_MODE", "tre")
    code, out, err = ctxmodes(capsys, "modes", *argv)
    assert code == 1
    assert out == ""
    line = f"ctxmodes: error: {source}: mode: unknown mode 'tre'; {INSTALLED}\n"
    assert err == line
    shown = ctxmodes(capsys, "config", "show", *argv)
    assert shown[0] == 1
    assert shown[2] == line, "config show says it the same way"


def test_the_listing_marks_the_active_mode(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CTXMODES_MODE", "tree")
    code, out, err = ctxmodes(capsys, "modes")
    assert code == 0, err
    rows = {line.split()[0]: line.split()[1] for line in out.splitlines()[1:]}
    assert rows == {
        "local": "installed",
        "off": "installed",
        "remote": "installed",
        "tree": "active",
    }
