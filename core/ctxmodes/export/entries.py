"""The HTML of one entry of the page: plain functions, each session value passed through
:func:`html_text` (:func:`markupsafe.escape`) or, for Markdown, through
:func:`render_markdown` (raw HTML disabled) before it joins the page.

Session values may be of any shape. A key an entry lacks is shown as nothing (it reads as
:data:`MISSING`, as a missing value does in a template), any other value as its text.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any, Final

import orjson
from markupsafe import escape

from ctxmodes.export.markdown import render_markdown
from ctxmodes.export.view import (
    NOTE_TYPE,
    EntryView,
    content_text,
    diff_lines,
    marker_number,
    one_line,
)

__all__ = ["MISSING", "content_blocks", "entry_body", "html_text", "markdown_block", "to_json"]

_IMAGE_TYPES: Final = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_BASE64: Final = re.compile(r"[A-Za-z0-9+/]*={0,2}")
#: Characters of a one-line summary of a tool call's arguments or of a tool's output.
SUMMARY_CHARS: Final = 120


class _Missing:
    """A key the stored entry lacks: false, equal to nothing, shown as nothing."""

    __slots__ = ()

    def __bool__(self) -> bool:
        return False

    def __str__(self) -> str:
        return ""


MISSING: Final = _Missing()

#: What :func:`markupsafe.escape` replaces.
_SPECIAL: Final = re.compile(r"[&<>\"']")


def html_text(value: Any) -> str:
    """``value``'s text as HTML text: :func:`markupsafe.escape`'s, which is the text itself
    where it holds none of the characters escape replaces (most texts: the check costs a
    fifth of escaping)."""
    text = value if type(value) is str else str(value)
    return escape(text) if _SPECIAL.search(text) else text


def to_json(value: Any, pretty: bool = False) -> str:
    """``value`` as JSON (indented when ``pretty``), or as text when it is not JSON."""
    option = orjson.OPT_INDENT_2 if pretty else 0
    try:
        return orjson.dumps(value, option=option | orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        return str(value)


def _image_src(block: dict[str, Any]) -> str | None:
    """A ``data:`` URL for an image block, only for a known image type and valid base64."""
    mime, data = block.get("mimeType"), block.get("data")
    if mime not in _IMAGE_TYPES or not isinstance(data, str) or not _BASE64.fullmatch(data):
        return None
    try:
        base64.b64decode(data, validate=True)
    except binascii.Error:
        return None
    return f"data:{mime};base64,{data}"


# ----------------------------------------------------------------------------- content


def markdown_block(value: Any) -> str:
    """``value``'s text as Markdown, in the page's Markdown block."""
    return f'<div class="md">{render_markdown(str(value))}</div>'


def content_blocks(content: Any) -> str:
    """A message's content: a string as Markdown, a list block by block (what is neither
    shows nothing)."""
    if isinstance(content, str):
        return markdown_block(content)
    if not isinstance(content, list):
        return ""
    return "".join(_block(block) for block in content if isinstance(block, dict))


def _block(block: dict[str, Any]) -> str:
    kind = block.get("type")
    if kind == "text":
        return markdown_block(block.get("text", MISSING))
    if kind == "thinking":
        thinking = markdown_block(block.get("thinking", MISSING))
        return f'<details class="thinking"><summary>thinking</summary>{thinking}</details>'
    if kind == "toolCall":
        arguments = block.get("arguments", MISSING)
        return (
            f'<details class="call"><summary>→ <b>{html_text(block.get("name", MISSING))}</b> '
            f'<span class="p">{html_text(one_line(to_json(arguments), SUMMARY_CHARS))}</span>'
            f"</summary><pre>{html_text(to_json(arguments, True))}</pre></details>"
        )
    if kind == "image":
        src = _image_src(block)
        return (
            f'<img alt="image" src="{html_text(src)}">' if src else '<p class="muted">[image]</p>'
        )
    return f'<pre class="muted">{html_text(to_json(block, True))}</pre>'


# ----------------------------------------------------------------------------- entries


def entry_body(entry: EntryView) -> str:
    """What an entry's article holds below its header; not for a branch summary, whose
    article holds the archived window it stands for (the page's walk renders it)."""
    stored = entry.stored
    kind = entry.type
    if kind == "message":
        message = stored.get("message")
        if isinstance(message, dict):
            return _message(message)
    elif kind == "custom_message":
        return _custom_message(stored)
    elif kind == "compaction":
        return (
            f"<details><summary>compaction — kept from "
            f"{html_text(stored.get('firstKeptEntryId', MISSING))}, "
            f"{html_text(stored.get('tokensBefore', MISSING))} tokens before</summary>"
            f"{markdown_block(stored.get('summary', MISSING))}</details>"
        )
    elif kind == "custom" and stored.get("customType") == NOTE_TYPE:
        data = stored.get("data")
        if isinstance(data, dict):
            return (
                f'<p class="note">note {html_text(data.get("action", MISSING))} '
                f"<b>{html_text(data.get('path', MISSING))}</b></p>"
                f"<pre>{html_text(data.get('text', MISSING))}</pre>"
            )
    return (
        f'<details class="meta"><summary>{html_text(entry.preview or entry.type)}</summary>'
        f"<pre>{html_text(to_json(stored, True))}</pre></details>"
    )


def _message(message: dict[str, Any]) -> str:
    role = message.get("role")
    if role == "toolResult":
        return _tool_result(message)
    if role == "bashExecution":
        return (
            f'<pre class="cmd">$ {html_text(message.get("command", MISSING))}</pre>'
            f'<details class="result"><summary>output</summary>'
            f"<pre>{html_text(message.get('output', MISSING))}</pre></details>"
        )
    html = content_blocks(message.get("content"))
    stop = message.get("stopReason")
    if role == "assistant" and stop in ("error", "aborted"):
        error = html_text(message.get("errorMessage", MISSING))
        html += f'<p class="error">{html_text(stop)}: {error}</p>'
    return html


def _tool_result(message: dict[str, Any]) -> str:
    text = content_text(message.get("content"))
    summary = one_line(text, SUMMARY_CHARS) or "(no output)"
    error = " error" if message.get("isError") else ""
    html = (
        f'<details class="result{error}"><summary>{html_text(summary)}</summary>'
        f"<pre>{html_text(text)}</pre></details>"
    )
    diff = diff_lines(message.get("details"))
    if diff:
        lines = "".join(f'<span class="d-{kind}">{html_text(line)}</span>\n' for kind, line in diff)
        html += (
            '<details class="diff" open><summary>diff</summary>'
            f'<pre class="diff">{lines}</pre></details>'
        )
    return html


def _custom_message(stored: dict[str, Any]) -> str:
    number = marker_number(stored)
    if number is not None:
        return (
            f'<div class="marker">context window {html_text(number)}</div>'
            "<details><summary>marker sent to the model</summary>"
            f"<pre>{html_text(content_text(stored.get('content')))}</pre></details>"
        )
    opened = " open" if stored.get("display") else ""
    return (
        f"<details{opened}><summary>{html_text(stored.get('customType', MISSING))}</summary>"
        f"{content_blocks(stored.get('content'))}</details>"
    )
