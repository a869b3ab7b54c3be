"""Pi's state commands: ``get_state`` and ``get_messages``, and the settings a client
changes while the session runs: ``set_steering_mode``, ``set_follow_up_mode``,
``set_auto_compaction`` and ``set_auto_retry``.

The four settings apply at once, also during a run (the queues' next delivery, the next
compaction or retry check), and to the sessions ``new_session`` and the like start; then,
as Pi does, they are saved in Pi's global ``settings.json`` for the next start (a save that
fails is a warning on standard error, and the command still succeeds, its setting taken).
Pi takes any value and stores it; here a value that is none of Pi's is refused with an
error.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Any, Final

from ctxmodes.host.options import HostOptions
from ctxmodes.host.queues import DrainMode
from ctxmodes.hostapi import StreamingBehavior
from ctxmodes.pi_settings_save import save_choice
from ctxmodes.rpc.model_objects import session_model
from ctxmodes.rpc.protocol import ABSENT, JsonObject, RpcCommand, RpcCommandError, RpcContext
from ctxmodes.session.models import to_json

_DRAIN_MODES: Final[Mapping[str, DrainMode]] = {"all": "all", "one-at-a-time": "one-at-a-time"}


def get_state(rpc: RpcContext, command: Mapping[str, Any]) -> object:
    """Answers the session's model, thinking level, activity, queue modes, file, id, name,
    automatic compaction and message counts, in Pi's keys and order (no ``sessionFile``
    for a session kept in memory, no ``sessionName`` for an unnamed one)."""
    session = rpc.agent.session
    manager = session.session_manager
    options = session.options
    state: JsonObject = {
        "model": session_model(rpc.agent),
        "thinkingLevel": session.thinking_level,
        "isStreaming": session.is_streaming(),
        "isCompacting": session.is_compacting(),
        "steeringMode": options.steering_mode,
        "followUpMode": options.follow_up_mode,
    }
    if manager.session_file is not None:
        state["sessionFile"] = str(manager.session_file)
    state["sessionId"] = manager.session_id
    name = manager.get_session_name()
    if name is not None:
        state["sessionName"] = name
    state["autoCompactionEnabled"] = options.compaction.enabled
    state["messageCount"] = len(session.messages)
    state["pendingMessageCount"] = session.pending_message_count()
    return state


def get_messages(rpc: RpcContext, command: Mapping[str, Any]) -> object:
    """Answers the messages of the session's context, as the session stores them."""
    return {"messages": [to_json(message) for message in rpc.agent.session.messages]}


def _set_queue_mode(
    rpc: RpcContext, queue: StreamingBehavior, command: Mapping[str, Any], pi_key: str
) -> object:
    value = command.get("mode")
    mode = _DRAIN_MODES.get(value) if isinstance(value, str) else None
    if mode is None:
        raise RpcCommandError('"mode" must be "all" or "one-at-a-time"')
    return _change(rpc, lambda options: options.with_queue_mode(queue, mode), (pi_key,), mode)


def _switch(command: Mapping[str, Any]) -> bool:
    enabled = command.get("enabled")
    if not isinstance(enabled, bool):
        raise RpcCommandError('"enabled" must be true or false')
    return enabled


def _change(
    rpc: RpcContext,
    change: Callable[[HostOptions], HostOptions],
    pi_key: tuple[str, ...],
    saved: object,
) -> object:
    """Apply ``change`` to the running session, then save ``saved`` under Pi's key."""
    rpc.agent.host.change_options(change)
    save_choice([(pi_key, saved)], _warn)
    return ABSENT


def _warn(line: str, level: str) -> None:
    print(f"ctxmodes: warning: {line}", file=sys.stderr)


def set_steering_mode(rpc: RpcContext, command: Mapping[str, Any]) -> object:
    """Deliver steering messages one per turn, or all at once; answers nothing."""
    return _set_queue_mode(rpc, "steer", command, "steeringMode")


def set_follow_up_mode(rpc: RpcContext, command: Mapping[str, Any]) -> object:
    """Deliver follow-up messages one per run end, or all at once; answers nothing."""
    return _set_queue_mode(rpc, "follow_up", command, "followUpMode")


def set_auto_compaction(rpc: RpcContext, command: Mapping[str, Any]) -> object:
    """Turn automatic compaction on or off; answers nothing."""
    enabled = _switch(command)
    return _change(
        rpc,
        lambda options: options.with_auto_compaction(enabled),
        ("compaction", "enabled"),
        enabled,
    )


def set_auto_retry(rpc: RpcContext, command: Mapping[str, Any]) -> object:
    """Turn the automatic retry of transient failures on or off; answers nothing."""
    enabled = _switch(command)
    return _change(
        rpc, lambda options: options.with_auto_retry(enabled), ("retry", "enabled"), enabled
    )


COMMANDS: Final[Mapping[str, RpcCommand]] = {
    "get_state": RpcCommand(get_state),
    "get_messages": RpcCommand(get_messages),
    "set_steering_mode": RpcCommand(set_steering_mode),
    "set_follow_up_mode": RpcCommand(set_follow_up_mode),
    "set_auto_compaction": RpcCommand(set_auto_compaction),
    "set_auto_retry": RpcCommand(set_auto_retry),
}
