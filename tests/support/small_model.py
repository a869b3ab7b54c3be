"""A loopback Chat Completions server for a model with a small context window, as a local
server (llama.cpp, Ollama) runs one.

It counts a request's tokens as four bytes of its body each (tool schemas included, as a
real server's prompt holds them), refuses a request that does not fit in its window with
llama.cpp's error, and reports the count as the usage of its answer. Its "model" follows the
window protocol: told the window is used up, it writes a note and then calls
``new_context``; asked for a summary (a request without tools), it gives one; otherwise it
answers with a paragraph of ``answer_bytes`` bytes.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from ctxmodes.session.manager import SessionManager
from ctxmodes.windows.marker import CONTEXT_WINDOW_CUSTOM_TYPE
from support.cli_rig import ctxmodes
from support.wire_server import Reply, WireServer, _data, json_error, tool_calls_stream

#: What the fallback marker says (see ``ctxmodes.windows.marker.FALLBACK_TEXT``).
USED_UP = "This context window is used up"
#: llama.cpp's answer to a prompt longer than its context.
EXCEEDED = "the request exceeds the available context size, try increasing it"


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


class SmallModelServer(WireServer):
    def __init__(self, context_window: int, *, answer_bytes: int = 1_600) -> None:
        super().__init__([])
        self.context_window = context_window
        self.answer_bytes = answer_bytes
        #: The prompt tokens of each request, and the requests refused as too long.
        self.prompt_tokens: list[int] = []
        self.refused = 0
        self.authorization: list[str | None] = []

    def next_reply(self) -> Reply:
        request = self.requests[-1]
        self.authorization.append(
            next((v for k, v in request["headers"].items() if k.lower() == "authorization"), None)
        )
        tokens = math.ceil(len(request["body"]) / 4)
        self.prompt_tokens.append(tokens)
        if tokens > self.context_window:
            self.refused += 1
            return Reply(json_error(EXCEEDED), status=400)
        body = json.loads(request["body"])
        messages = body.get("messages", [])
        last = messages[-1] if messages else {}
        if not body.get("tools"):
            return self._text_reply("Summary: the user asked questions and got answers.", tokens)
        wrote_note = self._tool_name_of(messages, last.get("tool_call_id")) == "notes"
        if last.get("role") == "tool" and wrote_note:
            return self._calls([{"name": "new_context", "arguments": {}}], tokens)
        if USED_UP in _text(last):
            note = {
                "action": "write_file",
                "path": "checkpoint.md",
                "text": "Active request: answering the user's questions. Next: continue.\n",
            }
            return self._calls([{"name": "notes", "arguments": note}], tokens)
        filler = "The answer goes on with more detail. " * (self.answer_bytes // 37 + 1)
        answer = f"Answer {len(self.requests)}. {filler}"[: self.answer_bytes]
        return self._text_reply(answer, tokens)

    @staticmethod
    def _tool_name_of(messages: list[dict[str, Any]], call_id: str | None) -> str | None:
        for message in reversed(messages):
            for call in message.get("tool_calls") or []:
                if call.get("id") == call_id:
                    return str(call["function"]["name"])
        return None

    def _calls(self, calls: list[dict[str, Any]], tokens: int) -> Reply:
        frames = tool_calls_stream("openai-completions", calls)
        return Reply([*frames[:-2], self._usage(tokens, 40), frames[-1]])

    def _text_reply(self, text: str, tokens: int) -> Reply:
        frames = [
            _data({"id": "c", "choices": [{"index": 0, "delta": {"content": text}}]}),
            _data({"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
            self._usage(tokens, math.ceil(len(text) / 4)),
            b"data: [DONE]\n\n",
        ]
        return Reply(frames)

    @staticmethod
    def _usage(prompt: int, completion: int) -> bytes:
        usage = {"prompt_tokens": prompt, "completion_tokens": completion}
        return _data({"id": "c", "choices": [], "usage": usage})


def run_small_model(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    *,
    mode: str,
    context_window: int,
    prompts: int,
) -> tuple[SmallModelServer, SessionManager, str, str]:
    """``ctxmodes run --mode MODE`` on a local server with ``context_window`` tokens,
    configured as a keyless local server is documented (``api_key_env`` naming a variable
    that is not set), with ``prompts`` long prompts. Returns the server, the session, and
    what the command printed on standard output and error."""
    session_file = tmp_path / "session.jsonl"
    prompt = "Please explain this part of the code in detail. " * 40
    with SmallModelServer(context_window) as server:
        (tmp_path / ".ctxmodes.toml").write_text(
            "[providers.local]\n"
            'api = "openai-completions"\n'
            f'base_url = "{server.base_url}/v1"\n'
            'api_key_env = "LOCAL_SERVER_KEY_NOT_SET"\n'
            f'models = [{{ id = "small", context_window = {context_window}, '
            "max_tokens = 1024, compat = { supportsDeveloperRole = false } }]\n"
        )
        code, out, err = ctxmodes(
            capsys,
            "run",
            "--approve",  # the project file configures the server
            "--mode",
            mode,
            "--model",
            "local/small",
            "--session",
            str(session_file),
            *[f"{n}: {prompt}" for n in range(prompts)],
        )
    assert code == 0, err
    return server, SessionManager.open(session_file), out, err


def marker_kinds(manager: SessionManager) -> list[str]:
    """The kinds of the window markers of the session, in file order."""
    return [
        entry.details["contextManagement"]["kind"]
        for entry in manager.get_entries()
        if getattr(entry, "custom_type", None) == CONTEXT_WINDOW_CUSTOM_TYPE
    ]


def check_small_model_session(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    *,
    mode: str,
    context_window: int,
    prompts: int,
) -> None:
    """A whole session of ``mode`` on a small model: it works in the window, is reminded,
    then told the window is used up, rolls over, and never sends more than fits; the user is
    warned once when the window is small."""
    server, manager, out, err = run_small_model(
        tmp_path, capsys, mode=mode, context_window=context_window, prompts=prompts
    )
    assert server.refused == 0, "no request outgrew the model's window"
    assert max(server.prompt_tokens) <= context_window
    assert set(server.authorization) == {None}, "no key was configured: none was sent"
    kinds = marker_kinds(manager)
    assert kinds[:1] == ["window"]
    assert "fallback" in kinds, kinds
    assert kinds.index("reminder") < kinds.index("fallback")
    assert kinds.count("window") >= 2, "the model rolled over into a new window"
    warning = f"is small for the {mode} mode"
    assert (out + err).count(warning) == (1 if context_window < 16_384 else 0)
