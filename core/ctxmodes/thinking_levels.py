"""Pi's thinking levels, lowest first: how hard a model is asked to reason.

Apart from the model catalog, so that configuration can validate a level without loading it.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal, get_args

ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]
THINKING_LEVELS: tuple[ThinkingLevel, ...] = get_args(ThinkingLevel)
#: The level a new session starts at when nothing sets one (Pi's ``DEFAULT_THINKING_LEVEL``),
#: clamped to what its model accepts.
DEFAULT_THINKING_LEVEL: ThinkingLevel = "medium"
#: What a reasoning model accepts when nothing says otherwise: every level but the two
#: that only some models take (pi-ai's ``getSupportedThinkingLevels``).
REASONING_LEVELS: tuple[ThinkingLevel, ...] = ("off", "minimal", "low", "medium", "high")


def require_thinking_level(level: str) -> None:
    """:raises CtxmodesError: ``level`` is not one of Pi's levels."""
    if level not in THINKING_LEVELS:
        from ctxmodes.errors import CtxmodesError

        raise CtxmodesError(
            f"unknown thinking level {level!r}; choose one of: {', '.join(THINKING_LEVELS)}"
        )


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


def split_level_suffix(spec: str, known: Callable[[str], bool]) -> tuple[str, str | None]:
    """A model spec and the thinking level its ``:<level>`` suffix asks for, as Pi's
    ``--model`` reads ``provider/id:high``: a spec ``known`` names is a model as it stands
    (ids may hold colons: ``ollama/qwen3:8b``); otherwise a last ``:`` part that is a level
    is split off when what is before it names a model (the outermost level wins). A suffix
    that is no level is part of the spec, as Pi's strict reading of ``--model`` has it."""
    if known(spec):
        return spec, None
    prefix, colon, suffix = spec.rpartition(":")
    if not colon or suffix not in THINKING_LEVELS:
        return spec, None
    model, _ = split_level_suffix(prefix, known)
    return (model, suffix) if known(model) else (spec, None)
