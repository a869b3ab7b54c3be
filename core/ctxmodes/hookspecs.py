"""Every hook ctxmodes calls: the contract between the agent host and its plugins.

The agent host (``ctxmodes.host``) is the only caller, with the tools it runs (which reach
``ctx_new_context`` and ``ctx_retrieve`` through the host) and the command line (which
calls the registration hooks, and ``ctx_retrieve`` offline). A session's hooks go through the
typed facade :class:`ctxmodes.hooks.HookRelay`, never through ``pm.hook`` directly. The
import-level ones (``MODULE_HOOKS``) are called by what they register into: modes and
plugin commands one plugin at a time, so that each is attributed to its plugin
(:func:`ctxmodes.plugins.each_plugin`; the command line calls them without building a
plugin manager where it can, :mod:`ctxmodes.plugin_calls`), and models by the model registry
(:mod:`ctxmodes.providers.registry`). Hooks are synchronous:
the host calls an implementation and waits for it to return before it moves on, which is
what makes ``ctx_agent_settled`` a safe place to navigate the tree.

Modes and other plugins
    A *mode* (Off, Local, Tree, Remote, a third party's) only implements
    :func:`ctx_register_modes` at import level. When a session starts, the configured mode's
    factory builds a per-session object and the host registers it in the plugin manager; its
    lifecycle hooks fire from then until ``ctx_session_shutdown``. Installed modes that are
    not selected never have a lifecycle hook called. Non-mode plugins (tools, loggers) implement
    lifecycle hooks directly and are always called.

Ordering
    pluggy calls implementations last-registered first. The active mode is registered after
    the entry-point plugins and the defaults, so for ``firstresult`` hooks the mode answers
    before anything else, and an ordinary implementation in another plugin is not reached
    once the mode has answered. A plugin that must *observe* every call of a ``firstresult``
    hook (a logger, an auditor, a metrics exporter) either marks its implementation
    ``tryfirst=True`` and returns ``None`` (it sees the arguments before the mode answers), or
    implements it as a wrapper (``@hookimpl(wrapper=True)``: ``result = yield``, then return
    it) to see the mode's answer too. Use ``tryfirst``/``trylast`` only with a comment saying
    why.

Every hook name starts with ``ctx_`` so implementations can be found with grep.

Internal as a module: plugins import ``hookimpl`` and every type named here from
:mod:`ctxmodes` (or :mod:`ctxmodes.providers` for models); these specifications are the
contract.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pluggy

# ``hookimpl`` is pluggy's mark, set without importing pluggy (see the module).
from ctxmodes.hook_marker import PROJECT_NAME as PROJECT_NAME
from ctxmodes.hook_marker import hookimpl as hookimpl

if TYPE_CHECKING:
    from ctxmodes.cli_commands import CliCommand
    from ctxmodes.commands import Command
    from ctxmodes.events import (
        CompactionDecision,
        CompactionEvent,
        CompactionRequest,
        ContextProjection,
        ForkRequest,
        InputEvent,
        InputResult,
        NewContextOutcome,
        NewContextRequest,
        ProviderRequestEvent,
        RetrievalRequest,
        RetrievalResult,
        SessionChangeDecision,
        SessionShutdownReason,
        SessionStartReason,
        SessionSwitchRequest,
        ToolCallBlock,
        ToolCallEvent,
        ToolResultEvent,
        TreeDecision,
        TreeNavigationEvent,
        TreePreparation,
        TurnEndEvent,
        UserBashEvent,
        UserBashResult,
    )
    from ctxmodes.hostapi import HostSession
    from ctxmodes.modes import ModeSpec
    from ctxmodes.providers.registry import ModelRegistration
    from ctxmodes.session.models import AgentMessage
    from ctxmodes.tools.base import Tool

#: Hooks called outside any session: by the command line and by the model registry.
SESSIONLESS_HOOKS: frozenset[str] = frozenset({"ctx_register_cli_commands", "ctx_register_models"})
#: Hooks a plugin module implements at import level; every other hook of a mode belongs to
#: its per-session object and fires only while that mode is active.
MODULE_HOOKS: frozenset[str] = frozenset({"ctx_register_modes", *SESSIONLESS_HOOKS})

hookspec = pluggy.HookspecMarker(PROJECT_NAME)


# ---------------------------------------------------------------------------------------------
# 1. Registration
# ---------------------------------------------------------------------------------------------


@hookspec
def ctx_register_modes(register: Callable[[ModeSpec], None]) -> None:
    """Declare the context-management modes this plugin provides.

    :param register: call it once per mode with a :class:`ctxmodes.ModeSpec`; a name
        already registered by another plugin is an error naming both plugins.
    :return: nothing.

    Called once by :class:`ctxmodes.modes.ModeRegistry` when it is built: from a plugin
    manager at session start, and by ``ctxmodes modes`` directly when the implementation is
    one plain function (or method) taking ``register`` (through pluggy otherwise). Order
    across plugins does not matter: modes are looked up by name, never chosen by call order.

    .. versionadded:: 0.1
    """


@hookspec
def ctx_register_models(register: Callable[[ModelRegistration], None]) -> None:
    """Declare models, and the providers that serve them.

    :param register: call it with a :class:`ctxmodes.providers.ModelSpec` (a model
        on an endpoint, spoken to by the built-in transport of its ``api``), or with a
        :class:`ctxmodes.providers.ProviderScheme` (a ``scheme:ARGUMENT`` spec such
        as ``scripted:FILE`` and the factory that builds its provider). A model registered
        again under the same ``provider/id`` replaces the earlier registration, so
        configured models override built-in tables.
    :return: nothing.

    Called once per :class:`ctxmodes.providers.ProviderRegistry` built from a
    plugin manager (``ctxmodes run``, ``ctxmodes models``, host start-up), in pluggy's call
    order: later-registered plugins first; a scheme registered twice is an error. The
    built-in tables are registered by the default plugin ``ctxmodes.providers.builtin``
    exactly this way, and configured endpoints by its ``ConfiguredProviders`` (called last).

    .. versionadded:: 0.2
    """


@hookspec
def ctx_register_tools(register: Callable[[Tool], None], session: HostSession) -> None:
    """Add the tools the model may call in this session.

    :param register: call it once per :class:`ctxmodes.Tool`; when a name is
        registered twice, the first registration wins.
    :param session: the session the tools are for.
    :return: nothing.

    Called by the host once per session, before ``ctx_session_start`` (and again when the
    mode is switched). Called last-registered first, so the active mode registers first and
    its tools win a name clash with a default tool.

    .. versionadded:: 0.1
    """


@hookspec
def ctx_register_commands(register: Callable[[Command], None], session: HostSession) -> None:
    """Add slash commands (``/name args``) for this session.

    :param register: call it once per :class:`ctxmodes.Command`. Named as Pi names its
        extensions' commands: a name registered once is kept; when several commands share
        a name, each is numbered in the order they were registered (``/name:1``,
        ``/name:2``), skipping a number already taken. The built-in commands (``/compact``,
        ``/tree`` ...) keep their names and take precedence over a plugin's of the same
        name, which is still listed (RPC ``get_commands``) under that name; the terminal
        names the plugin in a warning at start-up and after ``/reload``, as Pi names the
        extension, and leaves the command out of completion.
    :param session: the session the commands are for.
    :return: nothing.

    Called by the host once per session, after ``ctx_register_tools`` and before
    ``ctx_session_start`` (and again when the mode is switched and on ``/reload``): each
    plugin's implementation is called on its own, in pluggy's order (last registered
    first), so that each command is known by its plugin.

    .. versionadded:: 0.1
    """


@hookspec
def ctx_register_cli_commands(register: Callable[[CliCommand], None]) -> None:
    """Add ``ctxmodes`` subcommands.

    :param register: call it once per :class:`ctxmodes.CliCommand`; a name
        already taken by a core command or by another plugin is an error naming both.
    :return: nothing.

    Called once by the command line when it builds its parser, before any session exists, on
    the entry-point plugins alone (a mode's per-session object never sees it, and neither do
    the core's default plugins), and not at all when the command line names a core command.
    Core commands come first in ``--help``, then plugins' commands in plugin-name order. Keep
    it and the plugin's module import-light: every ``ctxmodes --help`` imports them, so the
    command imports what it needs when it runs. An implementation that is one plain
    function (or method) taking ``register`` is called directly, without a plugin manager;
    a hook wrapper, or two implementations in one plugin, go through pluggy (same answer,
    slower start).

    .. versionadded:: 0.2
    """


# ---------------------------------------------------------------------------------------------
# 2. Session open and close
# ---------------------------------------------------------------------------------------------


@hookspec
def ctx_session_start(session: HostSession, reason: SessionStartReason) -> None:
    """A session became current: started, resumed, replaced by ``/new`` or forked.

    :param session: the new current session; its store is open and its leaf restored.
    :param reason: why it started.
    :return: nothing.

    Called by the host before any input is accepted. Modes rebuild their indexes from the
    session file here (never from memory carried over from another session).

    .. versionadded:: 0.1
    """


@hookspec(firstresult=True)
def ctx_session_before_switch(
    session: HostSession, request: SessionSwitchRequest
) -> SessionChangeDecision | None:
    """The current session is about to be replaced by a new one or by a stored one (Pi's
    ``session_before_switch``).

    :param session: the current session, still whole: no run was aborted for the switch.
    :param request: ``new``, or ``resume`` with the file to be opened.
    :return: ``None`` to let it happen; a :class:`~ctxmodes.SessionChangeDecision` with
        ``cancel`` to keep the current session (RPC answers ``cancelled: true``, the
        terminal says it was cancelled).

    ``firstresult``: the first decision wins. Called by the host's ``new_session`` and
    ``switch_session``/``resume_session`` before anything is torn down.

    .. versionadded:: 0.2
    """


@hookspec(firstresult=True)
def ctx_session_before_fork(
    session: HostSession, request: ForkRequest
) -> SessionChangeDecision | None:
    """The current session is about to be forked into a new one (Pi's
    ``session_before_fork``).

    :param session: the current session, still whole.
    :param request: the entry the fork is taken at or before, as asked: it may name no
        entry of the session (a mistyped ``/fork ENTRY``, RPC ``fork`` with an unknown
        ``entryId``; ``position`` is then ``"before"``, Pi's default), or be ``None`` (RPC
        ``fork`` without a string ``entryId``). Such a fork fails after this hook unless a
        plugin cancels it.
    :return: ``None`` to let it happen; a :class:`~ctxmodes.SessionChangeDecision` with
        ``cancel`` to keep the current session.

    ``firstresult``: the first decision wins. Called by the host's ``fork_session`` first
    (the terminal's ``/fork`` selector, ``/fork ENTRY`` and ``/clone``, RPC's ``fork`` and
    ``clone``), as Pi asks its extensions before it looks the entry up, and so before the
    fork's file is written. Asked while the agent works (those commands do not wait for
    it, as in Pi), it is called beside the run, on another thread: a cancelled fork leaves
    the run going, and the run is aborted only once the fork goes ahead.

    .. versionadded:: 0.2
    """


@hookspec
def ctx_session_shutdown(session: HostSession, reason: SessionShutdownReason) -> None:
    """The session is about to stop being current.

    :param session: the session going away; its store is still open.
    :param reason: ``quit`` or the replacement that follows.
    :return: nothing.

    Called by the host after the last run was aborted and persisted, before the session's
    store is closed. Implementations release processes and files; the mode object is
    unregistered right after this hook returns.

    .. versionadded:: 0.1
    """


# ---------------------------------------------------------------------------------------------
# 3. Input and the agent run
# ---------------------------------------------------------------------------------------------


@hookspec(firstresult=True)
def ctx_input(session: HostSession, event: InputEvent) -> InputResult | None:
    """Text was submitted, and it is not a registered slash command.

    :param session: the current session.
    :param event: the text, the images attached to it (``event.images``, in the order they
        follow the text in the user message; ``()`` for plain text), where it came from, and
        how it would be queued while a run is active.
    :return: ``None`` to let it through unchanged; an :class:`~ctxmodes.InputResult`
        to consume it, images and all (``handled``), or to replace its text
        (``transform``). A transform keeps the event's images unless its ``images`` is set:
        then those are attached instead (``()`` sends the text alone). A plugin that
        consumes input to deliver it later passes the images on with it
        (:meth:`~ctxmodes.HostSession.follow_up` takes them).

    ``firstresult``: the first implementation returning a result decides. Called by the host
    before the input becomes a user message, including while a run is streaming (Tree holds
    input submitted during its rollover this way).

    .. versionadded:: 0.1
    """


@hookspec(firstresult=True)
def ctx_user_bash(session: HostSession, event: UserBashEvent) -> UserBashResult | None:
    """The user is about to run a shell command (Pi's ``user_bash``): ``!command`` or
    ``!!command`` in the terminal, also while a run is active, RPC's ``bash``, or
    :meth:`ctxmodes.sdk.Agent.run_shell_command`.

    :param session: the current session.
    :param event: the command as typed, whether its output is kept from the model
        (``!!``), and the directory it runs in.
    :return: ``None`` to leave it to the next plugin, then to ctxmodes; a
        :class:`~ctxmodes.UserBashResult` with ``operations`` to run it another way (over
        SSH, in a container; wrapping :func:`~ctxmodes.local_shell_runner` to keep the
        local shell), or with ``result`` to answer for it without running anything.

    The plugins are asked one after another, in the order pluggy calls them, each on its
    own (a hook wrapper wraps its own plugin's implementation only), until one returns a
    result. A plugin that raises is reported and the next one is asked, as Pi asks the next
    extension; when none answers, the command runs locally. Asked only when some plugin
    implements it, before the command runs; a command answered by ``result`` is recorded
    as given and cannot be stopped. Errors raised by ``operations`` while the command runs
    are the command's failure: the user is told, nothing is recorded.

    .. versionadded:: 0.2
    """


@hookspec
def ctx_agent_start(session: HostSession) -> None:
    """A run began (a prompt, or a triggered custom message while idle).

    :param session: the current session.
    :return: nothing.

    Called once per top-level run before the first ``ctx_turn_start``; automatic
    continuations (retry, overflow compaction) start another run inside the same top-level run
    and call this again.

    .. versionadded:: 0.1
    """


@hookspec
def ctx_turn_start(session: HostSession, turn_index: int) -> None:
    """A turn (one model request plus its tool calls) is about to begin.

    :param session: the current session.
    :param turn_index: zero-based within the run.
    :return: nothing.

    .. versionadded:: 0.1
    """


@hookspec
def ctx_project_context(session: HostSession, projection: ContextProjection) -> None:
    """Decide which messages the model sees on the next request.

    :param session: the current session.
    :param projection: mutable; replace ``projection.messages`` to change what is sent (any
        sequence of messages; a list as before). Its ``branch`` is the active path the
        messages came from.
    :return: nothing; a value returned is reported as a plugin error, since the host
        would ignore it.

    ``projection.messages`` arrives as a mutable sequence that reads the context from the
    session as it is accessed: a context that is a whole long session costs nothing until it
    is read. Read it from the end (``messages[-1]``, ``reversed(messages)``, a slice of the
    last window) or iterate it once; ``list(messages)`` or editing it in place works too, but
    builds every message of the context.

    Called by the host before every model request, after Pi's context building. The result
    affects that one request and is never persisted. Every implementation is called, the mode
    first; each sees the previous ones' result. Must cost O(window), not O(session).

    Fails closed: when an implementation raises (or returns a value), the plugin error is
    reported and nothing is sent; the turn ends with an assistant error message, since the
    context as built would be the whole session.

    .. versionadded:: 0.1
    """


@hookspec
def ctx_provider_request(session: HostSession, event: ProviderRequestEvent) -> None:
    """Shape the provider request (tool schemas, developer messages, metadata).

    :param session: the current session.
    :param event: mutable; edit ``event.request`` or assign a new one.
    :return: nothing; a value returned is reported as a plugin error, since the host
        would ignore it.

    Called by the host after :func:`ctx_project_context` and the conversion to LLM messages,
    right before the request reaches the model, once per request. Every implementation is
    called, the mode first.

    .. versionadded:: 0.1
    """


@hookspec(firstresult=True)
def ctx_message_end(session: HostSession, message: AgentMessage) -> AgentMessage | None:
    """A message is complete and about to be persisted.

    :param session: the current session.
    :param message: the user, assistant, tool-result or custom message.
    :return: ``None`` to keep it; a replacement message of the same role to persist instead.

    ``firstresult``. Called before the message is appended to the session file; a mode
    records budget figures from assistant usage here.

    .. versionadded:: 0.1
    """


@hookspec(firstresult=True)
def ctx_tool_call(session: HostSession, event: ToolCallEvent) -> ToolCallBlock | None:
    """The model called a tool; decide whether it may run.

    :param session: the current session.
    :param event: the call.
    :return: ``None`` to run it; a :class:`~ctxmodes.ToolCallBlock` to refuse it (the
        model then gets an error result with the reason).

    ``firstresult``. Called after the assistant message was persisted, before the tool runs.

    .. versionadded:: 0.1
    """


@hookspec
def ctx_tool_result(session: HostSession, event: ToolResultEvent) -> None:
    """A tool call finished; its result may be patched before it is persisted.

    :param session: the current session.
    :param event: mutable; assign ``event.result`` to change what is persisted.
    :return: nothing; a value returned is reported as a plugin error, since the host
        would ignore it.

    Called for every tool call, in completion order, before the result message is appended.

    .. versionadded:: 0.1
    """


@hookspec
def ctx_turn_end(session: HostSession, event: TurnEndEvent) -> None:
    """A turn ended: its assistant message and tool results are persisted.

    :param session: the current session.
    :param event: the turn's index, assistant message and tool results.
    :return: nothing.

    .. versionadded:: 0.1
    """


@hookspec
def ctx_agent_end(session: HostSession, messages: list[AgentMessage]) -> None:
    """The run loop stopped: no tool calls, steering or follow-ups are left.

    :param session: the current session.
    :param messages: the messages this run added, in order.
    :return: nothing.

    Called before post-run handling (retry, threshold compaction), so the session is not idle
    yet; do not navigate here, wait for :func:`ctx_agent_settled`.

    .. versionadded:: 0.1
    """


@hookspec
def ctx_agent_settled(session: HostSession) -> None:
    """A top-level run is completely over and the session is idle.

    :param session: the current session; ``session.is_idle()`` is True.
    :return: nothing.

    Called exactly once per top-level run, after every automatic continuation, after all of
    the run's messages (tool results included) are persisted. It is the first point where a
    plugin may navigate the tree; the host waits for every implementation before it accepts
    the next input, so work done here cannot race a new prompt. Not called for slash
    commands, handled input, manual compaction or tree navigation.

    .. versionadded:: 0.1
    """


# ---------------------------------------------------------------------------------------------
# 4. Context rollover
# ---------------------------------------------------------------------------------------------


@hookspec(firstresult=True)
def ctx_new_context(session: HostSession, request: NewContextRequest) -> NewContextOutcome | None:
    """The model asked for a fresh context window (the ``new_context`` tool).

    :param session: the current session.
    :param request: identifies the tool call.
    :return: what the mode did; ``None`` means "not mine" (the tool then reports that context
        management is not active).

    ``firstresult``: the active mode answers; observers see the call as described under
    *Ordering* above (``tryfirst`` returning ``None``, or a wrapper). Called by the
    ``new_context`` tool through the host, once per call, while the run streams: a mode may
    append the next window marker at once (Local) or record a pending rollover and abort the
    run, finishing in :func:`ctx_agent_settled` (Tree).

    .. versionadded:: 0.1
    """


@hookspec(firstresult=True)
def ctx_session_before_tree(
    session: HostSession, preparation: TreePreparation
) -> TreeDecision | None:
    """A tree navigation is about to move the leaf.

    :param session: the current session.
    :param preparation: target, old leaf, what would be summarized, whether the navigation
        is an internal rollover.
    :return: ``None`` to proceed; a :class:`~ctxmodes.TreeDecision` to cancel, to
        supply the branch summary, or to change its instructions or label.

    ``firstresult``: the first decision wins. Called by ``navigate_tree`` while idle, before
    any summarization model call.

    .. versionadded:: 0.1
    """


@hookspec
def ctx_session_tree(session: HostSession, event: TreeNavigationEvent) -> None:
    """The leaf moved through the session tree.

    :param session: the current session.
    :param event: old and new leaf, the branch-summary entry if one was appended, and
        ``internal`` — True for a mode's own rollover, False for a navigation the user asked
        for (runtime state such as the notebook is reset only for the latter).
    :return: nothing.

    Called by ``navigate_tree`` after the leaf moved and the summary entry (if any) was
    appended, before navigation returns to its caller.

    .. versionadded:: 0.1
    """


# ---------------------------------------------------------------------------------------------
# 5. Compaction
# ---------------------------------------------------------------------------------------------


@hookspec(firstresult=True)
def ctx_session_before_compact(
    session: HostSession, request: CompactionRequest
) -> CompactionDecision | None:
    """A compaction (manual, threshold or overflow) is about to summarize the session.

    :param session: the current session.
    :param request: the trigger, instructions, active branch and Pi's cut-point preparation.
    :return: ``None`` to let the host summarize; a decision to cancel, or to supply the
        summary (and optionally the first kept entry) so no summarization call is made.

    ``firstresult``: the first decision wins (a mode overrides a logger that only observes).

    .. versionadded:: 0.1
    """


@hookspec
def ctx_session_compact(session: HostSession, event: CompactionEvent) -> None:
    """A compaction entry was appended to the session.

    :param session: the current session.
    :param event: the entry, its trigger, and whether a plugin supplied it.
    :return: nothing.

    .. versionadded:: 0.1
    """


# ---------------------------------------------------------------------------------------------
# 6. Retrieval: history and notes
# ---------------------------------------------------------------------------------------------


@hookspec(firstresult=True)
def ctx_retrieve(session: HostSession, request: RetrievalRequest) -> RetrievalResult | None:
    """Answer a ``history`` or ``notes`` operation.

    :param session: the current session.
    :param request: the operation family (``history`` or ``notes``), action and validated
        arguments.
    :return: the result; ``None`` means "not mine" (the tool then reports that the operation
        is unavailable in this mode).

    ``firstresult``: the active mode answers; observers see the call as described under
    *Ordering* above. Called by the shared ``history``/``notes`` tools through the host (once
    per model call, in a session), and by ``ctxmodes history``/``ctxmodes notes`` on a
    session file offline.

    .. versionadded:: 0.1
    """
