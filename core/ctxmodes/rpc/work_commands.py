"""Pi's ``compact``, ``abort_retry``, ``get_session_stats`` and ``get_commands`` commands.

``compact`` waits on its own thread (an ``abort`` read meanwhile cancels it). The commands
``get_commands`` lists are those a ``prompt`` can invoke with ``/``: plugins' commands (Pi's
extension commands), then prompt templates, then skills (``skill:NAME``), each with Pi's
``sourceInfo``. ctxmodes' built-in commands (``/compact``, ``/tree``, ``/new`` …) are left
out, as Pi leaves out its own: a client has an RPC command for each. A plugin's command named
like a built-in one is listed under its name all the same, as Pi lists an extension's
command named like one of Pi's, though the built-in is what ``/name`` runs.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from ctxmodes.commands import Command
from ctxmodes.host import records
from ctxmodes.host.builtin_commands import is_builtin_command
from ctxmodes.host.json_stream import compaction_result
from ctxmodes.host.records import HostRecord
from ctxmodes.host.session_stats import SessionStats
from ctxmodes.resources.sources import ResourceSource
from ctxmodes.rpc.protocol import ABSENT, JsonObject, RpcCommand, RpcCommandError, RpcContext


def compact(rpc: RpcContext, command: Mapping[str, Any]) -> object:
    """Compacts the session now (aborting a run in progress first), the summary steered by
    ``customInstructions``; answers Pi's ``CompactionResult``."""
    instructions = command.get("customInstructions")
    if instructions is not None and not isinstance(instructions, str):
        raise RpcCommandError('"customInstructions" must be a string')
    ended: list[records.CompactionEnded] = []
    compacting = threading.get_ident()

    def watch(record: HostRecord) -> None:
        # The compaction runs on this thread; its end carries the estimate of what is left.
        if (
            isinstance(record, records.CompactionEnded)
            and record.trigger == "manual"
            and threading.get_ident() == compacting
            and not ended
        ):
            ended.append(record)

    unsubscribe = rpc.agent.subscribe_records(watch)
    try:
        entry = rpc.agent.session.compact(instructions or None)
    finally:
        unsubscribe()
    return compaction_result(entry, ended[0].estimated_tokens_after if ended else None)


def abort_retry(rpc: RpcContext, command: Mapping[str, Any]) -> object:
    """Cancels the automatic retry being waited for, if any; the failed answer stands."""
    rpc.agent.session.abort_retry()
    return ABSENT


def get_session_stats(rpc: RpcContext, command: Mapping[str, Any]) -> object:
    """Answers Pi's ``SessionStats``: message, tool call and token counts over the whole
    session file, its cost, and the context's usage."""
    return session_stats_json(rpc.agent.session.session_stats())


def session_stats_json(stats: SessionStats) -> JsonObject:
    """``stats`` in Pi's shape and key order (what is unknown left out)."""
    tokens = stats.tokens
    result: JsonObject = {}
    if stats.session_file is not None:
        result["sessionFile"] = stats.session_file
    result |= {
        "sessionId": stats.session_id,
        "userMessages": stats.user_messages,
        "assistantMessages": stats.assistant_messages,
        "toolCalls": stats.tool_calls,
        "toolResults": stats.tool_results,
        "totalMessages": stats.total_messages,
        "tokens": {
            "input": tokens.input,
            "output": tokens.output,
            "cacheRead": tokens.cache_read,
            "cacheWrite": tokens.cache_write,
            "total": tokens.total,
        },
        "cost": tokens.cost,
    }
    usage = stats.context_usage
    if usage is not None:
        result["contextUsage"] = {
            "tokens": usage.tokens,
            "contextWindow": usage.context_window,
            "percent": usage.percent,
        }
    return result


def get_commands(rpc: RpcContext, command: Mapping[str, Any]) -> object:
    """Answers the commands a prompt may start with ``/``: plugins' commands, prompt
    templates and skills, each with its ``source`` and Pi's ``sourceInfo``."""
    session = rpc.agent.session
    resources = session.resources
    listed: list[JsonObject] = [
        _listed(found.name, found.description, "extension", _plugin_source_info(found))
        for found in session.commands
        if not is_builtin_command(found)
    ]
    for template in resources.templates:
        info = _source(template.source, template.file_path).info(template.file_path)
        listed.append(_listed(template.name, template.description, "prompt", info))
    for skill in resources.skills:
        info = _source(skill.source, skill.file_path).info(skill.file_path)
        listed.append(_listed(f"skill:{skill.name}", skill.description, "skill", info))
    return {"commands": listed}


def _listed(name: str, description: str, source: str, info: JsonObject) -> JsonObject:
    return {"name": name, "description": description, "source": source, "sourceInfo": info}


def _source(source: ResourceSource | None, path: str) -> ResourceSource:
    # Resources a program built itself carry no source: they count as given directly.
    return source if source is not None else ResourceSource.given(path)


def _plugin_source_info(command: Command) -> JsonObject:
    """Where a plugin's command comes from: the file of the module defining its handler,
    described as Pi describes an extension file outside its resource folders; a module
    without a file is named as Pi names an extension it did not load from one
    (``<plugin:module>``)."""
    module_name = getattr(command.handler, "__module__", None) or "unknown"
    module = sys.modules.get(module_name)
    file = getattr(module, "__file__", None)
    if isinstance(file, str):
        path = str(Path(file).resolve())
        return ResourceSource.given(path).info(path)
    return {
        "path": f"<plugin:{module_name}>",
        "source": "plugin",
        "scope": "temporary",
        "origin": "top-level",
    }


COMMANDS: Final[Mapping[str, RpcCommand]] = {
    "compact": RpcCommand(compact, waits=True),
    "abort_retry": RpcCommand(abort_retry),
    "get_session_stats": RpcCommand(get_session_stats),
    "get_commands": RpcCommand(get_commands),
}
