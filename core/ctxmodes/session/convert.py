"""Turning session messages into the messages a model receives (Pi's ``convertToLlm``).

``user``, ``assistant`` and ``toolResult`` messages pass through unchanged. The session's own
roles become ``user`` messages:

* ``bashExecution`` — the command, its output in a fenced block and its outcome; dropped when
  ``excludeFromContext`` is set (``!!`` commands);
* ``custom`` — its content (a string becomes one text block);
* ``branchSummary`` / ``compactionSummary`` — the summary inside the wrapper texts below.

Messages of any other role are dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from ctxmodes.session.codec import js_number
from ctxmodes.session.jsvalues import js_truthy

if TYPE_CHECKING:
    from ctxmodes.session.models import (
        AgentMessage,
        AssistantMessage,
        ToolResultMessage,
        UnknownMessage,
        UserMessage,
    )

    #: What :func:`convert_to_llm` returns. A stored message that does not fit its role's
    #: model but has a model-facing role passes through as the :class:`UnknownMessage` it
    #: was read as.
    LlmMessage = UserMessage | AssistantMessage | ToolResultMessage | UnknownMessage

__all__ = [
    "BRANCH_SUMMARY_PREFIX",
    "BRANCH_SUMMARY_SUFFIX",
    "COMPACTION_SUMMARY_PREFIX",
    "COMPACTION_SUMMARY_SUFFIX",
    "LlmMessage",
    "bash_execution_to_text",
    "convert_message_json",
    "convert_to_llm",
    "convert_to_llm_json",
]

COMPACTION_SUMMARY_PREFIX: Final = (
    "The conversation history before this point was compacted into the following summary:"
    "\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX: Final = "\n</summary>"
BRANCH_SUMMARY_PREFIX: Final = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
# No newline before the closing tag, unlike the compaction wrapper.
BRANCH_SUMMARY_SUFFIX: Final = "</summary>"

JsonObject = dict[str, Any]


def __getattr__(name: str) -> Any:
    # ``LlmMessage`` is a union of models: built (importing pydantic) only when asked for.
    if name == "LlmMessage":
        from ctxmodes.session import models

        return (
            models.UserMessage
            | models.AssistantMessage
            | models.ToolResultMessage
            | (models.UnknownMessage)
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_UNDEFINED: Final = object()


def _js_string(value: Any) -> str:
    """``${value}`` in a JavaScript template literal, for JSON values (or ``_UNDEFINED``)."""
    if value is _UNDEFINED:
        return "undefined"
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "NaN" if value != value else js_number(value)
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return ",".join("" if item is None else _js_string(item) for item in value)
    return "[object Object]"


def bash_execution_to_text(message: JsonObject) -> str:
    """The user-message text Pi builds for a ``bashExecution`` message."""
    text = f"Ran `{_js_string(message.get('command', _UNDEFINED))}`\n"
    output = message.get("output")
    if js_truthy(output):
        text += f"```\n{_js_string(output)}\n```"
    else:
        text += "(no output)"
    exit_code = message.get("exitCode")
    if js_truthy(message.get("cancelled")):
        text += "\n\n(command cancelled)"
    elif exit_code is not None and not (type(exit_code) in (int, float) and exit_code == 0):
        text += f"\n\nCommand exited with code {_js_string(exit_code)}"
    full_output_path = message.get("fullOutputPath")
    if js_truthy(message.get("truncated")) and js_truthy(full_output_path):
        text += f"\n\n[Output truncated. Full output: {_js_string(full_output_path)}]"
    return text


def _user_text(text: str, timestamp: Any) -> JsonObject:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": timestamp}


def convert_message_json(message: JsonObject) -> JsonObject | None:
    """Convert one stored message; ``None`` if the model never sees it."""
    role = message.get("role")
    if role in ("user", "assistant", "toolResult"):
        return message
    if role == "bashExecution":
        if js_truthy(message.get("excludeFromContext")):
            return None
        converted = _user_text(bash_execution_to_text(message), message.get("timestamp"))
    elif role == "custom":
        content = message.get("content")
        converted = {
            "role": "user",
            "content": [{"type": "text", "text": content}] if isinstance(content, str) else content,
            "timestamp": message.get("timestamp"),
        }
    elif role == "branchSummary":
        text = (
            BRANCH_SUMMARY_PREFIX
            + _js_string(message.get("summary", _UNDEFINED))
            + BRANCH_SUMMARY_SUFFIX
        )
        converted = _user_text(text, message.get("timestamp"))
    elif role == "compactionSummary":
        text = (
            COMPACTION_SUMMARY_PREFIX
            + _js_string(message.get("summary", _UNDEFINED))
            + COMPACTION_SUMMARY_SUFFIX
        )
        converted = _user_text(text, message.get("timestamp"))
    else:
        return None
    # JSON.stringify drops properties whose value is undefined.
    if "timestamp" not in message:
        del converted["timestamp"]
    if role == "custom" and "content" not in message:
        del converted["content"]
    return converted


def convert_to_llm_json(messages: Sequence[JsonObject]) -> list[JsonObject]:
    """:func:`convert_to_llm` on stored JSON messages."""
    out: list[JsonObject] = []
    for message in messages:
        converted = convert_message_json(message)
        if converted is not None:
            out.append(converted)
    return out


def convert_to_llm(messages: Sequence[AgentMessage]) -> list[LlmMessage]:
    """Convert context messages into the messages the model receives."""
    from ctxmodes.session.models import (
        AssistantMessage,
        ToolResultMessage,
        UnknownMessage,
        UserMessage,
        message_from_json,
        to_json,
    )

    out: list[LlmMessage] = []
    for message in messages:
        if isinstance(message, UserMessage | AssistantMessage | ToolResultMessage):
            out.append(message)
            continue
        stored = to_json(message)
        converted = convert_message_json(stored)
        if converted is None:
            continue
        if converted is stored:
            assert isinstance(message, UnknownMessage)
            out.append(message)
            continue
        model = message_from_json(converted)
        assert isinstance(model, UserMessage | UnknownMessage)
        out.append(model)
    return out
