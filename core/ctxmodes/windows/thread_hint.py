"""The thread hint: what a new window's marker tells the model about where to resume.

Two parts, each optional, at most 4,000 UTF-8 bytes together::

    Recent notes (up to 5, most-recent first):
    - /root/notes/checkpoint.md (1 line, 8 UTF-8 bytes)
    Previous window history IDs: {"window_id":"…","summary_item_id":"…","user_item_ids":[…]}

The recovery line (previous window id, Tree's summary item id, up to five recent user item
ids, newest first) is reserved first; note lines are then added, newest update first, while
the hint stays within budget. A hint that would still not fit is left out entirely.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ctxmodes.session import codec
from ctxmodes.session.jsvalues import js_sort_key
from ctxmodes.windows.marker_escape import escape_json_text, marker_value
from ctxmodes.windows.note_entries import utf8_length
from ctxmodes.windows.notes import NoteFile

THREAD_HINT_MAX_BYTES = 4_000
THREAD_HINT_NOTE_LIMIT = 5
#: How many of the previous window's user items the hint names.
RECOVERY_USER_ITEM_LIMIT = 5

NOTES_HEADER = "Recent notes (up to 5, most-recent first):"
RECOVERY_LABEL = "Previous window history IDs: "


@dataclass(frozen=True, slots=True)
class PreviousWindowIds:
    """History ids of the window that just closed.

    :param user_item_ids: the window's user items, most recent first (only the first five
        are shown).
    :param summary_item_id: Tree's hidden branch-summary item for the archived window.
    """

    window_id: str
    user_item_ids: Sequence[str] = ()
    summary_item_id: str | None = None

    def recovery_line(self) -> str | None:
        """``Previous window history IDs: {...}``, or ``None`` when there is nothing to
        recover (no summary and no user items)."""
        user_ids = list(self.user_item_ids[:RECOVERY_USER_ITEM_LIMIT])
        if self.summary_item_id is None and not user_ids:
            return None
        payload: dict[str, object] = {"window_id": self.window_id}
        if self.summary_item_id is not None:
            payload["summary_item_id"] = self.summary_item_id
        if user_ids:
            payload["user_item_ids"] = user_ids
        # Ids come from session entries, which a hostile file may shape: escaped like any
        # other marker value.
        return RECOVERY_LABEL + escape_json_text(codec.dumps(payload).decode())


def note_line(note: NoteFile) -> str:
    lines = note.line_count()
    unit = "line" if lines == 1 else "lines"
    return f"- {marker_value(note.path)} ({lines} {unit}, {note.byte_count} UTF-8 bytes)"


def render_notes_hint(notes: Iterable[NoteFile], max_bytes: int) -> str | None:
    """The recent-notes part within ``max_bytes``, or ``None`` if no note line fits."""
    ordered = sorted(notes, key=lambda note: js_sort_key(note.path))
    ordered.sort(key=lambda note: note.updated_at, reverse=True)
    text = NOTES_HEADER
    size = utf8_length(text)
    count = 0
    for note in ordered:
        if count >= THREAD_HINT_NOTE_LIMIT:
            break
        line = "\n" + note_line(note)
        line_size = utf8_length(line)
        # A long path may not fit where a shorter one after it still does.
        if size + line_size <= max_bytes:
            text += line
            size += line_size
            count += 1
    return text if count else None


def render_thread_hint(
    notes: Iterable[NoteFile], previous: PreviousWindowIds | None = None
) -> str | None:
    """The thread hint for a new window's marker, or ``None`` when there is nothing to say
    or it cannot fit in :data:`THREAD_HINT_MAX_BYTES`."""
    recovery = previous.recovery_line() if previous is not None else None
    reserved = utf8_length("\n" + recovery) if recovery is not None else 0
    notes_hint = render_notes_hint(notes, max(0, THREAD_HINT_MAX_BYTES - reserved))
    hint = "\n".join(part for part in (notes_hint, recovery) if part)
    if not hint or utf8_length(hint) > THREAD_HINT_MAX_BYTES:
        return None
    return hint
