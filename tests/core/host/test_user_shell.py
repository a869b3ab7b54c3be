"""Shell commands the user runs in a session (``!cmd``, RPC's ``bash``): recorded as Pi
records them — at once when the session is idle, at the end of the run otherwise — and
stopped on request."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from support.host_rig import EchoTool, ToolsPlugin, text_response, tool_response

from ctxmodes.host import records
from ctxmodes.host.options import HostOptions
from ctxmodes.session.models import BashExecutionMessage
from ctxmodes.tools.base import ToolError
from ctxmodes.tools.shell_config import ShellConfig


def _bash_messages(rig) -> list[dict]:
    return [m for m in rig.messages_in_file() if m["role"] == "bashExecution"]


def test_a_command_is_recorded_at_once_and_read_with_the_next_prompt(make_rig) -> None:
    rig = make_rig([text_response("noted")])
    seen = rig.session.run_shell_command("echo visible")
    rig.session.run_shell_command("echo hidden", exclude_from_context=True)
    assert (seen.output, seen.exit_code, seen.cancelled) == ("visible\n", 0, False)
    stored = _bash_messages(rig)
    assert [(m["command"], m["output"], m.get("excludeFromContext")) for m in stored] == [
        ("echo visible", "visible\n", None),
        ("echo hidden", "hidden\n", True),
    ]
    assert {"exitCode": 0, "cancelled": False, "truncated": False}.items() <= stored[0].items()
    rig.prompt("what did I run?")
    sent = rig.requests()[0].model_dump_json()
    assert "visible" in sent
    assert "hidden" not in sent


def test_a_command_recorded_during_a_run_waits_for_its_end(make_rig) -> None:
    tool = EchoTool()
    rig = make_rig(
        [tool_response("echo", {"text": "x"}), text_response("done")],
        plugins=[ToolsPlugin(tool)],
    )
    ran: list[BashExecutionMessage] = []
    tool.on_run = lambda context: ran.append(rig.session.run_shell_command("echo during"))
    rig.prompt("go")
    assert ran[0].output == "during\n"
    roles = [m["role"] for m in rig.messages_in_file()]
    assert roles == ["user", "assistant", "toolResult", "assistant", "bashExecution"]
    kinds = [type(record) for record in rig.records]
    recorded = next(
        at
        for at, record in enumerate(rig.records)
        if isinstance(record, records.MessageEnded) and record.message is ran[0]
    )
    assert kinds.index(records.AgentEnded) < recorded < kinds.index(records.AgentSettled)


def test_a_command_from_another_thread_is_recorded_before_the_call_returns(make_rig) -> None:
    rig = make_rig()
    done: list[BashExecutionMessage] = []
    worker = threading.Thread(target=lambda: done.append(rig.session.run_shell_command("true")))
    worker.start()
    worker.join(30)
    assert [m["command"] for m in _bash_messages(rig)] == ["true"]
    assert rig.session.messages[-1] is done[0]


def test_stopping_the_commands_records_them_as_cancelled(make_rig) -> None:
    rig = make_rig()
    started = threading.Event()
    result: list[BashExecutionMessage] = []

    def run() -> None:
        result.append(
            rig.session.run_shell_command(
                "echo begun; sleep 20", on_output=lambda piece: started.set()
            )
        )

    worker = threading.Thread(target=run)
    worker.start()
    assert started.wait(10)
    rig.session.abort_shell_commands()
    worker.join(30)
    assert (result[0].output, result[0].exit_code, result[0].cancelled) == ("begun\n", None, True)
    (stored,) = _bash_messages(rig)
    assert stored["cancelled"] is True
    assert "exitCode" not in stored


def test_a_shell_that_cannot_start_records_nothing(make_rig, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-bash"
    rig = make_rig(options=HostOptions(shell=ShellConfig(path=str(missing))))
    with pytest.raises(ToolError, match="The configured shell does not exist"):
        rig.session.run_shell_command("echo never")
    assert _bash_messages(rig) == []


def test_closing_the_session_stops_a_command_which_is_then_not_recorded(make_rig) -> None:
    rig = make_rig()
    started = threading.Event()
    result: list[BashExecutionMessage] = []

    def run() -> None:
        result.append(
            rig.session.run_shell_command("echo up; sleep 20", on_output=lambda _: started.set())
        )

    worker = threading.Thread(target=run)
    worker.start()
    assert started.wait(10)
    rig.session.shutdown("quit")
    worker.join(30)
    assert result[0].cancelled
    assert _bash_messages(rig) == []
