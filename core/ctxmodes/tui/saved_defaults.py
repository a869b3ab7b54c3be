"""What a start of ctxmodes without ``--model``, ``--models`` and ``--thinking`` would take
from the configuration, as the terminal keeps it: the default model, the scope's patterns and
the default thinking level (Pi's ``getDefaultModel``, ``getEnabledModels`` and
``getDefaultThinkingLevel``). Read at start-up; the keys that save them (Ctrl+S in
``/model``, ``/scoped-models`` and ``/thinking``) change them too, as Pi's settings manager
keeps what it saved, so the pickers mark the new default at once.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxmodes.thinking_levels import DEFAULT_THINKING_LEVEL

__all__ = ["SavedDefaults"]


@dataclass(slots=True)
class SavedDefaults:
    #: The configured model, as configured (``provider/id``, maybe with ``:level``).
    model: str | None = None
    #: The configured scope's patterns; empty: no scope.
    enabled_models: tuple[str, ...] = ()
    #: The configured thinking level (Pi's ``medium`` when none is).
    thinking_level: str = DEFAULT_THINKING_LEVEL
    #: Where each setting of that configuration comes from (``config show``'s sources), so
    #: that a choice saved in Pi's file can say which source a start takes instead.
    origins: dict[str, str] = field(default_factory=dict)
