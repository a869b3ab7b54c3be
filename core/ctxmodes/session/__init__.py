"""Pi-compatible session store: models, JSONL codec, reader, writer and ``SessionManager``.

Session files are byte-compatible with the Pi coding agent 0.85 (format version 3): files
written here open in Pi with the same tree and context, and lines Pi wrote re-encode to the
same bytes. See :mod:`ctxmodes.session.manager` for where behaviour deliberately differs.

A public module: import the session format from here (:mod:`~ctxmodes.session.codec` is the
JSON codec that writes lines as Pi's ``JSON.stringify`` does); the other submodules are
internal.
"""

from ctxmodes.session import codec
from ctxmodes.session.branch_path import BranchPath
from ctxmodes.session.context import ModelRef, SessionContext
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
