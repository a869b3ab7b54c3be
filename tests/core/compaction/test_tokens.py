from __future__ import annotations

import pytest

from ctxmodes.compaction import (
    CompactionSettings,
    MalformedMessageError,
    calculate_context_tokens,
    estimate_context_tokens,
    estimate_tokens,
    get_last_assistant_usage,
    should_compact,
)
from ctxmodes.session.models import Cost, Usage, message_from_json


def _usage(total: int, *, parts: tuple[int, int, int, int] = (0, 0, 0, 0)) -> Usage:
    return Usage(
        input=parts[0],
        output=parts[1],
        cache_read=parts[2],
        cache_write=parts[3],
        total_tokens=total,
        cost=Cost(input=0, output=0, cache_read=0, cache_write=0, total=0),
    )


def _user(content):
    return message_from_json({"role": "user", "content": content, "timestamp": 1})


def test_lengths_count_utf16_code_units():
    # One emoji is two UTF-16 units, as in JavaScript; four units make one token.
    assert estimate_tokens(_user("😀😀")) == 1
    assert estimate_tokens(_user("😀😀a")) == 2
    assert estimate_tokens(_user("éééé")) == 1


def test_images_count_as_4800_characters():
    image = {"type": "image", "data": "x" * 100_000, "mimeType": "image/png"}
    assert estimate_tokens(_user([image, {"type": "text", "text": "abcd"}])) == 1201


def test_tool_calls_count_name_and_javascript_json(branch):
    message = branch.assistant(branch.tool_call("read", path="a", n=1.0)).message
    # read + {"path":"a","n":1} (JavaScript prints 1.0 as 1)
    assert estimate_tokens(message) == -(-(4 + len('{"path":"a","n":1}')) // 4)


def test_messages_the_model_never_sees_cost_nothing():
    assert estimate_tokens(message_from_json({"role": "other", "content": "abcdefgh"})) == 0


@pytest.mark.parametrize(
    "message",
    [
        {"role": "user", "content": None, "timestamp": 1},
        {"role": "assistant", "content": None},
        {"role": "bashExecution", "command": "ls"},
        {"role": "branchSummary", "fromId": "x", "timestamp": 1},
        {"role": "custom", "customType": "x", "display": True, "timestamp": 1},
    ],
)
def test_missing_fields_raise_where_pi_throws(message):
    with pytest.raises(MalformedMessageError):
        estimate_tokens(message_from_json(message))


def test_context_size_uses_the_last_usable_usage(branch):
    branch.user("q")
    branch.assistant(usage=100)
    branch.assistant(usage=999, stop="aborted")  # aborted: its usage says nothing
    branch.user("abcdefgh")
    messages = [entry.message for entry in branch.entries]
    estimate = estimate_context_tokens(messages)
    assert estimate.last_usage_index == 1
    assert estimate.usage_tokens == 100
    assert estimate.trailing_tokens == estimate_tokens(messages[2]) + 2
    assert estimate.tokens == 100 + estimate.trailing_tokens
    assert get_last_assistant_usage(branch.entries) == messages[1].usage


def test_context_size_without_usage_is_all_estimated(branch):
    branch.user("abcdefgh")
    branch.assistant(usage=0)
    messages = [entry.message for entry in branch.entries]
    estimate = estimate_context_tokens(messages)
    assert estimate.last_usage_index is None
    assert estimate.usage_tokens == 0
    assert estimate.tokens == estimate.trailing_tokens == 2 + 1
    assert get_last_assistant_usage(branch.entries) is None


def test_context_tokens_fall_back_to_the_sum_of_parts():
    assert calculate_context_tokens(_usage(42, parts=(1, 2, 3, 4))) == 42
    assert calculate_context_tokens(_usage(0, parts=(1, 2, 3, 4))) == 10


def test_should_compact_once_the_reserve_is_reached():
    settings = CompactionSettings(reserve_tokens=100)
    assert not should_compact(900, 1000, settings)
    assert should_compact(901, 1000, settings)
    assert not should_compact(10**6, 1000, CompactionSettings(enabled=False))


def test_settings_read_pi_names_and_defaults():
    settings = CompactionSettings.model_validate({"reserveTokens": 5, "keepRecentTokens": 7})
    assert (settings.enabled, settings.reserve_tokens, settings.keep_recent_tokens) == (True, 5, 7)
    default = CompactionSettings()
    assert (default.reserve_tokens, default.keep_recent_tokens) == (16384, 20000)
