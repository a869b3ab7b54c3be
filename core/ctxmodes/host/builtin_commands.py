"""The built-in slash commands, a default plugin of every host.

``/compact [instructions]``
    Compact now; the instructions steer the summary.
``/tree <entry-id> [--summarize] [--label TEXT]``
    Move the leaf to an entry (a user message: to its parent, with its text in the editor).
``/new``
    Start a new, empty session.
``/resume [FILE]``
    Continue the session stored in FILE; without one, list the sessions of this directory.
``/fork [ENTRY]``
    Continue in a new session file holding the path up to ENTRY (before it, for a user
    message, whose text goes to the editor); without ENTRY, a copy of the current path.
``/mode [NAME]``
    Show the active and installed modes, or switch this session to mode NAME.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

from ctxmodes import hookimpl
from ctxmodes.commands import Command, CommandContext
from ctxmodes.errors import CtxmodesError
from ctxmodes.hostapi import HostSession, NavigationRequest

TREE_USAGE = "usage: /tree <entry-id> [--summarize] [--label TEXT]"


def _offer_editor_text(context: CommandContext, text: str | None) -> None:
    # Only into an empty editor: never overwrite what the user is composing.
    if text and not context.ui.get_editor_text():
        context.ui.set_editor_text(text)


def compact(args: str, context: CommandContext) -> None:
    entry = context.compact(args.strip() or None)
    context.ui.notify(
        f"Compacted: kept from entry {entry.first_kept_entry_id}, "
        f"{entry.tokens_before} tokens before"
    )


def parse_tree_args(args: str) -> NavigationRequest:
    """The navigation ``/tree`` arguments ask for.

    :raises CtxmodesError: the arguments do not match :data:`TREE_USAGE`.
    """
    try:
        words = shlex.split(args)
    except ValueError:
        raise CtxmodesError(TREE_USAGE) from None
    target: str | None = None
    summarize = False
    label: str | None = None
    position = 0
    while position < len(words):
        word = words[position]
        if word == "--summarize":
            summarize = True
        elif word == "--label" and position + 1 < len(words):
            position += 1
            label = words[position]
        elif target is None and not word.startswith("--"):
            target = word
        else:
            raise CtxmodesError(TREE_USAGE)
        position += 1
    if target is None:
        raise CtxmodesError(TREE_USAGE)
    return NavigationRequest(target, summarize=summarize, label=label)


def tree(args: str, context: CommandContext) -> None:
    result = context.navigate_tree(parse_tree_args(args))
    if result.cancelled:
        context.ui.notify("Navigation cancelled" + (" (aborted)" if result.aborted else ""))
        return
    _offer_editor_text(context, result.editor_text)
    leaf = result.new_leaf_id or "the start of the session"
    context.ui.notify(f"Moved to {leaf}")


def new(args: str, context: CommandContext) -> None:
    fresh = context.new_session()
    fresh.ui.notify(f"New session {fresh.session.session_manager.session_id}")


def resume(args: str, context: CommandContext) -> None:
    target = args.strip()
    if target:
        resumed = context.resume_session(Path(target).expanduser())
        resumed.ui.notify(f"Resumed session {resumed.session.session_manager.session_id}")
        return
    from ctxmodes.session.manager import SessionManager

    manager = context.session.session_manager
    sessions = SessionManager.list_sessions(manager.cwd, manager.session_dir)
    if not sessions:
        context.ui.notify("No sessions to resume in this directory")
        return
    lines = [f"{info.path}  {info.first_message[:60]}" for info in sessions]
    context.ui.notify("Sessions (resume one with /resume FILE):\n" + "\n".join(lines))


def fork(args: str, context: CommandContext) -> None:
    entry = args.strip() or None
    forked, editor_text = context.fork_session(entry)
    _offer_editor_text(forked, editor_text)
    forked.ui.notify(f"Forked into {forked.session.session_manager.session_file}")


def mode(args: str, context: CommandContext) -> None:
    name = args.strip()
    if name:
        change = context.describe_mode_change(name)
        if change is None:
            context.ui.notify(f"Mode: {name} already manages this session")
            return
        # The session records its mode: switching is the user's explicit choice.
        if not context.ui.confirm("Switch the context mode?", change):
            context.ui.notify(f"Mode unchanged: {context.session.mode_name}")
            return
        context.switch_mode(name)
        context.ui.notify(f"Mode: {name}")
        return
    installed = ", ".join(context.mode_names()) or "none"
    context.ui.notify(f"Mode: {context.session.mode_name} (installed: {installed})")


BUILTIN_COMMANDS: tuple[Command, ...] = (
    Command("compact", "Summarize older messages to free context", compact, "[instructions]"),
    Command("tree", "Move to another entry of the session tree", tree, "<entry-id> [--summarize]"),
    Command("new", "Start a new session", new),
    Command("resume", "Continue a stored session, or list them", resume, "[FILE]"),
    Command("fork", "Continue in a new session from an entry", fork, "[ENTRY]"),
    Command("mode", "Show or switch the context-management mode", mode, "[NAME]"),
)


def is_builtin_command(command: Command) -> bool:
    """Whether ``command`` is one of :data:`BUILTIN_COMMANDS`: such a command keeps its
    name whatever plugins register, as Pi's built-in commands do."""
    return command in BUILTIN_COMMANDS


@hookimpl
def ctx_register_commands(register: Callable[[Command], None], session: HostSession) -> None:
    for command in BUILTIN_COMMANDS:
        register(command)
