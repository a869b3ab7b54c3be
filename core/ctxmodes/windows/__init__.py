"""The context-window kit: everything a managed mode (Local, Tree, Remote, a third party's)
is built from. A public module: import from here only; the submodules are internal.

The model works in windows: a window marker opens each one, ``new_context`` asks for the next,
``get_context_remaining`` reports the budget, and ``history`` and ``notes`` recover what an
earlier window knew. Everything persisted here is a compatibility format shared with the
TypeScript extension.

A managed mode is a :class:`ManagedMode` — which owns every hook — assembled from
:class:`WindowStrategies`: the window state, the projection, the rollover, the compaction
policy, the retrieval and the request shaping. The kit provides Local's parts
(:meth:`WindowStrategies.defaults`: :class:`LatestWindowProjection`,
:class:`SameBranchRollover`, :class:`TrimOnceCompaction`, :class:`LocalRetrieval`,
:class:`PlaintextShaping`); a mode writes only the parts it changes, against the protocols
below, using the window state, markers, history, note and tool types for them.
"""

from typing import TYPE_CHECKING

from ctxmodes.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from ctxmodes.windows.budget import ContextRemaining
    from ctxmodes.windows.compaction import is_no_summary_compaction
    from ctxmodes.windows.history import HistoryItem, HistorySource, ItemFilter
    from ctxmodes.windows.history_items import ItemFields, image_placeholder, stored_item
    from ctxmodes.windows.history_reader import HistoryReader
    from ctxmodes.windows.identity import WindowIdentity, next_identity
    from ctxmodes.windows.managed import ManagedMode
    from ctxmodes.windows.marker import (
        CONTEXT_WINDOW_CUSTOM_TYPE,
        ROOT_AGENT_NAME,
        MalformedMarkerError,
        WindowMarker,
        count_branch_windows,
        stored_marker_details,
        window_marker,
    )
    from ctxmodes.windows.note_entries import (
        NOTE_CUSTOM_TYPE,
        NOTE_PROTOCOL,
        NOTE_SNAPSHOT_CUSTOM_TYPE,
        NoteEntryData,
        utf8_length,
    )
    from ctxmodes.windows.notes import (
        LineMatch,
        NotesStore,
        PreparedNoteWrite,
        TextMatcher,
        matching_texts,
    )
    from ctxmodes.windows.projection import project_latest_window, strip_markers
    from ctxmodes.windows.retrieval import DETAILS_KEY, prepare_notes_write, run_history, run_notes
    from ctxmodes.windows.routing import unroute_message
    from ctxmodes.windows.state import TrackedWindowState, WindowState
    from ctxmodes.windows.stored import StoredEntry
    from ctxmodes.windows.strategies import (
        Assemble,
        CompactionPolicy,
        HistoryProvider,
        LatestWindowProjection,
        LocalRetrieval,
        NewWindowMarker,
        PlaintextShaping,
        RequestShaping,
        Retrieval,
        Rollover,
        SameBranchRollover,
        SessionHistory,
        TrimOnceCompaction,
        WindowProjection,
        WindowStateHolder,
        WindowStrategies,
        namespaced_tools,
    )
    from ctxmodes.windows.thread_hint import (
        RECOVERY_USER_ITEM_LIMIT,
        THREAD_HINT_MAX_BYTES,
        PreviousWindowIds,
        render_thread_hint,
    )
    from ctxmodes.windows.tools import (
        CONTEXT_TOOL_NAMES,
        FAMILIES,
        OPERATIONS,
        Family,
        new_context_outcome,
    )
    from ctxmodes.windows.window_log import LogWindow, WindowLog

#: Public name → the module that defines it, imported on first use: reading a window
#: marker (session show, the export) needs neither the managed mode nor the tools.
_EXPORTS: dict[str, str] = {
    "ContextRemaining": "ctxmodes.windows.budget",
    "is_no_summary_compaction": "ctxmodes.windows.compaction",
    "HistoryItem": "ctxmodes.windows.history",
    "HistorySource": "ctxmodes.windows.history",
    "ItemFilter": "ctxmodes.windows.history",
    "ItemFields": "ctxmodes.windows.history_items",
    "image_placeholder": "ctxmodes.windows.history_items",
    "stored_item": "ctxmodes.windows.history_items",
    "HistoryReader": "ctxmodes.windows.history_reader",
    "WindowIdentity": "ctxmodes.windows.identity",
    "next_identity": "ctxmodes.windows.identity",
    "ManagedMode": "ctxmodes.windows.managed",
    "CONTEXT_WINDOW_CUSTOM_TYPE": "ctxmodes.windows.marker",
    "ROOT_AGENT_NAME": "ctxmodes.windows.marker",
    "MalformedMarkerError": "ctxmodes.windows.marker",
    "WindowMarker": "ctxmodes.windows.marker",
    "count_branch_windows": "ctxmodes.windows.marker",
    "stored_marker_details": "ctxmodes.windows.marker",
    "window_marker": "ctxmodes.windows.marker",
    "NOTE_CUSTOM_TYPE": "ctxmodes.windows.note_entries",
    "NOTE_PROTOCOL": "ctxmodes.windows.note_entries",
    "NOTE_SNAPSHOT_CUSTOM_TYPE": "ctxmodes.windows.note_entries",
    "NoteEntryData": "ctxmodes.windows.note_entries",
    "utf8_length": "ctxmodes.windows.note_entries",
    "LineMatch": "ctxmodes.windows.notes",
    "NotesStore": "ctxmodes.windows.notes",
    "PreparedNoteWrite": "ctxmodes.windows.notes",
    "TextMatcher": "ctxmodes.windows.notes",
    "matching_texts": "ctxmodes.windows.notes",
    "project_latest_window": "ctxmodes.windows.projection",
    "strip_markers": "ctxmodes.windows.projection",
    "DETAILS_KEY": "ctxmodes.windows.retrieval",
    "prepare_notes_write": "ctxmodes.windows.retrieval",
    "run_history": "ctxmodes.windows.retrieval",
    "run_notes": "ctxmodes.windows.retrieval",
    "unroute_message": "ctxmodes.windows.routing",
    "TrackedWindowState": "ctxmodes.windows.state",
    "WindowState": "ctxmodes.windows.state",
    "StoredEntry": "ctxmodes.windows.stored",
    "Assemble": "ctxmodes.windows.strategies",
    "CompactionPolicy": "ctxmodes.windows.strategies",
    "HistoryProvider": "ctxmodes.windows.strategies",
    "LatestWindowProjection": "ctxmodes.windows.strategies",
    "LocalRetrieval": "ctxmodes.windows.strategies",
    "NewWindowMarker": "ctxmodes.windows.strategies",
    "PlaintextShaping": "ctxmodes.windows.strategies",
    "RequestShaping": "ctxmodes.windows.strategies",
    "Retrieval": "ctxmodes.windows.strategies",
    "Rollover": "ctxmodes.windows.strategies",
    "SameBranchRollover": "ctxmodes.windows.strategies",
    "SessionHistory": "ctxmodes.windows.strategies",
    "TrimOnceCompaction": "ctxmodes.windows.strategies",
    "WindowProjection": "ctxmodes.windows.strategies",
    "WindowStateHolder": "ctxmodes.windows.strategies",
    "WindowStrategies": "ctxmodes.windows.strategies",
    "namespaced_tools": "ctxmodes.windows.strategies",
    "RECOVERY_USER_ITEM_LIMIT": "ctxmodes.windows.thread_hint",
    "THREAD_HINT_MAX_BYTES": "ctxmodes.windows.thread_hint",
    "PreviousWindowIds": "ctxmodes.windows.thread_hint",
    "render_thread_hint": "ctxmodes.windows.thread_hint",
    "CONTEXT_TOOL_NAMES": "ctxmodes.windows.tools",
    "FAMILIES": "ctxmodes.windows.tools",
    "OPERATIONS": "ctxmodes.windows.tools",
    "Family": "ctxmodes.windows.tools",
    "new_context_outcome": "ctxmodes.windows.tools",
    "LogWindow": "ctxmodes.windows.window_log",
    "WindowLog": "ctxmodes.windows.window_log",
}

__all__ = [
    "CONTEXT_TOOL_NAMES",
    "CONTEXT_WINDOW_CUSTOM_TYPE",
    "DETAILS_KEY",
    "FAMILIES",
    "NOTE_CUSTOM_TYPE",
    "NOTE_PROTOCOL",
    "NOTE_SNAPSHOT_CUSTOM_TYPE",
    "OPERATIONS",
    "RECOVERY_USER_ITEM_LIMIT",
    "ROOT_AGENT_NAME",
    "THREAD_HINT_MAX_BYTES",
    "Assemble",
    "CompactionPolicy",
    "ContextRemaining",
    "Family",
    "HistoryItem",
    "HistoryProvider",
    "HistoryReader",
    "HistorySource",
    "ItemFields",
    "ItemFilter",
    "LatestWindowProjection",
    "LineMatch",
    "LocalRetrieval",
    "LogWindow",
    "MalformedMarkerError",
    "ManagedMode",
    "NewWindowMarker",
    "NoteEntryData",
    "NotesStore",
    "PlaintextShaping",
    "PreparedNoteWrite",
    "PreviousWindowIds",
    "RequestShaping",
    "Retrieval",
    "Rollover",
    "SameBranchRollover",
    "SessionHistory",
    "StoredEntry",
    "TextMatcher",
    "TrackedWindowState",
    "TrimOnceCompaction",
    "WindowIdentity",
    "WindowLog",
    "WindowMarker",
    "WindowProjection",
    "WindowState",
    "WindowStateHolder",
    "WindowStrategies",
    "count_branch_windows",
    "image_placeholder",
    "is_no_summary_compaction",
    "matching_texts",
    "namespaced_tools",
    "new_context_outcome",
    "next_identity",
    "prepare_notes_write",
    "project_latest_window",
    "render_thread_hint",
    "run_history",
    "run_notes",
    "stored_item",
    "stored_marker_details",
    "strip_markers",
    "unroute_message",
    "utf8_length",
    "window_marker",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
