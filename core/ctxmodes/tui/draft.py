"""The editor's buffer, whose Ctrl+G opens the draft in the configured external editor and
whose undo also takes the large pastes back to what they were."""

from __future__ import annotations

import shlex
import subprocess
from typing import Any

from prompt_toolkit.buffer import Buffer
from prompt_toolkit.document import Document

from ctxmodes.tui.paste_markers import PasteMarkers, PastesKept


class DraftBuffer(Buffer):
    """A :class:`~prompt_toolkit.buffer.Buffer` that edits its text in ``editor`` (a
    command line, Pi's ``externalEditor``: ``"code --wait"``), which as in Pi comes before
    ``$VISUAL`` and ``$EDITOR``; without one, prompt_toolkit's choice (``$VISUAL``,
    ``$EDITOR``, then the first of ``editor``, ``nano``, ``pico``, ``vi``, ``emacs``).

    Each undo step also keeps the pastes the draft's markers stand for, as each of Pi's
    editor's does: an undone paste is forgotten, and a marker Backspace took comes back
    with its paste and the later markers' numbers."""

    def __init__(
        self, editor: str | None, pastes: PasteMarkers | None = None, **options: Any
    ) -> None:
        #: The pastes kept at each step of the undo and redo stacks, beside them.
        self._undo_pastes: list[PastesKept] = []
        self._redo_pastes: list[PastesKept] = []
        self.pastes = pastes if pastes is not None else PasteMarkers()
        super().__init__(**options)
        self.editor = editor

    def _aligned(self) -> None:
        """The pastes' steps as many as the text's (a reset empties the text's)."""
        stacks = ((self._undo_stack, self._undo_pastes), (self._redo_stack, self._redo_pastes))
        for steps, kept in stacks:
            del kept[len(steps) :]
            kept[:0] = [self.pastes.kept()] * (len(steps) - len(kept))

    def save_to_undo_stack(self, clear_redo_stack: bool = True) -> None:
        self._aligned()
        # prompt_toolkit's step for the same text only takes the new cursor: so do the pastes.
        if self._undo_pastes and self._undo_stack[-1][0] == self.text:
            self._undo_pastes.pop()
        super().save_to_undo_stack(clear_redo_stack)
        self._undo_pastes.append(self.pastes.kept())
        if clear_redo_stack:
            self._redo_pastes.clear()

    def undo(self) -> None:
        self._aligned()
        while self._undo_stack:
            text, cursor = self._undo_stack.pop()
            pastes = self._undo_pastes.pop()
            if text != self.text:
                self._redo_stack.append((self.text, self.cursor_position))
                self._redo_pastes.append(self.pastes.kept())
                self.document = Document(text, cursor)
                self.pastes.restore(pastes)
                return

    def redo(self) -> None:
        self._aligned()
        if self._redo_stack:
            self.save_to_undo_stack(clear_redo_stack=False)
            text, cursor = self._redo_stack.pop()
            pastes = self._redo_pastes.pop()
            self.document = Document(text, cursor)
            self.pastes.restore(pastes)

    def _open_file_in_editor(self, filename: str) -> bool:
        if self.editor is None or not self.editor.strip():  # blank: as unset, as in Pi
            return super()._open_file_in_editor(filename)
        try:
            return subprocess.call([*shlex.split(self.editor), filename]) == 0
        except (OSError, ValueError):  # not found, or not a command line shlex can split
            return False
