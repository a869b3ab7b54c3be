"""Pi's own bash tool on a list of calls, through the ``pi_node`` fixture of the tools'
tests (the real Pi 0.85.0 in Node)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

#: Runs each call of ``input.calls`` through Pi's bash tool made with ``input.settings``
#: (``{commandPrefix, shellPath}``, or none): each answer, or the message it threw.
PI_BASH_CALLS = (
    "const tool = mod.createBashToolDefinition(input.cwd, input.settings);\n"
    "const out = [];\n"
    "for (const call of input.calls) {\n"
    "  try { out.push({ok: await tool.execute('id', call)}); }\n"
    "  catch (e) { out.push({error: e.message}); }\n"
    "}\n"
    "process.stdout.write(JSON.stringify(out));\n"
)


def pi_bash(
    pi_node: Callable[[str, str, Any], Any],
    cwd: Path,
    calls: list[dict[str, Any]],
    settings: dict[str, Any] | None = None,
) -> Any:
    """What Pi's bash tool answers to ``calls`` in ``cwd``."""
    payload = {"cwd": str(cwd), "calls": calls, "settings": settings}
    return pi_node("core/tools/bash.js", PI_BASH_CALLS, payload)
