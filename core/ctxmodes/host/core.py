"""The state of one running session, shared by its run loop, compactor and navigator.

:class:`SessionCore` holds what a session *is* (its store, model, tools, the messages of its
context, its queues) and the primitive steps every flow uses: calling a hook safely,
emitting a listener record, ending a message (hook, persistence, context), appending custom
messages. The flows themselves live in :mod:`~ctxmodes.host.run_loop`,
:mod:`~ctxmodes.host.compactor` and :mod:`~ctxmodes.host.navigator`; the public face is
:class:`ctxmodes.host.session.AgentSession`.

The context messages (``messages``) are the run's working copy of the active branch's
context, as Pi keeps them in its agent state: messages are appended as they end, and the list
is rebuilt from the store only after the branch changed under it (navigation, compaction,
session start), so a turn never re-reads the session. The part read from the store is decoded
where it is read (:class:`~ctxmodes.host.message_list.MessageList`), so a context that is a
whole long session costs its index, not a model per message.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from ctxmodes import library_log
from ctxmodes.abort import AbortController, AbortSignal
from ctxmodes.errors import plugin_failure
from ctxmodes.events import (
    ContextProjection,
    NewContextOutcome,
    NewContextRequest,
    RetrievalRequest,
    RetrievalResult,
    ToolCallBlock,
    ToolCallEvent,
    ToolResultEvent,
)
from ctxmodes.host import records
from ctxmodes.host.lifecycle import Lifecycle
from ctxmodes.host.listeners import Listeners
from ctxmodes.host.message_list import MessageList
from ctxmodes.host.options import HostOptions
from ctxmodes.host.queues import RunQueues
from ctxmodes.host.records import HostRecord
from ctxmodes.host.summarizer import ProviderSummarizer
from ctxmodes.session.models import (
    AgentMessage,
    AssistantMessage,
    CompactionEntry,
    CustomMessage,
    SessionEntry,
    ThinkingLevelChangeEntry,
    ToolResultMessage,
    UserMessage,
)
from ctxmodes.tools import session_env
from ctxmodes.tools.base import Tool, ToolContext, ToolResult

if TYPE_CHECKING:
    from ctxmodes.hooks import HookRelay
    from ctxmodes.hostapi import HostSession, UserInterface
    from ctxmodes.providers.base import ModelInfo, Provider, RequestPurpose
    from ctxmodes.session.manager import SessionManager

_log = library_log.logger(__name__)

P = ParamSpec("P")
R = TypeVar("R")

_PERSISTED_ROLES = (UserMessage, AssistantMessage, ToolResultMessage)


class SessionCore:
    """State and primitive steps of one session (see the module docstring)."""

    def __init__(
        self,
        *,
        session: HostSession,
        manager: SessionManager,
        relay: HookRelay,
        provider: Provider | None,
        cwd: Path,
        ui: UserInterface,
        options: HostOptions,
        listeners: Listeners,
    ) -> None:
        self.session = session
        self.manager = manager
        self.relay = relay
        self.provider = provider
        self.cwd = cwd
        self.ui = ui
        self.options = options
        self.listeners = listeners
        self.life = Lifecycle()
        # Hook implementations never run concurrently, even when input arrives on a UI
        # thread during a run: plugins need not be thread-safe.
        self._hook_lock = threading.RLock()
        self.queues = RunQueues()
        self.queues.steering.mode = options.steering_mode
        self.queues.follow_up.mode = options.follow_up_mode
        self.tools: dict[str, Tool] = {}
        self.system_prompt = ""
        self.messages = MessageList()
        #: Custom messages sent without a trigger during a run, appended at the turn's end.
        self.pending_custom: list[CustomMessage] = []
        #: How model and thinking-level changes made during a run on another thread are
        #: recorded (their entries, the registrations the model shapes), in the order made:
        #: by the run before its next request, or once the work under way is over.
        self.held_records: list[Callable[[], object]] = []
        #: The assistant message of the last turn, for the checks after a run.
        self.last_assistant: AssistantMessage | None = None
        self.overflow_recovery_attempted = False
        #: How long the server asked to wait before another request, when the last answer
        #: failed with such a request (``Retry-After``); read by the retry after a run.
        self.server_wait_ms: float | None = None
        #: Told about every assistant message as it ends (the retry series watches them).
        self.on_answer_end: Callable[[AssistantMessage], None] | None = None
        #: Whether a run ending with these messages is about to be retried (``agent_end``
        #: says so before the retry series decides).
        self.will_retry: Callable[[Sequence[AgentMessage]], bool] = lambda _messages: False
        #: Aborts the model call or tool of the current run.
        self.run_controller: AbortController | None = None
        #: Aborts the compaction or branch summary in progress.
        self.activity_controller: AbortController | None = None
        #: Set by ``abort()``: the current top-level run must not continue automatically.
        self.abort_requested = False
        self.rebuild_messages()
        #: The thinking level requests ask for, as Pi's agent state holds it: the active
        #: branch's level when the session opens, then every level recorded since (``/thinking``
        #: or a plugin appending a ``thinking_level_change``); a navigation keeps it.
        self.thinking_level = manager.build_session_context().thinking_level
        self.stop_following_levels = manager.subscribe(self._follow_thinking_level)

    # ------------------------------------------------------------------ basics

    @property
    def model(self) -> ModelInfo | None:
        return None if self.provider is None else self.provider.info

    def now_ms(self) -> int:
        return self.options.clock()

    def emit(self, record: HostRecord) -> None:
        self.listeners.emit(record)

    def hook(self, call: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R | None:
        """Call a hook, one at a time across threads; a failing plugin is reported and
        treated as having returned nothing (as Pi treats a failing extension handler), unless
        the options say to raise."""
        return self._guarded(call, *args, **kwargs)[0]

    def _guarded(
        self, call: Callable[P, R], *args: P.args, **kwargs: P.kwargs
    ) -> tuple[R | None, Exception | None]:
        """:meth:`hook`, with the error of a failing plugin (reported) beside the result, for
        the hooks whose failure must not count as nothing."""
        try:
            with self._hook_lock:
                return call(*args, **kwargs), None
        except Exception as exc:
            if self.options.raise_hook_errors:
                raise
            self._report_plugin_failure(getattr(call, "__name__", "hook"), exc)
            return None, exc

    def _report_plugin_failure(self, hook: str, error: Exception) -> None:
        """One line to the user, with where the plugin raised; the traceback only as a debug
        record (a warning would reach standard error, over the terminal's screen, through
        Python's last-resort handler when no logging is configured)."""
        _log.debug("plugin failed in %s", hook, exc_info=error)
        self.ui.notify(f"plugin error in {hook}: {plugin_failure(error)}", "error")

    def _follow_thinking_level(self, entry: SessionEntry) -> None:
        if isinstance(entry, ThinkingLevelChangeEntry):
            self.thinking_level = entry.thinking_level

    def rebuild_messages(self) -> None:
        """Re-read the context at the leaf (after the branch changed under the run)."""
        self.messages = MessageList(self.manager.build_session_context().messages)

    def latest_compaction(self) -> CompactionEntry | None:
        """The latest compaction entry on the active branch.

        The context's entries start with it when there is one; asking for them costs
        O(context), where scanning the branch would cost O(session).
        """
        entries = self.manager.build_context_entries()
        first = entries[0] if len(entries) else None
        return first if isinstance(first, CompactionEntry) else None

    # ------------------------------------------------------------------ messages

    def end_message(self, message: AgentMessage) -> AgentMessage:
        """Finish ``message``: ``ctx_message_end`` (which may replace it), persistence, the
        run's context, then the ``message_end`` record."""
        replacement = self.hook(self.relay.message_end, message)
        if replacement is not None:
            if replacement.role == message.role:
                message = replacement
            else:
                self.ui.notify(
                    f"ignored a {replacement.role} message returned for a {message.role} "
                    "message by ctx_message_end",
                    "error",
                )
        entry_id: str | None = None
        if isinstance(message, CustomMessage):
            entry_id = self._append_custom_entry(message)
        elif isinstance(message, _PERSISTED_ROLES):
            entry_id = self.manager.append_message(message)
        self.messages.append(message)
        if isinstance(message, AssistantMessage):
            self.last_assistant = message
            if message.stop_reason not in ("error", "length"):
                self.overflow_recovery_attempted = False
            if self.on_answer_end is not None:
                self.on_answer_end(message)
        self.emit(records.MessageEnded(message, entry_id))
        return message

    def append_custom_now(self, message: CustomMessage) -> None:
        """Append a custom message outside a run's message flow: persisted and added to the
        context; listeners see it, hooks do not (as in Pi)."""
        self.emit(records.MessageStarted(message.role, message))
        entry_id = self._append_custom_entry(message)
        self.messages.append(message)
        self.emit(records.MessageEnded(message, entry_id))

    def flush_pending_custom(self) -> None:
        """Append the custom messages held until the end of the current turn."""
        while self.pending_custom:
            self.append_custom_now(self.pending_custom.pop(0))

    def flush_held_records(self) -> None:
        """Record the changes held during the run (on the thread driving the session)."""
        while self.held_records:
            self.held_records.pop(0)()

    def _append_custom_entry(self, message: CustomMessage) -> str:
        return self.manager.append_custom_message_entry(
            message.custom_type, message.content, message.display, message.details
        )

    # ------------------------------------------------------------------ tools (BatchHost)

    def find_tool(self, name: str) -> Tool | None:
        return self.tools.get(name)

    def check_tool_call(self, event: ToolCallEvent) -> ToolCallBlock | None:
        block, failure = self._guarded(self.relay.tool_call, event)
        if failure is not None:
            # A plugin that fails while vetting a call blocks it, as Pi does.
            return ToolCallBlock(reason=str(failure) or type(failure).__name__)
        return block

    def project_context(self, projection: ContextProjection) -> bool:
        """``ctx_project_context``; ``False`` when a plugin failed (reported), and then no
        request may go out: the projection decides what the model may see, and without it
        the whole session would be sent, which can be far more than the model's window, or
        than the user meant to pay for."""
        return self._guarded(self.relay.project_context, projection)[1] is None

    def patch_tool_result(self, event: ToolResultEvent) -> None:
        self.hook(self.relay.tool_result, event)

    def auto_resize_images(self) -> bool:
        return self.options.auto_resize_images

    def tool_context(
        self, signal: AbortSignal, on_update: Callable[[ToolResult], None]
    ) -> ToolContext:
        return ToolContext(
            cwd=self.cwd,
            signal=signal,
            on_update=on_update,
            session=self.session,
            hooks=_ToolHooks(self),
            session_environment=self.session_environment,
        )

    def session_environment(self) -> dict[str, str]:
        """The ``PI_*`` variables of a shell command started now: this session's id and
        file, the selected model and the level it takes, as Pi's agent state holds them."""
        model = self.model
        return session_env.session_environment(
            session_id=self.manager.session_id,
            session_file=self.manager.session_file,
            provider=None if model is None else model.provider,
            model=None if model is None else model.id,
            reasoning_level=self.thinking_level,
        )

    # ------------------------------------------------------------------ summaries

    def summarizer(
        self, signal: AbortSignal, purpose: RequestPurpose, reason: str | None = None
    ) -> ProviderSummarizer:
        """The session's model for one summarization (of a compaction set off by
        ``reason``). Compaction calls carry the session's thinking level when the model
        reasons and the level is not ``off``; branch summaries carry none (both as Pi
        0.85)."""
        assert self.provider is not None
        reasoning: str | None = None
        if purpose == "compaction" and self.provider.info.capabilities.reasoning:
            level = self.thinking_level
            reasoning = level if level and level != "off" else None
        return ProviderSummarizer(
            self.provider,
            signal,
            purpose,
            self.emit,
            reasoning,
            retry=self.options.retry,
            reason=reason,
        )


class _ToolHooks:
    """The hooks tools call (:class:`~ctxmodes.tools.base.ToolHooks`), serialized and
    reported like every other hook call of the session."""

    def __init__(self, core: SessionCore) -> None:
        self._core = core

    def new_context(self, request: NewContextRequest) -> NewContextOutcome | None:
        return self._core.hook(self._core.relay.new_context, request)

    def retrieve(self, request: RetrievalRequest) -> RetrievalResult | None:
        return self._core.hook(self._core.relay.retrieve, request)
