"""Pi's file tools: ``read``, ``write`` and ``edit``.

Paths are resolved like Pi resolves them: relative to the session's working directory, with
``~`` expanded, ``file://`` URLs accepted, a leading ``@`` (a mention) dropped and exotic
Unicode spaces made plain.

``read`` returns text without line numbers, at most 2,000 lines or 50 KB from ``offset``
(1-based), and tells the model which ``offset`` continues; it goes through the file a piece
at a time (:mod:`ctxmodes.tools.line_window`), so a text of any size costs bounded memory.
Image files (JPEG, PNG, GIF, WebP, BMP) come back as an image block, made to fit as Pi makes
them (:mod:`ctxmodes.tools.image_fit`), under a text naming the type and what was done.
``write`` creates parent directories. ``edit`` is Pi 0.85's: a list of replacements
matched against the original text, exactly or after Pi's normalisation (see
:mod:`ctxmodes.tools.edit_match`), with Pi's error texts and its ``details`` (``diff``,
``patch``, ``firstChangedLine``); it keeps the file's byte-order mark and its CRLF line
endings.

None of the three opens what is not a regular file: a FIFO would wait for a writer (or a
reader), a device such as ``/dev/zero`` never ends and ``/dev/tty`` is the user's terminal.
"""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import urlparse
from urllib.request import url2pathname

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ctxmodes.session import codec
from ctxmodes.session.models import ImageContent, TextContent
from ctxmodes.session.regular_file import NotARegularFileError, open_regular, write_regular
from ctxmodes.tools._images import SNIFF_BYTES, image_mime_type
from ctxmodes.tools.base import ToolArguments, ToolContext, ToolError, ToolResult, TypedTool
from ctxmodes.tools.edit_match import (
    Replacement,
    apply_edits,
    detect_line_ending,
    normalize_to_lf,
)
from ctxmodes.tools.image_fit import OmittedImage, fit_image
from ctxmodes.tools.line_diff import display_diff, unified_patch
from ctxmodes.tools.line_window import LineWindow, decoded_chunks, scan_window
from ctxmodes.tools.output import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size
from ctxmodes.tools.pi_validation import ToolArgumentsInvalid, validate_arguments

_UNICODE_SPACES = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")
_BOM = "\ufeff"
#: Pi's line under an image read for a model that takes no images.
NO_IMAGE_INPUT_NOTE = (
    "[Current model does not support images. The image will be omitted from this request.]"
)


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


def _open_file(path: Path, shown: str) -> BinaryIO:
    """``path`` opened for reading, if it is a regular file: a FIFO would wait for a writer
    and a device such as ``/dev/zero`` never ends.

    :raises ToolError: it is missing, not a regular file, or cannot be opened."""
    try:
        return open_regular(path)
    except FileNotFoundError:
        raise ToolError(f"File not found: {shown}") from None
    except NotARegularFileError as exc:
        if exc.kind == "a directory":
            raise ToolError(f"Not a file (a directory): {shown}") from None
        raise ToolError(f"Not a regular file ({exc.kind}): {shown}") from None
    except OSError as exc:
        raise ToolError(f"Cannot read {shown}: {exc.strerror or exc}") from None


def _read_bytes(path: Path, shown: str) -> bytes:
    with _open_file(path, shown) as stream:
        try:
            return stream.read()
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

    def __init__(self, *, auto_resize_images: bool = True) -> None:
        """:param auto_resize_images: shrink images to what models take (Pi's
        ``images.autoResize``); off, they are only converted."""
        super().__init__(ReadArguments)
        self.auto_resize_images = auto_resize_images

    def run(self, args: ReadArguments, context: ToolContext) -> ToolResult:
        with _open_file(resolve_path(args.path, context.cwd), args.path) as stream:
            try:
                head = stream.read(SNIFF_BYTES)
                context.signal.raise_if_aborted()
                mime_type = image_mime_type(head)
                if mime_type is not None:
                    data = head + stream.read()
                else:
                    window = _scan_window(stream, head, args, context)
            except OSError as exc:
                raise ToolError(f"Cannot read {args.path}: {exc.strerror or exc}") from None
        if mime_type is not None:
            return self._image_result(data, mime_type, context)
        text, details = _read_text(window, args)
        return ToolResult.text(text, details=details)

    def _image_result(self, data: bytes, mime_type: str, context: ToolContext) -> ToolResult:
        """Pi's result: a text naming the type, with Pi's notes under it, and the image,
        or the text alone when the image cannot be made to fit."""
        fitted = fit_image(data, mime_type, auto_resize=self.auto_resize_images)
        context.signal.raise_if_aborted()
        if isinstance(fitted, OmittedImage):
            lines = [f"Read image file [{mime_type}]", fitted.message]
        else:
            lines = [f"Read image file [{fitted.mime_type}]", *fitted.hints]
        if not _takes_images(context.session):
            lines.append(NO_IMAGE_INPUT_NOTE)
        text = TextContent(text="\n".join(lines))
        if isinstance(fitted, OmittedImage):
            return ToolResult(content=[text])
        # Keys in the order Pi writes a tool's image: data, then mimeType.
        image = ImageContent(data=fitted.data, mime_type=fitted.mime_type)
        return ToolResult(content=[text, image])


def _takes_images(session: object) -> bool:
    """Whether the session's model takes images (a session without a model, or of another
    host, is taken to, as Pi does without a model)."""
    from ctxmodes.host.session import AgentSession

    if not isinstance(session, AgentSession) or session.model is None:
        return True
    return session.model.capabilities.images


def _scan_window(
    stream: BinaryIO, head: bytes, args: ReadArguments, context: ToolContext
) -> LineWindow:
    """The lines ``args`` asks for, read from ``stream`` (after its first bytes ``head``)
    a piece at a time, however large the file."""
    start = (args.offset or 1) - 1
    stop = None if args.limit is None else start + args.limit
    pieces = decoded_chunks(stream, head, between=context.signal.raise_if_aborted)
    return scan_window(pieces, start, stop, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES)


def _read_text(window: LineWindow, args: ReadArguments) -> tuple[str, dict[str, Any] | None]:
    total = window.total_lines
    start = (args.offset or 1) - 1
    if start >= total:
        raise ToolError(f"Offset {args.offset} is beyond end of file ({total} lines total)")
    end = total if args.limit is None else min(start + args.limit, total)
    truncation = window.truncation(DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES)
    first = start + 1
    if truncation.first_line_exceeds_limit:
        size = format_size(window.first_line_bytes)
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
            f"[Showing lines {first}-{last} of {total}{limit}. Use offset={last + 1} to continue.]"
        )
        return f"{truncation.content}\n\n{notice}", {"truncation": truncation.to_details()}
    if end < total:
        notice = f"[{total - end} more lines in file. Use offset={end + 1} to continue.]"
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
            write_regular(target, data)
        except NotARegularFileError as exc:
            raise ToolError(f"Not a regular file ({exc.kind}): {args.path}") from None
        except OSError as exc:
            raise ToolError(f"Cannot write {args.path}: {exc.strerror or exc}") from None
        return ToolResult.text(f"Successfully wrote {len(data)} bytes to {args.path}")


# One replacement of an ``edit`` call (a comment, not a docstring: pydantic would send a
# docstring to the model as the schema's description).
class EditReplacement(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    old_text: str = Field(
        alias="oldText",
        description=(
            "Text to replace, exactly as it is in the file; unique there and not overlapping "
            "any other edit of the call."
        ),
    )
    new_text: str = Field(alias="newText", description="What replaces it.")


class EditArguments(ToolArguments):
    path: str = Field(description="Path to the file to edit (relative or absolute)")
    edits: list[EditReplacement] = Field(
        description=(
            "The replacements, each matched against the file as it was before this call. "
            "Edits must not overlap or nest; changes close together belong in one edit."
        )
    )

    @model_validator(mode="before")
    @classmethod
    def _accept_pi_shapes(cls, value: Any) -> Any:
        return prepare_edit_arguments(value)


def prepare_edit_arguments(value: Any) -> Any:
    """The argument shapes Pi accepts besides ``edits: [...]``, rewritten to it.

    ``edits`` as a JSON string or a single object, and the older top-level
    ``oldText``/``newText`` pair (appended to ``edits``), as Pi's ``prepareArguments``.
    """
    if not isinstance(value, dict):
        return value
    args = dict(value)
    edits = args.get("edits")
    if isinstance(edits, str):
        try:
            parsed = codec.loads(edits)
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            args["edits"] = parsed
        elif _is_single_edit(parsed):
            args["edits"] = [parsed]
    elif _is_single_edit(edits):
        args["edits"] = [edits]
    if isinstance(args.get("oldText"), str) and isinstance(args.get("newText"), str):
        current = args.get("edits")
        merged = list(current) if isinstance(current, list) else []
        merged.append({"oldText": args.pop("oldText"), "newText": args.pop("newText")})
        args["edits"] = merged
    return args


def _is_single_edit(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("oldText"), str)
        and isinstance(value.get("newText"), str)
    )


class EditTool(TypedTool[EditArguments]):
    name = "edit"
    label = "edit"
    description = (
        "Edit one file by replacing text. Each edits[].oldText must match one place of the "
        "file as it was before the call, and no two edits may overlap; merge changes that "
        "touch the same lines into one edit, and leave unchanged stretches out."
    )

    def __init__(self) -> None:
        super().__init__(EditArguments)

    def execute(self, call_id: str, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        # Pi checks the prepared arguments against the schema before the tool runs, with its
        # own error text and conversions (a number where text belongs is its String()).
        try:
            checked = validate_arguments(
                self.name, self.parameters, prepare_edit_arguments(arguments)
            )
        except ToolArgumentsInvalid as exc:
            return ToolResult.error(str(exc))
        return super().execute(call_id, checked, context)

    def run(self, args: EditArguments, context: ToolContext) -> ToolResult:
        if not args.edits:
            raise ToolError(
                "Edit tool input is invalid. edits must contain at least one replacement."
            )
        target = resolve_path(args.path, context.cwd)
        _require_editable(target, args.path)
        try:
            raw = _read_bytes(target, args.path).decode("utf-8")
        except UnicodeDecodeError:
            raise ToolError(f"Cannot edit {args.path}: it is not UTF-8 text") from None
        context.signal.raise_if_aborted()
        bom = _BOM if raw.startswith(_BOM) else ""
        body = raw[len(bom) :]
        ending = detect_line_ending(body)
        before = normalize_to_lf(body)
        replacements = [Replacement(e.old_text, e.new_text) for e in args.edits]
        after = apply_edits(before, replacements, args.path)
        context.signal.raise_if_aborted()
        written = after.replace("\n", "\r\n") if ending == "\r\n" else after
        try:
            write_regular(target, (bom + written).encode("utf-8"))
        except OSError as exc:
            raise ToolError(f"Cannot write {args.path}: {exc.strerror or exc}") from None
        diff, first_changed = display_diff(before, after)
        details = {
            "diff": diff,
            "patch": unified_patch(args.path, before, after),
            "firstChangedLine": first_changed,
        }
        text = f"Successfully replaced {len(args.edits)} block(s) in {args.path}."
        return ToolResult.text(text, details=details)


def _require_editable(target: Path, shown: str) -> None:
    """Pi's access check: a missing or unwritable file names its error code."""
    try:
        target.stat()
    except OSError as exc:
        code = errno.errorcode.get(exc.errno or 0, str(exc.errno))
        raise ToolError(f"Could not edit file: {shown}. Error code: {code}.") from None
    if not os.access(target, os.R_OK | os.W_OK):
        raise ToolError(f"Could not edit file: {shown}. Error code: EACCES.")
    if target.is_dir():
        raise ToolError("EISDIR: illegal operation on a directory, read")
