"""Pi's thinking levels, lowest first: how hard a model is asked to reason.

Apart from the model catalog, so that configuration can validate a level without loading it.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, get_args

ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]
THINKING_LEVELS: tuple[ThinkingLevel, ...] = get_args(ThinkingLevel)
#: The level a new session starts at when nothing sets one (Pi's ``DEFAULT_THINKING_LEVEL``),
#: clamped to what its model accepts.
DEFAULT_THINKING_LEVEL: ThinkingLevel = "medium"
#: What a reasoning model accepts when nothing says otherwise: every level but the two
#: that only some models take (pi-ai's ``getSupportedThinkingLevels``).
REASONING_LEVELS: tuple[ThinkingLevel, ...] = ("off", "minimal", "low", "medium", "high")


def clamp_thinking_level(level: str, supported: Sequence[str]) -> str:
    """The level of ``supported`` nearest to ``level``: itself, else the next higher, else
    the next lower (pi-ai's ``clampThinkingLevel``); a level Pi does not know is the lowest
    supported one."""
    if level in supported:
        return level
    if level not in THINKING_LEVELS:
        return supported[0] if supported else "off"
    start = THINKING_LEVELS.index(level)
    for candidate in (*THINKING_LEVELS[start:], *reversed(THINKING_LEVELS[:start])):
        if candidate in supported:
            return candidate
    return supported[0] if supported else "off"
