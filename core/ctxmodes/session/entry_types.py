"""The ``type`` values of the session entries Pi 0.85 writes (the header's ``session`` aside)."""

from __future__ import annotations

from typing import Final

ENTRY_TYPES: Final = (
    "message",
    "thinking_level_change",
    "model_change",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
)
