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
from ctxmodes.errors import CtxmodesError
from ctxmodes.export import export_session, render_html
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
    assert page.lower().count("<script") == 1  # the page's own, and no other
    script = re.search(r"<script>(.*?)</script>", page, re.DOTALL)
    assert script is not None
    digest = base64.b64encode(hashlib.sha256(script.group(1).encode()).digest()).decode()
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert policy is not None
    assert f"script-src 'sha256-{digest}'" in policy.group(1)
    assert "default-src 'none'" in policy.group(1)
    directives = dict(directive.strip().split(" ", 1) for directive in policy.group(1).split(";"))
    # Scripts run by their hash alone: no inline script, handler or eval besides.
    assert directives["script-src"] == f"'sha256-{digest}'"
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
    with SessionManager.open(path, read_only=True) as manager:
        # The command names the mode the file records.
        assert out.read_text(encoding="utf-8") == render_html(manager, path.name, "tree")
    assert page != out.read_text(encoding="utf-8")
    assert capsys.readouterr().out.strip() == str(out)
    before = path.read_bytes()
    assert main(["session", "export", str(path), "-o", str(path)]) == 1
    assert "refusing to overwrite" in capsys.readouterr().err
    assert path.read_bytes() == before


def test_a_session_being_written_exports_as_its_file_holds_it(tmp_path):
    with SessionManager.create(tmp_path, tmp_path / "sessions") as manager:
        manager.append_message({"role": "user", "content": "still open", "timestamp": 1})
        source = manager.session_file
        assert source is not None
        out = tmp_path / "page.html"
        export_session(source, out, "off")
        before = source.read_bytes()
        with pytest.raises(CtxmodesError, match=r"^Refusing to overwrite the session file$"):
            export_session(source, tmp_path / "sessions" / ".." / "sessions" / source.name)
        manager.append_message({"role": "user", "content": "written after", "timestamp": 2})
    assert source.read_bytes().startswith(before)
    page = out.read_text(encoding="utf-8")
    assert "still open" in page
    assert "written after" not in page


def test_an_edit_shows_its_diff_and_the_header_its_model_tokens_and_cost(tmp_path):
    manager = SessionManager.create(tmp_path, tmp_path / "sessions")
    manager.append_message({"role": "user", "content": "rename it", "timestamp": 1})
    usage = {
        "input": 1200,
        "output": 300,
        "cacheRead": 100,
        "cacheWrite": 50,
        "totalTokens": 1650,
        "cost": {"input": 0.01, "output": 0.002, "cacheRead": 0, "cacheWrite": 0, "total": 0.012},
    }
    call = {"type": "toolCall", "id": "c1", "name": "edit", "arguments": {"path": "a.py"}}
    for text, content in (("", [call]), ("done", [{"type": "text", "text": "done"}])):
        manager.append_message(
            {
                "role": "assistant",
                "content": content,
                "provider": "anthropic",
                "model": "claude-sonnet-4-5",
                "api": "anthropic-messages",
                "usage": usage,
                "stopReason": "toolUse" if not text else "stop",
                "timestamp": 2,
            }
        )
        if not text:
            manager.append_message(
                {
                    "role": "toolResult",
                    "toolCallId": "c1",
                    "toolName": "edit",
                    "content": [{"type": "text", "text": "Successfully replaced 1 block(s)."}],
                    "details": {"diff": " 1 keep\n-2 old_name = 1\n+2 new_name = 1\n   ..."},
                    "isError": False,
                    "timestamp": 3,
                }
            )
    path = manager.session_file
    manager.close()
    assert path is not None
    page = render(path)
    diff = page.split('<pre class="diff">', 1)[1].split("</pre>", 1)[0]
    lines = re.findall(r'<span class="d-(\w+)">([^<]*)</span>', diff)
    assert lines == [
        ("ctx", " 1 keep"),
        ("del", "-2 old_name = 1"),
        ("add", "+2 new_name = 1"),
        ("ctx", "   ..."),
    ]
    facts = page.split('<p class="facts usage">', 1)[1].split("</p>", 1)[0]
    assert '<span class="model">anthropic/claude-sonnet-4-5</span>' in facts
    assert "3,300 tokens (2,400 in, 600 out, 200 cache read, 100 cache write)" in facts
    assert "$0.024" in facts  # three decimals, as Pi's export and the footer write it


def test_the_cost_is_rounded_as_pis_export_rounds_it() -> None:
    from ctxmodes.export.view import UsageTotals

    # Exactly halfway: ``toFixed(3)`` rounds up where Python's formatting goes to even.
    assert UsageTotals(cost=0.0625).cost_text == "0.063"
    assert UsageTotals().cost_text == "0.000"


def test_an_archived_window_the_user_went_back_into_is_not_called_hidden(tmp_path):
    path = write_tree_session(tmp_path, 2)
    entries = [orjson.loads(line) for line in path.read_bytes().splitlines()[1:]]
    manifests = [
        e["data"]
        for e in entries
        if e["type"] == "custom" and e.get("customType") == "codex-context-tree-archive"
    ]
    first = manifests[0]
    with SessionManager.open(path) as manager:
        manager.branch(first["archivedLeafId"])
        manager.append_message({"role": "user", "content": "back in window 0", "timestamp": 9})
    page = render(path)
    summary = page.split(f'id="e-{first["summaryEntryId"]}"', 1)[1].split("</article>", 1)[0]
    assert "Summary of archived window 0 — the window itself is on the active path" in summary
    assert "hidden from the model" not in summary
    assert "archived window 0 — on the active path" in page
    assert "archived window 0 — hidden from the model" not in page
    # Window 1 was archived from the branch the user left: still hidden.
    assert "Summary of archived window 1 — kept in the file, hidden from the model" in page
    ids = [attrs["id"] for tag, attrs in parse(page).tags if tag == "article"]
    assert len(ids) == len(set(ids)) == len(entries) + 1


def test_bracketed_labels_of_pis_summaries_are_shown_not_taken_as_link_definitions(tmp_path):
    """Pi's summaries list ``[Assistant tool calls]: name(...)`` lines, which CommonMark
    would take as link reference definitions and drop from the page: they are text."""
    digest = "- [User]: start\n- [Assistant tool calls]: new_context()\n\n[note]: kept.md\n"
    page = render(write_tree_session(tmp_path, 1, prompt="start", reply=digest))
    assert "[Assistant tool calls]: new_context()" in page
    assert "[note]: kept.md" in page
    assert 'href="new_context()"' not in page
