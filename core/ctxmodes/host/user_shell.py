"""Shell commands the user runs in a session (``!cmd``, ``!!cmd``, RPC's ``bash``), run and
recorded as Pi's ``executeBash`` and ``recordBashResult`` do.

The plugins are asked first (``ctx_user_bash``, when one implements it): one may answer for
the command, or run it its own way. Otherwise a command runs in a new bash in the session's
directory (:mod:`ctxmodes.tools.user_command`); :meth:`UserShell.abort` stops every command
running (Pi's ``abortBash``), but for those a plugin answered for, which never run.
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
from ctxmodes.events import UserBashEvent, UserBashResult
from ctxmodes.host import records
from ctxmodes.host.core import SessionCore
from ctxmodes.session.models import BashExecutionMessage
from ctxmodes.tools.user_command import (
    UserCommandResult,
    local_shell_runner,
    run_user_command,
)

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
        """Run ``command`` (as typed: the configured prefix is added when it runs) as the
        plugins decide, else locally, and return its message, for :meth:`record`.
        ``controller`` stops it (as :meth:`abort` does); ``on_output`` gets each cleaned
        piece of output as it arrives (nothing for a command a plugin answered for).

        :raises ToolError: bash cannot be started, or a plugin's runner failed.
        """
        core = self._core
        answer = self._ask_plugins(command, exclude_from_context)
        if answer is not None and answer.result is not None:
            return self._message(command, answer.result, exclude_from_context)
        runner = answer.operations if answer is not None else None
        shell = core.options.shell
        controller = controller if controller is not None else AbortController()
        with self._lock:
            self._running.add(controller)
        try:
            result = run_user_command(
                shell.script(command),
                core.cwd,
                runner if runner is not None else local_shell_runner(shell.path),
                controller.signal,
                on_output,
                local=runner is None,
            )
        finally:
            with self._lock:
                self._running.discard(controller)
        return self._message(command, result, exclude_from_context)

    def _ask_plugins(
        self, command: str, exclude_from_context: bool | None
    ) -> UserBashResult | None:
        # As Pi, asked only when a plugin listens, each plugin in turn until one answers;
        # one that fails is reported (by the session's hook call) and the next is asked.
        core = self._core
        relay = core.relay
        if not relay.is_implemented("ctx_user_bash"):
            return None
        event = UserBashEvent(command, bool(exclude_from_context), core.cwd)
        for ask in relay.user_bash_askers():
            answer = core.hook(ask, event)
            if answer is not None:
                return answer
        return None

    def _message(
        self, command: str, result: UserCommandResult, exclude_from_context: bool | None
    ) -> BashExecutionMessage:
        fields: dict[str, Any] = {
            "command": command,
            "output": result.output,
            "exit_code": result.exit_code,
            "cancelled": result.cancelled,
            "truncated": result.truncated,
            "full_output_path": result.full_output_path,
            "timestamp": self._core.now_ms(),
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
