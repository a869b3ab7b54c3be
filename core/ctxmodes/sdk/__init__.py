"""The embedding API: run an agent session from Python, as the terminal session does.

::

    from ctxmodes.sdk import open_agent

    with open_agent(cwd=".", mode="tree", model="scripted:script.json") as agent:
        agent.subscribe(print)
        agent.prompt("Summarize the README")

See :mod:`ctxmodes.sdk.agent` for the two ways to drive an agent and
:mod:`ctxmodes.sdk.events` for what listeners receive.
"""

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

__all__ = [
    "Agent",
    "AgentEvent",
    "AssistantStarted",
    "CompactionFinished",
    "CompactionStarted",
    "ContextState",
    "MessageFinished",
    "ModelError",
    "Navigated",
    "Notice",
    "QueueChanged",
    "RetryEnded",
    "RetryScheduled",
    "RunSettled",
    "RunStarted",
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
    "open_agent",
]
