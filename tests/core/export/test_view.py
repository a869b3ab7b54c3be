"""The one-line view of an entry that the export's sidebar and ``/tree`` show."""

from __future__ import annotations

import pytest

from ctxmodes.export.view import describe


def _reply(content: list[dict], **fields: object) -> dict:
    message = {"role": "assistant", "content": content, "stopReason": "stop", **fields}
    return {"type": "message", "id": "a1", "parentId": None, "message": message}


@pytest.mark.parametrize(
    ("stored", "preview"),
    [
        (_reply([{"type": "text", "text": "Done."}]), "Done."),
        (_reply([{"type": "toolCall", "id": "c", "name": "read", "arguments": {}}]), "→ read"),
        # A reply without text says why, as Pi's tree does: before, its line was empty.
        (
            _reply([], stopReason="error", errorMessage="429 rate limited\nretry"),
            "429 rate limited retry",
        ),
        (_reply([], stopReason="aborted", errorMessage="Request was aborted"), "(aborted)"),
        (_reply([]), "(no content)"),
    ],
)
def test_a_reply_s_line_says_what_it_holds(stored: dict, preview: str) -> None:
    view = describe(stored, "a1", None, active=True)
    assert (view.kind, view.title, view.preview) == ("assistant", "assistant", preview)
