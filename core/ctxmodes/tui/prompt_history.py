"""The prompts sent, kept across runs in the state directory's ``prompt-history`` file.

A history that cannot be kept is no reason to refuse a session: when the file's folder
cannot be made, or the file cannot be read or written (a full disk, a folder that is a file),
the prompts of this run are kept in memory, and the session says so once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from prompt_toolkit.history import FileHistory

__all__ = ["PromptHistory"]


class PromptHistory(FileHistory):
    """prompt_toolkit's file history that keeps working in memory when its file fails.

    :ivar problem: what went wrong with the file, ``None`` while it works.
    :ivar on_problem: called once, with :attr:`problem`, when the file fails once it is
        set (from the thread that read or wrote it); a problem before is for the caller to
        show.
    """

    def __init__(self, path: Path) -> None:
        super().__init__(str(path))
        self.problem: str | None = None
        self.on_problem: Callable[[str], None] | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self._failed(exc)

    def load_history_strings(self) -> Iterable[str]:
        if self.problem is not None:
            return []
        try:
            return list(super().load_history_strings())
        except OSError as exc:
            self._failed(exc)
            return []

    def store_string(self, string: str) -> None:
        if self.problem is not None:
            return
        try:
            super().store_string(string)
        except OSError as exc:
            self._failed(exc)

    def _failed(self, exc: OSError) -> None:
        self.problem = (
            f"Prompt history not saved to {self.filename!s}: {exc.strerror or exc}; "
            "this run's prompts are kept until it ends"
        )
        if self.on_problem is not None:
            self.on_problem(self.problem)
