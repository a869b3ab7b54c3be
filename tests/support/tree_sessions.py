"""Tree-mode session files made by the real host with the scripted model, for the export
tests and benchmarks: ``windows`` rollovers, each window writing a note and some Markdown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxmodes.providers.script import Script
from ctxmodes.providers.scripted import ScriptedProvider
from support.agents import make_agent


def tree_script(windows: int, reply: str = "") -> dict[str, Any]:
    responses: list[dict[str, Any]] = []
    for number in range(windows):
        responses.append(
            {
                "text": f"## Window {number}\n\nWorking on *step {number}*.\n\n{reply}",
                "tool_calls": [
                    {
                        "name": "notes",
                        "arguments": {
                            "action": "write_file",
                            "path": f"step-{number}.md",
                            "text": f"step {number} done",
                        },
                    }
                ],
            }
        )
        responses.append(
            {"text": f"Rolling over from window {number}.", "tool_calls": [{"name": "new_context"}]}
        )
    responses.append({"text": f"All {windows} steps are done."})
    return {"responses": responses}


def write_tree_session(
    directory: Path, windows: int, *, prompt: str = "Do every step", reply: str = ""
) -> Path:
    """Run a Tree session through ``windows`` rollovers; returns its file."""
    provider = ScriptedProvider(Script.model_validate(tree_script(windows, reply)))
    with make_agent(directory, [], mode="tree", provider=provider, durability="none") as agent:
        agent.prompt(prompt)
        path = agent.session_file
    assert path is not None
    return path
