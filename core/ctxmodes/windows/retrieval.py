"""Answering ``history`` and ``notes`` calls locally (Local and Tree modes).

Takes the call's action and arguments (without ``action``), validates them, reads the
optional ones leniently, runs the operation against a :class:`HistoryReader` or a
:class:`NotesStore`, and shapes the answer as the contract's local result: one text block
holding the result's compact JSON, and ``details = {"codexHistoryNotes": result}``. Expected
failures (validation, bad paths, size limits) come back as error results carrying their
one-line message.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from ctxmodes.errors import CtxmodesError
from ctxmodes.events import RetrievalResult
from ctxmodes.session import codec
from ctxmodes.windows.history import ItemFilter
from ctxmodes.windows.history_reader import (
    DEFAULT_ITEM_LIMIT,
    DEFAULT_WINDOW_LIMIT,
    PREVIEW_CHARS,
    READ_ITEM_LIMIT_CHARS,
    HistoryReader,
)
from ctxmodes.windows.note_entries import NoteAction
from ctxmodes.windows.notes import DEFAULT_MAX_RESULTS, NotesStore, PreparedNoteWrite
from ctxmodes.windows.tool_args import (
    ValidatedCall,
    filter_argument,
    integer_argument,
    optional_integer,
    string_argument,
    validate_action,
)

#: Key under which a local result is kept in the tool result's ``details``.
DETAILS_KEY = "codexHistoryNotes"

#: Persists a prepared note write as a ``codex-context-note`` entry; returns the entry id.
PersistNote = Callable[[PreparedNoteWrite], str]


def result_text(result: Mapping[str, Any]) -> str:
    """The model-visible text of a local result: compact JSON, non-ASCII kept as is."""
    return codec.dumps(result).decode()


def local_result(result: Mapping[str, Any]) -> RetrievalResult:
    return RetrievalResult(text=result_text(result), details={DETAILS_KEY: dict(result)})


def _failure(error: CtxmodesError) -> RetrievalResult:
    return RetrievalResult(text=str(error), is_error=True)


def _fields(action: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    # Flat-router arguments may arrive whole; their own ``action`` names this operation.
    return {k: v for k, v in arguments.items() if not (k == "action" and v == action)}


def answer_history(
    reader: HistoryReader, action: str, arguments: Mapping[str, Any]
) -> RetrievalResult:
    """Run one ``history`` operation; invalid calls become error results.

    ``arguments`` are the call's fields; an ``action`` among them must name ``action``.
    """
    try:
        result = run_history(reader, action, arguments)
    except CtxmodesError as error:
        return _failure(error)
    return local_result(result)


def run_history(
    reader: HistoryReader, action: str, arguments: Mapping[str, Any]
) -> Mapping[str, Any]:
    """The plain result of one ``history`` operation, for backends that shape answers their
    own way (the history/notes service).

    :raises ToolArgumentError: the call is invalid.
    """
    return _run_history(reader, validate_action("history", action, _fields(action, arguments)))


def _item_filter(arguments: Mapping[str, Any]) -> ItemFilter:
    return ItemFilter(
        role=filter_argument(arguments.get("role")),
        tool_name=filter_argument(arguments.get("tool_name")),
        tool_namespace=filter_argument(arguments.get("tool_namespace")),
    )


def _run_history(reader: HistoryReader, call: ValidatedCall) -> Mapping[str, Any]:
    args = call.arguments
    agent_name = args.get("agent_name")
    recent_first = args.get("recent_first") is True
    if call.action == "list_windows":
        return reader.list_windows(
            agent_name=agent_name,
            limit=integer_argument(args.get("limit"), DEFAULT_WINDOW_LIMIT),
            recent_first=recent_first,
        )
    if call.action == "read_item":
        return reader.read_item(
            string_argument(args.get("window_id")),
            string_argument(args.get("item_id")),
            agent_name=agent_name,
            offset_chars=integer_argument(args.get("offset_chars"), 0),
            limit_chars=integer_argument(args.get("limit_chars"), READ_ITEM_LIMIT_CHARS),
        )
    window_id = filter_argument(args.get("window_id"))
    limit = integer_argument(args.get("limit"), DEFAULT_ITEM_LIMIT)
    if call.action == "search_contents":
        return reader.search_contents(
            string_argument(args.get("query")),
            agent_name=agent_name,
            window_id=window_id,
            item_filter=_item_filter(args),
            limit=limit,
            recent_first=recent_first,
        )
    return reader.list_items(
        agent_name=agent_name,
        window_id=window_id,
        item_filter=_item_filter(args),
        limit=limit,
        max_chars_per_item=integer_argument(args.get("max_chars_per_item"), PREVIEW_CHARS),
        recent_first=recent_first,
    )


def answer_notes(
    store: NotesStore,
    action: str,
    arguments: Mapping[str, Any],
    persist: PersistNote,
    *,
    now_ms: Callable[[], int] = lambda: time.time_ns() // 1_000_000,
) -> RetrievalResult:
    """Run one ``notes`` operation; writes are persisted through ``persist`` and applied to
    ``store`` before this returns, so a following read sees them."""
    try:
        return local_result(run_notes(store, action, arguments, persist, now_ms=now_ms))
    except CtxmodesError as error:
        return _failure(error)


def run_notes(
    store: NotesStore,
    action: str,
    arguments: Mapping[str, Any],
    persist: PersistNote,
    *,
    now_ms: Callable[[], int] = lambda: time.time_ns() // 1_000_000,
) -> Mapping[str, Any]:
    """The plain result of one ``notes`` operation (see :func:`run_history`).

    :raises CtxmodesError: the call is invalid, or a path or size limit refuses it.
    """
    call = validate_action("notes", action, _fields(action, arguments))
    return _run_notes(store, call, persist, now_ms)


def _run_notes(
    store: NotesStore, call: ValidatedCall, persist: PersistNote, now_ms: Callable[[], int]
) -> Mapping[str, Any]:
    args = call.arguments
    if call.action == "list_files_by_prefix":
        order_by = args.get("file_order_by")
        return store.list_files_by_prefix(
            prefix=args.get("prefix"),
            max_results=integer_argument(args.get("max_results"), DEFAULT_MAX_RESULTS),
            file_order_by=order_by if order_by in ("created_at", "updated_at") else "name",
            file_order="descending" if args.get("file_order") == "descending" else "ascending",
        )
    if call.action == "read_file":
        return store.read_file(
            args["path"],
            start_line=optional_integer(args.get("start_line")),
            stop_line=optional_integer(args.get("stop_line")),
        )
    if call.action == "search_contents":
        return store.search_contents(
            args["query"],
            path_prefix=args.get("path_prefix"),
            max_files=integer_argument(args.get("max_files"), DEFAULT_MAX_RESULTS),
            max_matches_per_file=integer_argument(
                args.get("max_matches_per_file"), DEFAULT_MAX_RESULTS
            ),
            recent_file_first=args.get("recent_file_first") is True,
        )
    prepared = _prepare_write(store, call, now_ms)
    entry_id = persist(prepared)
    store.commit(entry_id, prepared.data)
    return prepared.result


def prepare_notes_write(
    store: NotesStore,
    action: str,
    arguments: Mapping[str, Any],
    *,
    now_ms: Callable[[], int] = lambda: time.time_ns() // 1_000_000,
) -> PreparedNoteWrite:
    """A ``write_file`` or ``append_to_file`` call validated and checked against ``store``,
    not yet persisted: for a backend that persists it asynchronously, then applies it with
    :meth:`NotesStore.commit` and answers ``result`` (what :func:`run_notes` does in one go).

    :raises CtxmodesError: the call is invalid, or a path or size limit refuses it.
    """
    if action not in ("write_file", "append_to_file"):
        raise ValueError(f"{action} does not write")
    return _prepare_write(
        store, validate_action("notes", action, _fields(action, arguments)), now_ms
    )


def _prepare_write(
    store: NotesStore, call: ValidatedCall, now_ms: Callable[[], int]
) -> PreparedNoteWrite:
    args = call.arguments
    action: NoteAction = "append" if call.action == "append_to_file" else "write"
    return store.prepare_write(action, args["path"], args["text"], now_ms())
