"""Pi's tool flags: ``--tools`` (an allow list over every tool, a mode's included),
``--no-tools``, ``--no-builtin-tools`` (the core's own tools only) and ``--exclude-tools``;
what the model is offered is what the request carries, in Pi's order, and the system prompt
lists the same tools."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli_process import run_ctxmodes
from support.pi_print import API, run_ours, run_pi
from support.wire_server import Reply, WireServer, text_stream

from ctxmodes.tools.selection import ON_REQUEST, ToolSelection

pytestmark = pytest.mark.slow  # each test runs ctxmodes as a process, end to end

BUILTIN = ["read", "bash", "edit", "write", "notebook"]
LOCAL = ["new_context", "get_context_remaining", "history", "notes"]


def test_a_selection_offers_its_lists_order_then_the_cores_then_the_plugins() -> None:
    # Registered as the host registers them: the mode's tools first.
    tools = {name: name for name in ["new_context", "bash", "notebook", "read", "edit", "notes"]}

    def offered(selection: ToolSelection) -> list[str]:
        return list(selection.select(tools, lambda tool: tool not in ("new_context", "notes")))

    assert offered(ToolSelection()) == ["read", "bash", "edit", "notebook", "new_context", "notes"]
    assert offered(ToolSelection(builtin=(), excluded=frozenset({"notes"}))) == ["new_context"]
    assert offered(ToolSelection(builtin=("notes", "edit"))) == ["notes", "edit", "new_context"]
    allowed = ToolSelection(allowed=("notes", "read", "nope"))
    assert offered(allowed) == ["notes", "read"]
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
        ((), BUILTIN + LOCAL),
        (("--no-tools",), []),
        (("-nbt",), LOCAL),
        (("--tools", "read, notes"), ["read", "notes"]),
        # Pi's read-only example: its search tools are offered when asked for by name.
        (("--tools", "read,grep,find,ls"), ["read", "grep", "find", "ls"]),
        (("-t", "read,bash", "-xt", "bash"), ["read"]),
        (("-xt", "new_context,bash"), ["read", "edit", "write", "notebook", *LOCAL[1:]]),
    ],
)  # fmt: skip
def test_the_model_is_offered_the_tools_the_flags_select(
    tmp_path: Path, flags: tuple[str, ...], offered: list[str]
) -> None:
    names, prompt, _ = _offered(tmp_path, *flags)
    assert names == offered
    listed = [line.split(":")[0][2:] for line in prompt.splitlines() if line.startswith("- ")]
    assert [name for name in listed if name in [*LOCAL, *BUILTIN, *ON_REQUEST]] == offered


@pytest.mark.parametrize(
    ("flags", "default_tools"),
    [
        ((), None),
        (("--tools", "grep,read,ls,bash"), None),
        (("--tools", "write,read", "--exclude-tools", "bash"), None),
        (("--exclude-tools", "read"), None),
        ((), ["write", "grep", "read"]),
    ],
)
def test_the_tools_go_to_the_model_in_pis_order(
    tmp_path: Path, flags: tuple[str, ...], default_tools: list[str] | None
) -> None:
    argv = ["-p", "--no-session", "--model", "loop/m", *flags, "hi"]
    offered = {}
    for side, run, agent in (("pi", run_pi, "pi-agent"), ("ours", run_ours, "agent")):
        home = tmp_path / side
        home.mkdir()
        if default_tools is not None:
            (home / agent).mkdir(parents=True)
            (home / agent / "settings.json").write_text(json.dumps({"defaultTools": default_tools}))
        with WireServer([Reply(text_stream(API, "ok"))]) as server:
            result = run(home, server.base_url, argv)
            assert result.returncode == 0, result.stderr
            body = json.loads(server.requests[-1]["body"])
        offered[side] = [tool["function"]["name"] for tool in body["tools"]]
    # ctxmodes' notebook, which Pi has not, comes after Pi's tools.
    assert [name for name in offered["ours"] if name != "notebook"] == offered["pi"]


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
    assert names == ["read", "bash", "grep", *LOCAL]
    assert "warning" not in out
    assert _offered(tmp_path, "--tools", "edit", mode="off")[0] == ["edit"]
    assert _offered(tmp_path, "-nbt", mode="off")[0] == []
