"""The entries of Pi's ``skills`` and ``prompts`` settings, read as Pi reads them.

An entry is a path (absolute, ``~``, or relative to the folder of the settings file: the
agent directory, or the project's ``.pi``) whose files are candidates, or a pattern
filtering them: a glob keeps only the files it matches, ``!glob`` drops those it matches,
``+path`` takes back one file or skill folder however it was dropped and ``-path`` drops one
whatever else says. A glob is tried on a file's path relative to that folder, on its name
and on its absolute path (for a ``SKILL.md``, on its folder's too); ``+``/``-`` compare the
exact relative or absolute path. The ``!``, ``+`` and ``-`` entries also filter the
resources found in Pi's standard places of the same settings file's scope.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from urllib.parse import unquote, urlparse

from ctxmodes.resources.globs import glob_matches

_PREFIXES = ("!", "+", "-")
SKILL_FILE = "SKILL.md"


def is_pattern(entry: str) -> bool:
    return entry.startswith(_PREFIXES) or "*" in entry or "?" in entry


def resolve_entry(entry: str, base_dir: str, home: str, *, trim: bool = True) -> str:
    """The absolute path ``entry`` names, as Pi resolves it against ``base_dir``."""
    text = entry.strip() if trim else entry
    if text == "~":
        text = home
    elif text.startswith("~/"):
        text = os.path.join(home, text[2:])
    elif text.startswith("file://"):
        text = unquote(urlparse(text).path)
    return os.path.normpath(os.path.join(base_dir, text))


def plain_paths(entries: Sequence[str], base_dir: str, home: str) -> list[str]:
    """The paths named by the entries that are not patterns."""
    return [resolve_entry(entry, base_dir, home) for entry in entries if not is_pattern(entry)]


def selected(files: Sequence[str], entries: Sequence[str], base_dir: str) -> set[str]:
    """The ``files`` that the pattern entries keep."""
    includes = [e for e in entries if is_pattern(e) and not e.startswith(_PREFIXES)]
    excludes = [e[1:] for e in entries if e.startswith("!")]
    forced_in = [e[1:] for e in entries if e.startswith("+")]
    forced_out = [e[1:] for e in entries if e.startswith("-")]
    kept = [f for f in files if not includes or _matches_glob(f, includes, base_dir)]
    kept = [f for f in kept if not _matches_glob(f, excludes, base_dir)]
    kept += [
        f for f in files if f not in kept and forced_in and _matches_exact(f, forced_in, base_dir)
    ]
    return {f for f in kept if not _matches_exact(f, forced_out, base_dir)}


def enabled_by_overrides(path: str, entries: Sequence[str], base_dir: str) -> bool:
    """Whether a resource found in a standard place survives the ``!``/``+``/``-`` entries."""
    excludes = [e[1:] for e in entries if e.startswith("!")]
    forced_in = [e[1:] for e in entries if e.startswith("+")]
    forced_out = [e[1:] for e in entries if e.startswith("-")]
    enabled = not _matches_glob(path, excludes, base_dir)
    if _matches_exact(path, forced_in, base_dir):
        enabled = True
    if _matches_exact(path, forced_out, base_dir):
        enabled = False
    return enabled


def _relative(path: str, base_dir: str) -> str:
    relative = os.path.relpath(path, base_dir)
    return "" if relative == "." else relative.replace(os.sep, "/")


def _spellings(path: str, base_dir: str, *, exact: bool) -> list[str]:
    """The spellings of ``path`` a pattern is tried on: relative and absolute, its name for
    a glob, and the same for a ``SKILL.md``'s folder."""
    spellings = [_relative(path, base_dir), path.replace(os.sep, "/")]
    if not exact:
        spellings.append(os.path.basename(path))
    if os.path.basename(path) == SKILL_FILE:
        folder = os.path.dirname(path)
        spellings += [_relative(folder, base_dir), folder.replace(os.sep, "/")]
        if not exact:
            spellings.append(os.path.basename(folder))
    return spellings


def _matches_glob(path: str, patterns: Sequence[str], base_dir: str) -> bool:
    if not patterns:
        return False
    spellings = _spellings(path, base_dir, exact=False)
    return any(
        glob_matches(spelling, pattern.replace(os.sep, "/"))
        for pattern in patterns
        for spelling in spellings
    )


def _matches_exact(path: str, patterns: Sequence[str], base_dir: str) -> bool:
    if not patterns:
        return False
    spellings = _spellings(path, base_dir, exact=True)
    return any(_exact(pattern) in spellings for pattern in patterns)


def _exact(pattern: str) -> str:
    return pattern.removeprefix("./").replace(os.sep, "/")
