"""RPC's ``bash`` through a plugin that takes over the user's commands: the real Pi with an
extension handling ``user_bash``, ctxmodes with a plugin doing the same through
``ctx_user_bash``, answer and record the same commands alike — a result given instead of
running, output of the plugin's own runner (cleaned, cut, kept in a file, stopped), a
runner that fails, a handler that fails and leaves the command to the local shell."""

from __future__ import annotations

import json
import os
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from support.pi_print import API
from support.rpc_client import RpcProcess, bash_messages, our_rpc, pi_rpc
from support.wire_server import Reply, WireServer, text_stream

JsonObject = dict[str, Any]

#: The Pi extension: what it does is chosen by a comment at the end of the command.
EXTENSION = r"""
export default function (pi) {
  pi.on("user_bash", (event) => {
    const { command } = event;
    const folder = event.cwd.split("/").pop();
    if (command.includes("# throw")) throw new Error("handler broke");
    if (command.includes("# replace")) {
      const output = `replaced ${event.excludeFromContext} in ${folder}\n`;
      return { result: { output, exitCode: 3, cancelled: false, truncated: false } };
    }
    if (command.includes("# remote")) {
      return { operations: { exec: async (text, cwd, { onData }) => {
        onData(Buffer.from(`\x1b[1mremote\x1b[0m ${text} in ${cwd.split("/").pop()}\r\n`));
        return { exitCode: 7 };
      } } };
    }
    if (command.includes("# many")) {
      return { operations: { exec: async (text, cwd, { onData }) => {
        for (let n = 1; n <= 3000; n++) onData(Buffer.from(`${n}\n`));
        return { exitCode: 0 };
      } } };
    }
    if (command.includes("# fail")) {
      return { operations: { exec: async () => { throw new Error("remote unreachable"); } } };
    }
    if (command.includes("# wait")) {
      return { operations: { exec: (text, cwd, { onData, signal }) => new Promise((resolve) => {
        onData(Buffer.from("waiting\n"));
        signal.addEventListener("abort", () => resolve({ exitCode: 0 }), { once: true });
      }) } };
    }
    return undefined;
  });
}
"""

#: ctxmodes' plugin doing what the extension does.
PLUGIN = """
from ctxmodes import UserBashResult, UserCommandResult, hookimpl


def remote(text, cwd, on_data, signal, timeout):
    on_data(f"\\x1b[1mremote\\x1b[0m {text} in {cwd.name}\\r\\n".encode())
    return 7


def many(text, cwd, on_data, signal, timeout):
    for n in range(1, 3001):
        on_data(f"{n}\\n".encode())
    return 0


def fail(text, cwd, on_data, signal, timeout):
    raise ConnectionError("remote unreachable")


def wait(text, cwd, on_data, signal, timeout):
    on_data(b"waiting\\n")
    signal.wait()
    return 0


@hookimpl
def ctx_user_bash(session, event):
    command = event.command
    if "# throw" in command:
        raise RuntimeError("handler broke")
    if "# replace" in command:
        excluded = "true" if event.exclude_from_context else "false"
        output = f"replaced {excluded} in {event.cwd.name}\\n"
        return UserBashResult(result=UserCommandResult(output, 3))
    runners = {"# remote": remote, "# many": many, "# fail": fail, "# wait": wait}
    for marker, runner in runners.items():
        if marker in command:
            return UserBashResult(operations=runner)
    return None
"""

FULL_OUTPUT = "".join(f"{n}\n" for n in range(1, 3001))


def _plugin_path(tmp_path: Path) -> str:
    plugins = tmp_path / "plugins"
    info = plugins / "user_bash_probe-1.0.dist-info"
    info.mkdir(parents=True)
    (plugins / "user_bash_probe.py").write_text(textwrap.dedent(PLUGIN))
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: user_bash_probe\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[ctxmodes]\nuser_bash_probe = user_bash_probe\n")
    return os.pathsep.join([str(plugins), os.environ.get("PYTHONPATH", "")])


def _wait_for_file(path: Path, size: int) -> None:
    # Pi answers before its file stream has written the file, and does not flush it on
    # exit: the file is waited for.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if path.exists() and path.stat().st_size >= size:
            return
        time.sleep(0.05)


def _commands(process: RpcProcess) -> list[JsonObject]:
    # A prompt first: Pi writes its session file once an answer came.
    process.request({"type": "prompt", "message": "Hello"})
    process.wait_for_event("agent_settled")
    answers = [
        process.request({"type": "bash", "command": "echo never # replace"}),
        process.request(
            {"type": "bash", "command": "echo never # replace", "excludeFromContext": True}
        ),
        process.request({"type": "bash", "command": "echo never # remote"}),
        process.request({"type": "bash", "command": "echo never # fail"}),
        process.request({"type": "bash", "command": "echo left-to-the-shell # throw"}),
        process.request({"type": "bash", "command": "echo never # many"}),
    ]
    full = Path(answers[-1]["data"]["fullOutputPath"])
    _wait_for_file(full, len(FULL_OUTPUT))
    process.send({"id": "slow", "type": "bash", "command": "echo never # wait"})
    process.wait_for(lambda line: line.get("type") == "bash_execution_update")
    answers.append(process.request({"type": "abort_bash"}))
    answers.append(process.wait_for(lambda line: line.get("id") == "slow"))
    return answers


def _take_full_output_paths(items: list[JsonObject]) -> list[str]:
    """The ``fullOutputPath`` of each of ``items`` that has one, taken out of it: each
    program names its own temporary file."""
    return [item.pop("fullOutputPath") for item in items if "fullOutputPath" in item]


@pytest.mark.pi
def test_a_plugin_takes_over_the_users_commands_as_a_pi_extension_does(tmp_path: Path) -> None:
    extension = tmp_path / "user-bash.js"
    extension.write_text(EXTENSION)
    done: dict[str, tuple[list[JsonObject], RpcProcess, Path]] = {}
    runs = (
        ("pi", lambda where, url: pi_rpc(where, url, ["-e", str(extension)])),
        (
            "ours",
            lambda where, url: our_rpc(where, url, env={"PYTHONPATH": _plugin_path(tmp_path)}),
        ),
    )
    for name, start in runs:
        # The same folder name for both: the handlers tell it.
        where = tmp_path / name / "work"
        where.mkdir(parents=True)
        with (
            WireServer([Reply(text_stream(API, "Fine."))]) as server,
            start(where, server.base_url) as process,
        ):
            answers = _commands(process)
            assert process.close() == 0
        done[name] = (answers, process, where)

    theirs, pi, pi_dir = done["pi"]
    ours, mine, our_dir = done["ours"]
    for answers in (theirs, ours):
        full = Path(answers[5]["data"]["fullOutputPath"])
        assert full.read_text() == FULL_OUTPUT
    their_paths = _take_full_output_paths([a.get("data", {}) for a in theirs])
    our_paths = _take_full_output_paths([a.get("data", {}) for a in ours])
    assert ours == theirs
    assert [list(a.get("data", {})) for a in ours] == [list(a.get("data", {})) for a in theirs]
    assert [a["data"] if a["success"] else a["error"] for a in theirs[:5]] == [
        {
            "output": "replaced false in work\n",
            "exitCode": 3,
            "cancelled": False,
            "truncated": False,
        },
        {
            "output": "replaced true in work\n",
            "exitCode": 3,
            "cancelled": False,
            "truncated": False,
        },
        {
            "output": "remote echo never # remote in work\n",
            "exitCode": 7,
            "cancelled": False,
            "truncated": False,
        },
        "remote unreachable",
        {"output": "left-to-the-shell\n", "exitCode": 0, "cancelled": False, "truncated": False},
    ]
    assert theirs[-1]["data"] == {"output": "waiting\n", "cancelled": True, "truncated": False}

    their_messages, our_messages = bash_messages(pi_dir), bash_messages(our_dir)
    their_files = _take_full_output_paths(their_messages)
    our_files = _take_full_output_paths(our_messages)
    assert our_messages == their_messages
    assert [list(m) for m in our_messages] == [list(m) for m in their_messages]  # key order
    assert (their_files, our_files) == (their_paths, our_paths)
    assert [m["command"] for m in their_messages] == [
        "echo never # replace",
        "echo never # replace",
        "echo never # remote",
        "echo left-to-the-shell # throw",
        "echo never # many",
        "echo never # wait",
    ]
    for path in (*their_paths, *our_paths):
        Path(path).unlink()
    # Pi reports the failing handler as an extension error; ctxmodes as a plugin error.
    assert any(line["type"] == "extension_error" for line in pi.lines)
    assert any("handler broke" in json.dumps(line) for line in mine.lines)
