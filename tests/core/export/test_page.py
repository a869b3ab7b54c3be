"""The export page as HTML: escaping of untrusted content, the active path, Tree's archives
under their summaries, side branches, the script pinned by hash, and hostile entries."""

from __future__ import annotations

import base64
import hashlib
import re
from html.parser import HTMLParser
from pathlib import Path

import orjson
import pytest
from support.tree_sessions import write_tree_session

from ctxmodes.cli import main
from ctxmodes.export import render_html
from ctxmodes.session.manager import SessionManager

PAYLOAD = '<script>window.pwned = 1</script><img src=x onerror="window.pwned=2">'


class Elements(HTMLParser):
    """Collects start tags with their attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def parse(page: str) -> Elements:
    parser = Elements()
    parser.feed(page)
    return parser


def render(path: Path) -> str:
    with SessionManager.open(path, read_only=True) as manager:
        return render_html(manager, path.name)


@pytest.fixture(scope="module")
def tree_page(tmp_path_factory) -> tuple[Path, str]:
    directory = tmp_path_factory.mktemp("tree")
    path = write_tree_session(directory, 3, prompt=f"start {PAYLOAD}", reply=PAYLOAD)
    return path, render(path)


def test_untrusted_content_never_becomes_markup(tree_page):
    _, page = tree_page
    tags = parse(page).tags
    scripts = [attrs for tag, attrs in tags if tag == "script"]
    assert len(scripts) == 1, "only the page's own script"
    assert not any(tag == "img" for tag, _ in tags)
    assert not any(any(name.startswith("on") for name in attrs) for _, attrs in tags)
    assert "&lt;script&gt;window.pwned = 1&lt;/script&gt;" in page


def test_the_only_script_is_pinned_by_its_hash(tree_page):
    _, page = tree_page
    script = re.search(r"<script>(.*?)</script>", page, re.DOTALL)
    assert script is not None
    digest = base64.b64encode(hashlib.sha256(script.group(1).encode()).digest()).decode()
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert policy is not None
    assert f"script-src 'sha256-{digest}'" in policy.group(1)
    assert "default-src 'none'" in policy.group(1)
    assert "http://" not in page
    assert "https://" not in page


def test_each_archived_window_is_folded_under_its_summary(tree_page):
    path, page = tree_page
    with SessionManager.open(path, read_only=True) as manager:
        entries = [orjson.loads(line) for line in path.read_bytes().splitlines()[1:]]
        summaries = [e["id"] for e in entries if e["type"] == "branch_summary"]
        active = set(manager.get_branch_ids())
    assert len(summaries) == 3
    assert all(summary in active for summary in summaries)
    for number, summary in enumerate(summaries):
        article = page.split(f'id="e-{summary}"', 1)[1].split("</article>", 1)[0]
        assert f"Summary of archived window {number} — kept in the file, hidden" in article
        assert f"archived window {number} (hidden from the model)" in article
    # Every entry is on the page exactly once, so every sidebar link has a target.
    ids = [attrs["id"] for tag, attrs in parse(page).tags if tag == "article"]
    assert len(ids) == len(set(ids)) == len(entries)
    links = {
        attrs["href"]
        for tag, attrs in parse(page).tags
        if tag == "a" and (attrs["href"] or "").startswith("#e-")
    }
    assert links == {f"#{target}" for target in ids}


def test_the_active_path_is_marked_in_the_sidebar(tree_page):
    path, page = tree_page
    with SessionManager.open(path, read_only=True) as manager:
        active = manager.get_branch_ids()
    items = re.findall(r'<li class="node ([^"]*)">\s*<a href="#e-([^"]+)"', page)
    marked = [entry_id for classes, entry_id in items if "active" in classes.split()]
    assert sorted(marked) == sorted(active)


def test_a_side_branch_is_folded_where_it_leaves_the_path(tmp_path):
    manager = SessionManager.create(tmp_path, tmp_path / "sessions")
    first = manager.append_message({"role": "user", "content": "first", "timestamp": 1})
    manager.append_message({"role": "user", "content": "abandoned idea", "timestamp": 2})
    manager.branch(first)
    manager.append_message({"role": "user", "content": "kept idea", "timestamp": 3})
    manager.append_label(first, "start <b>")
    path = manager.session_file
    manager.close()
    assert path is not None
    page = render(path)
    branch = page.split('<details class="branch">', 1)[1]
    assert branch.startswith("<summary>branch: abandoned idea</summary>")
    assert "[start &lt;b&gt;]" in page


def test_hostile_entries_render_as_data(tmp_path):
    path = tmp_path / "hostile.jsonl"
    header = {
        "type": "session",
        "version": 3,
        "id": "h",
        "timestamp": "2026-01-01T00:00:00Z",
        "cwd": str(tmp_path),
    }
    lines = [
        header,
        {
            "type": "mystery",
            "id": "m1",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:01Z",
            "x": PAYLOAD,
        },
        {
            "type": "message",
            "id": "m2",
            "parentId": "m1",
            "timestamp": "2026-01-01T00:00:02Z",
            "message": {
                "role": "user",
                "content": [
                    {"type": "image", "mimeType": 'image/png" onload="x', "data": "AAAA"},
                    {"type": "text", "text": 42},
                    {"type": "weird", "payload": PAYLOAD},
                ],
                "timestamp": 2,
            },
        },
    ]
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    page = render(path)
    tags = parse(page).tags
    assert [tag for tag, _ in tags].count("script") == 1
    assert not any(tag == "img" for tag, _ in tags)
    assert "mystery" in page


def test_the_cli_writes_the_page_and_refuses_to_overwrite_the_session(tree_page, tmp_path, capsys):
    path, page = tree_page
    out = tmp_path / "page.html"
    assert main(["session", "export", str(path), "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == page
    assert capsys.readouterr().out.strip() == str(out)
    before = path.read_bytes()
    assert main(["session", "export", str(path), "-o", str(path)]) == 1
    assert "refusing to overwrite" in capsys.readouterr().err
    assert path.read_bytes() == before
