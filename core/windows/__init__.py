"""The context-window contract every managed mode shares (Local, Tree, Remote).

The model works in windows: a window marker opens each one, ``new_context`` asks for the next,
``get_context_remaining`` reports the budget, and ``history`` and ``notes`` recover what an
earlier window knew. Everything persisted here is a compatibility format shared with the
TypeScript extension; nothing here depends on a mode or on the agent host.

Modules (import the ones you need; this package imports nothing by itself):

* :mod:`~ctxmodes.windows.marker` — marker details, texts and builders; parsing persisted ones.
* :mod:`~ctxmodes.windows.identity` — window ids and lineage; the identity tracker.
* :mod:`~ctxmodes.windows.budget` — usable window, reminder and fallback, the
  ``get_context_remaining`` answer.
* :mod:`~ctxmodes.windows.thread_hint` — recent notes and previous-window ids for a new window.
* :mod:`~ctxmodes.windows.note_paths`, :mod:`~ctxmodes.windows.note_entries`,
  :mod:`~ctxmodes.windows.notes` — virtual note paths, persisted note entries and snapshots,
  the notes store and its operations.
* :mod:`~ctxmodes.windows.history` — history items, windows and the source protocol;
  :mod:`~ctxmodes.windows.history_reader` (the four operations),
  :mod:`~ctxmodes.windows.history_items` (entry normalization),
  :mod:`~ctxmodes.windows.window_log` (arena-backed windows),
  :mod:`~ctxmodes.windows.history_index` (the active branch's windows),
  :mod:`~ctxmodes.windows.text_arena` and :mod:`~ctxmodes.windows.byte_search` (search
  storage).
* :mod:`~ctxmodes.windows.stored` — session entries in their stored (JSON) form, which the
  state reads.
* :mod:`~ctxmodes.windows.tools`, :mod:`~ctxmodes.windows.tool_args`,
  :mod:`~ctxmodes.windows.routing`, :mod:`~ctxmodes.windows.retrieval` — tool schemas in their
  three wire shapes, argument validation, namespace routing, local answers.
* :mod:`~ctxmodes.windows.projection` — latest-window projection, marker stripping and
  developer-role promotion.
* :mod:`~ctxmodes.windows.compaction` — the fixed no-summary compaction.
* :mod:`~ctxmodes.windows.state` — all of the above for one branch, fed entry by entry.
"""
