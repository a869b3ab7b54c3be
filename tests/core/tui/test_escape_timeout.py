"""How long a lone Esc waits to start an Alt sequence: Pi's terminal's rule, so Alt keys
over SSH are not read as Escape (which stops the agent) and Esc stays quick locally."""

from __future__ import annotations

import pytest
from support.agents import make_agent
from support.terminal import run_terminal

from ctxmodes.tui.layout import escape_timeout


@pytest.mark.parametrize(
    ("environ", "seconds"),
    [
        ({}, 0.01),
        ({"SSH_CONNECTION": "10.0.0.1 5000 10.0.0.2 22"}, 0.1),
        ({"SSH_TTY": "/dev/pts/3"}, 0.1),
        ({"PI_TUI_ESC_TIMEOUT": "250"}, 0.25),
        ({"PI_TUI_ESC_TIMEOUT": " 40 ", "SSH_TTY": "/dev/pts/3"}, 0.04),
        ({"PI_TUI_ESC_TIMEOUT": "0", "SSH_TTY": "/dev/pts/3"}, 0.1),
        ({"PI_TUI_ESC_TIMEOUT": "-5"}, 0.01),
        ({"PI_TUI_ESC_TIMEOUT": "soon"}, 0.01),
        ({"PI_TUI_ESC_TIMEOUT": "inf"}, 0.01),
        ({"PI_TUI_ESC_TIMEOUT": ""}, 0.01),
    ],
)
def test_the_wait_follows_pis_variable_then_ssh_then_the_local_default(
    environ: dict[str, str], seconds: float
) -> None:
    assert escape_timeout(environ) == pytest.approx(seconds)


def test_the_running_terminal_takes_the_wait_from_its_environment(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PI_TUI_ESC_TIMEOUT", "120")
    agent = make_agent(tmp_path, [])
    seen: dict[str, float] = {}

    async def scenario(t):
        seen["wait"] = t.session.app.ttimeoutlen

    run_terminal(agent, scenario)
    assert seen["wait"] == pytest.approx(0.12)
