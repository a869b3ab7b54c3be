"""The RPC page's client runs as written against the installed ``ctxmodes`` and prints what
the page says it prints."""

from __future__ import annotations

import contextlib
import io
import os
import sys
from pathlib import Path

import pytest
from support.doc_pages import example


@pytest.fixture
def installed_ctxmodes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``ctxmodes`` on the ``PATH`` as after ``pip install``, with a private configuration."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("CTXMODES_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.delenv("CTXMODES_MODE", raising=False)


@pytest.mark.slow  # runs ctxmodes in a process of its own
@pytest.mark.usefixtures("installed_ctxmodes")
def test_the_rpc_client_example_prompts_and_reads_the_reply() -> None:
    block = example("rpc-client")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block.body, block.where, "exec"), {"__name__": "rpc_example"})
    assert out.getvalue().splitlines() == [
        "prompt accepted",
        "Hello from ctxmodes.",
        "exit status 0",
    ]
