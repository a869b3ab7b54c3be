"""Each transport over real loopback HTTP, against servers that fail in every way they do:
rate limits with ``Retry-After``, 5xx, timeouts, streams cut short, malformed events, huge
events and tool-call arguments, and servers that never answer."""

from __future__ import annotations

import json
import socket
import threading
import time
from types import SimpleNamespace
from typing import Any, cast

import pytest
from support.wire_server import (
    ALL_APIS,
    Reply,
    WireServer,
    fake_jwt,
    json_error,
    text_stream,
    tool_call_stream,
)

from ctxmodes.abort import AbortController
from ctxmodes.providers.apis import stream_function
from ctxmodes.providers.catalog import ModelCatalog, ModelSpec, builtin_models
from ctxmodes.providers.http import HttpSeam
from ctxmodes.providers.transport.call import CallContext
from ctxmodes.providers.wire import PiContext, StreamOptions, WireEvent

pytestmark = [
    pytest.mark.parametrize("api", ALL_APIS),
    # Servers failing in every way: the fault tier, outside `make check`.
    pytest.mark.faults,
]
#: Where each format's endpoint lives under the server (the Anthropic SDK adds ``/v1``;
#: Vertex takes a custom base URL holding its version, as a proxy would).
BASE_PATHS = {
    "anthropic-messages": "",
    "google-generative-ai": "/v1beta",
    "google-vertex": "/v1/projects/loop/locations/global",
}
GOOGLE = ("google-generative-ai", "google-vertex")


def _model(api: str, base: str) -> ModelSpec:
    if api == "openai-responses":
        model = ModelCatalog(builtin_models()).get("openai/gpt-5.1")
        return model.model_copy(update={"base_url": f"{base}/v1"})
    if api == "openai-codex-responses":
        model = ModelCatalog(builtin_models()).get("openai-codex/gpt-5.5")
        return model.model_copy(update={"base_url": f"{base}/backend-api"})
    return ModelSpec.model_validate(
        {
            "id": "local",
            "api": api,
            "provider": "local",
            "baseUrl": base + BASE_PATHS.get(api, "/v1"),
        }
    )


def _through_first_piece(frames: list[bytes], piece: bytes) -> int:
    """How many frames to send so that exactly the first text piece arrives."""
    return next(index for index, frame in enumerate(frames) if piece in frame) + 1


class _Call:
    def __init__(self, api: str, server: WireServer, **options: Any) -> None:
        self.api = api
        self.model = _model(api, server.base_url)
        key = fake_jwt() if api == "openai-codex-responses" else "sk-loopback-key"
        self.options = StreamOptions(api_key=key, session_id="s-1", **options)
        self.events: list[WireEvent] = []
        self.retries: list[tuple[int, float, str]] = []
        self.controller = AbortController()
        self.seam = HttpSeam()
        self.text_arrived = threading.Event()

    def _emit(self, event: WireEvent) -> None:
        self.events.append(event)
        if event.type == "text_delta":
            self.text_arrived.set()

    def run(self, context: PiContext | None = None, *, close: bool = True) -> dict[str, Any]:
        call = CallContext(
            seam=self.seam,
            signal=self.controller.signal,
            emit=self._emit,
            on_retry=lambda *retry: self.retries.append(retry),
        )
        context = context or PiContext(
            None, [{"role": "user", "content": "hi", "timestamp": 1}], []
        )
        try:
            return stream_function(self.api)(self.model, context, self.options, call)
        finally:
            if close:
                self.seam.close()


def test_consecutive_calls_share_one_connection(api: str) -> None:
    """Each answer is read to its end (past a ``[DONE]`` or a terminal event the format
    stops at), so its connection is left for the next call."""
    with WireServer([Reply(text_stream(api, "One")), Reply(text_stream(api, "Two"))]) as server:
        call = _Call(api, server)
        first = call.run(close=False)
        second = call.run()
    assert [first["content"][0]["text"], second["content"][0]["text"]] == ["One", "Two"]
    assert server.requests[0]["peer"] == server.requests[1]["peer"]


def test_429_with_retry_after_is_waited_for_then_answered(api: str) -> None:
    replies = [
        Reply(json_error("Rate limit reached"), status=429, headers={"retry-after-ms": "30"}),
        Reply(text_stream(api, "Hello")),
    ]
    with WireServer(replies) as server:
        call = _Call(api, server, max_retries=2)
        message = call.run()
    assert message["stopReason"] == "stop"
    assert message["content"][0]["text"] == "Hello"
    if api in GOOGLE:
        # @google/genai's errors carry no headers: pi-ai's backoff (0.5 s less jitter).
        ((attempt, delay, _),) = call.retries
        assert attempt == 1
        assert 375 <= delay <= 500
    else:
        assert [(attempt, delay) for attempt, delay, _ in call.retries] == [(1, 30.0)]
    assert len(server.requests) == 2
    assert server.requests[0]["body"] == server.requests[1]["body"]


@pytest.mark.parametrize("status", [500, 503])
def test_server_errors_are_retried_when_asked_and_reported_when_not(api: str, status: int) -> None:
    replies = [
        Reply(json_error("upstream overloaded"), status=status, headers={"retry-after": "0"}),
        Reply(text_stream(api, "Recovered")),
    ]
    with WireServer(replies) as server:
        retried = _Call(api, server, max_retries=1).run()
    assert retried["stopReason"] == "stop"
    with WireServer([Reply(json_error("upstream overloaded"), status=status)]) as server:
        failed = _Call(api, server, max_retries=0).run()
    assert failed["stopReason"] == "error"
    assert "overloaded" in failed["errorMessage"]
    assert failed["content"] == []


def test_a_read_that_times_out_mid_stream_keeps_what_streamed(api: str) -> None:
    frames = text_stream(api, "Partial answer", pieces=2)
    cut = _through_first_piece(frames, b'"Partial')
    with WireServer([Reply(frames, behaviour="hold", cut_after=cut)]) as server:
        message = _Call(api, server, timeout_ms=300).run()
    assert message["stopReason"] == "error"
    assert "timed out" in message["errorMessage"].lower()
    assert message["content"][0]["text"] == "Partial"


def test_a_server_that_never_answers_times_out(api: str) -> None:
    with WireServer([Reply(behaviour="no_headers")]) as server:
        started = time.monotonic()
        message = _Call(api, server, timeout_ms=300).run()
    assert time.monotonic() - started < 5
    assert message["stopReason"] == "error"
    assert "timed out" in message["errorMessage"].lower()


def test_a_server_that_never_answers_is_left_at_once_on_abort(api: str) -> None:
    with WireServer([Reply(behaviour="no_headers")]) as server:
        call = _Call(api, server, timeout_ms=None)
        result: list[dict[str, Any]] = []
        worker = threading.Thread(target=lambda: result.append(call.run()))
        worker.start()
        assert server.arrived.wait(5)
        started = time.monotonic()
        call.controller.abort()
        worker.join(2)
        assert time.monotonic() - started < 0.1
    assert result[0]["stopReason"] == "aborted"


def test_a_stream_cut_before_completion_is_an_error_with_the_partial_text(api: str) -> None:
    frames = text_stream(api, "Half of it", pieces=2)
    cut = _through_first_piece(frames, b'"Half')
    with WireServer([Reply(frames, behaviour="cut", cut_after=cut)]) as server:
        message = _Call(api, server).run()
    assert message["stopReason"] == "error"
    assert message["content"][0]["text"] == "Half "
    assert message["errorMessage"]


def test_malformed_sse_is_an_error_not_a_crash(api: str) -> None:
    frames = text_stream(api, "Before", pieces=1)
    cut = _through_first_piece(frames, b'"Before')
    # Anthropic's reader skips events without a message event name.
    name = b"event: content_block_delta\n" if api == "anthropic-messages" else b""
    broken = [*frames[:cut], name + b"data: {not json\n\n", *frames[cut:]]
    with WireServer([Reply(broken)]) as server:
        message = _Call(api, server).run()
    assert message["stopReason"] == "error"
    assert message["content"][0]["text"] == "Before"
    assert "JSON" in message["errorMessage"]


def test_a_huge_event_arrives_whole(api: str) -> None:
    text = "x" * (8 * 1024 * 1024)
    with WireServer([Reply(text_stream(api, text, pieces=1))]) as server:
        message = _Call(api, server).run()
    assert message["stopReason"] == "stop"
    assert message["content"][0]["text"] == text


def test_a_10mb_tool_call_argument_streams_in_pieces(api: str) -> None:
    if api in GOOGLE:
        pytest.skip("Gemini sends a function call whole, in one chunk")
    content = "line of a big file\n" * (10 * 1024 * 1024 // 19)
    arguments = json.dumps({"path": "big.txt", "content": content})
    frames = tool_call_stream(api, "write", arguments, pieces=2000)
    with WireServer([Reply(frames)]) as server:
        call = _Call(api, server)
        started = time.process_time()
        message = call.run()
        spent = time.process_time() - started
    assert message["stopReason"] == "toolUse"
    (block,) = message["content"]
    assert block["name"] == "write"
    assert block["arguments"] == {"path": "big.txt", "content": content}
    deltas = [event for event in call.events if event.type == "toolcall_delta"]
    assert "".join(event.delta or "" for event in deltas) == arguments
    # Linear work: quadratic re-parsing of 10 MB over 2000 deltas takes minutes.
    assert spent < 20


def test_abort_in_the_middle_of_a_stream_keeps_the_partial_answer(api: str) -> None:
    frames = text_stream(api, "Partial answer", pieces=2)
    cut = _through_first_piece(frames, b'"Partial')
    with WireServer([Reply(frames, behaviour="hold", cut_after=cut)]) as server:
        call = _Call(api, server, timeout_ms=None)
        result: list[dict[str, Any]] = []
        worker = threading.Thread(target=lambda: result.append(call.run()))
        worker.start()
        assert call.text_arrived.wait(5)
        started = time.monotonic()
        call.controller.abort()
        worker.join(2)
        assert time.monotonic() - started < 0.1
    (message,) = result
    assert message["stopReason"] == "aborted"
    assert message["content"][0]["text"] == "Partial"


def test_a_10mb_tool_call_cut_mid_stream_keeps_the_arguments_so_far(api: str) -> None:
    if api in GOOGLE:
        pytest.skip("Gemini sends a function call whole, in one chunk")
    content = "line of a big file\n" * (10 * 1024 * 1024 // 19)
    arguments = json.dumps({"path": "big.txt", "content": content})
    frames = tool_call_stream(api, "write", arguments, pieces=2000)
    cut = next(i for i, frame in enumerate(frames) if b"delta" in frame or b"arguments" in frame)
    with WireServer([Reply(frames, behaviour="cut", cut_after=cut + 1500)]) as server:
        started = time.process_time()
        message = _Call(api, server).run()
        spent = time.process_time() - started
    assert message["stopReason"] == "error"
    (block,) = message["content"]
    assert block["arguments"]["path"] == "big.txt"
    assert content.startswith(block["arguments"]["content"])
    assert len(block["arguments"]["content"]) > len(content) // 2
    assert spent < 10


def test_a_server_that_is_not_running_is_named_and_not_retried(api: str) -> None:
    """Every format says which address refused (a local server not started, a mistyped
    port) instead of a bare "fetch failed", and does not retry what cannot succeed."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    call = _Call(api, cast(WireServer, SimpleNamespace(base_url=base)), max_retries=2)
    message = call.run()
    assert message["stopReason"] == "error"
    assert message["errorMessage"].startswith(f"Could not connect to {base}/")
    assert message["errorMessage"].endswith("connection refused (is the server running?)")
    assert call.retries == []
