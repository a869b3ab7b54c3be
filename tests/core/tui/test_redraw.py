"""A redraw asked for from a thread as the application stops does nothing, where
prompt_toolkit's own ``invalidate`` fails (its loop gone between its check and its use)."""

from __future__ import annotations

import threading
from typing import Any

from prompt_toolkit.application import Application

from ctxmodes.tui.redraw import redraw_soon


class _StoppingLoop:
    """A loop the application lets go of while ``invalidate`` checks it: the moment a
    loading thread meets when the picker it loads for is closed."""

    def __init__(self, app: Application[Any]) -> None:
        self._app = app

    def is_closed(self) -> bool:
        self._app.loop = None
        return False


def _stopping_app() -> Application[Any]:
    app: Application[Any] = Application()
    app._is_running = True  # as it still says while it stops
    app.loop = _StoppingLoop(app)  # type: ignore[assignment]
    return app


def _in_a_thread(call: Any) -> list[BaseException]:
    """What ``call()`` raised in a thread of its own, as a loading thread runs it."""
    raised: list[BaseException] = []

    def run() -> None:
        try:
            call()
        except BaseException as error:
            raised.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return raised


def test_prompt_toolkit_s_own_invalidate_fails_there() -> None:
    app = _stopping_app()
    (raised,) = _in_a_thread(app.invalidate)
    assert isinstance(raised, AttributeError | RuntimeError)


def test_a_redraw_asked_for_as_the_application_stops_does_nothing() -> None:
    app = _stopping_app()
    assert _in_a_thread(lambda: redraw_soon(app)) == []
