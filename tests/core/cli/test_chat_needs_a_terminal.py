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
