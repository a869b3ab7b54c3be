"""Internal to ctxmodes: a large paste into the editor held as Pi's editor holds it, as a
marker (``[paste #1 +60 lines]``, ``[paste #2 1500 chars]``) that the prompt sent carries
expanded, so that a long log or file pasted into a prompt leaves the editor readable.

A paste of more than ten lines or 1,000 characters becomes a marker; a smaller one goes in
as it is. Either way it is cleaned as Pi cleans a paste: line ends made line feeds, a tab
four spaces, other control characters dropped, and a path (starting with ``/``, ``~`` or
``.``) pasted right after a word parted from it by a space. The cursor and the deletes take
a marker as one character; Backspace also forgets its paste, and the markers after it are
numbered down, as in Pi. Only the markers of pastes made since the last prompt was sent are
expanded: the same text typed by hand stays as typed.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Final

from ctxmodes.tui.line_field import PASTE_MARKER, editor_paste

#: Pi's limits of a paste that goes in as it is.
MAX_LINES: Final = 10
MAX_CHARS: Final = 1000

_WORD_BEFORE: Final = re.compile(r"\w\Z", re.ASCII)  # JavaScript's \w: ASCII only


#: The pastes kept at one moment, by number (a copy, for undo).
PastesKept = dict[int, str]


class PasteMarkers:
    """The pastes of the prompt being written, by the number in their marker."""

    def __init__(self) -> None:
        self._pastes: dict[int, str] = {}

    def take(self, text: str, before_cursor: str) -> str:
        """What a paste of ``text`` puts in the editor after ``before_cursor``: the cleaned
        text, or the marker it is kept under."""
        pasted = editor_paste(text)
        if pasted[:1] in ("/", "~", ".") and _WORD_BEFORE.search(before_cursor):
            pasted = f" {pasted}"
        lines = pasted.count("\n") + 1
        if lines <= MAX_LINES and len(pasted) <= MAX_CHARS:
            return pasted
        number = len(self._pastes) + 1
        self._pastes[number] = pasted
        if lines > MAX_LINES:
            return f"[paste #{number} +{lines} lines]"
        return f"[paste #{number} {len(pasted)} chars]"

    def kept(self) -> PastesKept:
        """The pastes kept now, for undo to bring back (:meth:`restore`)."""
        return dict(self._pastes)

    def restore(self, kept: PastesKept) -> None:
        self._pastes = dict(kept)

    def numbers(self) -> Collection[int]:
        """The numbers of the pastes kept, whose markers the editor takes as one character."""
        return self._pastes.keys()

    def expanded(self, text: str) -> str:
        """``text`` with each marker of a paste kept replaced by the paste."""
        if not self._pastes:
            return text

        def paste(found: re.Match[str]) -> str:
            return self._pastes.get(int(found.group(1)), found.group(0))

        return PASTE_MARKER.sub(paste, text)

    def forget(self, marker: str) -> int:
        """Forget the paste of ``marker``, just deleted, and number the later ones down
        (:meth:`renumbered` says so in the text); the number it had."""
        found = PASTE_MARKER.fullmatch(marker)
        assert found is not None
        gone = int(found.group(1))
        del self._pastes[gone]
        for number in sorted(number for number in self._pastes if number > gone):
            self._pastes[number - 1] = self._pastes.pop(number)
        return gone

    @staticmethod
    def renumbered(text: str, gone: int) -> str:
        """``text`` with the markers numbered after ``gone`` numbered one down."""

        def down(found: re.Match[str]) -> str:
            number = int(found.group(1))
            if number <= gone:
                return found.group(0)
            return f"[paste #{number - 1}{found.group(2) or ''}]"

        return PASTE_MARKER.sub(down, text)

    def clear(self) -> None:
        self._pastes.clear()
