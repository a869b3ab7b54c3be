"""The last model-independent repairs before messages go to a provider.

Two rules every transport needs (Pi applies them in its model layer):

* assistant messages that ended in ``error`` or ``aborted`` are not replayed: they are
  incomplete turns, and the model should go on from the last complete state;
* messages that fit no model-facing shape (a damaged stored message) are left out, since
  no provider could send them;
* every tool call gets a result: a call without one (its run was aborted, or it came from
  an errored turn) gets an error result ``No result provided`` right after its assistant
  message's results, so strict providers accept the conversation.

Nothing here is persisted; the session keeps what really happened.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from ctxmodes.providers.base import LlmMessage
from ctxmodes.session.convert import LlmMessage as StoredLlmMessage
from ctxmodes.session.models import (
    AssistantMessage,
    ContentBlock,
    ImageContent,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

MISSING_RESULT_TEXT: Final = "No result provided"
#: What an image becomes when images are blocked (Pi's ``images.blockImages``).
BLOCKED_IMAGE_TEXT: Final = "Image reading is disabled."


def without_images(messages: Sequence[StoredLlmMessage]) -> list[StoredLlmMessage]:
    """``messages`` with every image of a user message or a tool result replaced by
    :data:`BLOCKED_IMAGE_TEXT`, once for a run of them, as Pi sends them when
    ``images.blockImages`` is on; the session keeps the images."""
    blocked: list[StoredLlmMessage] = []
    for message in messages:
        if not isinstance(message, UserMessage | ToolResultMessage) or isinstance(
            message.content, str
        ):
            blocked.append(message)
            continue
        if not any(isinstance(block, ImageContent) for block in message.content):
            blocked.append(message)
            continue
        content: list[ContentBlock] = []
        for block in message.content:
            if isinstance(block, ImageContent):
                block = TextContent(text=BLOCKED_IMAGE_TEXT)
            previous = content[-1] if content else None
            if not (
                isinstance(block, TextContent)
                and block.text == BLOCKED_IMAGE_TEXT
                and isinstance(previous, TextContent)
                and previous.text == BLOCKED_IMAGE_TEXT
            ):
                content.append(block)
        blocked.append(message.model_copy(update={"content": content}))
    return blocked


def shape_messages(
    messages: Sequence[StoredLlmMessage], now_ms: Callable[[], int]
) -> list[LlmMessage]:
    """``messages`` with unreplayable assistant turns dropped and missing results added."""
    shaped: list[LlmMessage] = []
    open_calls: list[ToolCall] = []
    answered: set[str] = set()

    def close_open_calls() -> None:
        for call in open_calls:
            if call.id not in answered:
                shaped.append(
                    ToolResultMessage(
                        tool_call_id=call.id,
                        tool_name=call.name,
                        content=[TextContent(text=MISSING_RESULT_TEXT)],
                        is_error=True,
                        timestamp=now_ms(),
                    )
                )
        open_calls.clear()
        answered.clear()

    for message in messages:
        if isinstance(message, AssistantMessage):
            close_open_calls()
            if message.stop_reason in ("error", "aborted"):
                continue
            open_calls.extend(block for block in message.content if isinstance(block, ToolCall))
        elif isinstance(message, ToolResultMessage):
            answered.add(message.tool_call_id)
        elif isinstance(message, UserMessage):
            close_open_calls()
        else:
            continue
        shaped.append(message)
    close_open_calls()
    return shaped
