"""Remote's request shaping at the provider boundary.

* Tools: the flat ``history``/``notes`` routers the agent executes become Codex's native
  namespaces, encrypted fields marked (:func:`ctxmodes.windows.namespaced_tools`).
* Messages: routed calls are replayed as the namespaced calls the model made
  (``notes.write_file``), and each persisted Remote result is replaced by the ciphertext the
  backend gave, as an :class:`~ctxmodes.providers.base.EncryptedToolOutput`.
* Identity: a turn carries ``x-codex-window-id`` (``<session id>:<window number>``) and
  ``x-codex-turn-metadata`` as headers and, identically, in ``client_metadata``; the
  metadata asks the backend to record the turn (``history_ingest_requested``), which is how
  the service builds the history ``history`` later reads.
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxmodes.providers import EncryptedToolOutput, RequestMessage
from ctxmodes.session import AssistantMessage, ImageContent, ToolResultMessage, codec
from ctxmodes.windows import ROOT_AGENT_NAME, WindowIdentity, unroute_message
from ctxmodes_remote.results import encrypted_output_of

WINDOW_ID_HEADER = "x-codex-window-id"
TURN_METADATA_HEADER = "x-codex-turn-metadata"


def replay_messages(messages: Sequence[RequestMessage], *, images: bool) -> list[RequestMessage]:
    """``messages`` as the Codex model must see them again (see the module docstring).

    :param images: the model accepts images, so image blocks of results go along.
    """
    shaped: list[RequestMessage] = []
    for message in messages:
        if isinstance(message, AssistantMessage):
            shaped.append(unroute_message(message))
        elif (
            isinstance(message, ToolResultMessage)
            and (encrypted := encrypted_output_of(message)) is not None
        ):
            shaped.append(_encrypted_output(message, encrypted, images=images))
        else:
            shaped.append(message)
    return shaped


def _encrypted_output(
    message: ToolResultMessage, encrypted: str, *, images: bool
) -> EncryptedToolOutput:
    attached = [b for b in message.content if isinstance(b, ImageContent)] if images else []
    return EncryptedToolOutput(
        tool_call_id=message.tool_call_id,
        tool_name=message.tool_name,
        encrypted_content=encrypted,
        images=attached,
        timestamp=message.timestamp,
    )


def window_request_id(session_id: str, window: WindowIdentity) -> str:
    """``x-codex-window-id``: the session and the zero-based window number."""
    return f"{session_id}:{window.window_number}"


def turn_metadata(session_id: str, window: WindowIdentity) -> str:
    """``x-codex-turn-metadata`` of a turn in ``window`` (compact JSON, Codex's key order)."""
    return codec.dumps(
        {
            "session_id": session_id,
            "thread_id": session_id,
            "agent_name": ROOT_AGENT_NAME,
            "window_id": window_request_id(session_id, window),
            "window_number": window.window_number,
            "context_window_id": window.current_window_id,
            "request_kind": "turn",
            "history_ingest_requested": True,
        }
    ).decode()


def identity_headers(session_id: str, window: WindowIdentity) -> dict[str, str]:
    """The two identity values; sent as headers and in ``client_metadata`` alike."""
    return {
        WINDOW_ID_HEADER: window_request_id(session_id, window),
        TURN_METADATA_HEADER: turn_metadata(session_id, window),
    }
