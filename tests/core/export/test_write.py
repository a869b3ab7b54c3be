"""Writing the export page to a file: streamed into a new file that replaces the target only
once the page is whole, so a page that cannot be rendered leaves the target as it was."""

from __future__ import annotations

import os
import re
import stat
import sys
from pathlib import Path

import orjson
import pytest

from ctxmodes.cli import main


def write_nested_archives(path: Path, depth: int) -> None:
    """A session whose archived windows nest ``depth`` deep: window ``n`` holds the summary
    of window ``n + 1`` beside that window's branch, and the manifests hang off summary 0."""
    header = {
        "type": "session",
        "version": 3,
        "id": "deep",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": "/deep",
    }
    lines: list[dict[str, object]] = [header]

    def add(entry_id: str, parent: str | None, **fields: object) -> None:
        stamp = "2026-01-01T00:00:01.000Z"
        lines.append({"id": entry_id, "parentId": parent, "timestamp": stamp, **fields})

    def prompt(text: str) -> dict[str, object]:
        return {"type": "message", "message": {"role": "user", "content": text, "timestamp": 1}}

    add("top", None, **prompt("start"))
    base = "top"
    for level in range(depth):
        add(f"w{level}", base, **prompt(f"window {level}"))
        add(f"s{level}", base, type="branch_summary", fromId=base, summary=f"summary {level}")
        base = f"w{level}"
    parent = "s0"
    for level in range(depth):
        data = {
            "archivedLeafId": f"w{level}",
            "branchBaseId": f"w{level - 1}" if level else "top",
            "summaryEntryId": f"s{level}",
        }
        add(f"m{level}", parent, type="custom", customType="codex-context-tree-archive", data=data)
        parent = f"m{level}"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))


def test_archived_windows_nested_a_hundred_deep_are_each_folded_in_the_one_before(tmp_path):
    session, page = tmp_path / "deep.jsonl", tmp_path / "deep.html"
    write_nested_archives(session, 100)
    assert main(["session", "export", str(session), "-o", str(page)]) == 0
    html = page.read_text(encoding="utf-8")
    articles = re.findall(r'<article id="([^"]+)"', html)
    assert len(articles) == len(set(articles)) == 1 + 3 * 100
    # Window 99's prompt sits inside all hundred folds.
    inner = html.split("<main", 1)[1].split('id="e-w99"', 1)[0]
    assert inner.count('<details class="archived">') - inner.count("</details>") == 100


@pytest.mark.slow  # a tree deep enough to pass the recursion limit
def test_a_tree_too_deep_to_render_is_one_error_and_leaves_the_target_as_it_was(tmp_path, capsys):
    session, page = tmp_path / "deep.jsonl", tmp_path / "deep.html"
    write_nested_archives(session, 3000)
    page.write_text("the page exported before", encoding="utf-8")
    # The interpreter's own recursion limit, whatever a library run earlier in this process
    # made of it (mypy raises it for good).
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        assert main(["session", "export", str(session), "-o", str(page)]) == 1
    finally:
        sys.setrecursionlimit(previous)
    error = capsys.readouterr().err.strip()
    assert error.endswith("deep.jsonl: the session tree nests too deeply to export")
    assert "\n" not in error
    assert page.read_text(encoding="utf-8") == "the page exported before"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["deep.html", "deep.jsonl"]


def test_a_new_page_follows_the_umask_and_a_page_written_again_keeps_its_mode(tmp_path):
    session = tmp_path / "s.jsonl"
    write_nested_archives(session, 2)
    page = tmp_path / "s.html"
    previous = os.umask(0o027)
    try:
        assert main(["session", "export", str(session), "-o", str(page)]) == 0
    finally:
        os.umask(previous)
    assert stat.S_IMODE(page.stat().st_mode) == 0o640
    page.chmod(0o604)
    assert main(["session", "export", str(session), "-o", str(page)]) == 0
    assert stat.S_IMODE(page.stat().st_mode) == 0o604
    assert "window 1" in page.read_text(encoding="utf-8")
