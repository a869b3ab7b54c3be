"""Pi-compatible session store: models, JSONL codec, reader, writer and ``SessionManager``.

Session files are byte-compatible with the Pi coding agent 0.85 (format version 3): files
written here open in Pi with the same tree and context, and lines Pi wrote re-encode to the
same bytes. See :mod:`ctxmodes.session.manager` for where behaviour deliberately differs.

A public module: import the session format from here (:mod:`~ctxmodes.session.codec` is the
JSON codec that writes lines as Pi's ``JSON.stringify`` does); the other submodules are
internal.
"""

import importlib
from typing import TYPE_CHECKING, Any

from ctxmodes.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from ctxmodes.session import codec
    from ctxmodes.session.branch_path import BranchPath
    from ctxmodes.session.context import SessionContext
    from ctxmodes.session.convert import convert_to_llm
    from ctxmodes.session.errors import (
        EntryNotFoundError,
        NotASessionError,
        ReadOnlySessionError,
        SessionChangedError,
        SessionError,
        SessionLockedError,
    )
    from ctxmodes.session.ids import PI_IDENTITY, IdentitySource, timestamp_ms
    from ctxmodes.session.listing import SessionInfo
    from ctxmodes.session.manager import SessionManager, SessionPosition
    from ctxmodes.session.models import (
        AgentMessage,
        AssistantMessage,
        BashExecutionMessage,
        BranchSummaryEntry,
        BranchSummaryMessage,
        CompactionEntry,
        CompactionSummaryMessage,
        ContentBlock,
        Cost,
        CustomEntry,
        CustomMessage,
        CustomMessageEntry,
        ImageContent,
        LabelEntry,
        MessageEntry,
        ModelChangeEntry,
        ModelRef,
        SessionEntry,
        SessionHeader,
        SessionInfoEntry,
        TextContent,
        ThinkingContent,
        ThinkingLevelChangeEntry,
        ToolCall,
        ToolResultMessage,
        UnknownContent,
        UnknownEntry,
        UnknownMessage,
        Usage,
        UserMessage,
        entry_from_json,
        message_from_json,
        to_json,
    )
    from ctxmodes.session.reader import SkippedLine
    from ctxmodes.session.store import IndexWarning, StoredRun
    from ctxmodes.session.tree import SessionTreeNode
    from ctxmodes.session.writer import Durability

#: Public name → the module that defines it. Resolved on first use, so that opening a
#: session file and reading its context as JSON loads none of the models (pydantic).
_EXPORTS: dict[str, str] = {
    "AgentMessage": "ctxmodes.session.models",
    "AssistantMessage": "ctxmodes.session.models",
    "BashExecutionMessage": "ctxmodes.session.models",
    "BranchPath": "ctxmodes.session.branch_path",
    "BranchSummaryEntry": "ctxmodes.session.models",
    "BranchSummaryMessage": "ctxmodes.session.models",
    "CompactionEntry": "ctxmodes.session.models",
    "CompactionSummaryMessage": "ctxmodes.session.models",
    "ContentBlock": "ctxmodes.session.models",
    "Cost": "ctxmodes.session.models",
    "CustomEntry": "ctxmodes.session.models",
    "CustomMessage": "ctxmodes.session.models",
    "CustomMessageEntry": "ctxmodes.session.models",
    "Durability": "ctxmodes.session.writer",
    "EntryNotFoundError": "ctxmodes.session.errors",
    "IdentitySource": "ctxmodes.session.ids",
    "ImageContent": "ctxmodes.session.models",
    "IndexWarning": "ctxmodes.session.store",
    "LabelEntry": "ctxmodes.session.models",
    "MessageEntry": "ctxmodes.session.models",
    "ModelChangeEntry": "ctxmodes.session.models",
    "ModelRef": "ctxmodes.session.models",
    "NotASessionError": "ctxmodes.session.errors",
    "PI_IDENTITY": "ctxmodes.session.ids",
    "ReadOnlySessionError": "ctxmodes.session.errors",
    "SessionChangedError": "ctxmodes.session.errors",
    "SessionContext": "ctxmodes.session.context",
    "SessionEntry": "ctxmodes.session.models",
    "SessionError": "ctxmodes.session.errors",
    "SessionHeader": "ctxmodes.session.models",
    "SessionInfo": "ctxmodes.session.listing",
    "SessionInfoEntry": "ctxmodes.session.models",
    "SessionLockedError": "ctxmodes.session.errors",
    "SessionManager": "ctxmodes.session.manager",
    "SessionPosition": "ctxmodes.session.manager",
    "SessionTreeNode": "ctxmodes.session.tree",
    "SkippedLine": "ctxmodes.session.reader",
    "StoredRun": "ctxmodes.session.store",
    "TextContent": "ctxmodes.session.models",
    "ThinkingContent": "ctxmodes.session.models",
    "ThinkingLevelChangeEntry": "ctxmodes.session.models",
    "ToolCall": "ctxmodes.session.models",
    "ToolResultMessage": "ctxmodes.session.models",
    "UnknownContent": "ctxmodes.session.models",
    "UnknownEntry": "ctxmodes.session.models",
    "UnknownMessage": "ctxmodes.session.models",
    "Usage": "ctxmodes.session.models",
    "UserMessage": "ctxmodes.session.models",
    "convert_to_llm": "ctxmodes.session.convert",
    "timestamp_ms": "ctxmodes.session.ids",
    "entry_from_json": "ctxmodes.session.models",
    "message_from_json": "ctxmodes.session.models",
    "to_json": "ctxmodes.session.models",
}


__all__ = [
    "PI_IDENTITY",
    "AgentMessage",
    "AssistantMessage",
    "BashExecutionMessage",
    "BranchPath",
    "BranchSummaryEntry",
    "BranchSummaryMessage",
    "CompactionEntry",
    "CompactionSummaryMessage",
    "ContentBlock",
    "Cost",
    "CustomEntry",
    "CustomMessage",
    "CustomMessageEntry",
    "Durability",
    "EntryNotFoundError",
    "IdentitySource",
    "ImageContent",
    "IndexWarning",
    "LabelEntry",
    "MessageEntry",
    "ModelChangeEntry",
    "ModelRef",
    "NotASessionError",
    "ReadOnlySessionError",
    "SessionChangedError",
    "SessionContext",
    "SessionEntry",
    "SessionError",
    "SessionHeader",
    "SessionInfo",
    "SessionInfoEntry",
    "SessionLockedError",
    "SessionManager",
    "SessionPosition",
    "SessionTreeNode",
    "SkippedLine",
    "StoredRun",
    "TextContent",
    "ThinkingContent",
    "ThinkingLevelChangeEntry",
    "ToolCall",
    "ToolResultMessage",
    "UnknownContent",
    "UnknownEntry",
    "UnknownMessage",
    "Usage",
    "UserMessage",
    "codec",
    "convert_to_llm",
    "entry_from_json",
    "message_from_json",
    "timestamp_ms",
    "to_json",
]


_exported, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)


def __getattr__(name: str) -> Any:
    if name == "codec":
        value: Any = importlib.import_module("ctxmodes.session.codec")
        globals()[name] = value
        return value
    return _exported(name)
