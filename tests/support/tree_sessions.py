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


def tool_results(manager: Any) -> dict[str, list[str]]:
    """The text of every tool result of a session, by tool name, in order."""
    results: dict[str, list[str]] = {}
    for entry in manager.get_entries():
        message = getattr(entry, "message", None)
        if getattr(message, "role", None) == "toolResult":
            text = "".join(getattr(block, "text", "") for block in message.content)
            results.setdefault(message.tool_name, []).append(text)
    return results


def assert_pi_sees_the_same(pi: Any, session_file: Any, manager: Any) -> None:
    """The real Pi opens the file with our entry count, leaf and context."""
    (opened,) = pi.open_many([{"file": str(session_file)}])
    assert "openError" not in opened
    assert opened["entryCount"] == manager.entry_count()
    assert opened["leafId"] == manager.get_leaf_id()
    assert opened["context"] == manager.build_session_context().to_json()
