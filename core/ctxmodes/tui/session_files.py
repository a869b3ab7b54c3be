"""What the session pickers do to a session file besides opening it, as Pi's picker does:
name it (one ``session_info`` entry appended, nothing else of the file touched) and delete
it (to the trash with the ``trash`` command when there is one, else for good)."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from ctxmodes.errors import CtxmodesError

#: A ``trash`` command that has not finished by then is taken as failed (the file is then
#: removed for good), so that a stuck one cannot freeze the picker.
TRASH_SECONDS: Final = 30.0


def name_session_file(path: Path, name: str) -> None:
    """Append the ``session_info`` entry Pi's picker appends, naming the session of ``path``.

    Never for the session being run: its name goes through the live session, whose writer
    holds the file (another ctxmodes writing ``path`` has it locked, and this is refused).

    :raises CtxmodesError: the file is gone, locked, or cannot take an append.
    :raises OSError: the file cannot be opened for appending.
    """
    from ctxmodes.session.manager import SessionManager

    # Opening a missing file would start a new session there, written only at its first
    # message: the name would vanish without a word.
    if not path.is_file():
        raise CtxmodesError(f"no such session file: {path}")
    with SessionManager.open(path, preload=False) as manager:
        manager.append_session_info(name)


@dataclass(frozen=True, slots=True)
class Deletion:
    """How a deletion went: by ``trash`` or for good; ``error`` when the file remains."""

    method: Literal["trash", "unlink"]
    error: str | None = None

    @property
    def message(self) -> str:
        """What the picker says, in Pi's words."""
        if self.error is not None:
            return f"Failed to delete: {self.error}"
        return "Session moved to trash" if self.method == "trash" else "Session deleted"


def delete_session_file(path: Path) -> Deletion:
    """Delete ``path`` as Pi does: ``trash PATH`` first, when ``trash`` is on ``PATH``; the
    file gone afterwards counts as done, whatever it answered. Otherwise the file is
    removed; a failure says why, with what ``trash`` said."""
    trash_problem: str | None = None
    trash = shutil.which("trash")
    if trash is not None:
        trash_problem = _run_trash(trash, path)
        if trash_problem is None or not path.exists():
            return Deletion("trash")
    try:
        path.unlink()
    except FileNotFoundError:
        pass  # gone meanwhile: what was asked for
    except OSError as error:
        reason = error.strerror or str(error)
        return Deletion("unlink", f"{reason} (trash: {trash_problem})" if trash_problem else reason)
    return Deletion("unlink")


def _run_trash(trash: str, path: Path) -> str | None:
    """Run ``trash`` on ``path``; ``None`` when it succeeded, else a line saying why not."""
    text = str(path)
    arguments = ["--", text] if text.startswith("-") else [text]
    try:
        # Not the terminal's input: the picker holds it in raw mode.
        result = subprocess.run(
            [trash, *arguments],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=TRASH_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return str(error)[:200]
    if result.returncode == 0:
        return None
    first_line = next(iter(result.stderr.strip().splitlines()), "")
    return (first_line or f"exit status {result.returncode}")[:200]
