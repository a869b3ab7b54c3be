"""Loading every resource of one working directory, in Pi's order and precedence."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ctxmodes.resources.candidates import (
    Candidates,
    Scope,
    Scopes,
    skill_candidates,
    template_candidates,
)
from ctxmodes.resources.context_files import ContextFile, load_context_files
from ctxmodes.resources.entries import resolve_entry
from ctxmodes.resources.settings_entries import settings_entries
from ctxmodes.resources.skills import Skill, expand_skill_command, load_skills
from ctxmodes.resources.sources import ResourceSource
from ctxmodes.resources.templates import (
    PromptTemplate,
    expand_template,
    load_templates,
    markdown_files_in,
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
    """What the command line asked for: what it turned off (Pi's ``--no-context-files``,
    ``--no-skills``, ``--no-prompt-templates``) and the skill and template files or folders
    it added (Pi's ``--skill`` and ``--prompt-template``; a relative path is taken from the
    working directory). Added paths load even when their kind is turned off, as in Pi."""

    context_files: bool = True
    skills: bool = True
    prompt_templates: bool = True
    skill_paths: tuple[str, ...] = ()
    prompt_template_paths: tuple[str, ...] = ()
    #: Pi's ``--system-prompt``: text, or a file (from the process's directory) whose text
    #: replaces the built-in prompt, in place of ``SYSTEM.md``.
    system_prompt: str | None = None
    #: Pi's ``--append-system-prompt`` (each a text or a file), in place of
    #: ``APPEND_SYSTEM.md``; ``None``: that file.
    append_system_prompt: tuple[str, ...] | None = None


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
    if flags.system_prompt is not None:
        system_path, system_text = _prompt_input(flags.system_prompt, unreadable)
    else:
        system_path, system_text = _prompt_file(config, agent, "SYSTEM.md", trusted, unreadable)
    if flags.append_system_prompt is not None:
        appended = [_prompt_input(given, unreadable) for given in flags.append_system_prompt]
    else:
        appended = [_prompt_file(config, agent, "APPEND_SYSTEM.md", trusted, unreadable)]
    scopes = _scopes(project, agent, home_dir, trusted)
    extra_templates = [resolve_entry(p, project, home_dir) for p in flags.prompt_template_paths]
    found = template_candidates(scopes, standard=flags.prompt_templates, extra=extra_templates)
    templates, template_warnings = load_templates(_template_files(found.paths))
    templates = [replace(t, source=_source(found, t.file_path)) for t in templates]
    template_warnings += _missing_templates(extra_templates)
    extra_skills = [resolve_entry(p, project, home_dir) for p in flags.skill_paths]
    found = skill_candidates(scopes, standard=flags.skills, extra=extra_skills)
    skills, skill_warnings = load_skills(found.paths)
    skills = [replace(skill, source=_source(found, skill.file_path)) for skill in skills]
    return LoadedResources(
        trusted=trusted,
        context_files=tuple(context),
        system_prompt=system_text,
        system_prompt_path=system_path,
        append_system_prompt=tuple(text for _, text in appended if text is not None),
        append_system_prompt_paths=tuple(path for path, _ in appended if path),
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


def _prompt_input(given: str, unreadable: list[str]) -> tuple[str | None, str | None]:
    """What Pi makes of a prompt given on its command line: the text of the file it names
    when one exists there (its path too), else the text itself (also when the file cannot be
    read, with a warning, as in Pi)."""
    if not given:
        return None, None
    if not os.path.exists(given):
        return None, given
    path = resolve_path(given)
    try:
        return path, read_text(path)
    except OSError as exc:
        unreadable.append(f"Could not read {path}: {exc.strerror or exc}")
        return None, given


def _scopes(project: str, agent: str, home: str, trusted: bool) -> Scopes:
    """The scopes whose ``skills``/``prompts`` settings apply in ``project``.

    :raises ConfigError: a settings file is not JSON or its entries are not strings."""
    user = Scope(agent, settings_entries(Path(agent) / "settings.json"))
    config = os.path.join(project, CONFIG_DIR)
    own = Scope(config, settings_entries(Path(config) / "settings.json")) if trusted else None
    return Scopes(cwd=project, home=home, user=user, project=own)


def _template_files(candidates: list[str]) -> list[str]:
    """The template files of ``candidates``: a folder (given on the command line) stands for
    the Markdown files directly inside it; anything else not a Markdown file is passed over,
    as in Pi."""
    files: list[str] = []
    for path in candidates:
        if os.path.isdir(path):
            files += markdown_files_in(path)
        elif os.path.isfile(path) and path.endswith(".md"):
            files.append(path)
    return files


def _source(found: Candidates, path: str) -> ResourceSource:
    """Where the loaded file ``path`` came from: a settings entry or standard place, else
    the command line."""
    return found.sources.get(path) or ResourceSource.given(path)


def _missing_templates(extra: list[str]) -> list[str]:
    missing = dict.fromkeys(path for path in extra if not os.path.exists(path))
    return [f"{path}: Prompt template path does not exist" for path in missing]


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
    skill_paths: Sequence[str] = (),
    prompt_template_paths: Sequence[str] = (),
) -> ResourceLoader:
    """Pi's loader for Pi's agent directory: ``approve`` is ``--approve``/``--no-approve``,
    ``ask`` how to ask the user (``None``: nobody to ask), and the global settings'
    ``defaultProjectTrust`` applies. ``trust``, when given, is the run's decision already
    shared with its settings (``approve`` and ``ask`` are then its own). ``skill_paths`` and
    ``prompt_template_paths`` add skill and template files or folders, as Pi's ``--skill``
    and ``--prompt-template`` do (a relative path is taken from the session's working
    directory).

    :raises ConfigError: the global ``settings.json`` is not valid JSON.
    """
    directory = agent_dir if agent_dir is not None else paths.agent_dir()
    if trust is None:
        trust = default_resolver(approve=approve, ask=ask, agent_dir=directory)
    flags = replace(
        flags,
        skill_paths=(*flags.skill_paths, *skill_paths),
        prompt_template_paths=(*flags.prompt_template_paths, *prompt_template_paths),
    )
    return ResourceLoader(directory, trust, flags)
