from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from support.pi_bash import pi_bash

from ctxmodes.abort import AbortController
from ctxmodes.tools.base import ToolContext, ToolResult
from ctxmodes.tools.shell import BashTool


@pytest.fixture
def bash(runtime) -> BashTool:
    return BashTool(runtime.shell)


def text_of(result: ToolResult) -> str:
    block = result.content[0]
    assert block.type == "text"
    return block.text


def run(bash: BashTool, context: ToolContext, command: str, **extra) -> ToolResult:
    return bash.execute("call-1", {"command": command, **extra}, context)


def test_directory_variables_and_functions_survive_between_calls(bash, context, tmp_path):
    (tmp_path / "sub").mkdir()
    first = run(bash, context, 'cd sub && export GREETING=hello && shout() { echo "$1!"; }')
    assert not first.is_error
    assert text_of(first) == "(no output)"
    second = run(bash, context, 'pwd; echo "$GREETING"; shout hi; declare -a xs=(1 2); true')
    assert text_of(second) == f"{tmp_path / 'sub'}\nhello\nhi!\n"
    assert second.details["cwd"] == str(tmp_path / "sub")
    assert text_of(run(bash, context, "echo ${xs[1]}")) == "2\n"


def test_stdout_and_stderr_are_merged_and_exit_code_reported(bash, context):
    result = run(bash, context, "echo out; echo err >&2; exit_with() { return $1; }; exit_with 3")
    assert result.is_error
    # As in Pi, the status follows the output after a blank line (the output keeps its
    # own final newline).
    assert text_of(result) == "out\nerr\n\n\nCommand exited with code 3"
    assert result.details["exitCode"] == 3


def test_stdin_is_closed(bash, context):
    started = time.monotonic()
    result = run(bash, context, "cat; read line; echo status=$?")
    assert text_of(result) == "status=1\n"
    assert time.monotonic() - started < 5


def test_output_cannot_fake_the_end_of_a_command(bash, context):
    result = run(bash, context, "set -x; printf '0 0 /\\n'; echo done; set +x")
    assert "done" in text_of(result)
    assert result.details["exitCode"] == 0
    # The shell is still in step: the next command gets its own output only.
    assert text_of(run(bash, context, "echo next")) == "next\n"


def test_malformed_commands_fail_without_hanging(bash, context):
    unclosed = run(bash, context, 'echo "unterminated')
    assert unclosed.is_error
    assert "unexpected EOF" in text_of(unclosed)
    heredoc = run(bash, context, "cat <<EOF\nbody")
    assert "body" in text_of(heredoc)
    assert text_of(run(bash, context, "echo fine")) == "fine\n"


def test_timeout_stops_the_command_and_keeps_the_shell(bash, context):
    run(bash, context, "export KEEP=kept")
    started = time.monotonic()
    result = run(bash, context, "echo before; sleep 20; echo after", timeout=0.3)
    assert time.monotonic() - started < 5
    assert result.is_error
    assert text_of(result) == "before\n\n\nCommand timed out after 0.3 seconds"
    assert "shellRestarted" not in result.details
    assert text_of(run(bash, context, "echo $KEEP")) == "kept\n"


def test_interrupts_work_even_if_this_process_ignores_sigint(runtime, context):
    # A host started in the background (nohup, `&`) inherits SIGINT as ignored.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        bash = BashTool(runtime.shell)
        run(bash, context, "export KEEP=kept")
        result = run(bash, context, "sleep 20", timeout=0.3)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert "shellRestarted" not in result.details
    assert text_of(run(bash, context, "echo $KEEP")) == "kept\n"


def test_abort_kills_a_long_command(bash, aborting_context):
    started = time.monotonic()
    result = run(bash, aborting_context(0.3), "echo started; sleep 30; echo never")
    assert time.monotonic() - started < 5
    assert result.is_error
    assert text_of(result) == "started\n\n\nCommand aborted"


@pytest.mark.slow  # kills and restarts the shell
def test_command_ignoring_interrupts_gets_the_shell_restarted(
    bash, context, aborting_context, tmp_path
):
    (tmp_path / "d").mkdir()
    run(bash, context, "cd d; export LOST=yes")
    result = run(bash, aborting_context(0.3), "trap '' INT; while true; do :; done")
    assert result.details["shellRestarted"] is True
    assert "new shell" in text_of(result)
    after = run(bash, context, 'pwd; echo "lost=${LOST:-}"')
    assert text_of(after) == f"{tmp_path / 'd'}\nlost=\n"


def test_exit_ends_the_command_not_the_shell(bash, context):
    run(bash, context, "export KEEP=kept")
    result = run(bash, context, "echo before; test -e /nonexistent || exit 4; echo never")
    assert result.is_error
    assert text_of(result) == "before\n\n\nCommand exited with code 4"
    assert "shellRestarted" not in result.details
    assert text_of(run(bash, context, "echo $KEEP")) == "kept\n"


def test_a_dead_shell_is_restarted_in_the_same_directory(bash, context, tmp_path):
    (tmp_path / "d").mkdir()
    run(bash, context, "cd d")
    result = run(bash, context, "builtin exit 4")
    assert result.is_error
    assert result.details["exitCode"] == 4
    assert result.details["shellRestarted"] is True
    assert "exited with status 4" in text_of(result)
    assert text_of(run(bash, context, "pwd")) == f"{tmp_path / 'd'}\n"


def test_long_output_keeps_the_tail_and_saves_the_rest(bash, context):
    result = run(bash, context, "seq 1 5000")
    text = text_of(result)
    assert text.startswith("3001\n")
    path = result.details["fullOutputPath"]
    assert text.endswith(f"5000\n\n[Showing lines 3001-5000 of 5000. Full output: {path}]")
    assert result.details["truncation"]["totalLines"] == 5000
    assert Path(path).read_text().splitlines() == [str(i) for i in range(1, 5001)]
    os.unlink(path)


def test_a_single_huge_line_shows_its_end(bash, context):
    result = run(bash, context, "head -c 60000 /dev/zero | tr '\\0' x; echo END")
    text = text_of(result)
    assert text.startswith("x" * 100)
    assert "xEND\n\n[Showing last 50.0KB of line 1 (line is 58.6KB). Full output: " in text
    os.unlink(result.details["fullOutputPath"])


def test_background_jobs_do_not_block(bash, context):
    started = time.monotonic()
    result = run(bash, context, "sleep 30 & echo launched")
    assert text_of(result) == "launched\n"
    assert time.monotonic() - started < 5


def test_progress_updates_stream_partial_output(bash, tmp_path):
    updates: list[ToolResult] = []
    context = ToolContext(cwd=tmp_path, signal=AbortController().signal, on_update=updates.append)
    result = run(bash, context, "echo first; sleep 0.4; echo second")
    assert text_of(result) == "first\nsecond\n"
    assert any(text_of(update) == "first\n" for update in updates)


def test_invalid_arguments_are_an_error_result(bash, context):
    missing = bash.execute("c", {}, context)
    assert missing.is_error
    assert text_of(missing) == "Invalid arguments for bash: command: Field required"
    negative = bash.execute("c", {"command": "true", "timeout": -1}, context)
    assert negative.is_error
    assert "timeout" in text_of(negative)


def test_an_already_aborted_call_does_not_run(bash, tmp_path):
    controller = AbortController()
    controller.abort()
    marker = tmp_path / "ran"
    result = run(bash, ToolContext(cwd=tmp_path, signal=controller.signal), f"touch {marker}")
    assert result.is_error
    assert text_of(result) == "Operation aborted"
    assert not marker.exists()


def test_schema_is_plain_json_schema(bash):
    assert bash.parameters == {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "Bash command to execute"},
            "timeout": {
                "type": "number",
                "exclusiveMinimum": 0,
                "description": "Timeout in seconds (optional, no default timeout)",
            },
        },
        "required": ["command"],
    }


@pytest.mark.pi
def test_results_agree_with_pi(pi_node, bash, context, tmp_path):
    calls = [
        {"command": "echo hi"},
        {"command": "true"},
        {"command": "printf 'no newline'"},
        {"command": "echo out; echo err >&2; exit 3"},
        {"command": "seq 1 3000"},
        {"command": "seq 1 30000 | sed 's/$/ padding to pass the byte limit/'"},
        {"command": "head -c 60000 /dev/zero | tr '\\0' x"},
        {"command": "echo started; sleep 5", "timeout": 0.5},
    ]
    answers = pi_bash(pi_node, tmp_path, calls)
    for call, answer in zip(calls, answers, strict=True):
        ours = bash.execute("id", call, context)
        theirs = answer["error"] if "error" in answer else answer["ok"]["content"][0]["text"]
        assert ours.is_error == ("error" in answer), call
        ours_text = text_of(ours)
        path = ours.details.get("fullOutputPath")
        if path is not None:
            os.unlink(path)
            pi_path = theirs.rsplit("Full output: ", 1)[1].rstrip("]")
            theirs = theirs.replace(pi_path, path)
            os.unlink(pi_path)
        assert ours_text == theirs, call
