"""Asking a running prompt_toolkit application to redraw, from any thread, also while it
stops.

prompt_toolkit's ``invalidate`` checks that the application runs and has a loop, then reads
the loop again to schedule the redraw. A thread that calls it just as the application stops
(a picker closed while its rows still load) finds the loop gone in between, and the call
fails: with ``RuntimeError`` (no running loop to fall back on) or ``AttributeError`` (the
loop is ``None``). There is nothing left to redraw then, and a loading thread must not end
in a traceback on the user's terminal.

Internal to ctxmodes: not part of the API; it may change in any release.
"""

from __future__ import annotations

import contextlib
from typing import Any

from prompt_toolkit.application import Application


def redraw_soon(app: Application[Any]) -> None:
    """``app.invalidate()``, which does nothing once the application has stopped."""
    with contextlib.suppress(RuntimeError, AttributeError):
        app.invalidate()
