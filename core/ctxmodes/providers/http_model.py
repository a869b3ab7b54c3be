"""A model behind one of the built-in wire formats, as a host :class:`Provider`.

:class:`HttpModelProvider` turns the host's :class:`ModelRequest` into pi-ai's context and
options, runs the wire format for ``model.api`` and turns pi-ai's events into the host's
stream events. Credentials are asked for on every request (tokens expire), through the
``api_key`` callable.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from queue import Queue
from typing import Literal

from ctxmodes.abort import AbortSignal
from ctxmodes.providers.apis import capabilities_for, stream_function
from ctxmodes.providers.apis.openai_codex_responses.request import backend_base, identity_headers
from ctxmodes.providers.auth import ResolvedAuth
from ctxmodes.providers.backend import BackendRoute
from ctxmodes.providers.base import (
    DeveloperMessage,
    EncryptedToolOutput,
    ModelInfo,
    ModelRequest,
    NamespaceToolSchema,
    Provider,
    ProviderError,
    RequestMessage,
    StreamDone,
    StreamError,
    StreamEvent,
    TextDelta,
    ThinkingComplete,
    ThinkingDelta,
    ToolCallComplete,
    ToolSchema,
    TransportRetry,
)
from ctxmodes.providers.call_threads import run_on_call_thread
from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.http import HttpSeam
from ctxmodes.providers.jsvalues import pi_user_agent
from ctxmodes.providers.request_settings import ProviderRetrySettings
from ctxmodes.providers.secrets import is_sensitive_header, scrub
from ctxmodes.providers.transport.call import CallContext
from ctxmodes.providers.wire import (
    JsonObject,
    PiContext,
    PiMessage,
    StreamOptions,
    WireError,
    WireEvent,
)
from ctxmodes.session.models import AssistantMessage, ThinkingContent, ToolCall, to_json

#: The key for each request, or everything a request authenticates with (a key, headers
#: such as Anthropic's bearer token, the credential's own settings); ``None``: none.
ApiKeySource = Callable[[], "str | ResolvedAuth | None"]


def _tool(tool: ToolSchema | NamespaceToolSchema) -> JsonObject:
    if isinstance(tool, NamespaceToolSchema):
        return {
            "name": tool.name,
            "description": tool.description,
            "tools": [_tool(inner) for inner in tool.tools],
        }
    converted: JsonObject = {
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.parameters,
    }
    if tool.strict_sampling is not None:
        converted["constrainedSampling"] = {"type": "json_schema", "strict": tool.strict_sampling}
    return converted


def _message(message: RequestMessage) -> PiMessage:
    if isinstance(message, EncryptedToolOutput):
        # Never persisted; the Responses codec sends ``output`` as the call's output items.
        return {
            "role": "encryptedToolOutput",
            "toolCallId": message.tool_call_id,
            "toolName": message.tool_name,
            "output": message.output_items(),
            "timestamp": message.timestamp or 0,
        }
    if isinstance(message, DeveloperMessage):
        return {"role": "developer", "content": [to_json(block) for block in message.content]}
    return to_json(message)


class HttpModelProvider(Provider):
    """One model on one endpoint, spoken to with the transport of its ``api``.

    :param model: the model and endpoint (``base_url``, headers, compat flags).
    :param api_key: returns the key or token for each request (``None``: none configured).
    :param missing_key_hint: appended to the error when no key is available (which variable
        to set, which command to run).
    :param seam: where requests go (an injected httpx transport in tests).
    :param keyless: the endpoint may be used without a key (a configured local server):
        without one, requests go without an ``Authorization`` header.
    """

    def __init__(
        self,
        model: ModelSpec,
        api_key: ApiKeySource,
        *,
        missing_key_hint: str = "",
        seam: HttpSeam | None = None,
        keyless: bool = False,
    ) -> None:
        self._model = model
        self._keyless = keyless
        self._api_key = api_key
        self._hint = missing_key_hint
        self._seam = seam if seam is not None else HttpSeam()
        self._request_settings = ProviderRetrySettings()
        self._info = ModelInfo(
            provider=model.provider,
            api=model.api,
            id=model.id,
            context_window=model.context_window,
            max_tokens=model.max_tokens,
            capabilities=dataclasses.replace(
                capabilities_for(model), thinking_levels=tuple(model.supported_thinking_levels())
            ),
        )

    @property
    def transport(self) -> str:
        return self._model.api

    def use_request_settings(self, settings: ProviderRetrySettings) -> None:
        """Timeouts and transport-level retries of every request (Pi's ``retry.provider``)."""
        self._request_settings = settings

    @property
    def info(self) -> ModelInfo:
        return self._info

    @property
    def model(self) -> ModelSpec:
        return self._model

    def _credentials(self) -> ResolvedAuth:
        """This request's credentials (none, for a keyless endpoint that has no key).

        :raises ProviderError: there are none (with what to do about it).
        """
        found = self._api_key()
        auth = ResolvedAuth("configured", api_key=found) if isinstance(found, str) else found
        if auth is None or not (auth.api_key or auth.headers):
            if self._keyless:
                return ResolvedAuth("configured", api_key="")
            hint = f": {self._hint}" if self._hint else ""
            raise ProviderError(f"No API key for provider: {self._model.provider}{hint}")
        return auth

    def _account_model(self, auth: ResolvedAuth) -> ModelSpec:
        """The model on the endpoint ``auth``'s settings pick (Pi's ``resolveCloudflareModel``).

        :raises ProviderError: a placeholder of the endpoint has no value: Pi's credential
            resolution then finds the provider not configured and sends nothing.
        """
        model = self._model.on_account(auth.env)
        missing = model.unfilled_placeholders()
        if missing:
            hint = f"; {self._hint}" if self._hint else ""
            raise ProviderError(
                f"Provider is not configured: {model.provider} "
                f"({' and '.join(missing)} not set){hint}"
            )
        return model

    def check_credentials(self) -> None:
        self._account_model(self._credentials())

    def stream(self, request: ModelRequest, signal: AbortSignal) -> Iterator[StreamEvent]:
        # The call runs on a thread of its own (a reused one: see call_threads) so that
        # events reach the host as they stream.
        queue: Queue[StreamEvent | BaseException | None] = Queue()

        def work() -> None:
            try:
                self.deliver(request, signal, queue.put)
            except BaseException as error:  # handed to the consuming thread
                queue.put(error)
            finally:
                queue.put(None)

        run_on_call_thread(work, f"model-{self._model.ref}")
        while (item := queue.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            yield item

    def deliver(
        self, request: ModelRequest, signal: AbortSignal, on_event: Callable[[StreamEvent], None]
    ) -> None:
        # The wire formats parse on the calling thread and hand each event over as they go.
        auth = self._credentials()
        model = self._account_model(auth)
        key = auth.api_key
        context = PiContext(
            system_prompt=request.system_prompt or None,
            messages=[_message(message) for message in request.messages],
            tools=[_tool(tool) for tool in request.tools],
        )
        requests = self._request_settings
        options = StreamOptions(
            timeout_ms=requests.timeout_ms,
            max_retries=requests.max_retries,
            max_retry_delay_ms=requests.max_retry_delay_ms,
            api_key=key,
            keyless=self._keyless,
            session_id=request.session_id,
            reasoning=None if request.reasoning in (None, "off") else request.reasoning,
            thinking_budgets=request.thinking_budgets,
            max_tokens=request.max_tokens,
            headers={**auth.headers, **request.headers},
            metadata=request.client_metadata or None,
            env=dict(auth.env) or None,
        )

        def emit(event: WireEvent) -> None:
            if event.type == "text_delta" and event.delta is not None:
                on_event(TextDelta(event.content_index or 0, event.delta))
            elif event.type == "thinking_delta" and event.delta is not None:
                on_event(ThinkingDelta(event.content_index or 0, event.delta))
            elif event.type == "thinking_end" and event.thinking is not None:
                block = ThinkingContent.model_validate(event.thinking)
                on_event(ThinkingComplete(event.content_index or 0, block))
            elif event.type == "toolcall_end" and event.tool_call is not None:
                call = ToolCall.model_validate(event.tool_call)
                on_event(ToolCallComplete(event.content_index or 0, call))

        def retrying(attempt: int, delay_ms: float, error: str) -> None:
            # Called before the wait: the host shows it as it happens.
            shown = scrub(error, secrets)
            on_event(TransportRetry(attempt, requests.max_retries, delay_ms, shown))

        # A server may echo the key into an error body; it never reaches the session or a log.
        headers = {**(self._model.headers or {}), **auth.headers, **request.headers}
        secrets = (
            *((key,) if key else ()),
            *(v for n, v in headers.items() if v and is_sensitive_header(n)),
        )
        call = CallContext(seam=self._seam, signal=signal, emit=emit, on_retry=retrying)
        try:
            final = stream_function(model.api)(model, context, options, call)
        except WireError as error:
            raise ProviderError(scrub(str(error), secrets)) from None
        if isinstance(final.get("errorMessage"), str):
            final["errorMessage"] = scrub(final["errorMessage"], secrets)
        message = AssistantMessage.model_validate(final)
        if message.stop_reason in ("error", "aborted"):
            reason: Literal["error", "aborted"] = (
                "aborted" if message.stop_reason == "aborted" else "error"
            )
            refused: str | None = None
            if call.failed_status in (401, 403) and self._hint:
                refused = f"{self._model.provider} refused the credentials: {self._hint}"
            on_event(StreamError(reason, message, retry_after_ms=call.retry_after_ms, hint=refused))
        else:
            on_event(StreamDone(message))

    def close(self) -> None:
        self._seam.close()


class CodexModelProvider(HttpModelProvider):
    """A model on the ChatGPT Codex backend, which also answers the backend calls of modes
    (:class:`~ctxmodes.providers.backend.BackendAccess`): the same base, the same account
    credentials, the same HTTP seam."""

    #: Backend calls bound their own time (Remote: 35 s); the client imposes none.
    BACKEND_TIMEOUT_S: float | None = None

    def backend_route(self) -> BackendRoute:
        token = self._credentials().api_key
        if not token:
            hint = f": {self._hint}" if self._hint else ""
            raise ProviderError(f"No API key for provider: {self._model.provider}{hint}")
        try:
            headers = identity_headers(token, self._seam.user_agent or pi_user_agent())
        except WireError as error:
            raise ProviderError(str(error)) from None
        return BackendRoute(
            base_url=backend_base(self._model.base_url),
            headers=headers,
            client=self._seam.client(self.BACKEND_TIMEOUT_S),
        )
