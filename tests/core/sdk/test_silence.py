"""A program embedding ctxmodes owns its output: a plugin or a listener that raises is
reported to the program (an error notice) and logged, and nothing reaches standard output or
error unless the program configured logging."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

# Runs a program of its own.
pytestmark = pytest.mark.slow

PROGRAM = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from typing import Any
    from ctxmodes import hookimpl
    from ctxmodes.sdk import AgentEvent, Notice, open_agent

    if sys.argv[2] == "configured":
        import logging
        logging.basicConfig()

    class Broken:
        @hookimpl
        def ctx_session_start(self, session: Any, reason: str) -> None:
            raise RuntimeError("the start hook is broken")

    def broken_listener(event: AgentEvent) -> None:
        raise RuntimeError("the listener is broken")

    notices: list[Notice] = []

    def keep_notice(event: AgentEvent) -> None:
        if isinstance(event, Notice):
            notices.append(event)

    work = Path(sys.argv[1])
    with open_agent(cwd=work, mode="off", model=f"scripted:{work / 'script.json'}",
                    session_dir=work / "sessions", plugins=[Broken()],
                    listeners=[broken_listener, keep_notice]) as agent:
        agent.prompt("hi")
    (work / "notices.json").write_text(json.dumps([n.message for n in notices]))
    """
)


@pytest.mark.parametrize("logging_configured", [False, True])
def test_failures_are_notices_and_logs_never_unasked_output(tmp_path, logging_configured):
    (tmp_path / "script.json").write_text(json.dumps({"responses": [{"text": "hello"}]}))
    environment = {**os.environ, "CTXMODES_CONFIG_DIR": str(tmp_path / "config")}
    mode = "configured" if logging_configured else "silent"
    done = subprocess.run(
        [sys.executable, "-W", "error::ResourceWarning", "-c", PROGRAM, str(tmp_path), mode],
        capture_output=True,
        text=True,
        env=environment,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    notices = json.loads((tmp_path / "notices.json").read_text())
    assert notices == ["plugin error in session_start: RuntimeError: the start hook is broken"]
    if logging_configured:
        assert "RuntimeError: the start hook is broken" in done.stderr
        assert "RuntimeError: the listener is broken" in done.stderr
    else:
        assert done.stderr == ""
