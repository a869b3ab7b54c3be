"""Virtual note paths: how the model's paths and prefixes map onto note keys.

Notes are not files. A note key is an absolute virtual path ``/<agent>/notes/<path>``: a
relative path belongs to the current agent (``draft.md`` is ``/root/notes/draft.md``), and
an absolute one must name an agent and its ``notes`` directory, so another agent's notes can
be addressed as ``/root/worker/notes/draft.md``. Empty, ``.`` and ``..`` components are
rejected rather than resolved, and nothing is expanded (``~`` is an ordinary character), so
no input can reach a key outside some agent's ``notes`` directory. Control characters and
line separators are rejected too: a path is shown in the next window's marker. So are
invisible format characters (Unicode category Cf: bidirectional controls, zero-width
characters, the byte-order mark), which would make a path read differently from what it is.
Paths and prefixes are put in Unicode NFC, so two spellings of one text (``é`` composed or
``e`` + combining accent) name one note.
"""

from __future__ import annotations

import unicodedata

from ctxmodes.errors import CtxmodesError
from ctxmodes.windows.marker_escape import has_control_character, has_format_character

#: The current agent's notes directory.
NOTES_ROOT = "/root/notes"
_NOTES_COMPONENT = "notes"
#: Paths reach the next window's marker (developer role): no line breaks or controls.
CONTROL_CHARACTER_MESSAGE = "Note {what} cannot contain line breaks or control characters"
FORMAT_CHARACTER_MESSAGE = (
    "Note {what} cannot contain invisible formatting characters "
    "(bidirectional controls, zero-width characters, byte-order marks)"
)


class NotePathError(CtxmodesError):
    """A note path or prefix the notes contract does not allow."""


def _checked(value: str, what: str) -> str:
    """``value`` in NFC, once it holds no control or format character."""
    if has_control_character(value):
        raise NotePathError(CONTROL_CHARACTER_MESSAGE.format(what=what))
    if has_format_character(value):
        raise NotePathError(FORMAT_CHARACTER_MESSAGE.format(what=what))
    return unicodedata.normalize("NFC", value)


def _absolute(value: str) -> str:
    return value if value.startswith("/") else f"{NOTES_ROOT}/{value}"


def _has_bad_component(components: list[str]) -> bool:
    return any(part in ("", ".", "..") for part in components)


def _notes_index(components: list[str]) -> int:
    """Where the ``notes`` directory is: the first ``notes`` after at least one agent
    component (an agent may itself be called ``notes``: ``/notes/notes/x``); -1 if none."""
    try:
        return components.index(_NOTES_COMPONENT, 1)
    except ValueError:
        return -1


def normalize_note_path(value: object) -> str:
    """The note key a ``path`` argument names.

    :raises NotePathError: the path is missing or empty, holds a control or format
        character, has an empty, ``.`` or ``..`` component, or is absolute without an
        ``<agent>/notes/<path>`` shape.
    """
    if not isinstance(value, str) or not value:
        raise NotePathError("Note file path is required")
    value = _checked(value, "paths")
    components = _absolute(value)[1:].split("/")
    if _has_bad_component(components):
        raise NotePathError("Note paths cannot contain empty, . or .. components")
    notes_index = _notes_index(components)
    if notes_index < 0 or notes_index == len(components) - 1:
        raise NotePathError("Absolute note paths must use <agent>/notes/<path>")
    return "/" + "/".join(components)


def normalize_note_prefix(value: object) -> str:
    """The key prefix a ``prefix``/``path_prefix`` argument selects.

    Missing or empty means the current agent's whole notes directory. A prefix that stops
    at a ``notes`` directory gets a trailing slash so it selects that directory only
    (``/root/notes`` must not match ``/root/notesmore/...``). One trailing slash is
    accepted (``drafts/`` selects the ``drafts`` directory); it is the only place an empty
    component may appear.

    :raises NotePathError: the prefix is not a string, holds a control or format
        character, has an empty, ``.`` or ``..`` component, or is absolute without an
        ``<agent>/notes`` part.
    """
    if value is None or value == "":
        return f"{NOTES_ROOT}/"
    if not isinstance(value, str):
        raise NotePathError("Note prefix must be a string")
    value = _checked(value, "prefixes")
    path = _absolute(value)
    trailing_slash = path.endswith("/") and len(path) > 1
    components = (path[1:-1] if trailing_slash else path[1:]).split("/")
    if _has_bad_component(components):
        raise NotePathError("Note prefixes cannot contain empty, . or .. components")
    notes_index = _notes_index(components)
    if notes_index < 0:
        raise NotePathError("Absolute note prefixes must use <agent>/notes[/path]")
    prefix = "/" + "/".join(components)
    if trailing_slash or notes_index == len(components) - 1:
        prefix += "/"
    return prefix
