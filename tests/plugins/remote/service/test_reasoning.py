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
    ThinkingComplete,
    ThinkingDelta,
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


def _answer(
    *blocks,
    info: ModelInfo = THINKER,
    carried: bool = True,
    summaries: bool = False,
    announced: bool = True,
) -> tuple[ResponseStream, list[tuple[str, dict]]]:
    """The stream of one answer made of ``blocks``, fed to its end as a provider streams it
    (a thinking block in two pieces, then complete, unless not ``announced``), and the
    events it made."""
    stream = ResponseStream(
        model=info.id,
        marked={},
        encrypt=_encrypt(),
        reasoning_of=info if carried else None,
        reasoning_summaries=summaries,
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
    for index, block in enumerate(blocks):
        if isinstance(block, ToolCall):
            events += stream.feed(ToolCallComplete(index, block))
        elif isinstance(block, TextContent):
            events += stream.feed(TextDelta(index, block.text))
        elif isinstance(block, ThinkingContent):
            half = len(block.thinking) // 2
            for piece in (block.thinking[:half], block.thinking[half:]):
                events += stream.feed(ThinkingDelta(index, piece)) if piece else []
            events += stream.feed(ThinkingComplete(index, block)) if announced else []
    events += stream.feed(StreamDone(message))
    return stream, events


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


def _types(events: list[tuple[str, dict]]) -> list[str]:
    return [kind for kind, _ in events]


def test_the_thinking_goes_out_sealed_before_what_follows_it_and_comes_back_first():
    call = ToolCall(id="call_1", name="fixed_version", arguments={})
    stream, events = _answer(BLOCK, TextContent(text="checking"), call)
    output = _sent(stream)
    assert [item["type"] for item in output] == ["reasoning", "message", "function_call"]
    reasoning = output[0]
    assert reasoning["summary"] == []
    assert "the plan" not in reasoning["encrypted_content"]
    assert "sig-4f1c" not in reasoning["encrypted_content"]
    # Done (sealed, with the block's signature, which comes last) before the text starts.
    kinds = _types(events)
    assert kinds.index("response.output_text.delta") > kinds.index("response.output_item.done")
    assert "response.reasoning_summary_text.delta" not in kinds
    # Not history: the recorded output holds what the model said and called, no thinking.
    assert [item["type"] for item in stream.plain_output] == ["message", "function_call"]

    content = _assistant_content(_next_request(output))
    assert content == [BLOCK, TextContent(text="checking"), call]


def test_the_thinking_is_shown_as_it_comes_when_the_client_asks():
    stream, events = _answer(BLOCK, TextContent(text="done"), summaries=True)
    deltas = [d["delta"] for kind, d in events if kind == "response.reasoning_summary_text.delta"]
    assert "".join(deltas) == BLOCK.thinking
    assert len(deltas) == 2  # streamed, not told at the end
    [done] = [d for kind, d in events if kind == "response.reasoning_summary_text.done"]
    assert done["text"] == BLOCK.thinking
    reasoning = _sent(stream)[0]
    assert reasoning["summary"] == [{"type": "summary_text", "text": BLOCK.thinking}]
    assert {d["item_id"] for kind, d in events if "reasoning_summary" in kind} == {reasoning["id"]}
    # Redacted thinking has no text to show.
    redacted = ThinkingContent(thinking="", thinking_signature="opaque", redacted=True)
    stream, events = _answer(redacted, TextContent(text="done"), summaries=True)
    assert _sent(stream)[0]["summary"] == []
    assert not [kind for kind in _types(events) if "reasoning_summary" in kind]


def test_thinking_a_provider_never_says_is_complete_leaves_with_the_answers_end():
    stream, _ = _answer(BLOCK, TextContent(text="done"), announced=False)
    output = _sent(stream)
    assert [item["type"] for item in output] == ["reasoning", "message"]
    assert _assistant_content(_next_request(output))[0] == BLOCK


def test_no_reasoning_item_leaves_for_a_client_that_does_not_keep_them():
    stream, events = _answer(BLOCK, TextContent(text="done"), carried=False, summaries=True)
    assert [item["type"] for item in _sent(stream)] == ["message"]
    assert not [kind for kind in _types(events) if "reasoning" in kind]


def test_an_empty_thinking_block_makes_no_reasoning_item():
    stream, _ = _answer(ThinkingContent(thinking=""), TextContent(text="done"))
    assert [item["type"] for item in _sent(stream)] == ["message"]


def _alone(reasoning: dict) -> list:
    said = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "x"}],
    }
    return _assistant_content(_next_request([said, reasoning]))


def test_reasoning_the_service_did_not_seal_for_this_account_and_model_is_left_out():
    [sealed] = [item for item in _sent(_answer(BLOCK)[0]) if item["type"] == "reasoning"]
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


def test_the_catalog_offers_the_efforts_of_the_models_thinking_levels_and_their_summaries():
    plain = ModelInfo(provider="gateway", api="openai-completions", id="m")
    entry = catalog_entry(plain)
    assert entry["supported_reasoning_levels"] == []
    assert "default_reasoning_level" not in entry
    assert entry["supports_reasoning_summaries"] is False

    entry = catalog_entry(THINKER)
    efforts = [level["effort"] for level in entry["supported_reasoning_levels"]]
    assert efforts == ["minimal", "low", "medium", "high"]
    assert entry["default_reasoning_level"] == "medium"
    assert entry["supports_reasoning_summaries"] is True

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


def test_the_signature_on_a_call_rides_sealed_before_it_and_comes_back_on_it():
    call = ToolCall(id="call_7", name="multiply", arguments={}, thought_signature="sig-9b2e")
    unsigned = ToolCall(id="call_8", name="multiply", arguments={})
    stream, _ = _answer(call, unsigned)
    output = _sent(stream)
    assert [item["type"] for item in output] == ["reasoning", "function_call", "function_call"]
    assert output[0]["summary"] == []
    assert "sig-9b2e" not in str(output)
    assert _assistant_content(_next_request(output)) == [call, unsigned]
    # Not for another account: the call goes back unsigned.
    assert _assistant_content(_next_request(output, account="bob")) == [
        call.model_copy(update={"thought_signature": None}),
        unsigned,
    ]
