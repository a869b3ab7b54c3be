"""A small builder of session branches for the context-window tests."""

from __future__ import annotations

import itertools

import pytest

from ctxmodes.session.models import (
    AssistantMessage,
    BashExecutionMessage,
    CompactionEntry,
    Cost,
    CustomEntry,
    CustomMessageEntry,
    MessageEntry,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from ctxmodes.windows.marker import CONTEXT_WINDOW_CUSTOM_TYPE

USAGE = Usage(
    input=1,
    output=1,
    cache_read=0,
    cache_write=0,
    total_tokens=2,
    cost=Cost(input=0, output=0, cache_read=0, cache_write=0, total=0),
)


class Branch:
    """Entries chained parent to child, as a session appends them."""

    def __init__(self):
        self.entries = []
        self._ids = itertools.count()

    @property
    def leaf(self):
        return self.entries[-1].id if self.entries else None

    def _next(self, entry_id):
        return entry_id or f"e{next(self._ids):04d}"

    def _base(self, entry_id):
        return {
            "id": self._next(entry_id),
            "parent_id": self.leaf,
            "timestamp": "2026-01-01T00:00:00.000Z",
        }

    def add(self, entry):
        self.entries.append(entry)
        return entry

    def user(self, text, entry_id=None):
        message = UserMessage(content=text, timestamp=1)
        return self.add(MessageEntry(message=message, **self._base(entry_id)))

    def assistant(self, *blocks, entry_id=None):
        content = [TextContent(text=b) if isinstance(b, str) else b for b in blocks]
        message = AssistantMessage(
            content=content,
            api="scripted",
            provider="scripted",
            model="m",
            usage=USAGE,
            stop_reason="stop",
            timestamp=1,
        )
        return self.add(MessageEntry(message=message, **self._base(entry_id)))

    def tool_call(self, name, arguments, namespace=None, entry_id=None):
        call = ToolCall(id="call", name=name, arguments=arguments, namespace=namespace)
        return self.assistant(call, entry_id=entry_id)

    def tool_result(self, tool_name, text, entry_id=None):
        message = ToolResultMessage(
            tool_call_id="call",
            tool_name=tool_name,
            content=[TextContent(text=text)],
            is_error=False,
            timestamp=1,
        )
        return self.add(MessageEntry(message=message, **self._base(entry_id)))

    def bash(self, command, output, entry_id=None):
        message = BashExecutionMessage(
            command=command,
            output=output,
            exit_code=0,
            cancelled=False,
            truncated=False,
            timestamp=1,
        )
        return self.add(MessageEntry(message=message, **self._base(entry_id)))

    def marker(self, marker, entry_id=None):
        return self.add(
            CustomMessageEntry(
                custom_type=marker.custom_type,
                content=marker.content,
                display=marker.display,
                details=marker.details.dump(),
                **self._base(entry_id),
            )
        )

    def raw_marker(self, details, entry_id=None):
        return self.add(
            CustomMessageEntry(
                custom_type=CONTEXT_WINDOW_CUSTOM_TYPE,
                content="marker",
                display=True,
                details=details,
                **self._base(entry_id),
            )
        )

    def custom_message(self, custom_type, content, entry_id=None):
        return self.add(
            CustomMessageEntry(
                custom_type=custom_type, content=content, display=True, **self._base(entry_id)
            )
        )

    def custom(self, custom_type, data, entry_id=None):
        return self.add(CustomEntry(custom_type=custom_type, data=data, **self._base(entry_id)))

    def compaction(self, details, entry_id=None):
        return self.add(
            CompactionEntry(
                summary="s",
                first_kept_entry_id="x",
                tokens_before=1,
                details=details,
                **self._base(entry_id),
            )
        )


@pytest.fixture
def branch():
    return Branch()


@pytest.fixture
def new_branch():
    """A factory of empty branches (for property tests, which need a fresh one per example)."""
    return Branch
