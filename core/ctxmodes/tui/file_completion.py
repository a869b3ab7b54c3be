"""``@`` in the editor: fuzzy completion of the project's files, as Pi's editor offers it.

The files are those git knows in the working directory (tracked, and untracked but not
ignored), or, outside a repository, a walk of the directory that leaves out hidden folders
and the usual dependency and build folders. The list is kept for a few seconds, so typing
does not list the project again at every key, and it stops at :data:`MAX_FILES`.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Final

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

MAX_FILES: Final = 20_000
SHOWN: Final = 50
LIST_SECONDS: Final = 10.0
_SKIPPED_FOLDERS: Final = frozenset(
    {"node_modules", "__pycache__", "venv", "dist", "build", "target"}
)


def project_files(root: Path) -> list[str]:
    """The project's files below ``root``, relative, ``/``-separated."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root,
            capture_output=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        listed = None
    if listed is not None and listed.returncode == 0:
        names = listed.stdout.decode("utf-8", "replace").split("\0")
        return [name for name in dict.fromkeys(names) if name][:MAX_FILES]
    found: list[str] = []
    for folder, folders, files in os.walk(root):
        folders[:] = sorted(
            name for name in folders if not name.startswith(".") and name not in _SKIPPED_FOLDERS
        )
        base = Path(folder).relative_to(root)
        for name in sorted(files):
            found.append((base / name).as_posix())
            if len(found) >= MAX_FILES:
                return found
    return found


def fuzzy_score(query: str, path: str) -> float | None:
    """How well ``path`` matches ``query`` (its characters in order, case-insensitively);
    ``None`` for no match. Matches in the file's name, in runs, and short paths rank
    first."""
    if not query:
        return -len(path) / 1000
    lowered = path.lower()
    name_start = lowered.rfind("/") + 1
    score = 0.0
    position = -1
    run = 0
    for char in query.lower():
        found = lowered.find(char, position + 1)
        if found < 0:
            return None
        run = run + 1 if found == position + 1 else 0
        score += 1 + run * 2 + (3 if found >= name_start else 0)
        position = found
    if query.lower() in lowered[name_start:]:
        score += 10
    return score - len(path) / 100


class FileCompleter(Completer):
    """Completes the word at the cursor when it starts with ``@`` to ``@<path>``."""

    def __init__(
        self, root: Callable[[], Path], clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._root = root
        self._clock = clock
        self._listed: tuple[Path, float, list[str]] | None = None

    def _files(self) -> list[str]:
        root = self._root()
        now = self._clock()
        if self._listed is None or self._listed[0] != root or now - self._listed[1] > LIST_SECONDS:
            self._listed = (root, now, project_files(root))
        return self._listed[2]

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        before = document.text_before_cursor
        word_start = max(before.rfind(" "), before.rfind("\n"), before.rfind("\t")) + 1
        word = before[word_start:]
        if not word.startswith("@"):
            return
        query = word[1:]
        ranked = sorted(
            (
                (score, path)
                for path in self._files()
                if (score := fuzzy_score(query, path)) is not None
            ),
            key=lambda pair: (-pair[0], pair[1]),
        )
        for _, path in ranked[:SHOWN]:
            yield Completion("@" + path, start_position=-len(word), display=path)
