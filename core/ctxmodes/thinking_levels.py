"""Pi's thinking levels, lowest first: how hard a model is asked to reason.

Apart from the model catalog, so that configuration can validate a level without loading it.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

from typing import Literal, get_args

ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]
THINKING_LEVELS: tuple[ThinkingLevel, ...] = get_args(ThinkingLevel)
