"""Which skill and template files one working directory loads, in Pi's order of precedence.

Pi gathers them by rank: the trusted project's ``skills``/``prompts`` settings entries, the
project's standard places (``.pi/skills`` and ``.agents/skills`` up to the git root,
``.pi/prompts``), the global settings entries, the global standard places
(``<agent dir>/skills``, ``~/.agents/skills``, ``<agent dir>/prompts``), and last the paths
given on the command line. Among these a file counts once (links resolved), where it was
first met; a file dropped by a pattern there stays dropped. On a name collision the first
file wins, so a project's resources win over the user's and settings over standard places.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ctxmodes.resources.entries import enabled_by_overrides, plain_paths, selected
from ctxmodes.resources.settings_entries import SettingsEntries
from ctxmodes.resources.skills import skill_files
from ctxmodes.resources.sources import ResourceSource
from ctxmodes.resources.templates import markdown_files_under, template_files

#: Pi's ranks: a project's settings entries, its standard places, the user's entries, theirs.
_PROJECT_ENTRIES, _PROJECT_PLACES, _USER_ENTRIES, _USER_PLACES = range(4)


_PROJECT_ENTRY = ResourceSource("local", "project")
_USER_ENTRY = ResourceSource("local", "user")


@dataclass(frozen=True, slots=True)
class Candidates:
    """The files and folders to load, in order, and the source of each file met in the
    settings or standard places, loaded or not (the others were given on the command
    line)."""

    paths: list[str]
    sources: dict[str, ResourceSource]


@dataclass(frozen=True, slots=True)
class Scope:
    """One settings file's scope: its folder (the agent directory, or a project's ``.pi``),
    against which its entries are resolved, and those entries."""

    folder: str
    entries: SettingsEntries


@dataclass(frozen=True, slots=True)
class Scopes:
    """The scopes that apply in ``cwd``: the user's, and the project's when it is trusted."""

    cwd: str
    home: str
    user: Scope
    project: Scope | None


@dataclass
class _Gathered:
    """Each file met, with its rank, whether it is enabled and its source, in the order
    met."""

    found: dict[str, tuple[int, bool, ResourceSource]] = field(default_factory=dict)

    def add(self, path: str, rank: int, enabled: bool, source: ResourceSource) -> None:
        self.found.setdefault(path, (rank, enabled, source))

    def add_entries(
        self,
        entries: Sequence[str],
        rank: int,
        base_dir: str,
        home: str,
        files_of: Callable[[str], list[str]],
    ) -> None:
        files = [
            found
            for path in plain_paths(entries, base_dir, home)
            for found in _files_at(path, files_of)
        ]
        kept = selected(files, entries, base_dir)
        source = _PROJECT_ENTRY if rank == _PROJECT_ENTRIES else _USER_ENTRY
        for path in files:
            self.add(path, rank, path in kept, source)

    def add_found(
        self, paths: Sequence[str], rank: int, entries: Sequence[str], base_dir: str
    ) -> None:
        """Files of a standard place; ``base_dir`` is the folder it is in, against which
        the scope's entries are matched."""
        scope = "project" if rank == _PROJECT_PLACES else "user"
        source = ResourceSource("auto", scope, base_dir)
        for path in paths:
            self.add(path, rank, enabled_by_overrides(path, entries, base_dir), source)

    def candidates(self, extra: Sequence[str]) -> Candidates:
        """The enabled files by rank, then the ``extra`` paths, each file once."""
        ranked = sorted(self.found.items(), key=lambda item: item[1][0])
        first_met = set(_first_of_each_file([path for path, _ in ranked]))
        enabled = [path for path, (_r, on, _s) in ranked if path in first_met and on]
        # A file a pattern dropped keeps its source when the command line names it again,
        # as Pi keeps the metadata of every file it met.
        sources = {path: source for path, (_r, _on, source) in self.found.items()}
        return Candidates(_first_of_each_file([*enabled, *extra]), sources)


def _files_at(path: str, files_of: Callable[[str], list[str]]) -> list[str]:
    """A settings entry's files: the file it names, or those found in the folder; none
    (and no warning, as in Pi) when nothing is there."""
    if os.path.isfile(path):
        return [path]
    if os.path.isdir(path):
        return files_of(path)
    return []


def _first_of_each_file(paths: Sequence[str]) -> list[str]:
    """``paths`` without those that are, links resolved, a file met before."""
    seen: set[str] = set()
    kept: list[str] = []
    for path in paths:
        canonical = os.path.realpath(path)
        if canonical not in seen:
            seen.add(canonical)
            kept.append(path)
    return kept


def skill_candidates(scopes: Scopes, *, standard: bool, extra: Sequence[str]) -> Candidates:
    """The skill files and folders to load: with ``standard`` those of the settings and the
    standard places, then the ``extra`` paths (absolute) of the command line."""
    if not standard:
        return Candidates(_first_of_each_file(extra), {})
    gathered = _Gathered()
    project, user, home = scopes.project, scopes.user, scopes.home
    home_skills = os.path.join(home, ".agents", "skills")
    if project is not None:
        gathered.add_entries(
            project.entries.skills, _PROJECT_ENTRIES, project.folder, home, _skill_files_in
        )
    gathered.add_entries(user.entries.skills, _USER_ENTRIES, user.folder, home, _skill_files_in)
    if project is not None:
        found = skill_files(os.path.join(project.folder, "skills"), "pi")
        gathered.add_found(found, _PROJECT_PLACES, project.entries.skills, project.folder)
        for folder in _ancestor_agents_skill_dirs(scopes.cwd):
            if folder != home_skills:
                found = skill_files(folder, "agents")
                base = os.path.dirname(folder)
                gathered.add_found(found, _PROJECT_PLACES, project.entries.skills, base)
    found = skill_files(os.path.join(user.folder, "skills"), "pi")
    gathered.add_found(found, _USER_PLACES, user.entries.skills, user.folder)
    found = skill_files(home_skills, "agents")
    gathered.add_found(found, _USER_PLACES, user.entries.skills, os.path.dirname(home_skills))
    return gathered.candidates(extra)


def template_candidates(scopes: Scopes, *, standard: bool, extra: Sequence[str]) -> Candidates:
    """The template files (and, from the command line, folders) to load, as
    :func:`skill_candidates` gathers skills."""
    if not standard:
        return Candidates(_first_of_each_file(extra), {})
    gathered = _Gathered()
    project, user, home = scopes.project, scopes.user, scopes.home
    if project is not None:
        gathered.add_entries(
            project.entries.prompts, _PROJECT_ENTRIES, project.folder, home, markdown_files_under
        )
    gathered.add_entries(
        user.entries.prompts, _USER_ENTRIES, user.folder, home, markdown_files_under
    )
    if project is not None:
        found = template_files(os.path.join(project.folder, "prompts"))
        gathered.add_found(found, _PROJECT_PLACES, project.entries.prompts, project.folder)
    found = template_files(os.path.join(user.folder, "prompts"))
    gathered.add_found(found, _USER_PLACES, user.entries.prompts, user.folder)
    return gathered.candidates(extra)


def _skill_files_in(folder: str) -> list[str]:
    return skill_files(folder, "pi")


def _ancestor_agents_skill_dirs(start: str) -> list[str]:
    """``.agents/skills`` of ``start`` and its ancestors, up to the git checkout's root."""
    root = _git_root(start)
    folders: list[str] = []
    directory = start
    while True:
        folders.append(os.path.join(directory, ".agents", "skills"))
        parent = os.path.dirname(directory)
        if directory == root or parent == directory:
            return folders
        directory = parent


def _git_root(start: str) -> str | None:
    directory = start
    while True:
        if os.path.exists(os.path.join(directory, ".git")):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent
