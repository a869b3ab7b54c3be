"""Plugins' commands shadowed by a built-in command of the terminal, said as Pi says an
extension's command shadowed by one of its interactive commands
(``getBuiltInCommandConflictDiagnostics``): under ``[Extension issues]``, at start-up and
after ``/reload``, each under the plugin that registered it where Pi names the extension's
file. As in Pi, completion leaves every such command out, also one that got a numbered name
(``/model:1``), which still runs when typed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from ctxmodes.host.builtin_commands import BUILTIN_COMMANDS

if TYPE_CHECKING:
    from ctxmodes.host.command_table import PluginCommand
    from ctxmodes.tui.app import TerminalSession

#: Pi's section title and words, word for word.
SECTION: Final = "Extension issues"
_CONFLICT: Final = "Extension command '/{name}' conflicts with built-in interactive command."
_SKIPPED: Final = " Skipping in autocomplete."
_AVAILABLE: Final = " Available as '/{invocation}'."


def builtin_names(session: TerminalSession) -> set[str]:
    """The built-in interactive commands: the terminal's own and the core's."""
    return set(session.terminal_commands) | {command.name for command in BUILTIN_COMMANDS}


def shadowed_commands(session: TerminalSession) -> list[PluginCommand]:
    """The plugins' commands registered under a built-in command's name, in the order they
    were registered."""
    builtins = builtin_names(session)
    return [
        command for command in session.agent.session.plugin_commands if command.name in builtins
    ]


def conflict_message(command: PluginCommand) -> str:
    """Pi's warning for ``command``: skipped in completion when it kept its name, else
    available under its numbered one."""
    message = _CONFLICT.format(name=command.name)
    if command.invocation_name == command.name:
        return message + _SKIPPED
    return message + _AVAILABLE.format(invocation=command.invocation_name)


def conflicts_text(session: TerminalSession) -> str:
    """The ``[Extension issues]`` section as the terminal prints it (empty when no command
    is shadowed): per command the plugin's name, then Pi's warning below it."""
    shadowed = shadowed_commands(session)
    if not shadowed:
        return ""
    lines = [f"[{SECTION}]"]
    for command in shadowed:
        lines += [f"  plugin {command.plugin}", f"    {conflict_message(command)}"]
    return "\n".join(lines)
