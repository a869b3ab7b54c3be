"""``ctxmodes chat`` without a terminal:
one line, a non-zero exit, and no session file."""

from __future__ import annotations

import pytest
from support.cli_process import run_ctxmodes


@pytest.mark.parametrize("args", [("chat",), ("chat", "-c")])
def test_chat_without_a_terminal_is_one_line_and_leaves_nothing(tmp_path, args):
    script = tmp_path / "script.json"
    script.write_text('{"responses": [{"text": "hi"}]}')
    result = run_ctxmodes(tmp_path, *args, "--model", f"scripted:{script}")
    assert result.returncode != 0
    assert result.stderr.splitlines() == [
        "ctxmodes: error: the interactive session needs a terminal; for one prompt without "
        "a terminal, use `ctxmodes run PROMPT`"
    ]
    assert "Traceback" not in result.stdout
    assert not list((tmp_path / "agent").rglob("*.jsonl"))


@pytest.mark.slow  # a reply in a process of its own
def test_a_process_started_without_standard_input_is_not_a_traceback(tmp_path):
    """Started with its standard input closed (``<&-``), where Python has no ``sys.stdin``:
    ``chat`` still says it needs a terminal, and a prompt is print mode."""
    import os
    import subprocess

    from support.cli_process import CTXMODES, ctxmodes_environment

    script = tmp_path / "script.json"
    script.write_text('{"responses": [{"text": "answered"}]}')
    model = ["--model", f"scripted:{script}"]
    results = [
        subprocess.run(
            [*CTXMODES, *argv],
            capture_output=True,
            text=True,
            env=ctxmodes_environment(tmp_path),
            cwd=tmp_path,
            preexec_fn=lambda: os.close(0),
            timeout=60,
            check=False,
        )
        for argv in (["chat", *model], [*model, "hi"])
    ]
    refused, answered = results
    assert (refused.returncode, refused.stderr.count("\n")) == (1, 1), refused.stderr
    assert "needs a terminal" in refused.stderr
    assert (answered.returncode, answered.stdout, answered.stderr) == (0, "answered\n", "")


def test_the_bare_command_with_its_output_redirected_says_it_needs_a_terminal(tmp_path):
    """``ctxmodes > file`` typed on a terminal: not the help, but the one line that says why
    the session cannot start."""
    import os
    import pty
    import subprocess

    from support.cli_process import CTXMODES, ctxmodes_environment

    controller, terminal = pty.openpty()
    try:
        result = subprocess.run(
            CTXMODES,
            stdin=terminal,
            capture_output=True,
            text=True,
            env=ctxmodes_environment(tmp_path),
            cwd=tmp_path,
            timeout=60,
            check=False,
        )
    finally:
        os.close(terminal)
        os.close(controller)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.splitlines() == [
        "ctxmodes: error: the interactive session needs a terminal; for one prompt without "
        "a terminal, use `ctxmodes run PROMPT`"
    ]
