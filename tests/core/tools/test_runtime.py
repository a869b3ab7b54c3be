from __future__ import annotations

import os
import threading
import time

import pytest

from ctxmodes.abort import AbortController
from ctxmodes.tools.base import ToolError
from ctxmodes.tools.runtime import ToolRuntime


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A reaped-but-not-yet-gone zombie cannot be signalled; treat it as dead.
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().split()[2] != "Z"


def test_processes_start_lazily_and_close_kills_them(tmp_path):
    runtime = ToolRuntime()
    shell = runtime.shell(tmp_path)
    notebook = runtime.notebook(tmp_path)
    assert not shell.running
    assert not notebook.running
    signal = AbortController().signal
    outcome = shell.run("sleep 60 & echo $!", signal=signal)
    background_pid = int(outcome.output.truncation.content)
    notebook.run("x = 1", signal=signal)
    assert shell.running
    assert notebook.running
    runtime.close()
    assert not shell.running
    assert not notebook.running
    deadline = time.monotonic() + 5
    while _alive(background_pid) and time.monotonic() < deadline:
        time.sleep(0.02)  # SIGKILL is delivered asynchronously
    assert not _alive(background_pid)


def test_a_closed_runtime_starts_fresh_processes(tmp_path):
    with ToolRuntime() as runtime:
        signal = AbortController().signal
        runtime.notebook(tmp_path).run("x = 1", signal=signal)
        runtime.close()
        outcome = runtime.notebook(tmp_path).run("x", signal=signal)
        assert not outcome.ok
        assert "NameError" in outcome.output.truncation.content


def test_same_session_objects_until_closed(tmp_path):
    with ToolRuntime() as runtime:
        assert runtime.shell(tmp_path) is runtime.shell(tmp_path / "elsewhere")
        assert runtime.notebook(tmp_path) is runtime.notebook(tmp_path)


def test_reset_notebook_without_a_notebook_does_nothing():
    runtime = ToolRuntime()
    runtime.reset_notebook()
    runtime.close()


def test_close_frees_a_command_running_on_another_thread(tmp_path):
    runtime = ToolRuntime()
    shell = runtime.shell(tmp_path)
    notebook = runtime.notebook(tmp_path)
    signal = AbortController().signal
    shell.run("true", signal=signal)
    notebook.run("1", signal=signal)
    outcomes: list[str] = []
    # Each command says it has started; close() comes only once both have.
    shell_started, notebook_started = threading.Event(), threading.Event()
    workers = [
        threading.Thread(
            target=lambda: outcomes.append(
                shell.run(
                    "echo started; sleep 60",
                    signal=signal,
                    on_progress=lambda _: shell_started.set(),
                ).status
            )
        ),
        threading.Thread(
            target=lambda: outcomes.append(
                notebook.run(
                    "import time; print('started', flush=True); time.sleep(60)",
                    signal=signal,
                    on_progress=lambda _: notebook_started.set(),
                ).status
            )
        ),
    ]
    for worker in workers:
        worker.start()
    assert shell_started.wait(30)
    assert notebook_started.wait(30)
    started = time.monotonic()
    runtime.close()
    for worker in workers:
        worker.join(timeout=10)
    assert time.monotonic() - started < 5
    assert sorted(outcomes) == ["exited", "exited"]


def test_closed_sessions_refuse_work(tmp_path):
    runtime = ToolRuntime()
    shell = runtime.shell(tmp_path)
    notebook = runtime.notebook(tmp_path)
    runtime.close()
    signal = AbortController().signal
    with pytest.raises(ToolError, match="shell session was closed"):
        shell.run("true", signal=signal)
    with pytest.raises(ToolError, match="notebook session was closed"):
        notebook.run("1", signal=signal)


def test_a_failing_progress_callback_leaves_no_command_running(tmp_path):
    def explode(_snapshot: object) -> None:
        raise RuntimeError("renderer bug")

    with ToolRuntime() as runtime:
        shell = runtime.shell(tmp_path)
        signal = AbortController().signal
        with pytest.raises(RuntimeError, match="renderer bug"):
            shell.run("echo tick; sleep 30", signal=signal, on_progress=explode)
        assert not shell.running
        outcome = shell.run("echo fresh", signal=signal)
        assert outcome.output.truncation.content == "fresh\n"
