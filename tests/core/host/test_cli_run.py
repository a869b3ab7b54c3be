"""``ctxmodes run`` end to end, in a subprocess, with the scripted model and the real tools."""

from __future__ import annotations

import json

import pytest
from support.cli_process import run_cli

pytestmark = pytest.mark.slow  # each test runs ctxmodes as a process, end to end


def calls(*tool_calls: tuple[str, dict]) -> dict:
    return {
        "tool_calls": [{"name": name, "arguments": arguments} for name, arguments in tool_calls]
    }


def test_shell_and_notebook_state_carry_across_turns(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    script = {
        "responses": [
            calls(
                ("bash", {"command": "mkdir -p work && cd work && export GREETING=hello"}),
                ("notebook", {"code": "counter = 41"}),
            ),
            {"text": "Set up."},
            calls(
                ("bash", {"command": 'echo "$GREETING from $(pwd)"'}),
                ("notebook", {"code": "print(counter + 1)"}),
            ),
            {"text": "Done."},
        ]
    }
    trace = tmp_path / "trace.jsonl"
    result = run_cli(
        tmp_path, script, "--cwd", str(project), "--trace", str(trace), "set up", "use them"
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "> set up" in out
    assert "-> bash" in out
    assert f"hello from {project / 'work'}" in out
    assert "<- notebook: 42" in out
    assert out.rstrip().endswith("Done.")

    sessions = list((tmp_path / "agent" / "sessions").glob("*/*.jsonl"))
    assert len(sessions) == 1
    assert sessions[0].parent.name == "--" + str(project).strip("/").replace("/", "-") + "--"
    header = json.loads(sessions[0].read_text().splitlines()[0])
    assert header["cwd"] == str(project)

    requests = [json.loads(line) for line in trace.read_text().splitlines()]
    assert [r["purpose"] for r in requests] == ["turn"] * 4
    assert {tool["name"] for tool in requests[0]["tools"]} >= {"bash", "notebook", "read"}
    assert str(project) in requests[0]["system_prompt"]
    roles = [m["role"] for m in requests[-1]["messages"]]
    assert roles == [
        "user",
        "assistant",
        "toolResult",
        "toolResult",
        "assistant",
        "user",
        "assistant",
        "toolResult",
        "toolResult",
    ]


def test_commands_in_the_prompt_list(tmp_path):
    script = {"responses": [{"text": "first"}, {"text": "second"}]}
    result = run_cli(tmp_path, script, "one", "/mode", "/new", "two")
    assert result.returncode == 0, result.stderr
    assert "Mode: off" in result.stdout
    assert len(list((tmp_path / "agent" / "sessions").glob("*/*.jsonl"))) == 2


def test_a_failure_exits_non_zero_with_one_line(tmp_path):
    result = run_cli(tmp_path, {"responses": [{"text": "only one"}]}, "first", "second")
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(
        "ctxmodes: error: model error from scripted/scripted: scripted model: call 2"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--mode", "nope", "hi"], "unknown mode 'nope'"),
        (
            ["--session", "missing-dir/x.jsonl", "--cwd", "does-not-exist", "hi"],
            "no such directory",
        ),
    ],
)
def test_configuration_errors(tmp_path, args, message):
    result = run_cli(tmp_path, {"responses": []}, *args)
    assert result.returncode == 1
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
