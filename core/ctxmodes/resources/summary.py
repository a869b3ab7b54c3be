"""What the start-up header lists of the loaded resources, in Pi's sections: ``[Context]``
(``SYSTEM.md``, ``APPEND_SYSTEM.md``, then the context files, as paths relative to the
working directory or under ``~``), ``[Skills]`` and ``[Prompts]`` (sorted names)."""

from __future__ import annotations

import os
from pathlib import Path

from ctxmodes.resources.loader import LoadedResources
from ctxmodes.resources.trust import untrusted_notice

#: The sections of :func:`loaded_sections` that tell of a problem rather than list what
#: loaded: shown even where the list is not (Pi's ``quietStartup``).
DIAGNOSTIC_SECTIONS = frozenset({"Resource warnings", "Project"})


def loaded_sections(
    resources: LoadedResources, cwd: Path | str, home: Path | str | None = None
) -> list[tuple[str, str]]:
    """``(title, line)`` for each non-empty section, and a ``[Project]`` note when the
    project's own files were left out for want of trust."""
    home_dir = str(home) if home is not None else os.path.expanduser("~")
    context = [
        *([resources.system_prompt_path] if resources.system_prompt_path else []),
        *resources.append_system_prompt_paths,
        *(file.path for file in resources.context_files),
    ]
    sections: list[tuple[str, str]] = []
    if context:
        shown = [_context_path(path, str(cwd), home_dir) for path in context]
        sections.append(("Context", ", ".join(shown)))
    if resources.skills:
        sections.append(("Skills", ", ".join(sorted(s.name for s in resources.skills))))
    if resources.templates:
        names = sorted(f"/{template.name}" for template in resources.templates)
        sections.append(("Prompts", ", ".join(names)))
    if resources.warnings:
        sections.append(("Resource warnings", "; ".join(resources.warnings)))
    notice = untrusted_notice(cwd, resources.trusted)
    if notice is not None:
        sections.append(("Project", notice.removeprefix("Note: ")))
    return sections


def loaded_text(resources: LoadedResources, cwd: Path | str, *, quiet: bool) -> str:
    """The sections as the terminal prints them (``[Title]`` then its line, each on lines
    of their own); with ``quiet`` only :data:`DIAGNOSTIC_SECTIONS`."""
    return "".join(
        f"\n[{title}]\n  {line}"
        for title, line in loaded_sections(resources, cwd)
        if not quiet or title in DIAGNOSTIC_SECTIONS
    )


def _context_path(path: str, cwd: str, home: str) -> str:
    relative = os.path.relpath(path, cwd)
    if relative != ".." and not relative.startswith(".." + os.sep):
        return relative
    return "~" + path[len(home) :] if path.startswith(home) else path
