"""``ctx_user_bash``, Pi's ``user_bash``: a plugin answers for the user's shell command
(``result``), runs it its own way (``operations``), or lets it run locally; a failing plugin
is reported and the next one asked, and a failing runner records nothing."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.host_rig import text_response

from ctxmodes import (
    AbortedError,
    AbortSignal,
    UserBashEvent,
    UserBashResult,
    UserCommandResult,
    hookimpl,
    local_shell_runner,
)
from ctxmodes.host.options import HostOptions
from ctxmodes.session.models import BashExecutionMessage
from ctxmodes.tools.base import ToolError
from ctxmodes.tools.shell_config import ShellConfig
from ctxmodes.tools.user_command import UserCommandError

OnData = Callable[[bytes], None]


class Answering:
    """Answers every command with ``answer`` (a callable of the event), noting each event."""

    def __init__(self, answer: Callable[[UserBashEvent], Any]) -> None:
        self.answer = answer
        self.events: list[UserBashEvent] = []

    @hookimpl
    def ctx_user_bash(self, session, event):
        self.events.append(event)
        return self.answer(event)


def _operations(runner: Callable[..., int | None]) -> Answering:
    return Answering(lambda event: UserBashResult(operations=runner))


def _bash_messages(rig) -> list[dict[str, Any]]:
    return [m for m in rig.messages_in_file() if m["role"] == "bashExecution"]


def test_a_result_is_recorded_as_given_and_nothing_runs(make_rig) -> None:
    given = UserCommandResult("from the plugin\n", 3, truncated=True, full_output_path="/x.log")
    plugin = Answering(lambda event: UserBashResult(result=given))
    rig = make_rig([text_response("noted")], plugins=[plugin])
    marker = rig.session.cwd / "ran"
    pieces: list[str] = []
    message = rig.session.run_shell_command(f"touch {marker}", on_output=pieces.append)
    assert not marker.exists()
    assert pieces == []
    assert plugin.events == [UserBashEvent(f"touch {marker}", False, rig.session.cwd)]
    (stored,) = _bash_messages(rig)
    assert {key: value for key, value in stored.items() if key != "timestamp"} == {
        "role": "bashExecution",
        "command": f"touch {marker}",
        "output": "from the plugin\n",
        "exitCode": 3,
        "cancelled": False,
        "truncated": True,
        "fullOutputPath": "/x.log",
    }
    assert message.output == "from the plugin\n"
    rig.prompt("what ran?")
    assert "from the plugin" in rig.requests()[0].model_dump_json()


def test_a_doubled_command_is_told_excluded_and_kept_from_the_model(make_rig) -> None:
    plugin = Answering(lambda event: UserBashResult(result=UserCommandResult("secret\n", 0)))
    rig = make_rig([text_response("noted")], plugins=[plugin])
    rig.session.run_shell_command("cat key", exclude_from_context=True)
    rig.session.run_shell_command("cat other", exclude_from_context=False)
    assert [event.exclude_from_context for event in plugin.events] == [True, False]
    assert [m.get("excludeFromContext") for m in _bash_messages(rig)] == [True, False]
    rig.session.run_shell_command("cat third")
    assert plugin.events[-1].exclude_from_context is False
    assert "excludeFromContext" not in _bash_messages(rig)[-1]
    rig.prompt("anything?")
    sent = rig.requests()[0].model_dump_json()
    assert sent.count("secret") == 2  # the two commands not excluded


def test_operations_run_the_prefixed_command_and_their_output_is_cleaned(make_rig) -> None:
    calls: list[tuple[Any, ...]] = []

    def remote(
        command: str, cwd: Path, on_data: OnData, signal: AbortSignal, timeout: float | None
    ) -> int:
        calls.append((command, cwd, timeout))
        on_data(b"\x1b[1mbold\x1b[0m\r\n")
        on_data("é".encode()[:1])  # a character split between two pieces
        on_data("é\n".encode()[1:])
        return 5

    options = HostOptions(shell=ShellConfig(command_prefix="shopt -s expand_aliases"))
    rig = make_rig(plugins=[_operations(remote)], options=options)
    pieces: list[str] = []
    message = rig.session.run_shell_command("ls", on_output=pieces.append)
    assert calls == [("shopt -s expand_aliases\nls", rig.session.cwd, None)]
    assert (message.output, message.exit_code, message.cancelled) == ("bold\né\n", 5, False)
    assert "".join(pieces) == "bold\né\n"
    (stored,) = _bash_messages(rig)
    assert stored["command"] == "ls"  # recorded as typed, as Pi records it


def test_operations_may_wrap_the_local_runner(make_rig) -> None:
    local = local_shell_runner()

    def with_greeting(
        command: str, cwd: Path, on_data: OnData, signal: AbortSignal, timeout: float | None
    ) -> int | None:
        return local(f"greeting=wrapped\n{command}", cwd, on_data, signal, timeout)

    rig = make_rig(plugins=[_operations(with_greeting)])
    message = rig.session.run_shell_command('echo "$greeting in $PWD"; exit 2')
    assert (message.output, message.exit_code) == (f"wrapped in {rig.session.cwd}\n", 2)


def test_long_output_of_operations_is_cut_and_kept_whole_in_a_file(make_rig) -> None:
    def many_lines(
        command: str, cwd: Path, on_data: OnData, signal: AbortSignal, timeout: float | None
    ) -> int:
        for n in range(1, 3001):
            on_data(f"{n}\n".encode())
        return 0

    rig = make_rig(plugins=[_operations(many_lines)])
    message = rig.session.run_shell_command("seq 1 3000")
    assert message.truncated
    assert message.output.splitlines()[0] == "1001"
    assert message.full_output_path is not None
    full = Path(message.full_output_path)
    assert full.read_text().splitlines() == [str(n) for n in range(1, 3001)]
    full.unlink()
    assert _bash_messages(rig)[0]["fullOutputPath"] == str(full)


@pytest.mark.parametrize("ends", ["raising", "returning"])
def test_stopping_operations_records_them_as_cancelled(make_rig, ends: str) -> None:
    started = threading.Event()

    def waits(
        command: str, cwd: Path, on_data: OnData, signal: AbortSignal, timeout: float | None
    ) -> int:
        on_data(b"begun\n")
        started.set()
        assert signal.wait(30)
        if ends == "raising":
            raise AbortedError("aborted")
        return 0

    rig = make_rig(plugins=[_operations(waits)])
    done: list[BashExecutionMessage] = []
    worker = threading.Thread(target=lambda: done.append(rig.session.run_shell_command("x")))
    worker.start()
    assert started.wait(10)
    rig.session.abort_shell_commands()
    worker.join(30)
    assert (done[0].output, done[0].exit_code, done[0].cancelled) == ("begun\n", None, True)
    (stored,) = _bash_messages(rig)
    assert stored["cancelled"] is True
    assert "exitCode" not in stored


def test_a_failing_runner_is_the_command_s_error_and_records_nothing(make_rig) -> None:
    def unreachable(
        command: str, cwd: Path, on_data: OnData, signal: AbortSignal, timeout: float | None
    ) -> int:
        on_data(b"partial\n")
        raise ConnectionError("host unreachable")

    rig = make_rig(plugins=[_operations(unreachable)])
    with pytest.raises(UserCommandError, match=r"^host unreachable$"):
        rig.session.run_shell_command("uptime")
    assert _bash_messages(rig) == []


def test_a_runner_answering_something_else_than_a_status_is_an_error(make_rig) -> None:
    def wrong(
        command: str, cwd: Path, on_data: OnData, signal: AbortSignal, timeout: float | None
    ) -> Any:
        return "0"

    rig = make_rig(plugins=[_operations(wrong)])
    with pytest.raises(UserCommandError, match="returned str, not an exit status"):
        rig.session.run_shell_command("true")
    assert _bash_messages(rig) == []


def test_a_failing_plugin_is_reported_and_the_next_one_answers(make_rig) -> None:
    def fail(event: UserBashEvent) -> None:
        raise RuntimeError("plugin broke")

    answering = Answering(lambda event: UserBashResult(result=UserCommandResult("next\n", 0)))
    failing = Answering(fail)
    # pluggy asks the plugin registered last first.
    rig = make_rig(plugins=[answering, failing])
    message = rig.session.run_shell_command("echo local")
    assert (len(failing.events), len(answering.events)) == (1, 1)
    assert message.output == "next\n"
    [(level, line)] = rig.ui.notifications
    assert level == "error"
    assert line.startswith("plugin error in user_bash: RuntimeError: plugin broke")


def test_when_every_plugin_fails_the_command_runs_locally(make_rig) -> None:
    def fail(event: UserBashEvent) -> None:
        raise RuntimeError("plugin broke")

    def wrong_answer(event: UserBashEvent) -> object:
        return {"result": {"output": "not typed"}}

    def wrong_field(event: UserBashEvent) -> UserBashResult:
        return UserBashResult(result=UserCommandResult(b"bytes", 0))  # type: ignore[arg-type]

    plugins = [Answering(fail), Answering(wrong_answer), Answering(wrong_field)]
    rig = make_rig(plugins=plugins)
    message = rig.session.run_shell_command("echo ran locally")
    assert (message.output, message.exit_code) == ("ran locally\n", 0)
    assert [len(plugin.events) for plugin in plugins] == [1, 1, 1]
    reported = [line for _, line in rig.ui.notifications]
    assert len(reported) == 3
    assert "UserCommandResult: wrong type for output" in reported[0]
    assert "ctx_user_bash returned dict, not a UserBashResult" in reported[1]
    assert "plugin broke" in reported[2]


def test_an_empty_answer_runs_locally_and_asks_no_other_plugin(make_rig) -> None:
    never = Answering(lambda event: UserBashResult(result=UserCommandResult("never", 0)))
    empty = Answering(lambda event: UserBashResult())
    rig = make_rig(plugins=[never, empty])
    message = rig.session.run_shell_command("echo here")
    assert message.output == "here\n"
    assert never.events == []


def test_a_result_during_a_run_is_recorded_after_it(make_rig) -> None:
    from support.host_rig import EchoTool, ToolsPlugin, tool_response

    tool = EchoTool()
    plugin = Answering(lambda event: UserBashResult(result=UserCommandResult("given\n", 0)))
    rig = make_rig(
        [tool_response("echo", {"text": "x"}), text_response("done")],
        plugins=[ToolsPlugin(tool), plugin],
    )
    tool.on_run = lambda context: rig.session.run_shell_command("during")
    rig.prompt("go")
    roles = [m["role"] for m in rig.messages_in_file()]
    assert roles == ["user", "assistant", "toolResult", "assistant", "bashExecution"]


@pytest.mark.slow  # waits out a half-second timeout
def test_the_local_runner_words_its_failures_as_pi(tmp_path: Path) -> None:
    local = local_shell_runner()
    from ctxmodes import AbortController

    signal = AbortController().signal
    with pytest.raises(ToolError, match=r"^timeout:0\.5$"):
        local("sleep 5", tmp_path, lambda data: None, signal, 0.5)
    with pytest.raises(ToolError, match=r"^Invalid timeout: must be a finite number of seconds$"):
        local("true", tmp_path, lambda data: None, signal, -1)
    with pytest.raises(ToolError, match=r"^Invalid timeout: maximum is 2147483\.647 seconds$"):
        local("true", tmp_path, lambda data: None, signal, 3e6)
    missing = tmp_path / "gone"
    gone = f"Working directory does not exist: {missing}\nCannot execute bash commands."
    with pytest.raises(ToolError, match=f"^{re.escape(gone)}$"):
        local("true", missing, lambda data: None, signal, None)
    stopped = AbortController()
    stopped.abort()
    with pytest.raises(AbortedError, match=r"^aborted$"):
        local("true", tmp_path, lambda data: None, stopped.signal, None)
