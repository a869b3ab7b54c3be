"""The embedding page's example runs as written and does what it says."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

PAGE = Path(__file__).resolve().parents[2] / "docs" / "embedding.md"
MARK = "<!-- example: embedding -->"


def example_code() -> str:
    text = PAGE.read_text(encoding="utf-8")
    after = text.split(MARK, 1)[1]
    match = re.match(r"\s*```python\n(.*?)\n```", after, re.DOTALL)
    assert match is not None, "the embedding page lost its example"
    return match.group(1)


def test_the_embedding_example_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("CTXMODES_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    namespace: dict[str, object] = {"__name__": "readme_example"}
    with contextlib.redirect_stdout(out):
        exec(compile(example_code(), str(PAGE), "exec"), namespace)
    lines = out.getvalue().splitlines()
    assert lines[0] == "context window 1 — previous window archived"
    assert "Window 1: reading my plan and carrying on." in lines[1]
    assert lines[2].startswith("now in window 1 of ")
    work = namespace["work"]
    assert isinstance(work, Path)
    (session_file,) = (work / "sessions").glob("*.jsonl")
    assert lines[2].endswith(session_file.name)
    assert b'"customType":"codex-context-tree-archive"' in session_file.read_bytes()
