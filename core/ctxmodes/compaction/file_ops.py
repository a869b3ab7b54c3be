"""Which files a stretch of conversation read or changed, as Pi tracks them across summaries.

Pi looks only at the built-in ``read``, ``write`` and ``edit`` tool calls (their ``path``
argument) and at the ``details`` of earlier pi-generated compaction and branch-summary
entries, ``{readFiles, modifiedFiles}``, so the lists accumulate over repeated summaries.
A summary ends with the lists as ``<read-files>`` / ``<modified-files>`` blocks.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ctxmodes.compaction._access import MISSING, MessageLike, field, is_object, js_truthy
from ctxmodes.compaction._js import js_sort_key


class FileOperations(BaseModel):
    """File paths seen in tool calls, each list in first-seen order without repeats."""

    model_config = ConfigDict(frozen=True)

    read: tuple[str, ...] = ()
    written: tuple[str, ...] = ()
    edited: tuple[str, ...] = ()


class FileListDetails(BaseModel):
    """The ``details`` Pi stores on the compaction and branch-summary entries it generates."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    read_files: list[str] = Field(alias="readFiles")
    modified_files: list[str] = Field(alias="modifiedFiles")


class FileOpsCollector:
    """Accumulates :class:`FileOperations` from details and messages, in Pi's order."""

    def __init__(self) -> None:
        # Dicts as insertion-ordered sets: Pi's lists keep first-seen order.
        self._read: dict[str, None] = {}
        self._written: dict[str, None] = {}
        self._edited: dict[str, None] = {}

    def add_details(self, details: Any) -> None:
        """Fold in an earlier summary's ``{readFiles, modifiedFiles}``.

        Modified files count as edited. Anything that is not a list of strings is ignored
        (Pi would carry non-string items into the summary text).
        """
        if not is_object(details):
            return
        for target, name in ((self._read, "readFiles"), (self._edited, "modifiedFiles")):
            paths = field(details, name)
            if isinstance(paths, list):
                target.update((path, None) for path in paths if isinstance(path, str))

    def add_message(self, message: MessageLike) -> None:
        """Record the ``read`` / ``write`` / ``edit`` tool calls of an assistant message."""
        if field(message, "role") != "assistant":
            return
        content = field(message, "content")
        if not isinstance(content, list):
            return
        for block in content:
            if not is_object(block) or field(block, "type") != "toolCall":
                continue
            name = field(block, "name")
            arguments = field(block, "arguments")
            if name is MISSING or not js_truthy(arguments):
                continue
            path = field(arguments, "path")
            if not isinstance(path, str) or not path:
                continue
            if name == "read":
                self._read[path] = None
            elif name == "write":
                self._written[path] = None
            elif name == "edit":
                self._edited[path] = None

    def result(self) -> FileOperations:
        """The operations collected so far."""
        return FileOperations(
            read=tuple(self._read), written=tuple(self._written), edited=tuple(self._edited)
        )


def compute_file_lists(ops: FileOperations) -> FileListDetails:
    """Sorted lists for a summary: modified = edited or written, read = read but never modified."""
    modified = set(ops.edited) | set(ops.written)
    read_only = sorted((path for path in set(ops.read) if path not in modified), key=js_sort_key)
    return FileListDetails(read_files=read_only, modified_files=sorted(modified, key=js_sort_key))


def format_file_operations(read_files: list[str], modified_files: list[str]) -> str:
    """The file-list blocks appended to a summary (empty when both lists are empty)."""
    sections: list[str] = []
    if read_files:
        sections.append("<read-files>\n" + "\n".join(read_files) + "\n</read-files>")
    if modified_files:
        sections.append("<modified-files>\n" + "\n".join(modified_files) + "\n</modified-files>")
    if not sections:
        return ""
    return "\n\n" + "\n\n".join(sections)
