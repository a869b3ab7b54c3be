"""The test harness is isolated from the developer's environment: plugin selection variables
that shape a user's session never change what a test's host or plugin manager holds."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctxmodes import ToolResultMessage, hookimpl
from ctxmodes.testing.plugin import isolated_plugin_manager

SELECTION = {
    "CTXMODES_BLOCK_PLUGINS": "ctxmodes.tools.builtin,ctxmodes.providers.builtin,probe,off",
    "CTXMODES_LOAD_PLUGINS": "nothing-else",
}


class Probe:
    def __init__(self) -> None:
        self.calls = 0

    @hookimpl
    def ctx_agent_start(self, session: object) -> None:
        self.calls += 1


@pytest.fixture
def hostile_selection(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SELECTION.items():
        monkeypatch.setenv(name, value)


@pytest.mark.usefixtures("hostile_selection")
def test_the_host_keeps_its_tools_and_plugins_whatever_the_environment_blocks(ctx_host):
    probe = Probe()
    host = ctx_host(
        [
            {"tool_calls": [{"name": "bash", "arguments": {"command": "echo isolated"}}]},
            {"text": "done"},
        ],
        plugins=[probe],
    )
    host.prompt("go")
    assert "bash" in {tool.name for tool in host.requests()[0].tools}
    (result,) = [
        entry.message
        for entry in host.entries()
        if isinstance(getattr(entry, "message", None), ToolResultMessage)
    ]
    assert result.content[0].text.strip() == "isolated"
    assert probe.calls == 1


@pytest.mark.usefixtures("hostile_selection")
def test_an_isolated_plugin_manager_holds_its_plugins_whatever_the_environment_blocks():
    probe = Probe()
    pm = isolated_plugin_manager(probe)
    assert pm.get_plugins() == {probe}
    assert not pm.is_blocked("probe")


def test_the_suite_runs_without_the_developers_ctxmodes_variables():
    """tests/conftest.py: no ``CTXMODES_*`` variable of the shell reaches a test, and the
    configuration, Pi and Codex directories are the test run's own, not the user's."""
    leaked = {
        name
        for name in os.environ
        if name.startswith("CTXMODES_") and name != "CTXMODES_CONFIG_DIR"
    }
    assert leaked == set()
    for name in ("CTXMODES_CONFIG_DIR", "PI_CODING_AGENT_DIR", "CODEX_HOME"):
        directory = Path(os.environ[name])
        assert directory.is_dir()
        assert directory.parent.name.startswith("ctxmodes-tests-env-"), name
