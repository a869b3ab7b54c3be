"""The slash commands of the terminal session: the host's (and plugins') commands, run by
the host on the agent's worker, plus those that only concern the terminal.

Each command says whether it may run while the agent works. The rest are refused while a
run, compaction or summary is in progress, and the typed text stays in the editor.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ctxmodes.tui.app import TerminalSession

TerminalHandler = Callable[["TerminalSession", str], None]


@dataclass(frozen=True, slots=True)
class SlashCommand:
    name: str
    description: str
    arguments: str
    while_streaming: bool
    #: ``None``: the host runs it (the text is submitted as typed).
    handler: TerminalHandler | None = None


def terminal_commands() -> dict[str, SlashCommand]:
    """The commands the terminal itself implements, by name."""
    from ctxmodes.tui import actions, credentials
    from ctxmodes.tui.navigator import open_tree

    table = (
        SlashCommand("tree", "Navigate the session tree", "", False, open_tree),
        SlashCommand(
            "compact",
            "Summarize older messages to free context",
            "[instructions]",
            False,
            actions.compact,
        ),
        SlashCommand("resume", "Resume another session (picker)", "[FILE]", False, actions.resume),
        SlashCommand("mode", "Show or switch the context mode", "[NAME]", False, actions.mode),
        SlashCommand(
            "session", "Session file, counts, tokens, windows", "", True, actions.session_info
        ),
        SlashCommand("context", "What the next request holds", "", True, actions.context_breakdown),
        SlashCommand(
            "history", "Read the archived history", "ACTION [NAME=VALUE...]", True, actions.history
        ),
        SlashCommand("notes", "Read the notes", "ACTION [NAME=VALUE...]", True, actions.notes),
        SlashCommand("export", "Write the session as an HTML page", "[FILE]", True, actions.export),
        SlashCommand("name", "Name the session", "<name>", False, actions.name),
        SlashCommand("model", "Switch the model", "[provider/model-id]", False, actions.model),
        SlashCommand(
            "login",
            "Log in to a provider (subscription or API key)",
            "[PROVIDER [key]]",
            True,
            credentials.login,
        ),
        SlashCommand(
            "logout",
            "Forget what /login stored for a provider",
            "PROVIDER",
            True,
            credentials.logout,
        ),
        SlashCommand(
            "thinking", "Show or set the thinking level", "[LEVEL]", False, actions.thinking
        ),
        SlashCommand("copy", "Copy the last reply to the clipboard", "", True, actions.copy),
        SlashCommand("quit", "Leave ctxmodes", "", True, actions.quit),
    )
    return {command.name: command for command in table}


def all_commands(session: TerminalSession) -> dict[str, SlashCommand]:
    """The terminal's commands, then the host's and plugins' that the terminal does not
    shadow (each keeps its own ``while_streaming`` flag)."""
    commands = dict(session.terminal_commands)
    for command in session.agent.commands:
        commands.setdefault(
            command.name,
            SlashCommand(
                command.name,
                command.description,
                command.arguments,
                command.while_streaming,
            ),
        )
    return commands
