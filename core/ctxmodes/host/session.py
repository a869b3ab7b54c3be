"""``AgentSession``: one running session, with Pi's ``AgentSession`` semantics.

Input
    :meth:`AgentSession.submit` is what a UI calls when the user presses Enter: a registered
    ``/command`` runs at once (even during a run); text submitted while a compaction or
    branch summary is in progress is **held** and delivered when it ends; otherwise
    ``ctx_input`` sees it, then it is queued (``steer`` / ``follow_up``) while a run is
    active, or starts a run. Images submitted with text (``images=``) go wherever the text
    goes — held, seen by ``ctx_input``, queued — and follow it in the user message.
    :meth:`AgentSession.prompt` is the synchronous API call: it runs a whole top-level run
    on the caller's thread and returns after ``ctx_agent_settled``.

Top-level runs
    A run (:mod:`~ctxmodes.host.run_loop`) is followed by the post-run checks — threshold or
    overflow compaction (an overflow is compacted and the turn retried once), then messages
    queued too late for the loop — which may continue it. Then the session settles: it is
    marked idle and ``ctx_agent_settled`` runs, exactly once per top-level run, after every
    message of the run (tool results included) was persisted.

Threads
    See :mod:`~ctxmodes.host.lifecycle`: the thread that starts work drives the session until
    it settles; runs requested meanwhile (from hooks, tools or other threads) start after
    the current work, in request order.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, ParamSpec, TypeVar

from ctxmodes.abort import AbortController
from ctxmodes.commands import Command
from ctxmodes.errors import CtxmodesError, StaleContextError
from ctxmodes.events import InputEvent, InputSource, SessionShutdownReason, SessionStartReason
from ctxmodes.hooks import HookRelay
from ctxmodes.host import records
from ctxmodes.host.auto_compaction import AutoCompaction
from ctxmodes.host.builtin_commands import is_builtin_command
from ctxmodes.host.command_table import CommandCall, CommandTable, PluginCommand
from ctxmodes.host.compactor import Compactor
from ctxmodes.host.core import SessionCore
from ctxmodes.host.errors import NoModelError, SessionBusyError
from ctxmodes.host.lifecycle import Handoff
from ctxmodes.host.listeners import Listeners
from ctxmodes.host.navigation import SessionNavigation
from ctxmodes.host.navigator import Navigator
from ctxmodes.host.options import HostOptions
from ctxmodes.host.queues import QueuedMessage
from ctxmodes.host.records import Listener
from ctxmodes.host.retry import AgentRetry
from ctxmodes.host.run_loop import RunLoop
from ctxmodes.host.session_stats import SessionStats, session_stats
from ctxmodes.host.system_prompt import build_system_prompt
from ctxmodes.host.user_shell import UserShell
from ctxmodes.hostapi import (
    DeliverAs,
    NavigationRequest,
    StreamingBehavior,
    TreeNavigationResult,
    TurnHold,
    UserInterface,
)
from ctxmodes.resources import LoadedResources
from ctxmodes.session.models import (
    AgentMessage,
    AssistantMessage,
    BashExecutionMessage,
    CompactionEntry,
    ContentBlock,
    CustomMessage,
    ImageContent,
    TextContent,
    UserMessage,
)
from ctxmodes.tools.base import Tool
from ctxmodes.tools.builtin import is_builtin_tool
from ctxmodes.ui import HeadlessUI

if TYPE_CHECKING:
    import pluggy

    from ctxmodes.events import ForkRequest, SessionChangeDecision, SessionSwitchRequest
    from ctxmodes.host.command_context import SessionController
    from ctxmodes.providers.base import ModelInfo, Provider
    from ctxmodes.session.manager import SessionManager

P = ParamSpec("P")
R = TypeVar("R")

COMPACTING_MESSAGE: Final = (
    "Cannot submit a prompt while compaction is in progress. Wait for compaction to finish "
    "and retry."
)
BUSY_MESSAGE: Final = (
    "The agent is already processing. Submit with a streaming behaviour ('steer' or "
    "'follow_up') to queue the message."
)
NAVIGATE_WHILE_RUNNING: Final = (
    "Wait for the current response to finish before navigating the session tree."
)


@dataclass(frozen=True, slots=True)
class _HeldInput:
    text: str
    images: tuple[ImageContent, ...]
    source: InputSource
    behavior: StreamingBehavior | None


class AgentSession:
    """A running session (the host side of :class:`ctxmodes.hostapi.HostSession`).

    Build it through :class:`ctxmodes.host.runtime.AgentHost`, which activates the mode and
    calls :meth:`start`; a bare session (tests, embedding) is started the same way.
    """

    def __init__(
        self,
        *,
        manager: SessionManager,
        pm: pluggy.PluginManager,
        provider: Provider | None = None,
        cwd: Path | None = None,
        ui: UserInterface | None = None,
        mode_name: str = "off",
        options: HostOptions | None = None,
        listeners: Listeners | None = None,
        controller: SessionController | None = None,
        resources: LoadedResources | None = None,
    ) -> None:
        self._resources = resources if resources is not None else LoadedResources()
        self._core = SessionCore(
            session=self,
            manager=manager,
            relay=HookRelay(pm, self),
            provider=provider,
            cwd=cwd if cwd is not None else Path(manager.cwd),
            ui=ui if ui is not None else HeadlessUI(),
            options=options if options is not None else HostOptions(),
            listeners=listeners if listeners is not None else Listeners(),
        )
        self._mode_name = mode_name
        self.controller = controller
        self._compactor = Compactor(self._core)
        self._auto_compaction = AutoCompaction(self._core, self._compactor, self._release_held)
        self._loop = RunLoop(self._core, self._auto_compaction.between_turns)
        self._retry = AgentRetry(self._core)
        self._core.on_answer_end = self._retry.answer_ended
        self._core.will_retry = self._retry.will_retry
        self._navigator = Navigator(self._core)
        self._user_shell = UserShell(self._core, self._guarded)
        self._commands = CommandTable()
        self._held: list[_HeldInput] = []
        self._held_lock = threading.Lock()
        #: Turn-starting custom messages held by :meth:`hold_turns` (``None``: no hold).
        self._held_turns: list[CustomMessage] | None = None
        self._stale = False
        self._quiescing = False
        self._navigation = SessionNavigation(self)

    # ================================================================ HostSession

    @property
    def session_manager(self) -> SessionManager:
        return self._core.manager

    def append_entry(self, custom_type: str, data: Any = None) -> str:
        self._check_alive()
        manager = self._core.manager
        entry_id = manager.append_custom_entry(custom_type, data)
        # Told as Pi tells an extension's appendEntry (``entry_appended``).
        entry = manager.get_entry_json(entry_id)
        if entry is not None:
            self._core.emit(records.EntryAppended(entry))
        return entry_id

    @property
    def cwd(self) -> Path:
        return self._core.cwd

    @property
    def ui(self) -> UserInterface:
        return self._core.ui

    @property
    def mode_name(self) -> str:
        return self._mode_name

    @property
    def context_window(self) -> int | None:
        model = self._core.model
        return None if model is None else model.context_window

    @property
    def navigation(self) -> SessionNavigation:
        return self._navigation

    def is_idle(self) -> bool:
        return self._core.life.is_idle()

    def is_streaming(self) -> bool:
        return self._core.life.run_active

    def is_busy_elsewhere(self) -> bool:
        """True while another thread drives the session (its work has not settled)."""
        life = self._core.life
        return life.has_driver() and not life.is_driver()

    def has_pending_start(self) -> bool:
        """True while work waits to start (deferred to the driver or handed off)."""
        return self._core.life.has_deferred()

    def is_compacting(self) -> bool:
        """True while a compaction or a branch summary is in progress."""
        return self._core.life.activity is not None

    def abort(self) -> None:
        core = self._core
        core.abort_requested = True
        for controller in (core.run_controller, core.activity_controller):
            if controller is not None:
                controller.abort()

    def session_stats(self) -> SessionStats:
        """The session's message and token counts and its context usage, as Pi's
        ``getSessionStats`` (see :mod:`ctxmodes.host.session_stats`)."""
        return session_stats(self._core.manager, self.messages, self.context_window)

    def abort_retry(self) -> None:
        """Cancel the automatic retry being waited for, if any (Pi's ``abortRetry``): the
        failed answer stands and the run ends; a run or tool in progress goes on."""
        self._retry.cancel_wait()

    # ================================================================ other state

    @property
    def is_stale(self) -> bool:
        """True once the session was replaced or shut down."""
        return self._stale

    @property
    def is_quiescing(self) -> bool:
        """True while the host waits for this session to settle before replacing, closing or
        reloading it (see :meth:`quiesce`)."""
        return self._quiescing

    def quiesce(self) -> None:
        """Abort the current run and wait until everything started has settled.

        Meanwhile :attr:`is_quiescing` is True and the navigation capability is not ready:
        the session is about to be replaced, closed or reloaded, so work finishing on it
        (``ctx_agent_settled`` handlers) must not move its tree.

        :raises SessionBusyError: called from inside this session's own run.
        """
        self._quiescing = True
        try:
            self.abort()
            self.wait_for_idle()
        finally:
            self._quiescing = False

    @property
    def model(self) -> ModelInfo | None:
        return self._core.model

    @property
    def provider(self) -> Provider | None:
        return self._core.provider

    @property
    def options(self) -> HostOptions:
        return self._core.options

    @property
    def thinking_level(self) -> str:
        """The level the next request asks for: the latest ``thinking_level_change`` on the
        branch, which records it as the model takes it."""
        return self._core.thinking_level

    @property
    def system_prompt(self) -> str:
        return self._core.system_prompt

    @property
    def resources(self) -> LoadedResources:
        """The context files, system prompt files, templates and skills of this session."""
        return self._resources

    @property
    def messages(self) -> Sequence[AgentMessage]:
        """The current context (what the next request is built from, before projection).

        A snapshot, unaffected by later turns; its stored part is read from the session as
        it is accessed, so asking for the context of a long session costs O(1).
        """
        return self._core.messages.snapshot()

    @property
    def tools(self) -> Mapping[str, Tool]:
        return dict(self._core.tools)

    @property
    def commands(self) -> tuple[Command, ...]:
        return tuple(self._commands)

    @property
    def plugin_commands(self) -> tuple[PluginCommand, ...]:
        """The plugins' commands as named: each one's registered name, the name ``/name``
        runs it by and its plugin, in the order they were registered."""
        return self._commands.plugin_commands()

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Receive every lifecycle record (see :mod:`ctxmodes.host.records`)."""
        return self._core.listeners.subscribe(listener)

    def set_handoff(self, handoff: Handoff | None) -> None:
        """Run work started from threads that do not drive the session on another thread
        (see :meth:`ctxmodes.host.lifecycle.Lifecycle.set_handoff`): :meth:`submit` then
        never runs a prompt or command on the caller's thread."""
        self._core.life.set_handoff(handoff)

    def wait_for_idle(self, timeout: float | None = None) -> bool:
        """Block until everything started has settled (False if ``timeout`` passed first).

        :raises SessionBusyError: called from inside this session's own run.
        """
        return self._core.life.wait_until_released(timeout)

    # ================================================================ lifecycle

    def start(self, reason: SessionStartReason) -> None:
        """Register tools and commands, record the model and thinking level, then run
        ``ctx_session_start``. The mode object must already be active."""
        self._check_alive()
        self.refresh_registrations()
        self._record_startup_entries()
        core = self._core
        core.hook(core.relay.session_start, reason)
        core.emit(records.SessionStarted(reason))

    def refresh_registrations(self) -> None:
        """(Re)collect tools and commands from the plugins and rebuild the system prompt.

        When two plugins register a tool of the same name, the first registration wins;
        implementations are called last-registered first, so the active mode wins a clash.
        The options' tool selection (Pi's ``--tools`` and the like) then decides which are
        offered; a name it lists that no tool has is a warning. Commands are named as
        :class:`~ctxmodes.host.command_table.CommandTable` says (Pi's rule).
        """
        core = self._core
        tools: dict[str, Tool] = {}

        def register_tool(tool: Tool) -> None:
            tools.setdefault(tool.name, tool)

        commands: list[Command] = []
        owners: list[str] = []

        def register_command(command: Command, plugin: str) -> None:
            commands.append(command)
            owners.append(plugin)

        core.hook(core.relay.register_tools, register_tool)
        core.hook(core.relay.register_commands, register_command)
        selection = core.options.tools
        unknown = selection.unknown(tools)
        if unknown:
            core.ui.notify(f"No tool named {', '.join(unknown)} in this session", "warning")
        tools = selection.select(tools, is_builtin_tool)
        core.tools = tools
        self._commands = CommandTable(commands, is_builtin_command, owners)
        prompt = core.options.system_prompt
        core.system_prompt = (
            prompt
            if prompt is not None
            else build_system_prompt(list(tools.values()), core.cwd, self._resources)
        )

    def replace_resources(self, resources: LoadedResources) -> None:
        """Take ``resources``, read again from disk (Pi's ``/reload``), and rebuild the
        system prompt from them; tools and commands are collected again with it."""
        self._resources = resources
        self.refresh_registrations()

    def set_mode_name(self, name: str) -> None:
        """Record that mode ``name`` now serves this session (the host switched it)."""
        self._mode_name = name

    def vetoes_switch(self, request: SessionSwitchRequest) -> bool:
        """Whether a plugin keeps this session rather than let ``request`` replace it
        (``ctx_session_before_switch``)."""
        relay = self._core.relay
        return self._vetoed("ctx_session_before_switch", relay.session_before_switch, request)

    def vetoes_fork(self, request: ForkRequest) -> bool:
        """Whether a plugin keeps this session rather than let it be forked
        (``ctx_session_before_fork``)."""
        relay = self._core.relay
        return self._vetoed("ctx_session_before_fork", relay.session_before_fork, request)

    def _vetoed(
        self,
        hook: str,
        ask: Callable[[Any], SessionChangeDecision | None],
        request: SessionSwitchRequest | ForkRequest,
    ) -> bool:
        # As Pi, asked only when a plugin listens: a replacement asked for from a thread
        # while another holds the hooks (a hook waiting for the replacement) goes on.
        if not self._core.relay.is_implemented(hook):
            return False
        decision = self._core.hook(ask, request)
        return decision is not None and decision.cancel

    def call_hook(self, call: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R | None:
        """Call a hook the way the session calls its own: a failing plugin is reported."""
        return self._core.hook(call, *args, **kwargs)

    def _record_startup_entries(self) -> None:
        # As Pi: a new session records its model and thinking level (the run's, else its
        # model's, else the default; clamped to what the model takes, off without a model);
        # an existing one whose branch never recorded a level gets one (the run's, else the
        # default), and one that did runs at the run's level without recording it. New, for
        # Pi, is a session whose context holds no message yet, such as a fork taken before
        # the first prompt (whose branch holds only such records).
        core = self._core
        manager = core.manager
        model = core.model
        options = core.options
        requested = options.requested_thinking_level
        if len(core.messages) == 0:
            per_model = model and options.model_thinking_levels.get(f"{model.provider}/{model.id}")
            level = self._clamped(requested or per_model or options.thinking_level)
            if model is not None:
                manager.append_model_change(model.provider, model.id)
            manager.append_thinking_level_change(level)
        elif "thinking_level_change" not in manager.get_branch_types():
            # The type index answers without decoding the branch (which may be very long).
            manager.append_thinking_level_change(self._clamped(requested or options.thinking_level))
        elif requested is not None:
            core.thinking_level = self._clamped(requested)

    def shutdown(self, reason: SessionShutdownReason) -> None:
        """Abort and wait for the current run, run ``ctx_session_shutdown``, and make this
        session (and every capability and command context made for it) stale.

        :raises SessionBusyError: called from inside this session's own run.
        """
        if self._stale:
            return
        life = self._core.life
        if life.is_driver() and not life.is_idle():
            raise SessionBusyError("cannot replace or close the session from inside its own run")
        # Quiescing until stale: what settles meanwhile must not move the tree.
        self._quiescing = True
        self.abort()
        self._user_shell.abort()  # as Pi's dispose stops the user's shell commands
        life.wait_until_released()
        core = self._core
        core.hook(core.relay.session_shutdown, reason)
        core.emit(records.SessionShutdown(reason))
        core.stop_following_levels()
        self._stale = True

    def _check_alive(self) -> None:
        if self._stale:
            raise StaleContextError(
                "this session was replaced or closed; use the host's current session"
            )

    # ================================================================ input

    def prompt(self, text: str, *, images: Sequence[ImageContent] = ()) -> None:
        """Run ``text`` as a prompt now, on this thread; returns after the run settled.
        ``images`` follow the text in the user message, as Pi attaches them.

        A registered ``/command`` runs instead (``images`` are then not used). While a run
        is active (or about to start), use :meth:`submit`, :meth:`steer` or
        :meth:`follow_up`.

        :raises SessionBusyError: a run or compaction is in progress, or another thread
            drives the session.
        :raises NoModelError: the session has no model.
        """
        self._check_alive()
        with self._core.life.drive("start a prompt"):
            self._accept(text, tuple(images), source="interactive", behavior=None, immediate=True)

    def submit(
        self,
        text: str,
        *,
        streaming_behavior: StreamingBehavior | None = "steer",
        images: Sequence[ImageContent] = (),
    ) -> None:
        """Take text the user submitted (see the module docstring): a command runs, a
        prompt starts (on this thread when nothing else runs), or the text is queued with
        ``streaming_behavior`` or held. ``images`` stay with the text wherever it goes and
        follow it in the user message (a command does not use them). Never lost; with a
        ``streaming_behavior``, never refused for a busy session.

        :raises SessionBusyError: ``streaming_behavior`` is ``None`` and a run is active.
        """
        self._check_alive()
        self._accept(
            text,
            tuple(images),
            source="interactive",
            behavior=streaming_behavior,
            immediate=False,
        )

    def send_user_message(
        self,
        text: str,
        *,
        deliver_as: StreamingBehavior = "steer",
        images: Sequence[ImageContent] = (),
    ) -> None:
        self._check_alive()
        self._accept(text, tuple(images), source="extension", behavior=deliver_as, immediate=False)

    def steer(self, text: str, *, images: Sequence[ImageContent] = ()) -> None:
        self._check_alive()
        self._refuse_command(text)
        self._queue_user(self._resources.expand(text), tuple(images), "steer")

    def follow_up(self, text: str, *, images: Sequence[ImageContent] = ()) -> None:
        self._check_alive()
        self._refuse_command(text)
        self._queue_user(self._resources.expand(text), tuple(images), "follow_up")

    def take_queued(self, queue: StreamingBehavior = "steer") -> list[QueuedMessage]:
        self._check_alive()
        queues = self._core.queues
        taken = (queues.steering if queue == "steer" else queues.follow_up).clear()
        if taken:
            self._queue_changed()
        return taken

    def take_user_messages(self) -> tuple[list[UserMessage], list[UserMessage]]:
        """Take the user's messages back from the steering and follow-up queues (Pi's
        ``clearQueue``), oldest first; plugins' queued messages stay. One queue update
        reports it."""
        self._check_alive()
        queues = self._core.queues
        taken = queues.steering.take_user_messages(), queues.follow_up.take_user_messages()
        if any(taken):
            self._queue_changed()
        return taken

    def pending_message_count(self) -> int:
        """How many user messages wait in the steering and follow-up queues (Pi's
        ``pendingMessageCount``: the messages plugins queue with ``send_message`` are not
        counted)."""
        queues = self._core.queues
        waiting = (*queues.steering.messages(), *queues.follow_up.messages())
        return sum(isinstance(message, UserMessage) for message in waiting)

    def enqueue(self, message: QueuedMessage, *, deliver_as: StreamingBehavior) -> None:
        self._check_alive()
        queues = self._core.queues
        (queues.steering if deliver_as == "steer" else queues.follow_up).push(message)
        self._queue_changed()

    def hold_turns(self) -> TurnHold:
        with self._held_lock:
            if self._held_turns is not None:
                raise SessionBusyError("turns are already held")
            self._held_turns = []
        return _TurnHold(self)

    def _release_turns(self, start_turns: bool) -> None:
        with self._held_lock:
            held, self._held_turns = self._held_turns or [], None
        if start_turns:
            for message in held:
                self._core.queues.steering.push(message)
            if held:
                self._queue_changed()
        else:
            for message in held:
                self.send_message(message, trigger_turn=False)

    def _hold_turn(self, message: CustomMessage) -> bool:
        with self._held_lock:
            if self._held_turns is None:
                return False
            self._held_turns.append(message)
            return True

    def send_message(
        self,
        message: CustomMessage,
        *,
        deliver_as: DeliverAs | None = None,
        trigger_turn: bool | None = None,
    ) -> None:
        self._check_alive()
        if trigger_turn is not False and deliver_as != "next_turn" and self._hold_turn(message):
            return
        core = self._core
        if deliver_as == "next_turn":
            core.queues.next_turn.push(message)
        elif self._busy() and trigger_turn is not False:
            queue = core.queues.follow_up if deliver_as == "follow_up" else core.queues.steering
            queue.push(message)
            self._queue_changed()
        elif trigger_turn:
            self._start_soon(lambda: self._run_top_level([message]))
        elif core.life.run_active:
            core.pending_custom.append(message)
        elif core.life.is_driver():
            core.append_custom_now(message)
        else:
            core.life.run_or_defer(self._guarded(lambda: core.append_custom_now(message)))

    def send_custom_message(
        self,
        custom_type: str,
        content: str | list[TextContent | ImageContent],
        *,
        display: bool = True,
        details: Any = None,
        trigger_turn: bool | None = None,
        deliver_as: DeliverAs | None = None,
    ) -> None:
        fields: dict[str, Any] = {
            "custom_type": custom_type,
            "content": content,
            "display": display,
            "timestamp": self._core.now_ms(),
        }
        if details is not None:
            fields["details"] = details
        self.send_message(CustomMessage(**fields), deliver_as=deliver_as, trigger_turn=trigger_turn)

    def _accept(
        self,
        text: str,
        images: tuple[ImageContent, ...],
        *,
        source: InputSource,
        behavior: StreamingBehavior | None,
        immediate: bool,
    ) -> None:
        """Route submitted text (and its images): command, hold, ``ctx_input``, then queue
        or run."""
        call = self._commands.match(text)
        if call is not None:
            self._run_command(call)
            return
        core = self._core
        if core.life.activity is not None:
            if immediate:
                raise SessionBusyError(COMPACTING_MESSAGE)
            with self._held_lock:
                self._held.append(_HeldInput(text, images, source, behavior))
            return
        busy = self._busy()
        if not busy:
            self._check_model()
        event = InputEvent(text, source, behavior if busy else None, images)
        result = core.hook(core.relay.input, event)
        action = "continue" if result is None else result.action
        core.emit(records.InputReceived(text, source, event.streaming_behavior, action))
        if result is not None and result.action == "handled":
            return
        if result is not None and result.action == "transform":
            # As Pi: a transform without images keeps the ones submitted.
            text = result.text if result.text is not None else text
            images = tuple(result.images) if result.images is not None else images
        if source == "interactive":
            # As Pi: plugins see what was typed; the model gets the skill or template it
            # names. A plugin's own messages are sent as they are.
            text = self._resources.expand(text)
        if busy:
            if behavior is None:
                raise SessionBusyError(BUSY_MESSAGE)
            self._queue_user(text, images, behavior)
        elif immediate:
            self._start_prompt(text, images)
        else:
            self._start_soon(lambda: self._start_prompt(text, images))

    def _busy(self) -> bool:
        # A run that is about to start counts: input then queues for it, as during a run.
        return self._core.life.run_active or self._core.life.has_deferred()

    def _refuse_command(self, text: str) -> None:
        call = self._commands.match(text)
        if call is not None:
            raise CtxmodesError(
                f'the command "/{call.command.name}" cannot be queued; submit it instead'
            )

    def _queue_user(
        self, text: str, images: tuple[ImageContent, ...], behavior: StreamingBehavior
    ) -> None:
        message = self._user_message(text, images)
        queues = self._core.queues
        (queues.steering if behavior == "steer" else queues.follow_up).push(message)
        self._queue_changed()

    def _queue_changed(self) -> None:
        queues = self._core.queues
        self._core.emit(records.QueueUpdated(queues.steering.texts(), queues.follow_up.texts()))

    def _release_held(self) -> None:
        """Deliver the input held during a compaction or navigation, in order."""
        with self._held_lock:
            held, self._held = self._held, []
        for item in held:
            self._accept(
                item.text,
                item.images,
                source=item.source,
                behavior=item.behavior,
                immediate=False,
            )

    # ================================================================ commands

    def _run_command(self, call: CommandCall) -> None:
        from ctxmodes.host.command_context import HostCommandContext

        core = self._core
        name = call.command.name

        def execute() -> None:
            error: str | None = None
            try:
                call.command.handler(call.args, HostCommandContext(self))
            except Exception as exc:
                error = str(exc) or type(exc).__name__
                core.ui.notify(f"/{name}: {error}", "error")
            core.emit(records.CommandInvoked(name, call.args, error))

        # A command runs on the caller's thread at once, even during a run elsewhere; when
        # nothing drives the session it drives it, so the runs it starts happen afterwards
        # (on the hand-off thread, when the session has one).
        if core.life.hands_off():
            core.life.run_or_defer(execute)
        elif core.life.try_acquire():
            try:
                execute()
            finally:
                core.life.release()
        else:
            execute()

    # ================================================================ runs

    def _guarded(self, start: Callable[[], None]) -> Callable[[], None]:
        """``start`` for deferred execution: skipped once the session is stale, and its
        expected failures reported instead of breaking whoever drives the session."""

        def run() -> None:
            if self._stale:
                return
            try:
                start()
            except CtxmodesError as exc:
                self._core.ui.notify(str(exc), "error")

        return run

    def _start_soon(self, start: Callable[[], None]) -> None:
        """Start now on this thread when nothing drives the session, else after the
        driver's current work (a hook's request starts once the hook returned)."""
        self._core.life.run_or_defer(self._guarded(start))

    def _check_model(self) -> None:
        """Refuse a prompt the model could not answer before anything of it is recorded (as
        Pi checks the model and its key before it takes the prompt): no plugin sees it and
        the session file is not touched.

        :raises NoModelError: there is no model.
        :raises ProviderError: the model's credentials are missing.
        """
        provider = self._core.provider
        if provider is None:
            raise NoModelError(
                "No model selected: choose one whose provider has credentials (a key in its "
                "environment variable or from `ctxmodes login`), or scripted:FILE"
            )
        provider.check_credentials()

    def _user_message(self, text: str, images: tuple[ImageContent, ...]) -> UserMessage:
        """The user message of a prompt: its text, then its images (Pi's order)."""
        content: list[ContentBlock] = [TextContent(text=text), *images]
        return UserMessage(content=content, timestamp=self._core.now_ms())

    def _start_prompt(self, text: str, images: tuple[ImageContent, ...]) -> None:
        core = self._core
        self._check_model()
        core.flush_pending_custom()
        last = next((m for m in reversed(core.messages) if isinstance(m, AssistantMessage)), None)
        if last is not None:
            # Catches an aborted answer that left the context over the threshold.
            self._auto_compaction.after_answer(last, include_aborted=True)
        prompts: list[AgentMessage] = [self._user_message(text, images)]
        prompts.extend(core.queues.next_turn.drain())
        self._run_top_level(prompts)

    def _run_top_level(self, prompts: Sequence[AgentMessage]) -> None:
        core = self._core
        core.life.begin_run()
        core.abort_requested = False
        try:
            self._loop.run(prompts)
            while self._post_run():
                self._loop.continue_run()
        finally:
            # Pi appends the user's shell commands held during the run, then the held
            # custom messages, before the run settles.
            with self._user_shell.run_ending():
                core.flush_pending_custom()
                core.flush_held_records()
                core.life.end_run()
            self._settle()

    def _settle(self) -> None:
        core = self._core
        core.hook(core.relay.agent_settled)
        core.emit(records.AgentSettled())
        if core.queues.has_pending() and not core.abort_requested:
            # Queued after the run's last look at its queues: they start the next run.
            self._start_soon(self._run_queued)

    def _run_queued(self) -> None:
        queues = self._core.queues
        messages: list[AgentMessage] = list(queues.steering.drain() or queues.follow_up.drain())
        if messages:
            self._run_top_level(messages)

    def _post_run(self) -> bool:
        """After a low-level run: whether to continue it (Pi's post-run handling)."""
        core = self._core
        message, core.last_assistant = core.last_assistant, None
        if message is None or core.abort_requested:
            return False
        if self._retry.after_run(message, core.server_wait_ms):
            return True
        if self._auto_compaction.after_answer(message):
            return True
        return core.queues.has_pending()

    @contextmanager
    def _idle(self, what: str) -> Iterator[SessionCore]:
        """Drive the session for a change that needs it idle (``what`` names the change).

        :raises SessionBusyError: the agent works, on this thread or another (in the same
            words either way: the caller need not know which thread runs it).
        """
        self._check_alive()
        core = self._core
        busy = f"Wait for the agent to finish before you {what}."
        if self.is_busy_elsewhere():
            raise SessionBusyError(busy)
        with core.life.drive(what):
            if not core.life.is_idle():
                raise SessionBusyError(busy)
            yield core

    def set_provider(
        self,
        provider: Provider,
        thinking_level: str | None = None,
        *,
        on_replaced: Callable[[], None] | None = None,
    ) -> None:
        """Send the next requests to ``provider`` and record the change (a ``model_change``
        entry, as Pi's ``/model``, then a ``thinking_level_change`` when the level changes:
        to ``thinking_level`` where given (a model scope's ``:<level>``), else the new
        model's own startup level where it has one, else the configured default level where
        one is set, else the current one; as the model takes it); tools and the system
        prompt are collected again, since plugins shape them by the model's capabilities.
        ``on_replaced()`` is called once the previous model serves no request.

        While the agent works on another thread the change is taken as Pi takes it: the
        run's next request goes to ``provider``, and the entries are written just before
        it (or once the work under way is over).

        :raises SessionBusyError: this thread is inside a run, compaction or navigation.
        """
        core = self._core
        options = core.options
        info = provider.info
        per_model = options.model_thinking_levels.get(f"{info.provider}/{info.id}")
        # As Pi: the new model's own startup level if it has one, else the configured
        # default, else the current level; as the new model takes it.
        wanted = thinking_level or per_model or options.switch_thinking_level
        changed_level: str | None = None

        def switch() -> None:
            nonlocal changed_level
            core.provider = provider
            level = self._clamped(wanted or core.thinking_level)
            if level != core.thinking_level:
                changed_level = core.thinking_level = level
                core.emit(records.ThinkingLevelChanged(level))

        def record() -> None:
            core.manager.append_model_change(info.provider, info.id)
            if changed_level is not None:
                core.manager.append_thinking_level_change(changed_level)
            self.refresh_registrations()
            if on_replaced is not None:
                on_replaced()

        self._change_setting("change the model", switch, record)

    def set_thinking_level(self, level: str) -> None:
        """Use thinking level ``level`` from the next request on: as Pi's ``/thinking``, the
        level the model takes (the nearest it supports) is recorded in a
        ``thinking_level_change`` entry when it differs from the current one; new sessions
        start at ``level``, clamped to their model. During a run on another thread, the
        run's next request asks for it (see :meth:`set_provider`).

        :raises CtxmodesError: ``level`` is not one of Pi's levels.
        :raises SessionBusyError: this thread is inside a run, compaction or navigation.
        """
        from ctxmodes.thinking_levels import require_thinking_level

        require_thinking_level(level)
        core = self._core
        changed_level: str | None = None

        def switch() -> None:
            nonlocal changed_level
            core.options = core.options.with_thinking_level(level)
            # As Pi: the level the model takes, recorded only when it changes.
            effective = self._clamped(level)
            if effective != core.thinking_level:
                changed_level = core.thinking_level = effective
                core.emit(records.ThinkingLevelChanged(effective))

        def record() -> None:
            if changed_level is not None:
                core.manager.append_thinking_level_change(changed_level)

        self._change_setting("change the thinking level", switch, record)

    def _change_setting(
        self, what: str, switch: Callable[[], None], record: Callable[[], None]
    ) -> None:
        """Make a model or level change: ``switch`` changes what the next request uses,
        ``record`` writes it to the session. Idle, both at once. While another thread
        drives the session, ``switch`` at once and ``record`` held for that thread: a run
        records it before its next request (Pi writes such a change at once; the session
        file takes one writer), and whatever else drives it once its work is over."""
        self._check_alive()
        if self.is_busy_elsewhere():
            switch()
            self._hold_record(record)
            return
        with self._idle(what):
            switch()
            record()

    def _hold_record(self, record: Callable[[], object]) -> None:
        """Leave ``record`` to the thread driving the session: a run calls it before its
        next request or as it ends, whatever else drives it once its work is over."""
        core = self._core
        core.held_records.append(record)
        core.life.run_or_defer(self._guarded(core.flush_held_records))

    def change_options(self, change: Callable[[HostOptions], HostOptions]) -> None:
        """Run with ``change(options)`` from now on, also while the agent works, as Pi
        changes its settings: the steering and follow-up queues deliver by its modes from
        their next delivery, automatic compaction and retries follow it from their next
        check (see :meth:`HostOptions.with_queue_mode` and the like)."""
        self._check_alive()
        core = self._core
        options = change(core.options)
        core.options = options
        core.queues.steering.mode = options.steering_mode
        core.queues.follow_up.mode = options.follow_up_mode

    def _clamped(self, level: str) -> str:
        """``level`` as the session's model takes it (Pi's ``clampThinkingLevel``)."""
        from ctxmodes.thinking_levels import clamp_thinking_level

        model = self._core.model
        if model is None:
            return "off"
        return clamp_thinking_level(level, model.capabilities.supported_thinking_levels())

    def set_session_name(self, name: str) -> str | None:
        """Name the session as Pi's ``setSessionName``: a ``session_info`` entry (its name
        sanitised as Pi's), then a :class:`~ctxmodes.host.records.SessionInfoChanged` record
        with the name the session has now. Returns the entry id; ``None`` while the agent
        works on another thread: the name is then written and told as a model change is
        (see :meth:`set_provider`), since the run holds the session file.

        :raises SessionBusyError: this thread is inside a run, compaction or navigation.
        """
        core = self._core

        def record() -> str:
            entry_id = core.manager.append_session_info(name)
            core.emit(records.SessionInfoChanged(core.manager.get_session_name()))
            return entry_id

        self._check_alive()
        if self.is_busy_elsewhere():
            self._hold_record(record)
            return None
        with self._idle("name the session"):
            return record()

    def run_shell_command(
        self,
        command: str,
        *,
        exclude_from_context: bool | None = None,
        controller: AbortController | None = None,
        on_output: Callable[[str], None] | None = None,
    ) -> BashExecutionMessage:
        """Run a shell command the user typed (``!cmd``; ``!!cmd`` with
        ``exclude_from_context``) in a new bash in the session's directory, as Pi's
        ``executeBash``, and record it (see :meth:`record_shell_command`) unless the
        session was replaced or closed meanwhile (which stops it); returns its message.
        The plugins' ``ctx_user_bash`` is asked first: it may answer for the command or run
        it its own way. ``controller`` (or :meth:`abort_shell_commands`) stops it;
        ``on_output`` gets each piece of its cleaned output as it arrives
        (:mod:`ctxmodes.host.user_shell`).

        :raises ToolError: bash cannot be started, or a plugin's runner failed (nothing
            is recorded).
        """
        self._check_alive()
        message = self._user_shell.run(
            command,
            exclude_from_context=exclude_from_context,
            controller=controller,
            on_output=on_output,
        )
        if not self._stale:  # else it ended after the session was replaced or closed
            self._user_shell.record(message)
        return message

    def abort_shell_commands(self) -> None:
        """Stop the shell commands of :meth:`run_shell_command` running now (Pi's
        ``abortBash``): each is recorded as cancelled."""
        self._user_shell.abort()

    def record_shell_command(self, message: BashExecutionMessage) -> None:
        """Record a shell command the user ran and its output, as Pi's
        ``recordBashResult``: persisted, added to the context (the model reads it with the
        next prompt unless excluded), seen by listeners; no hook runs. During a run it is
        held until the run ends, as in Pi; otherwise it is appended now, or after the work
        another thread drives the session for."""
        self._check_alive()
        self._user_shell.record(message)

    # ================================================================ compaction

    def compact(self, custom_instructions: str | None = None) -> CompactionEntry:
        """Compact now (``/compact``): abort and wait for a run in progress first.

        :raises SessionBusyError: called from inside this session's run, or a compaction or
            navigation is in progress.
        :raises CtxmodesError: nothing to compact, cancelled, or the summary failed.
        """
        self._check_alive()
        life = self._core.life
        if life.is_driver():
            if life.run_active:
                raise SessionBusyError("cannot compact from inside the session's own run")
        elif life.has_driver():
            # As Pi: a manual compaction stops what runs and waits for it to settle.
            self.abort()
            life.wait_until_released()
        with life.drive("compact"):
            try:
                with life.doing("compaction"):
                    return self._compactor.compact(
                        "manual", custom_instructions=custom_instructions
                    )
            finally:
                self._release_held()

    # ================================================================ navigation

    def navigate_tree(self, request: NavigationRequest) -> TreeNavigationResult:
        """Move the leaf (see :meth:`ctxmodes.hostapi.TreeNavigation.navigate_tree`)."""
        self._check_alive()
        life = self._core.life
        with life.drive("navigate the session tree"):
            if life.run_active:
                raise SessionBusyError(NAVIGATE_WHILE_RUNNING)
            if request.target_id == self._core.manager.get_leaf_id():
                return TreeNavigationResult(cancelled=False, new_leaf_id=request.target_id)
            try:
                with life.doing("branch_summary"):
                    return self._navigator.navigate(request)
            finally:
                self._release_held()


class _TurnHold:
    """The :class:`~ctxmodes.hostapi.TurnHold` of one :meth:`AgentSession.hold_turns`."""

    __slots__ = ("_session",)

    def __init__(self, session: AgentSession) -> None:
        self._session: AgentSession | None = session

    def release(self, *, start_turns: bool = True) -> None:
        session, self._session = self._session, None
        if session is not None:
            session._release_turns(start_turns)
