"""The model-facing tools of the context-window contract and their three wire shapes.

``new_context`` and ``get_context_remaining`` are plain function tools without parameters.
``history`` and ``notes`` are operation families; every operation has the same parameter set
whichever way it is offered:

* **flat routers** (Codex transport, Local and Tree): one function tool per family whose
  parameters are the union of its operations' fields plus a required ``action`` enum.
  Codex reserves the ``history``/``notes`` namespaces for encrypted arguments, so plaintext
  local execution must not use them there.
* **plaintext namespaces** (any other Responses transport, Local and Tree): a ``namespace``
  tool per family holding one function per operation.
* **encrypted namespaces** (Codex transport, Remote): the same namespaces shaped as the
  native Codex service expects them: ``query``/``text`` marked ``"encrypted": true``, open
  objects and no numeric bounds.

Tool, action and field names are the contract; descriptions are ours.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Literal

from ctxmodes.events import NewContextOutcome

Family = Literal["history", "notes"]
FAMILIES: tuple[Family, ...] = ("history", "notes")

NEW_CONTEXT_TOOL = "new_context"
GET_CONTEXT_REMAINING_TOOL = "get_context_remaining"
HISTORY_TOOL: Family = "history"
NOTES_TOOL: Family = "notes"
CONTEXT_TOOL_NAMES = (NEW_CONTEXT_TOOL, GET_CONTEXT_REMAINING_TOOL, HISTORY_TOOL, NOTES_TOOL)

HISTORY_ACTIONS = ("list_windows", "list_items", "read_item", "search_contents")
NOTES_ACTIONS = (
    "list_files_by_prefix",
    "read_file",
    "search_contents",
    "append_to_file",
    "write_file",
)
ROLES = ("user", "assistant", "tool", "system", "developer")

FAMILY_DESCRIPTIONS: dict[Family, str] = {
    "history": (
        "Read conversation from earlier context windows. Window and item IDs are opaque: "
        "pass them back exactly as given."
    ),
    "notes": (
        "Checkpoint files that survive context windows, on virtual paths. A relative path "
        "belongs to the current agent; another agent's notes are <agent>/notes[/path]."
    ),
}

_NULLABLE_STRING: dict[str, Any] = {"anyOf": [{"type": "string"}, {"type": "null"}]}
_NULLABLE_INTEGER: dict[str, Any] = {"anyOf": [{"type": "integer"}, {"type": "null"}]}


def _integer(minimum: int) -> dict[str, Any]:
    return {"type": "integer", "minimum": minimum}


def _described(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {**schema, "description": description}


_FIELD_SCHEMAS: dict[str, dict[str, Any]] = {
    # history
    "agent_name": _described(_NULLABLE_STRING, "Agent whose history to read; default: you."),
    "item_id": _described({"type": "string"}, "An item_id exactly as a listing returned it."),
    "limit": _integer(1),
    "limit_chars": _integer(1),
    "max_chars_per_item": _integer(1),
    "offset_chars": _integer(0),
    "query": _described({"type": "string"}, "Literal text to find; case-sensitive."),
    "recent_first": {"type": "boolean"},
    "role": {"anyOf": [{"type": "string", "enum": list(ROLES)}, {"type": "null"}]},
    "tool_name": _described(_NULLABLE_STRING, "Only calls and results of this tool."),
    "tool_namespace": _described(_NULLABLE_STRING, "Only calls in this tool namespace."),
    "window_id": _described(_NULLABLE_STRING, "A window_id exactly as a listing returned it."),
    # notes
    "file_order": {"type": "string", "enum": ["ascending", "descending"]},
    "file_order_by": {"type": "string", "enum": ["name", "created_at", "updated_at"]},
    "max_files": _integer(1),
    "max_matches_per_file": _integer(1),
    "max_results": _integer(1),
    "path": _described({"type": "string"}, "Note path, e.g. checkpoint.md."),
    "path_prefix": _described(_NULLABLE_STRING, "Only notes under this path prefix."),
    "prefix": _described(_NULLABLE_STRING, "Only notes under this path prefix."),
    "recent_file_first": {"type": "boolean"},
    "start_line": _described(_NULLABLE_INTEGER, "First line, 1-based; negative counts back."),
    "stop_line": _described(_NULLABLE_INTEGER, "Last line, inclusive; negative counts back."),
    "text": {"type": "string"},
}
# read_item needs a window; everywhere else window_id is an optional filter.
_REQUIRED_WINDOW_ID = _described({"type": "string"}, "The window_id the item was listed in.")


@dataclass(frozen=True, slots=True)
class Operation:
    """One ``history`` or ``notes`` operation.

    :param fields: every field it accepts, in validation order (alphabetical).
    :param required: fields that must be strings (non-empty unless in ``allow_empty``).
    :param encrypted: fields the native Codex service receives encrypted.
    """

    family: Family
    action: str
    description: str
    fields: tuple[str, ...]
    required: tuple[str, ...] = ()
    allow_empty: frozenset[str] = frozenset()
    encrypted: frozenset[str] = frozenset()

    def field_schema(self, field: str) -> dict[str, Any]:
        if self.action == "read_item" and field == "window_id":
            return _REQUIRED_WINDOW_ID
        return _FIELD_SCHEMAS[field]


_LIST_FILTERS = ("role", "tool_name", "tool_namespace", "window_id")

OPERATIONS: dict[Family, dict[str, Operation]] = {
    "history": {
        op.action: op
        for op in (
            Operation(
                "history",
                "list_windows",
                "List context windows with their item counts.",
                ("agent_name", "limit", "recent_first"),
            ),
            Operation(
                "history",
                "list_items",
                "List items, optionally of one window, role or tool.",
                ("agent_name", "limit", "max_chars_per_item", "recent_first", *_LIST_FILTERS),
            ),
            Operation(
                "history",
                "read_item",
                "Read a range of characters from one item.",
                ("agent_name", "item_id", "limit_chars", "offset_chars", "window_id"),
                required=("item_id", "window_id"),
            ),
            Operation(
                "history",
                "search_contents",
                "Find items containing a literal substring.",
                ("agent_name", "limit", "query", "recent_first", *_LIST_FILTERS),
                required=("query",),
                encrypted=frozenset({"query"}),
            ),
        )
    },
    "notes": {
        op.action: op
        for op in (
            Operation(
                "notes",
                "list_files_by_prefix",
                "List note files under a path prefix.",
                ("file_order", "file_order_by", "max_results", "prefix"),
            ),
            Operation(
                "notes",
                "read_file",
                "Read a note file or a range of its lines.",
                ("path", "start_line", "stop_line"),
                required=("path",),
            ),
            Operation(
                "notes",
                "search_contents",
                "Find note lines containing a literal substring.",
                ("max_files", "max_matches_per_file", "path_prefix", "query", "recent_file_first"),
                required=("query",),
                encrypted=frozenset({"query"}),
            ),
            Operation(
                "notes",
                "append_to_file",
                "Append text to a note file exactly as given.",
                ("path", "text"),
                required=("path", "text"),
                allow_empty=frozenset({"text"}),
                encrypted=frozenset({"text"}),
            ),
            Operation(
                "notes",
                "write_file",
                "Create a note file or replace its contents.",
                ("path", "text"),
                required=("path", "text"),
                allow_empty=frozenset({"text"}),
                encrypted=frozenset({"text"}),
            ),
        )
    },
}


@dataclass(frozen=True, slots=True)
class FunctionTool:
    """A plain function tool: what the agent registers and the provider receives."""

    name: str
    description: str
    parameters: dict[str, Any]

    def as_responses_tool(self) -> dict[str, Any]:
        """The Responses ``tools[]`` entry."""
        return {
            "type": "function",
            "name": self.name,
            "description": self.description,
            "strict": False,
            "parameters": self.parameters,
        }


def _no_parameters() -> dict[str, Any]:
    return {"type": "object", "properties": {}, "additionalProperties": False}


NEW_CONTEXT = FunctionTool(
    NEW_CONTEXT_TOOL,
    "Start a new context window. Workspace, shell and other environment state stay as they are.",
    _no_parameters(),
)
GET_CONTEXT_REMAINING = FunctionTool(
    GET_CONTEXT_REMAINING_TOOL,
    "Report how many tokens are left in the current context window.",
    _no_parameters(),
)


NEW_CONTEXT_STARTED = "A new context window will start without summarizing conversation history."
NEW_CONTEXT_ALREADY_SCHEDULED = "A new context window is already scheduled."
#: The error of a context tool called while no mode manages the session's context.
CONTEXT_MANAGEMENT_INACTIVE = (
    "Codex context management requires an active Responses adapter with Context management enabled"
)


def new_context_outcome(*, started: bool, terminate: bool = False) -> NewContextOutcome:
    """The ``new_context`` result: the fixed text and ``details = {"started": ...}``.

    :param started: False when a rollover was already pending.
    :param terminate: ask the host to end the run after this tool batch (Tree, which
        finishes the rollover once the run has settled).
    """
    message = NEW_CONTEXT_STARTED if started else NEW_CONTEXT_ALREADY_SCHEDULED
    return NewContextOutcome(
        started=started, message=message, terminate=terminate, details={"started": started}
    )


def flat_router(family: Family) -> FunctionTool:
    """The ``history`` or ``notes`` function tool with an ``action`` enum (Codex transport)."""
    operations = OPERATIONS[family]
    union: dict[str, dict[str, Any]] = {}
    for operation in operations.values():
        for field in operation.fields:
            union.setdefault(field, _FIELD_SCHEMAS[field])
    properties: dict[str, Any] = {"action": {"type": "string", "enum": list(operations)}}
    properties.update(sorted(union.items()))
    parameters = {
        "type": "object",
        "properties": properties,
        "required": ["action"],
        "additionalProperties": False,
    }
    # A fresh copy per call: callers may adjust a schema without touching the shared table.
    return FunctionTool(family, FAMILY_DESCRIPTIONS[family], copy.deepcopy(parameters))


def _operation_parameters(operation: Operation, *, encrypted: bool) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for field in operation.fields:
        schema = copy.deepcopy(operation.field_schema(field))
        if encrypted:
            schema.pop("minimum", None)
            if field in operation.encrypted:
                schema["encrypted"] = True
        properties[field] = schema
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    if operation.required:
        required = list(operation.required)
        if encrypted:
            # Codex's serializer lists the encrypted field first (["text", "path"]).
            required.sort(key=lambda field: field not in operation.encrypted)
        parameters["required"] = required
    if not encrypted:
        parameters["additionalProperties"] = False
    return parameters


def namespace_tool(family: Family, *, encrypted: bool = False) -> dict[str, Any]:
    """The Responses ``namespace`` tool for ``family``.

    :param encrypted: the native Codex shape for Remote (encrypted ``query``/``text``, no
        ``additionalProperties``, no ``minimum``, operations in alphabetical order as Codex
        groups them); otherwise the plaintext shape.
    """
    operations = list(OPERATIONS[family].values())
    if encrypted:
        operations.sort(key=lambda operation: operation.action)
    return {
        "type": "namespace",
        "name": family,
        "description": FAMILY_DESCRIPTIONS[family],
        "tools": [
            {
                "type": "function",
                "name": operation.action,
                "description": operation.description,
                "strict": False,
                "parameters": _operation_parameters(operation, encrypted=encrypted),
            }
            for operation in operations
        ],
    }
