"""Listing resource directories as Pi does: sorted entries, dot files and ``node_modules``
skipped, symbolic links followed, ``.gitignore``/``.ignore``/``.fdignore`` honoured."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

IGNORE_FILES = (".gitignore", ".ignore", ".fdignore")


@dataclass
class IgnoreRules:
    """The ignore patterns met so far under ``root``, each prefixed with its folder."""

    root: str
    lines: list[str] = field(default_factory=list)
    _spec: pathspec.GitIgnoreSpec | None = None

    def add_folder(self, directory: str) -> None:
        relative = os.path.relpath(directory, self.root)
        prefix = "" if relative == "." else relative.replace(os.sep, "/") + "/"
        for name in IGNORE_FILES:
            path = os.path.join(directory, name)
            if not os.path.exists(path):
                continue
            try:
                text = Path(path).read_text("utf-8", errors="replace")
            except OSError:
                continue
            for line in text.splitlines():
                pattern = _prefixed(line, prefix)
                if pattern is not None:
                    self.lines.append(pattern)
                    self._spec = None

    def ignores(self, relative: str) -> bool:
        if not self.lines:
            return False
        if self._spec is None:
            self._spec = pathspec.GitIgnoreSpec.from_lines(self.lines)
        return self._spec.match_file(relative)


def _prefixed(line: str, prefix: str) -> str | None:
    stripped = line.strip()
    if not stripped or (stripped.startswith("#") and not stripped.startswith("\\#")):
        return None
    pattern, negated = line, False
    if pattern.startswith("!"):
        negated, pattern = True, pattern[1:]
    elif pattern.startswith("\\!"):
        pattern = pattern[1:]
    pattern = pattern.removeprefix("/")
    prefixed = prefix + pattern
    return f"!{prefixed}" if negated else prefixed


@dataclass(frozen=True, slots=True)
class Entry:
    name: str
    path: str
    is_file: bool
    is_dir: bool


def entries(directory: str) -> list[Entry]:
    """The folder's entries in Pi's (byte) order; broken links are left out."""
    found: list[Entry] = []
    try:
        names = sorted(os.listdir(directory), key=lambda n: n.encode("utf-8", "surrogateescape"))
    except OSError:
        return found
    for name in names:
        path = os.path.join(directory, name)
        try:
            is_dir, is_file = os.path.isdir(path), os.path.isfile(path)
        except OSError:
            continue
        if os.path.islink(path) and not os.path.exists(path):
            continue
        found.append(Entry(name, path, is_file, is_dir))
    return found


def relative_posix(path: str, root: str) -> str:
    return os.path.relpath(path, root).replace(os.sep, "/")
