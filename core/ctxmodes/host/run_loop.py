"""One low-level run: Pi's agent loop, from ``agent_start`` to ``agent_end``.

A run delivers its prompt messages, then repeats turns — a model request, then the tool
calls of the answer — while the model calls tools or steering messages wait; when it would
stop, queued follow-ups start another round. An assistant message that ended in ``error`` or
``aborted`` ends the run after its turn. Event order (hooks, then listener records)::

    agent_start, turn_start, [message_start/end per prompt],
      context, provider_request, message_start, message_update*, message_end,
      [tool calls, see ctxmodes.host.tool_batch], turn_end,
    turn_start, [steering messages], context, … , agent_end

What happens after the run (compaction, continuing with queued messages, settling) is the
session's business (:mod:`ctxmodes.host.session`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from ctxmodes import library_log
from ctxmodes.abort import AbortController, AbortSignal
from ctxmodes.errors import CtxmodesError
from ctxmodes.events import ContextProjection, ProviderRequestEvent, TurnEndEvent
from ctxmodes.host import records
from ctxmodes.host.branch_view import LazyBranch
from ctxmodes.host.core import SessionCore
from ctxmodes.host.queues import MessageQueue
from ctxmodes.host.shaping import shape_messages, without_images
from ctxmodes.host.tool_batch import fail_truncated_calls, run_tool_calls
from ctxmodes.providers.base import (
    ModelRequest,
    StreamDone,
    StreamError,
    ToolSchema,
    TransportRetry,
)
from ctxmodes.session.convert import LlmMessage as StoredLlmMessage
from ctxmodes.session.convert import convert_to_llm
from ctxmodes.session.models import (
    AgentMessage,
    AssistantMessage,
    Cost,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
)

_log = library_log.logger(__name__)

#: The error text of a request that was aborted before it was sent (the model layer's words).
ABORTED_REQUEST_MESSAGE: Final = "Request was aborted"
#: The error text of a turn whose context a plugin failed to project: nothing was sent.
PROJECTION_FAILED_MESSAGE: Final = (
    "Nothing was sent: a plugin failed to decide what the model sees (see the plugin error)"
)


def zero_usage() -> Usage:
    return Usage(
        input=0,
        output=0,
        cache_read=0,
        cache_write=0,
        total_tokens=0,
        cost=Cost(input=0, output=0, cache_read=0, cache_write=0, total=0),
    )


class RunLoop:
    """Runs of one session (see the module docstring)."""

    def __init__(self, core: SessionCore, before_next_turn: Callable[[], None]) -> None:
        """:param before_next_turn: called between turns of a run, before steering is
        polled (the session's mid-run compaction check)."""
        self._core = core
        self._before_next_turn = before_next_turn
        self._turn_index = 0

    # ------------------------------------------------------------------ entry points

    def run(self, prompts: Sequence[AgentMessage], *, skip_initial_steering: bool = False) -> None:
        """A run whose first turn starts with ``prompts`` (Pi's ``agent.prompt``)."""
        signal = self._begin()
        new_messages: list[AgentMessage] = []
        self._execute(signal, new_messages, prompts, skip_initial_steering)

    def continue_run(self) -> None:
        """Go on from the current context (Pi's ``agent.continue``): after an assistant
        message only queued steering or follow-up messages can start a run.

        :raises CtxmodesError: nothing to continue from.
        """
        messages = self._core.messages
        if not messages:
            raise CtxmodesError("No messages to continue from")
        if isinstance(messages[-1], AssistantMessage):
            steering = self._drain(self._core.queues.steering)
            if steering:
                self.run(steering, skip_initial_steering=True)
                return
            follow_ups = self._drain(self._core.queues.follow_up)
            if follow_ups:
                self.run(follow_ups)
                return
            raise CtxmodesError("Cannot continue from message role: assistant")
        signal = self._begin()
        self._execute(signal, [], (), False)

    # ------------------------------------------------------------------ the loop

    def _begin(self) -> AbortSignal:
        controller = AbortController()
        self._core.run_controller = controller
        if self._core.abort_requested:
            controller.abort()
        return controller.signal

    def _execute(
        self,
        signal: AbortSignal,
        new_messages: list[AgentMessage],
        prompts: Sequence[AgentMessage],
        skip_initial_steering: bool,
    ) -> None:
        core = self._core
        self._turn_index = 0
        core.hook(core.relay.agent_start)
        core.emit(records.AgentStarted())
        try:
            self._turn_start()
            for prompt in prompts:
                self._deliver(prompt, new_messages)
            self._loop(signal, new_messages, skip_initial_steering)
        except Exception as exc:
            if core.options.raise_hook_errors:
                raise
            # As Pi: whatever breaks a run ends it with an error message the user can see.
            # A store or plugin error says what happened in its message; anything else is a
            # bug, whose traceback is worth logging.
            if isinstance(exc, CtxmodesError):
                _log.info("run failed: %s", exc)
            else:
                _log.exception("run failed")
            failure = self._failure_message(str(exc) or type(exc).__name__, signal.aborted)
            core.emit(records.MessageStarted(failure.role, None))
            ended = core.end_message(failure)
            message = ended if isinstance(ended, AssistantMessage) else failure
            self._turn_end(message, ())
            new_messages.append(message)
            self._agent_end(new_messages)

    def _loop(
        self, signal: AbortSignal, new_messages: list[AgentMessage], skip_initial_steering: bool
    ) -> None:
        core = self._core
        pending = [] if skip_initial_steering else self._drain(core.queues.steering)
        first_turn = True
        while True:
            more_tool_calls = True
            while more_tool_calls or pending:
                if not first_turn:
                    self._before_next_turn()
                    if not pending:
                        pending = self._drain(core.queues.steering)
                    self._turn_start()
                first_turn = False
                for message in pending:
                    self._deliver(message, new_messages)
                pending = []
                assistant = self._stream(signal)
                new_messages.append(assistant)
                if assistant.stop_reason in ("error", "aborted"):
                    self._turn_end(assistant, ())
                    self._agent_end(new_messages)
                    return
                calls = [block for block in assistant.content if isinstance(block, ToolCall)]
                results: tuple[ToolResultMessage, ...] = ()
                more_tool_calls = False
                if calls:
                    if assistant.stop_reason == "length":
                        batch = fail_truncated_calls(core, calls)
                    else:
                        batch = run_tool_calls(core, calls, signal)
                    results = batch.results
                    more_tool_calls = not batch.terminate
                    new_messages.extend(results)
                self._turn_end(assistant, results)
                pending = self._drain(core.queues.steering)
            follow_ups = self._drain(core.queues.follow_up)
            if not follow_ups:
                break
            pending = follow_ups
        self._agent_end(new_messages)

    # ------------------------------------------------------------------ steps

    def _drain(self, queue: MessageQueue) -> list[AgentMessage]:
        return list(queue.drain())

    def _deliver(self, message: AgentMessage, new_messages: list[AgentMessage]) -> None:
        queues = self._core.queues
        if queues.started(message):
            # As Pi: a queued message leaves the queues as it starts, said just before.
            self._core.emit(records.QueueUpdated(queues.steering.texts(), queues.follow_up.texts()))
        self._core.emit(records.MessageStarted(message.role, message))
        new_messages.append(self._core.end_message(message))

    def _turn_start(self) -> None:
        self._core.hook(self._core.relay.turn_start, self._turn_index)
        self._core.emit(records.TurnStarted(self._turn_index))

    def _turn_end(self, message: AssistantMessage, results: tuple[ToolResultMessage, ...]) -> None:
        core = self._core
        core.hook(core.relay.turn_end, TurnEndEvent(self._turn_index, message, results))
        core.emit(records.TurnEnded(self._turn_index, message, results))
        # The first point where a held custom message cannot land between a tool call and
        # its result.
        core.flush_pending_custom()
        self._turn_index += 1

    def _agent_end(self, new_messages: list[AgentMessage]) -> None:
        self._core.queues.forget_taken()
        self._core.hook(self._core.relay.agent_end, list(new_messages))
        ended = tuple(new_messages)
        self._core.emit(records.AgentEnded(ended, will_retry=self._core.will_retry(ended)))

    def _stream(self, signal: AbortSignal) -> AssistantMessage:
        """One model request on the current context; the answer is ended and persisted."""
        core = self._core
        # A model or level changed during the run is recorded before the request using it.
        core.flush_held_records()
        projection = ContextProjection(
            messages=core.messages.snapshot(), branch=LazyBranch(core.manager)
        )
        projected = core.project_context(projection)
        if projected:
            core.emit(records.ContextProjected(len(projection.messages)))
        provider = core.provider
        if signal.aborted or provider is None or not projected:
            # Nothing is sent: the run was aborted between turns, there is no model, or the
            # context could not be projected (fail closed).
            if signal.aborted:
                reason = ABORTED_REQUEST_MESSAGE
            elif provider is None:
                reason = "No model selected"
            else:
                reason = PROJECTION_FAILED_MESSAGE
            message = self._failure_message(reason, signal.aborted)
            core.emit(records.MessageStarted(message.role, None))
            return self._end_assistant(message)
        request = ModelRequest(
            system_prompt=core.system_prompt,
            messages=shape_messages(self._sent(projection.messages), core.now_ms),
            tools=[ToolSchema.from_tool(tool) for tool in core.tools.values()],
            session_id=core.manager.session_id,
            # As Pi's agent loop: the live level, and no level at all for "off".
            reasoning=None if core.thinking_level == "off" else core.thinking_level,
            thinking_budgets=dict(core.options.thinking_budgets) or None,
        )
        event = ProviderRequestEvent(
            request=request,
            transport=provider.transport,
            capabilities=provider.info.capabilities,
        )
        core.hook(core.relay.provider_request, event)
        core.emit(records.ProviderRequested(event.request, provider.transport))
        core.emit(records.MessageStarted("assistant", None))
        final: AssistantMessage | None = None
        core.server_wait_ms = None
        try:
            for item in provider.stream(event.request, signal):
                if isinstance(item, StreamDone | StreamError):
                    final = item.message
                    if isinstance(item, StreamError):
                        core.server_wait_ms = item.retry_after_ms
                        if item.hint:
                            core.ui.notify(item.hint, "warning")
                    break
                if isinstance(item, TransportRetry):
                    core.emit(records.TransportRetryScheduled.of(item))
                    continue
                core.emit(records.MessageUpdated(item))
        except Exception as exc:
            _log.info("model call failed: %s", exc)
            final = self._failure_message(str(exc) or type(exc).__name__, signal.aborted)
        if final is None:
            final = self._failure_message("the model stream ended without a message", False)
        return self._end_assistant(final)

    def _end_assistant(self, message: AssistantMessage) -> AssistantMessage:
        ended = self._core.end_message(message)
        return ended if isinstance(ended, AssistantMessage) else message

    def _sent(self, messages: Sequence[AgentMessage]) -> list[StoredLlmMessage]:
        """What the model is sent of ``messages``: as Pi's ``convertToLlm`` converts them,
        without images when ``block_images`` (Pi's ``images.blockImages``) is on."""
        converted = convert_to_llm(messages)
        return without_images(converted) if self._core.options.block_images else converted

    def _failure_message(self, error: str, aborted: bool) -> AssistantMessage:
        """The assistant message recording a run that broke (Pi's run-failure message)."""
        model = self._core.model
        return AssistantMessage(
            content=[TextContent(text="")],
            api=model.api if model else "unknown",
            provider=model.provider if model else "unknown",
            model=model.id if model else "unknown",
            usage=zero_usage(),
            stop_reason="aborted" if aborted else "error",
            error_message=error,
            timestamp=self._core.now_ms(),
        )
