"""History conversion shared by every wire format (pi-ai's ``transformMessages``).

Before a wire format converts messages, the history is made acceptable to the target model:
images become placeholders for text-only models, assistant turns from another model lose
their provider-specific signatures (thinking turns into text), tool-call ids are normalised
for the target, failed and aborted turns are dropped, and tool calls left without a result
get a synthetic one.
"""

from __future__ import annotations

from collections.abc import Callable

from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.wire import JsonObject

USER_IMAGE_PLACEHOLDER = "(image omitted: model does not support images)"
TOOL_IMAGE_PLACEHOLDER = "(tool image omitted: model does not support images)"
MISSING_RESULT_TEXT = "No result provided"
#: Messages that answer a tool call: Pi's results, and ctxmodes' encrypted outputs (which a
#: mode puts into a request in place of a stored result; Pi has none).
TOOL_OUTPUT_ROLES = frozenset({"toolResult", "encryptedToolOutput"})

#: (tool-call id, target model, the assistant message it came from) → id to send.
IdNormalizer = Callable[[str, ModelSpec, JsonObject], str]


def _replace_images(content: list[JsonObject], placeholder: str) -> list[JsonObject]:
    result: list[JsonObject] = []
    previous_was_placeholder = False
    for block in content:
        if block.get("type") == "image":
            if not previous_was_placeholder:
                result.append({"type": "text", "text": placeholder})
            previous_was_placeholder = True
            continue
        result.append(block)
        previous_was_placeholder = block.get("text") == placeholder
    return result


def is_same_model(message: JsonObject, model: ModelSpec) -> bool:
    return (
        message.get("provider") == model.provider
        and message.get("api") == model.api
        and message.get("model") == model.id
    )


def _assistant_blocks(
    message: JsonObject,
    model: ModelSpec,
    normalize: IdNormalizer | None,
    renamed: dict[str, str],
) -> list[JsonObject]:
    same = is_same_model(message, model)
    blocks: list[JsonObject] = []
    for block in message["content"]:
        kind = block.get("type")
        if kind == "thinking":
            if block.get("redacted"):
                if same:
                    blocks.append(block)
            elif same and block.get("thinkingSignature"):
                blocks.append(block)
            elif not (block.get("thinking") or "").strip():
                continue
            else:
                blocks.append(block if same else {"type": "text", "text": block["thinking"]})
        elif kind == "text":
            blocks.append(block if same else {"type": "text", "text": block["text"]})
        elif kind == "toolCall":
            call = block
            if not same and "thoughtSignature" in call:
                call = {key: value for key, value in call.items() if key != "thoughtSignature"}
            if not same and normalize is not None:
                new_id = normalize(call["id"], model, message)
                if new_id != call["id"]:
                    renamed[call["id"]] = new_id
                    call = {**call, "id": new_id}
            blocks.append(call)
        else:
            blocks.append(block)
    return blocks


def transform_messages(
    messages: list[JsonObject],
    model: ModelSpec,
    normalize: IdNormalizer | None,
    now_ms: Callable[[], int],
) -> list[JsonObject]:
    """The history as the target model should receive it (see the module docstring)."""
    renamed: dict[str, str] = {}
    transformed: list[JsonObject] = []
    for original in messages:
        message = original if original.get("content") is not None else {**original, "content": []}
        role = message.get("role")
        if not model.images and isinstance(message["content"], list):
            if role == "user":
                placeholder = USER_IMAGE_PLACEHOLDER
                message = {**message, "content": _replace_images(message["content"], placeholder)}
            elif role == "toolResult":
                placeholder = TOOL_IMAGE_PLACEHOLDER
                message = {**message, "content": _replace_images(message["content"], placeholder)}
        if role in TOOL_OUTPUT_ROLES:
            new_id = renamed.get(message["toolCallId"])
            if new_id and new_id != message["toolCallId"]:
                message = {**message, "toolCallId": new_id}
        elif role == "assistant":
            message = {**message, "content": _assistant_blocks(message, model, normalize, renamed)}
        transformed.append(message)

    result: list[JsonObject] = []
    pending: list[JsonObject] = []
    answered: set[str] = set()

    def settle() -> None:
        nonlocal pending, answered
        for call in pending:
            if call["id"] not in answered:
                result.append(
                    {
                        "role": "toolResult",
                        "toolCallId": call["id"],
                        "toolName": call["name"],
                        "content": [{"type": "text", "text": MISSING_RESULT_TEXT}],
                        "isError": True,
                        "timestamp": now_ms(),
                    }
                )
        pending, answered = [], set()

    for message in transformed:
        role = message.get("role")
        if role == "assistant":
            settle()
            if message.get("stopReason") in ("error", "aborted"):
                continue
            calls = [block for block in message["content"] if block.get("type") == "toolCall"]
            if calls:
                pending, answered = calls, set()
            result.append(message)
        elif role in TOOL_OUTPUT_ROLES:
            answered.add(message["toolCallId"])
            result.append(message)
        elif role == "user":
            settle()
            result.append(message)
        else:
            result.append(message)
    settle()
    return result
