"""The system prompt of the agent: who it is and its tools (or the user's ``SYSTEM.md``
instead), then, in Pi's order and wrapping, ``APPEND_SYSTEM.md``, the context files, the
skills and the working directory.

Only files the user or the opened project holds reach it (see :mod:`ctxmodes.resources`);
nothing a model or a tool writes does.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ctxmodes.own_documentation import Documentation, own_documentation
from ctxmodes.resources import LoadedResources
from ctxmodes.resources.skills import format_skills_for_prompt
from ctxmodes.tools.base import Tool

_INTRODUCTION = (
    "You are a coding agent working in the user's project. Read before you change, make the "
    "smallest change that does the job, and say briefly what you did. Use the tools below to "
    "inspect files, edit them and run commands; a tool call's result is the only reliable "
    "account of what happened."
)
_NO_RESOURCES = LoadedResources()


def build_system_prompt(
    tools: Sequence[Tool], cwd: Path, resources: LoadedResources = _NO_RESOURCES
) -> str:
    """The prompt for a session offering ``tools`` in working directory ``cwd``."""
    custom = resources.system_prompt
    prompt = custom if custom else _built_in(tools)
    appended = "\n\n".join(resources.append_system_prompt)
    if appended:
        prompt += f"\n\n{appended}"
    if resources.context_files:
        prompt += "\n\n<project_context>\n\nProject-specific instructions and guidelines:\n\n"
        for context in resources.context_files:
            prompt += (
                f'<project_instructions path="{context.path}">\n{context.content}\n'
                "</project_instructions>\n\n"
            )
        prompt += "</project_context>\n"
    names = [tool.name for tool in tools]
    read_tool = next((name for name in ("read", "bash") if name in names), None)
    if read_tool is not None and resources.skills:
        prompt += format_skills_for_prompt(resources.skills, read_tool)
    prompt += f"\nCurrent working directory: {_posix(cwd)}"
    return prompt + "\n" if custom else prompt


def _built_in(tools: Sequence[Tool]) -> str:
    lines = [_INTRODUCTION, ""]
    if tools:
        lines.append("Tools:")
        lines.extend(f"- {tool.name}: {_first_line(tool.description)}" for tool in tools)
        shells = [tool.name for tool in tools if _exposes_session_environment(tool)]
        if shells:
            lines.extend(["", _session_variables_note(shells)])
    else:
        lines.append("No tools are available in this session.")
    documentation = own_documentation()
    if documentation is not None and tools:
        lines.extend(["", _documentation_note(documentation)])
    return "\n".join(lines) + "\n"


def _documentation_note(documentation: Documentation) -> str:
    """Where the model finds how ctxmodes works, for a user who asks about it."""
    return (
        "You run inside ctxmodes, a context-management layer over the Pi coding agent's "
        "sessions. Only when the user asks about ctxmodes itself (its context modes, "
        "commands, keys, settings, models and logins, plugins, or `ctxmodes serve`), read "
        "its documentation before answering:\n"
        f"- Overview: {_posix(documentation.readme)}\n"
        f"- Pages: {_posix(documentation.pages)} (getting-started.md for every command, "
        "modes/ for each context mode, terminal.md for keys and slash commands, "
        "configuration.md for settings, models.md for providers and logins, "
        "writing-a-mode.md and example-mode/ for plugins, service.md for the service)\n"
        "- A link in those pages is relative to the page that holds it, never to the "
        "working directory; follow the links a question needs."
    )


def _posix(path: Path) -> str:
    return str(path).replace(chr(92), "/")


def _exposes_session_environment(tool: Tool) -> bool:
    return bool(getattr(tool, "exposes_session_environment", False))


def _session_variables_note(shells: Sequence[str]) -> str:
    """Where the model learns which model, reasoning level and session it runs in: the
    variables say it exactly, where the model's own guess may be wrong."""
    names = " and ".join(f"`{name}`" for name in shells)
    return (
        f"Commands run with {names} see the current session in their environment: "
        "PI_PROVIDER and PI_MODEL name the model answering you, PI_REASONING_LEVEL its "
        "reasoning level, PI_SESSION_ID and PI_SESSION_FILE this session. Read them when "
        "asked about any of these rather than guessing."
    )


def _first_line(text: str) -> str:
    return text.strip().split("\n", 1)[0]
