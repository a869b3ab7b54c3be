"""Shell commands the user runs in a session (``!cmd``, ``!!cmd``, RPC's ``bash``), run and
recorded as Pi's ``executeBash`` and ``recordBashResult`` do.

A command runs in a new bash in the session's directory (:mod:`ctxmodes.tools.
user_command`); :meth:`UserShell.abort` stops every command running (Pi's ``abortBash``).
Its ``bashExecution`` message joins the session silently, as in Pi: persisted and added to
the context, seen by the host's listeners but by no hook. While a run is active it waits
for the run's end — a message between a tool call and its result would break the context —
and is appended then, before the run settles; otherwise it is appended at once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ctxmodes.abort import AbortController
from ctxmodes.host import records
from ctxmodes.host.core import SessionCore
from ctxmodes.session.models import BashExecutionMessage
from ctxmodes.tools.user_command import run_user_command

#: Wraps work deferred to the session's driver (the session skips it once stale).
Guard = Callable[[Callable[[], None]], Callable[[], None]]


class UserShell:
    """The user's shell commands of one session."""

    def __init__(self, core: SessionCore, guard: Guard) -> None:
        self._core = core
        self._guard = guard
        self._lock = threading.RLock()
        self._held: list[BashExecutionMessage] = []
        self._running: set[AbortController] = set()

    def run(
        self,
        command: str,
        *,
        exclude_from_context: bool | None = None,
        controller: AbortController | None = None,
        on_output: Callable[[str], None] | None = None,
    ) -> BashExecutionMessage:
        """Run ``command`` (as typed: the configured prefix is added when it runs) and
        return its message, for :meth:`record`. ``controller`` stops it (as :meth:`abort`
        does); ``on_output`` gets each cleaned piece of output as it arrives.

        :raises ToolError: bash cannot be started.
        """
        core = self._core
        controller = controller if controller is not None else AbortController()
        with self._lock:
            self._running.add(controller)
        try:
            result = run_user_command(
                command, core.cwd, core.options.shell, controller.signal, on_output
            )
        finally:
            with self._lock:
                self._running.discard(controller)
        fields: dict[str, Any] = {
            "command": command,
            "output": result.output,
            "exit_code": result.exit_code,
            "cancelled": result.cancelled,
            "truncated": result.truncated,
            "full_output_path": result.full_output_path,
            "timestamp": core.now_ms(),
            "exclude_from_context": exclude_from_context,
        }
        # Only what is known is given: Pi leaves the rest out (undefined), never null.
        return BashExecutionMessage(**{k: v for k, v in fields.items() if v is not None})

    def abort(self) -> None:
        """Stop every command running now."""
        with self._lock:
            running = list(self._running)
        for controller in running:
            controller.abort()

    def record(self, message: BashExecutionMessage) -> None:
        """Add ``message`` to the session: when the active run ends, or now — on this
        thread when nothing else drives the session, else by its driver after the work in
        hand (in the order asked)."""
        life = self._core.life
        with self._lock:
            if life.run_active:
                self._held.append(message)
                return
        if life.is_driver():
            self._append(message)
        elif life.try_acquire():
            try:
                self._append(message)
            finally:
                life.release()
        else:
            life.run_or_defer(self._guard(lambda: self._append(message)))

    @contextmanager
    def run_ending(self) -> Iterator[None]:
        """Around the end of a run: the held messages are appended first, and none can be
        held meanwhile (mark the run over inside the block)."""
        with self._lock:
            held, self._held = self._held, []
            for message in held:
                self._append(message)
            yield

    def _append(self, message: BashExecutionMessage) -> None:
        core = self._core
        core.emit(records.MessageStarted(message.role, message))
        entry_id = core.manager.append_message(message)
        core.messages.append(message)
        core.emit(records.MessageEnded(message, entry_id))
