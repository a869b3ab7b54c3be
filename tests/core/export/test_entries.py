"""Every session value an entry shows is escaped, whatever field holds it and whatever its
shape; the short way past escaping is taken only where there is nothing to escape."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import orjson
import pytest
from markupsafe import escape

from ctxmodes.export import render_html
from ctxmodes.export.entries import MISSING, html_text
from ctxmodes.session.manager import SessionManager

PAYLOAD = '<script>window.pwned = 1</script><img src=x onerror="window.pwned=2">'


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


@pytest.mark.parametrize(
    "value",
    [
        "plain",
        "a & b",
        "a < b",
        "a > b",
        'say "hi"',
        "it's",
        PAYLOAD,
        "",
        42,
        1.5,
        None,
        True,
        [1, "<b>"],
        {"k": "'v'"},
    ],
)
def test_html_text_is_markupsafe_escape(value):
    assert html_text(value) == str(escape(value))


def test_a_missing_value_shows_as_nothing():
    assert html_text(MISSING) == ""


def _entries() -> list[dict[str, object]]:
    """One entry of every kind the page draws, the payload in each field it shows."""
    stored: list[dict[str, object]] = []

    def add(**fields: object) -> None:
        parent = stored[-1]["id"] if stored else None
        stamp = "2026-01-01T00:00:01.000Z"
        stored.append({"id": f"e{len(stored)}", "parentId": parent, "timestamp": stamp, **fields})

    def message(**fields: object) -> None:
        add(type="message", message={"timestamp": 1, **fields})

    add(type="model_change", provider=PAYLOAD, modelId=PAYLOAD)
    add(type="thinking_level_change", thinkingLevel=PAYLOAD)
    message(role="user", content=PAYLOAD)
    call = {"type": "toolCall", "id": "c", "name": PAYLOAD, "arguments": {PAYLOAD: PAYLOAD}}
    thinking = {"type": "thinking", "thinking": PAYLOAD}
    message(role="assistant", content=[thinking, call], stopReason="error", errorMessage=PAYLOAD)
    message(
        role="toolResult",
        toolCallId="c",
        toolName=PAYLOAD,
        content=[{"type": "text", "text": PAYLOAD}],
        details={"diff": f"+{PAYLOAD}\n-{PAYLOAD}"},
        isError=True,
    )
    message(role="bashExecution", command=PAYLOAD, output=PAYLOAD)
    message(role=PAYLOAD, content=[{"type": PAYLOAD, "x": PAYLOAD}, PAYLOAD, {"text": PAYLOAD}])
    add(type="custom_message", customType=PAYLOAD, content=PAYLOAD, display=True)
    add(type="custom_message", customType=PAYLOAD, content=[{"type": "text", "text": PAYLOAD}])
    add(type="branch_summary", fromId="e0", summary=PAYLOAD)
    add(type="compaction", summary=PAYLOAD, firstKeptEntryId=PAYLOAD, tokensBefore=PAYLOAD)
    data = {"action": PAYLOAD, "path": PAYLOAD, "text": PAYLOAD}
    add(type="custom", customType="codex-context-note", data=data)
    add(type="custom", customType=PAYLOAD, data=PAYLOAD)
    add(type="label", targetId="e2", label=PAYLOAD)
    add(type="session_info", name=PAYLOAD)
    add(type=PAYLOAD, x=PAYLOAD)
    message(role="user", content=[{"type": "image", "mimeType": PAYLOAD, "data": PAYLOAD}])
    return stored


def test_every_field_of_every_kind_of_entry_is_shown_as_text(tmp_path: Path):
    path = tmp_path / "hostile.jsonl"
    header = {"type": "session", "version": 3, "id": PAYLOAD, "timestamp": "t", "cwd": PAYLOAD}
    entries = _entries()
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in [header, *entries]))
    with SessionManager.open(path, read_only=True) as manager:
        page = render_html(manager, PAYLOAD, PAYLOAD)
    parser = Tags()
    parser.feed(page)
    assert [tag for tag, _ in parser.tags].count("script") == 1
    assert not any(tag == "img" for tag, _ in parser.tags)
    assert not any(name.startswith("on") for _, attrs in parser.tags for name in attrs)
    articles = [attrs["id"] for tag, attrs in parser.tags if tag == "article"]
    assert articles == [f"e-{entry['id']}" for entry in entries]
    # The payload shows as text in the fields above (JSON escapes its quotes in some).
    assert page.count("&lt;script&gt;window.pwned = 1&lt;/script&gt;") > 40
