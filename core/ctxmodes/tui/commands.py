"""The slash commands of the terminal session: the host's (and plugins') commands, run by
the host on the agent's worker, plus those that only concern the terminal.

Each command says whether it may run while the agent works (``/tree``, ``/fork`` and
``/clone`` may, as in Pi: they stop the run once a choice is made). The rest are refused
while a run, compaction or summary is in progress, and the typed text stays in the editor.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ctxmodes.hostapi import StreamingBehavior
    from ctxmodes.session.models import ImageContent
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
    #: With arguments it waits for an idle agent even though it may run without them.
    arguments_wait: bool = False


#: ``/scoped-models``' description, in Pi's words, the cycling key named as bound now
#: (:func:`all_commands` fills it in).
SCOPED_MODELS = "Enable/disable models for {key} cycling"


def terminal_commands() -> dict[str, SlashCommand]:
    """The commands the terminal itself implements, by name."""
    from ctxmodes.tui import actions, credentials
    from ctxmodes.tui.fork_selector import fork
    from ctxmodes.tui.hotkeys import hotkeys
    from ctxmodes.tui.navigator import open_tree
    from ctxmodes.tui.project_trust import trust
    from ctxmodes.tui.reload import reload
    from ctxmodes.tui.scoped_models import scoped_models
    from ctxmodes.tui.session_copies import clone, import_session
    from ctxmodes.tui.session_share import share
    from ctxmodes.tui.settings_menu import settings

    table = (
        SlashCommand("tree", "Navigate the session tree", "", True, open_tree),
        SlashCommand(
            "compact",
            "Summarize older messages to free context",
            "[instructions]",
            False,
            actions.compact,
        ),
        SlashCommand("resume", "Resume another session (picker)", "[FILE]", False, actions.resume),
        SlashCommand(
            "fork",
            "Continue in a new session from a previous message",
            "[ENTRY]",
            True,
            fork,
            arguments_wait=True,
        ),
        SlashCommand("clone", "Continue in a copy of this session", "", True, clone),
        SlashCommand(
            "import", "Continue in a copy of a session file", "<path.jsonl>", False, import_session
        ),
        SlashCommand("mode", "Show or switch the context mode", "[NAME]", False, actions.mode),
        SlashCommand(
            "session", "Session file, counts, tokens, windows", "", True, actions.session_info
        ),
        SlashCommand("context", "What the next request holds", "", True, actions.context_breakdown),
        SlashCommand(
            "history", "Read the archived history", "ACTION [NAME=VALUE...]", True, actions.history
        ),
        SlashCommand("notes", "Read the notes", "ACTION [NAME=VALUE...]", True, actions.notes),
        SlashCommand(
            "export",
            "Export the session: an HTML page, or the branch as FILE.jsonl",
            "[FILE]",
            True,
            actions.export,
        ),
        SlashCommand("share", "Share the session as a secret GitHub gist", "", True, share),
        SlashCommand("name", "Name the session", "<name>", True, actions.name),
        SlashCommand("model", "Switch the model", "[provider/model-id]", True, actions.model),
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
            "thinking", "Show or set the thinking level", "[LEVEL]", True, actions.thinking
        ),
        SlashCommand("scoped-models", SCOPED_MODELS, "", True, scoped_models),
        SlashCommand("settings", "Change settings for this run", "", True, settings),
        SlashCommand("copy", "Copy the last reply to the clipboard", "", True, actions.copy),
        SlashCommand("hotkeys", "List every keyboard shortcut", "", True, hotkeys),
        SlashCommand(
            "reload", "Read keys, skills, prompts and context files again", "", True, reload
        ),
        SlashCommand(
            "trust", "Save the project trust decision for future sessions", "", True, trust
        ),
        SlashCommand("quit", "Leave ctxmodes", "", True, actions.quit),
    )
    return {command.name: command for command in table}


def all_commands(session: TerminalSession) -> dict[str, SlashCommand]:
    """The terminal's commands, then the host's and plugins' that the terminal does not
    shadow (each keeps its own ``while_streaming`` flag), then the prompt templates and,
    unless turned off, ``skill:`` commands (sent as typed and expanded by the host, also
    while it works)."""
    commands = dict(session.terminal_commands)
    scoped = commands.get("scoped-models")
    if scoped is not None and scoped.description == SCOPED_MODELS:
        key = session.keymap.display("app.model.cycleForward") or "model"
        commands["scoped-models"] = replace(scoped, description=SCOPED_MODELS.format(key=key))
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
    resources = session.agent.session.resources
    for template in resources.templates:
        hint = template.argument_hint or ""
        commands.setdefault(
            template.name, SlashCommand(template.name, template.description, hint, True)
        )
    # Without them (Pi's enableSkillCommands off), a typed /skill:name is a prompt, which
    # the host expands all the same.
    for skill in resources.skills if session.settings.skill_commands else ():
        name = f"skill:{skill.name}"
        commands.setdefault(name, SlashCommand(name, skill.description, "", True))
    return commands


def completion_commands(session: TerminalSession) -> dict[str, SlashCommand]:
    """The commands completion offers: :func:`all_commands` without the plugins' commands
    registered under a built-in command's name, also those that got a numbered name, as
    Pi's completion leaves them out (typed, a numbered one still runs)."""
    from ctxmodes.tui.command_conflicts import shadowed_commands

    commands = all_commands(session)
    for command in shadowed_commands(session):
        if command.invocation_name != command.name:
            commands.pop(command.invocation_name, None)
    return commands


def run_typed(session: TerminalSession, streaming_behavior: str = "steer") -> None:
    """Enter (``steer``) or Alt+Enter (``follow_up``): the editor's text, its pastes in
    place of their markers and trimmed, as a slash command, a ``!`` shell command, or a
    prompt."""
    session.expand_pastes()
    buffer = session.buffer
    text = buffer.text.strip()  # as Pi's editor submits it
    if not text:
        return
    if text.startswith("/") and _run_slash(session, text):
        return
    if text.startswith("!") and text.lstrip("!").strip():
        _run_shell(session, text)
        return
    buffer.append_to_history()
    buffer.reset()
    _submit(session, text, "follow_up" if streaming_behavior == "follow_up" else "steer")


#: A session that starts with no model: none named, and no provider has credentials.
NO_MODEL_AT_START = (
    "No model available: /login signs in to a provider or stores its API key (or set one, "
    "such as ANTHROPIC_API_KEY, before starting); /model picks a model"
)
#: A prompt typed while the session has no model.
NO_MODEL_NOTICE = (
    "No model selected: /login signs in to a provider, /model picks a model "
    "(a provider/model-id, or scripted:FILE)"
)


def _submit(
    session: TerminalSession,
    text: str,
    behavior: StreamingBehavior = "steer",
    images: Sequence[ImageContent] = (),
) -> None:
    """Hand ``text`` (and ``images`` attached to it) to the agent. A prompt refused before it
    is taken (no model, no credentials) is one line, and the text goes back to the editor."""
    from ctxmodes.host.errors import NoModelError
    from ctxmodes.providers.base import ProviderError

    try:
        session.agent.submit(text, streaming_behavior=behavior, images=images)
    except (NoModelError, ProviderError) as refused:
        message = NO_MODEL_NOTICE if isinstance(refused, NoModelError) else str(refused)
        session.notify(message, "error")
        session.buffer.text = text
        session.buffer.cursor_position = len(text)


def submit_in_turn(
    session: TerminalSession, prompts: Sequence[str], images: Sequence[ImageContent] = ()
) -> None:
    """Send ``prompts``: the first now, with ``images``, each other one after the reply to
    the one before (a follow-up). When the first is refused (no model), all of them go to
    the editor (the images' files are named in the first)."""
    first, *rest = prompts
    _submit(session, first, images=images)
    if session.buffer.text:
        session.buffer.text = "\n\n".join(prompts)
        session.buffer.cursor_position = len(session.buffer.text)
        return
    for text in rest:
        _submit(session, text, "follow_up")


def _run_shell(session: TerminalSession, text: str) -> None:
    from ctxmodes.tui.actions import shell

    if session.shell_abort is not None:
        key = session.keymap.text("app.interrupt")
        running = f"A bash command is already running. Press {key} to cancel it first."
        session.notify(running, "warning")
        return
    exclude = text.startswith("!!")
    session.buffer.append_to_history()
    session.buffer.reset()
    shell(session, text[2 if exclude else 1 :].strip(), exclude=exclude)


def _run_slash(session: TerminalSession, text: str) -> bool:
    """Dispatch a slash command; False when ``text`` names none (it is then a prompt)."""
    name, _, args = text[1:].partition(" ")
    command = all_commands(session).get(name)
    if command is None:
        return False
    if not _may_run(session, command, args.strip()):
        return True  # the text stays in the editor to run later
    session.buffer.append_to_history()
    session.buffer.reset()
    _dispatch(session, command, args.strip())
    return True


def run_command(session: TerminalSession, name: str) -> None:
    """The slash command ``name`` without arguments, started by a key: whatever is in the
    editor stays there."""
    command = all_commands(session).get(name)
    if command is not None and _may_run(session, command):
        _dispatch(session, command, "")


def _may_run(session: TerminalSession, command: SlashCommand, args: str = "") -> bool:
    waits = not command.while_streaming or (bool(args) and command.arguments_wait)
    if waits and session.busy():
        key = session.keymap.text("app.interrupt")
        waiting = f"/{command.name} waits until the agent is idle ({key} to interrupt)"
        session.notify(waiting, "warning")
        return False
    return True


def submit_to_host(session: TerminalSession, name: str, args: str) -> None:
    """Have the host run its command ``name`` with ``args``, as if typed."""
    _submit(session, f"/{name} {args}".rstrip())


def _dispatch(session: TerminalSession, command: SlashCommand, args: str) -> None:
    if command.handler is None:
        submit_to_host(session, command.name, args)
    else:
        command.handler(session, args)
