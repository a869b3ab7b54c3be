"""The embedding page's examples run as written, do what the page says, pass
``mypy --strict`` as a program's own code would, and import only public names."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from support.doc_pages import DOCS, blocks, example
from support.public_surface import fence_violations
from support.terminal import GateTool

from ctxmodes.sdk import Agent, open_agent

#: The page's Python examples, each run by a test below.
EXAMPLES = ("embedding", "embedding-tools", "embedding-user-bash", "embedding-asyncio")


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("CTXMODES_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run_example(name: str) -> tuple[list[str], dict[str, Any]]:
    """The example's printed lines and its module namespace."""
    out = io.StringIO()
    namespace: dict[str, Any] = {"__name__": "embedding_example"}
    block = example(name)
    with contextlib.redirect_stdout(out):
        exec(compile(block.body, block.where, "exec"), namespace)
    return out.getvalue().splitlines(), namespace


def test_the_embedding_example_runs(isolated):
    lines, namespace = run_example("embedding")
    assert lines[0] == "context window 1 — previous window archived"
    assert "Window 1: reading my plan and carrying on." in lines[1]
    assert lines[2].startswith("now in window 1 of ")
    work = namespace["work"]
    assert isinstance(work, Path)
    (session_file,) = (work / "sessions").glob("*.jsonl")
    assert lines[2].endswith(str(session_file))
    assert b'"customType":"codex-context-tree-archive"' in session_file.read_bytes()


def test_the_tools_example_calls_the_programs_tool_and_reads_the_note(isolated):
    lines, namespace = run_example("embedding-tools")
    assert lines == ["clock: 09:30", "Asked at 09:30."]
    (session_file,) = (namespace["work"] / "sessions").glob("*.jsonl")
    results = [
        (entry["message"]["toolName"], entry["message"]["content"][0]["text"])
        for entry in map(json.loads, session_file.read_text().splitlines())
        if entry.get("message", {}).get("role") == "toolResult"
    ]
    assert results[0] == ("clock", "09:30")


def test_the_user_bash_example_answers_runs_elsewhere_and_runs_locally(isolated):
    lines, namespace = run_example("embedding-user-bash")
    # The sandbox is a new empty directory, where the session's folder holds the sessions.
    assert lines == ["deploys are frozen", "0", "here"]
    (session_file,) = (namespace["work"] / "sessions").glob("*.jsonl")
    recorded = [
        (m["command"], m.get("exitCode"), m.get("excludeFromContext"))
        for m in (
            entry["message"]
            for entry in map(json.loads, session_file.read_text().splitlines())
            if entry["type"] == "message"
        )
        if m["role"] == "bashExecution"
    ]
    assert recorded == [
        ("deploy", 1, False),
        ("ls -A | wc -l # sandbox", 0, False),
        ("echo here", 0, True),
    ]


def test_the_asyncio_example_runs_and_its_cancellation_stops_the_run(isolated):
    threads_before = set(threading.enumerate())
    lines, namespace = run_example("embedding-asyncio")
    assert lines == ["Hello from a coroutine."]
    ask = namespace["ask"]
    gate = GateTool()
    script = isolated / "gate.json"
    script.write_text(
        json.dumps({"responses": [{"tool_calls": [{"name": "gate"}]}, {"text": "Next."}]})
    )

    class GatePlugin:
        from ctxmodes import hookimpl

        @hookimpl
        def ctx_register_tools(self, register: Any, session: Any) -> None:
            register(gate)

    async def cancel_in_the_tool(agent: Agent) -> None:
        task = asyncio.create_task(ask(agent, "wait at the gate"))
        assert await asyncio.to_thread(gate.entered.wait, 10.0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not agent.is_busy()
        await ask(agent, "go on")

    with open_agent(
        cwd=isolated,
        mode="off",
        model=f"scripted:{script}",
        session_dir=isolated / "sessions",
        plugins=[GatePlugin()],
    ) as agent:
        asyncio.run(cancel_in_the_tool(agent))
        roles = [(m.role, getattr(m, "stop_reason", None)) for m in agent.session.messages]
    assert not gate.opened.is_set()
    assert roles == [
        ("user", None),
        ("assistant", "toolUse"),
        ("toolResult", None),
        ("assistant", "aborted"),
        ("user", None),
        ("assistant", "stop"),
    ]
    # The agent's worker and the coroutines' threads are gone.
    assert set(threading.enumerate()) - threads_before == set()


def test_the_page_runs_every_python_example_it_shows():
    page = DOCS / "embedding.md"
    assert {b.example for b in blocks(page) if b.language == "python"} == set(EXAMPLES)


@pytest.mark.slow  # a mypy run
def test_the_examples_pass_mypy_strict_and_import_only_public_names(tmp_path):
    files = []
    for name in EXAMPLES:
        block = example(name)
        assert fence_violations(block.body, block.where) == []
        path = tmp_path / f"{name.replace('-', '_')}.py"
        path.write_text(block.body)
        files.append(str(path))
    # In a process of its own: mypy raises the interpreter's recursion limit for good, which
    # would change what later tests in this process see.
    command = ["--strict", "--cache-dir", str(tmp_path / "mypy-cache"), "--no-error-summary"]
    done = subprocess.run(
        [sys.executable, "-m", "mypy", *command, *files],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


@pytest.mark.slow  # a program per example
@pytest.mark.parametrize("name", EXAMPLES)
def test_each_example_runs_as_a_program_and_leaves_nothing_open(name, tmp_path):
    """As its own program, in Python's development mode with ResourceWarning an error: an
    unclosed file, socket or process would print on standard error."""
    program = tmp_path / "program.py"
    program.write_text(example(name).body)
    environment = {**os.environ, "CTXMODES_CONFIG_DIR": str(tmp_path / "config")}
    done = subprocess.run(
        [sys.executable, "-X", "dev", "-W", "error::ResourceWarning", str(program)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=environment,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout
