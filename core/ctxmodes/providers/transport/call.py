"""One model call's machinery, shared by every wire format.

:class:`CallContext` carries what a call needs besides the model and its inputs: the HTTP
seam, the abort signal, the event sink, the clock. :meth:`CallContext.run` owns the
lifecycle pi-ai gives every transport: the message starts empty with ``stopReason``
``pending``; ``start`` is emitted once the response is accepted; any failure keeps what
streamed so far and ends with ``stopReason`` ``error`` (or ``aborted`` when the signal
fired) and Pi's ``errorMessage``; exactly one ``done`` or ``error`` event ends the stream.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar

import httpx

from ctxmodes.abort import AbortSignal
from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.http import HttpSeam, guarded
from ctxmodes.providers.jsvalues import dumps, pi_user_agent
from ctxmodes.providers.transport.budget import clamp_max_tokens
from ctxmodes.providers.transport.options import check_api_key
from ctxmodes.providers.transport.retry import (
    TIMED_OUT,
    RetryListener,
    failed_status,
    requested_wait,
)
from ctxmodes.providers.wire import (
    Emit,
    JsonObject,
    PiContext,
    PiMessage,
    StreamOptions,
    WireError,
    WireEvent,
    new_output,
    strip_scratch,
    wall_clock_ms,
)

#: What a dropped connection reads as (Node's wording, which Pi stores).
TERMINATED = "terminated"

T = TypeVar("T")


def _ignore(_: WireEvent) -> None:
    return None


@dataclass
class CallContext:
    """Everything a call uses besides the model, context and options.

    :ivar on_retry: told ``(attempt, delay_ms, error text)`` before each transport-level
        retry, so a front end can show it as it happens.
    """

    seam: HttpSeam
    signal: AbortSignal
    emit: Emit = _ignore
    now_ms: Callable[[], int] = wall_clock_ms
    on_retry: RetryListener | None = None
    #: Set when the call failed on an answer that said how long to wait (``Retry-After``).
    retry_after_ms: float | None = None
    #: The HTTP status of the answer the call failed on, if it failed on one.
    failed_status: int | None = None
    _started: bool = field(default=False, repr=False)

    @property
    def user_agent(self) -> str:
        return self.seam.user_agent or pi_user_agent()

    def client(self, timeout_ms: int | None) -> httpx.Client:
        return self.seam.client(timeout_ms / 1000 if timeout_ms else None)

    def encode(self, body: JsonObject) -> bytes:
        return dumps(body)

    def started(self) -> None:
        if not self._started:
            self._started = True
            self.emit(WireEvent("start"))

    def run(self, model: ModelSpec, api: str, body: Callable[[PiMessage], None]) -> PiMessage:
        """Run ``body(output)`` under the lifecycle above; returns the final message."""
        output = new_output(model, api, self.now_ms())
        try:
            with guarded(self.signal):
                body(output)
        except WireError as error:
            self.retry_after_ms = requested_wait(error)
            self.failed_status = failed_status(error)
            return self._fail(output, str(error))
        except httpx.TimeoutException:
            return self._fail(output, TIMED_OUT)
        except httpx.HTTPError as error:
            return self._fail(output, str(error) or TERMINATED)
        strip_scratch(output)
        self.emit(WireEvent("done", reason=output["stopReason"]))
        return output

    def _fail(self, output: PiMessage, message: str) -> PiMessage:
        strip_scratch(output)
        output["stopReason"] = "aborted" if self.signal.aborted else "error"
        output["errorMessage"] = message
        self.emit(WireEvent("error", reason=output["stopReason"]))
        return output

    def guard(self, events: Iterable[T], signal: AbortSignal) -> Iterator[T]:
        """``events``, ending quietly once ``signal`` aborts; transport failures mid-body
        become Pi's texts (``terminated``, the timeout message)."""
        iterator = iter(events)
        while not signal.aborted:
            try:
                event = next(iterator)
            except StopIteration:
                return
            except httpx.TimeoutException as error:
                if signal.aborted:
                    return
                raise WireError(TIMED_OUT) from error
            except httpx.TransportError as error:
                if signal.aborted:
                    return
                raise WireError(TERMINATED) from error
            yield event


def reasoning_effort(model: ModelSpec, level: str | None) -> str | None:
    """The thinking level to send: the session's level clamped to the model's, none if off."""
    if not level:
        return None
    clamped = model.clamp_thinking_level(level)
    return None if clamped == "off" else clamped


#: A format's request, run by :func:`stream_simple`: ``(model, context, options, call,
#: api_key, effort, output)``.
CallBody = Callable[
    [ModelSpec, PiContext, StreamOptions, CallContext, str, str | None, PiMessage], None
]
#: A format's ``stream(model, context, options, call)``.
Stream = Callable[[ModelSpec, PiContext, StreamOptions, CallContext], PiMessage]


def stream_simple(api: str, body: CallBody) -> Stream:
    """The ``stream`` of a format run as pi-ai's ``streamSimple`` runs most of them: the key
    checked before anything is sent, the thinking level clamped, ``maxTokens`` fitted into
    the window, then ``body(model, context, options, call, api_key, effort, output)`` run
    under the call's lifecycle."""

    def stream(
        model: ModelSpec, context: PiContext, options: StreamOptions, call: CallContext
    ) -> PiMessage:
        """One call, pi-ai's ``streamSimple``: returns the final message (also on failure).

        :raises WireError: no API key (pi-ai throws before streaming; nothing to store).
        """
        api_key = check_api_key(model, options)
        effort = reasoning_effort(model, options.reasoning)
        options.max_tokens = clamp_max_tokens(model, context, options.max_tokens)
        return call.run(
            model,
            api,
            lambda output: body(model, context, options, call, api_key, effort, output),
        )

    return stream
