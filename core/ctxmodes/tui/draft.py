"""The editor's buffer, whose Ctrl+G opens the draft in the configured external editor."""

from __future__ import annotations

import shlex
import subprocess
from typing import Any

from prompt_toolkit.buffer import Buffer


class DraftBuffer(Buffer):
    """A :class:`~prompt_toolkit.buffer.Buffer` that edits its text in ``editor`` (a
    command line, Pi's ``externalEditor``: ``"code --wait"``), which as in Pi comes before
    ``$VISUAL`` and ``$EDITOR``; without one, prompt_toolkit's choice (``$VISUAL``,
    ``$EDITOR``, then the first of ``editor``, ``nano``, ``pico``, ``vi``, ``emacs``)."""

    def __init__(self, editor: str | None, **options: Any) -> None:
        super().__init__(**options)
        self.editor = editor

    def _open_file_in_editor(self, filename: str) -> bool:
        if self.editor is None or not self.editor.strip():  # blank: as unset, as in Pi
            return super()._open_file_in_editor(filename)
        try:
            return subprocess.call([*shlex.split(self.editor), filename]) == 0
        except (OSError, ValueError):  # not found, or not a command line shlex can split
            return False
