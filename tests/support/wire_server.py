"""A loopback model server for the built-in wire formats, and the streams it replays.

:class:`WireServer` answers each POST with the next scripted :class:`Reply` — a status,
headers and a body sent in chunks — or misbehaves as told: closes the connection after part
of the body, never sends headers, holds the stream open. :func:`text_stream` and
:func:`tool_call_stream` write a well-formed answer in each wire format.
"""

from __future__ import annotations

import base64
import http.server
import json
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

APIS = ("openai-responses", "openai-codex-responses", "openai-completions")
#: Formats whose streams are not OpenAI-shaped (written by :func:`_messages_frames` and
#: :func:`_gemini_frames`).
OTHER_APIS = ("anthropic-messages", "google-generative-ai", "google-vertex")
ALL_APIS = APIS + OTHER_APIS


def _data(event: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(event, separators=(",", ":")).encode() + b"\n\n"


def _event(event: dict[str, Any]) -> bytes:
    return f"event: {event['type']}\n".encode() + _data(event)


def _messages_frames(texts: list[str], calls: list[tuple[str, list[str]]]) -> list[bytes]:
    """An Anthropic Messages stream: text pieces in one block, then tool_use blocks whose
    input arrives in the given JSON pieces."""
    usage = {"input_tokens": 900, "cache_read_input_tokens": 0, "output_tokens": 1}
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m"}
    frames = [
        _event({"type": "message_start", "message": {**message, "content": [], "usage": usage}})
    ]
    index = 0
    if texts:
        block = {"type": "text", "text": ""}
        frames.append(_event({"type": "content_block_start", "index": 0, "content_block": block}))
        for piece in texts:
            delta = {"type": "text_delta", "text": piece}
            frames.append(_event({"type": "content_block_delta", "index": 0, "delta": delta}))
        frames.append(_event({"type": "content_block_stop", "index": 0}))
        index = 1
    for offset, (name, pieces) in enumerate(calls):
        block = {"type": "tool_use", "id": f"toolu_{offset}", "name": name, "input": {}}
        at = index + offset
        frames.append(_event({"type": "content_block_start", "index": at, "content_block": block}))
        for piece in pieces:
            delta = {"type": "input_json_delta", "partial_json": piece}
            frames.append(_event({"type": "content_block_delta", "index": at, "delta": delta}))
        frames.append(_event({"type": "content_block_stop", "index": at}))
    stop = "tool_use" if calls else "end_turn"
    frames.append(
        _event(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop},
                "usage": {"output_tokens": 20},
            }
        )
    )
    frames.append(_event({"type": "message_stop"}))
    return frames


def _gemini_frames(texts: list[str], calls: list[tuple[str, Any]]) -> list[bytes]:
    """A Gemini stream: one chunk per text piece, then one per function call, then the
    finish reason with the usage."""

    def chunk(parts: list[dict[str, Any]], **extra: Any) -> bytes:
        candidate = {"content": {"parts": parts, "role": "model"}, **extra}
        body = {"candidates": [candidate], "responseId": "resp-1"}
        if extra:
            body["usageMetadata"] = {
                "promptTokenCount": 900,
                "candidatesTokenCount": 20,
                "totalTokenCount": 920,
            }
        return b"data: " + json.dumps(body, separators=(",", ":")).encode() + b"\r\n\r\n"

    frames = [chunk([{"text": piece}]) for piece in texts]
    frames += [chunk([{"functionCall": {"name": name, "args": args}}]) for name, args in calls]
    frames.append(chunk([{"text": ""}], finishReason="STOP"))
    return frames


def text_stream(api: str, text: str, *, pieces: int = 2) -> list[bytes]:
    """SSE frames that stream ``text`` and end the answer normally."""
    size = max(1, len(text) // pieces)
    parts = [text[i : i + size] for i in range(0, len(text), size)] or [""]
    if api == "anthropic-messages":
        return _messages_frames(parts, [])
    if api in ("google-generative-ai", "google-vertex"):
        return _gemini_frames(parts, [])
    if api == "openai-completions":
        frames = [
            _data({"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {"content": p}}]})
            for p in parts
        ]
        frames.append(
            _data({"id": "c1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        )
        frames.append(
            _data(
                {"id": "c1", "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2}}
            )
        )
        frames.append(b"data: [DONE]\n\n")
        return frames
    item = {"type": "message", "id": "msg_1", "role": "assistant", "content": []}
    frames = [
        _data({"type": "response.created", "response": {"id": "resp_1"}}),
        _data({"type": "response.output_item.added", "output_index": 0, "item": item}),
    ]
    frames += [
        _data({"type": "response.output_text.delta", "output_index": 0, "delta": p}) for p in parts
    ]
    done = {**item, "content": [{"type": "output_text", "text": text}]}
    frames.append(_data({"type": "response.output_item.done", "output_index": 0, "item": done}))
    frames.append(
        _data(
            {
                "type": "response.completed",
                "response": {
                    "id": "resp_1",
                    "status": "completed",
                    "usage": {"input_tokens": 5, "output_tokens": 2, "total_tokens": 7},
                },
            }
        )
    )
    return frames


def tool_call_stream(api: str, name: str, arguments: str, *, pieces: int = 4) -> list[bytes]:
    """SSE frames of one tool call whose JSON ``arguments`` arrive in ``pieces`` deltas."""
    size = max(1, len(arguments) // pieces)
    parts = [arguments[i : i + size] for i in range(0, len(arguments), size)]
    if api == "anthropic-messages":
        return _messages_frames([], [(name, parts)])
    if api in ("google-generative-ai", "google-vertex"):
        return _gemini_frames([], [(name, json.loads(arguments))])
    if api == "openai-completions":
        first = {"index": 0, "id": "call_1", "type": "function", "function": {"name": name}}
        frames = [_data({"id": "c1", "choices": [{"index": 0, "delta": {"tool_calls": [first]}}]})]
        frames += [
            _data(
                {
                    "id": "c1",
                    "choices": [
                        {
                            "index": 0,
                            "delta": {"tool_calls": [{"index": 0, "function": {"arguments": p}}]},
                        }
                    ],
                }
            )
            for p in parts
        ]
        frames.append(
            _data(
                {"id": "c1", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}
            )
        )
        frames.append(b"data: [DONE]\n\n")
        return frames
    item = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": name,
        "arguments": "",
    }
    frames = [
        _data({"type": "response.created", "response": {"id": "resp_1"}}),
        _data({"type": "response.output_item.added", "output_index": 0, "item": item}),
    ]
    frames += [
        _data({"type": "response.function_call_arguments.delta", "output_index": 0, "delta": p})
        for p in parts
    ]
    done = {**item, "arguments": arguments, "status": "completed"}
    frames.append(_data({"type": "response.output_item.done", "output_index": 0, "item": done}))
    frames.append(
        _data({"type": "response.completed", "response": {"id": "resp_1", "status": "completed"}})
    )
    return frames


Behaviour = Literal["answer", "cut", "no_headers", "hold", "pause"]


@dataclass
class Reply:
    """One answer. ``cut``: close the connection after ``cut_after`` body chunks;
    ``no_headers``: read the request, then say nothing until released; ``hold``: send the
    headers and ``cut_after`` chunks, then say nothing until released; ``pause``: as
    ``hold``, then send the rest once released (a model still answering)."""

    chunks: list[bytes] = field(default_factory=list)
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    behaviour: Behaviour = "answer"
    cut_after: int = 0


class WireServer:
    """A threaded loopback HTTP server answering with scripted replies, in order."""

    def __init__(self, replies: list[Reply], *, tls: ssl.SSLContext | None = None) -> None:
        self.replies = list(replies)
        self.scheme = "https" if tls is not None else "http"
        self.requests: list[dict[str, Any]] = []
        self.release = threading.Event()
        self.arrived = threading.Event()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = self.rfile.read(length)
                server.requests.append(
                    {
                        "path": self.path,
                        "headers": dict(self.headers.items()),
                        "body": body,
                        # The client's end of the connection: equal peers, one connection.
                        "peer": self.client_address,
                    }
                )
                server.arrived.set()
                reply = server.next_reply()
                if reply.behaviour == "no_headers":
                    server.release.wait(30)
                    return
                self.send_response(reply.status)
                content_type = "text/event-stream" if reply.status == 200 else "application/json"
                self.send_header("content-type", content_type)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                if reply.behaviour in ("answer", "pause"):
                    total = sum(len(chunk) for chunk in reply.chunks)
                    self.send_header("content-length", str(total))
                else:
                    self.send_header("connection", "close")
                self.end_headers()
                chunks = reply.chunks
                if reply.behaviour in ("cut", "hold"):
                    chunks = chunks[: reply.cut_after]
                for at, chunk in enumerate(chunks):
                    if reply.behaviour == "pause" and at == reply.cut_after:
                        server.release.wait(30)
                    self.wfile.write(chunk)
                    self.wfile.flush()
                if reply.behaviour == "hold":
                    server.release.wait(30)
                self.close_connection = reply.behaviour not in ("answer", "pause")

            def log_message(self, *args: object) -> None:
                return None

        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        if tls is not None:
            self._httpd.socket = tls.wrap_socket(self._httpd.socket, server_side=True)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self._httpd.server_address[1]}"

    def next_reply(self) -> Reply:
        """The answer to the request just recorded (the next scripted one)."""
        return self.replies.pop(0) if self.replies else Reply(status=599)

    def __enter__(self) -> WireServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self._httpd.shutdown()
        self._httpd.server_close()


def fake_jwt(account: str = "acct-loopback") -> str:
    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    claims = {"https://api.openai.com/auth": {"chatgpt_account_id": account}}
    return f"{part({'alg': 'none'})}.{part(claims)}.sig"


def json_error(status_message: str) -> list[bytes]:
    return [json.dumps({"error": {"message": status_message, "type": "server_error"}}).encode()]


def chunks_of(data: bytes, size: int) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


def tool_calls_stream(api: str, calls: list[dict[str, Any]], text: str = "") -> list[bytes]:
    """SSE frames of an answer with optional ``text`` and several tool calls, each
    ``{"name", "arguments", "namespace"?}`` (namespaces only on the Responses wire)."""
    if api == "anthropic-messages":
        texts = [text] if text else []
        return _messages_frames(texts, [(c["name"], [json.dumps(c["arguments"])]) for c in calls])
    if api in ("google-generative-ai", "google-vertex"):
        texts = [text] if text else []
        return _gemini_frames(texts, [(c["name"], c["arguments"]) for c in calls])
    if api == "openai-completions":
        frames: list[bytes] = []
        if text:
            frames.append(_data({"id": "c", "choices": [{"index": 0, "delta": {"content": text}}]}))
        for index, call in enumerate(calls):
            delta = {
                "index": index,
                "id": f"call_{index}",
                "type": "function",
                "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])},
            }
            frames.append(
                _data({"id": "c", "choices": [{"index": 0, "delta": {"tool_calls": [delta]}}]})
            )
        frames.append(
            _data(
                {"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}
            )
        )
        frames.append(
            _data(
                {"id": "c", "choices": [], "usage": {"prompt_tokens": 900, "completion_tokens": 20}}
            )
        )
        frames.append(b"data: [DONE]\n\n")
        return frames
    frames = [_data({"type": "response.created", "response": {"id": "resp"}})]
    index = 0
    if text:
        item = {"type": "message", "id": "msg_t", "role": "assistant", "content": []}
        frames.append(
            _data({"type": "response.output_item.added", "output_index": 0, "item": item})
        )
        frames.append(
            _data({"type": "response.output_text.delta", "output_index": 0, "delta": text})
        )
        done = {**item, "content": [{"type": "output_text", "text": text}]}
        frames.append(_data({"type": "response.output_item.done", "output_index": 0, "item": done}))
        index = 1
    for offset, call in enumerate(calls):
        arguments = json.dumps(call["arguments"])
        item = {
            "type": "function_call",
            "id": f"fc_{offset}",
            "call_id": f"call_{offset}",
            "name": call["name"],
            "arguments": arguments,
            "status": "completed",
        }
        if call.get("namespace"):
            item["namespace"] = call["namespace"]
        frames.append(
            _data(
                {"type": "response.output_item.added", "output_index": index + offset, "item": item}
            )
        )
        frames.append(
            _data(
                {"type": "response.output_item.done", "output_index": index + offset, "item": item}
            )
        )
    usage = {"input_tokens": 900, "output_tokens": 20, "total_tokens": 920}
    frames.append(
        _data(
            {
                "type": "response.completed",
                "response": {"id": "resp", "status": "completed", "usage": usage},
            }
        )
    )
    return frames


class ConversationServer(WireServer):
    """Replays a scripted conversation in one wire format: a request with tools gets the
    next turn (``{"text"?, "tool_calls"?}``), one without tools (a summary) the next summary."""

    def __init__(self, api: str, turns: list[dict[str, Any]], summaries: list[str]) -> None:
        super().__init__([])
        self.api = api
        self._turns = list(turns)
        self._summaries = list(summaries)

    def next_reply(self) -> Reply:
        body = json.loads(self.requests[-1]["body"])
        if body.get("tools"):
            if not self._turns:
                return Reply(json_error("no scripted turn left"), status=500)
            turn = self._turns.pop(0)
            calls = turn.get("tool_calls") or []
            if calls:
                return Reply(tool_calls_stream(self.api, calls, turn.get("text", "")))
            return Reply(text_stream(self.api, turn["text"]))
        if not self._summaries:
            return Reply(json_error("no scripted summary left"), status=500)
        return Reply(text_stream(self.api, self._summaries.pop(0)))


def overloaded_then(api: str, text: str) -> list[Reply]:
    """A 503 asking for a 1 ms wait, then an answer: one transport-level retry's worth."""
    return [
        Reply(json_error("upstream overloaded"), status=503, headers={"retry-after-ms": "1"}),
        Reply(text_stream(api, text)),
    ]


def completions_provider(
    server: WireServer, *, max_retries: int = 0, compat: dict[str, Any] | None = None
) -> Any:
    """The real Chat Completions transport as a host provider, on ``server``."""
    from ctxmodes.providers.catalog import ModelSpec
    from ctxmodes.providers.http_model import HttpModelProvider
    from ctxmodes.providers.request_settings import ProviderRetrySettings

    model = ModelSpec.model_validate(
        {
            "id": "m",
            "api": "openai-completions",
            "provider": "loop",
            "baseUrl": f"{server.base_url}/v1",
            "compat": compat,
        }
    )
    provider = HttpModelProvider(model, lambda: "sk-loopback-key")
    provider.use_request_settings(ProviderRetrySettings.model_validate({"maxRetries": max_retries}))
    return provider
