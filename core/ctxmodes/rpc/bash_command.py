"""Pi's ``bash`` and ``abort_bash`` commands: a shell command run for the client as the
user's ``!command`` runs (:meth:`~ctxmodes.host.session.AgentSession.run_shell_command`).

Its output streams as ``bash_execution_update`` events carrying the command's ``id``; the
response is Pi's ``BashResult``, once the command ended and its ``bashExecution`` message
was recorded (or held for the end of a run in progress). ``bash`` waits on its own thread,
so the commands read after it — ``abort_bash`` first — are handled meanwhile.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ctxmodes.rpc.protocol import (
    ABSENT,
    JsonObject,
    RpcCommand,
    RpcCommandError,
    RpcContext,
    text_field,
)
from ctxmodes.session.models import BashExecutionMessage


def bash(rpc: RpcContext, command: Mapping[str, Any]) -> object:
    """Runs ``command`` in a new bash in the session's directory; answers its output (cut
    as Pi cuts it), ``exitCode`` (none when stopped), ``cancelled``, ``truncated`` and the
    ``fullOutputPath`` of a long output. ``excludeFromContext`` keeps it from the model."""
    text = text_field(command, "command")
    exclude = command.get("excludeFromContext")
    if exclude is not None and not isinstance(exclude, bool):
        raise RpcCommandError('"excludeFromContext" must be true or false')
    request_id = command.get("id", ABSENT)

    def stream(delta: str) -> None:
        event: JsonObject = {"type": "bash_execution_update"}
        if request_id is not ABSENT:
            event["id"] = request_id
        event["delta"] = delta
        rpc.lines.write_event(event)

    message = rpc.agent.session.run_shell_command(
        text, exclude_from_context=exclude, on_output=stream
    )
    return bash_result(message)


def bash_result(message: BashExecutionMessage) -> JsonObject:
    """Pi's ``BashResult`` of a recorded command (what is unknown left out, as Pi leaves
    it undefined)."""
    result: JsonObject = {"output": message.output}
    if message.exit_code is not None:
        result["exitCode"] = message.exit_code
    result["cancelled"] = message.cancelled
    result["truncated"] = message.truncated
    if message.full_output_path is not None:
        result["fullOutputPath"] = message.full_output_path
    return result


def abort_bash(rpc: RpcContext, command: Mapping[str, Any]) -> object:
    """Stops every ``bash`` command running; each answers as ``cancelled``."""
    rpc.agent.session.abort_shell_commands()
    return ABSENT


COMMANDS: Final[Mapping[str, RpcCommand]] = {
    "bash": RpcCommand(bash, waits=True),
    "abort_bash": RpcCommand(abort_bash),
}
