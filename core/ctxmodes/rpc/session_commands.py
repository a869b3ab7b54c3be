"""Pi's commands on the session file: ``switch_session``, ``fork``, ``clone``,
``get_fork_messages``, ``get_last_assistant_text``, ``set_session_name`` and
``export_html``, with ``get_entries`` and ``get_tree`` (:mod:`ctxmodes.rpc.session_tree`).

``switch_session``, ``fork`` and ``clone`` replace the session as ``/resume`` and ``/fork``
do (the run in progress is aborted first) and answer ``cancelled``: true when a plugin kept
the current session (``ctx_session_before_switch``, ``ctx_session_before_fork``). ``fork``
branches into a new file before a user message of the session and answers its text;
``clone`` copies the active branch up to the leaf.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from ctxmodes.errors import ConfigError
from ctxmodes.host.errors import SessionChangeCancelled
from ctxmodes.host.fork_messages import fork_messages
from ctxmodes.rpc import session_tree
from ctxmodes.rpc.protocol import ABSENT, RpcCommand, RpcCommandError, RpcContext, text_field
from ctxmodes.sdk.model_cycling import model_cycler
from ctxmodes.session.jsvalues import js_trim
from ctxmodes.session.models import AssistantMessage, TextContent
from ctxmodes.session.paths import normalize_path
from ctxmodes.terminal_text import visible_lines

#: Pi's refusal of a clone when the leaf is before the first entry.
NO_LEAF: Final = "Cannot clone session: no current entry selected"


def switch_session(rpc: RpcContext, command: Mapping[str, Any]) -> object:
    """Continue in the session file ``sessionPath``; where no file is, in a new session
    that will be written there, as Pi opens it. Answers ``{"cancelled"}``."""
    try:
        rpc.agent.switch_session(text_field(command, "sessionPath"))
    except SessionChangeCancelled:
        return {"cancelled": True}
    return {"cancelled": False}


def follow_project(rpc: RpcContext, cwd: Path) -> None:
    """Just before a session that runs in ``cwd`` replaces the current one (the host's
    ``before_replacement``: ``new_session``, ``switch_session``, ``fork``, ``clone``), read
    the settings there (another project's as the run's trust decides for it; nobody is
    asked here) and start the session with them, as Pi's runtime, rebuilt for each such
    session, reads them: taken as the terminal's ``/reload`` takes settings read again,
    values this run changed (``set_steering_mode`` …) standing, and the tools, thinking
    budgets and ``cycle_model``'s scope as a new runtime takes them. A file there that
    cannot be read is said on standard error, and the run's settings stay."""
    reloadable = rpc.settings
    if reloadable is None:
        return
    try:
        after = reloadable.read_for(cwd)
    except ConfigError as exc:
        warning = f"Warning: settings of {cwd} not loaded: {exc}"
        print(visible_lines(warning), file=sys.stderr)
        return
    before = reloadable.take(rpc.agent.host, after)
    if after.enabled_models != before.enabled_models:
        cycler, warnings = model_cycler(rpc.agent, after.enabled_models)
        rpc.cycler.scope = cycler.scope
        for warning in warnings:
            print(visible_lines(warning), file=sys.stderr)


def fork(rpc: RpcContext, command: Mapping[str, Any]) -> object:
    """Continue in a new session file branched just before the user message ``entryId``;
    answers the message's text (for the client's editor) and ``cancelled`` (no text when
    a plugin kept the current session).

    Plugins are asked before the entry is looked up, as Pi asks its extensions: a fork a
    plugin cancels answers ``cancelled`` whatever ``entryId`` is (one that is not a string
    is told to the plugins as ``None``).

    :raises CtxmodesError: ``entryId`` names no user message (Pi's message).
    """
    entry_id = command.get("entryId")
    try:
        text = rpc.agent.fork(entry_id if isinstance(entry_id, str) else None, "before")
    except SessionChangeCancelled:
        return {"cancelled": True}
    return {"text": text, "cancelled": False}


def clone(rpc: RpcContext, command: Mapping[str, Any]) -> object:
    """Continue in a new session file holding the active branch up to the leaf; answers
    ``{"cancelled"}``.

    :raises RpcCommandError: the leaf is before the first entry (Pi's message).
    """
    if rpc.agent.session_manager.get_leaf_id() is None:
        raise RpcCommandError(NO_LEAF)
    try:
        rpc.agent.fork(None)
    except SessionChangeCancelled:
        return {"cancelled": True}
    return {"cancelled": False}


def get_fork_messages(rpc: RpcContext, command: Mapping[str, Any]) -> object:
    """The user messages a fork can start before, every branch's, in file order: each
    ``{entryId, text}`` (its text blocks joined; one without text is left out), the list
    the terminal's ``/fork`` selector shows."""
    found = fork_messages(rpc.agent.session_manager)
    return {"messages": [{"entryId": m.entry_id, "text": m.text} for m in found]}


def get_last_assistant_text(rpc: RpcContext, command: Mapping[str, Any]) -> object:
    """The text of the context's last reply (an aborted one that said nothing does not
    count), its text blocks joined and trimmed; ``{}`` when there is none or it is blank,
    as Pi's ``{text: undefined}`` is written."""
    for message in reversed(rpc.agent.session.messages):
        if not isinstance(message, AssistantMessage):
            continue
        if message.stop_reason == "aborted" and not message.content:
            continue
        blocks = (block.text for block in message.content if isinstance(block, TextContent))
        text = js_trim("".join(blocks))
        return {"text": text} if text else {}
    return {}


def set_session_name(rpc: RpcContext, command: Mapping[str, Any]) -> object:
    """Name the session (a ``session_info`` entry; the ``session_info_changed`` event goes
    out first, or, while the agent works, once the run writes the entry); answers nothing.

    :raises CtxmodesError: the name is only whitespace (Pi's message).
    """
    rpc.agent.set_name(text_field(command, "name"))
    return ABSENT


def export_html(rpc: RpcContext, command: Mapping[str, Any]) -> object:
    """Write the session's HTML page to ``outputPath``, by default to Pi's
    ``pi-session-<file name>.html`` in the working directory; answers ``{"path"}`` as the
    page was written there (a relative path stays relative, ``~`` is expanded).

    :raises RpcCommandError: the session has no file (yet), or the page would replace it.
    """
    from ctxmodes.export import default_page_name, export_session

    output = command.get("outputPath")
    if output is not None and not isinstance(output, str):
        raise RpcCommandError('"outputPath" must be a file path')
    source = rpc.agent.session_file
    if source is None:
        raise RpcCommandError("Cannot export in-memory session to HTML")
    if not source.exists():
        raise RpcCommandError("Nothing to export yet - start a conversation first")
    path = normalize_path(output) if output else default_page_name(source)
    export_session(source, Path(path), rpc.agent.mode)
    return {"path": path}


COMMANDS: Final[Mapping[str, RpcCommand]] = {
    "switch_session": RpcCommand(switch_session, waits=True),
    "fork": RpcCommand(fork, waits=True),
    "clone": RpcCommand(clone, waits=True),
    "get_fork_messages": RpcCommand(get_fork_messages),
    "get_last_assistant_text": RpcCommand(get_last_assistant_text),
    "set_session_name": RpcCommand(set_session_name),
    "export_html": RpcCommand(export_html),
    **session_tree.COMMANDS,
}
