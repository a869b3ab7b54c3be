"""The system prompt of the agent: who it is, its tools, where it works."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ctxmodes.tools.base import Tool

_INTRODUCTION = (
    "You are a coding agent working in the user's project. Read before you change, make the "
    "smallest change that does the job, and say briefly what you did. Use the tools below to "
    "inspect files, edit them and run commands; a tool call's result is the only reliable "
    "account of what happened."
)


def build_system_prompt(tools: Sequence[Tool], cwd: Path) -> str:
    """The prompt for a session offering ``tools`` in working directory ``cwd``."""
    lines = [_INTRODUCTION, ""]
    if tools:
        lines.append("Tools:")
        lines.extend(f"- {tool.name}: {_first_line(tool.description)}" for tool in tools)
    else:
        lines.append("No tools are available in this session.")
    lines += ["", f"Current working directory: {cwd}"]
    return "\n".join(lines)


def _first_line(text: str) -> str:
    return text.strip().split("\n", 1)[0]
