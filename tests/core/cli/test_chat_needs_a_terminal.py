"""``ctxmodes chat`` without a terminal:
one line, a non-zero exit, and no session file."""

from __future__ import annotations

import os
import pty
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support.cli_process import CTXMODES, ctxmodes_environment, run_ctxmodes

NEEDS_A_TERMINAL = (
    "ctxmodes: error: the interactive session needs a terminal; for one prompt without "
    "a terminal, use `ctxmodes run PROMPT`"
)


def started(tmp_path: Path, argv: list[str], **streams: Any) -> subprocess.CompletedProcess[str]:
    """``ctxmodes ARGV`` with its standard streams set up by ``streams`` (``stdin``,
    ``preexec_fn``), its output captured."""
    return subprocess.run(
        [*CTXMODES, *argv],
        capture_output=True,
        text=True,
        env=ctxmodes_environment(tmp_path),
        cwd=tmp_path,
        timeout=60,
        check=False,
        **streams,
    )


@pytest.mark.parametrize("args", [("chat",), ("chat", "-c")])
def test_chat_without_a_terminal_is_one_line_and_leaves_nothing(tmp_path, args):
    script = tmp_path / "script.json"
    script.write_text('{"responses": [{"text": "hi"}]}')
    result = run_ctxmodes(tmp_path, *args, "--model", f"scripted:{script}")
    assert result.returncode != 0
    assert result.stderr.splitlines() == [NEEDS_A_TERMINAL]
    assert "Traceback" not in result.stdout
    assert not list((tmp_path / "agent").rglob("*.jsonl"))


@pytest.mark.slow  # a reply in a process of its own
def test_a_process_started_without_standard_input_is_not_a_traceback(tmp_path):
    """Started with its standard input closed (``<&-``), where Python has no ``sys.stdin``:
    ``chat`` still says it needs a terminal, and a prompt is print mode."""
    script = tmp_path / "script.json"
    script.write_text('{"responses": [{"text": "answered"}]}')
    model = ["--model", f"scripted:{script}"]
    closed = {"preexec_fn": lambda: os.close(0)}
    refused = started(tmp_path, ["chat", *model], **closed)
    answered = started(tmp_path, [*model, "hi"], **closed)
    assert (refused.returncode, refused.stderr.splitlines()) == (1, [NEEDS_A_TERMINAL])
    assert (answered.returncode, answered.stdout, answered.stderr) == (0, "answered\n", "")


def test_the_bare_command_with_its_output_redirected_says_it_needs_a_terminal(tmp_path):
    """``ctxmodes > file`` typed on a terminal: not the help, but the one line that says why
    the session cannot start."""
    controller, terminal = pty.openpty()
    try:
        result = started(tmp_path, [], stdin=terminal)
    finally:
        os.close(terminal)
        os.close(controller)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.splitlines() == [NEEDS_A_TERMINAL]
