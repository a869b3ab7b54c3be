"""Pi's file tools: ``read``, ``write`` and ``edit``.

Paths are resolved like Pi resolves them: relative to the session's working directory, with
``~`` expanded, ``file://`` URLs accepted, a leading ``@`` (a mention) dropped and exotic
Unicode spaces made plain.

``read`` returns text without line numbers, at most 2,000 lines or 50 KB from ``offset``
(1-based), and tells the model which ``offset`` continues; image files (JPEG, PNG, GIF,
WebP, BMP) come back as an image block. ``write`` creates parent directories. ``edit``
replaces exactly one exact occurrence of ``oldText``; it keeps the file's byte-order mark
and its CRLF line endings.
"""

from __future__ import annotations

import base64
import difflib
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlparse
from urllib.request import url2pathname

from pydantic import Field

from ctxmodes.session.models import ImageContent, TextContent
from ctxmodes.tools._images import SNIFF_BYTES, image_mime_type
from ctxmodes.tools.base import ToolArguments, ToolContext, ToolError, ToolResult, TypedTool
from ctxmodes.tools.output import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size, truncate_head

#: Images above this size are described instead of attached (providers reject huge images).
MAX_IMAGE_BYTES = 5 * 1024 * 1024

_UNICODE_SPACES = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")
_BOM = "\ufeff"


def resolve_path(path: str, cwd: Path) -> Path:
    """The absolute path a tool argument names (see the module docstring)."""
    normalized = _UNICODE_SPACES.sub(" ", path)
    if normalized.startswith("@"):
        normalized = normalized[1:]
    if normalized == "~" or normalized.startswith("~/"):
        normalized = str(Path.home()) + normalized[1:]
    elif normalized.startswith("file://"):
        normalized = url2pathname(urlparse(normalized).path)
    return Path(os.path.normpath(cwd / normalized))


def _read_bytes(path: Path, shown: str) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise ToolError(f"File not found: {shown}") from None
    except IsADirectoryError:
        raise ToolError(f"Not a file (a directory): {shown}") from None
    except OSError as exc:
        raise ToolError(f"Cannot read {shown}: {exc.strerror or exc}") from None


class ReadArguments(ToolArguments):
    path: str = Field(description="Path to the file to read (relative or absolute)")
    offset: int | None = Field(
        default=None, ge=1, description="Line number to start reading from (1-indexed)"
    )
    limit: int | None = Field(default=None, ge=1, description="Maximum number of lines to read")


class ReadTool(TypedTool[ReadArguments]):
    name = "read"
    label = "read"
    description = (
        "Read a file. Text comes back as is (no line numbers), at most "
        f"{DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES // 1024}KB per call; use offset and "
        "limit for large files and continue with the offset the result suggests. Images "
        "(jpg, png, gif, webp, bmp) are returned as attachments."
    )

    def __init__(self) -> None:
        super().__init__(ReadArguments)

    def run(self, args: ReadArguments, context: ToolContext) -> ToolResult:
        data = _read_bytes(resolve_path(args.path, context.cwd), args.path)
        context.signal.raise_if_aborted()
        mime_type = image_mime_type(data[:SNIFF_BYTES])
        if mime_type is not None:
            return _image_result(data, mime_type)
        text, details = _read_text(data.decode("utf-8", "replace"), args)
        return ToolResult.text(text, details=details)


def _image_result(data: bytes, mime_type: str) -> ToolResult:
    if len(data) > MAX_IMAGE_BYTES:
        note = (
            f"Image file [{mime_type}] is {format_size(len(data))}, over the "
            f"{format_size(MAX_IMAGE_BYTES)} attachment limit; it was not attached."
        )
        return ToolResult.text(note)
    image = ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type=mime_type)
    return ToolResult(content=[TextContent(text=f"Read image file [{mime_type}]"), image])


def _read_text(text: str, args: ReadArguments) -> tuple[str, dict[str, Any] | None]:
    lines = text.split("\n")
    start = (args.offset or 1) - 1
    if start >= len(lines):
        raise ToolError(f"Offset {args.offset} is beyond end of file ({len(lines)} lines total)")
    end = len(lines) if args.limit is None else min(start + args.limit, len(lines))
    truncation = truncate_head("\n".join(lines[start:end]))
    first = start + 1
    if truncation.first_line_exceeds_limit:
        size = format_size(len(lines[start].encode("utf-8")))
        return (
            f"[Line {first} is {size}, exceeds {format_size(DEFAULT_MAX_BYTES)} limit. "
            f"Use bash: sed -n '{first}p' {args.path} | head -c {DEFAULT_MAX_BYTES}]",
            {"truncation": truncation.to_details()},
        )
    if truncation.truncated:
        last = first + truncation.output_lines - 1
        limit = (
            ""
            if truncation.truncated_by == "lines"
            else f" ({format_size(DEFAULT_MAX_BYTES)} limit)"
        )
        notice = (
            f"[Showing lines {first}-{last} of {len(lines)}{limit}. "
            f"Use offset={last + 1} to continue.]"
        )
        return f"{truncation.content}\n\n{notice}", {"truncation": truncation.to_details()}
    if end < len(lines):
        notice = f"[{len(lines) - end} more lines in file. Use offset={end + 1} to continue.]"
        return f"{truncation.content}\n\n{notice}", None
    return truncation.content, None


class WriteArguments(ToolArguments):
    path: str = Field(description="Path to the file to write (relative or absolute)")
    content: str = Field(description="Content to write to the file")


class WriteTool(TypedTool[WriteArguments]):
    name = "write"
    label = "write"
    description = (
        "Write content to a file, replacing it if it exists. Missing parent directories are "
        "created."
    )

    def __init__(self) -> None:
        super().__init__(WriteArguments)

    def run(self, args: WriteArguments, context: ToolContext) -> ToolResult:
        target = resolve_path(args.path, context.cwd)
        data = args.content.encode("utf-8")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        except OSError as exc:
            raise ToolError(f"Cannot write {args.path}: {exc.strerror or exc}") from None
        return ToolResult.text(f"Successfully wrote {len(data)} bytes to {args.path}")


class EditArguments(ToolArguments):
    path: str = Field(description="Path to the file to edit (relative or absolute)")
    old_text: str = Field(
        alias="oldText",
        description="Exact text to replace; it must occur exactly once in the file",
    )
    new_text: str = Field(alias="newText", description="The replacement text")


class EditTool(TypedTool[EditArguments]):
    name = "edit"
    label = "edit"
    description = (
        "Edit a file by exact text replacement: oldText must match exactly one place in the "
        "file, including whitespace and newlines. Keep oldText short but unique."
    )

    def __init__(self) -> None:
        super().__init__(EditArguments)

    def run(self, args: EditArguments, context: ToolContext) -> ToolResult:
        target = resolve_path(args.path, context.cwd)
        try:
            raw = _read_bytes(target, args.path).decode("utf-8")
        except UnicodeDecodeError:
            raise ToolError(f"Cannot edit {args.path}: it is not UTF-8 text") from None
        bom = _BOM if raw.startswith(_BOM) else ""
        body = raw[len(bom) :]
        crlf = _uses_crlf(body)
        before = _to_lf(body)
        after = _replace_once(before, _to_lf(args.old_text), _to_lf(args.new_text), args.path)
        context.signal.raise_if_aborted()
        try:
            target.write_bytes((bom + (after.replace("\n", "\r\n") if crlf else after)).encode())
        except OSError as exc:
            raise ToolError(f"Cannot write {args.path}: {exc.strerror or exc}") from None
        details = {
            "patch": _patch(args.path, before, after),
            "firstChangedLine": _first_change(before, after),
        }
        return ToolResult.text(f"Successfully replaced text in {args.path}.", details=details)


def _replace_once(content: str, old: str, new: str, shown: str) -> str:
    if not old:
        raise ToolError(f"oldText must not be empty (editing {shown}).")
    count = content.count(old)
    if count == 0:
        raise ToolError(
            f"Could not find oldText in {shown}. It must match exactly, including whitespace "
            "and newlines."
        )
    if count > 1:
        raise ToolError(
            f"oldText occurs {count} times in {shown}; it must be unique. Include more of the "
            "surrounding text."
        )
    if old == new:
        raise ToolError(f"No changes made to {shown}: oldText and newText are identical.")
    return content.replace(old, new, 1)


def _uses_crlf(text: str) -> bool:
    # The first line ending decides, as in Pi.
    first_lf = text.find("\n")
    return first_lf > 0 and text[first_lf - 1] == "\r"


def _to_lf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _patch(path: str, before: str, after: str) -> str:
    diff = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), path, path, n=4
    )
    return "".join(diff)


def _first_change(before: str, after: str) -> int:
    old_lines, new_lines = before.split("\n"), after.split("\n")
    for number, (old, new) in enumerate(zip(old_lines, new_lines, strict=False), start=1):
        if old != new:
            return number
    return min(len(old_lines), len(new_lines)) + 1
