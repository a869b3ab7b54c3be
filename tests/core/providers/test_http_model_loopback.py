"""The Responses transport as a host provider, over a real loopback socket."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from typing import ClassVar

import pytest
from support.aborts import abort_and_wait
from support.provider_cases import case_model, recorded_case, recorded_reply
from support.wire_server import WireServer

from ctxmodes.abort import AbortController
from ctxmodes.providers.base import (
    ModelRequest,
    StreamDone,
    StreamError,
    TextDelta,
    ThinkingComplete,
    ThinkingDelta,
)
from ctxmodes.providers.builtin import default_model_provider
from ctxmodes.providers.catalog import ModelCatalog, builtin_models
from ctxmodes.providers.http_model import HttpModelProvider
from ctxmodes.session.models import UserMessage

SSE = (
    'data: {"type":"response.created","response":{"id":"resp_1"}}\n\n'
    'data: {"type":"response.output_item.added","output_index":0,'
    '"item":{"type":"message","id":"msg_1","role":"assistant","content":[]}}\n\n'
    'data: {"type":"response.output_text.delta","output_index":0,"delta":"Hel"}\n\n'
    'data: {"type":"response.output_text.delta","output_index":0,"delta":"lo"}\n\n'
    'data: {"type":"response.output_item.done","output_index":0,"item":{"type":"message",'
    '"id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"Hello"}]}}\n\n'
    'data: {"type":"response.completed","response":{"id":"resp_1","status":"completed",'
    '"usage":{"input_tokens":10,"output_tokens":2,"total_tokens":12}}}\n\n'
)


class _Handler(http.server.BaseHTTPRequestHandler):
    mode = "answer"
    release = threading.Event()
    bodies: ClassVar[list[bytes]] = []

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", 0))
        type(self).bodies.append(self.rfile.read(length))
        if self.mode == "silent":
            type(self).release.wait(10)
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        if self.mode == "hold":
            self.wfile.write(SSE.split("\n\n")[0].encode() + b"\n\n")
            self.wfile.flush()
            type(self).release.wait(10)
            return
        self.wfile.write(SSE.encode())

    def log_message(self, *args: object) -> None:
        return None


@pytest.fixture
def server() -> Iterator[tuple[str, type[_Handler]]]:
    handler = type("Handler", (_Handler,), {"release": threading.Event(), "bodies": []})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    # A short poll: shutdown() waits for the next one (0.5 s at the default).
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", handler
    finally:
        handler.release.set()
        httpd.shutdown()
        httpd.server_close()


def _provider(base_url: str, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    model = ModelCatalog(builtin_models()).get("openai/gpt-5.1")
    return default_model_provider(model.model_copy(update={"base_url": base_url}))


def _request() -> ModelRequest:
    user = UserMessage(content="hi", timestamp=1)
    return ModelRequest(system_prompt="Be brief.", messages=[user], session_id="s-1")


def test_streams_text_and_ends_with_the_message(server, monkeypatch):
    base_url, handler = server
    provider = _provider(base_url, monkeypatch)
    events = list(provider.stream(_request(), AbortController().signal))
    assert [e.delta for e in events if isinstance(e, TextDelta)] == ["Hel", "lo"]
    final = events[-1]
    assert isinstance(final, StreamDone)
    assert final.message.content[0].text == "Hello"
    assert final.message.usage.total_tokens == 12
    assert b'"prompt_cache_key":"s-1"' in handler.bodies[0]
    provider.close()


def test_deliver_makes_the_call_on_the_calling_thread_with_the_events_stream_yields(
    server, monkeypatch
):
    base_url, _ = server
    provider = _provider(base_url, monkeypatch)
    streamed = list(provider.stream(_request(), AbortController().signal))
    delivered: list[tuple[object, threading.Thread]] = []
    provider.deliver(
        _request(),
        AbortController().signal,
        lambda event: delivered.append((event, threading.current_thread())),
    )
    assert {thread for _, thread in delivered} == {threading.current_thread()}
    events = [event for event, _ in delivered]
    assert [type(e) for e in events] == [type(e) for e in streamed]
    assert [e.delta for e in events if isinstance(e, TextDelta)] == ["Hel", "lo"]
    assert isinstance(events[-1], StreamDone)
    assert events[-1].message.content == streamed[-1].message.content
    provider.close()


def test_calls_one_after_another_reuse_the_thread_they_stream_on(server, monkeypatch):
    base_url, _ = server
    provider = _provider(base_url, monkeypatch)
    threads_seen = []
    for _ in range(3):
        for event in provider.stream(_request(), AbortController().signal):
            if isinstance(event, StreamDone):
                threads_seen.append(
                    {t for t in threading.enumerate() if t.name.startswith("model-")}
                )
    # The first call started a thread; the next ones found it idle.
    assert len(threads_seen[0]) >= 1
    assert threads_seen[1] == threads_seen[0] == threads_seen[2]
    provider.close()


@pytest.mark.parametrize("mode", ["silent", "hold"])
def test_abort_closes_a_blocked_read_within_100ms(server, monkeypatch, mode):
    base_url, handler = server
    handler.mode = mode
    provider = _provider(base_url, monkeypatch)
    controller = AbortController()
    arrived = threading.Event()
    original = handler.do_POST

    def noting(self: _Handler) -> None:
        arrived.set()
        original(self)

    handler.do_POST = noting  # type: ignore[method-assign]
    results: list[object] = []
    worker = threading.Thread(
        target=lambda: results.extend(provider.stream(_request(), controller.signal))
    )
    worker.start()
    assert arrived.wait(5)
    abort_and_wait(controller, worker)
    final = results[-1]
    assert isinstance(final, StreamError)
    assert final.message.stop_reason == "aborted"
    provider.close()


@pytest.mark.parametrize(
    "name", ["anthropic_thinking_signature_tool_use", "responses_reasoning_tool_call"]
)
def test_a_thinking_block_is_complete_with_its_signature_before_what_follows_it(name, monkeypatch):
    # Recorded from the live APIs: the model thinks (signed), then calls a tool.
    case, pi = recorded_case(name)
    with WireServer([recorded_reply(case)]) as wire:
        model = case_model(
            case, wire.base_url + ("/v1" if "responses" in name else ""), pi["model"]
        )
        provider = HttpModelProvider(model, lambda: "sk-loopback")
        request = ModelRequest(
            system_prompt="", messages=[UserMessage(content="go", timestamp=1)], reasoning="low"
        )
        events = list(provider.stream(request, AbortController().signal))
        provider.close()
    kinds = [type(event).__name__ for event in events]
    [complete] = [e for e in events if isinstance(e, ThinkingComplete)]
    final = events[-1]
    assert isinstance(final, StreamDone)
    # The block as the final message holds it, signature and all, and before the tool call.
    assert complete.block == final.message.content[complete.content_index]
    assert complete.block.thinking_signature
    assert kinds.index("ThinkingComplete") < kinds.index("ToolCallComplete")
    deltas = [e.delta for e in events if isinstance(e, ThinkingDelta)]
    assert "".join(deltas).rstrip("\n") == complete.block.thinking
