"""ctxmodes: context-management modes for coding agents over Pi's session tree.

What a plugin author needs is importable from here::

    from ctxmodes import hookimpl, ModeSpec, ContextProjection, HostSession

The names are resolved on first use, so ``import ctxmodes`` stays cheap (a core command
starts without pluggy); each also lives in its own module (``ctxmodes.modes``,
``ctxmodes.events`` ...). The context-window kit for managed modes is
:mod:`ctxmodes.windows`; test support is :mod:`ctxmodes.testing`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ctxmodes._version import __version__

if TYPE_CHECKING:
    from ctxmodes.cli_commands import CliCommand
    from ctxmodes.commands import Command, CommandContext
    from ctxmodes.errors import ConfigError, CtxmodesError, PluginError
    from ctxmodes.events import (
        CompactionDecision,
        CompactionEvent,
        CompactionRequest,
        ContextProjection,
        InputEvent,
        InputResult,
        NewContextOutcome,
        NewContextRequest,
        ProviderRequestEvent,
        RetrievalRequest,
        RetrievalResult,
        ToolCallBlock,
        ToolCallEvent,
        ToolResultEvent,
        TreeDecision,
        TreeNavigationEvent,
        TreePreparation,
        TurnEndEvent,
    )
    from ctxmodes.hookspecs import hookimpl
    from ctxmodes.hostapi import HostSession, UserInterface
    from ctxmodes.modes import ModeSpec
    from ctxmodes.providers.base import ModelCapabilities
    from ctxmodes.session.models import (
        AgentMessage,
        AssistantMessage,
        CustomMessage,
        ToolResultMessage,
        UserMessage,
    )
    from ctxmodes.tools.base import Tool, ToolContext, ToolResult

#: Public name → the module that defines it.
_EXPORTS: dict[str, str] = {
    "CliCommand": "ctxmodes.cli_commands",
    "Command": "ctxmodes.commands",
    "CommandContext": "ctxmodes.commands",
    "ConfigError": "ctxmodes.errors",
    "CtxmodesError": "ctxmodes.errors",
    "PluginError": "ctxmodes.errors",
    **dict.fromkeys(
        (
            "CompactionDecision",
            "CompactionEvent",
            "CompactionRequest",
            "ContextProjection",
            "InputEvent",
            "InputResult",
            "NewContextOutcome",
            "NewContextRequest",
            "ProviderRequestEvent",
            "RetrievalRequest",
            "RetrievalResult",
            "ToolCallBlock",
            "ToolCallEvent",
            "ToolResultEvent",
            "TreeDecision",
            "TreeNavigationEvent",
            "TreePreparation",
            "TurnEndEvent",
        ),
        "ctxmodes.events",
    ),
    "hookimpl": "ctxmodes.hookspecs",
    "HostSession": "ctxmodes.hostapi",
    "UserInterface": "ctxmodes.hostapi",
    "ModeSpec": "ctxmodes.modes",
    "ModelCapabilities": "ctxmodes.providers.base",
    **dict.fromkeys(
        ("AgentMessage", "AssistantMessage", "CustomMessage", "ToolResultMessage", "UserMessage"),
        "ctxmodes.session.models",
    ),
    "Tool": "ctxmodes.tools.base",
    "ToolContext": "ctxmodes.tools.base",
    "ToolResult": "ctxmodes.tools.base",
}

__all__ = [
    "AgentMessage",
    "AssistantMessage",
    "CliCommand",
    "Command",
    "CommandContext",
    "CompactionDecision",
    "CompactionEvent",
    "CompactionRequest",
    "ConfigError",
    "ContextProjection",
    "CtxmodesError",
    "CustomMessage",
    "HostSession",
    "InputEvent",
    "InputResult",
    "ModeSpec",
    "ModelCapabilities",
    "NewContextOutcome",
    "NewContextRequest",
    "PluginError",
    "ProviderRequestEvent",
    "RetrievalRequest",
    "RetrievalResult",
    "Tool",
    "ToolCallBlock",
    "ToolCallEvent",
    "ToolContext",
    "ToolResult",
    "ToolResultEvent",
    "ToolResultMessage",
    "TreeDecision",
    "TreeNavigationEvent",
    "TreePreparation",
    "TurnEndEvent",
    "UserInterface",
    "UserMessage",
    "__version__",
    "hookimpl",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ctxmodes' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
