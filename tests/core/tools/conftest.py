from __future__ import annotations

import json
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.pi_oracle import pi_node_modules

from ctxmodes.abort import AbortController
from ctxmodes.tools.base import ToolContext, ToolResult
from ctxmodes.tools.runtime import ToolRuntime

AbortingContext = Callable[..., ToolContext]


@pytest.fixture
def runtime() -> Iterator[ToolRuntime]:
    # A short grace keeps the "command ignores SIGINT" cases fast.
    rt = ToolRuntime(interrupt_grace=0.3)
    yield rt
    rt.close()


@pytest.fixture
def context(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path, signal=AbortController().signal)


@pytest.fixture
def aborting_context(tmp_path: Path) -> Iterator[AbortingContext]:
    """Factory: a context whose signal aborts ``seconds`` later, from another thread."""
    timers: list[threading.Timer] = []

    def make(seconds: float, updates: list[ToolResult] | None = None) -> ToolContext:
        controller = AbortController()
        timer = threading.Timer(seconds, controller.abort)
        timer.start()
        timers.append(timer)
        on_update = updates.append if updates is not None else (lambda _result: None)
        return ToolContext(cwd=tmp_path, signal=controller.signal, on_update=on_update)

    yield make
    for timer in timers:
        timer.cancel()


def _pi_dist() -> Path | None:
    root = pi_node_modules()
    if root is None or shutil.which("node") is None:
        return None
    return root / "@earendil-works" / "pi-coding-agent" / "dist"


PiNode = Callable[[str, str, Any], Any]


@pytest.fixture
def pi_node() -> PiNode:
    """Runs JavaScript against a module of the real Pi 0.85.0 (skips the test without it).

    ``pi_node("core/tools/truncate.js", body, payload)``: ``body`` sees the module as ``mod``
    and ``payload`` as ``input``, and must write its JSON answer to stdout.
    """
    dist = _pi_dist()
    if dist is None:
        pytest.skip("needs node and the real Pi 0.85.0 (set PI_NODE_MODULES, or `make pi`)")

    def run(module: str, body: str, payload: Any) -> Any:
        script = (
            "import { readFileSync } from 'node:fs';\n"
            f"const mod = await import({json.dumps((dist / module).as_uri())});\n"
            "const input = JSON.parse(readFileSync(0, 'utf8'));\n" + body
        )
        completed = subprocess.run(
            ["node", "--input-type=module", "-e", script],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            check=True,
        )
        return json.loads(completed.stdout)

    return run
