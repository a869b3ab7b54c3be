"""ctxmodes: context-management modes for coding agents over Pi's session tree.

What a plugin author needs is importable from here::

    from ctxmodes import hookimpl, ModeSpec, ContextProjection, HostSession

The names are resolved on first use, so ``import ctxmodes`` stays cheap (a core command
starts without pluggy). The public modules are this one and

* :mod:`ctxmodes.windows` — the context-window kit managed modes are built from;
* :mod:`ctxmodes.session` — the Pi session format: entries, messages, the JSON codec and
  the store;
* :mod:`ctxmodes.providers` — the model protocol, for plugins that bring a model or talk to
  a provider's own backend;
* :mod:`ctxmodes.sdk` — running an agent from a program (the terminal is one such program);
* :mod:`ctxmodes.testing` — fixtures, a scripted host and the mode conformance suites.

Each lists what it offers in ``__all__``. Every other module (and every submodule of these)
is internal: it may change in any release, and the built-in modes do not import it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxmodes._version import __version__
from ctxmodes.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from ctxmodes.abort import AbortController, AbortedError, AbortSignal
    from ctxmodes.cli_commands import CliCommand
    from ctxmodes.commands import Command, CommandContext
    from ctxmodes.errors import (
        ConfigError,
        CtxmodesError,
        PluginError,
        SessionCwdMissingError,
        StaleContextError,
    )
    from ctxmodes.events import (
        CompactionDecision,
        CompactionEvent,
        CompactionRequest,
        ContextProjection,
        ForkRequest,
        InputEvent,
        InputResult,
        NewContextOutcome,
        NewContextRequest,
        ProviderRequestEvent,
        RetrievalRequest,
        RetrievalResult,
        SessionChangeDecision,
        SessionShutdownReason,
        SessionStartReason,
        SessionSwitchRequest,
        ToolCallBlock,
        ToolCallEvent,
        ToolResultEvent,
        TreeDecision,
        TreeNavigationEvent,
        TreePreparation,
        TurnEndEvent,
        UserBashEvent,
        UserBashResult,
    )
    from ctxmodes.hook_marker import hookimpl
    from ctxmodes.hostapi import (
        DeliverAs,
        HostSession,
        NavigationRequest,
        NotifyLevel,
        QueuedMessage,
        StatusLine,
        StreamingBehavior,
        TreeNavigation,
        TreeNavigationResult,
        TurnHold,
        UserInterface,
    )
    from ctxmodes.modes import Evidence, ModeSpec
    from ctxmodes.providers.base import ModelCapabilities
    from ctxmodes.session.models import (
        AgentMessage,
        AssistantMessage,
        CustomMessage,
        ToolResultMessage,
        UserMessage,
    )
    from ctxmodes.session_view import SessionView
    from ctxmodes.tools.base import ABORTED_MESSAGE, Tool, ToolContext, ToolResult
    from ctxmodes.tools.session_env import SESSION_ENVIRONMENT_NAMES, shell_environment
    from ctxmodes.tools.user_command import ShellRunner, UserCommandResult, local_shell_runner

#: Public name → the module that defines it.
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("AbortController", "AbortSignal", "AbortedError"), "ctxmodes.abort"),
    "CliCommand": "ctxmodes.cli_commands",
    "Command": "ctxmodes.commands",
    "CommandContext": "ctxmodes.commands",
    "ConfigError": "ctxmodes.errors",
    "CtxmodesError": "ctxmodes.errors",
    "PluginError": "ctxmodes.errors",
    "SessionCwdMissingError": "ctxmodes.errors",
    "StaleContextError": "ctxmodes.errors",
    **dict.fromkeys(
        (
            "CompactionDecision",
            "CompactionEvent",
            "CompactionRequest",
            "ContextProjection",
            "ForkRequest",
            "InputEvent",
            "InputResult",
            "NewContextOutcome",
            "NewContextRequest",
            "ProviderRequestEvent",
            "RetrievalRequest",
            "RetrievalResult",
            "SessionChangeDecision",
            "SessionShutdownReason",
            "SessionStartReason",
            "SessionSwitchRequest",
            "ToolCallBlock",
            "ToolCallEvent",
            "ToolResultEvent",
            "TreeDecision",
            "TreeNavigationEvent",
            "TreePreparation",
            "TurnEndEvent",
            "UserBashEvent",
            "UserBashResult",
        ),
        "ctxmodes.events",
    ),
    "hookimpl": "ctxmodes.hook_marker",
    **dict.fromkeys(
        (
            "DeliverAs",
            "HostSession",
            "NavigationRequest",
            "NotifyLevel",
            "QueuedMessage",
            "StatusLine",
            "StreamingBehavior",
            "TreeNavigation",
            "TreeNavigationResult",
            "TurnHold",
            "UserInterface",
        ),
        "ctxmodes.hostapi",
    ),
    "SessionView": "ctxmodes.session_view",
    "Evidence": "ctxmodes.modes",
    "ModeSpec": "ctxmodes.modes",
    "ModelCapabilities": "ctxmodes.providers.base",
    **dict.fromkeys(
        ("AgentMessage", "AssistantMessage", "CustomMessage", "ToolResultMessage", "UserMessage"),
        "ctxmodes.session.models",
    ),
    "ABORTED_MESSAGE": "ctxmodes.tools.base",
    "Tool": "ctxmodes.tools.base",
    "ToolContext": "ctxmodes.tools.base",
    "ToolResult": "ctxmodes.tools.base",
    **dict.fromkeys(
        ("ShellRunner", "UserCommandResult", "local_shell_runner"), "ctxmodes.tools.user_command"
    ),
    "SESSION_ENVIRONMENT_NAMES": "ctxmodes.tools.session_env",
    "shell_environment": "ctxmodes.tools.session_env",
}

__all__ = [
    "ABORTED_MESSAGE",
    "SESSION_ENVIRONMENT_NAMES",
    "AbortController",
    "AbortSignal",
    "AbortedError",
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
    "DeliverAs",
    "Evidence",
    "ForkRequest",
    "HostSession",
    "InputEvent",
    "InputResult",
    "ModeSpec",
    "ModelCapabilities",
    "NavigationRequest",
    "NewContextOutcome",
    "NewContextRequest",
    "NotifyLevel",
    "PluginError",
    "ProviderRequestEvent",
    "QueuedMessage",
    "RetrievalRequest",
    "RetrievalResult",
    "SessionChangeDecision",
    "SessionCwdMissingError",
    "SessionShutdownReason",
    "SessionStartReason",
    "SessionSwitchRequest",
    "SessionView",
    "ShellRunner",
    "StaleContextError",
    "StatusLine",
    "StreamingBehavior",
    "Tool",
    "ToolCallBlock",
    "ToolCallEvent",
    "ToolContext",
    "ToolResult",
    "ToolResultEvent",
    "ToolResultMessage",
    "TreeDecision",
    "TreeNavigation",
    "TreeNavigationEvent",
    "TreeNavigationResult",
    "TreePreparation",
    "TurnEndEvent",
    "TurnHold",
    "UserBashEvent",
    "UserBashResult",
    "UserCommandResult",
    "UserInterface",
    "UserMessage",
    "__version__",
    "hookimpl",
    "local_shell_runner",
    "shell_environment",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
