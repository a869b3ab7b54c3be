"""Text helpers of the scripted model: request size estimates and digest summaries."""

from __future__ import annotations

import re

import orjson

from ctxmodes.providers.base import EncryptedToolOutput, ModelRequest
from ctxmodes.session.models import (
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    UserMessage,
)

#: Pi counts an image as 4,800 tokens when it estimates context size.
_IMAGE_CHARS = 4800 * 4
_GOAL_CHARS = 200
_ENTRY_CHARS = 160
_RECENT_ENTRIES = 6
# Pi's summarization input is "[User]: …", "[Assistant]: …" … entries separated by blank
# lines; an entry's own text may contain blank lines, so split only before a role tag.
_ENTRY_BREAK = re.compile(
    r"\n\n(?=\[(?:User|Assistant|Assistant thinking|Assistant tool calls|Tool result)\]: )"
)
_CONVERSATION = re.compile(r"<conversation>\n?(.*?)\n?</conversation>", re.DOTALL)


def estimate_chars(request: ModelRequest) -> int:
    """Characters the request carries: system prompt, messages, tool schemas."""
    total = len(request.system_prompt)
    for message in request.messages:
        if isinstance(message, EncryptedToolOutput):
            total += len(message.encrypted_content) + _IMAGE_CHARS * len(message.images)
            continue
        content = message.content
        if isinstance(content, str):
            total += len(content)
            continue
        for block in content:
            if isinstance(block, TextContent):
                total += len(block.text)
            elif isinstance(block, ThinkingContent):
                total += len(block.thinking)
            elif isinstance(block, ToolCall):
                total += len(block.name) + len(orjson.dumps(block.arguments))
            elif isinstance(block, ImageContent):
                total += _IMAGE_CHARS
    if request.tools:
        total += len(orjson.dumps([tool.model_dump() for tool in request.tools]))
    return total


def digest_summary(request: ModelRequest) -> str:
    """A deterministic, structured summary of a summarization request's conversation.

    It names the first user request as the goal and lists the last few conversation
    entries, so tests can see which part of the session a summary covered.
    """
    entries = _entries(_user_text(request))
    goal = next((entry for entry in entries if entry.startswith("[User]: ")), "")
    goal_line = _one_line(goal.removeprefix("[User]: "), _GOAL_CHARS) or "(no user request)"
    recent = [f"- {_one_line(entry, _ENTRY_CHARS)}" for entry in entries[-_RECENT_ENTRIES:]]
    return "\n".join(
        [
            "## Goal",
            goal_line,
            "",
            "## Progress",
            "### Done",
            *(recent or ["- (nothing to summarize)"]),
            "",
            "## Next Steps",
            "- Continue from the most recent entry above.",
            "",
            "## Critical Context",
            f"- Digest of {len(entries)} conversation entries by the scripted model.",
        ]
    )


def _user_text(request: ModelRequest) -> str:
    texts: list[str] = []
    for message in request.messages:
        if not isinstance(message, UserMessage):
            continue
        if isinstance(message.content, str):
            texts.append(message.content)
        else:
            texts.extend(part.text for part in message.content if isinstance(part, TextContent))
    return "\n\n".join(texts)


def _entries(text: str) -> list[str]:
    match = _CONVERSATION.search(text)
    body = match.group(1) if match else text
    return [entry.strip() for entry in _ENTRY_BREAK.split(body) if entry.strip()]


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
