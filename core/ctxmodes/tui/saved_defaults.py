"""What a start of ctxmodes without ``--model`` and ``--models`` would take from the
configuration, as the terminal keeps it: the default model and the scope's patterns (Pi's
``getDefaultModel`` and ``getEnabledModels``). Read at start-up; the keys that save them
(Ctrl+S in ``/model`` and in ``/scoped-models``) change them too, as Pi's settings manager
keeps what it saved, so the model picker marks the new default at once.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SavedDefaults"]


@dataclass(slots=True)
class SavedDefaults:
    #: The configured model, as configured (``provider/id``, maybe with ``:level``).
    model: str | None = None
    #: The configured scope's patterns; empty: no scope.
    enabled_models: tuple[str, ...] = ()
