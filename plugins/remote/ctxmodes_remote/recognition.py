"""How Remote recognizes a session file it managed, and what leaving it changes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxmodes.windows import DETAILS_KEY, FAMILIES, count_branch_windows
from ctxmodes_remote.result_keys import ENCRYPTED_OUTPUT_KEY

if TYPE_CHECKING:
    from ctxmodes import Evidence, SessionView


def _is_encrypted_result(stored: object) -> bool:
    """Whether a stored ``message`` entry is a Remote history or notes result that carries
    the backend's ciphertext (read from the JSON, without decoding the message)."""
    if not isinstance(stored, dict):
        return False
    message = stored.get("message")
    if not isinstance(message, dict) or message.get("role") != "toolResult":
        return False
    if message.get("isError") or message.get("toolName") not in FAMILIES:
        return False
    details = message.get("details")
    result = details.get(DETAILS_KEY) if isinstance(details, dict) else None
    return isinstance(result, dict) and isinstance(result.get(ENCRYPTED_OUTPUT_KEY), str)


def recognize(manager: SessionView) -> Evidence | None:
    """An encrypted history or notes result on the active branch: only Remote writes them.

    Remote opens every session with a window marker; a branch without one (a plain Pi
    session) is told apart from its few custom messages, without reading its messages."""
    if not count_branch_windows(manager):
        return None
    ids = manager.get_branch_ids()
    for position, entry_type in enumerate(manager.get_branch_types()):
        if entry_type == "message" and _is_encrypted_result(manager.get_entry_json(ids[position])):
            return "exclusive"
    return None


def describe_switch(manager: SessionView, target: str) -> str | None:
    """Off sends the whole branch again; Local and Tree keep the markers and send only the
    latest window, as Remote does. No other mode reads the Remote service."""
    out_of_reach = "the history and notes kept by the Remote service are out of reach"
    if target not in {"off", "local", "tree"}:
        return out_of_reach
    earlier = count_branch_windows(manager) - 1
    if target != "off":
        kept = " and earlier windows stay out of the context" if earlier > 0 else ""
        return f"window markers carry over{kept}; {out_of_reach}"
    if earlier <= 0:
        return f"{out_of_reach}; window markers stop being managed"
    windows = "1 earlier window is" if earlier == 1 else f"{earlier} earlier windows are"
    return (
        f"{out_of_reach} and {windows} sent to the model again; run /compact first to leave cleanly"
    )
