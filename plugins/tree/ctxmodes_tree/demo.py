"""``ctxmodes demo``, Tree's command: a scripted session in Tree mode, run offline, explained.

The demo drives an agent (:mod:`ctxmodes.sdk`) with a built-in scripted model through three context
windows. The model notes a release code name in window 0 and rolls over, writes a changelog
in window 1 and rolls over again, then recovers the code name from the archived window 0
with ``history``. Afterwards the demo prints what the model was sent in each window, the
session tree with its archived side branches, and the same history search run directly.

Tree registers the command through ``ctx_register_cli_commands``; the host activates the mode
by name, as for any configured mode. Everything happens in a temporary directory unless
``--session`` names the file to keep.
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from rich.console import Console
    from rich.tree import Tree

    from ctxmodes import SessionView
    from ctxmodes.providers import ModelRequest
    from ctxmodes.sdk import AgentEvent
    from ctxmodes.session import SessionTreeNode

from ctxmodes_tree.manifest import TREE_ARCHIVE_CUSTOM_TYPE

DEMO_MODE: Final = "tree"
CODE_NAME: Final = "AMBER-FALCON-7"
PROMPT: Final = "Prepare the release: pick a code name, then write the changelog."
PREVIEW_CHARS: Final = 64
_SUMMARY_PREAMBLE_END: Final = "Summary of that exploration:"
_UUID = re.compile(r"\b([0-9a-f]{8})-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")

#: The scripted model: what it answers, turn by turn, and its two branch summaries.
DEMO_SCRIPT: Final[dict[str, Any]] = {
    "responses": [
        {
            "text": "I'll pick a code name and record it.",
            "tool_calls": [
                {
                    "name": "bash",
                    "arguments": {
                        "command": f"echo 'release code name: {CODE_NAME}' | tee release.txt"
                    },
                }
            ],
        },
        {
            "tool_calls": [
                {
                    "name": "notes",
                    "arguments": {
                        "action": "write_file",
                        "path": "checkpoint.md",
                        "text": "Release: code name chosen (in release.txt). Next: changelog.\n",
                    },
                }
            ]
        },
        {
            "text": "Checkpoint saved; starting a fresh window.",
            "tool_calls": [{"name": "new_context"}],
        },
        {
            "tool_calls": [
                {"name": "notes", "arguments": {"action": "read_file", "path": "checkpoint.md"}}
            ]
        },
        {
            "tool_calls": [
                {
                    "name": "bash",
                    "arguments": {
                        "command": "printf '## Changelog\\n- faster start-up\\n' | tee CHANGELOG.md"
                    },
                }
            ]
        },
        {"text": "Changelog written; rolling over again.", "tool_calls": [{"name": "new_context"}]},
        {
            "text": "The announcement needs the code name; my notes do not have it.",
            "tool_calls": [
                {
                    "name": "history",
                    "arguments": {"action": "search_contents", "query": "code name"},
                }
            ],
        },
        {"text": f"The release code name is {CODE_NAME}; everything is ready."},
    ],
    "summaries": [
        "Chose the release code name with bash (saved to release.txt) and wrote a checkpoint "
        "note. Next: the changelog.",
        "Read the checkpoint and wrote CHANGELOG.md.",
    ],
    "model": "scripted-demo",
}


@dataclass
class _Windows:
    """The turn requests, as the model received them (after every mode shaped them),
    grouped by context window: a rollover (the mode's own navigation) starts the next."""

    requests: list[list[ModelRequest]] = field(default_factory=lambda: [[]])

    def __call__(self, event: AgentEvent) -> None:
        from ctxmodes.sdk import Navigated, RequestSent

        if isinstance(event, RequestSent):
            self.requests[-1].append(event.request)
        elif isinstance(event, Navigated) and event.internal:
            self.requests.append([])


def run(args: argparse.Namespace) -> int:
    import tempfile

    from rich.console import Console

    console = Console(highlight=False)
    with tempfile.TemporaryDirectory(prefix="ctxmodes-demo-") as scratch:
        workdir = Path(scratch)
        session_file = args.session.resolve() if args.session is not None else None
        if session_file is not None and session_file.exists():
            from ctxmodes import CtxmodesError

            raise CtxmodesError(f"{session_file} exists; the demo writes a new session file")
        _run_demo(console, workdir, session_file)
    return 0


def _run_demo(console: Console, workdir: Path, session_file: Path | None) -> None:
    from ctxmodes import RetrievalRequest
    from ctxmodes.providers import Script, ScriptedProvider
    from ctxmodes.sdk import Notice, open_agent

    windows = _Windows()
    notices: list[Notice] = []

    def watch(event: AgentEvent) -> None:
        windows(event)
        if isinstance(event, Notice):
            notices.append(event)

    if session_file is not None:
        # A new session at that path; tools still run in the scratch directory.
        session_file.parent.mkdir(parents=True, exist_ok=True)
    with open_agent(
        cwd=workdir,
        mode=DEMO_MODE,
        provider=ScriptedProvider(Script.model_validate(DEMO_SCRIPT)),
        session_file=session_file,
        session_dir=workdir / "sessions",
    ) as agent:
        agent.subscribe(watch)
        console.print(f"[bold]ctxmodes demo[/] — mode [bold]{DEMO_MODE}[/], scripted model")
        console.print(f"prompt: {PROMPT}\n")
        agent.prompt(PROMPT)
        for notice in notices:
            console.print(f"[red]{notice.level}:[/] {notice.message}")
        _print_windows(console, windows.requests)
        manager = agent.session_manager
        _print_tree(console, manager)
        request = RetrievalRequest(
            family="history", action="search_contents", arguments={"query": CODE_NAME}
        )
        result = agent.retrieve(request)
        _print_search(console, result.text if result is not None else "{}", manager)
    if session_file is not None:
        console.print(f"\nsession written to {session_file}")


# ----------------------------------------------------------------------------- printing


def _one_line(text: str, limit: int = PREVIEW_CHARS) -> str:
    flat = _UUID.sub(r"\1…", " ".join(text.split()))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _message_line(message: Any) -> str:
    from ctxmodes.session import TextContent, ToolCall

    role = getattr(message, "role", "?")
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return f"{role:<10} {_one_line(content)}"
    parts: list[str] = []
    for block in content:
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, ToolCall):
            parts.append(f"{block.name}({json.dumps(block.arguments, ensure_ascii=False)})")
    if role == "toolResult":
        role = f"tool:{getattr(message, 'tool_name', '')}"
    if role == "developer":
        # The window marker: its ids and hint, not the standing guidance.
        body = " ".join(parts)
        start = body.find("Current context window id")
        parts = [body[start:].replace("</context_window>", "") if start >= 0 else body]
        return f"{role:<10} {_one_line(' '.join(parts), 400)}"
    return f"{role:<10} {_one_line(' '.join(parts))}"


def _print_windows(console: Console, requests: list[list[ModelRequest]]) -> None:
    console.rule("What the model was sent, window by window")
    for number, window in enumerate(requests):
        if not window:
            continue
        last = window[-1]
        console.print(
            f"\n[bold]window {number}[/] — {len(window)} request(s); the last one held "
            f"{len(last.messages)} message(s):"
        )
        for message in last.messages:
            console.print(f"  {_message_line(message)}")
    console.print(
        "\nNo window starts with a summary: each begins with its marker (sent as a developer "
        "message) naming the previous window, recent notes and history ids."
    )


def _entry_label(manager: SessionView, node: SessionTreeNode) -> str:
    stored = manager.get_entry_json(node.entry_id) or {}
    kind = stored.get("type")
    if kind == "message":
        message = stored.get("message") or {}
        role = message.get("role", "?")
        if role == "toolResult":
            return f"tool result ({message.get('toolName', '?')})"
        if role == "assistant":
            calls = [
                b.get("name") for b in message.get("content", []) if b.get("type") == "toolCall"
            ]
            return "assistant" + (f" → {', '.join(map(str, calls))}" if calls else "")
        return str(role)
    if kind in ("custom", "custom_message"):
        return f"{kind}: {stored.get('customType')}"
    if kind == "branch_summary":
        summary = str(stored.get("summary", ""))
        # Pi prefixes every branch summary with the same two lines; show what follows.
        _, found, rest = summary.partition(_SUMMARY_PREAMBLE_END)
        text = _one_line(rest if found else summary, 48)
        owned = any(
            (manager.get_entry_json(child.entry_id) or {}).get("customType")
            == TREE_ARCHIVE_CUSTOM_TYPE
            for child in node.children
        )
        note = (
            " [dim](archive summary: kept in the file, hidden from the model)[/]" if owned else ""
        )
        return f"branch_summary “{text}”{note}"
    return str(kind)


def _print_tree(console: Console, manager: SessionView) -> None:
    from rich.tree import Tree

    active = set(manager.get_branch_ids())
    console.rule("The session tree (● active path; the other branches are archived windows)")
    root = Tree(f"session {manager.session_id}")
    # A run of single children is one flat list; at a branch point each branch is indented.
    roots = manager.get_tree()
    tasks: list[tuple[Tree, SessionTreeNode, bool]] = [
        (root, node, len(roots) > 1) for node in reversed(roots)
    ]
    while tasks:
        container, node, grouped = tasks.pop()
        widget = container.add(_tree_line(manager, node, active))
        if grouped:
            container = widget
        while len(node.children) == 1:
            node = node.children[0]
            widget = container.add(_tree_line(manager, node, active))
        tasks.extend((widget, child, True) for child in reversed(node.children))
    console.print(root)


def _tree_line(manager: SessionView, node: SessionTreeNode, active: set[str]) -> str:
    mark = "[green]●[/]" if node.entry_id in active else " "
    return f"{mark} [cyan]{node.entry_id}[/] {_entry_label(manager, node)}"


def _print_search(console: Console, text: str, manager: SessionView) -> None:
    console.rule(f"history search_contents query={CODE_NAME!r}")
    items = json.loads(text).get("items", [])
    active = set(manager.get_branch_ids())
    for item in items:
        where = "current window" if item["item_id"] in active else "archived window"
        console.print(
            f"  {item['role']:<9} item {item['item_id']} ({where} {item['window_id'][:8]}…): "
            f"{_one_line(item['truncated_content'], 80)}"
        )
    if not items:
        console.print("  no match")
