"""The effort Codex asks for, the efforts the catalog offers, and the model's thinking carried
through the client sealed: bound to its account and model, never history, and left out of the
upstream request when it is not a value the service sealed for them."""

import os

import pytest

from ctxmodes.providers import (
    ModelCapabilities,
    ModelInfo,
    StreamDone,
    TextDelta,
    ToolCallComplete,
)
from ctxmodes.session import AssistantMessage, TextContent, ThinkingContent, ToolCall, Usage
from ctxmodes_remote.service.bridge import ResponseStream, model_request
from ctxmodes_remote.service.catalog import catalog_entry
from ctxmodes_remote.service.crypto import KeyRing

THINKER = ModelInfo(
    provider="gateway",
    api="anthropic-messages",
    id="claude",
    capabilities=ModelCapabilities(reasoning=True),
)
BLOCK = ThinkingContent(thinking="the plan is to call the tool", thinking_signature="sig-4f1c")
RING = KeyRing([os.urandom(32)])
_COUNTS = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0}
USAGE = Usage.model_validate({**_COUNTS, "totalTokens": 2, "cost": {**_COUNTS, "total": 0}})


def _encrypt(account: str = "alice"):
    return lambda text: RING.encrypt(account, text.encode())


def _decrypt(account: str = "alice"):
    return lambda token: RING.decrypt(account, token).decode()


def _answer(*blocks, info: ModelInfo = THINKER, carried: bool = True) -> ResponseStream:
    """The stream of one answer made of ``blocks``, fed to its end."""
    stream = ResponseStream(
        model=info.id, marked={}, encrypt=_encrypt(), reasoning_of=info if carried else None
    )
    message = AssistantMessage(
        content=list(blocks),
        api=info.api,
        provider=info.provider,
        model=info.id,
        usage=USAGE,
        stop_reason="toolUse",
        timestamp=0,
    )
    events = list(stream.start())
    for block in blocks:
        if isinstance(block, ToolCall):
            events += stream.feed(ToolCallComplete(0, block))
        elif isinstance(block, TextContent):
            events += stream.feed(TextDelta(0, block.text))
    events += stream.feed(StreamDone(message))
    return stream


def _sent(stream: ResponseStream) -> list[dict]:
    return stream._response("completed")["output"]


def _next_request(items, info: ModelInfo = THINKER, account: str = "alice", body=None):
    user = {"role": "user", "content": [{"type": "input_text", "text": "go"}]}
    body = {"input": [user, *items], **(body or {})}
    return model_request(body, info, {}, _decrypt(account), frozenset())


def _assistant_content(request) -> list:
    [assistant] = [m for m in request.messages if isinstance(m, AssistantMessage)]
    return assistant.content


@pytest.mark.parametrize(
    ("effort", "level"),
    [("high", "high"), ("minimal", "minimal"), ("xhigh", "xhigh"), ("none", None), ("max", None)],
)
def test_codexs_effort_is_the_requests_thinking_level(effort, level):
    request = _next_request([], body={"reasoning": {"effort": effort}})
    assert request.reasoning == level
    assert _next_request([]).reasoning is None


def test_the_thinking_goes_out_sealed_and_comes_back_first_in_the_models_turn():
    call = ToolCall(id="call_1", name="fixed_version", arguments={})
    stream = _answer(TextContent(text="checking"), BLOCK, call)
    output = _sent(stream)
    [reasoning] = [item for item in output if item["type"] == "reasoning"]
    assert reasoning["summary"] == []
    assert "the plan" not in reasoning["encrypted_content"]
    assert "sig-4f1c" not in reasoning["encrypted_content"]
    # Not history: the recorded output holds what the model said and called, no thinking.
    assert [item["type"] for item in stream.plain_output] == ["message", "function_call"]

    content = _assistant_content(_next_request(output))
    assert content[0] == BLOCK
    assert [type(block) for block in content[1:]] == [TextContent, ToolCall]


def test_no_reasoning_item_leaves_for_a_client_that_does_not_keep_them():
    output = _sent(_answer(BLOCK, TextContent(text="done"), carried=False))
    assert [item["type"] for item in output] == ["message"]


def test_an_empty_thinking_block_makes_no_reasoning_item():
    output = _sent(_answer(ThinkingContent(thinking=""), TextContent(text="done")))
    assert [item["type"] for item in output] == ["message"]


def _alone(reasoning: dict) -> list:
    said = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "x"}],
    }
    return _assistant_content(_next_request([said, reasoning]))


def test_reasoning_the_service_did_not_seal_for_this_account_and_model_is_left_out():
    [sealed] = [item for item in _sent(_answer(BLOCK)) if item["type"] == "reasoning"]
    assert _alone(sealed) == [BLOCK, TextContent(text="x")]

    another_model = ModelInfo(provider="gateway", api="anthropic-messages", id="other")
    said = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "x"}],
    }
    for left_out in (
        # another backend's reasoning (OpenAI's own ciphertext)
        {**sealed, "encrypted_content": "gAAAAABpPDIVOKrsHNZ0GwsoEKA_IGfuJ5f8Ma_6"},
        # altered
        {**sealed, "encrypted_content": sealed["encrypted_content"][:-8] + "AAAAAAAA"},
        # any other value of the account sealed by the service (a tool's encrypted output)
        {**sealed, "encrypted_content": RING.encrypt("alice", b'{"block": {}}')},
        {**sealed, "encrypted_content": None},
    ):
        assert _alone(left_out) == [TextContent(text="x")]
    # Another account's, and one sealed for a model other than the upstream's now.
    assert _assistant_content(_next_request([said, sealed], account="bob")) == [
        TextContent(text="x")
    ]
    assert _assistant_content(_next_request([said, sealed], info=another_model)) == [
        TextContent(text="x")
    ]


def test_the_catalog_offers_the_efforts_of_the_models_thinking_levels():
    plain = ModelInfo(provider="gateway", api="openai-completions", id="m")
    entry = catalog_entry(plain)
    assert entry["supported_reasoning_levels"] == []
    assert "default_reasoning_level" not in entry

    entry = catalog_entry(THINKER)
    efforts = [level["effort"] for level in entry["supported_reasoning_levels"]]
    assert efforts == ["minimal", "low", "medium", "high"]
    assert entry["default_reasoning_level"] == "medium"

    levels = ("off", "high", "xhigh")
    deep = ModelInfo(
        provider="gateway",
        api="openai-responses",
        id="deep",
        capabilities=ModelCapabilities(reasoning=True, thinking_levels=levels),
    )
    entry = catalog_entry(deep)
    assert [level["effort"] for level in entry["supported_reasoning_levels"]] == ["high", "xhigh"]
    assert entry["default_reasoning_level"] == "high"
