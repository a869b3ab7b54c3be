"""Every hookspec has a caller: a probe plugin implementing every hook watches one scripted
Tree session that rolls over, reads history and notes, navigates the tree, compacts, takes
input and runs tools. The probe is not the mode, so it also shows that an observer sees every
``firstresult`` call (``tryfirst`` returning ``None``) while the mode answers."""

from __future__ import annotations

from collections import Counter

import pytest

import ctxmodes_tree
from ctxmodes import SessionChangeDecision, hookimpl, hookspecs
from ctxmodes.compaction.settings import CompactionSettings
from ctxmodes.host.errors import SessionChangeCancelled
from ctxmodes.session.models import MessageEntry, ToolResultMessage


class Probe:
    """Records each hook call by name; answers nothing."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()

    def _saw(self, name: str) -> None:
        self.calls[name] += 1

    @hookimpl
    def ctx_register_modes(self, register):
        self._saw("ctx_register_modes")

    @hookimpl
    def ctx_register_tools(self, register, session):
        self._saw("ctx_register_tools")

    @hookimpl
    def ctx_register_commands(self, register, session):
        self._saw("ctx_register_commands")

    @hookimpl
    def ctx_session_start(self, session, reason):
        self._saw("ctx_session_start")

    @hookimpl
    def ctx_session_shutdown(self, session, reason):
        self._saw("ctx_session_shutdown")

    @hookimpl(tryfirst=True)  # observe before the mode answers
    def ctx_input(self, session, event):
        self._saw("ctx_input")

    @hookimpl
    def ctx_agent_start(self, session):
        self._saw("ctx_agent_start")

    @hookimpl
    def ctx_turn_start(self, session, turn_index):
        self._saw("ctx_turn_start")

    @hookimpl
    def ctx_project_context(self, session, projection):
        self._saw("ctx_project_context")

    @hookimpl
    def ctx_provider_request(self, session, event):
        self._saw("ctx_provider_request")

    @hookimpl(tryfirst=True)
    def ctx_message_end(self, session, message):
        self._saw("ctx_message_end")

    @hookimpl(tryfirst=True)
    def ctx_tool_call(self, session, event):
        self._saw("ctx_tool_call")

    @hookimpl
    def ctx_tool_result(self, session, event):
        self._saw("ctx_tool_result")

    @hookimpl
    def ctx_turn_end(self, session, event):
        self._saw("ctx_turn_end")

    @hookimpl
    def ctx_agent_end(self, session, messages):
        self._saw("ctx_agent_end")

    @hookimpl
    def ctx_agent_settled(self, session):
        self._saw("ctx_agent_settled")

    @hookimpl(tryfirst=True)
    def ctx_new_context(self, session, request):
        self._saw("ctx_new_context")

    @hookimpl(tryfirst=True)
    def ctx_session_before_tree(self, session, preparation):
        self._saw("ctx_session_before_tree")

    @hookimpl
    def ctx_session_tree(self, session, event):
        self._saw("ctx_session_tree")

    @hookimpl(tryfirst=True)
    def ctx_session_before_compact(self, session, request):
        self._saw("ctx_session_before_compact")

    @hookimpl
    def ctx_session_compact(self, session, event):
        self._saw("ctx_session_compact")

    @hookimpl(tryfirst=True)
    def ctx_retrieve(self, session, request):
        self._saw("ctx_retrieve")

    @hookimpl
    def ctx_session_before_fork(self, session, request):
        self._saw("ctx_session_before_fork")
        return SessionChangeDecision(cancel=True)

    @hookimpl
    def ctx_session_before_switch(self, session, request):
        self._saw("ctx_session_before_switch")

    @hookimpl
    def ctx_user_bash(self, session, event):
        self._saw("ctx_user_bash")


def session_hookspecs() -> set[str]:
    """Every hookspec a session calls (the others are called by the command line and the
    model registry)."""
    return {
        name
        for name in dir(hookspecs)
        if name.startswith("ctx_") and name not in hookspecs.SESSIONLESS_HOOKS
    }


def test_every_hook_is_called_in_one_scripted_session(ctx_host):
    probe = Probe()
    script = [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo probe-4410"}}]},
        {
            "tool_calls": [
                {
                    "name": "notes",
                    "arguments": {"action": "write_file", "path": "c.md", "text": "probe-4410"},
                }
            ]
        },
        {"tool_calls": [{"name": "new_context"}]},
        {
            "tool_calls": [
                {"name": "history", "arguments": {"action": "search_contents", "query": "4410"}}
            ]
        },
        {"text": "found it"},
    ]
    host = ctx_host(
        script,
        plugins=[ctxmodes_tree, probe],
        mode="tree",
        summaries=["archived window", "compacted", "turn prefix"],
        compaction=CompactionSettings(keep_recent_tokens=1),
    )
    host.prompt("find the probe")
    host.prompt("/compact")
    host.session.run_shell_command("echo typed")
    results = {
        e.message.tool_name: e.message
        for e in host.entries()
        if isinstance(e, MessageEntry) and isinstance(e.message, ToolResultMessage)
    }
    # Replacing the session asks first (the fork is refused by the probe).
    with pytest.raises(SessionChangeCancelled):
        host.host.fork_session(None)
    host.host.new_session()
    host.close()

    assert set(probe.calls) == session_hookspecs()
    # The observer saw each rollover and retrieval once, and the mode still answered them.
    assert probe.calls["ctx_new_context"] == 1
    assert probe.calls["ctx_retrieve"] == 2
    assert not results["history"].is_error
    assert "probe-4410" in results["history"].content[0].text
    assert not results["notes"].is_error
