"""Pi's prompting commands: ``prompt``, ``steer``, ``follow_up``, ``abort``,
``clear_queue`` and ``new_session``.

A prompt is answered once it was taken: started (the run goes on, its events follow the
response), queued, or run as a ``/command``. While the agent works, a prompt needs a
``streamingBehavior`` (``"steer"`` or ``"followUp"``), as in Pi; during a compaction it is
refused with Pi's message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ctxmodes.host.errors import SessionBusyError, SessionChangeCancelled
from ctxmodes.host.session import COMPACTING_MESSAGE
from ctxmodes.hostapi import StreamingBehavior
from ctxmodes.rpc.protocol import (
    ABSENT,
    RpcCommand,
    RpcCommandError,
    RpcContext,
    images_field,
    text_field,
)

#: Pi's refusal of a prompt without a streaming behaviour while the agent works.
BUSY_MESSAGE: Final = (
    "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue "
    "the message."
)
_BEHAVIORS: Final[Mapping[str, StreamingBehavior]] = {"steer": "steer", "followUp": "follow_up"}


def _streaming_behavior(command: Mapping[str, Any]) -> StreamingBehavior | None:
    value = command.get("streamingBehavior")
    if value is None:
        return None
    behavior = _BEHAVIORS.get(value) if isinstance(value, str) else None
    if behavior is None:
        raise RpcCommandError('streamingBehavior must be "steer" or "followUp"')
    return behavior


def prompt(rpc: RpcContext, command: Mapping[str, Any]) -> object:
    text, images = text_field(command, "message"), images_field(command)
    behavior = _streaming_behavior(command)
    if rpc.agent.session.is_compacting():
        raise RpcCommandError(COMPACTING_MESSAGE)
    try:
        rpc.agent.submit(text, streaming_behavior=behavior, images=images)
    except SessionBusyError:
        raise RpcCommandError(BUSY_MESSAGE) from None
    return ABSENT


def steer(rpc: RpcContext, command: Mapping[str, Any]) -> object:
    rpc.agent.steer(text_field(command, "message"), images=images_field(command))
    return ABSENT


def follow_up(rpc: RpcContext, command: Mapping[str, Any]) -> object:
    rpc.agent.follow_up(text_field(command, "message"), images=images_field(command))
    return ABSENT


def abort(rpc: RpcContext, command: Mapping[str, Any]) -> object:
    """Stop the run and answer once the session settled; queued messages stay queued."""
    session = rpc.agent.session
    session.abort()
    session.wait_for_idle()
    return ABSENT


def clear_queue(rpc: RpcContext, command: Mapping[str, Any]) -> object:
    steering, follow_ups = rpc.agent.take_queued()
    return {"steering": steering, "followUp": follow_ups}


def new_session(rpc: RpcContext, command: Mapping[str, Any]) -> object:
    """Continue in a new session; answers ``{"cancelled"}`` (a plugin may keep the
    current one)."""
    parent = command.get("parentSession")
    if parent is not None and not isinstance(parent, str):
        raise RpcCommandError('"parentSession" must be a session file path')
    try:
        rpc.agent.new_session(parent_session=parent or None)
    except SessionChangeCancelled:
        return {"cancelled": True}
    return {"cancelled": False}


COMMANDS: Final[Mapping[str, RpcCommand]] = {
    "prompt": RpcCommand(prompt),
    "steer": RpcCommand(steer),
    "follow_up": RpcCommand(follow_up),
    "abort": RpcCommand(abort, waits=True),
    "clear_queue": RpcCommand(clear_queue),
    "new_session": RpcCommand(new_session, waits=True),
}
