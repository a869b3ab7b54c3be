"""The git branch the footer names after the folder, found and kept current as Pi finds it.

Internal to ctxmodes: not part of the API; it may change in any release.

The checkout is the one the session's folder is in
(:func:`~ctxmodes.resources.git_checkout.find_git_paths`). The branch is read from its
``HEAD`` itself, without running git: ``ref: refs/heads/NAME`` is on ``NAME``, anything else
is ``detached``. A reftable repository keeps ``HEAD`` as ``ref: refs/heads/.invalid``; only
then is git asked (``git symbolic-ref``), as Pi asks it.

Pi watches the folder of ``HEAD`` and reads the branch again once it changes; here the
session looks at ``HEAD`` (and reftable's ``tables.list``) every
:data:`CHECK_INTERVAL_S` seconds, a ``stat`` each, and reads it again when either changed.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Final

from ctxmodes.resources.git_checkout import GitPaths, find_git_paths, small_text

#: How often the session looks whether the branch changed (Pi reads it again 500 ms after
#: its watcher sees a change).
CHECK_INTERVAL_S: Final = 0.5
#: How long git may take to name the branch of a reftable repository.
GIT_TIMEOUT_S: Final = 2.0
_BRANCH_REF: Final = "ref: refs/heads/"


def read_branch(paths: GitPaths | None) -> str | None:
    """The branch checked out, ``detached`` off any branch, ``None`` when it cannot be read."""
    if paths is None:
        return None
    try:
        head = small_text(paths.head)
    except (OSError, UnicodeDecodeError):
        return None
    if not head.startswith(_BRANCH_REF):
        return "detached"
    branch = head[len(_BRANCH_REF) :]
    if branch != ".invalid":
        return branch
    return _ask_git(paths.repo_dir) or "detached"


def _ask_git(repo_dir: Path) -> str | None:
    """The branch as git names it (a reftable repository), ``None`` if git cannot say."""
    try:
        done = subprocess.run(
            ["git", "--no-optional-locks", "symbolic-ref", "--quiet", "--short", "HEAD"],
            cwd=repo_dir,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() or None


def _signature(path: Path) -> tuple[int, int, int] | None:
    try:
        found = path.stat()
    except OSError:
        return None
    return (found.st_ino, found.st_size, found.st_mtime_ns)


class GitBranch:
    """The branch of the checkout a folder is in, read again when it may have changed."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self._paths = find_git_paths(cwd)
        self._watched: tuple[Path, ...] = ()
        if self._paths is not None:
            tables = self._paths.common_git_dir / "reftable" / "tables.list"
            self._watched = (self._paths.head, tables)
        self._seen = self._signatures()
        self.name = read_branch(self._paths)

    def _signatures(self) -> tuple[tuple[int, int, int] | None, ...]:
        return tuple(_signature(path) for path in self._watched)

    def check(self) -> bool:
        """Read the branch again if ``HEAD`` changed since; whether the branch did."""
        seen = self._signatures()
        if seen == self._seen:
            return False
        self._seen = seen
        name = read_branch(self._paths)
        changed = name != self.name
        self.name = name
        return changed
