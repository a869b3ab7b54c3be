"""The embedding API: run an agent session from Python, as the terminal session does.

::

    from ctxmodes.sdk import open_agent

    with open_agent(cwd=".", mode="tree", model="scripted:script.json") as agent:
        agent.subscribe(print)
        agent.prompt("Summarize the README")

See :class:`Agent` for the two ways to drive an agent and :class:`AgentEvent` for what
listeners receive. ``default_loader`` makes the loader of context files, templates and
skills that ``open_agent(resources=...)`` takes. The errors an agent raises of its own are
offered here too (all are :class:`ctxmodes.CtxmodesError`). A public module: import from
here; the submodules are internal.
"""

from ctxmodes.host.errors import NoModelError, SessionBusyError
from ctxmodes.resources import ResourceLoader, default_loader
from ctxmodes.sdk.agent import Agent, open_agent
from ctxmodes.sdk.context_state import ContextState
from ctxmodes.sdk.events import (
    AgentEvent,
    AssistantStarted,
    CompactionFinished,
    CompactionStarted,
    MessageFinished,
    ModelError,
    Navigated,
    Notice,
    QueueChanged,
    RequestSent,
    RetryEnded,
    RetryScheduled,
    RunSettled,
    RunStarted,
    SessionChanged,
    StatusChanged,
    SummaryStarted,
    TextDeltaEvent,
    ToolFinished,
    ToolStarted,
    ToolUpdated,
    TransportRetryScheduled,
    UsageReported,
    WindowOpened,
)
from ctxmodes.sdk.models import configured_thinking_budgets, resolve_model
from ctxmodes.session_mode import ModeChangeNotConfirmed

__all__ = [
    "Agent",
    "AgentEvent",
    "AssistantStarted",
    "CompactionFinished",
    "CompactionStarted",
    "ContextState",
    "MessageFinished",
    "ModeChangeNotConfirmed",
    "ModelError",
    "Navigated",
    "NoModelError",
    "Notice",
    "QueueChanged",
    "RequestSent",
    "ResourceLoader",
    "RetryEnded",
    "RetryScheduled",
    "RunSettled",
    "RunStarted",
    "SessionBusyError",
    "SessionChanged",
    "StatusChanged",
    "SummaryStarted",
    "TextDeltaEvent",
    "ToolFinished",
    "ToolStarted",
    "ToolUpdated",
    "TransportRetryScheduled",
    "UsageReported",
    "WindowOpened",
    "configured_thinking_budgets",
    "default_loader",
    "open_agent",
    "resolve_model",
]
