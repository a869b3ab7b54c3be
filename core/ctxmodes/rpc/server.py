"""The RPC loop: commands in, responses and events out, until the input ends.

Each command line is handled as it arrives, on the reading thread, but for the commands
that wait for the session (:attr:`~ctxmodes.rpc.protocol.RpcCommand.waits`), which get a
thread of their own: an ``abort`` sent while a ``compact`` runs is read and obeyed, as in
Pi. When the input ends, the current run and the shell commands running are aborted, the
work under way settles, and the session is shut down.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from typing import TYPE_CHECKING, Any, BinaryIO

import orjson

from ctxmodes import library_log
from ctxmodes.errors import CtxmodesError
from ctxmodes.host.json_stream import JsonEventStream
from ctxmodes.host.records import HostRecord
from ctxmodes.rpc.commands import COMMANDS
from ctxmodes.rpc.dialogs import Dialogs
from ctxmodes.rpc.framing import OutputLines, input_records
from ctxmodes.rpc.protocol import ABSENT, RpcCommand, RpcContext, failure, response
from ctxmodes.rpc.session_commands import follow_project
from ctxmodes.sdk.agent import Agent
from ctxmodes.sdk.model_cycling import ModelCycler

if TYPE_CHECKING:
    from ctxmodes.config_reload import ReloadableSettings

_log = library_log.logger(__name__)


class RpcServer:
    """Pi's RPC mode over ``agent``: call :meth:`serve` with the command stream."""

    def __init__(
        self,
        agent: Agent,
        out: BinaryIO,
        now_ms: Any,
        cycler: ModelCycler | None = None,
        settings: ReloadableSettings | None = None,
    ) -> None:
        """:param cycler: cycles the model scope (``--models``); by default every model
        with credentials.
        :param settings: the run's settings and how to read them again, for the
            directory of each session that replaces the running one
            (:func:`~ctxmodes.rpc.session_commands.follow_project`); by default the run's
            stay."""
        self._agent = agent
        self._lines = OutputLines(out)
        self._dialogs = Dialogs(self._lines)
        self._context = RpcContext(agent, self._lines, cycler or ModelCycler(agent), settings)
        if settings is not None:
            agent.host.before_replacement = functools.partial(follow_project, self._context)
        self._waiting: list[threading.Thread] = []
        events = JsonEventStream(out, lambda: agent.session.model, now_ms)

        def write_events(record: HostRecord) -> None:
            for event in events.events_of(record):
                self._lines.write_event(event)

        agent.subscribe_records(write_events)
        agent.subscribe(self._dialogs.on_event)
        agent.set_confirm(self._dialogs.confirm)
        # The client keeps its own editor: what the host puts there is sent to it.
        agent.attach_editor(lambda: "", self._dialogs.set_editor_text)

    def serve(self, commands: BinaryIO) -> None:
        """Handle every command of ``commands``; returns once its end was read and the work
        under way settled (the current run aborted)."""
        try:
            for record in input_records(commands):
                self.handle_line(record)
        finally:
            self._dialogs.end()
            self._agent.session.abort()
            self._agent.session.abort_shell_commands()
            for thread in self._waiting:
                thread.join()
            self._lines.close()

    def handle_line(self, line: str) -> None:
        """One input record: a command, or the answer to a dialog."""
        try:
            parsed = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            self._lines.write(failure(ABSENT, "parse", f"Failed to parse command: {exc}"))
            return
        if not isinstance(parsed, dict):
            self._lines.write(failure(ABSENT, ABSENT, "Unknown command: undefined"))
            return
        if parsed.get("type") == "extension_ui_response":
            self._dialogs.answer(parsed)
            return
        command = COMMANDS.get(parsed.get("type"))  # type: ignore[arg-type]
        if command is None:
            kind = parsed.get("type", ABSENT)
            shown = "undefined" if kind is ABSENT else kind
            self._lines.write(failure(parsed.get("id", ABSENT), kind, f"Unknown command: {shown}"))
            return
        if command.waits:
            thread = threading.Thread(
                target=self._run, args=(command, parsed), name="ctxmodes-rpc", daemon=True
            )
            self._waiting = [waiting for waiting in self._waiting if waiting.is_alive()]
            self._waiting.append(thread)
            thread.start()
        else:
            self._run(command, parsed)

    def _run(self, command: RpcCommand, fields: dict[str, Any]) -> None:
        request_id, kind = fields.get("id", ABSENT), fields["type"]
        # A quick command's response goes before the events its work makes on other threads
        # (a prompt's run); one that waits must not hold the events back meanwhile.
        with contextlib.nullcontext() if command.waits else self._lines.responding():
            try:
                data = command.handler(self._context, fields)
            except CtxmodesError as exc:
                reply = failure(request_id, kind, str(exc))
            except Exception as exc:
                # Pi answers any failure of a command as its error; the loop goes on.
                _log.exception("RPC command %s failed", kind)
                reply = failure(request_id, kind, str(exc) or type(exc).__name__)
            else:
                reply = response(request_id, kind, data)
            self._lines.write(reply)
