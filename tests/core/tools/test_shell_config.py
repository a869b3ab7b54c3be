"""The configured shell (Pi's ``shellPath`` and ``shellCommandPrefix``) in the ``bash`` tool:
the prefix runs before every command, the configured program is the one that runs, and a
program that is missing or is no bash is a one-line error result."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from support.pi_bash import pi_bash

from ctxmodes.tools.base import ToolContext, ToolResult
from ctxmodes.tools.runtime import ToolRuntime
from ctxmodes.tools.shell import BashTool
from ctxmodes.tools.shell_config import ShellConfig

ALIASES = "shopt -s expand_aliases\nalias greet='echo hello from the alias'"


def text_of(result: ToolResult) -> str:
    block = result.content[0]
    assert block.type == "text"
    return block.text


def run(runtime: ToolRuntime, context: ToolContext, command: str) -> ToolResult:
    return BashTool(runtime.shell).execute("call-1", {"command": command}, context)


def logging_bash(directory: Path) -> Path:
    """A bash that writes each of its invocations' arguments to ``invocations.log``."""
    log = directory / "invocations.log"
    wrapper = directory / "logging-bash"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec bash "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


@pytest.fixture
def configured(tmp_path: Path):
    runtimes: list[ToolRuntime] = []

    def make(config: ShellConfig) -> ToolRuntime:
        runtime = ToolRuntime(interrupt_grace=0.3, shell_config=config)
        runtimes.append(runtime)
        return runtime

    yield make
    for runtime in runtimes:
        runtime.close()


def test_an_alias_the_prefix_defines_works_in_every_command(configured, context):
    runtime = configured(ShellConfig(command_prefix=ALIASES))
    first = run(runtime, context, "greet")
    assert (first.is_error, text_of(first)) == (False, "hello from the alias\n")
    # A later command gets the prefix again: unaliasing in one command does not last.
    run(runtime, context, "unalias greet")
    assert text_of(run(runtime, context, "greet; echo $?")) == "hello from the alias\n0\n"


def test_the_prefix_runs_before_each_command_in_the_commands_shell(configured, context, tmp_path):
    runtime = configured(ShellConfig(command_prefix=f"echo ran >> {tmp_path / 'prefix.log'}"))
    run(runtime, context, "cd /")
    run(runtime, context, "pwd")
    assert (tmp_path / "prefix.log").read_text() == "ran\nran\n"
    assert text_of(run(runtime, context, "pwd")) == "/\n"


def test_without_a_prefix_an_alias_is_unknown(configured, context):
    result = run(configured(ShellConfig()), context, "greet")
    assert result.is_error
    assert "greet: command not found" in text_of(result)


def test_the_configured_program_is_the_shell_that_runs(configured, context, tmp_path):
    wrapper = logging_bash(tmp_path)
    runtime = configured(ShellConfig(path=str(wrapper)))
    assert text_of(run(runtime, context, "echo one")) == "one\n"
    assert text_of(run(runtime, context, "echo two")) == "two\n"
    invocations = (tmp_path / "invocations.log").read_text().splitlines()
    # Asked which shell it is, then started once for both commands.
    assert invocations[-1] == "--noprofile --norc"
    assert invocations.count("--noprofile --norc") == 1


def test_a_program_under_home_or_relative_to_the_working_directory(
    configured, context, tmp_path, monkeypatch
):
    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    logging_bash(home / "bin")
    run(configured(ShellConfig(path="~/bin/logging-bash")), context, "true")
    assert (home / "bin" / "invocations.log").read_text().endswith("--noprofile --norc\n")
    logging_bash(tmp_path)  # the context's working directory
    runtime = configured(ShellConfig(path="./logging-bash"))
    (tmp_path / "sub").mkdir()
    run(runtime, context, "cd sub")
    run(runtime, context, "builtin exit")
    # Restarted in sub/, the shell is still the working directory's program.
    assert text_of(run(runtime, context, "pwd")) == f"{tmp_path / 'sub'}\n"
    assert (tmp_path / "invocations.log").read_text().count("--noprofile --norc") == 2


def test_a_missing_program_is_a_one_line_error_result(configured, context, tmp_path):
    missing = tmp_path / "no-such-bash"
    started = time.monotonic()
    result = run(configured(ShellConfig(path=str(missing))), context, "echo never")
    assert time.monotonic() - started < 5
    assert result.is_error
    assert text_of(result) == (
        f"The configured shell does not exist: {missing} (shell.path, Pi's shellPath)"
    )


def test_a_program_that_is_not_bash_is_refused(configured, context):
    result = run(configured(ShellConfig(path=sys.executable)), context, "echo never")
    assert result.is_error
    assert text_of(result) == (
        f"The configured shell {sys.executable} is not bash: ctxmodes runs commands in one "
        "persistent bash (shell.path, Pi's shellPath)"
    )


def test_a_program_that_cannot_be_run_is_refused(configured, context, tmp_path):
    plain = tmp_path / "not-executable"
    plain.write_text("#!/bin/sh\n")
    result = run(configured(ShellConfig(path=str(plain))), context, "echo never")
    assert result.is_error
    assert text_of(result) == (
        f"Cannot run the configured shell {plain}: Permission denied (shell.path, Pi's shellPath)"
    )


def test_configuring_another_shell_replaces_the_running_one(configured, context, tmp_path):
    runtime = configured(ShellConfig())
    run(runtime, context, "export KEPT=yes")
    runtime.configure_shell(ShellConfig())
    assert text_of(run(runtime, context, "echo $KEPT")) == "yes\n"
    wrapper = logging_bash(tmp_path)
    runtime.configure_shell(ShellConfig(path=str(wrapper)))
    assert text_of(run(runtime, context, "echo ${KEPT-gone}")) == "gone\n"
    assert (tmp_path / "invocations.log").read_text().endswith("--noprofile --norc\n")


def test_results_agree_with_pi(pi_node, configured, context, tmp_path):
    wrapper = logging_bash(tmp_path)
    calls = [
        {"command": "greet"},
        {"command": "greet; echo status $?"},
        {"command": "unalias greet; echo gone"},
        {"command": "greet"},
        {"command": 'echo "$BASH" | grep -c bash'},
        {"command": 'echo "unterminated'},
    ]
    settings = {"commandPrefix": ALIASES, "shellPath": str(wrapper)}
    answers = pi_bash(pi_node, tmp_path, calls, settings)
    runtime = configured(ShellConfig(path=str(wrapper), command_prefix=ALIASES))
    for call, answer in zip(calls, answers, strict=True):
        ours = run(runtime, context, call["command"])
        theirs = answer["error"] if "error" in answer else answer["ok"]["content"][0]["text"]
        assert ours.is_error == ("error" in answer), call
        if call["command"] == 'echo "unterminated':
            # Each names its own script (Pi's ``-c`` string, ctxmodes' sourced file), at the
            # same line: the prefix's two lines come first in both.
            assert theirs.split("line ", 1)[1] == text_of(ours).split("line ", 1)[1], call
        else:
            assert text_of(ours) == theirs, call


def test_a_missing_program_is_an_error_in_pi_too(pi_node, configured, context, tmp_path):
    missing = str(tmp_path / "no-such-bash")
    answer = pi_node(
        "core/tools/bash.js",
        "const tool = mod.createBashToolDefinition(input.cwd, {shellPath: input.path});\n"
        "try { await tool.execute('id', {command: 'echo never'}); process.stdout.write('0'); }\n"
        "catch (e) { process.stdout.write(JSON.stringify(e.message)); }\n",
        {"cwd": str(tmp_path), "path": missing},
    )
    assert answer == f"Custom shell path not found: {missing}"
    assert run(configured(ShellConfig(path=missing)), context, "echo never").is_error
