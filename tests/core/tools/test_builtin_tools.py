from __future__ import annotations

from pathlib import Path

import pytest
from support.agents import make_agent

from ctxmodes.abort import AbortController
from ctxmodes.events import TreeNavigationEvent
from ctxmodes.host.options import HostOptions
from ctxmodes.tools.base import Tool, ToolContext
from ctxmodes.tools.builtin import BuiltinToolsPlugin
from ctxmodes.tools.shell_config import ShellConfig


def _navigation(*, internal: bool) -> TreeNavigationEvent:
    return TreeNavigationEvent(
        old_leaf_id="a", new_leaf_id="b", summary_entry=None, internal=internal
    )


@pytest.fixture
def plugin():
    plugin = BuiltinToolsPlugin()
    yield plugin
    plugin.runtime.close()


def _tools(pm) -> dict[str, Tool]:
    tools: dict[str, Tool] = {}
    pm.hook.ctx_register_tools(
        register=lambda tool: tools.__setitem__(tool.name, tool), session=None
    )
    return tools


def _cell(tools: dict[str, Tool], code: str, cwd: Path) -> str:
    context = ToolContext(cwd=cwd, signal=AbortController().signal)
    result = tools["notebook"].execute("c", {"code": code}, context)
    block = result.content[0]
    assert block.type == "text"
    return block.text


def test_registers_the_default_tools_and_pi_s_search_tools(ctx_plugin_manager, plugin):
    tools = _tools(ctx_plugin_manager(plugin))
    assert list(tools) == ["bash", "notebook", "read", "write", "edit", "ls", "find", "grep"]
    for tool in tools.values():
        assert isinstance(tool, Tool)
        assert tool.parameters["type"] == "object"


def test_internal_navigation_keeps_and_user_navigation_resets_the_notebook(
    ctx_plugin_manager, plugin, tmp_path
):
    pm = ctx_plugin_manager(plugin)
    tools = _tools(pm)
    _cell(tools, "x = 7", tmp_path)
    pm.hook.ctx_session_tree(session=None, event=_navigation(internal=True))
    assert _cell(tools, "x", tmp_path) == "7\n"
    pm.hook.ctx_session_tree(session=None, event=_navigation(internal=False))
    assert "NameError" in _cell(tools, "x", tmp_path)


def test_shutdown_closes_the_processes(ctx_plugin_manager, plugin, tmp_path):
    pm = ctx_plugin_manager(plugin)
    tools = _tools(pm)
    _cell(tools, "x = 1", tmp_path)
    notebook = plugin.runtime.notebook(tmp_path)
    assert notebook.running
    pm.hook.ctx_session_shutdown(session=None, reason="quit")
    assert not notebook.running


def test_each_plugin_instance_has_its_own_runtime(ctx_plugin_manager, tmp_path):
    first, second = BuiltinToolsPlugin(), BuiltinToolsPlugin()
    try:
        tools_a = _tools(ctx_plugin_manager(first))
        tools_b = _tools(ctx_plugin_manager(second))
        _cell(tools_a, "owner = 'a'", tmp_path)
        assert "NameError" in _cell(tools_b, "owner", tmp_path)
    finally:
        first.runtime.close()
        second.runtime.close()


def test_hooks_before_any_tool_use_start_nothing(ctx_plugin_manager):
    plugin = BuiltinToolsPlugin()
    pm = ctx_plugin_manager(plugin)
    pm.hook.ctx_session_tree(session=None, event=_navigation(internal=False))
    pm.hook.ctx_session_shutdown(session=None, reason="quit")
    assert plugin._runtime is None


def test_the_hosts_shell_runs_the_bash_tool(tmp_path):
    wrapper = tmp_path / "logging-bash"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {tmp_path / "log"}\nexec bash "$@"\n')
    wrapper.chmod(0o755)
    prefix = "shopt -s expand_aliases\nalias greet='echo hello from the alias'"
    options = HostOptions(shell=ShellConfig(path=str(wrapper), command_prefix=prefix))
    call = {"name": "bash", "arguments": {"command": "greet"}}
    with make_agent(tmp_path, [{"tool_calls": [call]}, {"text": "ok"}], options=options) as agent:
        agent.prompt("greet me")
        results = [m for m in agent.session.messages if m.role == "toolResult"]
    assert [(r.content[0].text, r.is_error) for r in results] == [("hello from the alias\n", False)]
    assert (tmp_path / "log").read_text().endswith("--noprofile --norc\n")
