from __future__ import annotations

import os
import time

import pytest

from ctxmodes.tools.base import ToolContext, ToolResult
from ctxmodes.tools.notebook import NotebookTool
from ctxmodes.tools.runtime import TREE_RESET_NOTICE


def text_of(result: ToolResult) -> str:
    block = result.content[0]
    assert block.type == "text"
    return block.text


@pytest.fixture
def notebook(runtime) -> NotebookTool:
    return NotebookTool(runtime.notebook)


def run(notebook: NotebookTool, context: ToolContext, code: str, **extra) -> ToolResult:
    return notebook.execute("cell", {"code": code, **extra}, context)


def test_variables_survive_and_trailing_expression_is_displayed(notebook, context):
    first = run(notebook, context, "import math\nradius = 2\nmath.pi * radius")
    assert not first.is_error
    assert text_of(first) == "6.283185307179586\n"
    second = run(notebook, context, "print('radius is', radius)\nNone")
    assert text_of(second) == "radius is 2\n"
    assert text_of(run(notebook, context, "radius = radius + 1")) == "(no output)"
    assert text_of(run(notebook, context, "radius")) == "3\n"


def test_exceptions_show_a_traceback_and_keep_state(notebook, context):
    run(notebook, context, "kept = 'yes'")
    result = run(notebook, context, "def broken():\n    return 1 / 0\nbroken()")
    assert result.is_error
    text = text_of(result)
    assert "ZeroDivisionError: division by zero" in text
    assert "return 1 / 0" in text  # the cell's source is quoted
    assert "notebook worker" not in text  # the worker's own frames are hidden
    assert text_of(run(notebook, context, "kept")) == "'yes'\n"


def test_syntax_errors_are_reported(notebook, context):
    result = run(notebook, context, "def (:")
    assert result.is_error
    assert "SyntaxError" in text_of(result)


def test_output_streams_include_stderr_and_subprocesses(notebook, context):
    code = (
        "import subprocess, sys\n"
        "print('out')\n"
        "print('err', file=sys.stderr)\n"
        "subprocess.run(['echo', 'child'])"
    )
    result = run(notebook, context, code)
    assert text_of(result).startswith("out\nerr\nchild\n")


def test_stdin_is_closed_and_cwd_is_the_context_cwd(notebook, context, tmp_path):
    result = run(
        notebook,
        context,
        "import os\ntry:\n    input()\nexcept EOFError:\n    print('eof')\nos.getcwd()",
    )
    assert text_of(result) == f"eof\n{str(tmp_path)!r}\n"


@pytest.mark.slow  # kills and restarts the notebook's worker
def test_timeout_restarts_the_worker_and_says_state_was_lost(notebook, context):
    run(notebook, context, "lost = 1")
    started = time.monotonic()
    result = run(notebook, context, "import time\nprint('working')\ntime.sleep(30)", timeout=0.5)
    assert time.monotonic() - started < 5
    assert result.is_error
    assert result.details["stateLost"] is True
    text = text_of(result)
    assert text.startswith("working\n\n\nCell timed out after 0.5 seconds.")
    assert "variables, imports and definitions were lost" in text
    after = run(notebook, context, "lost")
    assert "NameError" in text_of(after)


def test_abort_interrupts_the_cell_and_keeps_state(notebook, context, aborting_context):
    run(notebook, context, "kept = 41")
    result = run(notebook, aborting_context(0.3), "import time\nkept += 1\ntime.sleep(30)")
    assert result.is_error
    text = text_of(result)
    assert "KeyboardInterrupt" in text
    assert text.endswith("Cell aborted. The notebook state was kept.")
    assert result.details["stateLost"] is False
    assert text_of(run(notebook, context, "kept")) == "42\n"


@pytest.mark.slow  # kills and restarts the notebook's worker
def test_abort_of_a_cell_that_swallows_interrupts_kills_the_worker(
    notebook, context, aborting_context
):
    code = "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(30)"
    started = time.monotonic()
    result = run(notebook, aborting_context(0.2), code)
    assert time.monotonic() - started < 5
    assert result.details["stateLost"] is True
    assert "Cell aborted." in text_of(result)
    assert text_of(run(notebook, context, "1 + 1")) == "2\n"


def test_worker_death_is_reported(notebook, context):
    run(notebook, context, "x = 1")
    result = run(notebook, context, "import os\nos._exit(3)")
    assert result.is_error
    assert "exited unexpectedly (status 3)" in text_of(result)
    assert "NameError" in text_of(run(notebook, context, "x"))


def test_reset_tells_the_model_once(notebook, runtime, context):
    run(notebook, context, "x = 1")
    runtime.reset_notebook()
    after = run(notebook, context, "x")
    assert text_of(after).startswith(f"[{TREE_RESET_NOTICE}]\n\n")
    assert "NameError" in text_of(after)
    assert not text_of(run(notebook, context, "1")).startswith("[")


def test_reset_without_state_is_silent(notebook, runtime, context):
    runtime.reset_notebook()
    assert text_of(run(notebook, context, "1")) == "1\n"


def test_long_output_is_bounded(notebook, context):
    result = run(notebook, context, "for i in range(3000):\n    print(i)")
    text = text_of(result)
    assert text.startswith("1000\n")
    assert "[Showing lines 1001-3000 of 3000." in text
    os.unlink(result.details["fullOutputPath"])


def test_invalid_arguments_are_an_error_result(notebook, context):
    result = notebook.execute("cell", {"code": 3}, context)
    assert result.is_error
    assert text_of(result).startswith("Invalid arguments for notebook: code:")
