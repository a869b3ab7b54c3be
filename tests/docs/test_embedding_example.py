"""The embedding page's example runs as written and does what it says."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

from support.doc_pages import example


def test_the_embedding_example_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("CTXMODES_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    namespace: dict[str, object] = {"__name__": "readme_example"}
    block = example("embedding")
    with contextlib.redirect_stdout(out):
        exec(compile(block.body, block.where, "exec"), namespace)
    lines = out.getvalue().splitlines()
    assert lines[0] == "context window 1 — previous window archived"
    assert "Window 1: reading my plan and carrying on." in lines[1]
    assert lines[2].startswith("now in window 1 of ")
    work = namespace["work"]
    assert isinstance(work, Path)
    (session_file,) = (work / "sessions").glob("*.jsonl")
    assert lines[2].endswith(session_file.name)
    assert b'"customType":"codex-context-tree-archive"' in session_file.read_bytes()
