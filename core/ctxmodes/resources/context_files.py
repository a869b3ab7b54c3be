"""Context files: ``AGENTS.md`` (or ``CLAUDE.md``) of the agent directory and of every
directory from the filesystem root down to the working directory, as Pi collects them.

In each directory the first of :data:`CANDIDATES` that is a readable file is taken, so an
``AGENTS.override.md`` takes the directory's place. A linked git worktree nested inside its
main checkout would otherwise load the project's instructions twice (the main checkout's copy
is an ancestor of the worktree's): as in Pi, the main checkout's file is skipped then.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ctxmodes.resources.git_checkout import find_git_paths
from ctxmodes.resources.text import read_text
from ctxmodes.session.paths import resolve_path

CANDIDATES = ("AGENTS.override.md", "AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD")


@dataclass(frozen=True, slots=True)
class ContextFile:
    path: str
    content: str


def load_context_files(
    cwd: Path | str, agent_dir: Path | str, unreadable: list[str] | None = None
) -> list[ContextFile]:
    """The global file first, then the ancestors' from the outermost down to ``cwd``.

    A file that cannot be read is left out, as Pi leaves it out, and named in ``unreadable``
    (Pi prints the same words on the console; here the caller shows them, so that a program
    embedding ctxmodes gets no output it did not ask for)."""
    if unreadable is None:
        unreadable = []
    found: list[ContextFile] = []
    seen: set[str] = set()
    global_file = _file_in(resolve_path(agent_dir), unreadable)
    if global_file is not None:
        found.append(global_file)
        seen.add(global_file.path)
    start = resolve_path(cwd)
    shadowed = _shadowed_context_file(start)
    ancestors: list[ContextFile] = []
    directory = start
    while True:
        context = _file_in(directory, unreadable)
        is_shadowed = (
            shadowed is not None
            and context is not None
            and (os.path.realpath(context.path) == shadowed)
        )
        if context is not None and not is_shadowed and context.path not in seen:
            ancestors.insert(0, context)
            seen.add(context.path)
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return found + ancestors


def _file_in(directory: str, unreadable: list[str]) -> ContextFile | None:
    for name in CANDIDATES:
        path = os.path.join(directory, name)
        if not os.path.exists(path):
            continue
        try:
            if not os.path.isfile(path):
                continue
            return ContextFile(path, read_text(path))
        except OSError as exc:
            unreadable.append(f"Could not read {path}: {exc.strerror or exc}")
    return None


def _shadowed_context_file(cwd: str) -> str | None:
    """The main checkout's context file that a nested linked worktree's own one shadows
    (canonical path), if any."""
    paths = find_git_paths(Path(cwd))
    if paths is None:
        return None
    worktree_root = os.path.realpath(paths.repo_dir)
    common = os.path.realpath(paths.common_git_dir)
    main_root = os.path.dirname(common)
    if not worktree_root.startswith(main_root + os.sep):
        return None
    if os.path.realpath(os.path.join(main_root, ".git")) != common:
        return None
    # The walk from cwd passes the worktree's root too, and reports a file it cannot read.
    own = _file_in(worktree_root, [])
    return os.path.join(main_root, os.path.basename(own.path)) if own is not None else None
