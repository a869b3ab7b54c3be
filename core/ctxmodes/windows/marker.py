"""The context-window marker: the custom message that opens a window, or reminds the model
that its window is running out.

A marker is a ``custom_message`` entry with ``customType: "codex-context-window"`` and
``display: true``. Its ``details`` carry the window identity only, in exactly the key order
the TypeScript extension writes::

    {"protocol": 1, "id": <uuid>,
     "contextManagement": {"protocol": 1, "kind": "window" | "reminder" | "fallback",
                           "firstWindowId", "currentWindowId", "previousWindowId"?,
                           "windowNumber", "trimPreviousWindow"?}}

Note paths and history ids are not details: they live in the content text (the thread
hint, :mod:`ctxmodes.windows.thread_hint`). The content's tags and labelled lines are part
of the shared format; the guidance and reminder prose is ours.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from itertools import compress, repeat
from operator import eq
from typing import TYPE_CHECKING, ClassVar, Final, Literal

from pydantic import Field, ValidationError

from ctxmodes.errors import CtxmodesError
from ctxmodes.windows._wire import WireModel
from ctxmodes.windows.identity import WindowIdentity
from ctxmodes.windows.marker_escape import marker_value
from ctxmodes.windows.stored import StoredEntry

if TYPE_CHECKING:
    from ctxmodes.session_view import SessionView

CONTEXT_WINDOW_CUSTOM_TYPE = "codex-context-window"
MARKER_PROTOCOL: Final = 1
#: The agent every window belongs to; sub-agents are not part of this contract.
ROOT_AGENT_NAME = "/root"

MarkerKind = Literal["window", "reminder", "fallback"]

MALFORMED_MARKER_MESSAGE = "Malformed persisted Codex context-window message"

CONTEXT_WINDOW_GUIDANCE = """\
<context_window_guidance>
Nothing from this conversation is summarized into the next context window. Before you call \
new_context, write to notes what the active request is, which history IDs you know, what was \
decided, what is done, what you learned and what comes next. After a rollover, start by \
reading the notes named below; search history only for a detail the notes lack.
</context_window_guidance>"""

FALLBACK_TEXT = """\
<context_window_reminder>
This context window is used up. Do not continue the task and do not answer here. Make one \
notes write or append that records the active request, the current state and the history \
IDs you know, then call new_context. Use no other tool until the new window has started.
</context_window_reminder>"""


class MalformedMarkerError(CtxmodesError):
    """A ``codex-context-window`` message whose details do not have the marker shape."""

    def __init__(self) -> None:
        super().__init__(MALFORMED_MARKER_MESSAGE)


class ContextManagementDetails(WireModel):
    """``details.contextManagement`` of a marker: which window it belongs to."""

    protocol: Literal[1]
    kind: MarkerKind
    first_window_id: str = Field(alias="firstWindowId", min_length=1)
    current_window_id: str = Field(alias="currentWindowId", min_length=1)
    previous_window_id: str | None = Field(default=None, alias="previousWindowId")
    window_number: int = Field(alias="windowNumber", ge=0)
    #: Set (only ever to true) on a marker opened by ``new_context`` in Local or Remote: the
    #: next threshold compaction may cut the session at this boundary once.
    trim_previous_window: Literal[True] | None = Field(default=None, alias="trimPreviousWindow")

    def identity(self) -> WindowIdentity:
        return WindowIdentity(
            first_window_id=self.first_window_id,
            current_window_id=self.current_window_id,
            previous_window_id=self.previous_window_id,
            window_number=self.window_number,
        )


class WindowMarkerDetails(WireModel):
    """The whole ``details`` object of a marker."""

    protocol: Literal[1]
    #: A fresh UUID per marker, so two markers of one window stay distinguishable.
    id: str = Field(min_length=1)
    context_management: ContextManagementDetails = Field(alias="contextManagement")


def parse_marker_details(raw: object) -> WindowMarkerDetails:
    """Validate the persisted ``details`` of a ``codex-context-window`` message.

    :raises MalformedMarkerError: the details are missing or do not have the marker shape.
    """
    try:
        return WindowMarkerDetails.model_validate(raw)
    except ValidationError:
        raise MalformedMarkerError() from None


def is_stored_marker(entry: StoredEntry) -> bool:
    """Whether a stored entry is a marker (a ``codex-context-window`` custom message)."""
    return (
        entry.get("type") == "custom_message"
        and entry.get("customType") == CONTEXT_WINDOW_CUSTOM_TYPE
    )


def stored_marker_details(entry: StoredEntry) -> ContextManagementDetails | None:
    """The window details of a stored marker entry; ``None`` for any other entry.

    :raises MalformedMarkerError: the entry is a marker whose details are damaged.
    """
    if not is_stored_marker(entry):
        return None
    return parse_marker_details(entry.get("details")).context_management


@dataclass(frozen=True, slots=True)
class WindowMarker:
    """A marker ready to append as a custom message entry (``display`` is always true)."""

    content: str
    details: WindowMarkerDetails

    custom_type: ClassVar[str] = CONTEXT_WINDOW_CUSTOM_TYPE
    display: ClassVar[bool] = True

    @property
    def kind(self) -> MarkerKind:
        return self.details.context_management.kind

    @property
    def identity(self) -> WindowIdentity:
        return self.details.context_management.identity()


def render_window_text(identity: WindowIdentity, thread_hint: str | None = None) -> str:
    """The content of a window marker: the guidance, then the ``<context_window>`` block."""
    # Window ids are uuids ctxmodes made, but a resumed file may carry anything: escaped.
    lines = [
        "<context_window>",
        f"Agent name: {ROOT_AGENT_NAME}",
        f"First context window id: {marker_value(identity.first_window_id)}",
        f"Current context window id: {marker_value(identity.current_window_id)}",
    ]
    if identity.previous_window_id:
        lines.append(f"Previous context window id: {marker_value(identity.previous_window_id)}")
    if thread_hint:
        lines.append(thread_hint)
    lines.append("</context_window>")
    return CONTEXT_WINDOW_GUIDANCE + "\n\n" + "\n".join(lines)


def render_reminder_text(remaining_tokens: int) -> str:
    """The content of the one reminder a window gets when its budget runs low."""
    remaining = max(0, remaining_tokens)
    return (
        "<context_window_reminder>\n"
        f"Only {remaining} tokens are left in this context window. Record the active request, "
        "the current state and the history IDs you know in notes, then call new_context; "
        "no summary of this conversation will carry over.\n"
        "</context_window_reminder>"
    )


def _details(
    kind: MarkerKind, identity: WindowIdentity, *, trim_previous_window: bool = False
) -> WindowMarkerDetails:
    return WindowMarkerDetails(
        protocol=MARKER_PROTOCOL,
        id=str(uuid.uuid4()),
        context_management=ContextManagementDetails(
            protocol=MARKER_PROTOCOL,
            kind=kind,
            first_window_id=identity.first_window_id,
            current_window_id=identity.current_window_id,
            previous_window_id=identity.previous_window_id,
            window_number=identity.window_number,
            trim_previous_window=True if trim_previous_window else None,
        ),
    )


def window_marker(
    identity: WindowIdentity,
    thread_hint: str | None = None,
    *,
    trim_previous_window: bool = False,
) -> WindowMarker:
    """The boundary marker that opens window ``identity``.

    :param thread_hint: recent notes and previous-window ids to show after the ids.
    :param trim_previous_window: mark the boundary as one the next threshold compaction may
        cut at (Local and Remote rollovers started by ``new_context``).
    """
    return WindowMarker(
        content=render_window_text(identity, thread_hint),
        details=_details("window", identity, trim_previous_window=trim_previous_window),
    )


def reminder_marker(identity: WindowIdentity, remaining_tokens: int) -> WindowMarker:
    """The low-budget reminder for the current window (appended without a new turn)."""
    return WindowMarker(render_reminder_text(remaining_tokens), _details("reminder", identity))


def fallback_marker(identity: WindowIdentity) -> WindowMarker:
    """The exhausted-budget instruction for the current window (appended with a new turn)."""
    return WindowMarker(FALLBACK_TEXT, _details("fallback", identity))


def count_branch_windows(manager: SessionView) -> int:
    """How many windows the active branch opens (its ``window`` markers; damaged ones are
    not counted), decoding only its custom messages."""
    types = manager.get_branch_types()
    # Most entries are not custom messages: find those that are in one C-level pass.
    positions = list(compress(range(len(types)), map(eq, types, repeat("custom_message"))))
    if not positions:
        return 0
    ids = manager.get_branch_ids()
    count = 0
    for position in positions:
        entry = manager.get_entry_json(ids[position])
        try:
            details = stored_marker_details(entry) if entry is not None else None
        except MalformedMarkerError:
            continue
        if details is not None and details.kind == "window":
            count += 1
    return count
