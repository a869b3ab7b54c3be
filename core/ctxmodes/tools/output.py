"""Bounding tool output the way Pi does: at most 2,000 lines or 50 KB, whichever comes first.

Two directions: :func:`truncate_head` keeps the beginning (file reads: the model continues
with an offset) and :func:`truncate_tail` keeps the end (command output: errors and results
come last). Neither returns a partial line, except the tail of a single line that alone is
over the byte limit. Sizes are UTF-8 bytes; lines are ``\\n``-separated and a trailing
newline does not start another line.

:class:`TailBuffer` applies the tail rule to a stream of unknown length in bounded memory and
spills the complete stream to a temporary file as soon as it would be truncated, so nothing
is lost for good.
"""

from __future__ import annotations

import io
import os
import tempfile
from dataclasses import dataclass, replace
from typing import Any, Literal

DEFAULT_MAX_LINES = 2000
DEFAULT_MAX_BYTES = 50 * 1024


@dataclass(frozen=True, slots=True)
class Truncation:
    """What a truncation kept; :meth:`to_details` gives Pi's ``truncation`` details shape."""

    content: str
    truncated: bool
    truncated_by: Literal["lines", "bytes"] | None
    total_lines: int
    total_bytes: int
    output_lines: int
    output_bytes: int
    last_line_partial: bool
    first_line_exceeds_limit: bool
    max_lines: int
    max_bytes: int

    def to_details(self) -> dict[str, Any]:
        """Pi's ``truncation`` details, the shown text included."""
        return {
            "content": self.content,
            "truncated": self.truncated,
            "truncatedBy": self.truncated_by,
            "totalLines": self.total_lines,
            "totalBytes": self.total_bytes,
            "outputLines": self.output_lines,
            "outputBytes": self.output_bytes,
            "lastLinePartial": self.last_line_partial,
            "firstLineExceedsLimit": self.first_line_exceeds_limit,
            "maxLines": self.max_lines,
            "maxBytes": self.max_bytes,
        }


def format_size(size: int) -> str:
    """``512B``, ``50.0KB``, ``1.5MB`` (Pi's human-readable sizes)."""
    if size < 1024:
        return f"{size}B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f}KB"
    return f"{size / (1024 * 1024):.1f}MB"


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def split_lines(text: str) -> list[str]:
    """Lines for counting: ``"a\\nb\\n"`` has two lines, ``""`` has none."""
    if not text:
        return []
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines


def truncate_head(
    text: str, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> Truncation:
    """Keep whole lines from the start; an over-long first line yields empty content."""
    total_bytes = utf8_len(text)
    lines = split_lines(text)
    whole = _untruncated(text, len(lines), total_bytes, max_lines, max_bytes)
    if len(lines) <= max_lines and total_bytes <= max_bytes:
        return whole
    if utf8_len(lines[0]) > max_bytes:
        return replace(
            whole,
            content="",
            truncated=True,
            truncated_by="bytes",
            output_lines=0,
            output_bytes=0,
            first_line_exceeds_limit=True,
        )
    kept: list[str] = []
    used = 0
    truncated_by: Literal["lines", "bytes"] = "lines"
    for line in lines[:max_lines]:
        size = utf8_len(line) + (1 if kept else 0)
        if used + size > max_bytes:
            truncated_by = "bytes"
            break
        kept.append(line)
        used += size
    if len(kept) >= max_lines and used <= max_bytes:
        truncated_by = "lines"  # Pi's rule: a full line budget names lines as the cause
    content = "\n".join(kept)
    return replace(
        whole,
        content=content,
        truncated=True,
        truncated_by=truncated_by,
        output_lines=len(kept),
        output_bytes=utf8_len(content),
    )


def truncate_tail(
    text: str, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> Truncation:
    """Keep whole lines from the end; a single over-long last line keeps its final bytes."""
    total_bytes = utf8_len(text)
    lines = split_lines(text)
    whole = _untruncated(text, len(lines), total_bytes, max_lines, max_bytes)
    if len(lines) <= max_lines and total_bytes <= max_bytes:
        return whole
    kept: list[str] = []
    used = 0
    truncated_by: Literal["lines", "bytes"] = "lines"
    partial = False
    for line in reversed(lines):
        if len(kept) >= max_lines:
            break
        size = utf8_len(line) + (1 if kept else 0)
        if used + size > max_bytes:
            truncated_by = "bytes"
            if not kept:
                kept.append(_last_bytes(line, max_bytes))
                used = utf8_len(kept[0])
                partial = True
            break
        kept.append(line)
        used += size
    if len(kept) >= max_lines and used <= max_bytes:
        truncated_by = "lines"  # Pi's rule, even when the only line kept is partial
    kept.reverse()
    content = "\n".join(kept)
    return replace(
        whole,
        content=content,
        truncated=True,
        truncated_by=truncated_by,
        output_lines=len(kept),
        output_bytes=utf8_len(content),
        last_line_partial=partial,
    )


def _untruncated(
    text: str, total_lines: int, total_bytes: int, max_lines: int, max_bytes: int
) -> Truncation:
    return Truncation(
        content=text,
        truncated=False,
        truncated_by=None,
        total_lines=total_lines,
        total_bytes=total_bytes,
        output_lines=total_lines,
        output_bytes=total_bytes,
        last_line_partial=False,
        first_line_exceeds_limit=False,
        max_lines=max_lines,
        max_bytes=max_bytes,
    )


def _last_bytes(line: str, max_bytes: int) -> str:
    data = line.encode("utf-8", "surrogatepass")
    start = len(data) - max_bytes
    # Never start inside a multi-byte character: skip UTF-8 continuation bytes.
    while start < len(data) and data[start] & 0xC0 == 0x80:
        start += 1
    return data[start:].decode("utf-8", "replace")


@dataclass(frozen=True, slots=True)
class TailSnapshot:
    """The bounded view of a stream so far; ``full_output_path`` is set once it spilled.

    ``last_line_bytes`` is the size of the stream's last line, which the shown tail holds
    only in part when ``truncation.last_line_partial``.
    """

    truncation: Truncation
    full_output_path: str | None
    last_line_bytes: int = 0


class TailBuffer:
    """Accumulates a byte stream, keeping only what :func:`truncate_tail` can show.

    Memory stays below ``4 * max_bytes`` however long the stream. The moment the stream
    exceeds either limit, everything received so far and all later data go to a temporary
    file (named ``<spill_prefix>…``) whose path the snapshot reports. :meth:`close` closes
    that file but leaves it on disk for the reader of the notice.
    """

    def __init__(
        self,
        *,
        max_lines: int = DEFAULT_MAX_LINES,
        max_bytes: int = DEFAULT_MAX_BYTES,
        spill_prefix: str = "ctxmodes-output-",
    ) -> None:
        self._max_lines = max_lines
        self._max_bytes = max_bytes
        self._spill_prefix = spill_prefix
        self._buffer = bytearray()
        self._total_bytes = 0
        self._newlines = 0
        self._open_line_bytes = 0
        self._last_complete_line_bytes = 0
        self._spill: io.BufferedWriter | None = None
        self._spill_path: str | None = None

    @property
    def total_bytes(self) -> int:
        return self._total_bytes

    def append(self, data: bytes) -> None:
        if not data:
            return
        self._total_bytes += len(data)
        self._count_lines(data)
        self._buffer += data
        if self._spill is None and self._over_limit():
            self._start_spill()
        elif self._spill is not None:
            self._spill.write(data)
        # Keep at least twice the byte limit: then the first (possibly cut) line of the
        # buffer can never be shown as if it were whole (see truncate_tail's byte rule).
        if len(self._buffer) > 4 * self._max_bytes:
            del self._buffer[: len(self._buffer) - 2 * self._max_bytes]

    def snapshot(self) -> TailSnapshot:
        text = self._buffer.decode("utf-8", "replace")
        truncation = truncate_tail(text, self._max_lines, self._max_bytes)
        if self._spill is not None:
            self._spill.flush()
            truncation = replace(
                truncation, total_lines=self._total_lines(), total_bytes=self._total_bytes
            )
        last_line = self._open_line_bytes or self._last_complete_line_bytes
        return TailSnapshot(truncation, self._spill_path, last_line)

    def close(self) -> None:
        if self._spill is not None:
            self._spill.close()

    def _count_lines(self, data: bytes) -> None:
        last = data.rfind(b"\n")
        if last < 0:
            self._open_line_bytes += len(data)
            return
        newlines = data.count(b"\n")
        before = data.rfind(b"\n", 0, last)
        if before < 0:
            self._last_complete_line_bytes = self._open_line_bytes + last
        else:
            self._last_complete_line_bytes = last - before - 1
        self._newlines += newlines
        self._open_line_bytes = len(data) - last - 1

    def _total_lines(self) -> int:
        return self._newlines + (1 if self._open_line_bytes else 0)

    def _over_limit(self) -> bool:
        return self._total_bytes > self._max_bytes or self._total_lines() > self._max_lines

    def _start_spill(self) -> None:
        fd, path = tempfile.mkstemp(prefix=self._spill_prefix, suffix=".log")
        spill = os.fdopen(fd, "wb")
        spill.write(self._buffer)
        self._spill = spill
        self._spill_path = path


def join_sections(*sections: str) -> str:
    """The non-empty sections, separated by a blank line (Pi's way of appending a status)."""
    return "\n\n".join(section for section in sections if section)


def shown_output(snapshot: TailSnapshot, *, finished: bool) -> str:
    """The output as the model sees it: the kept tail, or ``(no output)`` for a run that
    finished without any, then the truncation notice."""
    text = snapshot.truncation.content or ("(no output)" if finished else "")
    notice = truncation_notice(snapshot)
    return f"{text}\n\n{notice}" if notice else text


def truncation_details(snapshot: TailSnapshot) -> dict[str, Any]:
    """The ``details`` keys of a truncated output (none when nothing was cut)."""
    if not snapshot.truncation.truncated:
        return {}
    return {
        "truncation": snapshot.truncation.to_details(),
        "fullOutputPath": snapshot.full_output_path,
    }


def truncation_notice(snapshot: TailSnapshot) -> str:
    """Where the shown tail sits in the full output; empty when nothing was cut."""
    t = snapshot.truncation
    if not t.truncated:
        return ""
    where = f"Full output: {snapshot.full_output_path}"
    if t.last_line_partial:
        shown, size = format_size(t.output_bytes), format_size(snapshot.last_line_bytes)
        return f"[Showing last {shown} of line {t.total_lines} (line is {size}). {where}]"
    first = t.total_lines - t.output_lines + 1
    limit = "" if t.truncated_by == "lines" else f" ({format_size(t.max_bytes)} limit)"
    return f"[Showing lines {first}-{t.total_lines} of {t.total_lines}{limit}. {where}]"
