"""The git checkout a folder is in, found as Pi finds it (its ``findGitPaths``): the folder's
context files and the footer's branch are read from it.

Internal to ctxmodes: not part of the API; it may change in any release.

The walk goes up from the folder to the first ``.git`` that is a folder, or a file saying
``gitdir: PATH`` (a linked worktree or a submodule, whose ``commondir`` names the
repository's own folder); a ``.git`` file saying anything else is passed by, as Pi passes it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final

_GITDIR: Final = "gitdir: "
#: The most of a file of git's read: its files named here hold one line.
_MOST_BYTES: Final = 4096


@dataclass(frozen=True, slots=True)
class GitPaths:
    """A checkout: where it is, its repository's folder and the ``HEAD`` naming its branch."""

    #: The folder holding ``.git`` (where git is run).
    repo_dir: Path
    #: The repository's own folder (a worktree's shared one).
    common_git_dir: Path
    head: Path


def find_git_paths(cwd: Path) -> GitPaths | None:
    """The checkout ``cwd`` is in, or ``None`` (not in one, or one without a ``HEAD``)."""
    folder = Path(os.path.abspath(cwd))
    while True:
        dot_git = folder / ".git"
        try:
            if dot_git.is_dir():
                head = dot_git / "HEAD"
                return GitPaths(folder, dot_git, head) if head.exists() else None
            if dot_git.is_file():
                content = small_text(dot_git)
                if content.startswith(_GITDIR):
                    git_dir = Path(os.path.normpath(folder / content[len(_GITDIR) :].strip()))
                    head = git_dir / "HEAD"
                    if not head.exists():
                        return None
                    common = git_dir / "commondir"
                    common_dir = (
                        Path(os.path.normpath(git_dir / small_text(common)))
                        if common.exists()
                        else git_dir
                    )
                    return GitPaths(folder, common_dir, head)
        except (OSError, UnicodeDecodeError):
            return None
        if folder.parent == folder:
            return None
        folder = folder.parent


def small_text(path: Path) -> str:
    """The text of a file git keeps a line in, stripped: only a regular file (a pipe put
    there would never answer) and only its start (git's own are a line).

    :raises OSError: not a regular file, or unreadable.
    :raises UnicodeDecodeError: not UTF-8.
    """
    if not path.is_file():
        raise OSError(f"{path} is not a regular file")
    with path.open("rb") as file:
        return file.read(_MOST_BYTES).decode("utf-8").strip()
