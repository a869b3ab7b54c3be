"""Loading every resource of one working directory, in Pi's order and precedence."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

from ctxmodes.resources.context_files import ContextFile, load_context_files
from ctxmodes.resources.skills import Skill, expand_skill_command, load_skills, skill_files
from ctxmodes.resources.templates import (
    PromptTemplate,
    expand_template,
    load_templates,
    template_files,
)
from ctxmodes.resources.text import read_text
from ctxmodes.resources.trust import (
    CONFIG_DIR,
    AskTrust,
    TrustResolver,
    default_resolver,
)
from ctxmodes.session import paths
from ctxmodes.session.paths import resolve_path


@dataclass(frozen=True, slots=True)
class ResourceFlags:
    """What the command line turned off (Pi's ``--no-context-files``, ``--no-skills``,
    ``--no-prompt-templates``)."""

    context_files: bool = True
    skills: bool = True
    prompt_templates: bool = True


@dataclass(frozen=True, slots=True)
class LoadedResources:
    """What one working directory contributes to the agent.

    :ivar trusted: whether the project's own resources were loaded.
    :ivar system_prompt: the text of ``SYSTEM.md``, replacing the built-in prompt.
    :ivar append_system_prompt: the texts of ``APPEND_SYSTEM.md``, appended to it.
    :ivar warnings: problems found while loading (each names its file).
    """

    trusted: bool = True
    context_files: tuple[ContextFile, ...] = ()
    system_prompt: str | None = None
    system_prompt_path: str | None = None
    append_system_prompt: tuple[str, ...] = ()
    append_system_prompt_paths: tuple[str, ...] = ()
    templates: tuple[PromptTemplate, ...] = ()
    skills: tuple[Skill, ...] = ()
    warnings: tuple[str, ...] = ()

    def expand(self, text: str) -> str:
        """What submitted text becomes: a ``/skill:name`` expanded, then a ``/template``."""
        return expand_template(expand_skill_command(text, self.skills), self.templates)


def load_resources(
    cwd: Path | str,
    agent_dir: Path | str,
    *,
    trusted: bool,
    flags: ResourceFlags = ResourceFlags(),
    home: Path | str | None = None,
) -> LoadedResources:
    """Everything ``cwd`` contributes; the project's own files only when ``trusted``."""
    project = resolve_path(cwd)
    agent = resolve_path(agent_dir)
    home_dir = resolve_path(home if home is not None else os.environ.get("HOME") or Path.home())
    config = os.path.join(project, CONFIG_DIR)
    unreadable: list[str] = []
    context = load_context_files(project, agent, unreadable) if flags.context_files else []
    system_path, system_text = _prompt_file(config, agent, "SYSTEM.md", trusted, unreadable)
    append_path, append_text = _prompt_file(config, agent, "APPEND_SYSTEM.md", trusted, unreadable)
    templates, template_warnings = (
        load_templates(_template_paths(config, agent, trusted))
        if flags.prompt_templates
        else ([], [])
    )
    skills, skill_warnings = (
        load_skills(_skill_paths(project, config, agent, home_dir, trusted))
        if flags.skills
        else ([], [])
    )
    return LoadedResources(
        trusted=trusted,
        context_files=tuple(context),
        system_prompt=system_text,
        system_prompt_path=system_path,
        append_system_prompt=(append_text,) if append_text is not None else (),
        append_system_prompt_paths=(append_path,) if append_path else (),
        templates=tuple(templates),
        skills=tuple(skills),
        warnings=tuple(unreadable + template_warnings + skill_warnings),
    )


def _prompt_file(
    config: str, agent: str, name: str, trusted: bool, unreadable: list[str]
) -> tuple[str | None, str | None]:
    """The path and text of the project's ``name`` (when ``trusted``), else the agent
    directory's; one that cannot be read is left out with a warning."""
    candidates = ([os.path.join(config, name)] if trusted else []) + [os.path.join(agent, name)]
    path = next((path for path in candidates if os.path.exists(path)), None)
    if path is None:
        return None, None
    try:
        return path, read_text(path)
    except OSError as exc:
        unreadable.append(f"Could not read {path}: {exc.strerror or exc}")
        return None, None


def _template_paths(config: str, agent: str, trusted: bool) -> list[str]:
    project = template_files(os.path.join(config, "prompts")) if trusted else []
    return _unique(project + template_files(os.path.join(agent, "prompts")))


def _skill_paths(project: str, config: str, agent: str, home: str, trusted: bool) -> list[str]:
    user_agents = os.path.join(home, ".agents", "skills")
    paths: list[str] = []
    if trusted:
        paths += skill_files(os.path.join(config, "skills"), "pi")
        for folder in _ancestor_agents_skill_dirs(project):
            if folder != user_agents:
                paths += skill_files(folder, "agents")
    paths += skill_files(os.path.join(agent, "skills"), "pi")
    paths += skill_files(user_agents, "agents")
    return _unique(paths)


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


def _unique(paths: list[str]) -> list[str]:
    seen: set[str] = set()
    kept: list[str] = []
    for path in paths:
        canonical = os.path.realpath(path)
        if canonical not in seen:
            seen.add(canonical)
            kept.append(path)
    return kept


@dataclass
class ResourceLoader:
    """Loads the resources of each session's working directory, deciding trust once per
    directory (see :class:`~ctxmodes.resources.trust.TrustResolver`)."""

    agent_dir: Path
    trust: TrustResolver
    flags: ResourceFlags = ResourceFlags()

    def load(self, cwd: Path | str) -> LoadedResources:
        loaded = load_resources(
            cwd, self.agent_dir, trusted=self.trust.is_trusted(cwd), flags=self.flags
        )
        if not self.trust.problems:
            return loaded
        return replace(loaded, warnings=(*self.trust.problems, *loaded.warnings))


def default_loader(
    *,
    approve: bool | None = None,
    flags: ResourceFlags = ResourceFlags(),
    ask: AskTrust | None = None,
    agent_dir: Path | None = None,
    trust: TrustResolver | None = None,
) -> ResourceLoader:
    """Pi's loader for Pi's agent directory: ``approve`` is ``--approve``/``--no-approve``,
    ``ask`` how to ask the user (``None``: nobody to ask), and the global settings'
    ``defaultProjectTrust`` applies. ``trust``, when given, is the run's decision already
    shared with its settings (``approve`` and ``ask`` are then its own).

    :raises ConfigError: the global ``settings.json`` is not valid JSON.
    """
    directory = agent_dir if agent_dir is not None else paths.agent_dir()
    if trust is None:
        trust = default_resolver(approve=approve, ask=ask, agent_dir=directory)
    return ResourceLoader(directory, trust, flags)
