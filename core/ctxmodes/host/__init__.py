"""The agent host: runs sessions with Pi's ``AgentSession`` semantics and calls the hooks.

* :class:`~ctxmodes.host.runtime.AgentHost` — plugins, mode, model and UI of a process; starts
  a session and replaces it (``/new``, ``/resume``, ``/fork``).
* :class:`~ctxmodes.host.session.AgentSession` — one running session: prompts, queued input,
  custom messages, compaction, tree navigation.
* :mod:`~ctxmodes.host.records` — what listeners receive, one record per lifecycle event.

The names are imported lazily, so loading the built-in commands plugin stays cheap.

Internal package: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctxmodes.host.errors import NoModelError, SessionBusyError
    from ctxmodes.host.options import HostOptions
    from ctxmodes.host.runtime import AgentHost
    from ctxmodes.host.session import AgentSession

__all__ = [
    "AgentHost",
    "AgentSession",
    "HostOptions",
    "NoModelError",
    "SessionBusyError",
]

_HOMES = {
    "AgentHost": "ctxmodes.host.runtime",
    "AgentSession": "ctxmodes.host.session",
    "HostOptions": "ctxmodes.host.options",
    "NoModelError": "ctxmodes.host.errors",
    "SessionBusyError": "ctxmodes.host.errors",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'ctxmodes.host' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(home), name)
