"""Running the oracle's provider cases through our transports, and comparing with Pi.

A case (``provider-cases/NAME.json``) gives a model, a context, options and canned responses;
``NAME.expected.json`` holds what the real Pi sent and produced. :func:`run_case` serves the
case with the oracle's own ``--serve`` (the same bytes, recorded the same way), runs our
transport against it and returns what we sent and produced, in the oracle's shape.
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from ctxmodes.abort import AbortController
from ctxmodes.providers.apis import stream_function
from ctxmodes.providers.catalog import ModelCatalog, ModelSpec, UnknownModelError, builtin_models
from ctxmodes.providers.codex_oauth import current_access_token
from ctxmodes.providers.credential_store import MemoryCredentialStore
from ctxmodes.providers.http import HttpSeam
from ctxmodes.providers.transport.call import CallContext
from ctxmodes.providers.wire import PiContext, StreamOptions, WireError, WireEvent
from support.pi_oracle import REPO, oracle_dir
from support.wire_server import Reply

#: Headers added by Node's fetch or the OpenAI SDK (or by httpx on our side): not Pi's contract.
CLIENT_HEADERS = frozenset(
    {"accept-encoding", "accept-language", "sec-fetch-mode", "connection", "content-length", "host"}
)


def cases_dir() -> Path | None:
    configured = os.environ.get("PI_PROVIDER_CASES")
    if configured:
        path = Path(configured)
        return path if path.is_absolute() else (REPO / path).resolve()
    found = oracle_dir()
    return found / "provider-cases" if found is not None else None


#: Two turns recorded from Anthropic's API: a thinking model calls a tool (its thinking
#: signed), then answers with the tool's result.
ANTHROPIC_THINKING_TURNS = (
    "anthropic_thinking_signature_tool_use",
    "anthropic_thinking_replay_tool_result",
)


def recorded_case(name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The case ``name`` of the oracle's directory and what the real Pi sent and produced on
    it (its expected file); the test is skipped when the oracle is not beside the project."""
    import pytest

    found = cases_dir()
    if found is None or not (found / f"{name}.expected.json").is_file():
        pytest.skip("the Pi oracle's provider cases are not beside the project")
    case = json.loads((found / f"{name}.json").read_text())
    return case, json.loads((found / f"{name}.expected.json").read_text())


def recorded_reply(case: dict[str, Any]) -> Reply:
    """A one-answer case's recorded stream, as a loopback server's reply."""
    [response] = case["responses"]
    return Reply([response["sse"].encode()])


def case_names(directory: Path) -> list[str]:
    return sorted(
        path.name.removesuffix(".json")
        for path in directory.glob("*.json")
        if not path.name.endswith(".expected.json")
        and (directory / (path.name.removesuffix(".json") + ".expected.json")).exists()
    )


def _b64url(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def expand_secrets(value: Any) -> Any:
    """The oracle's ``{"fakeJwt": claims}`` → an unsigned JWT, anywhere in a value."""
    if isinstance(value, list):
        return [expand_secrets(item) for item in value]
    if isinstance(value, dict):
        if value.get("fakeJwt"):
            header = value.get("header", {"alg": "RS256", "typ": "JWT"})
            compact = lambda obj: json.dumps(obj, separators=(",", ":"), ensure_ascii=False)  # noqa: E731
            signature = value.get("signature", "oracle-signature")
            return f"{_b64url(compact(header))}.{_b64url(compact(value['fakeJwt']))}.{signature}"
        return {key: expand_secrets(item) for key, item in value.items()}
    return value


def case_model(
    case: dict[str, Any], base_url: str | None, received: dict[str, Any] | None = None
) -> ModelSpec:
    """The case's model with its base URL on the canned server. A model the built-in catalog
    lacks is the one Pi received (``received``, the expected file's ``model``). A ``{location}``
    template (Vertex) keeps its URL: the transport builds its fixed-host URL, which the test
    redirects to the server as the oracle does."""
    spec = case["model"]
    if "ref" in spec:
        try:
            data = {**ModelCatalog(builtin_models()).get(spec["ref"]).to_pi()}
        except UnknownModelError:
            if received is None:
                raise
            data = {key: value for key, value in received.items() if key != "baseUrl"}
        data.update(spec.get("overrides", {}))
    else:
        data = dict(spec)
    if base_url and "{location}" not in str(data.get("baseUrl", "")):
        data["baseUrl"] = base_url
    return ModelSpec.model_validate(data)


def event_view(event: WireEvent) -> dict[str, Any]:
    view: dict[str, Any] = {"type": event.type}
    if event.content_index is not None:
        view["contentIndex"] = event.content_index
    if event.delta is not None:
        view["delta"] = event.delta
    if event.content is not None:
        view["content"] = event.content
    if event.tool_call is not None:
        view["toolCall"] = event.tool_call
    if event.reason is not None:
        view["reason"] = event.reason
    return view


def expected_event_view(event: dict[str, Any]) -> dict[str, Any]:
    keys = ("type", "contentIndex", "delta", "content", "toolCall", "reason")
    return {key: event[key] for key in keys if key in event}


#: The oracle's fake clock starts here (2026-01-01T00:00:00Z) and runs at real speed.
ORACLE_EPOCH_MS = 1767225600000


def oracle_clock() -> Callable[[], int]:
    started = time.monotonic()
    return lambda: ORACLE_EPOCH_MS + int((time.monotonic() - started) * 1000)


@dataclass
class CaseRun:
    requests: list[dict[str, Any]]
    events: list[dict[str, Any]]
    message: dict[str, Any] | None
    thrown: str | None
    #: The credential store after a ``models.streamSimple`` case (Pi's ``credentials``).
    credentials: dict[str, Any] | None = None


def run_case(node: str, oracle: Path, directory: Path, name: str) -> CaseRun:
    case_path = directory / f"{name}.json"
    case = json.loads(case_path.read_text())
    received = json.loads((directory / f"{name}.expected.json").read_text()).get("model")
    server = subprocess.Popen(
        [node, str(oracle / "provider_oracle.mjs"), "--serve", str(case_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PI_NODE_MODULES": os.environ.get("PI_NODE_MODULES", str(REPO / ".pi"))},
    )
    try:
        assert server.stdout is not None
        assert server.stdin is not None
        ready = json.loads(server.stdout.readline())
        model = case_model(case, ready.get("modelBaseUrl"), received)
        context_data = case.get("context", {})
        context = PiContext(
            system_prompt=context_data.get("systemPrompt"),
            messages=context_data.get("messages", []),
            tools=context_data.get("tools", []),
        )
        options = StreamOptions.from_pi(expand_secrets(case.get("options", {})))
        controller = AbortController()
        events: list[dict[str, Any]] = []
        abort_on = case.get("abortOn") or {}
        counts: dict[str, int] = {}

        def emit(event: WireEvent) -> None:
            events.append(event_view(event))
            counts[event.type] = counts.get(event.type, 0) + 1
            if abort_on.get("event") == event.type and counts[event.type] == abort_on.get("count"):
                controller.abort()

        timer = None
        if "afterMs" in abort_on:
            import threading

            timer = threading.Timer(abort_on["afterMs"] / 1000, controller.abort)
            timer.start()
        # Bedrock's endpoint is the server itself, reached over HTTP/2 as the AWS SDK does:
        # the seam's own clients, not an injected (HTTP/1.1) transport.
        direct = case["api"] == "bedrock-converse-stream"
        seam = HttpSeam() if direct else HttpSeam(transport=RedirectingTransport(ready["baseUrl"]))
        clock = oracle_clock()
        call = CallContext(seam=seam, signal=controller.signal, emit=emit, now_ms=clock)
        thrown = None
        message = None
        store = None
        try:
            if case.get("entry") == "models.streamSimple":
                # Pi's Models path: the key comes from the credential store, refreshed first.
                store = MemoryCredentialStore(expand_secrets(case.get("credentials", {})))
                options.api_key = current_access_token(
                    store,
                    seam.client(15),
                    base=ready["baseUrl"],
                    now_ms=clock,
                    user_agent=call.user_agent,
                )
            message = stream_function(case["api"])(model, context, options, call)
        except WireError as error:
            thrown = str(error)
        finally:
            if timer is not None:
                timer.cancel()
            seam.close()
        server.stdin.close()
        recorded = json.loads(server.stdout.read())
        credentials = None
        if store is not None:
            credentials = {
                provider: {**entry, "expires": "<timestamp>"}
                for provider, entry in store.snapshot().items()
            }
        return CaseRun(recorded["requests"], events, message, thrown, credentials)
    finally:
        if server.poll() is None:
            server.kill()
        server.wait()


#: Fixed vendor hosts a transport builds URLs on; the oracle redirects Pi's requests to them
#: to its canned server, and :class:`RedirectingTransport` does the same for ours.
FIXED_HOSTS = re.compile(
    r"^(aiplatform\.googleapis\.com|[a-z0-9-]+-aiplatform\.googleapis\.com"
    r"|generativelanguage\.googleapis\.com|oauth2\.googleapis\.com|api\.anthropic\.com"
    r"|[a-z0-9-]+\.(?:openai|cognitiveservices|ai)\.azure\.com)$"
)


class RedirectingTransport(httpx.BaseTransport):
    """httpx's transport, with requests to :data:`FIXED_HOSTS` sent to the canned server."""

    def __init__(self, server: str) -> None:
        self._server = httpx.URL(server)
        self._inner = httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if FIXED_HOSTS.match(request.url.host):
            request.url = request.url.copy_with(
                scheme=self._server.scheme, host=self._server.host, port=self._server.port
            )
            request.headers["host"] = f"{self._server.host}:{self._server.port}"
        return self._inner.handle_request(request)

    def close(self) -> None:
        self._inner.close()


#: The clock and counter of tool-call ids the Google transports invent
#: (``<name>_<Date.now()>_<n>``): the oracle shows the clock as ``<timestamp>``; the counter
#: is process-wide, so it differs between the oracle's one-case processes and the suite.
INVENTED_ID = re.compile(r"_(\d{13}|<timestamp>)_\d+\b")


def without_invented_id_clock(value: Any) -> Any:
    """``value`` with invented tool-call ids' clock and counter replaced by placeholders."""
    return json.loads(INVENTED_ID.sub("_<timestamp>_<n>", json.dumps(value)))


def normalized_message(message: dict[str, Any]) -> dict[str, Any]:
    return {**message, "timestamp": "<timestamp>"}


#: The runtime named in ``@google/genai``'s ``x-goog-api-client`` (Node for Pi, Python here).
GOOGLE_RUNTIME = re.compile(r" gl-(node|python)(/\S*)?")


def request_view(request: dict[str, Any]) -> dict[str, Any]:
    view = {key: value for key, value in request.items() if key != "headers"}
    view["headers"] = {
        name: GOOGLE_RUNTIME.sub(" gl-<runtime>", value) if name == "x-goog-api-client" else value
        for name, value in request.get("headers", {}).items()
        if name not in CLIENT_HEADERS and not name.startswith("x-stainless-")
    }
    return view
