"""Pi's tool flags: ``--tools`` (an allow list over every tool, a mode's included),
``--no-tools``, ``--no-builtin-tools`` (the core's own tools only) and ``--exclude-tools``;
what the model is offered is what the request carries, and the system prompt lists the
same tools."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli_process import run_ctxmodes

from ctxmodes.tools.selection import ToolSelection

pytestmark = pytest.mark.slow  # each test runs ctxmodes as a process, end to end

BUILTIN = ["bash", "notebook", "read", "write", "edit"]
LOCAL = ["new_context", "get_context_remaining", "history", "notes"]


def test_a_selection_keeps_the_registration_order() -> None:
    tools = {name: name for name in ["new_context", *BUILTIN, "notes"]}
    selection = ToolSelection(builtin=frozenset(), excluded=frozenset({"notes"}))
    assert list(selection.select(tools, lambda tool: tool in BUILTIN)) == ["new_context"]
    allowed = ToolSelection(allowed=frozenset({"notes", "read", "nope"}))
    assert list(allowed.select(tools, lambda tool: tool in BUILTIN)) == ["read", "notes"]
    assert allowed.unknown(tools) == ["nope"]


def _offered(tmp_path: Path, *flags: str, mode: str = "local") -> tuple[list[str], str, str]:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [{"text": "ok"}]}))
    trace = tmp_path / "trace.jsonl"
    trace.unlink(missing_ok=True)
    result = run_ctxmodes(
        tmp_path, "run", "--no-session", "--mode", mode, "--model", f"scripted:{script}",
        "--trace", str(trace), *flags, "hi",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    [request] = [json.loads(line) for line in trace.read_text().splitlines()]
    return [tool["name"] for tool in request["tools"]], request["system_prompt"], result.stdout


@pytest.mark.parametrize(
    ("flags", "offered"),
    [
        ((), LOCAL + BUILTIN),
        (("--no-tools",), []),
        (("-nbt",), LOCAL),
        (("--tools", "read, notes"), ["notes", "read"]),
        # Pi's read-only example: its search tools are offered when asked for by name.
        (("--tools", "read,grep,find,ls"), ["read", "grep", "find", "ls"]),
        (("-t", "read,bash", "-xt", "bash"), ["read"]),
        (("--exclude-tools", "new_context,bash"), [*LOCAL[1:], *BUILTIN[1:]]),
    ],
)  # fmt: skip
def test_the_model_is_offered_the_tools_the_flags_select(
    tmp_path: Path, flags: tuple[str, ...], offered: list[str]
) -> None:
    names, prompt, _ = _offered(tmp_path, *flags)
    assert sorted(names) == sorted(offered)
    for name in set(LOCAL + BUILTIN) - set(offered):
        assert f"- {name}:" not in prompt


def test_a_tool_name_no_tool_has_is_a_warning(tmp_path: Path) -> None:
    names, _, out = _offered(tmp_path, "--tools", "read,raed", mode="off")
    assert names == ["read"]
    assert "warning: No tool named raed in this session" in out


def test_an_allow_list_and_no_tools_together_are_refused(tmp_path: Path) -> None:
    result = run_ctxmodes(tmp_path, "run", "--tools", "read", "--no-tools", "hi")
    assert result.returncode == 2
    assert "not allowed with argument" in result.stderr


def test_pis_default_tools_choose_the_core_tools_and_the_flags_win(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    # Pi's powershell has no ctxmodes counterpart: passed over without a word; grep, which
    # is offered only when asked for, is asked for.
    tools = ["read", "bash", "grep", "powershell"]
    (agent / "settings.json").write_text(json.dumps({"defaultTools": tools}))
    names, _, out = _offered(tmp_path, mode="local")
    assert sorted(names) == sorted([*LOCAL, "read", "bash", "grep"])
    assert "warning" not in out
    assert _offered(tmp_path, "--tools", "edit", mode="off")[0] == ["edit"]
    assert _offered(tmp_path, "-nbt", mode="off")[0] == []
