"""The ``bash`` tool's commands see the session as it is when each starts, in Pi's ``PI_*``
variables; inherited values of those names never reach them (Pi's "shell tool session
environment", ``resolveSpawnContext`` in its ``bash.js``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctxmodes import SESSION_ENVIRONMENT_NAMES, ToolContext, shell_environment
from ctxmodes.abort import AbortController
from ctxmodes.config import Settings
from ctxmodes.host.system_prompt import build_system_prompt
from ctxmodes.providers import Script, ScriptedProvider
from ctxmodes.sdk import open_agent
from ctxmodes.tools.notebook import NotebookTool
from ctxmodes.tools.runtime import ToolRuntime
from ctxmodes.tools.session_env import shell_assignments
from ctxmodes.tools.shell import BashTool
from ctxmodes.tools.shell_config import ShellConfig

#: Prints each variable of the session, or <unset>, one a line.
PRINT_VARIABLES = (
    "for name in " + " ".join(SESSION_ENVIRONMENT_NAMES) + "; do "
    'if [ "${!name+set}" ]; then printf "%s=%s\\n" "$name" "${!name}"; '
    'else printf "%s <unset>\\n" "$name"; fi; done'
)
STALE = {name: f"stale {name}" for name in SESSION_ENVIRONMENT_NAMES}
SESSION = {
    "PI_SESSION_ID": "0198-session",
    "PI_SESSION_FILE": "/sessions/0198-session.jsonl",
    "PI_PROVIDER": "loop",
    "PI_MODEL": "m",
    "PI_REASONING_LEVEL": "off",
}


def printed(values: dict[str, str]) -> str:
    return "".join(
        f"{name}={values[name]}\n" if name in values else f"{name} <unset>\n"
        for name in SESSION_ENVIRONMENT_NAMES
    )


def context_of(tmp_path: Path, values: dict[str, str]) -> ToolContext:
    return ToolContext(
        cwd=tmp_path, signal=AbortController().signal, session_environment=lambda: values
    )


def output(tool: BashTool, context: ToolContext, command: str = PRINT_VARIABLES) -> str:
    result = tool.execute("call", {"command": command}, context)
    assert not result.is_error, result.content
    block = result.content[0]
    assert block.type == "text"
    return block.text


@pytest.fixture
def stale_runtime():
    """A runtime whose shell inherits stale values, as a nested agent's would."""
    runtime = ToolRuntime(env={"PATH": "/usr/bin:/bin", **STALE})
    yield runtime
    runtime.close()


def test_a_command_sees_the_session_as_it_is_when_it_starts(tmp_path, stale_runtime):
    values = dict(SESSION)
    tool = BashTool(stale_runtime.shell)
    context = context_of(tmp_path, values)
    assert output(tool, context) == printed(SESSION)
    # A model and level switched between two commands: the next one sees the new ones.
    values.update(PI_PROVIDER="other", PI_MODEL="r", PI_REASONING_LEVEL="high")
    assert output(tool, context) == printed(values)


def test_inherited_values_are_removed_and_a_session_in_memory_has_no_file(tmp_path, stale_runtime):
    in_memory = {"PI_SESSION_ID": "0198-memory", "PI_REASONING_LEVEL": "off"}
    tool = BashTool(stale_runtime.shell)
    assert output(tool, context_of(tmp_path, in_memory)) == printed(in_memory)
    # Outside a host (no session at all), none is set.
    assert output(tool, ToolContext(cwd=tmp_path, signal=AbortController().signal)) == (printed({}))


def test_what_a_command_exports_under_these_names_does_not_reach_the_next(tmp_path, stale_runtime):
    tool = BashTool(stale_runtime.shell)
    context = context_of(tmp_path, {"PI_SESSION_ID": "0198-session"})
    output(tool, context, "export PI_MODEL=made-up PI_SESSION_ID=forged OTHER=kept")
    assert output(tool, context) == printed({"PI_SESSION_ID": "0198-session"})
    assert output(tool, context, 'echo "$OTHER"') == "kept\n"


def test_turned_off_the_tool_unsets_them_all(tmp_path, stale_runtime):
    tool = BashTool(stale_runtime.shell, expose_session_environment=False)
    assert not tool.exposes_session_environment
    assert output(tool, context_of(tmp_path, SESSION)) == printed({})


def test_the_prefix_sees_them_and_values_stay_literal(tmp_path):
    tricky = 'it\'s $HOME `id` \\ "quoted"\nsecond line'
    config = ShellConfig(command_prefix='PREFIX_SAW="$PI_SESSION_ID"')
    with ToolRuntime(shell_config=config) as runtime:
        tool = BashTool(runtime.shell)
        context = context_of(tmp_path, {"PI_SESSION_ID": tricky})
        assert output(tool, context, 'printf "%s|%s" "$PI_SESSION_ID" "$PREFIX_SAW"') == (
            f"{tricky}|{tricky}"
        )


def test_a_name_no_shell_variable_can_have_is_refused():
    with pytest.raises(ValueError, match="not a shell variable name"):
        shell_assignments({"PI_MODEL; rm -rf /": "x"})
    assert shell_assignments({}) == ""


def test_a_plugins_tool_builds_the_same_environment(tmp_path):
    base = {"PATH": "/bin", "KEEP": "1", **STALE}
    context = context_of(tmp_path, {"PI_SESSION_ID": "0198-session", "PI_MODEL": "m"})
    assert shell_environment(context, base=base) == {
        "PATH": "/bin",
        "KEEP": "1",
        "PI_SESSION_ID": "0198-session",
        "PI_MODEL": "m",
    }
    # Turned off, or with no tool call, inherited values go all the same.
    expected = {"PATH": "/bin", "KEEP": "1"}
    assert shell_environment(context, base=base, expose_session_environment=False) == expected
    assert shell_environment(base=base) == expected


def test_the_system_prompt_mentions_them_only_for_a_tool_that_exposes_them(tmp_path):
    with ToolRuntime() as runtime:
        exposed = build_system_prompt([BashTool(runtime.shell)], tmp_path)
        hidden = build_system_prompt(
            [BashTool(runtime.shell, expose_session_environment=False)], tmp_path
        )
    for name in SESSION_ENVIRONMENT_NAMES:
        assert name in exposed
        assert name not in hidden


def _bash_outputs(agent) -> list[str]:
    return [
        message.content[0].text
        for message in agent.session.messages
        if message.role == "toolResult"
    ]


@pytest.mark.parametrize("persist", [True, False])
def test_the_host_gives_its_session_and_the_switched_model(tmp_path, persist, monkeypatch):
    for name, value in STALE.items():
        monkeypatch.setenv(name, value)
    call = {"tool_calls": [{"name": "bash", "arguments": {"command": PRINT_VARIABLES}}]}
    first = ScriptedProvider(Script.model_validate({"responses": [call, {"text": "ok"}]}))
    second = ScriptedProvider(
        Script.model_validate(
            {"model": "thinker", "reasoning": True, "responses": [call, {"text": "ok"}]}
        )
    )
    with open_agent(
        cwd=tmp_path,
        settings=Settings(mode="off"),
        provider=first,
        session_dir=tmp_path / "sessions",
        persist=persist,
    ) as agent:
        agent.prompt("which model?")
        agent.session.set_provider(second)
        agent.set_thinking_level("high")
        agent.prompt("and now?")
        manager = agent.session.session_manager
        outputs = _bash_outputs(agent)
        session_id, session_file = manager.session_id, manager.session_file
    common = {"PI_SESSION_ID": session_id}
    if persist:
        assert session_file is not None
        assert session_file.is_absolute()
        common["PI_SESSION_FILE"] = str(session_file)
        assert f'"id":"{session_id}"' in session_file.read_text().splitlines()[0]
    else:
        assert session_file is None
    assert outputs == [
        printed(
            {**common, "PI_PROVIDER": "scripted", "PI_MODEL": first.info.id,
             "PI_REASONING_LEVEL": "off"}
        ),
        printed(
            {**common, "PI_PROVIDER": "scripted", "PI_MODEL": "thinker",
             "PI_REASONING_LEVEL": "high"}
        ),
    ]  # fmt: skip


def test_a_program_embedding_ctxmodes_keeps_its_environment_unmarked(tmp_path, monkeypatch):
    """Only the command line marks its process (as Pi's SDK leaves the markers unset)."""
    for name in ("AI_AGENT", "PI_CODING_AGENT"):
        monkeypatch.delenv(name, raising=False)
    call = {"name": "bash", "arguments": {"command": 'echo "[${AI_AGENT-unset}]"'}}
    script = {"responses": [{"tool_calls": [call]}, {"text": "ok"}]}
    provider = ScriptedProvider(Script.model_validate(script))
    with open_agent(cwd=tmp_path, provider=provider, persist=False) as agent:
        agent.prompt("who runs you?")
        outputs = _bash_outputs(agent)
    assert outputs == ["[unset]\n"]
    assert "AI_AGENT" not in os.environ
    assert "PI_CODING_AGENT" not in os.environ


def test_the_notebook_never_shows_an_outer_agents_session(tmp_path):
    with ToolRuntime(env={"PATH": os.environ["PATH"], "KEEP": "1", **STALE}) as runtime:
        tool = NotebookTool(runtime.notebook)
        code = "import os\nprint(sorted(k for k in os.environ if k.startswith(('PI_', 'KEEP'))))"
        result = tool.execute("call", {"code": code}, context_of(tmp_path, SESSION))
    assert result.content[0].text.strip() == "['KEEP']"
